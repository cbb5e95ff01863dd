"""Eulerian-on-Lagrangian cloth over sharp features (Weidner, Piddington,
Levin, Sueda 2018; spec ``eol_cloth.md``).

Where cloth bends over a sharp feature (a box edge or corner, a wire, a
nail tip), the vertices on it become *EOL vertices*: they stay exactly on
the feature in world space while the
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

What is implemented so far: boxes in any orientation (their edges and
corners as features, their faces and edges as Lagrangian contacts), static, moving
and turning, wires (:meth:`Simulation.add_wire`) and points
(:meth:`Simulation.add_point`), static or translating, EOL vertices made and released by the
remesher, Coulomb friction (each obstacle's μ; a box's ``mode="slip"`` is
frictionless), scripted (pinned) vertices, ``mode="eol"`` and the Lagrangian
baselines ``"lag_static"``, ``"lag_conformal_avg"`` and
``"lag_conformal_cone"``, the sizing remesh of spec §5.6
(:class:`Sizing`, ``Simulation(sizing=...)``) and with it the non-conformal
baseline ``"lag_nonconformal"``. Fast flow through an edge
can outrun the remesher (``SolverError``, the step rolled back). Units are SI (m, s, kg); y is up.
"""

from __future__ import annotations

from .simulation import Cloth, Simulation, Sizing, planar_coordinates

__all__ = ["Simulation", "Cloth", "Sizing", "planar_coordinates"]
