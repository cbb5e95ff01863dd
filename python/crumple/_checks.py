"""Argument checks shared by the Python API.

Arrays are checked here (shape, dtype kind, finiteness) before they cross into
Rust, so the message can name the Python argument. The Rust core checks the
content again (index ranges, mesh validity) and never panics.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import InvalidInputError

__all__ = [
    "as_array",
    "as_points",
    "as_faces",
    "as_vec3",
    "positive",
    "non_negative",
    "finite",
    "real",
    "positive_int",
    "in_range",
    "flag",
    "rotation_matrix",
    "choice",
    "index",
    "vertex_indices",
    "velocity_field",
]


def _describe(a: Any) -> str:
    if isinstance(a, np.ndarray):
        return f"array of shape {a.shape} and dtype {a.dtype}"
    return f"{type(a).__name__}"


def as_array(a: Any, name: str, dtype: Any = np.float64, what: str = "numbers") -> npt.NDArray[Any]:
    """``np.asarray(a, dtype)``, with what numpy refuses (text, dicts,
    ragged lists, complex into real, numbers out of range) raised as
    :class:`InvalidInputError` naming ``name``."""
    if isinstance(a, (str, bytes, dict)):
        raise InvalidInputError(f"{name} must be {what}; got {_describe(a)}")
    try:
        arr = np.asarray(a)
        if arr.dtype.kind in "cOUSV" or (arr.dtype.kind == "M"):
            raise TypeError(f"dtype {arr.dtype}")
        return arr if dtype is None else np.asarray(arr, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as e:
        raise InvalidInputError(f"{name} must be {what}; got {_describe(a)} ({e})") from e


def as_points(
    a: Any, name: str, *, dtype: Any = np.float64, allow_empty: bool = False, check_finite: bool = True
) -> npt.NDArray[Any]:
    """Return ``a`` as a C-contiguous ``(N, 3)`` float array, or raise
    :class:`InvalidInputError` naming ``name``. ``check_finite=False`` leaves
    the NaN check to the caller (meshes report it as a :class:`MeshError`)."""
    try:
        arr = np.asarray(a)
    except Exception as e:  # ragged lists and the like
        raise InvalidInputError(f"{name} must be an (N, 3) array of floats; got {_describe(a)} ({e})") from e
    if arr.dtype.kind not in "fiu":
        raise InvalidInputError(
            f"{name} must be an (N, 3) array of real numbers; got dtype {arr.dtype}. "
            f"Convert it with np.asarray({name}, dtype=np.float64)."
        )
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise InvalidInputError(f"{name} must have shape (N, 3); got shape {arr.shape}")
    if arr.shape[0] == 0 and not allow_empty:
        raise InvalidInputError(f"{name} is empty; give at least one point")
    arr = np.ascontiguousarray(arr, dtype=dtype)
    if not check_finite:
        return arr
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        idx = np.flatnonzero(bad)
        raise InvalidInputError(
            f"{name} has non-finite values (NaN or inf) in row(s) {idx[:8].tolist()}"
            f"{' ...' if idx.size > 8 else ''} ({idx.size} in all); remove or fix them"
        )
    return arr


def as_faces(a: Any, name: str = "faces") -> npt.NDArray[np.int64]:
    """Return ``a`` as a C-contiguous ``(M, 3)`` int64 array of vertex indices."""
    arr = np.asarray(a)
    if arr.dtype.kind == "f":
        if arr.size and not np.all(np.isfinite(arr) & (arr == np.round(arr))):
            raise InvalidInputError(f"{name} must hold integer vertex indices; got non-integer floats")
    elif arr.dtype.kind not in "iu":
        raise InvalidInputError(f"{name} must be an (M, 3) array of integer vertex indices; got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise InvalidInputError(f"{name} must have shape (M, 3) (triangles); got shape {arr.shape}")
    if arr.dtype.kind == "u" and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
        raise InvalidInputError(f"{name} has an index too large for int64")
    return np.ascontiguousarray(arr, dtype=np.int64)


def as_vec3(v: Any, name: str) -> tuple[float, float, float]:
    """Return a finite 3-vector as a tuple of floats."""
    if np.iscomplexobj(v):
        raise InvalidInputError(f"{name} must be three real numbers; got complex {v!r}")
    try:
        arr = np.asarray(v, dtype=np.float64).reshape(-1)
    except Exception as e:
        raise InvalidInputError(f"{name} must be three numbers; got {v!r}") from e
    if arr.shape != (3,):
        raise InvalidInputError(f"{name} must be three numbers (x, y, z); got {v!r}")
    if not np.isfinite(arr).all():
        raise InvalidInputError(f"{name} must be finite; got {v!r}")
    return (float(arr[0]), float(arr[1]), float(arr[2]))


def real(x: Any, name: str) -> float:
    """``x`` as a float (inf and NaN pass: the caller decides), or
    :class:`InvalidInputError` when it is not a number."""
    if isinstance(x, (str, bytes)):
        raise InvalidInputError(f"{name} must be a number; got {x!r}")
    try:
        return float(x)
    except (TypeError, ValueError, OverflowError) as e:
        raise InvalidInputError(f"{name} must be a number a float can hold; got {x!r}") from e


def finite(x: Any, name: str) -> float:
    """Return ``x`` as a finite float."""
    f = real(x, name)
    if not math.isfinite(f):
        raise InvalidInputError(f"{name} must be finite; got {x!r}")
    return f


def positive(x: Any, name: str) -> float:
    """Return ``x`` as a finite float > 0."""
    f = finite(x, name)
    if f <= 0.0:
        raise InvalidInputError(f"{name} must be > 0; got {x!r}")
    return f


def non_negative(x: Any, name: str) -> float:
    """Return ``x`` as a finite float >= 0."""
    f = finite(x, name)
    if f < 0.0:
        raise InvalidInputError(f"{name} must be >= 0; got {x!r}")
    return f


def positive_int(x: Any, name: str, minimum: int = 1) -> int:
    """Return ``x`` as an int >= ``minimum``."""
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise InvalidInputError(f"{name} must be an integer >= {minimum}; got {x!r}")
    if int(x) < minimum:
        raise InvalidInputError(f"{name} must be an integer >= {minimum}; got {x!r}")
    if int(x) > _INT_MAX:
        raise InvalidInputError(f"{name} must be at most {_INT_MAX} (a 64-bit integer); got {x!r}")
    return int(x)


# The largest integer the core takes (i64; counts, seeds and indices).
_INT_MAX = 2**63 - 1


def choice(x: Any, name: str, options: Sequence[str]) -> str:
    """Return ``x`` if it is one of ``options`` (case-insensitive)."""
    if not isinstance(x, str) or x.lower() not in options:
        raise InvalidInputError(f"unknown {name} {x!r}; expected one of {', '.join(repr(o) for o in options)}")
    return x.lower()


def index(x: Any, name: str, count: int | None = None) -> int:
    """Return ``x`` as an index ``0 <= x < count`` (``count=None``: no upper
    bound). Floats such as ``3.7`` and negative numbers are refused here
    rather than truncated or turned into an ``OverflowError`` by the binding."""
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise InvalidInputError(f"{name} must be a non-negative integer; got {x!r}")
    i = int(x)
    if i < 0:
        raise InvalidInputError(f"{name} must be >= 0; got {i}")
    if i > _INT_MAX:
        raise InvalidInputError(f"{name} must be at most {_INT_MAX}; got {i}")
    if count is not None and i >= count:
        raise InvalidInputError(f"{name} {i} is out of range: there are {count} (valid: 0..{count - 1})")
    return i


def vertex_indices(a: Any, count: int, name: str = "indices") -> npt.NDArray[np.int64]:
    """Vertex indices of an object with ``count`` vertices: integers in
    ``[0, count)`` or a boolean mask of length ``count``; returns int64 (K,)."""
    arr = as_array(a, name, None, "integer vertex indices or a boolean mask")
    if arr.dtype == bool:
        m = arr.reshape(-1)
        if m.size != count:
            raise InvalidInputError(f"{name} as a boolean mask needs one entry per vertex ({count}); got {m.size}")
        return np.flatnonzero(m).astype(np.int64)
    arr = arr.reshape(-1)
    if (arr.size and arr.dtype.kind not in "iu") or arr.dtype.kind == "c":
        raise InvalidInputError(f"{name} must be integer vertex indices or a boolean mask; got dtype {arr.dtype}")
    out = np.ascontiguousarray(arr, dtype=np.int64)
    if out.size and (out.min() < 0 or out.max() >= count):
        bad = out[(out < 0) | (out >= count)]
        raise InvalidInputError(
            f"{name} has out-of-range vertex indices {bad[:8].tolist()}: the object has {count} vertices (0..{count - 1})"
        )
    return out


def velocity_field(v: Any, count: int, name: str = "velocity") -> npt.NDArray[np.float64]:
    """One velocity (m/s) for every vertex or particle: a 3-vector (all the
    same) or a ``(count, 3)`` array. Returns ``(count, 3)`` float64."""
    try:
        arr = np.asarray(v, dtype=np.float64) if not isinstance(v, np.ndarray) else v
    except (TypeError, ValueError) as e:
        raise InvalidInputError(f"{name} must be one 3-vector or a ({count}, 3) array of numbers; got {v!r}") from e
    if np.ndim(arr) == 1 or (np.ndim(arr) == 2 and np.shape(arr) == (1, 3)):
        return np.tile(np.asarray(as_vec3(arr, name)), (count, 1))
    out = as_points(arr, name, allow_empty=count == 0)
    if out.shape[0] != count:
        raise InvalidInputError(f"{name} must be one 3-vector or shape ({count}, 3); got shape {out.shape}")
    return out


def flag(x: Any, name: str) -> bool:
    """``x`` if it is True or False (numpy bools too); 0, 1 and strings are refused."""
    if not isinstance(x, (bool, np.bool_)):
        raise InvalidInputError(f"{name} must be True or False; got {x!r}")
    return bool(x)


def in_range(x: Any, name: str, lo: float, hi: float, *, lo_open: bool = False, hi_open: bool = False,
             hint: str = "") -> float:
    """``x`` as a float if finite and in the interval from ``lo`` to ``hi``
    (closed unless ``lo_open``/``hi_open``); ``hint`` is added to the message."""
    f = finite(x, name)
    ok_lo = f > lo if lo_open else f >= lo
    ok_hi = f < hi if hi_open else f <= hi
    if not (ok_lo and ok_hi):
        interval = f"{'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"
        raise InvalidInputError(f"{name} must be in {interval}{hint}; got {x!r}")
    return f


# How far RᵀR may be from I (max abs entry) and det R from 1: the same
# tolerance as the core's (crumple-core validate.rs ROTATION_TOLERANCE), so a
# rotation that passed float32 is accepted here and there alike.
ROTATION_TOLERANCE = 1e-4


def rotation_matrix(r: Any, name: str) -> npt.NDArray[np.float64]:
    """A proper rotation ``(3, 3)`` (orthonormal, det +1, within
    :data:`ROTATION_TOLERANCE`) as a new float64 array."""
    try:
        m = np.array(r, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as e:
        raise InvalidInputError(f"{name} must be a 3x3 matrix of numbers; got {_describe(r)}") from e
    if m.shape != (3, 3) or not np.isfinite(m).all():
        raise InvalidInputError(f"{name} must be a finite 3x3 matrix; got shape {m.shape}")
    if np.abs(m.T @ m - np.eye(3)).max() > ROTATION_TOLERANCE or abs(np.linalg.det(m) - 1.0) > ROTATION_TOLERANCE:
        raise InvalidInputError(f"{name} must be a proper rotation (orthonormal, det +1); "
                                "build one with crumple.colliders.rotation(axis, degrees)")
    return m
