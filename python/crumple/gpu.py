"""GPU primitives with their CPU twins: exclusive prefix sum and stable radix sort.

These are the building blocks of the GPU solvers (particle binning for MPM and
PBD). They are exposed for testing and benchmarking; both backends give
bit-identical results.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from . import _core
from .backend import resolve_backend
from .errors import InvalidInputError

__all__ = ["scan_exclusive", "radix_sort_pairs"]

U32 = npt.NDArray[np.uint32]


def _u32(a: Any, name: str) -> U32:
    arr = np.asarray(a)
    if arr.ndim != 1:
        raise InvalidInputError(f"{name} must be 1-D; got shape {arr.shape}")
    if arr.dtype != np.uint32:
        if arr.dtype.kind not in "iu" or (arr.size and (arr.min() < 0 or arr.max() > 0xFFFFFFFF)):
            raise InvalidInputError(f"{name} must hold unsigned 32-bit integers; got dtype {arr.dtype}")
        arr = arr.astype(np.uint32)
    return np.ascontiguousarray(arr)


def scan_exclusive(values: npt.ArrayLike, *, backend: str = "cpu") -> U32:
    """Exclusive prefix sum of a 1-D uint32 array (wrapping on overflow):
    ``out[i] = values[0] + ... + values[i-1]``, ``out[0] = 0``."""
    return _core.scan_exclusive_u32(_u32(values, "values"), resolve_backend(backend))


def radix_sort_pairs(keys: npt.ArrayLike, values: npt.ArrayLike, *, backend: str = "cpu",
                     key_bits: int = 32) -> tuple[U32, U32]:
    """Stable sort of ``(key, value)`` pairs by key (uint32 each); equal keys keep
    their input order. ``key_bits`` (1..32) skips passes when keys are small."""
    k, v = _u32(keys, "keys"), _u32(values, "values")
    if k.shape != v.shape:
        raise InvalidInputError(f"keys and values must have the same length; got {k.shape[0]} and {v.shape[0]}")
    if not (isinstance(key_bits, int) and 1 <= key_bits <= 32):
        raise InvalidInputError(f"key_bits must be an integer in 1..32; got {key_bits!r}")
    if key_bits < 32 and k.size and int(k.max()) >> key_bits:
        raise InvalidInputError(f"a key exceeds key_bits={key_bits}: max key {int(k.max())}")
    return _core.radix_sort_pairs_u32(k, v, resolve_backend(backend), key_bits)
