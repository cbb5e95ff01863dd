"""Weidner et al. 2018 (crumple.eol): eol_friction.

E8: a sheet hanging over a table edge slides off without friction and
stays with it (the default); ``setup="four_boxes"`` drops it on the spec's
four turned boxes instead.

Opens a window with play/pause and a frame slider where a display exists;
otherwise writes the picture. ``python examples/gallery/eol_friction.py [FRAMES]``
(frames, picture and metrics under ``out/gallery/eol_friction/``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from crumple.viz import play_scene


def main(out: str = "out/gallery", frames: int | None = None, scale: float = 1.0, window: bool | None = None) -> Path:
    return play_scene("eol_friction", out=out, frames=frames, scale=scale, window=window)


if __name__ == "__main__":
    print(main(frames=int(sys.argv[1]) if len(sys.argv) > 1 else None))
