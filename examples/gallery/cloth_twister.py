"""Jiang, Gast, Teran 2017 (crumple.mpm): cloth_twister.

Fig. 4 (E9): a hanging cloth twisted by turning its pinned lower edge (Cloth
Twister).

Opens a window with play/pause and a frame slider where a display exists;
otherwise writes the picture. ``python examples/gallery/cloth_twister.py [FRAMES]``
(frames, picture and metrics under ``out/gallery/cloth_twister/``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from crumple.viz import play_scene


def main(out: str = "out/gallery", frames: int | None = None, scale: float = 1.0, window: bool | None = None) -> Path:
    return play_scene("cloth_twister", out=out, frames=frames, scale=scale, window=window)


if __name__ == "__main__":
    print(main(frames=int(sys.argv[1]) if len(sys.argv) > 1 else None))
