"""The exceptions crumple raises.

Every error crumple raises on purpose derives from :class:`CrumpleError`.
The Rust core raises these same classes (it imports this module), so
``except crumple.InvalidInputError`` catches a bad array whether Python or
Rust noticed it.
"""

from __future__ import annotations

__all__ = [
    "CrumpleError",
    "InvalidInputError",
    "MeshError",
    "CheckpointError",
    "BackendUnavailable",
    "SimulationDiverged",
    "SolverError",
]


class CrumpleError(Exception):
    """Base class of every error crumple raises on purpose."""


class InvalidInputError(CrumpleError, ValueError):
    """An argument is not acceptable: NaN values, wrong shape or dtype, a
    negative radius, ``dt <= 0``, an unknown name. The message says which
    argument and how to fix it. Also a :class:`ValueError`."""


class MeshError(CrumpleError, ValueError):
    """A mesh failed validation (out-of-range indices, degenerate or duplicate
    faces, non-manifold edges, ...). The message names the offending indices.
    Also a :class:`ValueError`."""


class CheckpointError(InvalidInputError):
    """A checkpoint file that cannot be loaded: missing, truncated, corrupt,
    not a crumple checkpoint, or one written for another module. The message
    names the file and what is wrong."""


class BackendUnavailable(CrumpleError):
    """The requested compute backend cannot be used (no GPU adapter, device
    lost, a device limit exceeded). The message gives the reason."""


class SimulationDiverged(CrumpleError, ArithmeticError):
    """The simulation produced non-finite or exploding state.

    The simulation is left as it was at the start of the failing step
    (rolled back), so you can lower the time step or a stiffness and call
    ``advance`` again. Attributes: ``step`` (the step count it was left at)
    and ``time`` (its time, s); ``None`` when unknown. The message says what
    to change."""

    def __init__(self, message: str = "", step: int | None = None, time: float | None = None) -> None:
        super().__init__(message)
        self.step = None if step is None else int(step)
        self.time = None if time is None else float(time)


class SolverError(CrumpleError):
    """A linear or QP solve inside a step failed to converge."""
