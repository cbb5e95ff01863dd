"""Sweeps (issue 17): crumple.sweep over a grid through the local process
pool and through a local Ray, resume, failed runs, the results table, the
run folders, and the refusals."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
import ray

import crumple as cr

# A small EOL crease (4 × 4 quads, 30 frames): about half a second a run.
GRID = {"hold_time": [0.0, 200.0], "friction": [0.0, 0.3, 0.6, 1.0]}
OPTIONS = {"scale": 0.25}


def _metrics(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(r["run"], r["hold_time"], r["friction"], r["crease_held_rad"], r["crease_kept_rad"], r["steps"]) for r in rows]


def test_the_same_grid_gives_the_same_metrics_locally_and_on_ray(tmp_path: Path) -> None:
    """Eight runs through the process pool and through a Ray started (and
    stopped) for the sweep: the same rows, bit for bit; every run moved the
    sheet (a finite crease angle at release)."""
    # Local: one worker with 2 solver threads; Ray: 1 thread a task (CPU
    # results do not depend on the thread count).
    local = cr.sweep("eol_crease", GRID, out=tmp_path / "local", frames=30, options=OPTIONS, workers=1, threads=2)
    assert not ray.is_initialized()
    on_ray = cr.sweep("eol_crease", GRID, out=tmp_path / "ray", executor="ray", frames=30, options=OPTIONS)
    assert not ray.is_initialized(), "the sweep must stop the Ray it started"
    assert len(local.rows) == 8 and not local.failed and not on_ray.failed
    assert {r["threads"] for r in local.rows} == {2} and {r["threads"] for r in on_ray.rows} == {1}
    assert _metrics(local.rows) == _metrics(on_ray.rows)
    held = [r["crease_held_rad"] for r in local.rows]
    assert all(math.isfinite(h) and h < -0.5 for h in held), held
    # Each run's folder: its parameters, status, the scene's frames, metrics and checkpoint.
    for r in on_ray.rows:
        folder = tmp_path / "ray" / r["folder"]
        cfg = json.loads((folder / "params.json").read_text())
        assert cfg["params"] == {"hold_time": r["hold_time"], "friction": r["friction"]} and cfg["target"] == "eol_crease"
        assert json.loads((folder / "status.json").read_text())["status"] == "ok"
        scene = folder / "eol_crease"
        assert (scene / "metrics.json").exists() and (scene / "manifest.json").exists()
        assert len(list(scene.glob("cloth_*.ply"))) == 31
    sim = cr.eol.Simulation.load(tmp_path / "ray" / on_ray.rows[0]["folder"] / "eol_crease" / "checkpoint.npz")
    assert sim.step_count == on_ray.rows[0]["steps"] and np.isfinite(sim.objects[0].positions).all()


def test_a_rerun_resumes_and_failed_runs_are_rows(tmp_path: Path) -> None:
    """A run that raises is a failed row with its error and the others
    finish; the table is written as CSV and Parquet with the same rows; a
    rerun skips the finished runs and tries the failed ones again."""
    grid = [{"hold_time": 0.0, "friction": 0.0}, {"hold_time": 0.0, "friction": -1.0}, {"hold_time": 50.0, "friction": 0.5}]
    first = cr.sweep("eol_crease", grid, out=tmp_path, frames=12, options=OPTIONS, workers=2)
    assert [r["status"] for r in first.rows] == ["ok", "failed", "ok"]
    assert "InvalidInputError" in first.rows[1]["error"] and "friction" in first.rows[1]["error"]
    with first.csv.open() as f:
        table = list(csv.DictReader(f))
    assert [t["run"] for t in table] == [r["run"] for r in first.rows]
    assert first.parquet is not None
    pt = pq.read_table(first.parquet).to_pylist()
    assert [p["status"] for p in pt] == ["ok", "failed", "ok"]
    assert pt[2]["crease_held_rad"] == first.rows[2]["crease_held_rad"]

    again = cr.sweep("eol_crease", grid, out=tmp_path, frames=12, options=OPTIONS, workers=2)
    assert again.skipped == 2
    assert [r["status"] for r in again.rows] == ["ok", "failed", "ok"]
    assert again.rows[0]["time_s"] == first.rows[0]["time_s"], "a finished run was run again"
    # Other fixed options (or frames) are other runs: nothing is reused.
    other = cr.sweep("eol_crease", grid[:1], out=tmp_path, frames=12, options={"scale": 0.3}, workers=1)
    assert other.skipped == 0 and other.rows[0]["crease_held_rad"] != first.rows[0]["crease_held_rad"]


def scaled_sum(*, out_dir: Path, a: float, b: float, factor: float = 1.0) -> dict[str, Any]:
    """A sweep target of the test: a function, not a scene."""
    return {"value": factor * (a + b), "series": [a, b]}


def numpy_metrics(*, out_dir: Path, a: float) -> dict[str, Any]:
    return {"n": np.int64(3), "x": np.float32(a), "ok": np.bool_(True), "v": np.arange(3.0)}


def test_a_function_target_and_fixed_options(tmp_path: Path) -> None:
    r = cr.sweep(scaled_sum, {"a": [1, 2], "b": [10.0]}, out=tmp_path, options={"factor": 2.0}, workers=1)
    assert [row["value"] for row in r.rows] == [22.0, 24.0]
    # numpy values are JSON values in the table, fresh and resumed alike.
    n1 = cr.sweep(numpy_metrics, {"a": [0.5]}, out=tmp_path / "np", workers=1).rows[0]
    n2 = cr.sweep(numpy_metrics, {"a": [0.5]}, out=tmp_path / "np", workers=1).rows[0]
    assert (n1["n"], n1["x"], n1["ok"], n1["v_last"]) == (3, 0.5, True, 2.0) == (n2["n"], n2["x"], n2["ok"], n2["v_last"])
    assert [row["series_last"] for row in r.rows] == [10.0, 10.0]
    assert json.loads((tmp_path / r.rows[0]["folder"] / "metrics.json").read_text())["value"] == 22.0


@pytest.mark.parametrize(
    ("target", "grid", "kw", "match"),
    [
        ("no_such_scene", {"hold_time": [0.0]}, {}, "unknown scene"),
        ("eol_crease", {"hold_time": []}, {}, "non-empty list"),
        ("eol_crease", {"hold_time": "0,1"}, {}, "non-empty list"),
        ("eol_crease", {"hold_time": [[0.0]]}, {}, "finite numbers"),
        ("eol_crease", {"hold_time": [float("nan")]}, {}, "finite numbers"),
        ("eol_crease", [], {}, "no runs"),
        ("eol_crease", [1, 2], {}, "not a mapping"),
        ("eol_crease", {"hold_time": [0.0]}, {"options": {"hold_time": 1.0}}, "both a grid parameter"),
        ("eol_crease", {"hold_time": [0.0]}, {"executor": "dask"}, "executor"),
        ("eol_crease", {"hold_time": [0.0]}, {"workers": 0}, "workers"),
        ("eol_crease", {"hold_time": [0.0]}, {"threads": 0}, "threads"),
        ("eol_crease", {"hold_time": [0.0]}, {"frames": 0}, "frames"),
        (42, {"hold_time": [0.0]}, {}, "scene name or a function"),
    ],
)
def test_bad_sweeps_are_refused_before_any_run(tmp_path: Path, target: Any, grid: Any, kw: dict[str, Any],
                                               match: str) -> None:
    with pytest.raises(cr.InvalidInputError, match=match):
        cr.sweep(target, grid, out=tmp_path, **kw)
    assert not (tmp_path / "results.csv").exists()


def test_cli_sweep_writes_the_table_and_reports_failures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from crumple.cli import main

    rc = main(["sweep", "eol_crease", "--grid", "hold_time=0,100", "--grid", "friction=0,-1", "--set", "scale=0.25",
               "--frames", "6", "--out", str(tmp_path), "--workers", "2"])
    out, err = capsys.readouterr()
    assert rc == 1 and "4 runs (0 finished before, 2 ok, 2 failed)" in out and "friction must be" in err
    assert (tmp_path / "results.csv").exists() and (tmp_path / "results.parquet").exists()
    assert main(["sweep", "eol_crease", "--out", str(tmp_path)]) == 2  # no --grid
