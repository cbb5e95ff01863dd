"""The README's MPM example: cloth dropped on a ball (paper Fig. 3), a picture and a checkpoint.

Run: python examples/readme_drape.py [OUT_DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import crumple as cr


def main(out: Path, duration: float = 1.0) -> dict[str, float]:
    mesh = cr.geometry.grid_mesh(size=(1.0, 1.0), resolution=(63, 63), center=(0.5, 0.85, 0.5))
    sim = cr.mpm.Simulation(lower=(-0.1, -0.1, -0.1), upper=(1.1, 1.1, 1.1), dx=1 / 64)
    cloth = sim.add_cloth(mesh, cr.mpm.ClothMaterial.preset("cloth_ball"), rpic_damping=0.7)
    ball = cr.colliders.Sphere(center=(0.5, 0.3, 0.5), radius=0.25, mode="sticky")
    sim.add_collider(ball)
    sim.add_collider(cr.colliders.Plane(point=(0, 0, 0), normal=(0, 1, 0)))
    sim.advance(duration, frames=max(1, round(24 * duration)), progress=True)
    cr.viz.screenshot({"cloth": (cloth.positions, cloth.faces)}, out / "drape.png")
    sim.save(out / "drape.npz")
    x = cloth.positions.astype(np.float64)
    return {"time": sim.time, "min_phi": float(ball.signed_distance(x).min()), "min_y": float(x[:, 1].min()),
            "finite": float(np.isfinite(x).all())}


if __name__ == "__main__":
    print(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("out")))
