"""Plumbing shared by the benchmark scripts in ``benches/``.

Every benchmark measures in worker subprocesses (fresh thread pools and JIT
caches, a fixed thread count) that print one ``RESULT {json}`` line; the
parent collects those lines, derives ratios and writes ``bench-out/NAME.json``.
This module holds that machinery once:

- paths and settings: ``ROOT``, ``OUT``, ``PEERS``, ``THREADS``, ``RESULT_TAG``;
- the worker side: :func:`worker_main` (prints the ``RESULT`` line, turns an
  exception into ``{"available": False, "reason": ...}``), :func:`time_steps`
  (warm-up + timed window, :class:`Timing`), :func:`cpu_seconds`,
  :func:`import_crumple`;
- the parent side: :func:`worker_env`, :func:`run_worker` (never raises),
  :func:`ratio`, :func:`write_json`, :func:`crumple_info`, and
  :func:`peer_python` (a pinned virtual environment for a peer framework that
  cannot share the project's).

A failed measurement always has the shape ``{"available": False, "reason": str}``;
a successful one carries ``"available": True``.

Scripts run as ``python benches/X.py`` (``benches/`` is ``sys.path[0]``) or are
imported by ``run_all.py``; worker processes get ``benches/`` and ``python/``
on ``PYTHONPATH``. Nothing here imports crumple at module level, so peer
workers running in another interpreter can import this module too.
"""

from __future__ import annotations

import json
import math
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
"""The repository root."""
BENCHES = ROOT / "benches"
OUT = ROOT / "bench-out"
"""Where every benchmark writes its JSON."""
PEERS = OUT / "peers"
"""Virtual environments of peer frameworks (:func:`peer_python`)."""
THREADS = 2
"""Worker threads for crumple (rayon) and for peers that take a thread count."""
RESULT_TAG = "RESULT "
"""Prefix of the worker's one result line on stdout."""

Result = dict[str, Any]


def unavailable(reason: str) -> Result:
    """The failure shape of every measurement: ``{"available": False, "reason": reason}``."""
    return {"available": False, "reason": reason}


# ---------------------------------------------------------------- worker side


def import_crumple() -> ModuleType:
    """Import crumple from the source tree (``python/``, with the built extension) and return it."""
    src = str(ROOT / "python")
    if src not in sys.path:
        sys.path.insert(0, src)
    import crumple

    return crumple


def cpu_seconds() -> float:
    """User + system CPU seconds of this process so far, all threads."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


@dataclass(frozen=True)
class Timing:
    """A timed window of steps (all times in seconds)."""

    warmup_steps: int
    warmup_s: float
    """Wall time of the warm-up steps (JIT compilation, first touch, shader upload)."""
    steps: int
    wall_s: float
    """Wall time of the timed window, the ``on_step`` calls included."""
    cpu_s: float
    """CPU seconds of this process (all threads) over the timed window."""
    per_step_s: tuple[float, ...]
    """Wall time of each timed ``step()`` call alone."""

    @property
    def s_per_step(self) -> float:
        """Mean wall seconds per step over the window."""
        return self.wall_s / self.steps

    @property
    def median_s_per_step(self) -> float:
        """Median of the per-step wall times, s: less sensitive to other work on the machine."""
        xs = sorted(self.per_step_s)
        mid = len(xs) // 2
        return xs[mid] if len(xs) % 2 else 0.5 * (xs[mid - 1] + xs[mid])

    @property
    def cpu_utilisation(self) -> float:
        """CPU seconds per wall second over the window: the cores actually kept busy."""
        return self.cpu_s / self.wall_s

    def rates(self, items: int, unit: str = "particle_steps") -> dict[str, float]:
        """Throughput of ``items`` (particles, vertices) advanced each step, per second:
        ``{unit}_per_s`` (mean over the window), ``median_{unit}_per_s`` (from the
        median step) and ``{unit}_per_cpu_s`` (per CPU second: steadier than the
        wall-clock rates when other jobs share the cores)."""
        return {
            f"{unit}_per_s": items * self.steps / self.wall_s,
            f"median_{unit}_per_s": items / self.median_s_per_step,
            f"{unit}_per_cpu_s": items * self.steps / self.cpu_s,
        }


def time_steps(step: Callable[[], object], *, warmup: int, steps: int,
               on_step: Callable[[], object] | None = None,
               after_warmup: Callable[[], object] | None = None) -> Timing:
    """Run ``warmup`` steps (timed apart, as ``warmup_s``), then ``after_warmup()``
    (outside both timings: read counters or memory there), then the window of
    ``steps`` timed steps, calling ``on_step()`` after each (inside the window: keep
    it to cheap bookkeeping). Per-step times are exact only if ``step`` returns
    once its work is done (synchronise a device inside it)."""
    if steps < 1:
        raise ValueError(f"steps must be at least 1; got {steps}")
    t0 = time.perf_counter()
    for _ in range(warmup):
        step()
    warmup_s = time.perf_counter() - t0
    if after_warmup is not None:
        after_warmup()
    per_step: list[float] = []
    cpu0, t0 = cpu_seconds(), time.perf_counter()
    for _ in range(steps):
        ts = time.perf_counter()
        step()
        per_step.append(time.perf_counter() - ts)
        if on_step is not None:
            on_step()
    wall = time.perf_counter() - t0
    return Timing(warmup_steps=warmup, warmup_s=warmup_s, steps=steps, wall_s=wall,
                  cpu_s=cpu_seconds() - cpu0, per_step_s=tuple(per_step))


def worker_main(measure: Callable[[], Mapping[str, Any]]) -> int:
    """Body of a worker process: run ``measure()`` and print its result as one
    ``RESULT {json}`` line, with ``"available": True`` unless it says otherwise.
    An exception becomes ``{"available": False, "reason": "Type: message"}`` (a
    peer that fails is reported, not fatal). Returns the exit status (0)."""
    try:
        result: Result = {"available": True, **measure()}
    except Exception as e:
        result = unavailable(f"{type(e).__name__}: {e}")
    print(RESULT_TAG + json.dumps(result), flush=True)
    return 0


# ---------------------------------------------------------------- parent side


def worker_env(threads: int = THREADS, **extra: str) -> dict[str, str]:
    """Environment for a worker process: this one's, plus ``threads`` rayon and
    OpenMP threads, numpy's BLAS pool at 1 (it only idles in these benches; keep
    it off the measured cores), ``benches/`` and ``python/`` ahead on
    ``PYTHONPATH``, taichi's log at ``warn`` unless set, then ``extra``."""
    env = dict(os.environ)
    env["RAYON_NUM_THREADS"] = str(threads)
    env["OMP_NUM_THREADS"] = str(threads)
    env["OPENBLAS_NUM_THREADS"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(
        [str(BENCHES), str(ROOT / "python")] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.setdefault("TI_LOG_LEVEL", "warn")
    env.update(extra)
    return env


def _last_line(*texts: str | bytes | None) -> str:
    for t in texts:
        if isinstance(t, bytes):
            t = t.decode(errors="replace")
        lines = (t or "").strip().splitlines()
        if lines:
            return lines[-1]
    return "no output"


def run_worker(cmd: Sequence[str], *, timeout_s: float, label: str,
               env: Mapping[str, str] | None = None) -> Result:
    """Run ``cmd`` (from the repository root, in ``env``, default :func:`worker_env`)
    and return the dict of its last ``RESULT`` line. Never raises: a timeout, a
    crash or a missing line gives ``{"available": False, "reason": ...}``.
    ``label`` is echoed to stderr as progress."""
    print(f"+ {label}", file=sys.stderr, flush=True)
    try:
        proc = subprocess.run(list(cmd), cwd=ROOT, env=dict(env) if env is not None else worker_env(),
                              capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return unavailable(f"did not finish within {timeout_s:.0f} s")
    except OSError as e:
        return unavailable(f"cannot start worker: {e}")
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_TAG):
            try:
                result = json.loads(line[len(RESULT_TAG):])
            except ValueError as e:
                return unavailable(f"unreadable RESULT line: {e}")
            return dict(result) if isinstance(result, dict) else unavailable(f"RESULT is not an object: {result!r}")
    return unavailable(f"worker exited with status {proc.returncode}: {_last_line(proc.stderr, proc.stdout)}")


def ratio(a: Mapping[str, Any], b: Mapping[str, Any], key: str, b_key: str | None = None) -> float | None:
    """``a[key] / b[b_key or key]`` (e.g. s/step over s/step: a unitless factor),
    or None unless neither result says ``"available": False`` and both values are
    finite numbers, the divisor non-zero."""
    if a.get("available") is False or b.get("available") is False:
        return None
    x, y = _number(a.get(key)), _number(b.get(b_key or key))
    return x / y if x is not None and y else None


def _number(v: object) -> float | None:
    """``v`` as a float if it is a finite int or float (not a bool), else None."""
    if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
        return float(v)
    return None


def write_json(name: str, data: object) -> Path:
    """Write ``data`` to ``bench-out/NAME.json`` (indented) and return the path."""
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / (name if name.endswith(".json") else f"{name}.json")
    path.write_text(json.dumps(data, indent=2))
    return path


def crumple_info(gpu: bool = True) -> dict[str, Any]:
    """What this process's crumple says about itself; never raises. Keys:
    ``version`` (str or None), ``threads`` (its rayon pool here: workers set
    their own), ``adapter`` (the GPU adapter's name, or None) and
    ``adapter_info`` (the adapter's full description, or None). With ``gpu``
    false the adapter is not probed (no device start-up)."""
    info: dict[str, Any] = {"version": None, "threads": None, "adapter": None, "adapter_info": None}
    try:
        cr = import_crumple()
        info["version"] = str(cr.__version__)
        info["threads"] = int(cr._core.num_threads())
        if gpu and cr.backend.gpu_available():
            info["adapter_info"] = dict(cr.backend.gpu_adapter())
            info["adapter"] = info["adapter_info"].get("name")
    except Exception as e:  # the extension may not be built when a script runs alone
        info["reason"] = f"{type(e).__name__}: {e}"
    return info


def peer_python(name: str, requirements: Sequence[str], *,
                timeout_s: float = 1200.0) -> tuple[str | None, str | None]:
    """The interpreter of a virtual environment ``bench-out/peers/NAME`` holding
    ``requirements`` (pinned pip specifiers), for a peer that cannot share the
    project's environment. Created with ``python -m venv`` and ``pip install`` on
    first use, reused while its marker file lists the same requirements (and the
    same base Python). Returns ``(path, None)``, or ``(None, reason)`` if it cannot
    be made; never raises."""
    venv = PEERS / name
    py = venv / "bin" / "python"
    marker = venv / "bench-requirements.txt"
    want = "\n".join([f"# python {sys.version.split()[0]}", *requirements]) + "\n"
    try:
        if py.exists() and marker.exists() and marker.read_text() == want:
            return str(py), None
        print(f"+ peer_python: {name}: {' '.join(requirements)}", file=sys.stderr, flush=True)
        PEERS.mkdir(parents=True, exist_ok=True)
        made = subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)],
                              capture_output=True, text=True, timeout=300)
        if made.returncode != 0:
            return None, f"python -m venv failed: {_last_line(made.stderr, made.stdout)}"
        pip = subprocess.run([str(py), "-m", "pip", "install", "--disable-pip-version-check", "-q", *requirements],
                             capture_output=True, text=True, timeout=timeout_s)
        if pip.returncode != 0:
            return None, f"pip install {' '.join(requirements)} failed: {_last_line(pip.stderr, pip.stdout)}"
        marker.write_text(want)
        return str(py), None
    except subprocess.TimeoutExpired as e:
        return None, f"installing {name} did not finish within {e.timeout:.0f} s"
    except OSError as e:
        return None, f"cannot make the {name} environment: {e}"
