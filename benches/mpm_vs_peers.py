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
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mpm_scene import CubeScene, height_stats

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench-out"
THREADS = 2
FRAMEWORKS = ("crumple", "taichi", "warp")
RESULT_TAG = "RESULT "

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
    sys.path.insert(0, str(ROOT / "python"))
    import crumple as cr

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
        import crumple as cr

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


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process, all threads."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


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
        return {"available": False, "reason": f"cannot import: {e}"}
    setup_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(scene.warmup):
        step()
    warmup_s = time.perf_counter() - t0
    stages0 = _crumple_stage_times() if name == "crumple" else None
    load0 = os.getloadavg()[0]
    per_step: list[float] = []
    cpu0, t0 = _cpu_seconds(), time.perf_counter()
    for _ in range(scene.steps):
        ts = time.perf_counter()
        step()
        per_step.append(time.perf_counter() - ts)
    wall = time.perf_counter() - t0
    cpu = _cpu_seconds() - cpu0
    x = positions()
    median = float(np.median(per_step))
    out: dict[str, Any] = {
        "available": True,
        **info,
        "particles": scene.particles,
        "dt": scene.dt,
        "warmup_steps": scene.warmup,
        "measured_steps": scene.steps,
        "setup_s": setup_s,
        "warmup_s": warmup_s,
        "measured_s": wall,
        "s_per_step": wall / scene.steps,
        "median_s_per_step": median,
        "particle_steps_per_s": scene.particles * scene.steps / wall,
        "median_particle_steps_per_s": scene.particles / median,
        "cpu_utilisation": cpu / wall,
        # Work per CPU-second: steadier than wall-clock rates when other jobs share the cores.
        "particle_steps_per_cpu_s": scene.particles * scene.steps / cpu,
        "loadavg_1min": [load0, os.getloadavg()[0]],
        "finite": bool(np.isfinite(x).all()),
        "final": height_stats(x, scene.dx),
    }
    if stages0 is not None:
        stages1 = _crumple_stage_times()
        if stages1 is not None:
            out["stage_ms_per_step"] = {k: 1e3 * (stages1[k] - stages0.get(k, 0.0)) / scene.steps for k in stages1}
    return out


def _worker_env() -> dict[str, str]:
    """Environment of a worker: 2 threads, and the benches and package folders importable."""
    env = dict(os.environ)
    env["RAYON_NUM_THREADS"] = str(THREADS)
    env["OMP_NUM_THREADS"] = str(THREADS)
    env["OPENBLAS_NUM_THREADS"] = "1"  # numpy's BLAS pool only idles here; keep it off the 2 cores
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "benches"), str(ROOT / "python")] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.setdefault("TI_LOG_LEVEL", "warn")
    return env


def run_worker(name: str, size: str) -> dict[str, Any]:
    """Measure ``name`` on ``size`` in a fresh subprocess; never raises."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name, "--size", size]
    print(f"+ mpm_vs_peers: {name} {size}", file=sys.stderr, flush=True)
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=_worker_env(), capture_output=True, text=True,
                              timeout=WORKER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"available": False, "reason": f"did not finish within {WORKER_TIMEOUT_S:.0f} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_TAG):
            result: dict[str, Any] = json.loads(line[len(RESULT_TAG):])
            return result
    tail = (proc.stderr.strip().splitlines() or proc.stdout.strip().splitlines() or ["no output"])[-1]
    return {"available": False, "reason": f"worker exited with status {proc.returncode}: {tail}"}


def _ratio(a: dict[str, Any], b: dict[str, Any]) -> float | None:
    """Throughput of ``a`` over ``b``, or None unless both ran."""
    if a.get("available") and b.get("available"):
        return float(a["particle_steps_per_s"]) / float(b["particle_steps_per_s"])
    return None


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
        results = {name: run_worker(name, size) for name in FRAMEWORKS}
        c = results["crumple"]
        sizes[size] = {
            "particles": scene.particles,
            "results": results,
            "particle_steps_per_s": {n: r.get("particle_steps_per_s") for n, r in results.items()},
            "crumple_over_taichi": _ratio(c, results["taichi"]),
            "crumple_over_warp": _ratio(c, results["warp"]),
            "height_check": height_check(results, scene.dx),
        }
    summary = {
        "scene": {k: s.describe() for k, s in SIZES.items()},
        "threads": THREADS,
        "note": ("ratios are throughput crumple / peer (> 1: crumple faster); warp's CPU backend is "
                 "single-threaded, see each result's cpu_utilisation for the cores actually used"),
        "sizes": sizes,
    }
    OUT.mkdir(exist_ok=True)
    (OUT / "mpm_vs_peers.json").write_text(json.dumps(summary, indent=2))
    return summary


def main() -> int:
    """CLI: the whole comparison, or one worker measurement with ``--worker``."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", choices=FRAMEWORKS, help="measure one framework in this process")
    ap.add_argument("--size", choices=tuple(SIZES), default="100k")
    args = ap.parse_args()
    if args.worker:
        try:
            result = measure(args.worker, args.size)
        except Exception as e:  # a peer that fails to run is reported, not fatal
            result = {"available": False, "reason": f"{type(e).__name__}: {e}"}
        print(RESULT_TAG + json.dumps(result), flush=True)
        return 0
    print(json.dumps(run(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
