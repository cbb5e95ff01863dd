"""crumple: simulate materials that keep what happens to them.

Submodules: :mod:`crumple.geometry` (meshes, strands, sampling),
:mod:`crumple.colliders` (kinematic obstacles), :mod:`crumple.io` (files),
:mod:`crumple.viz` (polyscope pictures), :mod:`crumple.mpm`,
:mod:`crumple.cloth`, :mod:`crumple.pbd` and :mod:`crumple.eol` (the solvers), :mod:`crumple.frames` (what a frame
shows, read by every exporter and viewer), :mod:`crumple.backend` (CPU/GPU
choice), :mod:`crumple.gpu` (GPU primitives), :mod:`crumple.scenes`;
:func:`crumple.sweep` runs a scene or function over a parameter grid.
"""

from __future__ import annotations

from . import _core
from .errors import (
    BackendUnavailable,
    CheckpointError,
    CrumpleError,
    InvalidInputError,
    MeshError,
    SimulationDiverged,
    SolverError,
)

__version__: str = _core.version()

from . import backend, cloth, colliders, eol, errors, frames, geometry, gpu, io, mpm, pbd, scenes  # noqa: E402
from ._sweep import SweepResult, grid_points, sweep  # noqa: E402

__all__ = [
    "__version__",
    "backend",
    "cloth",
    "colliders",
    "eol",
    "frames",
    "geometry",
    "gpu",
    "io",
    "mpm",
    "pbd",
    "scenes",
    "sweep",
    "grid_points",
    "SweepResult",
]
__all__ += errors.__all__


def __getattr__(name: str) -> object:
    # viz imports polyscope, which is heavy and optional: load it on first use.
    if name == "viz":
        import importlib

        return importlib.import_module(".viz", __name__)
    raise AttributeError(f"module 'crumple' has no attribute {name!r}")
