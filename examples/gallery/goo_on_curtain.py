"""Jiang, Gast, Teran 2017 (crumple.mpm): goo_on_curtain.

Fig. 19: a goo blob thrown onto a curtain pinned along its top edge (Curtain
& Goo).

Opens a window with play/pause and a frame slider where a display exists;
otherwise writes the picture. ``python examples/gallery/goo_on_curtain.py [FRAMES]``
(frames, picture and metrics under ``out/gallery/goo_on_curtain/``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from crumple.viz import play_scene


def main(out: str = "out/gallery", frames: int | None = None, scale: float = 1.0, window: bool | None = None) -> Path:
    return play_scene("goo_on_curtain", out=out, frames=frames, scale=scale, window=window)


if __name__ == "__main__":
    print(main(frames=int(sys.argv[1]) if len(sys.argv) > 1 else None))
