"""Implicit cloth with time-dependent persistent wrinkles (Gong, Yang, Shao,
Wang 2025; spec ``persistent_wrinkles.md``).

Triangle meshes with an orthotropic StVK membrane and discrete-shell hinge
bending, stepped by linearized implicit Euler (one sparse solve per step).
Each hinge (and optionally each membrane strain component) carries an
internal-friction element whose stick threshold grows with how long it has
stuck, and a hardening-plasticity element whose hardening falls the longer
plastic flow lasts. Holding a fold longer therefore leaves a sharper, less
recoverable wrinkle.

Example::

    sim = cr.cloth.Simulation(dt=1e-3)
    strip = sim.add_cloth(cr.geometry.grid_mesh(size=(0.1, 0.3), resolution=(20, 60)),
                          cr.cloth.Material.preset("cotton"), wrinkles=cr.cloth.Wrinkles())
    strip.pin(edge_indices)
    sim.add_collider(cr.colliders.Sphere(center=(0, -0.1, 0), radius=0.05))
    sim.advance(0.5)
    strip.metrics()["M_abs"]

Several garments can share one simulation (``add_cloth`` again): they are
solved together and collide with each other and themselves (cloth–cloth
contact is on by default). Units are SI: m, s, kg; areal density kg/m²;
membrane stiffness N/m; bending stiffness J; angles in radians. The shared
vocabulary of all modules is in ``docs/api.md``.
"""

from __future__ import annotations

from .garment import Cloth
from .material import Material, Wrinkles
from .metrics import count_triangle_intersections, wrinkle_metrics
from .simulation import Simulation

__all__ = [
    "Material",
    "Wrinkles",
    "Simulation",
    "Cloth",
    "wrinkle_metrics",
    "count_triangle_intersections",
]
