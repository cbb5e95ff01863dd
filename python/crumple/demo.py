"""``crumple demo``: the default job.

Prints ``crumple info`` in one line, runs the built-in scene
``cloth_on_sphere`` (paper Fig. 3: a square cloth dropped onto a spinning
sphere, MPM on the CPU so that the demo's output is the same on every
machine) with a progress bar, writes every frame through the frame stream
(PLY files and a manifest that ``crumple view`` and ``crumple render`` read)
and a picture of the last frame under the output folder, and says where they
are and how long it took.
"""

from __future__ import annotations

import time
from pathlib import Path

from .backend import info

__all__ = ["DEMO_SCENE", "run_demo"]

DEMO_SCENE = "cloth_on_sphere"


def run_demo(out_dir: Path) -> Path:
    """Run the demo, writing into ``out_dir``; returns the PNG path."""
    from . import scenes
    from .scenes import mpm_scenes

    t0 = time.perf_counter()
    d = info()
    a = d["gpu_adapter"]
    print(f"crumple {d['version']} | {d['threads']} CPU threads | GPU: "
          f"{a['name'] + ' (' + a['device_type'] + ')' if isinstance(a, dict) else 'none'}")
    out_dir = Path(out_dir)
    frames = scenes.default_frames(DEMO_SCENE)
    print(f"{DEMO_SCENE}: {scenes.describe(DEMO_SCENE)}; {frames} frames at 24 fps on the CPU")
    # The CPU backend, so the demo's frames are the same on every machine
    # (backend="gpu" runs the same scene on a wgpu adapter).
    mpm_scenes.cloth_on_sphere(out_dir=out_dir, frames=frames, backend="cpu", progress=True)
    png = out_dir / f"{DEMO_SCENE}.png"
    cloth = sorted(out_dir.glob("cloth_*.ply"))
    print(f"wrote {len(cloth)} cloth frames {out_dir / cloth[0].name} ... {cloth[-1].name} "
          f"(with the sphere and plane colliders and manifest.json: `crumple view {out_dir}`), "
          f"and the last frame as {png}")
    print(f"done in {time.perf_counter() - t0:.1f} s")
    return png
