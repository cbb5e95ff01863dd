"""Chentanez, Müller, Macklin 2016 (crumple.pbd): pbd_drop_sweep.

Figs. 2-3: balls dropped on the ground over flow rates ν (two yields) and
hardening rates κ.

Opens a window with play/pause and a frame slider where a display exists;
otherwise writes the picture. ``python examples/gallery/pbd_drop_sweep.py [FRAMES]``
(frames, picture and metrics under ``out/gallery/pbd_drop_sweep/``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from crumple.viz import play_scene


def main(out: str = "out/gallery", frames: int | None = None, scale: float = 1.0, window: bool | None = None) -> Path:
    return play_scene("pbd_drop_sweep", out=out, frames=frames, scale=scale, window=window)


if __name__ == "__main__":
    print(main(frames=int(sys.argv[1]) if len(sys.argv) > 1 else None))
