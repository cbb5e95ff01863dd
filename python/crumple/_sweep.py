"""Parameter sweeps: one simulation per point of a grid, on this machine's
cores (a process pool) or on a Ray cluster (Ray core tasks), with one results
table.

Layout of ``out``::

    out/
      runs/0003-1f2e3d4c/        one folder per run (index, hash of its parameters)
        params.json              what the run was given
        status.json              ok or failed (with the error), wall time, its metrics
        <scene>/                 a built-in scene's frames, metrics.json, PNG, checkpoint.npz
      results.csv                one row per run: status, time, parameters, metrics
      results.parquet            the same table (needs pyarrow)

A rerun with the same ``out`` skips the runs whose ``status.json`` says ok
(resume); failed runs are tried again. A failed run is recorded with its
error and does not stop the sweep.

Threads: rayon sizes its pool once per process from ``RAYON_NUM_THREADS``,
which neither a process pool nor Ray sets, so every worker sets it before
its first run (the local pool's initializer, Ray's ``runtime_env``). CPU
results do not depend on the thread count, so the same grid gives the same
metrics through either executor.
"""

from __future__ import annotations

import concurrent.futures as cf
import csv
import hashlib
import itertools
import json
import math
import multiprocessing
import os
import shutil
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ._progress import progress as _progress_bar
from .errors import CrumpleError, InvalidInputError

__all__ = ["sweep", "grid_points", "parse_grid", "SweepResult", "Executor"]

Executor = Literal["local", "ray"]
Target = str | Callable[..., Any]

_STATUS = "status.json"
_PARAMS = "params.json"
#: Columns every row has, before the parameters and the metrics.
_FIXED = ("run", "status", "time_s", "threads", "error", "folder")


@dataclass(frozen=True)
class SweepResult:
    """What :func:`sweep` did: ``rows`` (one dict per run, in grid order,
    the columns of the results table), the table files and how many runs
    were skipped because an earlier sweep finished them."""

    out: Path
    rows: list[dict[str, Any]]
    csv: Path
    parquet: Path | None
    skipped: int = 0
    wall_s: float = 0.0
    columns: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[dict[str, Any]]:
        """The rows of the runs that raised."""
        return [r for r in self.rows if r["status"] != "ok"]


def grid_points(grid: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The runs of a grid: a mapping ``{name: [values]}`` gives every
    combination (the first name varies slowest), a sequence of mappings is
    taken as it is. Values must be JSON scalars (numbers, strings, booleans,
    None). Raises :class:`InvalidInputError` otherwise."""
    if isinstance(grid, Mapping):
        names = list(grid)
        axes = []
        for k in names:
            v = grid[k]
            if isinstance(v, (str, bytes)) or not isinstance(v, Sequence) or len(v) == 0:
                raise InvalidInputError(f"grid[{k!r}] must be a non-empty list of values; got {v!r}")
            axes.append(list(v))
        points = [dict(zip(names, combo, strict=True)) for combo in itertools.product(*axes)]
    elif isinstance(grid, Sequence) and not isinstance(grid, (str, bytes)):
        points = []
        for i, p in enumerate(grid):
            if not isinstance(p, Mapping):
                raise InvalidInputError(f"run {i} of the list is not a mapping of parameters: {p!r}")
            points.append(dict(p))
    else:
        raise InvalidInputError(f"a grid is a mapping of value lists or a list of mappings; got {type(grid).__name__}")
    if not points:
        raise InvalidInputError("the grid has no runs")
    for p in points:
        for k, v in p.items():
            if not isinstance(k, str) or not k.isidentifier():
                raise InvalidInputError(f"parameter names are identifiers (they become keyword options); got {k!r}")
            if not (v is None or isinstance(v, (bool, int, str)) or (isinstance(v, float) and math.isfinite(v))):
                raise InvalidInputError(f"parameter {k}={v!r}: values are finite numbers, strings, booleans or "
                                        "None (they go into JSON and the results table)")
    return points


def _config(target: Target, params: Mapping[str, Any], options: Mapping[str, Any],
            frames: int | None) -> dict[str, Any]:
    """Everything that decides a run's result: a finished run is reused
    only when all of it matches (a rerun with other options, frames or
    another target runs again)."""
    from . import __version__

    name = target if isinstance(target, str) else f"{getattr(target, '__module__', '?')}.{target.__qualname__}"
    # Numbers by value (hold_time=0 from the CLI and hold_time=0.0 from Python are one run).
    norm = {k: (float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v) for k, v in params.items()}
    return {"target": name, "params": norm, "options": json.loads(json.dumps(dict(options), default=str)),
            "frames": frames, "crumple": __version__}


def _run_id(index: int, config: Mapping[str, Any]) -> str:
    h = hashlib.sha1(json.dumps(config, sort_keys=True).encode()).hexdigest()[:8]
    return f"{index:04d}-{h}"


def _set_threads(threads: int) -> None:
    # rayon reads this when its global pool is first used in the process.
    os.environ["RAYON_NUM_THREADS"] = str(threads)


def _scalars(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """The table's view of a run's metrics: scalars as they are, a list of
    numbers by its last value (``name_last``); anything else is left to
    the run's metrics.json."""
    out: dict[str, Any] = {}
    for k, v in metrics.items():
        if v is None or isinstance(v, (bool, int, float, str)):
            out[k] = v
        elif isinstance(v, list) and v and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
            out[f"{k}_last"] = v[-1]
    return out


def _run_one(job: dict[str, Any]) -> dict[str, Any]:
    """One run (in a worker process or a Ray task): sets the thread count,
    runs the scene or function into its folder, writes ``status.json``;
    never raises for the run's own errors."""
    _set_threads(int(job["threads"]))
    params: dict[str, Any] = job["params"]
    status: dict[str, Any] = {"run": job["run"], "params": params, "config": job["config"]}
    folder = Path(job["folder"])
    t0 = time.perf_counter()
    try:
        from . import scenes  # after the thread count is set

        folder.mkdir(parents=True, exist_ok=True)
        target = job["target"]
        if isinstance(target, str):
            kw = dict(job["options"])
            kw.update(params)
            if job["frames"] is not None:
                kw["frames"] = job["frames"]
            scene_dir = scenes.run(target, out_dir=folder, checkpoint=True, **kw)
            metrics = json.loads((Path(scene_dir) / "metrics.json").read_text())
        else:
            got = target(out_dir=folder, **job["options"], **params)
            if isinstance(got, Mapping):
                # numpy scalars and arrays as JSON values: a fresh row and a
                # resumed one (read back from JSON) are then the same.
                metrics = json.loads(json.dumps(dict(got), default=_to_json))
                (folder / "metrics.json").write_text(json.dumps(metrics, indent=1))
            else:
                metrics = json.loads((Path(got) / "metrics.json").read_text())
        status.update(status="ok", error=None, metrics=metrics)
    except Exception as e:  # the run's own failure is data: record it, go on
        status.update(status="failed", error=f"{type(e).__name__}: {e}", metrics={},
                      traceback=traceback.format_exc(limit=8))
    status["time_s"] = time.perf_counter() - t0
    try:
        from . import _core

        status["threads"] = _core.num_threads()
        (folder / _STATUS).write_text(json.dumps(status, indent=1, default=_to_json))
    except Exception:  # the driver writes the status again from the returned dict
        status.setdefault("threads", job["threads"])
    return status


def _to_json(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def _init_local_worker(threads: int) -> None:
    _set_threads(threads)


def _finished(folder: Path, config: Mapping[str, Any]) -> dict[str, Any] | None:
    """The status of an earlier run of the same configuration that succeeded."""
    try:
        st = json.loads((folder / _STATUS).read_text())
    except (OSError, ValueError):
        return None
    if st.get("status") == "ok" and st.get("config") == json.loads(json.dumps(dict(config))):
        return dict(st)
    return None


def _failed_status(job: Mapping[str, Any], error: str) -> dict[str, Any]:
    """The status of a run whose worker died (the run could not say so itself)."""
    return {"run": job["run"], "params": job["params"], "config": job["config"], "status": "failed",
            "error": error, "metrics": {}, "time_s": None, "threads": job["threads"]}


def _local(jobs: list[dict[str, Any]], workers: int, threads: int) -> Iterator[dict[str, Any]]:
    # spawn: the parent already runs rayon threads, which a fork would copy
    # half-way; spawned workers start clean and set the thread count first.
    ctx = multiprocessing.get_context("spawn")
    pool = cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_local_worker,
                                  initargs=(threads,))
    futures = {pool.submit(_run_one, j): j for j in jobs}
    broken = False
    try:
        for f in cf.as_completed(futures):
            try:
                yield f.result()
            except cf.process.BrokenProcessPool:
                # A worker died (out of memory, a crash inside a run) or the
                # script has no `if __name__ == "__main__":` guard: the pool is
                # gone, so this and every run still pending fail with the reason.
                broken = True
                yield _failed_status(futures[f], _DIED)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        for p in list(getattr(pool, "_processes", {}).values()):
            p.terminate()
        raise
    pool.shutdown(wait=not broken, cancel_futures=True)


_DIED = ("the worker process died: out of memory, a crash in the run, or a script that calls crumple.sweep "
         "without `if __name__ == \"__main__\":` around it (the local executor's workers import the script again)")


def _ray(jobs: list[dict[str, Any]], workers: int | None, threads: int,
         address: str | None) -> Iterator[dict[str, Any]]:
    try:
        import ray  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError as e:
        raise InvalidInputError("executor='ray' needs Ray: pip install 'crumple[ray]'") from e
    started = not ray.is_initialized()
    if started:
        # address None starts a local Ray on this machine unless RAY_ADDRESS names a cluster.
        try:
            ray.init(address=address or os.environ.get("RAY_ADDRESS"), include_dashboard=False,
                     log_to_driver=False, configure_logging=False)
        except Exception as e:
            raise CrumpleError(f"Ray could not start or connect (address={address!r}): {type(e).__name__}: {e}") from e
    pending: dict[Any, dict[str, Any]] = {}
    try:
        cpus = float(ray.cluster_resources().get("CPU", 0.0))
        if threads > cpus:
            raise InvalidInputError(f"threads={threads} per run, but the Ray cluster has {cpus:g} CPUs; "
                                    "no task could be scheduled")
        task = ray.remote(_run_one).options(
            num_cpus=threads, runtime_env={"env_vars": {"RAYON_NUM_THREADS": str(threads)}})
        limit = workers or len(jobs)
        queue = list(jobs)
        while queue or pending:
            while queue and len(pending) < limit:
                job = queue.pop(0)
                pending[task.remote(job)] = job
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                job = pending.pop(ref)
                try:
                    yield ray.get(ref)
                except ray.exceptions.RayError as e:  # the task's worker died: a failed row
                    yield _failed_status(job, f"the Ray task failed: {type(e).__name__}: {e}")
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
        if started:
            ray.shutdown()


def _write_tables(out: Path, rows: list[dict[str, Any]]) -> tuple[list[str], Path, Path | None]:
    columns: list[str] = []
    for r in rows:
        for k in r:
            if k not in columns:
                columns.append(k)
    csv_path = out / "results.csv"
    with csv_path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k) for k in columns})
    try:
        import pyarrow as pa  # type: ignore[import-not-found, import-untyped, unused-ignore]
        import pyarrow.parquet as pq  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError:
        return columns, csv_path, None
    table = pa.table({k: _column([r.get(k) for r in rows]) for k in columns})
    pq_path = out / "results.parquet"
    pq.write_table(table, pq_path)
    return columns, csv_path, pq_path


def _column(values: list[Any]) -> list[Any]:
    """One Parquet column: a column mixing numbers and text (a metric that
    is a string in one run) is stored as text."""
    kinds = {type(v) for v in values if v is not None}
    if len(kinds) > 1 and not kinds <= {int, float}:
        return [None if v is None else str(v) for v in values]
    if kinds == {int, float}:
        return [None if v is None else float(v) for v in values]
    return values


def _row(status: Mapping[str, Any], folder: Path, out: Path) -> dict[str, Any]:
    params = dict(status["params"])
    row: dict[str, Any] = {"run": status["run"], "status": status["status"], "time_s": status.get("time_s"),
                           "threads": status.get("threads"), "error": status.get("error"),
                           "folder": str(folder.relative_to(out))}
    for k, v in params.items():
        row[k if k not in _FIXED else f"param.{k}"] = v
    for k, v in _scalars(status.get("metrics") or {}).items():
        row[k if k not in row else f"metric.{k}"] = v
    return row


def sweep(
    target: Target,
    grid: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]],
    *,
    out: str | os.PathLike[str],
    executor: Executor = "local",
    address: str | None = None,
    workers: int | None = None,
    threads: int | None = None,
    frames: int | None = None,
    options: Mapping[str, Any] | None = None,
    progress: bool | None = None,
) -> SweepResult:
    """Run ``target`` once per point of ``grid`` and collect one table.

    ``target`` is a built-in scene's name (:func:`crumple.scenes.names`;
    each run writes the scene's frames, metrics.json, PNG and a
    ``checkpoint.npz``) or a function ``fn(*, out_dir: Path, **params)``
    returning its metrics (a mapping of JSON values) or the folder of a
    ``metrics.json``; for the process pool and for Ray it must be
    importable (defined in a module, not in an interactive session).
    ``grid``: ``{name: [values]}`` for every combination or a list of
    ``{name: value}`` (see :func:`grid_points`); each point's values are
    passed as keyword options, on top of ``options`` (the same for every
    run); ``frames`` overrides a scene's frame count.

    ``executor``: ``"local"`` (a pool of ``workers`` processes on this
    machine; default one per core) or ``"ray"`` (one Ray core task per run;
    ``address`` or ``RAY_ADDRESS`` joins a cluster, neither starts a local
    Ray for the sweep and stops it after; ``workers`` caps the tasks in
    flight). ``threads``: rayon threads per run (default: the cores over
    the workers, at least 1; on Ray each task reserves that many CPUs).
    On a cluster, ``out`` should be storage every node sees; the table is
    written by this process either way.

    Returns a :class:`SweepResult`; writes ``out/results.csv`` and, with
    pyarrow installed, ``out/results.parquet``. Shows a progress bar of
    runs (``progress=None``: when stderr is a terminal). Raises
    :class:`InvalidInputError` for a bad grid, target or executor; a run
    that raises is a failed row, not an exception.
    """
    from . import scenes

    if isinstance(target, str):
        scenes.describe(target)  # unknown scene names fail here, before any run
    elif not callable(target):
        raise InvalidInputError(f"target must be a scene name or a function; got {type(target).__name__}")
    if executor not in ("local", "ray"):
        raise InvalidInputError(f"executor must be 'local' or 'ray'; got {executor!r}")
    points = grid_points(grid)
    opts = dict(options or {})
    for k in opts:
        if any(k in p for p in points):
            raise InvalidInputError(f"{k!r} is both a grid parameter and a fixed option")
    if frames is not None and (isinstance(frames, bool) or not isinstance(frames, int) or frames < 1):
        raise InvalidInputError(f"frames must be an integer >= 1; got {frames!r}")
    cores = os.cpu_count() or 1
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise InvalidInputError(f"workers must be an integer >= 1; got {workers!r}")
    n_workers = workers or (cores if executor == "local" else None)
    if threads is None:
        threads = max(1, cores // (n_workers or cores))
    elif isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InvalidInputError(f"threads must be an integer >= 1; got {threads!r}")
    root = Path(out)
    (root / "runs").mkdir(parents=True, exist_ok=True)

    t0 = time.perf_counter()
    statuses: dict[str, dict[str, Any]] = {}
    folders: dict[str, Path] = {}
    jobs: list[dict[str, Any]] = []
    ids: list[str] = []
    for i, p in enumerate(points):
        config = _config(target, p, opts, frames)
        rid = _run_id(i, config)
        ids.append(rid)
        folder = root / "runs" / rid
        folders[rid] = folder
        done = _finished(folder, config)
        if done is not None:
            statuses[rid] = done
            continue
        if folder.exists():  # a failed or unfinished attempt: start clean
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        (folder / _PARAMS).write_text(json.dumps(config, indent=1))
        jobs.append(dict(run=rid, folder=str(folder), params=p, config=json.loads(json.dumps(config)),
                         target=target, options=opts, frames=frames, threads=threads))
    skipped = len(points) - len(jobs)
    name = target if isinstance(target, str) else getattr(target, "__name__", "sweep")
    try:
        with _progress_bar(len(points), f"sweep {name}", unit="run", enabled=progress, initial=skipped) as bar:
            if jobs:
                results = (_local(jobs, min(n_workers or 1, len(jobs)), threads) if executor == "local"
                           else _ray(jobs, n_workers, threads, address))
                for st in results:
                    statuses[st["run"]] = st
                    # A cluster's worker may not share this disk: the driver writes the status too.
                    (folders[st["run"]] / _STATUS).write_text(json.dumps(st, indent=1, default=_to_json))
                    bar.update(1)
    finally:
        # Interrupted or not, the table holds every run so far (the rest as not run).
        for j in jobs:
            statuses.setdefault(j["run"], {**_failed_status(j, "not run: the sweep was interrupted"),
                                           "status": "not run"})
        rows = [_row(statuses[rid], folders[rid], root) for rid in ids]
        columns, csv_path, pq_path = _write_tables(root, rows)
    return SweepResult(out=root, rows=rows, csv=csv_path, parquet=pq_path, skipped=skipped,
                       wall_s=time.perf_counter() - t0, columns=columns)


# Python's spellings of the JSON literals: ``--set wrinkles=False`` used to
# pass the text "False", which a scene read as true; and Python's infinity
# (``--set yield_strain=inf``, the elastic reference of ``pbd_shot``), which
# JSON spells ``Infinity``.
_PY_LITERALS = {"True": True, "False": False, "None": None, "inf": math.inf, "-inf": -math.inf}


def parse_value(text: str) -> Any:
    """A command-line value: read as JSON when it parses (numbers,
    true/false, null, lists) or as Python's ``True``, ``False``, ``None``,
    ``inf`` and ``-inf``, else kept as text (``--set``, ``--grid``)."""
    if text in _PY_LITERALS:
        return _PY_LITERALS[text]
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _parse_values(text: str) -> list[Any]:
    """``V1,V2,...`` of the CLI's ``--grid KEY=V1,V2``, each by :func:`parse_value`."""
    out: list[Any] = []
    for v in text.split(","):
        v = v.strip()
        if not v:
            raise InvalidInputError(f"empty value in {text!r}")
        out.append(parse_value(v))
    return out


def parse_grid(items: Sequence[str]) -> dict[str, list[Any]]:
    """The CLI's ``--grid KEY=V1,V2 ...`` as a grid mapping."""
    grid: dict[str, list[Any]] = {}
    for item in items:
        key, sep, values = item.partition("=")
        if not sep or not key:
            raise InvalidInputError(f"--grid expects KEY=V1,V2,...; got {item!r}")
        if key in grid:
            raise InvalidInputError(f"--grid {key} given twice")
        grid[key] = _parse_values(values)
    return grid

