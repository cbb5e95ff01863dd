"""The README's cloth example: two garments dropped on a ball in one
simulation (they collide with each other), written as one USD file."""

from __future__ import annotations

from pathlib import Path

import crumple as cr


def main(out: Path = Path("out"), frames: int = 12) -> dict[str, float]:
    sim = cr.cloth.Simulation(dt=2e-3)                      # cloth-cloth contact is on by default
    lower = sim.add_cloth(cr.geometry.grid_mesh(size=(0.3, 0.3), resolution=(15, 15), center=(0, 0.26, 0)),
                          cr.cloth.Material.preset("cotton"), wrinkles=cr.cloth.Wrinkles(), name="lower")
    upper = sim.add_cloth(cr.geometry.grid_mesh(size=(0.24, 0.24), resolution=(12, 12), center=(0, 0.3, 0)),
                          cr.cloth.Material.preset("denim"), name="upper")
    sim.add_collider(cr.colliders.Sphere(center=(0, 0.1, 0), radius=0.12, friction=0.5))
    with cr.io.UsdWriter(Path(out) / "two_garments.usdc", fps=24) as usd:
        for _ in range(frames):
            sim.advance(1 / 24)                                 # lands exactly on each frame time
            usd.write(sim.frame())                              # every exporter reads sim.frame()
    print(sim.count_self_intersections(), upper.plastic_angles.max(), upper.metrics()["M_abs"])
    return {"intersections": sim.count_self_intersections(), "time": sim.time,
            "lower_min_y": float(lower.positions[:, 1].min()), "upper_min_y": float(upper.positions[:, 1].min())}


if __name__ == "__main__":
    main()
