"""Jiang, Gast, Teran 2017 (crumple.mpm): sand_on_cloth.

Fig. 9 (E8): a sand column pours onto a hammock pinned at its corners (Cloth
& Sand).

Opens a window with play/pause and a frame slider where a display exists;
otherwise writes the picture. ``python examples/gallery/sand_on_cloth.py [FRAMES]``
(frames, picture and metrics under ``out/gallery/sand_on_cloth/``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from crumple.viz import play_scene


def main(out: str = "out/gallery", frames: int | None = None, scale: float = 1.0, window: bool | None = None) -> Path:
    return play_scene("sand_on_cloth", out=out, frames=frames, scale=scale, window=window)


if __name__ == "__main__":
    print(main(frames=int(sys.argv[1]) if len(sys.argv) > 1 else None))
