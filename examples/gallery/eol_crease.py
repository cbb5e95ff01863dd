"""Weidner et al. 2018 (crumple.eol): eol_crease.

Beyond the paper: a denim sheet held over a box edge, then let go; a longer
hold keeps a sharper crease (the cloth module's wrinkles on the EOL hinges).

Opens a window with play/pause and a frame slider where a display exists;
otherwise writes the picture. ``python examples/gallery/eol_crease.py [FRAMES]``
(frames, picture and metrics under ``out/gallery/eol_crease/``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from crumple.viz import play_scene


def main(out: str = "out/gallery", frames: int | None = None, scale: float = 1.0, window: bool | None = None) -> Path:
    return play_scene("eol_crease", out=out, frames=frames, scale=scale, window=window)


if __name__ == "__main__":
    print(main(frames=int(sys.argv[1]) if len(sys.argv) > 1 else None))
