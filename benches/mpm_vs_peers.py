"""crumple's MPM solver against taichi and NVIDIA warp on the same scene.

The scene (``mpm_scene.CubeScene``): a fixed-corotated elastic cube, 8
particles per cell on a 64³ grid over the unit box, quadratic B-spline APIC /
MLS-MPM, thrown down onto the floor under gravity; about 100k and 500k
particles. Every framework gets the same particles, material, dt and step
count: a few warm-up steps (JIT compilation, first touch), then a measured
window. Each (framework, size) runs in its own subprocess, so thread pools
and JIT caches never share a process.

Threads: crumple ``RAYON_NUM_THREADS=2``; taichi ``cpu_max_num_threads=2``;
warp's CPU backend runs its kernels serially on one thread (it has no thread
setting). Each worker also reports its measured CPU utilisation (CPU seconds
÷ wall seconds over the window), the number of cores it actually kept busy.

Reported per size: particle-steps per second of each framework, the ratios
crumple/taichi and crumple/warp (> 1: crumple is faster), and a sanity check
that the cubes end at a similar height. A peer that cannot be imported or
run is reported as unavailable with the reason.

The crumple and peer solvers differ in two standard details, which is why the
height check has a tolerance: crumple applies the stress through ∇w (APIC)
and updates F with ∇v from ∇w, the peers use the MLS-MPM forms (stress and F
update through the affine matrix C).

Run: ``python benches/mpm_vs_peers.py`` (all) or ``--worker NAME --size KEY``
(one measurement, printed as a ``RESULT`` JSON line).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from _common import THREADS, import_crumple, ratio, run_worker, time_steps, unavailable, worker_main, write_json
from mpm_scene import CubeScene, height_stats

FRAMEWORKS = ("crumple", "taichi", "warp")

# Measurement windows sized so the whole comparison takes a few minutes on a
# 2-core machine (the slowest peer, single-threaded warp, dominates).
SIZES: dict[str, CubeScene] = {
    "100k": CubeScene(n_side=46, warmup=5, steps=150),  # 97,336 particles
    "500k": CubeScene(n_side=79, warmup=3, steps=40),  # 493,039 particles
}
WORKER_TIMEOUT_S = 420.0
# Mean final heights within this many cells of crumple's count as "the same scene".
HEIGHT_TOLERANCE_CELLS = 0.25

Stepper = tuple[Callable[[], None], Callable[[], npt.NDArray[Any]]]
# The worker's crumple Simulation, kept for its stage timings.
_CRUMPLE_SIM: list[Any] = []


def _build_crumple(scene: CubeScene) -> Stepper:
    """The scene in crumple: ``Simulation.add_solid`` with an ``ElasticMaterial``, f32, fixed steps."""
    cr = import_crumple()

    # transfer="mls": the peers run MLS-MPM (Hu et al. 2018), so crumple uses
    # the same force discretisation here; its default ("apic", the paper's
    # kernel-gradient forces) is measured by the cloth benchmark.
    sim = cr.mpm.Simulation(lower=(0, 0, 0), upper=(1, 1, 1), dx=scene.dx, gravity=(0, scene.gravity, 0),
                            kernel="quadratic", precision="f32", boundary_padding=scene.bound,
                            dt_max=scene.dt, transfer="mls")
    cube = sim.add_solid(scene.points(), cr.mpm.ElasticMaterial(
        density=scene.density, youngs_modulus=scene.youngs_modulus, poisson_ratio=scene.poisson_ratio),
        velocity=(0.0, scene.v0, 0.0), particle_volume=scene.p_vol)
    if sim.num_particles != scene.particles:
        raise RuntimeError(f"crumple made {sim.num_particles} particles, expected {scene.particles}")
    _CRUMPLE_SIM.append(sim)

    def step() -> None:
        sim.step(scene.dt)

    def positions() -> npt.NDArray[Any]:
        return np.asarray(cube.positions)

    return step, positions


def _crumple_stage_times() -> dict[str, float] | None:
    """Seconds per solver stage so far, where this build of crumple reports them."""
    if not _CRUMPLE_SIM:
        return None
    fn = getattr(_CRUMPLE_SIM[0]._s, "stage_times", None)
    return {str(k): float(v) for k, v in fn().items()} if fn is not None else None


def _build(name: str, scene: CubeScene) -> tuple[Stepper, dict[str, Any]]:
    """Set up ``name``'s solver; also return what it says about its version and threads."""
    if name == "crumple":
        stepper = _build_crumple(scene)
        cr = import_crumple()
        return stepper, {"version": cr.__version__, "threads": cr._core.num_threads(),
                         "threads_setting": f"RAYON_NUM_THREADS={os.environ.get('RAYON_NUM_THREADS')}"}
    if name == "taichi":
        import mpm_peer_taichi
        import taichi as ti  # type: ignore[import-untyped]

        stepper = mpm_peer_taichi.build(scene, THREADS)
        return stepper, {"version": ".".join(map(str, ti.__version__)), "threads": THREADS,
                         "threads_setting": f"ti.init(arch=ti.cpu, cpu_max_num_threads={THREADS})"}
    if name == "warp":
        import mpm_peer_warp
        import warp as wp

        stepper = mpm_peer_warp.build(scene)
        return stepper, {"version": wp.__version__, "threads": 1,
                         "threads_setting": "none: warp's CPU backend runs each launch serially on one thread"}
    raise ValueError(f"unknown framework {name!r}")


def measure(name: str, size: str) -> dict[str, Any]:
    """Run one framework on one size in this process and return its measurement.

    Throughput is over the whole measured window; the median step time is
    reported too, as it is less sensitive to other work on the machine.
    """
    scene = SIZES[size]
    t0 = time.perf_counter()
    try:
        (step, positions), info = _build(name, scene)
    except ImportError as e:
        return unavailable(f"cannot import: {e}")
    setup_s = time.perf_counter() - t0
    before: dict[str, Any] = {}

    def after_warmup() -> None:
        before["stages"] = _crumple_stage_times() if name == "crumple" else None
        before["load"] = os.getloadavg()[0]

    tm = time_steps(step, warmup=scene.warmup, steps=scene.steps, after_warmup=after_warmup)
    x = positions()
    out: dict[str, Any] = {
        "available": True,
        **info,
        "particles": scene.particles,
        "dt": scene.dt,
        "warmup_steps": scene.warmup,
        "measured_steps": scene.steps,
        "setup_s": setup_s,
        "warmup_s": tm.warmup_s,
        "measured_s": tm.wall_s,
        "s_per_step": tm.s_per_step,
        "median_s_per_step": tm.median_s_per_step,
        **tm.rates(scene.particles),
        "cpu_utilisation": tm.cpu_utilisation,
        "loadavg_1min": [before["load"], os.getloadavg()[0]],
        "finite": bool(np.isfinite(x).all()),
        "final": height_stats(x, scene.dx),
    }
    stages0 = before["stages"]
    if stages0 is not None:
        stages1 = _crumple_stage_times()
        if stages1 is not None:
            out["stage_ms_per_step"] = {k: 1e3 * (stages1[k] - stages0.get(k, 0.0)) / scene.steps for k in stages1}
    return out


def measure_in_worker(name: str, size: str) -> dict[str, Any]:
    """Measure ``name`` on ``size`` in a fresh subprocess; never raises."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name, "--size", size]
    return run_worker(cmd, timeout_s=WORKER_TIMEOUT_S, label=f"mpm_vs_peers: {name} {size}")


def height_check(results: dict[str, dict[str, Any]], dx: float) -> dict[str, Any]:
    """Compare each peer's final mean and min heights with crumple's (in cells)."""
    ref = results.get("crumple", {})
    out: dict[str, Any] = {"tolerance_cells": HEIGHT_TOLERANCE_CELLS}
    if not ref.get("available"):
        out["ok"] = None
        out["note"] = "crumple did not run"
        return out
    ok = True
    for name, r in results.items():
        if name == "crumple" or not r.get("available"):
            continue
        d_mean = (r["final"]["mean_y"] - ref["final"]["mean_y"]) / dx
        d_min = (r["final"]["min_y"] - ref["final"]["min_y"]) / dx
        same = bool(r["finite"]) and abs(d_mean) <= HEIGHT_TOLERANCE_CELLS
        out[name] = {"mean_y_diff_cells": d_mean, "min_y_diff_cells": d_min, "ok": same}
        ok = ok and same
    out["ok"] = ok and bool(ref["finite"])
    return out


def run() -> dict[str, Any]:
    """Every framework at every size, each in its own subprocess; the part of ``make bench``."""
    sizes: dict[str, Any] = {}
    for size, scene in SIZES.items():
        results = {name: measure_in_worker(name, size) for name in FRAMEWORKS}
        c = results["crumple"]
        sizes[size] = {
            "particles": scene.particles,
            "results": results,
            "particle_steps_per_s": {n: r.get("particle_steps_per_s") for n, r in results.items()},
            "crumple_over_taichi": ratio(c, results["taichi"], "particle_steps_per_s"),
            "crumple_over_warp": ratio(c, results["warp"], "particle_steps_per_s"),
            "height_check": height_check(results, scene.dx),
        }
    summary = {
        "scene": {k: s.describe() for k, s in SIZES.items()},
        "threads": THREADS,
        "note": ("ratios are throughput crumple / peer (> 1: crumple faster); warp's CPU backend is "
                 "single-threaded, see each result's cpu_utilisation for the cores actually used"),
        "sizes": sizes,
    }
    write_json("mpm_vs_peers", summary)
    return summary


def main() -> int:
    """CLI: the whole comparison, or one worker measurement with ``--worker``."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", choices=FRAMEWORKS, help="measure one framework in this process")
    ap.add_argument("--size", choices=tuple(SIZES), default="100k")
    args = ap.parse_args()
    if args.worker:
        return worker_main(lambda: measure(args.worker, args.size))
    print(json.dumps(run(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
