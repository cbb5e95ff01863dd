"""``crumple demo``: the default job.

Until the MPM solver lands, the demo exercises the foundation every solver
uses: it builds the mesh and strand generators, samples a sand ball, checks
the colliders against the cloth, writes everything as PLY under the output
folder, renders a picture headlessly and prints where things are and how long
it took.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from . import colliders, geometry, io
from ._progress import progress
from .cli import info

__all__ = ["run_demo"]


def run_demo(out_dir: Path) -> Path:
    """Run the demo, writing into ``out_dir``; returns the PNG path."""
    t0 = time.perf_counter()
    d = info()
    a = d["gpu_adapter"]
    print(f"crumple {d['version']} | {d['threads']} CPU threads | GPU: "
          f"{a['name'] + ' (' + a['device_type'] + ')' if isinstance(a, dict) else 'none'}")
    out_dir.mkdir(parents=True, exist_ok=True)
    items: dict[str, object] = {}
    steps = [
        ("cloth", lambda: geometry.grid_mesh(size=(1.0, 1.0), resolution=(48, 48), center=(0.0, 0.8, 0.0))),
        ("sphere", lambda: geometry.uv_sphere(center=(0.0, 0.35, 0.0), radius=0.3, n_lat=24, n_lon=48)),
        ("box", lambda: geometry.box_mesh(center=(0.9, 0.15, 0.0), half_extents=(0.15, 0.15, 0.15), subdivisions=4)),
        ("torus", lambda: geometry.torus_mesh(center=(-0.9, 0.1, 0.0), major_radius=0.25, minor_radius=0.08)),
        ("tube", lambda: geometry.cylinder_mesh(center=(0.0, 0.3, -0.9), radius=0.15, height=0.6, capped=False)),
        ("hair", lambda: geometry.helix_curves(center=(0.0, 1.3, 0.9), count=(4, 4), spacing=0.06,
                                                radius=0.015, pitch=0.03, turns=8)),
        ("sand", lambda: geometry.sample_sphere(center=(0.9, 0.6, 0.0), radius=0.15, spacing=0.02,
                                                 method="poisson", seed=1)),
    ]
    with progress(len(steps) + 2, "demo", unit="step", enabled=True) as bar:
        for name, make in steps:
            obj = make()
            items[name] = obj
            if isinstance(obj, geometry.TriMesh):
                io.save_mesh(out_dir / f"{name}.ply", obj)
            elif isinstance(obj, geometry.Curves):
                io.save_points(out_dir / f"{name}.ply", obj.points)
            else:
                io.save_points(out_dir / f"{name}.ply", np.asarray(obj))
            bar.update(1)
        cloth = items["cloth"]
        assert isinstance(cloth, geometry.TriMesh)
        ball = colliders.Sphere(center=(0.0, 0.35, 0.0), radius=0.3, mode="separate", friction=0.3)
        gap = float(ball.signed_distance(cloth.vertices).min())
        bar.update(1)
        from . import viz

        png = viz.screenshot(items, out_dir / "demo.png", camera=((1.6, 1.6, 2.4), (0.0, 0.4, 0.0)))
        bar.update(1)
    print(f"cloth: {cloth.num_vertices} vertices, {len(cloth.hinges)} hinges; closest gap to the ball {gap:.3f} m")
    print(f"wrote {len(items)} PLY files and {png} in {time.perf_counter() - t0:.1f} s")
    return png
