"""A 24-run sweep of a cloth scene through Ray and through the local process
pool (issue 17's acceptance): the EOL crease (``eol_crease``: a denim
sheet held over a box edge, then let go) over hold time × the box's
friction, at ``scale`` 0.5 (8 × 8 quads), 60 frames a run, one solver
thread per run, as many runs at once as cores.

Prints the results table (one row per run: parameters, the crease angles,
time, status) and the two wall times; writes ``bench-out/sweep_ray.json``
and leaves each sweep's folder (runs, results.csv, results.parquet) under
``bench-out/sweep_ray/``. On a 2-core machine the two should take about as
long: the point is that the same call runs unchanged on a cluster
(``address=`` or ``RAY_ADDRESS``). Both sweeps must give the same metrics.
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import Any

from _common import ROOT, write_json

HOLDS = [0.0, 20.0, 50.0, 100.0, 200.0, 500.0]
FRICTIONS = [0.0, 0.3, 0.6, 1.0]


def run(scale: float = 0.5, frames: int = 60) -> dict[str, Any]:
    import crumple as cr

    grid = {"hold_time": HOLDS, "friction": FRICTIONS}
    out = ROOT / "bench-out" / "sweep_ray"
    shutil.rmtree(out, ignore_errors=True)
    result: dict[str, Any] = {"scene": "eol_crease", "scale": scale, "frames": frames, "runs": len(HOLDS) * len(FRICTIONS)}
    rows = {}
    for executor in ("local", "ray"):
        t0 = time.perf_counter()
        r = cr.sweep("eol_crease", grid, out=out / executor, executor=executor, frames=frames,
                     options={"scale": scale}, threads=1, progress=True)
        result[f"{executor}_wall_s"] = time.perf_counter() - t0
        result[f"{executor}_failed"] = len(r.failed)
        result[f"{executor}_run_s_sum"] = sum(row["time_s"] for row in r.rows)
        rows[executor] = r.rows
    keys = ("hold_time", "friction", "crease_held_rad", "crease_kept_rad", "plastic_angle_max_rad", "steps")
    result["same_metrics"] = [[row[k] for k in keys] for row in rows["local"]] == \
        [[row[k] for k in keys] for row in rows["ray"]]
    result["table"] = [{**{k: row[k] for k in keys}, "time_s": row["time_s"], "status": row["status"]}
                       for row in rows["ray"]]
    return result


def main() -> int:
    res = run()
    print(f"{'hold s':>7} {'mu':>4} {'held rad':>9} {'kept rad':>9} {'time s':>7} status")
    for t in res["table"]:
        print(f"{t['hold_time']:7.0f} {t['friction']:4.1f} {t['crease_held_rad']:9.3f} {t['crease_kept_rad']:9.3f} "
              f"{t['time_s']:7.2f} {t['status']}")
    print(f"{res['runs']} runs: local {res['local_wall_s']:.1f} s, ray {res['ray_wall_s']:.1f} s "
          f"(ray/local {res['ray_wall_s'] / res['local_wall_s']:.2f}); same metrics: {res['same_metrics']}")
    write_json("sweep_ray", res)
    return 0 if res["same_metrics"] and not res["local_failed"] and not res["ray_failed"] else 1


if __name__ == "__main__":
    sys.exit(main())
