"""crumple.cloth: the Python API of the persistent-wrinkle cloth solver
(spec persistent_wrinkles.md): presets, read-outs of the garment handle
(``Simulation.add_cloth``), pins and handles, hold warp, typed errors,
divergence, determinism and solver agreement. Cloth–cloth contact is off
(``self_collision=False``) wherever a test does not ask for it."""

from __future__ import annotations

import numpy as np
import pytest

import crumple as cr
from crumple import cloth


def _sheet(n: int = 10, size: float = 0.2) -> cr.geometry.TriMesh:
    return cr.geometry.grid_mesh(size=(size, size), resolution=(n, n), center=(0.0, 0.5, 0.0), normal="y")


def _hanging(linear_solver: str = "lagged", **kw: object) -> tuple[cloth.Simulation, cloth.Cloth]:
    mesh = _sheet()
    sim = cloth.Simulation(linear_solver=linear_solver, self_collision=False, **kw)  # type: ignore[arg-type]
    c = sim.add_cloth(mesh, "cotton", wrinkles=cloth.Wrinkles())
    x = c.positions
    c.pin(np.flatnonzero(np.isclose(x[:, 2], x[:, 2].max())))
    return sim, c


def test_presets_are_the_paper_tables() -> None:
    # The paper's tables, and the EOL paper's sheet (spec eol_cloth §8.1).
    assert set(cloth.Material.PRESETS) == {"cotton", "denim", "polyester", "trouser_cotton", "trouser_denim",
                                  "trouser_polyester", "eol_sheet"}
    denim = cloth.Material.preset("denim")
    # Table 2, denim row.
    assert (denim.areal_density, denim.bending, denim.k11, denim.k33, denim.friction_stiffness) == (0.25, 1.2e-4, 100.0,
                                                                                           20.0, 5e-5)
    assert (denim.friction_eps0, denim.friction_eps_inf, denim.yield_angle) == (0.1, 1.8, 2.0)
    assert cloth.Material.preset("trouser_polyester").friction_eps0 == 0.1
    assert cloth.Material.preset("cotton", areal_density=0.1).areal_density == 0.1
    with pytest.raises(cr.InvalidInputError, match="silk.*expected one of"):
        cloth.Material.preset("silk")
    with pytest.raises(cr.InvalidInputError, match="unknown Material fields"):
        cloth.Material.preset("cotton", stiffness=1.0)


def test_bad_input_gives_typed_errors() -> None:
    mesh = _sheet(4)
    with pytest.raises(cr.InvalidInputError, match="dt"):
        cloth.Simulation(dt=0.0)
    with pytest.raises(cr.InvalidInputError, match="dt"):
        cloth.Simulation(dt=-1e-3)
    with pytest.raises(cr.InvalidInputError, match="linear_solver"):
        cloth.Simulation(linear_solver="lu")  # type: ignore[arg-type]
    # Material and Wrinkles are checked when they are made.
    with pytest.raises(cr.InvalidInputError, match="k11"):
        cloth.Material.preset("cotton", k11=-5.0)
    with pytest.raises(cr.InvalidInputError, match="bending"):
        cloth.Material.preset("cotton", bending=-1e-6)
    with pytest.raises(cr.InvalidInputError, match="bend_friction"):
        cloth.Wrinkles(bend_friction="coulomb")  # type: ignore[arg-type]
    sim = cloth.Simulation(self_collision=False)
    with pytest.raises(cr.InvalidInputError, match="uv"):
        sim.add_cloth(mesh, uv=np.zeros((3, 3, 2)))
    # Text, a ragged list and complex values are refused, not cast.
    for bad in ("0 0", [[[0.0, 0.0]], [[0.0]]], np.zeros((mesh.num_faces, 3, 2)) + 0j):
        with pytest.raises(cr.InvalidInputError, match="uv must be"):
            sim.add_cloth(mesh, uv=bad)
    with pytest.raises(cr.InvalidInputError, match="TriMesh"):
        sim.add_cloth("mesh")  # type: ignore[arg-type]
    # Non-manifold: three triangles on one edge (rejected when the mesh is built).
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1]], float)
    with pytest.raises(cr.MeshError):
        cr.geometry.TriMesh(v, np.array([[0, 1, 2], [1, 0, 3], [0, 1, 4]]))
    # Inconsistent winding: the hinge sign convention needs an orientation.
    bad = cr.geometry.TriMesh(v[:4], np.array([[0, 1, 2], [0, 1, 3]]))
    with pytest.raises(cr.MeshError):
        sim.add_cloth(bad)
    c = sim.add_cloth(mesh)
    with pytest.raises(cr.InvalidInputError, match="out-of-range"):
        c.pin([1000])
    with pytest.raises(cr.InvalidInputError, match="not pinned"):
        c.set_pin_targets([0], [[0.0, 0.0, 0.0]])
    # Ragged indices are refused before the velocities are looked at.
    with pytest.raises(cr.InvalidInputError, match="indices"):
        c.set_pin_targets([[0, 1], [2]], [[0.0, 0.0, 0.0]] * 3, velocities=[0.0, 0.0, 0.0])
    with pytest.raises(cr.InvalidInputError):
        c.pin([0], [[np.nan, 0.0, 0.0]])
    with pytest.raises(cr.InvalidInputError, match="duration"):
        sim.advance(-1e-3)
    # A zero duration is allowed and takes no step.
    assert sim.advance(0.0) == 0 and sim.step_count == 0 and sim.time == 0.0


def test_diverging_run_raises_simulation_diverged() -> None:
    sim, c = _hanging()
    v = c.velocities
    v[0] = (4e3, 0.0, 0.0)
    c.velocities = v
    with pytest.raises(cr.SimulationDiverged, match="reduce dt"):
        sim.advance(0.01)


def test_hanging_cloth_moves_and_pins_carry_its_weight() -> None:
    sim, c = _hanging()
    x0 = c.positions
    sim.advance(0.5)
    x = c.positions
    assert np.all(np.isfinite(x)) and np.abs(x - x0).max() > 0.01
    # Momentum balance: over a long window the pin springs carry the weight
    # on average (the sheet swings; the residual is Δp / (T·W) ≈ 2 %).
    weight = c.masses.sum() * 9.81
    fy = []
    for _ in range(200):
        sim.advance(0.01)
        fy.append(c.pin_forces[:, 1].sum())
    assert np.mean(fy) == pytest.approx(weight, rel=0.05)
    h = c.hinges
    assert h.shape[1] == 4 and c.hinge_angles.shape == (len(h),) == c.plastic_angles.shape
    m = c.metrics()
    assert set(m) == {"M_abs", "M_sharp", "M_max", "M_plastic", "M_anchor"}
    assert m["M_abs"] > 0 and m["M_max"] >= m["M_sharp"] >= 0
    s = sim.stats()
    assert s["residual"] < 1e-8 and s["cg_iterations"] >= 1


def test_solvers_agree_and_runs_are_reproducible() -> None:
    runs = {}
    for solver in ("cholesky", "lagged", "cg"):
        sim, c = _hanging(linear_solver=solver)
        sim.advance(0.1)
        runs[solver] = c.positions
    assert np.abs(runs["lagged"] - runs["cholesky"]).max() < 1e-7
    assert np.abs(runs["cg"] - runs["cholesky"]).max() < 1e-7
    again, ac = _hanging()
    again.advance(0.1)
    assert np.array_equal(ac.positions, runs["lagged"])


def test_hold_warp_advances_the_clocks_and_handles_rotate() -> None:
    mesh = cr.geometry.cylinder_mesh(center=(0, 0, 0), axis=(0, 1, 0), radius=0.04, height=0.11, n_around=24,
                                     n_along=10, capped=False)
    sim = cloth.Simulation(self_collision=False)
    c = sim.add_cloth(mesh, "cotton", wrinkles=cloth.Wrinkles())
    x = c.positions
    bottom = np.flatnonzero(np.isclose(x[:, 1], x[:, 1].min()))
    top = np.flatnonzero(np.isclose(x[:, 1], x[:, 1].max()))
    c.pin(bottom)
    c.rotate_handle(top, axis=(0, 1, 0), angle=np.pi / 4, duration=0.2, pivot=(0, 0.055, 0))
    sim.advance(0.25)
    # The top ring turned by 45° about the axis.
    xt = c.positions[top]
    ang = np.arctan2(xt[:, 2], xt[:, 0]) - np.arctan2(x[top, 2], x[top, 0])
    ang = (ang + np.pi) % (2 * np.pi) - np.pi
    assert np.allclose(np.abs(ang), np.pi / 4, atol=0.02)
    assert c.metrics()["M_anchor"] > 0  # friction anchors moved during the twist
    before = c.stick_times.copy()
    sim.hold_warp(10.0, 5)
    sim.advance(0.005)
    grown = c.stick_times - before
    stuck = grown > 0
    assert stuck.any() and np.allclose(grown[stuck], 50.0 + 0.005, atol=1e-9)


def test_wrinkle_metrics_and_intersection_count() -> None:
    m = cloth.wrinkle_metrics([0.1, -0.3, 0.0, 0.2], [1.0, 1.0, 2.0, 0.0], plastic=[0.0, 0.1, 0.0, 0.0],
                              anchor=[0.05, 0.0, 0.0, 0.0])
    assert m["M_abs"] == pytest.approx((0.1 + 0.3) / 4)
    assert m["M_max"] == pytest.approx(0.3) and m["M_plastic"] == pytest.approx(0.1 / 4)
    with pytest.raises(cr.InvalidInputError):
        cloth.wrinkle_metrics([0.1], [1.0, 2.0])
    # Two triangles crossing each other: one intersecting pair; apart: none.
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0.2, 0.2, -0.5], [0.3, 0.2, 0.5], [0.2, 0.3, 0.5]], float)
    f = np.array([[0, 1, 2], [3, 4, 5]])
    assert cloth.count_triangle_intersections(v, f) == 1
    v[3:, 2] += 2.0
    assert cloth.count_triangle_intersections(v, f) == 0


def test_checkpoint_continues_bit_identically(tmp_path: object) -> None:
    from pathlib import Path

    mesh = cr.geometry.cylinder_mesh(center=(0, 0, 0), axis=(0, 1, 0), radius=0.04, height=0.11, n_around=20,
                                     n_along=8, capped=False)
    sim = cloth.Simulation(self_collision=False)
    c = sim.add_cloth(mesh, "denim", wrinkles=cloth.Wrinkles(tensile_friction=True))
    x = c.positions
    c.pin(np.flatnonzero(np.isclose(x[:, 1], x[:, 1].min())))
    c.rotate_handle(np.flatnonzero(np.isclose(x[:, 1], x[:, 1].max())), axis=(0, 1, 0), angle=1.0,
                      duration=0.1, pivot=(0, 0.055, 0))
    sim.add_collider(cr.colliders.Sphere(center=(0.0, 0.0, 0.0), radius=0.03))
    sim.advance(0.04)
    sim.hold_warp(10.0, 20)
    sim.advance(0.005)
    path = Path(str(tmp_path)) / "cloth.npz"
    sim.save(path)
    back = cloth.Simulation.load(path)
    assert back.time == sim.time and back.step_count == sim.step_count
    (bc,) = back.objects
    for s in (sim, back):
        s.advance(0.06)
    assert np.array_equal(c.positions, bc.positions)
    assert np.array_equal(c.anchor_angles, bc.anchor_angles)
    assert np.array_equal(c.stick_times, bc.stick_times)
    assert np.array_equal(c.tensile_anchors, bc.tensile_anchors)
    assert np.abs(c.positions - x).max() > 1e-3
    with pytest.raises(cr.InvalidInputError):
        cr.mpm.Simulation.load(path)
    with pytest.raises(cr.CheckpointError):
        cloth.Simulation.load(Path(str(tmp_path)) / "missing.npz")
