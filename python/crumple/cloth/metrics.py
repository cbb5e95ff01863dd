"""Wrinkle metrics of spec persistent_wrinkles §8 and the triangle-intersection count."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .. import _core
from .._checks import as_points
from ..errors import InvalidInputError


def wrinkle_metrics(
    angles: npt.ArrayLike,
    rest_length: npt.ArrayLike,
    plastic: npt.ArrayLike | None = None,
    anchor: npt.ArrayLike | None = None,
    mask: npt.ArrayLike | None = None,
) -> dict[str, float]:
    """Wrinkle metrics of spec §8 over hinges (optionally only where ``mask``).

    ``M_abs`` = length-weighted mean |θ| (rad); ``M_sharp`` = 99th percentile
    of |θ|; ``M_max`` = max |θ|; ``M_plastic`` and ``M_anchor`` = length-
    weighted mean |θ_p| and |θ_a| (rad). Inputs are per-hinge arrays (H,).
    """
    th = np.abs(np.asarray(angles, dtype=np.float64).reshape(-1))
    w = np.asarray(rest_length, dtype=np.float64).reshape(-1)
    if th.shape != w.shape:
        raise InvalidInputError(f"angles {th.shape} and rest_length {w.shape} must have the same length")
    sel = np.ones(th.shape, bool) if mask is None else np.asarray(mask, bool).reshape(-1)
    if sel.shape != th.shape:
        raise InvalidInputError(f"mask must have one entry per hinge ({th.size}); got {sel.size}")
    if not sel.any():
        raise InvalidInputError("the mask selects no hinge")
    ws = w[sel]

    def mean(a: npt.ArrayLike | None) -> float:
        if a is None:
            return float("nan")
        v = np.abs(np.asarray(a, dtype=np.float64).reshape(-1))[sel]
        return float(np.sum(ws * v) / np.sum(ws))

    return {
        "M_abs": mean(th),
        "M_sharp": float(np.percentile(th[sel], 99)),
        "M_max": float(th[sel].max()),
        "M_plastic": mean(plastic),
        "M_anchor": mean(anchor),
    }


def count_triangle_intersections(positions: npt.ArrayLike, faces: npt.ArrayLike) -> int:
    """Number of pairs of non-adjacent triangles that intersect (cloth–cloth
    penetrations). ``positions (N, 3)``, ``faces (F, 3)``."""
    from .._checks import as_faces

    return int(_core.count_triangle_intersections(as_points(positions, "positions"), as_faces(faces)))
