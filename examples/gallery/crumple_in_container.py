"""Gong et al. 2025 (crumple.cloth): crumple_in_container.

E8 (Figs. 3-4): a rectangle falls into a cylindrical container and crumples;
container removed, pressed by a plate, held, two corners lifted.

Opens a window with play/pause and a frame slider where a display exists;
otherwise writes the picture. ``python examples/gallery/crumple_in_container.py [FRAMES]``
(frames, picture and metrics under ``out/gallery/crumple_in_container/``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from crumple.viz import play_scene


def main(out: str = "out/gallery", frames: int | None = None, scale: float = 1.0, window: bool | None = None) -> Path:
    return play_scene("crumple_in_container", out=out, frames=frames, scale=scale, window=window)


if __name__ == "__main__":
    print(main(frames=int(sys.argv[1]) if len(sys.argv) > 1 else None))
