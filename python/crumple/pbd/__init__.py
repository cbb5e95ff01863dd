"""Shape matching with large plastic deformation (Chentanez, Müller, Macklin
2016; spec ``shape_matching.md``).

A body is a set of particles sampled on a lattice inside a closed mesh and
held together by overlapping shape-matching clusters, solved by a parallel
Jacobi position-based loop. Each cluster keeps a plastic matrix that absorbs
strain beyond its yield, so dough, clay and taffy keep the shapes they are
pressed into; the input mesh is skinned to the particles as the body's surface.

Example::

    sim = cr.pbd.Simulation(spacing=0.1)
    ball = sim.add_body(cr.geometry.uv_sphere(center=(0, 1, 0), radius=0.45),
                        cr.pbd.Material.preset("armadillo_drop"))
    sim.add_collider(cr.colliders.Plane(point=(0, 0, 0), normal=(0, 1, 0), mode="separate", friction=0.5))
    sim.advance(2.5)
    ball.surface          # a TriMesh of the skinned surface

Units are SI (m, s, kg); the paper's scenes use a spacing of 0.1 m and
bodies 2–10 m across, at 60 steps per second. The shared vocabulary of all
modules is in ``docs/api.md``.
"""

from __future__ import annotations

from .body import Body
from .material import Material
from .simulation import Simulation

__all__ = ["Material", "Simulation", "Body"]
