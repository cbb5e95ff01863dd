"""Gong et al. 2025 (crumple.cloth): flat_twist.

E6 (Figs. 11/15): a hanging rectangle twisted ±π/2 at its short edges, held,
untwisted; ours vs the time-independent hardening baseline.

Opens a window with play/pause and a frame slider where a display exists;
otherwise writes the picture. ``python examples/gallery/flat_twist.py [FRAMES]``
(frames, picture and metrics under ``out/gallery/flat_twist/``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from crumple.viz import play_scene


def main(out: str = "out/gallery", frames: int | None = None, scale: float = 1.0, window: bool | None = None) -> Path:
    return play_scene("flat_twist", out=out, frames=frames, scale=scale, window=window)


if __name__ == "__main__":
    print(main(frames=int(sys.argv[1]) if len(sys.argv) > 1 else None))
