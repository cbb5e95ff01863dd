"""The README's ten lines: a cloth mesh, a ball collider, a sand sample, files and a picture.

Run: python examples/readme_tour.py [OUT_DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

import crumple as cr


def main(out: Path) -> dict[str, float]:
    cloth = cr.geometry.grid_mesh(size=(1.0, 1.0), resolution=(32, 32), center=(0.5, 0.8, 0.5))
    ball = cr.colliders.Sphere(center=(0.5, 0.4, 0.5), radius=0.2, mode="slip", friction=0.2)
    print(cloth.num_vertices, cloth.hinges.shape)
    gap = float(ball.signed_distance(cloth.vertices).min())
    print(gap)
    sand = cr.geometry.sample_sphere(center=(0.5, 0.5, 0.5), radius=0.1, spacing=0.01, method="poisson")
    cr.io.save_mesh(out / "cloth.obj", cloth)
    cr.viz.screenshot({"cloth": cloth, "sand": sand}, out / "cloth.png")
    return {"vertices": cloth.num_vertices, "hinges": len(cloth.hinges), "gap": gap, "sand": len(sand)}


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("out"))
