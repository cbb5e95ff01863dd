"""Gong et al. 2025 (crumple.cloth): knee_bend.

E10-like: a trouser-leg tube bent at a knee by two capsules, held short or
long, straightened; knee-region wrinkle metrics.

Opens a window with play/pause and a frame slider where a display exists;
otherwise writes the picture. ``python examples/gallery/knee_bend.py [FRAMES]``
(frames, picture and metrics under ``out/gallery/knee_bend/``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from crumple.viz import play_scene


def main(out: str = "out/gallery", frames: int | None = None, scale: float = 1.0, window: bool | None = None) -> Path:
    return play_scene("knee_bend", out=out, frames=frames, scale=scale, window=window)


if __name__ == "__main__":
    print(main(frames=int(sys.argv[1]) if len(sys.argv) > 1 else None))
