"""Gong et al. 2025 (crumple.cloth): pressed_square.

E7 (Fig. 12): a square pinned at its edges pressed at the centre by a plate,
held, lifted; residual centre sag from tensile friction/plasticity.

Opens a window with play/pause and a frame slider where a display exists;
otherwise writes the picture. ``python examples/gallery/pressed_square.py [FRAMES]``
(frames, picture and metrics under ``out/gallery/pressed_square/``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from crumple.viz import play_scene


def main(out: str = "out/gallery", frames: int | None = None, scale: float = 1.0, window: bool | None = None) -> Path:
    return play_scene("pressed_square", out=out, frames=frames, scale=scale, window=window)


if __name__ == "__main__":
    print(main(frames=int(sys.argv[1]) if len(sys.argv) > 1 else None))
