"""crumple.eol against the EOL paper's Table 1 (spec eol_cloth §8.2).

Rows, each measured in a worker subprocess with 2 threads, dt = 5e-3 s:

- ``EDGE (EOL)`` / ``EDGE (reg.)``: the ``eol_edge`` setup (a 1 m sheet over
  a box edge, its far border pulled at 0.1 m/s from 0.35 s) on a 32 × 32
  grid (2048 faces; the paper's rows have 2116 and up to 2971 faces), with
  ``mode="eol"`` and the Lagrangian ``mode="lag_static"``. The EOL row is
  also run with ``qp_solver="clarabel"`` (the interior-point reference
  every step) to show what the warm-started active-set path gains.
- ``EDGE30 (EOL)`` / ``(reg.)``: a second scene shape, not the one the
  solver was tuned on: the same sheet turned 30° about the vertical, so the
  edge crosses the grid's triangles obliquely (more EOL vertices made and
  released, more remeshing), its far border held and pulled the same way.
  (The same sheet dropped with no pins slides off the table faster than
  the remesher keeps up and stops with ``SolverError``; see the README.)
- ``LO-RES (EOL)`` / ``(reg.)``: the edge scene on an 8 × 8 (128 faces) and
  11 × 11 (242 faces) grid, against the paper's LO-RES rows (133 and 256).
- ``WIRE (EOL)`` / ``(reg.)``: the ``eol_wire`` setup (spec E2: a wire rising
  at 1 m/s into a 1 m sheet held at its corners, dt = 1e-3 s as in the
  spec) on a 32 × 32 grid (2048 faces; the paper's rows 2048 and 1936).
- ``NAILS (EOL)``: the ``eol_points`` setup (spec E3: a sheet dropped on
  three nails, two corners pulled at 0.1 m/s from 0.25 s) on a 32 × 32 grid
  (the paper's row 2012 faces).
- ``EDGE (conf.)`` / ``WIRE (conf.)``: the EDGE and WIRE rows in the
  conformal Lagrangian baseline with averaged rows (``mode=
  "lag_conformal_avg"``; the paper's "conf." rows, 2622 and 2022 faces).
  Spec §10 test 21 is on these: T_EOL / T_conf ≈ 1.5 on EDGE-like meshes
  (the paper's 1101 / 729.6 = 1.51; WIRE 1058.7 / 728.3 = 1.45) with the
  QP's share above 50 %; the bench prints both ratios next to the paper's.
- ``FRICTION (EOL)``: spec E8, a 38 × 38 sheet (2888 faces at the start,
  about 2820 as it settles; the paper's 2927) dropped on four boxes turned 5° with μ = 0.8
  (``crumple.scenes.eol_scenes.four_turned_boxes``), timed once it has
  landed.
- ``EDGE (EOL, sized)`` / ``EDGE (non-conf.)``: the edge setup from a coarse
  16 × 16 grid with the sizing remesh of spec §5.6 on every step
  (``eol.Sizing(size_min=0.02, size_max=0.045)``: about the paper's face
  counts, 2971 and 2521; our remesher makes a denser mesh than ARCSim at
  the spec's [0.015, 0.03] m), in ``mode="eol"`` and
  ``"lag_nonconformal"`` (the paper's non-conformal row).

Timed after 70 steps (0.35 s at dt = 5e-3: the sheet has folded over the
edge or landed on the nails), 60 steps, in three runs of each row (each
its own worker; the runs take the same steps, so they differ only by this
machine's noise, which moved a row by up to a quarter between runs and
the LO-RES rows, whose window is under 0.1 s, most); the run with the
median ms per step is reported, with the three runs' ms per step beside it;
reported: ms per step, the CD/RM/MF/VI split (the paper's buckets; VI is the
QP), the face count, the steps the active-set path handed to Clarabel, its
passes, numeric KKT factorizations and structure analyses per step, and
the paper's T for the row with the speed-up (paper T / ours; the paper ran
one thread of an i7-7700 with MOSEK, so the ratio mixes hardware, threads
and solver). Writes ``bench-out/eol_table1.json``.

Run: ``python benches/eol_table1.py``; one row: ``--worker row --row EDGE_EOL``.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

import numpy as np

from _common import import_crumple, run_worker, unavailable, worker_main, write_json

# Paper Table 1: (faces, ms per step, %VI).
PAPER = {
    "EDGE_EOL": (2971, 1101.0, 88.8),
    "EDGE_REG": (2116, 436.2, 92.1),
    "LORES_EOL": (133, 16.3, 53.9),
    "LORES_REG": (256, 18.1, 81.0),
    "WIRE_EOL": (2048, 1058.7, 89.1),
    "WIRE_REG": (1936, 827.2, 96.3),
    "NAILS_EOL": (2012, 804.2, 88.6),
    "EDGE_NONCONF": (2521, 638.9, 88.9),
    "EDGE_CONF": (2622, 729.6, 88.6),
    "WIRE_CONF": (2022, 728.3, 91.9),
    "FRICTION_EOL": (2927, 451.5, 61.3),
}
ROWS: dict[str, dict[str, Any]] = {
    "EDGE_EOL": dict(n=32, mode="eol", scene="edge", paper="EDGE_EOL"),
    "EDGE_EOL_CLARABEL": dict(n=32, mode="eol", scene="edge", paper="EDGE_EOL", qp="clarabel"),
    "EDGE_REG": dict(n=32, mode="lag_static", scene="edge", paper="EDGE_REG"),
    "EDGE30_EOL": dict(n=32, mode="eol", scene="edge30", paper="EDGE_EOL"),
    "EDGE30_REG": dict(n=32, mode="lag_static", scene="edge30", paper="EDGE_REG"),
    "LORES_EOL": dict(n=8, mode="eol", scene="edge", paper="LORES_EOL"),
    "LORES_REG": dict(n=11, mode="lag_static", scene="edge", paper="LORES_REG"),
    "WIRE_EOL": dict(n=32, mode="eol", scene="wire", paper="WIRE_EOL", dt=1e-3),
    "WIRE_REG": dict(n=32, mode="lag_static", scene="wire", paper="WIRE_REG", dt=1e-3),
    "NAILS_EOL": dict(n=32, mode="eol", scene="nails", paper="NAILS_EOL"),
    "EDGE_CONF": dict(n=32, mode="lag_conformal_avg", scene="edge", paper="EDGE_CONF"),
    "WIRE_CONF": dict(n=32, mode="lag_conformal_avg", scene="wire", paper="WIRE_CONF", dt=1e-3),
    "FRICTION_EOL": dict(n=38, mode="eol", scene="friction", paper="FRICTION_EOL"),
    # The sizing remesh (spec §5.6) from a coarse start, as the paper ran
    # its EOL and non-conformal rows (ARCSim); the sizes [D] give face
    # counts near the paper's (our remesher makes a denser mesh than
    # ARCSim's at the spec's [0.015, 0.03] m).
    "EDGE_EOL_SIZED": dict(n=16, mode="eol", scene="edge", paper="EDGE_EOL", sizing=(0.02, 0.045)),
    "EDGE_NONCONF": dict(n=16, mode="lag_nonconformal", scene="edge", paper="EDGE_NONCONF", sizing=(0.02, 0.045)),
}
WARMUP, STEPS = 70, 60
# Worker runs per row (the median one is reported).
RUNS = 3


def _build(cr: Any, row: dict[str, Any]) -> tuple[Any, Any]:
    n = int(row["n"])
    sz = row.get("sizing")
    if row["scene"] == "friction":
        from crumple.scenes import eol_scenes

        return eol_scenes.four_turned_boxes(0.8, resolution=n, mode=row["mode"])
    sim = cr.eol.Simulation(dt=row.get("dt", 5e-3), gravity=(0.0, -9.8, 0.0), mode=row["mode"],
                            qp_solver=row.get("qp", "active_set"),
                            sizing=None if sz is None else cr.eol.Sizing(size_min=sz[0], size_max=sz[1]))
    if row["scene"] in ("wire", "nails"):
        # The eol_wire and eol_points scenes' setups (spec E2, E3).
        sheet = cr.geometry.grid_mesh(size=(1.0, 1.0), resolution=(n, n), center=(0.5, 0.0, 0.5), normal="y")
        cloth = sim.add_cloth(sheet, "eol_sheet")
        x = cloth.positions
        at = np.isclose(x[:, 2], 1.0) | (row["scene"] == "wire" and np.isclose(x[:, 2], 0.0))
        cloth.pin(np.flatnonzero(at & (np.isclose(x[:, 0], 0.0) | np.isclose(x[:, 0], 1.0))))
        if row["scene"] == "wire":
            sim.add_wire([(-0.25, -0.01, 0.51), (1.25, -0.01, 0.51)], normal=(0.0, 1.0, 0.0), velocity=(0.0, 1.0, 0.0))
        else:
            for p in ((0.751, -0.005, 0.751), (0.71, -0.005, 0.22), (0.27, -0.005, 0.51)):
                sim.add_point(p, normal=(0.0, 1.0, 0.0))
        return sim, cloth
    sheet = cr.geometry.grid_mesh(size=(1.0, 1.0), resolution=(n, n), center=(0.0, 0.0, 0.0), normal="y")
    v0 = np.asarray(sheet.vertices)
    v = v0
    if row["scene"] == "edge30":
        a = math.radians(30.0)
        rot = np.array([[math.cos(a), 0.0, math.sin(a)], [0.0, 1.0, 0.0], [-math.sin(a), 0.0, math.cos(a)]])
        v = v0 @ rot.T
    v = v + [0.2, 0.001, 0.5]
    cloth = sim.add_cloth(cr.geometry.TriMesh(v, sheet.faces), "eol_sheet")
    sim.add_collider(cr.colliders.Box(center=(0.6, -0.5, 0.5), half_extents=(0.6, 0.5, 1.0), mode="slip"))
    # The far border (0.7 m from the edge before turning) is held, then pulled.
    cloth.pin(np.flatnonzero(np.abs(v0[:, 0] - 0.5) < 1e-9))
    return sim, cloth


def measure_row(name: str) -> dict[str, Any]:
    cr = import_crumple()
    row = ROWS[name]
    sim, cloth = _build(cr, row)
    pinned = cloth.vertex_ids[cloth.pinned]
    pulled = [False]

    start = {"wire": math.inf, "nails": 0.25, "friction": math.inf}.get(row["scene"], 0.35)

    def step() -> None:
        # The edge scenes' pull starts at 0.35 s, the first step of the timed
        # window; the nails' at 0.25 s (spec E3); the wire moves by itself.
        if not pulled[0] and sim.time >= start - 1e-9:
            idx = np.flatnonzero(np.isin(cloth.vertex_ids, pinned))
            cloth.set_pin_targets(idx, cloth.positions[idx], np.tile([0.1, 0.0, 0.0], (len(idx), 1)))
            pulled[0] = True
        sim.step()

    for _ in range(WARMUP):
        step()
    t0 = sim.stage_times()
    faces, eol, fallbacks, passes, factorizations, analyses = 0, 0, 0, 0, 0, 0
    for _ in range(STEPS):
        step()
        st = sim.stats()
        faces = max(faces, len(cloth.faces))
        eol = max(eol, int(st["eol_vertices"]))
        fallbacks += int(st["qp_clarabel"])
        passes += int(st["qp_iterations"])
        factorizations += int(st["qp_factorizations"])
        analyses += int(st["qp_analyses"])
    t1 = sim.stage_times()
    assert pulled[0] or row["scene"] in ("wire", "friction"), "the pull did not start"
    d = {k: t1[k] - t0[k] for k in t1}
    total = sum(d.values())
    ms = 1e3 * total / STEPS
    pf, pt, pvi = PAPER[row["paper"]]
    if not np.all(np.isfinite(cloth.positions)):
        return unavailable("the state is not finite")
    return {
        "row": name, "mode": row["mode"], "qp_solver": row.get("qp", "active_set"), "faces": faces,
        "vertices": cloth.num_vertices, "eol_vertices_max": eol, "ms_per_step": ms,
        "split": {k: v / total for k, v in d.items()}, "qp_share": d["vi"] / total,
        "clarabel_fallbacks": fallbacks, "steps": STEPS,
        # Per step: the active set's passes and its numeric factorizations
        # (its later passes re-solve bordered; Clarabel's iterations on the
        # Clarabel row).
        "qp_passes": passes / STEPS, "qp_factorizations": factorizations / STEPS,
        # Analyses of the KKT structure per step (its ordering and symbolic
        # factorization run again, beside the force assembly, where the
        # mesh or the rows changed it).
        "qp_analyses": analyses / STEPS,
        "paper": {"row": row["paper"], "faces": pf, "ms_per_step": pt, "vi_percent": pvi},
        "speedup_vs_paper": pt / ms,
    }


def run() -> dict[str, Any]:
    out: dict[str, Any] = {"threads": 2, "dt_s": {k: r.get("dt", 5e-3) for k, r in ROWS.items()},
                           "warmup_steps": WARMUP, "steps": STEPS, "rows": {}}
    out["runs_per_row"] = RUNS
    for name in ROWS:
        runs = [run_worker([sys.executable, __file__, "--worker", "row", "--row", name],
                           timeout_s=900, label=f"eol_table1 {name} (run {k + 1} of {RUNS})") for k in range(RUNS)]
        out["rows"][name] = median_run(runs)
    out["ratios"] = ratios(out["rows"])
    write_json("eol_table1", out)
    return out


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median ms per step, with every run's ms per step
    (``runs_ms_per_step``, in run order); if a run is unavailable or has
    no ms per step, an unavailable result instead (a row that fails once
    is not reported from the others)."""
    for r in runs:
        if r.get("available") is False or "ms_per_step" not in r:
            return r if r.get("available") is False else unavailable("a run reported no ms_per_step")
    best = dict(sorted(runs, key=lambda r: r["ms_per_step"])[len(runs) // 2])
    best["runs_ms_per_step"] = [r["ms_per_step"] for r in runs]
    return best


# Spec §10 test 21: Table 1's ratios, ours against the paper's, on the same
# scene: EOL over the conformal ("conf.") and the regular ("reg.") Lagrangian rows.
RATIOS = {"EDGE EOL/conf": ("EDGE_EOL", "EDGE_CONF"), "WIRE EOL/conf": ("WIRE_EOL", "WIRE_CONF"),
          "EDGE EOL/reg": ("EDGE_EOL", "EDGE_REG"), "WIRE EOL/reg": ("WIRE_EOL", "WIRE_REG")}


def ratios(rows: dict[str, Any]) -> dict[str, Any]:
    """Per pair of :data:`RATIOS`: our T_a / T_b and the paper's, and
    whether both rows spend more than half the step in the QP (test 21's
    "QP share > 50 %"); pairs with a row that did not run are left out."""
    out = {}
    for label, (a, b) in RATIOS.items():
        ra, rb = rows.get(a, {}), rows.get(b, {})
        if ra.get("available") is False or rb.get("available") is False or "ms_per_step" not in ra \
                or "ms_per_step" not in rb:
            continue
        out[label] = {"ours": ra["ms_per_step"] / rb["ms_per_step"],
                      "paper": PAPER[ROWS[a]["paper"]][1] / PAPER[ROWS[b]["paper"]][1],
                      "qp_share_over_half": bool(ra["qp_share"] > 0.5 and rb["qp_share"] > 0.5)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", choices=["row"])
    ap.add_argument("--row", choices=sorted(ROWS))
    a = ap.parse_args()
    if a.worker == "row":
        return worker_main(lambda: measure_row(a.row))
    res = run()
    for name, r in res["rows"].items():
        if r.get("available") is False:
            print(f"{name:20s} unavailable: {r['reason']}")
            continue
        spread = r.get("runs_ms_per_step", [r["ms_per_step"]])
        print(f"{name:20s} {r['faces']:5d} faces {r['ms_per_step']:8.1f} ms/step ({min(spread):.1f}-{max(spread):.1f})  QP {100 * r['qp_share']:4.1f}%  "
              f"paper {r['paper']['ms_per_step']:7.1f} ms  ×{r['speedup_vs_paper']:.1f}  fallbacks {r['clarabel_fallbacks']}  "
              f"passes {r['qp_passes']:.1f} factorizations {r['qp_factorizations']:.1f} "
              f"analyses {r['qp_analyses']:.2f}")
    for label, q in res["ratios"].items():
        print(f"T {label:14s} ours {q['ours']:.2f}  paper {q['paper']:.2f}  "
              f"QP share > 50 % in both: {'yes' if q['qp_share_over_half'] else 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
