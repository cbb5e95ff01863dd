"""Jiang, Gast, Teran 2017 (crumple.mpm): friction_slope.

Sec. 5.1 (E4): a small sheet slides down a sheet lying on a 15° slope;
friction angle is an option.

Opens a window with play/pause and a frame slider where a display exists;
otherwise writes the picture. ``python examples/gallery/friction_slope.py [FRAMES]``
(frames, picture and metrics under ``out/gallery/friction_slope/``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from crumple.viz import play_scene


def main(out: str = "out/gallery", frames: int | None = None, scale: float = 1.0, window: bool | None = None) -> Path:
    return play_scene("friction_slope", out=out, frames=frames, scale=scale, window=window)


if __name__ == "__main__":
    print(main(frames=int(sys.argv[1]) if len(sys.argv) > 1 else None))
