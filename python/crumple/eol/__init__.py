"""Eulerian-on-Lagrangian cloth over sharp features (Weidner, Piddington,
Levin, Sueda 2018; spec ``eol_cloth.md``).

Where cloth bends over a sharp box edge, the vertices on the edge become
*EOL vertices*: they stay exactly on the edge in world space while the
material slides through them (their material coordinate moves), so the
cloth folds exactly at the edge, with no gap and no penetration, and slides
over it without the parasitic friction of a Lagrangian mesh. One QP per
step gives the velocities under the contact rows (a warm-started
active-set method on faer's sparse LDLᵀ, Clarabel as reference and
fallback).

Example::

    sim = cr.eol.Simulation(dt=5e-3)
    sheet = sim.add_cloth(cr.geometry.grid_mesh(size=(1.0, 1.0), resolution=(12, 12), center=(0.2, 0.001, 0.5)))
    sim.add_collider(cr.colliders.Box(center=(0.6, -0.5, 0.5), half_extents=(0.6, 0.5, 0.75), mode="slip"))
    sheet.pin(sheet.positions[:, 0] > 0.699)    # hold the far border
    sim.advance(1.0)
    sheet.is_eol.sum()                          # vertices on the box edge now

What is implemented so far: static boxes aligned with the world axes, their
edges as features (EOL vertices made and released by the remesher), box
faces as Lagrangian contacts, scripted (pinned) vertices, ``mode="eol"`` and
the regular Lagrangian baseline ``mode="lag_static"``. Not yet: corners,
wires and points, moving boxes, friction, the other Lagrangian baselines,
the sizing remesh and the rest of the cleanup loop (fast flow through an
edge can outrun the remesher: ``SolverError``, the step rolled back). Units
are SI (m, s, kg); y is up.
"""

from __future__ import annotations

from .simulation import Cloth, Simulation, planar_coordinates

__all__ = ["Simulation", "Cloth", "planar_coordinates"]
