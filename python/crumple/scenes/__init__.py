"""Built-in scenes that reproduce the papers' figures at laptop size.

Each scene is registered with :func:`register` and run by :func:`run` (the
CLI's ``crumple run SCENE``). A scene writes its frames and a rendered PNG
into an output folder and returns that folder. ``scale`` is the knob toward
the paper's resolution (1.0 = the laptop default).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InvalidInputError

__all__ = ["SceneFn", "register", "names", "describe", "default_frames", "run"]

SceneFn = Callable[..., Path]


@dataclass(frozen=True)
class _Scene:
    name: str
    description: str
    frames: int
    fn: SceneFn


_REGISTRY: dict[str, _Scene] = {}


def register(name: str, description: str, *, frames: int) -> Callable[[SceneFn], SceneFn]:
    """Decorator adding a scene function ``fn(*, out_dir, frames, backend, scale, progress) -> Path``."""

    def deco(fn: SceneFn) -> SceneFn:
        _REGISTRY[name] = _Scene(name, description, frames, fn)
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
    **options: Any,
) -> Path:
    """Run scene ``name``, writing frames under ``out_dir / name``; returns that folder.
    ``options`` are the scene's own keyword options (see its function)."""
    s = _get(name)
    if frames is not None and frames < 1:
        raise InvalidInputError(f"frames must be >= 1; got {frames}")
    if not scale > 0:
        raise InvalidInputError(f"scale must be > 0; got {scale}")
    return s.fn(out_dir=Path(out_dir) / name, frames=frames or s.frames, backend=backend, scale=scale,
                progress=progress, **options)


from . import mpm_scenes  # noqa: E402  (registers the MPM scenes)
from . import cloth_scenes  # noqa: E402
