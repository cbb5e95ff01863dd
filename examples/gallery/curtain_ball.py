"""Jiang, Gast, Teran 2017 (crumple.mpm): curtain_ball.

Fig. 14: a curtain pinned along its top edge is hit by a moving ball (Cloth
Curtain).

Opens a window with play/pause and a frame slider where a display exists;
otherwise writes the picture. ``python examples/gallery/curtain_ball.py [FRAMES]``
(frames, picture and metrics under ``out/gallery/curtain_ball/``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from crumple.viz import play_scene


def main(out: str = "out/gallery", frames: int | None = None, scale: float = 1.0, window: bool | None = None) -> Path:
    return play_scene("curtain_ball", out=out, frames=frames, scale=scale, window=window)


if __name__ == "__main__":
    print(main(frames=int(sys.argv[1]) if len(sys.argv) > 1 else None))
