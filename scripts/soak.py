"""Soak test (issue 17, not in ``make test``): every built-in scene, then its
simulation continued from the scene's checkpoint for 10,000 more steps,
checking every 100 steps that the state is finite and that the energy stays
bounded.

Before the continuation every kinematic driver is stopped where it is
(colliders made static, EOL wires, points and pins given zero velocity, MPM
pin targets held at their current place; cloth and PBD pin targets hold
still between updates anyway, and the scenes' cloth handles end on a held
keyframe): a scene's scripted motion ends
with its protocol, and a driver left moving on its last velocity (a turning
clamp, a rising wire) would carry the objects out of any bound.

The energy checked is the kinetic plus the gravitational potential energy,
E = KE − Σ mᵢ g·xᵢ. With the drivers stopped nothing adds energy, but the
elastic energy a scene leaves stored (a block squeezed by blades, a wrung
cloth) comes back as motion after the drivers stop, and E does not count
it. So the bound is set after a settling window of 1,000 steps: E(t) ≤
max(E over the window) + 0.1 (|E(0)| + M |g| L), L the objects'
bounding-box diagonal at the start; a solver that gains energy keeps
rising past it, a released spring does not. A step that raises (SimulationDiverged,
SolverError) fails the scene.

    .venv/bin/python scripts/soak.py [--steps 10000] [--scale 0.5] [--only NAME ...] [--out out/soak]

Prints one row per scene and writes ``OUT/soak.json``; exits 1 when a scene
failed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

import crumple as cr
from crumple import scenes

#: Steps after the drivers stop in which stored elastic energy may come back as motion.
WINDOW = 1000
MODULES = {"mpm": cr.mpm.Simulation, "cloth": cr.cloth.Simulation, "pbd": cr.pbd.Simulation,
           "eol": cr.eol.Simulation}


def _gravity(sim: Any) -> np.ndarray:
    params = getattr(sim, "_params", None)
    g = params.get("gravity") if isinstance(params, dict) else None
    if g is None:
        g = getattr(sim, "gravity", (0.0, -9.81, 0.0))
    return np.asarray(g, dtype=np.float64)


def _masses(o: Any, total: float | None, count: int) -> np.ndarray:
    m = getattr(o, "masses", None)
    if m is not None:
        return np.asarray(m, dtype=np.float64)
    # MPM particles: the simulation's mass spread evenly (a soak bound, not a measurement).
    return np.full(count, (total or 0.0) / max(count, 1))


def _energy(sim: Any) -> tuple[float, float, float, bool]:
    """(E, M, L, finite): kinetic + gravitational energy (J), mass (kg),
    bounding-box diagonal (m) of every object."""
    g = _gravity(sim)
    xs = [np.asarray(o.positions, dtype=np.float64) for o in sim.objects]
    n = sum(len(x) for x in xs)
    total = sim.total_mass() if hasattr(sim, "total_mass") else None
    pe, mass = 0.0, 0.0
    finite = all(np.isfinite(x).all() for x in xs)
    for o, x in zip(sim.objects, xs, strict=True):
        m = _masses(o, total * len(x) / max(n, 1) if total is not None else None, len(x))
        pe -= float((m[:, None] * x * g).sum())
        mass += float(m.sum())
    ke = float(sim.kinetic_energy())
    allx = np.concatenate(xs) if xs else np.zeros((0, 3))
    diag = float(np.linalg.norm(np.ptp(allx, axis=0))) if len(allx) else 0.0
    return ke + pe, mass, diag, finite and np.isfinite(ke)


def _hold_mpm_pins(path: Path) -> None:
    """MPM pins move on with their target velocity (rows: vertex, x0, v,
    t0): hold each where it is at the saved time."""
    arrays, meta = cr.io.load_checkpoint(path)
    pins = arrays.get("state_pins")
    if pins is None or len(pins) == 0:
        return
    t = float(np.asarray(arrays["state_time"]))
    pins = np.array(pins, dtype=np.float64)
    pins[:, 1:4] += pins[:, 4:7] * (t - pins[:, 7:8])
    pins[:, 4:7] = 0.0
    pins[:, 7] = t
    arrays["state_pins"] = pins
    cr.io.save_checkpoint(path, arrays, meta)


def _stop_drivers(sim: Any) -> None:
    for c in sim.colliders:
        c.set_static()
    if isinstance(sim, cr.eol.Simulation):
        if len(sim.wires):
            sim.set_wire_velocity(list(range(len(sim.wires))), (0.0, 0.0, 0.0))
        if len(sim.points):
            sim.set_point_velocity(list(range(len(sim.points))), (0.0, 0.0, 0.0))
    for o in sim.objects:
        pinned = getattr(o, "pinned", None)
        if pinned is not None and len(pinned) and isinstance(sim, cr.eol.Simulation):
            o.set_pin_targets(pinned, o.positions[pinned])


def soak(name: str, steps: int, scale: float, out: Path) -> dict[str, Any]:
    row: dict[str, Any] = {"scene": name, "scale": scale}
    t0 = time.perf_counter()
    try:
        folder = scenes.run(name, out_dir=out, scale=scale, backend="cpu", checkpoint=True)
        ckpt = folder / "checkpoint.npz"
        solver = cr.io.load_checkpoint(ckpt)[1]["solver"]
        if solver == "mpm":
            _hold_mpm_pins(ckpt)
        sim = MODULES[solver].load(ckpt)
        _stop_drivers(sim)
        row.update(module=solver, scene_steps=int(sim.step_count), scene_s=time.perf_counter() - t0)
        end = sim.step_count + steps
        e0, mass, diag, finite = _energy(sim)
        slack = 0.1 * (abs(e0) + mass * float(np.linalg.norm(_gravity(sim))) * diag) + 1e-9
        window_end = sim.step_count + WINDOW
        window_max, worst = e0, e0
        t1 = time.perf_counter()
        row["steps"] = int(sim.step_count)
        while sim.step_count < end and finite:
            for _ in range(min(100, end - sim.step_count)):
                sim.step()
            e, _, _, finite = _energy(sim)
            if sim.step_count <= window_end:
                window_max = max(window_max, e)
            else:
                worst = max(worst, e)
            row["steps"] = int(sim.step_count)
        bound = window_max + slack
        row.update(steps=int(sim.step_count), soak_steps=int(sim.step_count) - row["scene_steps"],
                   soak_s=time.perf_counter() - t1, finite=bool(finite),
                   energy_start_j=e0, energy_window_max_j=window_max, energy_max_j=worst,
                   energy_bound_j=bound, energy_rise_j=worst - e0, bounded=bool(worst <= bound),
                   status="ok" if finite and worst <= bound else "failed")
    except Exception as e:  # a failed scene is a row, the soak goes on
        row.update(status="failed", error=f"{type(e).__name__}: {e}", traceback=traceback.format_exc(limit=6))
    row["wall_s"] = time.perf_counter() - t0
    return row


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=10_000)
    p.add_argument("--scale", type=float, default=0.5, help="the scenes' size knob (1 = their default)")
    p.add_argument("--only", nargs="*", default=None, metavar="NAME")
    p.add_argument("--out", default="out/soak")
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in args.only or scenes.names():
        r = soak(name, args.steps, args.scale, out)
        rows.append(r)
        print(f"{name:24s} {r.get('module', '?'):6s} {r['status']:7s} scene {r.get('scene_steps', '-')!s:>6} "
              f"+ soak {r.get('soak_steps', '-')!s:>6} steps "
              f"E0 {r.get('energy_start_j', float('nan')):11.4g} J  rise {r.get('energy_rise_j', float('nan')):10.3g} J"
              f"  bound {r.get('energy_bound_j', float('nan')):11.4g} J  {r['wall_s']:7.1f} s"
              + (f"  {r['error']}" if "error" in r else ""), flush=True)
        (out / "soak.json").write_text(json.dumps(rows, indent=1, default=float))
    failed = [r["scene"] for r in rows if r["status"] != "ok"]
    print(f"{len(rows)} scenes, {len(failed)} failed" + (f": {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
