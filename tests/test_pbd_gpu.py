"""The shape-matching GPU backend against the CPU backend (issue 15 item 3,
spec shape_matching §12 D1 and §14): positions after 10 steps within
1e-4 r, every experiment scene at test size with the same metrics within
f32 rounding, two GPU runs bitwise identical, a diverged GPU step rolled
back. On a machine without a GPU these run on Mesa lavapipe (CI installs it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import crumple as cr
from crumple.errors import SimulationDiverged

pytestmark = pytest.mark.usefixtures("gpu_or_skip")

R = 0.1


def _two_bodies(backend: str, resampling: bool = False) -> cr.pbd.Simulation:
    sim = cr.pbd.Simulation(resampling=resampling, backend=backend)
    sim.add_collider(cr.colliders.Plane(point=(0, 0, 0), normal=(0, 1, 0), mode="separate", friction=0.5),
                     name="ground")
    sim.add_body(cr.geometry.uv_sphere(center=(-0.3, 0.45, 0), radius=0.35, n_lat=10, n_lon=14),
                 "armadillo_drop", velocity=(2.0, 0, 0), name="ball")
    sim.add_body(cr.geometry.box_mesh(center=(0.35, 0.35, 0), half_extents=(0.3, 0.3, 0.3)), "dough",
                 velocity=(-1.0, 0, 0), name="block")
    return sim


def _positions(sim: cr.pbd.Simulation) -> np.ndarray:
    return np.concatenate([b.positions for b in sim.objects]).astype(np.float64)


@pytest.mark.parametrize("resampling", [False, True])
def test_d1_ten_steps_agree_within_1e4_r(resampling: bool) -> None:
    cpu, gpu = _two_bodies("cpu", resampling), _two_bodies("gpu", resampling)
    assert gpu.backend == "gpu" and gpu._s.gpu_adapter()
    x0 = _positions(cpu)
    for _ in range(10):
        cpu.step()
        gpu.step()
    a, b = _positions(cpu), _positions(gpu)
    assert np.abs(a - x0).max() > 0.5 * R, "the scene must move"
    assert np.isfinite(b).all()
    assert a.shape == b.shape
    d = float(np.linalg.norm(a - b, axis=1).max())
    assert d < 1e-4 * R, f"max |Δx| = {d / R:.2e} r"
    for bc, bg in zip(cpu.objects, gpu.objects):
        np.testing.assert_allclose(bg.plastic_norms, bc.plastic_norms, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(bg.surface.vertices, bc.surface.vertices, atol=1e-3 * R)


def test_two_gpu_runs_are_bitwise_identical() -> None:
    runs = []
    for _ in range(2):
        sim = _two_bodies("gpu")
        sim.advance(8 / 60)
        runs.append(_positions(sim))
    assert np.array_equal(runs[0], runs[1])


def test_diverged_gpu_step_rolls_back() -> None:
    sim = _two_bodies("gpu")
    sim.step()
    ball = sim.objects[0]
    before = _positions(sim)
    v = ball.velocities.astype(np.float64)
    v[0] = (1e39, 0.0, 0.0)  # beyond f32: the first prediction is not finite
    ball.velocities = v
    with pytest.raises(SimulationDiverged) as e:
        sim.step()
    assert e.value.step == sim.step_count == 1
    assert np.array_equal(_positions(sim), before)
    v[0] = (0.0, 0.0, 0.0)
    ball.velocities = v
    sim.step()
    assert np.isfinite(_positions(sim)).all()


def _metrics(name: str, tmp: Path, backend: str, **kw: Any) -> dict[str, Any]:
    out = cr.scenes.run(name, out_dir=tmp / backend, backend=backend, **kw)
    return json.loads((out / "metrics.json").read_text())


@pytest.mark.parametrize("name, kw, keys", [
    ("pbd_shot", dict(frames=10, scale=0.5, shots=2), ["dent_depth_r", "max_plastic_norm"]),
    ("pbd_drop_sweep", dict(frames=20, scale=0.7), ["height_ratio", "height_ratio_yield_1e-2"]),
    ("pbd_taffy", dict(frames=30, stretch_ratio=2.0, scale=0.5),
     ["particles", "density_ratio", "volume_ratio", "length_ratio", "max_gap_r"]),
    # The squeeze (1 s); the later phases drift apart (see test_dough_pieces_agree).
    ("pbd_dough", dict(frames=30), ["particles", "height_m", "length_m", "components"]),
])
def test_every_experiment_scene_gives_the_cpu_metrics(tmp_path: Path, name: str, kw: dict[str, Any],
                                                      keys: list[str]) -> None:
    cpu = _metrics(name, tmp_path, "cpu", **kw)
    gpu = _metrics(name, tmp_path, "gpu", **kw)
    for k in keys:
        np.testing.assert_allclose(np.asarray(gpu[k], dtype=np.float64), np.asarray(cpu[k], dtype=np.float64),
                                   rtol=1e-4, atol=1e-5, err_msg=k)
    if name == "pbd_taffy":
        # Surface level 1 splits the edges longer than max_edge: an edge
        # within f32 rounding of it splits on one backend only (measured:
        # 536 against 535 vertices), so the counts agree to a few.
        assert abs(gpu["surface_vertices"] - cpu["surface_vertices"]) <= 0.02 * cpu["surface_vertices"]
        assert cpu["surface_vertices"] > cpu["surface_vertices_initial"]
        np.testing.assert_allclose(gpu["longest_edge_m"], cpu["longest_edge_m"], rtol=0.05)


def test_cut_scene_agrees_within_the_cut_kerf(tmp_path: Path) -> None:
    """pbd_cut: which particles next to a cut plane fall outside the capped
    surface (and are deleted) depends on the last bits of their positions,
    so the counts may differ by a few after the cut; the slices agree."""
    cpu = _metrics("pbd_cut", tmp_path, "cpu", frames=40)
    gpu = _metrics("pbd_cut", tmp_path, "gpu", frames=40)
    assert cpu["pieces"] == gpu["pieces"] == 4
    np.testing.assert_allclose(gpu["components"], cpu["components"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gpu["particles"], cpu["particles"], rtol=0.01)
    np.testing.assert_allclose(gpu["widest_gap_m"], cpu["widest_gap_m"], rtol=0.05, atol=0.01)


def test_dough_ends_split_and_closed_on_both(tmp_path: Path) -> None:
    """Over all four phases (4 s of rolling, folding and cutting with
    re-sampling and tearing) the backends' f32 roundings lead to different
    re-sampling and tearing choices, so the runs drift apart (the squeeze
    agrees, see above); both end split into closed pieces."""
    for b in ("cpu", "gpu"):
        m = _metrics("pbd_dough", tmp_path, b, frames=120)
        assert m["pieces"] >= 2 and m["surface_closed"], (b, m["pieces"])
