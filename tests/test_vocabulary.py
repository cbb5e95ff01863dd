"""One vocabulary across the solvers (docs/api.md): handles, pins, exact
advance, rollback on divergence, Ctrl-C, checkpoints of every module, bad
input as typed errors, several garments in one cloth simulation."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import crumple as cr


def _mpm_sim() -> tuple[cr.mpm.Simulation, cr.mpm.Cloth]:
    sim = cr.mpm.Simulation(lower=(0, 0, 0), upper=(1, 1, 1), dx=1 / 32)
    mesh = cr.geometry.grid_mesh(size=(0.4, 0.4), resolution=(12, 12), center=(0.5, 0.6, 0.5))
    cloth = sim.add_cloth(mesh, cr.mpm.ClothMaterial.preset("cloth_ball"), rpic_damping=0.7)
    sim.add_collider(cr.colliders.Sphere(center=(0.5, 0.35, 0.5), radius=0.15, mode="sticky"))
    return sim, cloth


def _cloth_sim(**kw: object) -> tuple[cr.cloth.Simulation, cr.cloth.Cloth]:
    sim = cr.cloth.Simulation(dt=2e-3, **kw)  # type: ignore[arg-type]
    mesh = cr.geometry.grid_mesh(size=(0.2, 0.2), resolution=(10, 10), center=(0, 0.3, 0))
    c = sim.add_cloth(mesh, "cotton")
    sim.add_collider(cr.colliders.Sphere(center=(0, 0.15, 0), radius=0.1, mode="separate", friction=0.3))
    return sim, c


def test_two_garments_fall_onto_each_other_without_crossing() -> None:
    """Two garments in one cloth simulation drop onto a ball, one onto the
    other: they are solved together and self-collision covers both, so at
    the end no triangle of either crosses any other (counted over the union)."""
    sim = cr.cloth.Simulation(dt=2e-3)
    lower = sim.add_cloth(cr.geometry.grid_mesh(size=(0.3, 0.3), resolution=(15, 15), center=(0, 0.26, 0)),
                          "cotton", name="lower")
    upper = sim.add_cloth(cr.geometry.grid_mesh(size=(0.24, 0.24), resolution=(12, 12), center=(0.01, 0.30, 0.01)),
                          cr.cloth.Material.preset("denim"), name="upper")
    sim.add_collider(cr.colliders.Sphere(center=(0, 0.1, 0), radius=0.12, mode="separate", friction=0.5))
    assert [o.name for o in sim.objects] == ["lower", "upper"]
    assert upper.positions.shape == (169, 3) and lower.positions.shape == (256, 3)
    sim.advance(0.6)
    xl, xu = lower.positions, upper.positions
    assert np.isfinite(xl).all() and np.isfinite(xu).all()
    assert xl[:, 1].min() < 0.2 and xu[:, 1].min() < 0.24, "both garments fell"
    # The upper garment lies on the lower one over the top of the ball.
    top_u = xu[np.linalg.norm(xu[:, [0, 2]], axis=1) < 0.03, 1].max()
    top_l = xl[np.linalg.norm(xl[:, [0, 2]], axis=1) < 0.03, 1].max()
    assert top_u > top_l
    n = sim.count_self_intersections()
    both = np.vstack([xl, xu])
    faces = np.vstack([lower.faces, upper.faces + len(xl)])
    assert n == cr.cloth.count_triangle_intersections(both, faces) == 0
    # Per-garment read-outs use the garment's own numbering.
    assert upper.hinges.max() < 169 and upper.hinge_angles.shape == (upper.hinges.shape[0],)
    assert np.abs(upper.hinge_angles).max() > 0.05


def test_advance_lands_exactly_and_step_defaults() -> None:
    """advance(d) ends on t + d in both modules (the last step shortened),
    advance(0) takes no step, step() takes the module's own step."""
    sim, c = _cloth_sim(self_collision=False)
    assert sim.advance(0.0) == 0 and sim.time == 0.0
    n = sim.advance(0.0051)
    assert n == 3 and sim.time == pytest.approx(0.0051, abs=1e-15)
    sim.step()
    assert sim.time == pytest.approx(0.0071, abs=1e-15)
    sim.step(1e-4)
    assert sim.time == pytest.approx(0.0072, abs=1e-15)
    m, cloth = _mpm_sim()
    assert m.advance(0.0) == 0
    m.advance(1 / 24, frames=3)
    assert m.time == pytest.approx(1 / 24, abs=1e-12)
    dt = m.stable_dt()
    m.step()
    assert m.time == pytest.approx(1 / 24 + dt, abs=1e-12)
    assert np.isfinite(cloth.positions).all()


def test_cloth_divergence_rolls_back_and_continues() -> None:
    """A diverging cloth step raises SimulationDiverged with .step and .time
    of the start of the step, leaves the state as it was, and the run goes on
    after the cause is fixed (here: a 500 km/s kick, and a smaller dt)."""
    sim, c = _cloth_sim(self_collision=False)
    sim.advance(0.01)
    v = c.velocities
    v[3] = (5e5, 0.0, 0.0)
    c.velocities = v
    x0, v0, t0, n0 = c.positions, c.velocities, sim.time, sim.step_count
    with pytest.raises(cr.SimulationDiverged) as e:
        sim.advance(0.1)
    assert e.value.step == n0 and e.value.time == t0
    assert sim.time == t0 and sim.step_count == n0
    assert np.array_equal(c.positions, x0) and np.array_equal(c.velocities, v0)
    c.velocities = np.zeros((c.num_vertices, 3))
    sim.set(dt=1e-3)
    sim.advance(0.02)
    assert np.isfinite(c.positions).all() and sim.time == pytest.approx(t0 + 0.02, abs=1e-12)
    assert np.abs(c.positions - x0).max() > 1e-4


def test_mpm_divergence_rolls_back_and_continues() -> None:
    """An MPM step far beyond the stable one blows up a stiff block: the
    error carries .step/.time, the state is the one before the step, and
    the run continues with a small step, finite."""
    sim = cr.mpm.Simulation(dx=1 / 32)
    pts = cr.geometry.sample_box(lower=(0.4, 0.4, 0.4), upper=(0.6, 0.6, 0.6), spacing=1 / 64)
    b = sim.add_solid(pts, cr.mpm.ElasticMaterial(youngs_modulus=1e9), velocity=(0, -2, 0))
    b.velocities = np.random.default_rng(0).normal(size=(len(pts), 3))
    sim.step(2e-2)
    x0, v0, t0, n0 = b.positions, b.velocities, sim.time, sim.step_count
    with pytest.raises(cr.SimulationDiverged) as e:
        sim.step(2e-2)
    assert (e.value.step, e.value.time) == (n0, t0)
    assert (sim.step_count, sim.time) == (n0, t0)
    assert np.array_equal(b.positions, x0) and np.array_equal(b.velocities, v0)
    # The elastic wave speed √(E/ρ) = 1 km/s needs dt ≲ dx / 1000 s.
    for _ in range(20):
        sim.step(2e-5)
    assert np.isfinite(b.positions).all() and np.abs(b.positions - x0).max() > 0


@pytest.mark.parametrize("module", ["mpm", "cloth"])
def test_ctrl_c_stops_advance_at_a_step_boundary(module: str, tmp_path: Path) -> None:
    """SIGINT during a long advance() stops it within a second with
    KeyboardInterrupt; the state is intact (finite, time between start and
    end) and the simulation can go on."""
    setup = {
        "mpm": """
            sim = cr.mpm.Simulation(dx=1 / 48)
            obj = sim.add_cloth(cr.geometry.grid_mesh(size=(0.5, 0.5), resolution=(40, 40), center=(0.5, 0.6, 0.5)),
                                cr.mpm.ClothMaterial.preset("cloth_ball"))
        """,
        "cloth": """
            sim = cr.cloth.Simulation(dt=1e-3, self_collision=False)
            obj = sim.add_cloth(cr.geometry.grid_mesh(size=(0.3, 0.3), resolution=(30, 30)), "cotton")
        """,
    }[module]
    script = textwrap.dedent(setup) + textwrap.dedent("""
        sim.advance(0.002)
        print("started", flush=True)
        t = time.perf_counter()
        try:
            sim.advance(1000.0)
            print("finished")
        except KeyboardInterrupt:
            dt = time.perf_counter() - t
            x = obj.positions
            print(f"interrupted {sim.time} {np.isfinite(x).all()} {dt}", flush=True)
            sim.advance(0.002)
            print(f"continued {np.isfinite(obj.positions).all()}", flush=True)
    """)
    # Python installs its KeyboardInterrupt handler only if SIGINT is not
    # ignored at start-up, and a runner started as a background job of a
    # non-interactive shell (`nohup make test &`) ignores it; the child sets
    # the handler itself, so the test sees crumple's handling, not the
    # runner's signal disposition.
    code = ("import signal, time, numpy as np, crumple as cr\n"
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n" + script)
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout is not None
    line = p.stdout.readline()
    assert line.strip() == "started", line + (p.stderr.read() if p.stderr else "")
    time.sleep(1.0)
    t_sig = time.perf_counter()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    answered = time.perf_counter() - t_sig
    lines = out.split("\n")
    assert lines[0].startswith("interrupted"), out + err
    _, t_stop, finite, _ = lines[0].split()
    assert 0.002 < float(t_stop) < 1000.0 and finite == "True"
    assert lines[1] == "continued True", out + err
    assert answered < 30  # the whole child, including the extra advance and exit
    assert p.returncode == 0


def test_pins_on_handles_same_names() -> None:
    """pin / set_pin_targets / release are on the object handle in both
    modules with the same signatures; partial release frees only those."""
    m, cloth = _mpm_sim()
    c_sim, c = _cloth_sim(self_collision=False)
    for obj in (cloth, c):
        obj.pin([0, 1, 2])
        obj.set_pin_targets([0], obj.positions[[0]] + 0.01)
        obj.release([1])
    m.advance(0.02)
    c_sim.advance(0.02)
    for obj, start in ((cloth, 0.6), (c, 0.3)):
        y = obj.positions[:, 1]
        assert abs(y[2] - start) < 2e-3, "still pinned"
        assert y[1] < start - 1e-4, "released vertex falls"
        assert abs(y[0] - (start + 0.01)) < 2e-3, "moved to its new target"
    with pytest.raises(cr.InvalidInputError, match="exact"):
        cloth.pin([0], stiffness=10.0)
    with pytest.raises(cr.InvalidInputError, match="out-of-range"):
        c.pin([10_000])
    with pytest.raises(cr.InvalidInputError, match="velocities"):
        c.set_pin_targets([0], c.positions[[0]], velocities=[[1.0, 0, 0]])


def test_velocity_per_vertex_in_every_add() -> None:
    """velocity= takes one 3-vector or an (N, 3) array in every add_*."""
    m = cr.mpm.Simulation(dx=1 / 32)
    mesh = cr.geometry.grid_mesh(size=(0.2, 0.2), resolution=(4, 4), center=(0.5, 0.5, 0.5))
    vel = np.tile([0.0, 0.0, 1.0], (mesh.num_vertices, 1))
    vel[:, 0] = np.linspace(-1, 1, mesh.num_vertices)
    cl = m.add_cloth(mesh, velocity=vel)
    assert np.allclose(cl.velocities, vel, atol=1e-6)
    pts = cr.geometry.sample_box(lower=(0.3, 0.3, 0.3), upper=(0.35, 0.35, 0.35), spacing=0.02)
    sv = np.random.default_rng(1).normal(size=(len(pts), 3))
    solid = m.add_solid(pts, velocity=sv)
    assert np.allclose(solid.velocities, sv, atol=1e-6)
    sim = cr.cloth.Simulation()
    c = sim.add_cloth(mesh, velocity=vel)
    assert np.array_equal(c.velocities, vel)
    with pytest.raises(cr.InvalidInputError, match="velocity"):
        sim.add_cloth(mesh, velocity=np.zeros((3, 3)))
    with pytest.raises(cr.InvalidInputError, match="velocity"):
        m.add_granular(pts, velocity=[1.0, 2.0])


def test_bad_integers_are_typed_errors() -> None:
    """Negative or fractional integers are InvalidInputError, not
    OverflowError or silent truncation."""
    sim, c = _cloth_sim()
    h = c.rotate_handle([0, 1], axis=(0, 1, 0), angle=0.5, duration=0.1)
    assert h == 0
    for bad in (-1, 3.7, 5):
        with pytest.raises(cr.InvalidInputError):
            c.release_handle(bad)  # type: ignore[arg-type]
        with pytest.raises(cr.InvalidInputError):
            sim.remove_collider(bad)  # type: ignore[arg-type]
    for bad in (-1, 3.7):
        with pytest.raises(cr.InvalidInputError, match="boundary_padding"):
            cr.mpm.Simulation(boundary_padding=bad)  # type: ignore[arg-type]
    with pytest.raises(cr.InvalidInputError, match="dt must be > 0"):
        cr.cloth.Simulation(dt=0)
    with pytest.raises(cr.InvalidInputError, match="no cloth"):
        cr.cloth.Simulation().advance(0.1)


def test_materials_frozen_range_checked_presets_in_one_place() -> None:
    """Every material is frozen, range-checked when made, and has PRESETS and
    preset(name, **overrides) on its class."""
    with pytest.raises(cr.InvalidInputError, match="areal_density"):
        cr.cloth.Material.preset("cotton", areal_density=-1)
    with pytest.raises(cr.InvalidInputError, match="hardening_drop"):
        cr.cloth.Material(hardening_drop=2.0)
    with pytest.raises(cr.InvalidInputError, match="tensile_tau_f"):
        cr.cloth.Material(tensile_tau_f=(1.0, 0.0, 1.0))
    with pytest.raises(cr.InvalidInputError, match="clock"):
        cr.cloth.Wrinkles(clock="never")  # type: ignore[arg-type]
    m = cr.cloth.Material.preset("denim")
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.areal_density = 1.0  # type: ignore[misc]
    assert set(cr.cloth.Material.PRESETS) >= {"cotton", "denim", "polyester", "trouser_cotton"}
    for cls in (cr.cloth.Material, cr.mpm.ClothMaterial, cr.mpm.CurveMaterial, cr.mpm.ElasticMaterial,
                cr.mpm.SandMaterial, cr.mpm.GooMaterial):
        assert cls.PRESETS, cls
        name = next(iter(cls.PRESETS))
        assert isinstance(cls.preset(name), cls)
        with pytest.raises(cr.InvalidInputError, match="preset"):
            cls.preset("no_such_material")
        with pytest.raises(cr.InvalidInputError, match="unknown"):
            cls.preset(name, no_such_field=1.0)
    with pytest.raises(cr.InvalidInputError, match="rpic_damping"):
        _mpm_sim()[0].add_curves(cr.geometry.Curves(np.array([[0.5, 0.5, 0.5], [0.5, 0.55, 0.5]]), np.array([0, 2])),
                                 rpic_damping=1.5)


@pytest.mark.parametrize("module", ["mpm", "cloth"])
def test_checkpoint_objects_and_bitwise_continuation(module: str, tmp_path: Path) -> None:
    """After load, sim.objects holds the same handle types in the same order
    with the saved arrays, and save → load → continue equals running on, bit
    for bit."""
    sim, obj = _mpm_sim() if module == "mpm" else _cloth_sim()
    sim.advance(0.02)
    path = tmp_path / "state.npz"
    sim.save(path)
    sim.advance(0.02)
    sim2 = type(sim).load(path)
    assert [type(o) for o in sim2.objects] == [type(o) for o in sim.objects]
    assert [o.name for o in sim2.objects] == [o.name for o in sim.objects]
    sim2.advance(0.02)
    assert np.array_equal(sim2.objects[0].positions, obj.positions)
    assert np.array_equal(sim2.objects[0].velocities, obj.velocities)
    assert sim2.time == sim.time


@pytest.mark.parametrize("module", ["mpm", "cloth"])
def test_bad_checkpoints_are_typed_errors(module: str, tmp_path: Path) -> None:
    """A missing, truncated, corrupt or foreign checkpoint raises
    CheckpointError naming the file; never a zip-library exception."""
    sim, _ = _mpm_sim() if module == "mpm" else _cloth_sim()
    cls = type(sim)
    good = tmp_path / "good.npz"
    sim.save(good)
    data = good.read_bytes()
    cases = {
        "missing.npz": None,
        "truncated.npz": data[: len(data) // 2],
        "corrupt.npz": data[:100] + bytes(len(data) - 100),
        "text.npz": b"hello, not a zip",
        "plain.npz": None,
    }
    np.savez(tmp_path / "plain.npz", a=np.zeros(3))
    for name, content in cases.items():
        p = tmp_path / name
        if content is not None:
            p.write_bytes(content)
        with pytest.raises(cr.CheckpointError, match=name):
            cls.load(p)
    other, _ = _cloth_sim() if module == "mpm" else _mpm_sim()
    foreign = tmp_path / "foreign.npz"
    other.save(foreign)
    with pytest.raises(cr.CheckpointError, match="foreign.npz.*checkpoint"):
        cls.load(foreign)
    assert issubclass(cr.CheckpointError, cr.InvalidInputError)


def test_frames_name_every_object_and_collider() -> None:
    """sim.frame() holds every object under its name and every collider with
    its pose, in both modules."""
    m, cloth = _mpm_sim()
    pts = cr.geometry.sample_box(lower=(0.3, 0.7, 0.3), upper=(0.35, 0.75, 0.35), spacing=0.02)
    m.add_granular(pts)
    m.advance(0.01)
    f = m.frame()
    assert list(f.objects) == ["cloth", "sand"] and list(f.colliders) == ["sphere"]
    assert np.allclose(f.objects["cloth"].positions, cloth.positions)
    assert f.time == m.time
    sim, c = _cloth_sim()
    sim.add_cloth(cr.geometry.grid_mesh(size=(0.1, 0.1), resolution=(4, 4), center=(0, 0.5, 0)))
    g = sim.frame()
    assert list(g.objects) == ["cloth", "cloth_1"]
    assert set(g.objects["cloth"].vertex_data) >= {"speed", "plastic_angle"}
    # The last step's figures ride in every frame (none before the first
    # step; mpm reports none), and stage seconds are `time_<stage>` in every
    # module that reports them.
    assert g.stats == {} and f.stats == {}
    sim.step()
    pbd = cr.pbd.Simulation(spacing=0.02)
    pbd.add_body(cr.geometry.box_mesh(center=(0, 0.2, 0), half_extents=(0.05, 0.05, 0.05)))
    pbd.step(1e-3)
    for s in (sim, pbd):
        fs = s.frame().stats
        assert fs and fs == {k: float(v) for k, v in s.stats().items()}, type(s)
        assert not [k for k in fs if k.startswith("t_")], sorted(fs)
    assert {"time_solve", "time_collide"} <= set(sim.frame().stats)


def test_python_dash_m_crumple_runs_the_cli() -> None:
    """python -m crumple is the crumple command."""
    out = subprocess.run([sys.executable, "-m", "crumple", "scenes"], capture_output=True, text=True, timeout=120,
                         env={**os.environ})
    assert out.returncode == 0 and "cloth_on_sphere" in out.stdout


def test_scripted_handles_in_both_modules(tmp_path: Path) -> None:
    """add_handle / freeze_handle / release_handle / rotate_handle on the
    object handles of both modules: the handle's vertices follow the path
    (exactly in MPM, within the pin springs' sag in cloth), stay where a
    frozen handle left them, fall once released, and a checkpoint carries a
    moving handle on bit for bit."""
    m, cloth = _mpm_sim()
    c_sim, c = _cloth_sim(self_collision=False)
    for sim, obj, tol in ((m, cloth, 1e-5), (c_sim, c, 2e-3)):
        x0 = np.asarray(obj.positions, dtype=np.float64)
        idx = [0, 1]
        h = obj.add_handle(idx, times=[0.0, 0.05], translations=[[0, 0, 0], [0.02, 0, 0]])
        assert h == 0
        sim.advance(0.05)
        x = np.asarray(obj.positions, dtype=np.float64)
        assert np.abs(x[idx] - (x0[idx] + [0.02, 0, 0])).max() < tol
        obj.freeze_handle(h)
        sim.advance(0.02)
        assert np.abs(np.asarray(obj.positions, dtype=np.float64)[idx] - x[idx]).max() < tol
        obj.release_handle(h)
        sim.advance(0.05)
        assert np.asarray(obj.positions, dtype=np.float64)[idx, 1].max() < x[idx, 1].min() - 1e-3, "released: falls"
        # A rotation about the vertical through vertex 5 turns vertex 6 about it.
        r = obj.rotate_handle([5, 6], axis=(0, 1, 0), angle=np.pi / 2, duration=0.04,
                              pivot=np.asarray(obj.positions[5], dtype=np.float64))
        p5, p6 = (np.asarray(obj.positions, dtype=np.float64)[i] for i in (5, 6))
        path = tmp_path / f"{type(sim).__module__}.npz"
        sim.advance(0.02)
        sim.save(path)
        sim.advance(0.03)
        q = np.asarray(obj.positions, dtype=np.float64)
        turned = cr.colliders.rotation((0, 1, 0), 90.0) @ (p6 - p5)
        assert np.abs(q[6] - (p5 + turned)).max() < 50 * tol
        back = type(sim).load(path)
        back.advance(0.03)
        assert np.array_equal(back.objects[0].positions, obj.positions)
        assert r == 1
    with pytest.raises(cr.InvalidInputError, match="exact"):
        cloth.add_handle([0], times=[0.0], stiffness=1.0)
    with pytest.raises(cr.InvalidInputError, match="handle"):
        cloth.release_handle(7)


def test_remove_collider_in_both_modules() -> None:
    """remove_collider(i) exists in both modules: without its sphere the
    cloth falls past where the sphere was."""
    for sim, obj in (_mpm_sim(), _cloth_sim(self_collision=False)):
        n = len(sim.colliders)
        sim.remove_collider(0)
        assert len(sim.colliders) == n - 1 and "sphere" not in sim.frame().colliders
        sim.advance(0.2)
        y0 = 0.6 if isinstance(sim, cr.mpm.Simulation) else 0.3
        assert np.asarray(obj.positions)[:, 1].max() < y0 - 0.1
        with pytest.raises(cr.InvalidInputError):
            sim.remove_collider(5)


def test_bad_handle_path_leaves_no_pins_and_rollback_restores_colliders() -> None:
    """A handle whose path the core refuses (times not increasing) pins
    nothing; after a diverged step the colliders are back at the start of
    that step too; advance lands on t + d even for durations far below dt."""
    m, cloth = _mpm_sim()
    with pytest.raises(cr.InvalidInputError):
        cloth.add_handle([3], times=[0.1, 0.05], translations=[[0, 0, 0], [0.01, 0, 0]])
    assert len(np.asarray(m._s.state_arrays()["pins"])) == 0
    sim, c = _cloth_sim(self_collision=False)
    ball = sim.colliders[0].set_velocity(linear=(0.0, 0.5, 0.0))
    sim.advance(0.01)
    y0 = float(ball.translation[1])
    v = c.velocities
    v[3] = (5e5, 0.0, 0.0)
    c.velocities = v
    with pytest.raises(cr.SimulationDiverged):
        sim.step()
    assert float(ball.translation[1]) == y0 and ball.time == sim.time
    c.velocities = np.zeros((c.num_vertices, 3))
    t = sim.time
    assert sim.advance(1e-13) == 0 and sim.time == t + 1e-13
    sim.advance(0.002 + 1e-12)  # the 1e-12 s rest is merged into the last step
    assert sim.time == pytest.approx(t + 0.002, abs=1e-11) and np.isfinite(c.positions).all()


def test_parameter_records_are_named_once_and_checked_by_the_core() -> None:
    """Materials and settings cross to the core by their Python names: the
    core's field list accepts exactly the dataclass fields, refuses an unknown
    or missing key by name, and gives presets back under the same names."""
    from crumple import _core

    mesh = cr.geometry.grid_mesh(size=(0.1, 0.1), resolution=(3, 3), center=(0, 0.5, 0))
    mat = cr.cloth.Material.preset("denim")
    assert set(_core.cloth_preset("denim")) == {f.name for f in dataclasses.fields(cr.cloth.Material)}
    assert cr.cloth.Material(**_core.cloth_preset("denim")) == mat
    sim = cr.cloth.Simulation(dt=1e-3)
    params = dict(sim._params)
    with pytest.raises(cr.InvalidInputError, match="bogus"):
        _core.ClothSimulation(mesh._m, {**mat._dict(), "bogus": 1.0}, cr.cloth.Wrinkles()._dict(), params)
    missing = mat._dict()
    del missing["areal_density"]
    with pytest.raises(cr.InvalidInputError, match="areal_density"):
        _core.ClothSimulation(mesh._m, missing, cr.cloth.Wrinkles()._dict(), params)
    with pytest.raises(cr.InvalidInputError, match="linear_solver"):
        _core.ClothSimulation(mesh._m, mat._dict(), cr.cloth.Wrinkles()._dict(), {**params, "linear_solver": "lu"})
    # MPM: a misspelt material field is refused by the core's spec, naming the material.
    m = cr.mpm.Simulation(lower=(0, 0, 0), upper=(1, 1, 1), dx=0.1)
    pts = np.array([[0.5, 0.5, 0.5]])
    with pytest.raises(cr.InvalidInputError, match="SandMaterial.*hardening"):
        m._s.add_volume(pts, "sand", {**cr.mpm.SandMaterial()._params(), "hardening": 1.0}, 2200.0, 1e-6,
                        (0.0, 0.0, 0.0), 0.0)
    assert set(cr.mpm.CurveMaterial()._params()) == {
        "youngs_modulus", "poisson_ratio", "stretch_stiffness", "shear_stiffness", "friction_angle"}


def test_an_option_name_has_one_type_in_every_scene_module_and_material() -> None:
    """The vocabulary's rule for what a person types: a name taken by a
    built-in scene, a module's ``Simulation`` or a material means one thing,
    so its type in the scene-file schema is the same wherever it appears
    (``gravity`` was a switch in ``pbd_shot`` and a m/s² vector everywhere
    else; ``stretch``, ``sweep`` and ``hold`` each named two things)."""
    from crumple import scenefile, scenes

    def kind(s: dict[str, Any]) -> str | None:
        if "type" in s:
            return str(s["type"])
        if "enum" in s:
            return "string"
        if "oneOf" in s:
            return "|".join(sorted(str(kind(x)) for x in s["oneOf"]))
        return None  # any value (a None default): says nothing

    where: dict[str, dict[str, list[str]]] = {}

    def take(owner: str, props: dict[str, Any]) -> None:
        for name, s in props.items():
            k = kind(s)
            if k is not None:
                where.setdefault(name, {}).setdefault(k, []).append(owner)

    for name, scene in scenes._REGISTRY.items():
        take(f"scene {name}", scenefile._options_schema(scene.fn)["properties"])
    for module in ("mpm", "cloth", "pbd", "eol"):
        take(f"{module}.Simulation", scenefile._options_schema(getattr(cr, module).Simulation)["properties"])
        for cls in {id(c): c for c in scenefile._materials(module).values()}.values():
            take(f"{module} {cls.__name__}", scenefile._material_schema(cls)["properties"]["overrides"]["properties"])
    assert len(where) > 100, "the options were not found"
    clashes = {name: kinds for name, kinds in where.items() if len(kinds) > 1}
    assert not clashes, clashes


def test_a_frame_refuses_two_objects_of_one_name() -> None:
    """Handles' names can be set (a scene names its objects as it shows
    them); a name given twice would drop an object from every frame, so the
    frame refuses it and says how to fix it."""
    sim = cr.cloth.Simulation()
    a = sim.add_cloth(cr.geometry.grid_mesh(size=(0.2, 0.2), resolution=(2, 2), center=(0, 0.5, 0)))
    b = sim.add_cloth(cr.geometry.grid_mesh(size=(0.2, 0.2), resolution=(2, 2), center=(0, 0.8, 0)))
    assert set(sim.frame().objects) == {a.name, b.name}
    b.name = a.name
    with pytest.raises(cr.InvalidInputError, match="unique name"):
        sim.frame()
    b.name = "not a name"
    with pytest.raises(cr.InvalidInputError, match="not usable"):
        sim.frame()
