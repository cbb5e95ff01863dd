"""crumple.mpm: API behaviour, bad input, sparse memory, determinism from Python."""

from __future__ import annotations

import resource

import numpy as np
import pytest

import crumple as cr


def _backend(request: pytest.FixtureRequest, backend: str) -> str:
    """``backend``, after skipping (or failing, in CI) a GPU run without an adapter."""
    if backend == "gpu":
        request.getfixturevalue("gpu_or_skip")
    return backend


BACKENDS = pytest.mark.parametrize("backend", ["cpu", "gpu"])


def _cloth_sim(**kw: object) -> tuple[cr.mpm.Simulation, cr.mpm.Cloth]:
    sim = cr.mpm.Simulation(lower=(0, 0, 0), upper=(1, 1, 1), dx=1 / 32, **kw)  # type: ignore[arg-type]
    mesh = cr.geometry.grid_mesh(size=(0.5, 0.5), resolution=(16, 16), center=(0.5, 0.6, 0.5))
    cloth = sim.add_cloth(mesh, cr.mpm.ClothMaterial.preset("curtain"), rpic_damping=0.8)
    return sim, cloth


def test_cloth_falls_under_gravity_and_lands_exactly_on_time() -> None:
    """advance() lands on the requested time; the cloth falls ½ g t² (E1 in f32)."""
    sim, cloth = _cloth_sim()
    y0 = cloth.positions[:, 1].copy()
    steps = sim.advance(0.1)
    assert sim.time == pytest.approx(0.1, abs=1e-15)
    assert steps >= 0.1 / 1e-3 * 0.99  # dt_max = 1 ms
    dy = y0 - cloth.positions[:, 1]
    assert np.isfinite(cloth.positions).all()
    # symplectic Euler: x_n = Σ_k Δt (g k Δt) = ½ g Δt² n (n + 1)
    dt = 0.1 / steps
    np.testing.assert_allclose(dy, 0.5 * 9.81 * dt**2 * steps * (steps + 1), rtol=1e-4)
    np.testing.assert_allclose(cloth.velocities[:, 1], -9.81 * 0.1, rtol=1e-4)
    assert cloth.positions.dtype == np.float32


@BACKENDS
def test_elastic_energy_is_zero_at_rest_and_stores_the_impact(request: pytest.FixtureRequest, backend: str) -> None:
    """``elastic_energy`` (Φ of paper Eq. 6, J) is zero for a cloth in its rest
    shape, stays zero in free fall (rigid motion), and holds a share of the
    kinetic energy once the cloth hits a sticky ball, on either backend
    (the backends agree to 2%). The exact properties (−∇Φ is the grid force,
    energy balance) are the Rust tests U4 and U8 in ``mpm_invariants.rs``."""
    sim = cr.mpm.Simulation(lower=(0, 0, 0), upper=(1, 1, 1), dx=1 / 32, backend=_backend(request, backend))
    mesh = cr.geometry.grid_mesh(size=(0.5, 0.5), resolution=(16, 16), center=(0.5, 0.6, 0.5))
    sim.add_cloth(mesh, cr.mpm.ClothMaterial.preset("curtain"), rpic_damping=0.8)
    sim.add_collider(cr.colliders.Sphere(center=(0.5, 0.35, 0.5), radius=0.15, mode="sticky"))
    scale = sim.total_mass() * 9.81 * 0.1  # J: the energy of a 0.1 m fall
    assert abs(sim.elastic_energy()) < 1e-9 * scale
    sim.advance(0.1)  # free fall: the cloth is 0.1 m above the ball
    assert sim.kinetic_energy() > 0.1 * scale and abs(sim.elastic_energy()) < 1e-9 * scale
    sim.advance(0.15)
    phi = sim.elastic_energy()
    assert np.isfinite(phi) and phi > 0.1 * scale, f"Φ = {phi} J after the impact"
    if backend == "gpu":
        ref = cr.mpm.Simulation(lower=(0, 0, 0), upper=(1, 1, 1), dx=1 / 32)
        ref.add_cloth(mesh, cr.mpm.ClothMaterial.preset("curtain"), rpic_damping=0.8)
        ref.add_collider(cr.colliders.Sphere(center=(0.5, 0.35, 0.5), radius=0.15, mode="sticky"))
        ref.advance(0.25)
        assert phi == pytest.approx(ref.elastic_energy(), rel=0.02)


def test_grid_mass_equals_particle_mass() -> None:
    """Σ m over the grid equals Σ m over particles after a step (E8 proxy)."""
    sim, _ = _cloth_sim(precision="f64")
    sim.step(1e-3)
    assert sim.grid_mass() == pytest.approx(sim.total_mass(), rel=1e-12)


def test_pins_hold_and_drive_vertices() -> None:
    """Pinned vertices stay put; pin targets move them with the given velocity."""
    sim, cloth = _cloth_sim()
    top = np.arange(17)
    cloth.pin(top)
    x0 = cloth.positions[top].copy()
    sim.advance(0.05)
    np.testing.assert_allclose(cloth.positions[top], x0, atol=1e-6)
    assert (cloth.positions[17:, 1] < x0[0, 1] - 1e-3).all()
    cloth.set_pin_targets(top, x0, np.tile([0.1, 0, 0], (17, 1)))
    sim.advance(0.1)
    np.testing.assert_allclose(cloth.positions[top, 0], x0[:, 0] + 0.01, atol=1e-5)
    cloth.release()
    sim.advance(0.02)
    assert (cloth.positions[top, 1] < x0[:, 1]).all()


def test_sparse_grid_memory_follows_the_cloth() -> None:
    """A cloth patch in a 1 m³ box at dx = 1/512 allocates only blocks near it,
    never the dense 513³ grid (2 GB of nodes)."""
    dx = 1 / 512
    sim = cr.mpm.Simulation(lower=(0, 0, 0), upper=(1, 1, 1), dx=dx)
    mesh = cr.geometry.grid_mesh(size=(0.1, 0.1), resolution=(51, 51), center=(0.5, 0.5, 0.5))
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    sim.add_cloth(mesh, cr.mpm.ClothMaterial.preset("curtain"))
    sim.advance(0.002)
    blocks = sim._s.active_blocks()
    dense_blocks = (513 // 4 + 1) ** 3
    assert 0 < blocks < 0.01 * dense_blocks, blocks
    grew_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
    assert grew_mb < 300, f"RSS grew {grew_mb:.0f} MB"


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(dx=0), r"dx must be > 0"),
        (dict(dx=-0.1), r"dx must be > 0"),
        (dict(dx=float("nan")), r"dx must be finite"),
        (dict(lower=(0, 0, 0), upper=(1, -1, 1)), r"upper must exceed lower"),
        (dict(backend="cuda"), r"unknown backend 'cuda'"),
        (dict(kernel="linear"), r"unknown kernel 'linear'"),
        (dict(precision="f16"), r"unknown precision 'f16'"),
        (dict(dt_max=0), r"dt_max must be > 0"),
        (dict(dx=1e-4), r"nodes long"),
    ],
)
def test_bad_simulation_parameters(kwargs: dict[str, object], match: str) -> None:
    """Bad solver parameters raise InvalidInputError naming the parameter."""
    with pytest.raises(cr.InvalidInputError, match=match):
        cr.mpm.Simulation(**kwargs)  # type: ignore[arg-type]


def test_bad_objects() -> None:
    """Objects outside the domain, NaN points, bad materials raise typed errors."""
    sim = cr.mpm.Simulation(dx=1 / 32)
    outside = cr.geometry.grid_mesh(size=(0.5, 0.5), resolution=(8, 8), center=(0.5, 1.2, 0.5))
    with pytest.raises(cr.InvalidInputError, match="outside the simulation domain"):
        sim.add_cloth(outside)
    with pytest.raises(cr.InvalidInputError, match="non-finite"):
        sim.add_solid(np.array([[0.5, np.nan, 0.5]]))
    with pytest.raises(cr.InvalidInputError, match=r"friction_angle must be in \[0, 90\)"):
        cr.mpm.ClothMaterial(friction_angle=95)
    with pytest.raises(cr.InvalidInputError, match=r"friction_angle must be in \[0, 90\)"):
        cr.mpm.SandMaterial(friction_angle=-5)
    with pytest.raises(cr.InvalidInputError, match="poisson_ratio"):
        cr.mpm.ElasticMaterial(poisson_ratio=0.5)
    with pytest.raises(cr.InvalidInputError, match="density must be > 0"):
        cr.mpm.CurveMaterial(density=0)
    with pytest.raises(cr.InvalidInputError, match="unknown ClothMaterial preset"):
        cr.mpm.ClothMaterial.preset("silk")
    with pytest.raises(cr.InvalidInputError, match="damping"):
        sim.add_solid(np.array([[0.5, 0.5, 0.5]]), rpic_damping=2.0)
    with pytest.raises(cr.InvalidInputError, match="ClothMaterial"):
        sim.add_cloth(cr.geometry.grid_mesh(size=(0.2, 0.2), center=(0.5, 0.5, 0.5)),
                      cr.mpm.SandMaterial())  # type: ignore[arg-type]
    with pytest.raises(cr.InvalidInputError, match="no particles"):
        sim.step(1e-3)
    with pytest.raises(cr.InvalidInputError, match="dt must be > 0"):
        sim.step(0.0)


@BACKENDS
def test_particle_leaving_domain_is_an_error_or_clamped(request: pytest.FixtureRequest, backend: str) -> None:
    """A vertex dragged out of the box by its pin raises, or is clamped when asked."""
    for policy in ("error", "clamp"):
        sim, cloth = _cloth_sim(out_of_domain=policy, backend=_backend(request, backend))
        cloth.pin([0])
        cloth.set_pin_targets([0], cloth.positions[:1].astype(np.float64), [[0.0, 20.0, 0.0]])
        if policy == "error":
            with pytest.raises(cr.InvalidInputError, match="outside the simulation domain"):
                sim.advance(0.05)
        else:
            sim.advance(0.05)  # the dragged vertex is clamped back each step: no error
            assert np.isfinite(cloth.positions).all() and (cloth.positions[1:, 1] < 1.0).all()


def test_diverging_simulation_raises() -> None:
    """An absurd stiffness at a large step raises SimulationDiverged, not NaN."""
    sim = cr.mpm.Simulation(dx=1 / 16, dt_max=0.05)
    pts = cr.geometry.sample_box(lower=(0.4, 0.4, 0.4), upper=(0.6, 0.6, 0.6), spacing=1 / 32)
    sim.add_solid(pts, cr.mpm.ElasticMaterial(youngs_modulus=1e12), velocity=(0, 0, 1))
    with pytest.raises((cr.SimulationDiverged, cr.InvalidInputError)):
        for _ in range(40):
            sim.step(0.05)


def test_thread_count_does_not_change_results() -> None:
    """Runs with 1 and 2 threads give identical bytes (CPU determinism)."""
    import subprocess
    import sys

    code = (
        "import crumple as cr, numpy as np, sys;"
        "sim=cr.mpm.Simulation(dx=1/32);"
        "m=cr.geometry.grid_mesh(size=(0.5,0.5),resolution=(20,20),center=(0.5,0.5,0.5));"
        "c=sim.add_cloth(m, cr.mpm.ClothMaterial.preset('cloth_ball'), rpic_damping=0.7);"
        "sim.add_collider(cr.colliders.Sphere(center=(0.5,0.3,0.5), radius=0.15));"
        "s=sim.add_granular(cr.geometry.sample_box(lower=(0.45,0.6,0.45),upper=(0.55,0.7,0.55),spacing=1/64));"
        "sim.advance(0.2);"
        "sys.stdout.buffer.write(c.positions.tobytes()+s.positions.tobytes())"
    )
    outs = []
    for n in ("1", "2"):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True,
                           env={**__import__("os").environ, "RAYON_NUM_THREADS": n}, timeout=300)
        assert r.returncode == 0, r.stderr.decode()
        outs.append(r.stdout)
    assert len(outs[0]) > 1000 and outs[0] == outs[1]


@BACKENDS
def test_checkpoint_continues_bit_identically(tmp_path: object, request: pytest.FixtureRequest, backend: str) -> None:
    """save() then load() continues exactly like the original run (cloth,
    sand, a moving collider and a pin)."""
    from pathlib import Path

    sim, cloth = _cloth_sim(backend=_backend(request, backend))
    sand = sim.add_granular(cr.geometry.sample_box(lower=(0.45, 0.7, 0.45), upper=(0.55, 0.8, 0.55), spacing=1 / 64))
    ball = cr.colliders.Sphere(center=(0.5, 0.3, 0.5), radius=0.1).set_velocity(linear=(0, 0.2, 0))
    sim.add_collider(ball)
    cloth.pin([0, 16])
    sim.advance(0.05)
    path = Path(str(tmp_path)) / "mpm.npz"
    sim.save(path)
    at_save = cloth.positions.copy()
    sim.advance(0.05)
    back = cr.mpm.Simulation.load(path)
    assert back.time == pytest.approx(0.05) and back.step_count == 50
    back.advance(0.05)
    assert back.step_count == sim.step_count
    cloth2 = back._s.positions(cloth.index)
    assert cloth2.tobytes() == cloth.positions.tobytes()
    assert back._s.positions(sand.index).tobytes() == sand.positions.tobytes()
    assert np.abs(cloth.positions - at_save).max() > 1e-3  # the continued run really moved


@BACKENDS
def test_escaping_sand_is_removed_when_asked(tmp_path: object, request: pytest.FixtureRequest, backend: str) -> None:
    """With out_of_domain="remove", sand carried out of the box by a sticky
    collider is deleted; the cloth is untouched and the run stays finite. A
    checkpoint taken afterwards still loads."""
    from pathlib import Path

    sim, cloth = _cloth_sim(out_of_domain="remove", backend=_backend(request, backend))
    sand = sim.add_granular(cr.geometry.sample_box(lower=(0.75, 0.3, 0.45), upper=(0.85, 0.4, 0.55), spacing=1 / 64))
    plough = cr.colliders.Box(center=(0.7, 0.35, 0.5), half_extents=(0.05, 0.1, 0.1), mode="sticky")
    plough.set_velocity(linear=(3.0, 0, 0))
    sim.add_collider(plough)
    n0 = len(sand.positions)
    sim.advance(0.15)
    assert sim.removed_particles() > 0
    assert len(sand.positions) == n0 - sim.removed_particles()
    assert np.isfinite(sand.positions).all() and (sand.positions[:, 0] < 1.0).all()
    assert len(cloth.positions) == 17 * 17 and np.isfinite(cloth.positions).all()
    path = Path(str(tmp_path)) / "after_removal.npz"
    sim.save(path)
    back = cr.mpm.Simulation.load(path)
    assert back._s.positions(sand.index).tobytes() == sand.positions.tobytes()


def test_eulerian_tangents_ablation_runs_rigidly_in_free_fall() -> None:
    """tangents="eulerian" (spec E6 a): a free-falling cloth keeps its shape
    (∇v = 0), and under contact it deforms differently from the mesh default."""
    runs = {}
    for mode in ("mesh", "eulerian"):
        sim, cloth = _cloth_sim(tangents=mode, precision="f64")
        x0 = cloth.positions.copy()
        sim.advance(0.05)
        drop = x0 - cloth.positions
        np.testing.assert_allclose(drop - drop.mean(axis=0), 0.0, atol=1e-9)
        sim.add_collider(cr.colliders.Sphere(center=(0.5, 0.35, 0.5), radius=0.12))
        sim.advance(0.3)
        assert np.isfinite(cloth.positions).all()
        runs[mode] = cloth.positions
    assert np.abs(runs["mesh"] - runs["eulerian"]).max() > 1e-3
    with pytest.raises(cr.InvalidInputError, match="unknown tangents"):
        cr.mpm.Simulation(tangents="lagrangian")  # type: ignore[arg-type]
