"""The paper's Table 1 replica for crumple.cloth (spec persistent_wrinkles §7.6, E11).

The twisting experiment: an open tube (radius 0.04 m, height 0.11 m, the
paper's "Cylindar" mesh scaled in resolution), bottom ring pinned, top ring
rotated about the axis; no collisions. Seconds per simulation step at about
2K, 7K and 27K vertices:

- with the friction and plasticity models on and off (the paper's rows), for
  each linear solver ("lagged": single-precision Cholesky-preconditioned CG,
  the default; "cholesky": exact sparse Cholesky every step; "cg":
  block-Jacobi CG), all to the same tolerance, so the fastest can be picked at
  equal accuracy;
- with self-collision on (proximity repulsion + the continuous-collision
  fail-safe), models on, default solver.

Each configuration runs in its own subprocess with ``RAYON_NUM_THREADS=2``:
a few warm-up steps, then the mean over the timed steps. The paper's numbers
(i7-12700H, 14 cores, MSVC/OpenMP/Eigen CG) are printed next to ours with the
speed-up ratio.

A peer measured in the same run: NVIDIA Newton (``newton==1.8.0`` on warp's
CPU device, one thread, in its own environment under ``bench-out/peers/``)
with its VBD and Style3D cloth solvers on the same scene at 2K and 27K
(``cloth_peer_newton.py``), the same warm-up and timed steps. Per size the
table gives Newton's seconds per step next to crumple's default configuration
(lagged solver, models on, no self-collision), their ratio, and each one's
twist ratio (the middle ring's turn over the top ring's after the timed
steps), so the speed can be read at equal accuracy. A peer that cannot be
installed or run is reported unavailable with the reason.

Writes ``bench-out/cloth_wrinkles.json``.

Run: ``python benches/cloth_wrinkles.py`` (all), ``--quick`` (2K and 7K only;
Newton at 2K), or ``--worker JSON`` (one crumple configuration).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from _common import (BENCHES, THREADS, crumple_info, import_crumple, peer_python, ratio, run_worker, time_steps,
                     worker_main, write_json)

WORKER_TIMEOUT_S = 900.0

# Paper Table 1 (spec §7.6): seconds per step, friction+plasticity on / off.
PAPER = {
    "2K": {"vertices": 1792, "on": 0.279, "off": 0.256},
    "7K": {"vertices": 7000, "on": 1.319, "off": 1.286},
    "27K": {"vertices": 27000, "on": 12.064, "off": 11.518},
}
# Tube resolutions (around × rings) giving about those vertex counts with the
# paper's aspect (the 2K mesh is 64 × 28).
SIZES = {"2K": (64, 27), "7K": (128, 54), "27K": (200, 136)}
# Timed steps per size (after WARMUP steps); the Newton peer runs the same counts,
# so both twist ratios are read at the same simulated time.
STEPS = {"2K": 40, "7K": 20, "27K": 10}
WARMUP = 3

# The twist scene (shared with the Newton peer, cloth_peer_newton.py): an open
# tube along +y centred at the origin, SI units.
RADIUS = 0.04
"""Tube radius, m."""
HEIGHT = 0.11
"""Tube height, m."""
DT = 1e-3
"""Step, s."""
TWIST_ANGLE = math.pi / 4
"""Turn of the top ring about +y, rad, reached after TWIST_DURATION."""
TWIST_DURATION = 1.0
"""s."""
# crumple's "cotton" preset as the Newton peer maps it (areal density kg/m², K N/m,
# bending J); the crumple worker checks these against the preset it runs.
COTTON = {"areal_density": 0.06, "k11": 50.0, "k22": 50.0, "k12": 0.2, "k33": 30.0,
          "bending": 5e-6, "bending_scale": 0.25}

# The cloth peer: NVIDIA Newton on warp's CPU device, in its own environment.
NEWTON_REQUIREMENTS = ["newton==1.8.0", "warp-lang==1.19.0"]
NEWTON_SOLVERS = ("vbd", "style3d")
NEWTON_SIZES = ("2K", "27K")


def twist_angle(t: float) -> float:
    """The top ring's prescribed turn at time ``t`` (s), rad."""
    return TWIST_ANGLE * min(max(t / TWIST_DURATION, 0.0), 1.0)


def twist_profile(x: npt.ArrayLike, rest: npt.ArrayLike, t: float) -> dict[str, Any]:
    """How far the twist has travelled down the tube at time ``t`` (s): the mean
    turn about +y (rad, right-handed) of the top ring, of the middle ring (ring
    ``n_along // 2`` counted from the bottom) and of the bottom ring, from rest
    positions ``rest`` to ``x`` (both ``(N, 3)``, rings grouped by rest height).
    ``mid_over_top`` is the accuracy proxy compared across solvers: the stiff
    cloth carries the turn into the tube, a solver that has not converged leaves
    the middle behind. None where the positions are not finite."""
    x64 = np.asarray(x, dtype=np.float64)
    x0 = np.asarray(rest, dtype=np.float64)
    out: dict[str, Any] = {"sim_time_s": t, "expected_top_angle_rad": twist_angle(t), "top_ring_angle_rad": None,
                           "mid_ring_angle_rad": None, "bottom_ring_angle_rad": None, "mid_over_top": None}
    if not np.all(np.isfinite(x64)):
        return out
    # Signed angle from (x0, z0) to (x, z) in the xz-plane: +θ for a right-handed turn about +y.
    turn = np.arctan2(x0[:, 2] * x64[:, 0] - x0[:, 0] * x64[:, 2], x0[:, 0] * x64[:, 0] + x0[:, 2] * x64[:, 2])
    _, ring = np.unique(np.round(x0[:, 1], 9), return_inverse=True)
    per_ring = np.bincount(ring, weights=turn) / np.bincount(ring)
    top, mid, bottom = float(per_ring[-1]), float(per_ring[(len(per_ring) - 1) // 2]), float(per_ring[0])
    out.update(top_ring_angle_rad=top, mid_ring_angle_rad=mid, bottom_ring_angle_rad=bottom,
               mid_over_top=mid / top if top != 0.0 else None)
    return out


def worker(cfg: dict[str, Any]) -> dict[str, Any]:
    """One crumple configuration ``cfg`` (size, solver, models, self_collision,
    warmup, steps) in this process: seconds per step and the twist reached."""
    cr = import_crumple()
    from crumple import cloth

    na, nl = SIZES[cfg["size"]]
    mesh = cr.geometry.cylinder_mesh(center=(0, 0, 0), axis=(0, 1, 0), radius=RADIUS, height=HEIGHT,
                                     n_around=na, n_along=nl, capped=False)
    wr = cloth.Wrinkles() if cfg["models"] else cloth.Wrinkles.off()
    sim = cloth.Simulation(dt=DT, linear_solver=cfg["solver"], self_collision=cfg["self_collision"])
    tube = sim.add_cloth(mesh, "cotton", wrinkles=wr)
    x = tube.positions
    rest = np.array(x, dtype=np.float64)
    tube.pin(np.flatnonzero(np.isclose(x[:, 1], x[:, 1].min())))
    # +π/4 over 1 s as in E3; the timed steps fall inside the twist.
    tube.rotate_handle(np.flatnonzero(np.isclose(x[:, 1], x[:, 1].max())), axis=(0, 1, 0), angle=TWIST_ANGLE,
                       duration=TWIST_DURATION, pivot=(0, 0.5 * HEIGHT, 0))
    stages: dict[str, float] = {}
    iters = [0]

    def tally() -> None:
        st = sim.stats()
        iters[0] += int(st["cg_iterations"])
        for k, v in st.items():
            if k.startswith("time_"):
                stages[k] = stages.get(k, 0.0) + float(v)

    tm = time_steps(sim.step, warmup=cfg["warmup"], steps=cfg["steps"], on_step=tally)
    n = cfg["steps"]
    pos = np.asarray(tube.positions)
    preset = cloth.Material.preset("cotton")
    return {**cfg, "vertices": mesh.num_vertices, "s_per_step": tm.s_per_step,
            "median_s_per_step": tm.median_s_per_step,
            "mean_cg_iterations": iters[0] / n,
            "stage_s_per_step": {k: v / n for k, v in stages.items()},
            "finite": bool(np.all(np.isfinite(pos))),
            "twist": twist_profile(pos, rest, (cfg["warmup"] + n) * DT),
            "cotton_matches_newton_mapping": all(isinstance(getattr(preset, k, None), (int, float))
                                                 and math.isclose(float(getattr(preset, k)), v)
                                                 for k, v in COTTON.items())}


def run_one(cfg: dict[str, Any]) -> dict[str, Any]:
    """``cfg`` measured in a fresh subprocess (2 rayon threads); never raises."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(cfg)]
    label = f"cloth_wrinkles: {cfg['size']} {cfg['solver']} models={cfg['models']} sc={cfg['self_collision']}"
    return {**cfg, **run_worker(cmd, timeout_s=WORKER_TIMEOUT_S, label=label)}


def run_newton(sizes: list[str]) -> dict[str, Any]:
    """The Newton peer on ``sizes`` (those of NEWTON_SIZES among them), each
    (size, solver) in its own process in the peer's environment; never raises."""
    py, reason = peer_python("newton", NEWTON_REQUIREMENTS)
    out: dict[str, Any] = {
        "requirements": NEWTON_REQUIREMENTS,
        "available": py is not None,
        "note": ("NVIDIA Newton on warp's CPU device: warp runs CPU kernels on one thread (crumple: "
                 f"{THREADS}). Same scene, steps and cotton mapped per solver (cloth_peer_newton.py); "
                 "default solver iterations; newton_over_crumple > 1: crumple faster per step. "
                 "Compare the twist ratios too: equal seconds per step is not equal accuracy."),
        "runs": [],
    }
    if py is None:
        out["reason"] = reason
        return out
    for size in (s for s in sizes if s in NEWTON_SIZES):
        for solver in NEWTON_SOLVERS:
            cfg = {"engine": "newton", "size": size, "solver": solver, "warmup": WARMUP, "steps": STEPS[size]}
            cmd = [py, str(BENCHES / "cloth_peer_newton.py"), "--solver", solver, "--size", size,
                   "--warmup", str(WARMUP), "--steps", str(STEPS[size])]
            r = {**cfg, **run_worker(cmd, timeout_s=WORKER_TIMEOUT_S, label=f"cloth_wrinkles: newton {solver} {size}")}
            out["runs"].append(r)
            print(json.dumps(r), file=sys.stderr)
    return out


def run(quick: bool = False) -> dict[str, Any]:
    """Every crumple configuration, then the Newton peer, at 2K and 7K (``quick``)
    or 2K, 7K and 27K (Newton: 2K and 27K); writes ``bench-out/cloth_wrinkles.json``."""
    sizes = ["2K", "7K"] if quick else ["2K", "7K", "27K"]
    rows = []
    for size in sizes:
        steps = STEPS[size]
        solvers = ["lagged", "cholesky", "cg"]
        for solver in solvers:
            for models in (True, False):
                cfg = {"size": size, "solver": solver, "models": models, "self_collision": False,
                       "warmup": WARMUP, "steps": steps}
                r = run_one(cfg)
                rows.append(r)
                print(json.dumps(r), file=sys.stderr)
        r = run_one({"size": size, "solver": "lagged", "models": True, "self_collision": True,
                     "warmup": WARMUP, "steps": steps})
        rows.append(r)
        print(json.dumps(r), file=sys.stderr)
    newton = run_newton(sizes)

    def run_of(size: str, solver: str, models: bool, sc: bool = False) -> dict[str, Any] | None:
        for r in rows:
            if (r["size"], r["solver"], r["models"], r["self_collision"]) == (size, solver, models, sc):
                return r
        return None

    def find(size: str, solver: str, models: bool, sc: bool = False) -> float | None:
        r = run_of(size, solver, models, sc)
        return r.get("s_per_step") if r else None

    def model_stage_cost(size: str) -> float | None:
        # The wrinkle models run in the element stage only; its time with the
        # models on minus off, over the whole step with them on, is their own
        # cost. The whole-step ratio also carries the solver's run-to-run
        # noise (the on and off runs follow different trajectories).
        on, off = run_of(size, "lagged", True), run_of(size, "lagged", False)
        if not on or not off or "stage_s_per_step" not in on or "stage_s_per_step" not in off:
            return None
        extra = on["stage_s_per_step"]["time_elements"] - off["stage_s_per_step"]["time_elements"]
        return float(extra / on["s_per_step"])

    def mid_over_top(r: dict[str, Any] | None) -> float | None:
        twist = r.get("twist") if r else None
        return twist.get("mid_over_top") if isinstance(twist, dict) else None

    def newton_run(size: str, solver: str) -> dict[str, Any] | None:
        return next((r for r in newton["runs"] if (r["size"], r["solver"]) == (size, solver)), None)

    table = []
    for size in sizes:
        on, off = find(size, "lagged", True), find(size, "lagged", False)
        default = run_of(size, "lagged", True)  # the default configuration: the peer's reference
        peer: dict[str, Any] = {"twist_mid_over_top": mid_over_top(default)}
        for solver in NEWTON_SOLVERS:
            nr = newton_run(size, solver)
            peer[f"newton_{solver}_s_per_step"] = nr.get("s_per_step") if nr else None
            peer[f"newton_{solver}_over_crumple"] = ratio(nr, default, "s_per_step") if nr and default else None
            peer[f"newton_{solver}_twist_mid_over_top"] = mid_over_top(nr)
        best = min((s for s in (find(size, sv, True) for sv in ("lagged", "cholesky", "cg")) if s), default=None)
        table.append({
            "size": size,
            "vertices": next((r["vertices"] for r in rows if r["size"] == size and "vertices" in r), None),
            "s_per_step_models_on": on,
            "s_per_step_models_off": off,
            "model_overhead": (on / off - 1.0) if on and off else None,
            "model_element_stage_fraction": model_stage_cost(size),
            "s_per_step_self_collision": find(size, "lagged", True, True),
            "s_per_step_cholesky_on": find(size, "cholesky", True),
            "s_per_step_cg_on": find(size, "cg", True),
            "fastest_solver_s_per_step": best,
            "paper_s_per_step_on": PAPER[size]["on"],
            "paper_s_per_step_off": PAPER[size]["off"],
            "speedup_vs_paper_on": (PAPER[size]["on"] / on) if on else None,
            **peer,
        })
    result = {"threads": THREADS, "crumple_version": crumple_info(gpu=False)["version"], "table": table,
              "runs": rows, "peers": {"newton": newton},
              "note": ("paper: i7-12700H 14 cores; ours: 2 threads on this machine. twist_mid_over_top: the "
                       "middle ring's turn over the top ring's after the timed steps (accuracy proxy); "
                       "newton_*: see peers.newton.note")}
    write_json("cloth_wrinkles", result)
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", help="run one configuration (JSON) and print its result")
    ap.add_argument("--quick", action="store_true", help="2K and 7K only")
    a = ap.parse_args()
    if a.worker:
        cfg = json.loads(a.worker)
        return worker_main(lambda: worker(cfg))
    res = run(quick=a.quick)
    for row in res["table"]:
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
