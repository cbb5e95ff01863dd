"""Gong et al. 2025 (crumple.cloth): wrinkle_strip.

E2 (App. A.3, Fig. 21): a cotton strip folded about a crease, held,
released; residual crease angle (friction or plasticity only).

Opens a window with play/pause and a frame slider where a display exists;
otherwise writes the picture. ``python examples/gallery/wrinkle_strip.py [FRAMES]``
(frames, picture and metrics under ``out/gallery/wrinkle_strip/``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from crumple.viz import play_scene


def main(out: str = "out/gallery", frames: int | None = None, scale: float = 1.0, window: bool | None = None) -> Path:
    return play_scene("wrinkle_strip", out=out, frames=frames, scale=scale, window=window)


if __name__ == "__main__":
    print(main(frames=int(sys.argv[1]) if len(sys.argv) > 1 else None))
