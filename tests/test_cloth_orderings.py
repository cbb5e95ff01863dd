"""Orderings of spec persistent_wrinkles.md §8 that test_cloth_scenes.py and
test_cloth_experiments.py did not assert, or asserted only in a weaker form:
E2's stretch-recovery orderings, E4's torque smoothness, E9's Dahl baseline
(immediate and held bit-identical) and E10's knee orderings. The strict
form of E7's held > immediate is in test_cloth_scenes.py.

Each test runs its experiment small (coarse mesh, shortened phases) and
prints the figures it compares (``pytest -s`` shows them). The numbers in
the docstrings were measured on a 2-core machine, as were the run times.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import crumple as cr
from crumple import cloth


def _scene(name: str, out: Path, scale: float, **options: Any) -> dict[str, Any]:
    """Run scene ``name`` into ``out`` (frames only at the start and end) and
    return its metrics.json."""
    d = cr.scenes.run(name, out_dir=out, scale=scale, frames=1, **options)
    return json.loads((d / "metrics.json").read_text())


# -- E2: recovery from the stretch ---------------------------------------------------------


def test_e2_stretch_recovers_friction_folds_not_plastic_ones(tmp_path: Path) -> None:
    """Spec E2: after the release the strip is pulled to 1 % strain, released
    and settled; R = (θ_c,before − θ_c,after)/θ_c,before. The spec asks
    R(friction, immediate) > R(friction, held), R(friction, immediate) >
    R(plastic, immediate) and R(plastic, held), and plastic R < 0.1.

    wrinkle_strip, cotton, friction Φ = 1.0 rad / plastic Φ = 2.6 rad, 20 mm
    grid (102 vertices), 0.5 s load, 0.5 s stretch, settles ≤ 8 s (kinetic
    damping; all four runs settle to KE/m < 1e-7 before that). Measured R:
    friction 0.736 (immediate) / 0.003 (held), plastic 0.035 / 0.005.

    Not asserted because it does not hold: R(friction, held) > R(plastic):
    the 500 s dwell raises the stick threshold to ≈ 1.7 rad, so the 1 %
    stretch moves the held friction fold no more than a plastic one
    (0.003 against 0.035 and 0.005). ~30 s.
    """
    t0 = time.perf_counter()
    R: dict[tuple[str, str], float] = {}
    for mode in ("friction", "plastic"):
        for hold in ("immediate", "held"):
            m = _scene("wrinkle_strip", tmp_path / f"{mode}_{hold}", 0.25, mode=mode, hold=hold, load_time=0.5,
                       settle=8.0, stretch_time=0.5)
            assert m["settle"]["settled"] and m["settle_after_stretch"]["settled"], (mode, hold)
            R[mode, hold] = m["recovery_R"]
            print(f"E2 {mode:8s} {hold:9s}: theta_c {m['theta_c']:.4f} -> {m['theta_c_after_stretch']:.4f} rad "
                  f"after the stretch, R = {R[mode, hold]:.4f}")
    print(f"E2: {time.perf_counter() - t0:.1f} s")
    assert R["friction", "immediate"] > R["friction", "held"]
    for hold in ("immediate", "held"):
        assert R["friction", "immediate"] > R["plastic", hold], hold
        assert R["plastic", hold] < 0.1, hold


# -- E4: reaction torque of a 5° twist ----------------------------------------------------

FRICTION_ONLY = cloth.Wrinkles(bend_friction="dwell", bend_plasticity=False, tensile_friction=True,
                               tensile_plasticity=False)


def _twist_torque(dt: float, wrinkles: cloth.Wrinkles) -> npt.NDArray[np.float64]:
    """Spec E4: the E3 tube (r = 0.04 m, h = 0.11 m; 32 × 15 rings here,
    rest = the tube's own angles as in cylinder_twist, gravity on, cotton),
    bottom ring pinned, top ring turned by 5° about the axis over 1 s, then
    held for 0.5 s. Returns the torque about the axis of the handle springs
    on the top ring, Σ (x × f_handle)_y (N·m), after every step."""
    height = 0.11
    mesh = cr.geometry.cylinder_mesh(center=(0.0, height / 2, 0.0), axis=(0.0, 1.0, 0.0), radius=0.04,
                                     height=height, n_around=32, n_along=14, capped=False)
    sim = cloth.Simulation(dt=dt, self_collision=False)
    c = sim.add_cloth(mesh, "cotton", wrinkles=wrinkles, init_rest_from_mesh=True)
    y = c.positions[:, 1]
    top = np.flatnonzero(np.isclose(y, y.max()))
    c.pin(np.flatnonzero(np.isclose(y, y.min())))
    c.add_handle(top, times=[0.0, 1.0], rotations=[np.eye(3), cr.colliders.rotation((0.0, 1.0, 0.0), 5.0)],
                 pivot=(0.0, height, 0.0))
    torque = []
    for _ in range(int(round(1.5 / dt))):
        sim.step()
        f, x = c.pin_forces[top], c.positions[top]
        torque.append(float(np.sum(x[:, 2] * f[:, 0] - x[:, 0] * f[:, 2])))
    return np.asarray(torque)


def _roughness(torque: npt.NDArray[np.float64]) -> float:
    """Spec E4's smoothness figure: max |second difference| / torque range."""
    return float(np.abs(np.diff(torque, 2)).max() / (torque.max() - torque.min()))


def test_e4_torque_is_smooth_at_1ms() -> None:
    """Spec E4: with h = 1e-3 the reaction torque of the 5° twist (bending and
    tensile friction on, plasticity off) is smooth: max |second difference|
    < 5 % of the torque range; so is the elastic-only torque. Measured:
    0.93 % (friction, range 4.3e-3 N·m) and 1.5 % (elastic, 2.5e-3 N·m);
    both maxima are the kink where the twist stops (the elastic tube also
    buckles at 2.7°: its torque falls by 53 % over 21 steps, second
    differences ≤ 1.0 % of the range). Friction at h = 1e-2,
    where the spec allows spikes, is printed only (measured 1.3 %: no spike
    at this size). ~9 s."""
    t0 = time.perf_counter()
    rough = {}
    for name, wr, dt in (("friction", FRICTION_ONLY, 1e-3), ("elastic", cloth.Wrinkles.off(), 1e-3),
                         ("friction", FRICTION_ONLY, 1e-2)):
        tq = _twist_torque(dt, wr)
        rough[name, dt] = _roughness(tq)
        print(f"E4 {name:8s} h={dt:g}: max|d2| / range = {rough[name, dt]:.4f} (range {np.ptp(tq):.3e} N·m, "
              f"final {tq[-1]:.3e} N·m)")
    print(f"E4: {time.perf_counter() - t0:.1f} s")
    assert rough["friction", 1e-3] < 0.05
    assert rough["elastic", 1e-3] < 0.05


@pytest.mark.xfail(strict=True, reason=(
    "spec E4 says the elastic-only torque is smooth at h = 1e-2 too, but the elastic tube buckles in torsion "
    "during the 5° twist (at 3.5° with h = 1e-2, 2.7° with h = 1e-3; radial deviation 2e-5 → 4.5e-3 m, hinge "
    "angles change by 0.46 rad): at h = 1e-2 the torque falls by 47 % within 7 steps, max |second difference| "
    "= 6.4 % of the range at 32 × 15 rings (8.5 % with the exact Cholesky solver, 7.4 % at the paper's 64 × 28), "
    "against < 5 %. At h = 1e-3 the buckle takes 21 steps (falls by 53 %) and its largest second difference "
    "is 1.0 % of the range."))
def test_e4_elastic_torque_is_smooth_at_10ms() -> None:
    """Spec E4: the elastic-only torque (every wrinkle element off) is smooth
    at h = 1e-2 as well: max |second difference| < 5 % of the torque range.
    It is not at this or the paper's size (see the xfail reason). ~1 s."""
    tq = _twist_torque(1e-2, cloth.Wrinkles.off())
    r = _roughness(tq)
    print(f"E4 elastic h=0.01: max|d2| / range = {r:.4f} at step {int(np.argmax(np.abs(np.diff(tq, 2)))) + 1} "
          f"(range {np.ptp(tq):.3e} N·m)")
    assert r < 0.05


# -- E9: the Dahl baseline ignores the hold ----------------------------------------------------


def _container_a(out: Path, hold: str, dahl: bool) -> dict[str, Any]:
    """E8 (a) (crumple_in_container, plate=False: the hold is in the
    container) at scale 0.35 (8 × 15 = 120 vertices), settle ≤ 0.5 s, with
    the Dahl baseline (bending friction "dahl", plasticity off) or ours.
    Returns metrics.json."""
    opts: dict[str, Any] = dict(bend_friction="dahl", bend_plasticity=False) if dahl else {}
    m = _scene("crumple_in_container", out, 0.35, plate=False, hold=hold, settle=0.5, **opts)
    assert m["protocol"]["bend_friction"] == ("dahl" if dahl else "dwell")
    assert m["protocol"]["bend_plasticity"] is not dahl
    return m


def test_e9_dahl_ignores_the_hold_ours_does_not(tmp_path: Path) -> None:
    """Spec E9: E8 (a) with the bending friction replaced by the Dahl model
    (plasticity off) gives bit-identical immediate and held results (Dahl has
    no clock; the held run only warps clocks nothing reads), while ours
    (dwell friction + plasticity) differs. Compares a hash of the final
    positions (float64 bits) and every metric of metrics.json.
    Measured: Dahl M_sharp 0.2912 both; ours 0.365 (immediate) vs 0.683
    (held), positions up to 37 mm apart. ~31 s."""
    t0 = time.perf_counter()
    runs = {(dahl, hold): _container_a(tmp_path / f"{dahl}_{hold}", hold, dahl)
            for dahl in (True, False) for hold in ("immediate", "held")}
    keys = ("metrics", "metrics_pile", "pile_height_m", "settle", "steps", "positions_sha")
    for dahl in (True, False):
        mi, mh = runs[dahl, "immediate"], runs[dahl, "held"]
        print(f"E9 {'Dahl' if dahl else 'ours'}: M_sharp {mi['M_sharp']:.4f} (immediate) vs {mh['M_sharp']:.4f} "
              f"(held); final positions {'equal' if mi['positions_sha'] == mh['positions_sha'] else 'differ'}")
        assert mi["steps"] == mh["steps"]  # the same protocol: only the clocks differ (§8)
    print(f"E9: {time.perf_counter() - t0:.1f} s")
    mi, mh = runs[True, "immediate"], runs[True, "held"]
    assert {k: mi[k] for k in keys} == {k: mh[k] for k in keys}  # bit-identical final positions and metrics
    mi, mh = runs[False, "immediate"], runs[False, "held"]
    assert mi["positions_sha"] != mh["positions_sha"]
    assert mi["metrics"] != mh["metrics"]


# -- E10: the knee ----------------------------------------------------------------------------

KNEE_MATERIALS = ("trouser_cotton", "trouser_denim", "trouser_polyester")


@pytest.fixture(scope="module")
def knee(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], dict[str, Any]]:
    """knee_bend (E10-like) at scale 0.5 (15 × 21 = 315 vertices, self-collision
    on), 90° bend over 0.5 s, held short (immediate) or 500 s, straightened
    over 0.5 s, settle ≤ 2 s (every run settles before that: at 0.5 s none
    has, and the unsettled short polyester leg still showed a sharper knee
    than cotton's). Table 3 presets. ~65 s for the six runs."""
    root = tmp_path_factory.mktemp("knee")
    t0 = time.perf_counter()
    out = {}
    for mat in KNEE_MATERIALS:
        for hold in ("immediate", "held"):
            m = _scene("knee_bend", root / f"{mat}_{hold}", 0.5, material=mat, hold=hold, bend_time=0.5, settle=2.0)
            assert m["settle"]["settled"], (mat, hold)
            out[mat, hold] = m
            print(f"E10 {mat:17s} {hold:9s}: knee M_sharp {m['knee_M_sharp']:.4f} (bent "
                  f"{m['knee_metrics_bent']['M_sharp']:.3f}), knee M_anchor {m['knee_metrics']['M_anchor']:.4f}, "
                  f"M_plastic {m['knee_metrics']['M_plastic']:.4f} rad")
    print(f"E10: {time.perf_counter() - t0:.1f} s")
    return out


def test_e10_knee_held_is_sharper_than_short(knee: dict[tuple[str, str], dict[str, Any]]) -> None:
    """Spec E10: knee-region M_sharp held (500 s) > short, for the fabrics
    with memory (Table 3 cotton and denim). Measured: cotton 0.648 vs 0.534,
    denim 0.880 vs 0.632 rad. Polyester (ε0 = ε∞: no dwell; εY0 = 3.1 rad)
    barely remembers: 0.431 vs 0.436, printed only. (The leg's rest shape
    is flat, so an untouched tube already has M_sharp ≈ 2π/15 = 0.42 rad.)"""
    for mat in ("trouser_cotton", "trouser_denim"):
        assert knee[mat, "held"]["knee_M_sharp"] > knee[mat, "immediate"]["knee_M_sharp"], mat


def test_e10_denim_and_cotton_crease_more_than_polyester(knee: dict[tuple[str, str], dict[str, Any]]) -> None:
    """Spec E10: knee-region M_sharp Denim > Polyester and Cotton > Polyester,
    held and short. Measured held: denim 0.880, cotton 0.648, polyester
    0.431; short: 0.632, 0.534, 0.436 rad. (The spec's "sit > lift" needs a
    sitting pose that knee_bend cannot make: it only bends the knee.)"""
    for hold in ("immediate", "held"):
        poly = knee["trouser_polyester", hold]["knee_M_sharp"]
        for mat in ("trouser_denim", "trouser_cotton"):
            assert knee[mat, hold]["knee_M_sharp"] > poly, (mat, hold)
