"""Material point method for cloth, knit, hair, sand, elastic solids and goo
(Jiang, Gast, Teran 2017: anisotropic elastoplasticity for frictional contact).

Cloth and strands are Lagrangian meshes whose vertices and elements are MPM
particles; contact between layers, strands and other materials happens in
the constitutive model, with no collision detection (spec
``mpm_anisotropic.md``). Units are SI; the paper's material values (its
Table 1) are available as presets.

Example::

    sim = cr.mpm.Simulation(lower=(0, 0, 0), upper=(1, 1, 1), dx=1 / 64)
    cloth = sim.add_cloth(mesh, cr.mpm.ClothMaterial.preset("cloth_ball"), rpic_damping=0.7)
    sim.add_collider(cr.colliders.Sphere(center=(0.5, 0.4, 0.5), radius=0.2))
    sim.advance(1 / 24)
    cloth.positions  # (N, 3) float32
"""

from __future__ import annotations

from .materials import ClothMaterial, CurveMaterial, ElasticMaterial, GooMaterial, SandMaterial
from .objects import Cloth, Particles, Strands
from .simulation import Simulation

__all__ = [
    "ClothMaterial",
    "CurveMaterial",
    "ElasticMaterial",
    "SandMaterial",
    "GooMaterial",
    "Simulation",
    "Cloth",
    "Strands",
    "Particles",
]
