"""Cloth throughput of crumple's MPM solver next to the paper's Table 2.

Two scenes at about 100k triangles (a 224×224-quad grid mesh, 0.8 m square,
with the grid spacing dx equal to the mesh edge length, as in the paper):

- ``cloth_on_sphere``: a horizontal sheet dropped onto a fixed sphere
  (the paper's Cloth & Ball, Fig. 3; its Table 1 material and damping);
- ``curtain_ball``: a hanging curtain, top edge pinned, hit by a moving ball
  (the paper's Cloth Curtain, Fig. 14; its Table 1 material and damping).

Each runs in its own subprocess with ``RAYON_NUM_THREADS=2`` and fixed steps
of the paper's Δt_max. Reported: particle-steps per second (an MPM cloth has
one particle per vertex and one per triangle), the rate per thread, and bytes
per particle (the process's peak resident set after setup and a few steps,
minus its resident set before the mesh was built, over the particle count),
next to the paper's figures for the matching scene.

Run: ``python benches/mpm_cloth.py`` (all) or ``--worker SCENE``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from _common import THREADS, import_crumple, ratio, run_worker, time_steps, worker_main, write_json

WORKER_TIMEOUT_S = 300.0

# Paper Table 2 (spec mpm_anisotropic.md §6.2): Intel Xeon E5-2690 v2, 19 threads, CPU only;
# memory measured at the end of frame 1. The spec's derived anchors assume 24 frames/s and
# Δt = Δt_max (the paper states neither), so the paper's throughput below is a lower bound.
PAPER_THREADS = 19
PAPER_ASSUMED_FPS = 24.0
PAPER_TABLE2: dict[str, dict[str, float]] = {
    # Cloth Curtain (Fig. 14): 120 s/frame, 1.78M triangles, 2.67M particles, 2.36 GB.
    "Cloth Curtain (Fig 14)": {"s_per_frame": 120.0, "elements": 1.78e6, "particles": 2.67e6,
                               "dt_max": 7e-5, "dx": 2.2e-3, "mem_gb": 2.36},
    # Cloth & Ball (Fig. 3): 86 s/frame, 2.00M triangles, 3.00M particles, 2.66 GB.
    "Cloth & Ball (Fig 3)": {"s_per_frame": 86.0, "elements": 2.00e6, "particles": 3.00e6,
                             "dt_max": 1e-4, "dx": 1.5e-3, "mem_gb": 2.66},
}


def paper_anchor(name: str) -> dict[str, float]:
    """Table 2's row ``name`` with the spec's derived throughput (§6.2): steps/frame ≥
    (1/24 s)/Δt_max, particle-steps/s ≥ particles / (s/frame ÷ steps/frame), per thread ÷ 19,
    bytes/particle = memory / particles."""
    row = PAPER_TABLE2[name]
    steps_per_frame = round(1.0 / PAPER_ASSUMED_FPS / row["dt_max"])
    s_per_step = row["s_per_frame"] / steps_per_frame
    rate = row["particles"] / s_per_step
    return {**row, "threads": PAPER_THREADS, "steps_per_frame_min": steps_per_frame,
            "s_per_step_max": s_per_step, "particle_steps_per_s_min": rate,
            "particle_steps_per_s_per_thread_min": rate / PAPER_THREADS,
            "bytes_per_particle": row["mem_gb"] * 1e9 / row["particles"]}


@dataclass(frozen=True)
class ClothScene:
    """One cloth benchmark scene (SI units)."""

    name: str
    paper: str
    """The Table 2 row it is compared with."""
    preset: str
    """``ClothMaterial`` preset (paper Table 1)."""
    damping: float
    """ν_d (paper Table 1)."""
    dt: float
    """Fixed step, s: the paper's Δt_max for the scene."""
    quads: int = 224
    """Quads per side of the grid mesh (2·quads² triangles)."""
    size: float = 0.8
    """Side of the square sheet, m."""
    warmup: int = 3
    steps: int = 40

    @property
    def dx(self) -> float:
        """Grid spacing, m: the mesh edge length."""
        return self.size / self.quads


SCENES: dict[str, ClothScene] = {
    "cloth_on_sphere": ClothScene("cloth_on_sphere", "Cloth & Ball (Fig 3)", "cloth_ball", 0.7, 1e-4),
    "curtain_ball": ClothScene("curtain_ball", "Cloth Curtain (Fig 14)", "curtain", 0.8, 7e-5),
}


def _status_kib(field: str) -> int:
    """A ``/proc/self/status`` memory field (``VmRSS``, ``VmHWM``) in KiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def build(sc: ClothScene, backend: str = "cpu") -> Any:
    """Scene ``sc`` as a ready-to-step f32 simulation on ``backend`` (also used by
    ``mpm_gpu.py``)."""
    cr = import_crumple()

    sim = cr.mpm.Simulation(lower=(0, 0, 0), upper=(1, 1, 1), dx=sc.dx, precision="f32", dt_max=sc.dt,
                            backend=backend)
    mat = cr.mpm.ClothMaterial.preset(sc.preset)
    if sc.name == "cloth_on_sphere":
        # Sheet 2 cells above a sphere of radius 0.2 m: contact starts within the first steps.
        mesh = cr.geometry.grid_mesh(size=(sc.size, sc.size), resolution=(sc.quads, sc.quads),
                                     center=(0.5, 0.65 + 2 * sc.dx, 0.5), normal="y")
        sim.add_cloth(mesh, mat, rpic_damping=sc.damping)
        sim.add_collider(cr.colliders.Sphere(center=(0.5, 0.45, 0.5), radius=0.2))
    else:
        # Curtain in the plane z = 0.5, top edge pinned; a ball 2 cells behind it moves at 2 m/s into it.
        mesh = cr.geometry.grid_mesh(size=(sc.size, sc.size), resolution=(sc.quads, sc.quads),
                                     center=(0.5, 0.55, 0.5), normal="z")
        cloth = sim.add_cloth(mesh, mat, rpic_damping=sc.damping)
        y = mesh.vertices[:, 1]
        cloth.pin(np.flatnonzero(y >= y.max() - 1e-9))
        r = 0.15
        ball = cr.colliders.Sphere(center=(0.5, 0.45, 0.5 - r - 2 * sc.dx), radius=r)
        ball.set_velocity(linear=(0.0, 0.0, 2.0))
        sim.add_collider(ball)
    return sim


def measure(name: str) -> dict[str, Any]:
    """Build and run scene ``name`` in this process; return its measurement."""
    cr = import_crumple()

    sc = SCENES[name]
    rss0 = _status_kib("VmRSS")
    t0 = time.perf_counter()
    sim = build(sc)
    setup_s = time.perf_counter() - t0
    n = sim.num_particles
    stage_fn = getattr(sim._s, "stage_times", None)
    before: dict[str, Any] = {}

    def after_warmup() -> None:
        before["peak_kib"] = _status_kib("VmHWM") - rss0
        before["stages"] = dict(stage_fn()) if stage_fn is not None else None

    tm = time_steps(lambda: sim.step(sc.dt), warmup=sc.warmup, steps=sc.steps, after_warmup=after_warmup)
    peak_kib, stages0 = before["peak_kib"], before["stages"]
    threads = int(cr._core.num_threads())
    rates = tm.rates(n)
    out: dict[str, Any] = {
        "available": True,
        "triangles": 2 * sc.quads**2,
        "vertices": (sc.quads + 1) ** 2,
        "particles": n,
        "dx": sc.dx,
        "dt": sc.dt,
        "material": sc.preset,
        "damping": sc.damping,
        "threads": threads,
        "warmup_steps": sc.warmup,
        "measured_steps": sc.steps,
        "setup_s": setup_s,
        "warmup_s": tm.warmup_s,
        "s_per_step": tm.s_per_step,
        "median_s_per_step": tm.median_s_per_step,
        **rates,
        "particle_steps_per_s_per_thread": rates["particle_steps_per_s"] / threads,
        "cpu_utilisation": tm.cpu_utilisation,
        "peak_rss_delta_mib": peak_kib / 1024.0,
        "bytes_per_particle": peak_kib * 1024.0 / n,
        "peak_rss_delta_mib_after_window": (_status_kib("VmHWM") - rss0) / 1024.0,
        "loadavg_1min": os.getloadavg()[0],
        "counters": sim.counters(),
        "finite": bool(np.isfinite(sim._s.positions(0)).all()),
    }
    if stages0 is not None and stage_fn is not None:
        stages1 = dict(stage_fn())
        out["stage_ms_per_step"] = {k: 1e3 * (stages1[k] - stages0[k]) / sc.steps for k in stages1}
    return out


def measure_in_worker(name: str) -> dict[str, Any]:
    """Measure scene ``name`` in a fresh subprocess with 2 rayon threads; never raises."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name]
    return run_worker(cmd, timeout_s=WORKER_TIMEOUT_S, label=f"mpm_cloth: {name}")


def run() -> dict[str, Any]:
    """Both cloth scenes next to their paper anchors; the part of ``make bench``."""
    scenes: dict[str, Any] = {}
    for name, sc in SCENES.items():
        r = measure_in_worker(name)
        anchor = paper_anchor(sc.paper)
        entry: dict[str, Any] = {"crumple": r, "paper": {"scene": sc.paper, **anchor}}
        if r.get("available"):
            entry["per_thread_vs_paper"] = ratio(r, anchor, "particle_steps_per_s_per_thread",
                                                 "particle_steps_per_s_per_thread_min")
            entry["bytes_per_particle_vs_paper"] = ratio(r, anchor, "bytes_per_particle")
        scenes[name] = entry
    summary = {
        "threads": THREADS,
        "note": ("paper throughput is a lower bound (24 frames/s and Δt = Δt_max assumed, spec §6.2); "
                 "per_thread_vs_paper > 1: crumple does more particle-steps per second per thread"),
        "scenes": scenes,
    }
    write_json("mpm_cloth", summary)
    return summary


def main() -> int:
    """CLI: both scenes, or one measurement with ``--worker``."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", choices=tuple(SCENES), help="measure one scene in this process")
    args = ap.parse_args()
    if args.worker:
        return worker_main(lambda: measure(args.worker))
    print(json.dumps(run(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
