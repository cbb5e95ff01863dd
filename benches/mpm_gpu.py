"""MPM throughput on the GPU backend against the CPU backend, same run.

Scenes:

- ``elastic_cube``: the ``mpm_vs_peers`` elastic cube (``mpm_scene.CubeScene``)
  at two sizes;
- ``cloth_on_sphere`` and ``curtain_ball``: the ``mpm_cloth`` cloth scenes
  (paper Fig. 3 and Fig. 14 set-ups) at a smaller mesh.

Each (scene, backend) runs in its own subprocess with ``RAYON_NUM_THREADS=2``
and fixed steps; reported: particle-steps per second, the GPU/CPU ratio and
the adapter's name and type. On a software adapter (Mesa lavapipe, which
runs the shaders on the same CPU cores) the ratio is informational; the
script runs unchanged on a real GPU, where the sizes can be raised with
``--scale``.

Run: ``python benches/mpm_gpu.py [--scale S]`` (all) or ``--worker SCENE BACKEND``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from _common import THREADS, crumple_info, import_crumple, ratio, run_worker, time_steps, worker_main, write_json
from mpm_cloth import SCENES as CLOTH_SCENES
from mpm_cloth import build as build_cloth
from mpm_scene import CubeScene

WORKER_TIMEOUT_S = 600.0


def cube_scenes(scale: float) -> dict[str, CubeScene]:
    """Elastic cubes of about 14k and 64k particles (× scale³ in count)."""
    def side(n: int) -> int:
        return max(8, int(round(n * scale)))

    return {
        "elastic_cube_small": CubeScene(n_side=side(24), warmup=3, steps=20),
        "elastic_cube": CubeScene(n_side=side(40), warmup=3, steps=20),
    }


def measure(name: str, backend: str, scale: float) -> dict[str, Any]:
    """Build scene ``name`` on ``backend``, run warm-up and measured steps."""
    cr = import_crumple()

    cubes = cube_scenes(scale)
    if name in cubes:
        sc = cubes[name]
        sim = cr.mpm.Simulation(lower=(0, 0, 0), upper=(1, 1, 1), dx=sc.dx, precision="f32",
                                dt_max=sc.dt, backend=backend, boundary_padding=sc.bound)
        sim.add_solid(sc.points(), cr.mpm.ElasticMaterial(density=sc.density, youngs_modulus=sc.youngs_modulus,
                                                          poisson_ratio=sc.poisson_ratio),
                      velocity=(0.0, sc.v0, 0.0), particle_volume=sc.p_vol)
        dt, warmup, steps = sc.dt, sc.warmup, sc.steps
    else:
        cs = dataclasses.replace(CLOTH_SCENES[name], quads=max(16, int(round(96 * scale))))
        sim = build_cloth(cs, backend)
        dt, warmup, steps = cs.dt, 3, 20
    n = sim.num_particles
    # The warm-up includes shader compilation and the first upload on the GPU. Only
    # the window's wall time is reported: a GPU step may return before its work is done.
    tm = time_steps(lambda: sim.step(dt), warmup=warmup, steps=steps)
    x = np.asarray(sim._s.all_positions())  # one readback at the end: state stays on the device
    return {
        "scene": name, "backend": backend, "particles": n, "steps": steps, "dt": dt,
        "warmup_s": tm.warmup_s, "wall_s": tm.wall_s, "s_per_step": tm.s_per_step,
        "particle_steps_per_s": tm.rates(n)["particle_steps_per_s"],
        "active_blocks": sim._s.active_blocks(), "finite": bool(np.isfinite(x).all()),
        "mean_y": float(x[:, 1].mean()),
    }


def measure_in_worker(name: str, backend: str, scale: float) -> dict[str, Any]:
    """Measure ``name`` on ``backend`` in a fresh subprocess; never raises."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name, backend, "--scale", str(scale)]
    r = run_worker(cmd, timeout_s=WORKER_TIMEOUT_S, label=f"mpm_gpu: {name} {backend}")
    return {"scene": name, "backend": backend, **r}


def run(scale: float = 1.0) -> dict[str, Any]:
    info = crumple_info()["adapter_info"]
    names = list(cube_scenes(scale)) + list(CLOTH_SCENES)
    rows = []
    for name in names:
        pair = {b: measure_in_worker(name, b, scale) for b in (("cpu", "gpu") if info else ("cpu",))}
        row: dict[str, Any] = {"scene": name, **{b: r for b, r in pair.items()}}
        gpu_over_cpu = ratio(pair["gpu"], pair["cpu"], "particle_steps_per_s") if "gpu" in pair else None
        if gpu_over_cpu is not None:
            row["gpu_over_cpu"] = gpu_over_cpu
            row["mean_y_difference_m"] = abs(pair["gpu"]["mean_y"] - pair["cpu"]["mean_y"])
        rows.append(row)
        print(json.dumps({k: row.get(k) for k in ("scene", "gpu_over_cpu")}), file=sys.stderr)
    result = {
        "adapter": info,
        "note": ("particle-steps per second, same scene, same fixed steps; CPU on "
                 f"{THREADS} threads. On a software adapter (device_type 'Cpu', e.g. lavapipe) "
                 "the GPU backend runs on the same CPU cores, so the ratio is informational."),
        "cpu_threads": THREADS,
        "results": rows,
    }
    write_json("mpm_gpu", result)
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", nargs=2, metavar=("SCENE", "BACKEND"))
    ap.add_argument("--scale", type=float, default=1.0, help="mesh and cube size factor (default 1)")
    args = ap.parse_args()
    if args.worker:
        return worker_main(lambda: measure(args.worker[0], args.worker[1], args.scale))
    print(json.dumps(run(args.scale), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
