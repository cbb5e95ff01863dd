"""Gong et al. 2025 (crumple.cloth): cylinder_twist.

E3 (App. A.2, Fig. 20): an open tube twisted by π/4 at its top ring, held,
twisted back; residual M_abs for cotton, denim or polyester.

Opens a window with play/pause and a frame slider where a display exists;
otherwise writes the picture. ``python examples/gallery/cylinder_twist.py [FRAMES]``
(frames, picture and metrics under ``out/gallery/cylinder_twist/``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from crumple.viz import play_scene


def main(out: str = "out/gallery", frames: int | None = None, scale: float = 1.0, window: bool | None = None) -> Path:
    return play_scene("cylinder_twist", out=out, frames=frames, scale=scale, window=window)


if __name__ == "__main__":
    print(main(frames=int(sys.argv[1]) if len(sys.argv) > 1 else None))
