"""Built-in scenes that reproduce the papers' figures at laptop size.

Each scene is registered with :func:`register` and run by :func:`run` (the
CLI's ``crumple run SCENE``). A scene writes its frames and a rendered PNG
into an output folder and returns that folder. ``scale`` is the knob toward
the paper's resolution (1.0 = the laptop default).
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import io
from ..errors import InvalidInputError

__all__ = ["SceneFn", "register", "names", "describe", "default_frames", "run", "FORMATS", "frame_writer",
           "SceneStream"]

#: Frame formats a scene writes: ``"ply"`` (a folder of PLY frames with a
#: manifest) or ``"usd"`` (one ``.usdc`` next to the scene's folder).
FORMATS = ("ply", "usd")

FRAME_RATE = 24.0
"""Frames per second of the built-in scenes' frame stream."""


@dataclass(frozen=True)
class _Output:
    format: str = "ply"
    checkpoint: bool = False


# The output settings of the scene being run (set by :func:`run`, read by the
# scenes' harnesses through :func:`frame_writer`), so scene functions keep
# their own keyword options only.
_OUTPUT: ContextVar[_Output] = ContextVar("crumple_scene_output", default=_Output())


class SceneStream:
    """A scene's frame stream: :meth:`write` passes each frame to the writer
    the run asked for; closing it without an error also writes the
    simulation's checkpoint (``out_dir / "checkpoint.npz"``) when the run
    asked for one (``run(..., checkpoint=True)``, as sweeps do). A context
    manager like the writers."""

    def __init__(self, writer: io.PlyWriter | io.UsdWriter, sim: Any, checkpoint: Path | None) -> None:
        if checkpoint is not None and sim is None:
            raise InvalidInputError("this run asks for a checkpoint, but the scene's frame stream was opened "
                                    "without its simulation (frame_writer(..., sim=sim))")
        self._writer, self._sim, self._checkpoint = writer, sim, checkpoint

    def write(self, frame: Any) -> int:
        """Write one :class:`crumple.frames.Frame`; its index."""
        return self._writer.write(frame)

    def close(self, *, failed: bool = False) -> None:
        """Finish the stream (the checkpoint first, unless ``failed``)."""
        try:
            if not failed and self._checkpoint is not None and self._sim is not None:
                self._sim.save(self._checkpoint)
        finally:
            self._writer.close()

    def __enter__(self) -> SceneStream:
        return self

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        self.close(failed=exc_type is not None)


def frame_writer(out_dir: Path, name: str, *, fps: float = FRAME_RATE, sim: Any = None) -> SceneStream:
    """The frame stream of a scene: PLY frames with a manifest in ``out_dir``,
    or ``out_dir.parent / f"{name}.usdc"`` when the run asked for USD; ``sim``
    (the scene's simulation) is saved as ``out_dir / "checkpoint.npz"`` when
    the stream closes, if the run asked for a checkpoint."""
    out = _OUTPUT.get()
    writer: io.PlyWriter | io.UsdWriter
    if out.format == "usd":
        writer = io.UsdWriter(Path(out_dir).parent / f"{name}.usdc", fps=fps)
    else:
        writer = io.PlyWriter(out_dir, fps=fps)
    return SceneStream(writer, sim, Path(out_dir) / "checkpoint.npz" if out.checkpoint else None)

SceneFn = Callable[..., Path]


@dataclass(frozen=True)
class _Scene:
    name: str
    description: str
    frames: int
    fn: SceneFn
    backends: tuple[str, ...]


_REGISTRY: dict[str, _Scene] = {}


def register(name: str, description: str, *, frames: int,
             backends: tuple[str, ...] = ("cpu", "gpu")) -> Callable[[SceneFn], SceneFn]:
    """Decorator adding a scene function ``fn(*, out_dir, frames, backend, scale, progress) -> Path``
    that runs on ``backends`` ("auto" picks among them)."""

    def deco(fn: SceneFn) -> SceneFn:
        _REGISTRY[name] = _Scene(name, description, frames, fn, backends)
        return fn

    return deco


def names() -> list[str]:
    """The registered scene names, sorted."""
    return sorted(_REGISTRY)


def describe(name: str) -> str:
    """One line about scene ``name``."""
    return _get(name).description


def default_frames(name: str) -> int:
    """How many frames scene ``name`` runs when ``frames`` is not given."""
    return _get(name).frames


def _get(name: str) -> _Scene:
    if name not in _REGISTRY:
        known = ", ".join(names()) or "none yet"
        raise InvalidInputError(f"unknown scene {name!r}; built-in scenes: {known}")
    return _REGISTRY[name]


def run(
    name: str,
    *,
    out_dir: Path,
    frames: int | None = None,
    backend: str = "auto",
    scale: float = 1.0,
    progress: bool = False,
    format: str = "ply",
    checkpoint: bool = False,
    **options: Any,
) -> Path:
    """Run scene ``name``, writing its picture and metrics under ``out_dir /
    name`` and its frames through the frame stream in ``format`` (``"ply"``:
    PLY frames and ``manifest.json`` in that folder; ``"usd"``: ``out_dir /
    f"{name}.usdc"``); with ``checkpoint``, the final state as
    ``checkpoint.npz`` in the scene's folder (``Simulation.load`` reads it);
    returns the scene's folder. ``options`` are the scene's own keyword
    options (see its function)."""
    s = _get(name)
    if frames is not None and (isinstance(frames, bool) or not isinstance(frames, int) or frames < 1):
        raise InvalidInputError(f"frames must be an integer >= 1; got {frames!r}")
    if not scale > 0:
        raise InvalidInputError(f"scale must be > 0; got {scale}")
    if backend != "auto" and backend not in s.backends:
        raise InvalidInputError(f"scene {name!r} runs on {' or '.join(s.backends)} only; got backend={backend!r}")
    if backend == "auto" and s.backends == ("cpu",):
        backend = "cpu"
    if format not in FORMATS:
        raise InvalidInputError(f"unknown frame format {format!r}; use one of {', '.join(FORMATS)}")
    token = _OUTPUT.set(_Output(format=format, checkpoint=bool(checkpoint)))
    try:
        return s.fn(out_dir=Path(out_dir) / name, frames=frames or s.frames, backend=backend, scale=scale,
                    progress=progress, **options)
    finally:
        _OUTPUT.reset(token)


from . import mpm_scenes  # noqa: E402  (registers the MPM scenes)
from . import cloth_scenes  # noqa: E402
from . import cloth_contact_scenes  # noqa: E402
from . import pbd_scenes  # noqa: E402
from . import eol_scenes  # noqa: E402
