"""Choosing the compute backend: ``"cpu"`` (rayon), ``"gpu"`` (wgpu) or ``"auto"``.

This is the one place where a backend name is resolved; every solver calls
:func:`resolve_backend`.

- ``"cpu"`` always works.
- ``"gpu"`` uses the first wgpu adapter (a hardware GPU, else a software one
  such as Mesa lavapipe) and raises :class:`BackendUnavailable` with the
  reason when there is none.
- ``"auto"`` uses a *hardware* GPU when one exists and otherwise falls back to
  the CPU, saying so once (a software rasteriser such as lavapipe is slower
  than the native CPU backend, so ``auto`` never picks it).
"""

from __future__ import annotations

import functools
import os
import stat
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Literal, TypedDict

from . import _core
from ._checks import choice
from .errors import BackendUnavailable

__all__ = ["Backend", "AdapterInfo", "resolve_backend", "gpu_adapter", "gpu_available", "info"]

Backend = Literal["cpu", "gpu"]


class AdapterInfo(TypedDict):
    """What wgpu reports about the adapter crumple uses."""

    name: str
    device_type: str  # "DiscreteGpu", "IntegratedGpu", "VirtualGpu", "Cpu" or "Other"
    backend: str  # "Vulkan", "Metal", "Dx12", ...
    driver: str


def _ensure_runtime_dir() -> None:
    """Give this process a private ``XDG_RUNTIME_DIR`` when it has no usable one.

    On Linux without a desktop session (servers, containers, CI) the variable
    is unset, and libwayland, which wgpu's adapter probe and Mesa's EGL load
    to look for a display, prints "XDG_RUNTIME_DIR is invalid or not set"
    for every command. A ``0700`` folder of our own under the temp dir, keyed
    by the user id, is what the variable promises; with it the probe finds no
    display quietly. A set, valid value is left alone.
    """
    if os.name != "posix" or sys.platform == "darwin":
        return
    current = os.environ.get("XDG_RUNTIME_DIR", "")
    if current and os.path.isabs(current) and os.path.isdir(current) and os.access(current, os.W_OK | os.X_OK):
        return
    uid = os.getuid()
    d = Path(tempfile.gettempdir()) / f"crumple-runtime-{uid}"
    try:
        d.mkdir(mode=0o700, exist_ok=True)
        st = d.lstat()
        # Someone else's folder (or a link) under a shared /tmp is not ours to use.
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid:
            return
        if stat.S_IMODE(st.st_mode) != 0o700:
            d.chmod(0o700)
    except OSError:
        return
    os.environ["XDG_RUNTIME_DIR"] = str(d)


@functools.cache
def _probe() -> tuple[AdapterInfo | None, str]:
    _ensure_runtime_dir()
    try:
        return _core.gpu_adapter_info(), ""  # type: ignore[return-value]
    except BackendUnavailable as e:
        return None, str(e)


def gpu_adapter() -> AdapterInfo:
    """Return the GPU adapter crumple would use, or raise
    :class:`BackendUnavailable` explaining why there is none."""
    info, reason = _probe()
    if info is None:
        raise BackendUnavailable(reason)
    return info


def gpu_available() -> bool:
    """True when some wgpu adapter (hardware or software) can be used."""
    return _probe()[0] is not None


_warned_auto = False


def resolve_backend(backend: str) -> Backend:
    """Resolve ``"auto" | "cpu" | "gpu"`` to ``"cpu"`` or ``"gpu"``.

    Raises :class:`InvalidInputError` for an unknown name and
    :class:`BackendUnavailable` for ``"gpu"`` without an adapter.
    """
    global _warned_auto
    b = choice(backend, "backend", ("auto", "cpu", "gpu"))
    if b == "cpu":
        return "cpu"
    info, reason = _probe()
    if b == "gpu":
        if info is None:
            raise BackendUnavailable(f"backend='gpu' was requested but no GPU adapter can be used: {reason}")
        return "gpu"
    if info is not None and info["device_type"] != "Cpu":
        return "gpu"
    if not _warned_auto:
        _warned_auto = True
        why = reason if info is None else f"the only adapter is the software renderer {info['name']!r}"
        warnings.warn(f"crumple: backend='auto' uses the CPU backend ({why})", RuntimeWarning, stacklevel=2)
    return "cpu"


def info() -> dict[str, object]:
    """Version, CPU threads and the GPU adapter (or why there is none): what
    ``crumple info`` prints."""
    from . import __version__

    adapter, reason = _probe()
    return {
        "version": __version__,
        "threads": _core.num_threads(),
        "gpu_adapter": adapter,
        "gpu_unavailable_reason": reason or None,
    }
