"""`make bench`: run every benchmark and print one JSON summary.

Benchmarks are measurements, not tests: nothing here passes or fails. Each
part writes its own JSON under ``bench-out/``; this script collects them into
``bench-out/summary.json`` and prints it.

Parts:
- ``gpu_primitives``: criterion benches of the Rust core (prefix sum and radix
  sort, CPU twin vs the wgpu adapter), read back from criterion's output.
- ``mpm_vs_peers``: crumple's MPM solver against taichi and NVIDIA warp (CPU)
  on the same elastic-cube scene at ~100k and ~500k particles, 2 threads
  (``mpm_vs_peers.py``; peers from the ``bench`` extra, reported unavailable
  if they cannot be installed or run).
- ``mpm_cloth``: cloth throughput and bytes per particle at ~100k triangles
  next to the paper's Table 2 (``mpm_cloth.py``).
- ``mpm_gpu``: the MPM GPU backend against the CPU backend (elastic cube and
  the cloth scenes), particle-steps per second and the ratio, naming the
  adapter (``mpm_gpu.py``; informational on a software adapter).
- ``cloth_wrinkles``: the persistent-wrinkle cloth's Table 1 replica (twist
  scene at 2K/7K/27K vertices, models on/off, the three linear solvers, and
  self-collision on) next to the paper's seconds per step, and NVIDIA Newton's
  VBD and Style3D cloth solvers (CPU, one thread, own environment under
  ``bench-out/peers/``) on the same twist at 2K and 27K with both twist ratios
  (``cloth_wrinkles.py``, ``cloth_peer_newton.py``).
- ``pbd_table1``: the shape-matching solver's Table 1 replica (per-phase ms
  at the paper's particle counts, next to the paper's figures) and the
  SM-block peer comparison against the same Jacobi loop in Taichi and
  against PositionBasedDynamics (pyPBD 2.2.2, own environment under
  ``bench-out/peers/``), 2 threads (``pbd_table1.py``).

- ``eol_table1``: the EOL cloth's Table 1 replica (the edge scene at the
  paper's face counts, EOL and the Lagrangian baseline, the QP by the
  active-set path and by Clarabel, a 30°-turned drape as a second scene
  shape, LO-RES), ms per step and the CD/RM/MF/VI split next to the paper's
  figures, 2 threads (``eol_table1.py``).
- ``sweep_ray``: a 24-run sweep of the EOL crease scene (hold time ×
  friction) through Ray and through the local process pool: the table and
  both wall times (``sweep_ray.py``).

The shared plumbing (worker processes, RESULT lines, timing, JSON, peer
environments) is ``_common.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import cloth_wrinkles
import eol_table1
import mpm_cloth
import mpm_gpu
import mpm_vs_peers
import pbd_table1
import sweep_ray
from _common import ROOT, crumple_info, write_json


def criterion_results(group_filter: str | None = None) -> list[dict[str, object]]:
    """Read criterion's estimates: mean time and elements/s for each bench."""
    base = ROOT / "target" / "criterion"
    rows: list[dict[str, object]] = []
    for est in sorted(base.glob("**/new/estimates.json")):
        bench = json.loads((est.parent / "benchmark.json").read_text())
        if group_filter and not str(bench.get("group_id", "")).startswith(group_filter):
            continue
        mean_ns = json.loads(est.read_text())["mean"]["point_estimate"]
        elements = (bench.get("throughput") or {}).get("Elements")
        rows.append({
            "group": bench.get("group_id"),
            "function": bench.get("function_id"),
            "size": bench.get("value_str"),
            "mean_s": mean_ns * 1e-9,
            "elements_per_s": (elements / (mean_ns * 1e-9)) if elements else None,
        })
    return rows


def ratios(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    """GPU/CPU throughput ratio for each (group, size) with both backends."""
    by: dict[tuple[object, object], dict[str, float]] = {}
    for r in rows:
        fn = str(r["function"])
        backend = "gpu" if "gpu" in fn else "cpu" if "cpu" in fn else fn
        if isinstance(r["elements_per_s"], float):
            by.setdefault((r["group"], r["size"]), {})[backend] = r["elements_per_s"]
    out = []
    for (g, s), d in sorted(by.items(), key=lambda kv: str(kv[0])):
        if "cpu" in d and "gpu" in d:
            out.append({"group": g, "size": s, "gpu_over_cpu": d["gpu"] / d["cpu"]})
    return out


def run_gpu_primitives() -> dict[str, object]:
    env = dict(os.environ)
    cmd = ["cargo", "bench", "--locked", "-p", "crumple-core", "--bench", "gpu_primitives", "--",
           "--warm-up-time", "1", "--measurement-time", "3"]
    print("+", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, cwd=ROOT, env=env, check=True)
    rows = criterion_results()
    info = crumple_info()  # None for both when the extension is not built
    return {"adapter": info["adapter"], "cpu_threads": info["threads"], "results": rows, "ratios": ratios(rows)}


def main() -> int:
    summary = {
        "gpu_primitives": run_gpu_primitives(),
        "mpm_vs_peers": mpm_vs_peers.run(),
        "mpm_cloth": mpm_cloth.run(),
        "mpm_gpu": mpm_gpu.run(),
        "cloth_wrinkles": cloth_wrinkles.run(),
        "pbd_table1": pbd_table1.run(),
        "eol_table1": eol_table1.run(),
        "sweep_ray": sweep_ray.run(),
    }
    write_json("summary", summary)
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
