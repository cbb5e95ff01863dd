"""Weidner et al. 2018 (crumple.eol): eol_tilting_box.

A box tilts (a turning obstacle, spec §2.5) under a sheet folded over its
long edges: without friction the sheet slides along the turning edges at
g sin(tilt), with friction it stays.

Opens a window with play/pause and a frame slider where a display exists;
otherwise writes the picture. ``python examples/gallery/eol_tilting_box.py [FRAMES]``
(frames, picture and metrics under ``out/gallery/eol_tilting_box/``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from crumple.viz import play_scene


def main(out: str = "out/gallery", frames: int | None = None, scale: float = 1.0, window: bool | None = None) -> Path:
    return play_scene("eol_tilting_box", out=out, frames=frames, scale=scale, window=window)


if __name__ == "__main__":
    print(main(frames=int(sys.argv[1]) if len(sys.argv) > 1 else None))
