"""Scripted handles shared by every module's object handles: the keyframes
``add_handle`` takes and the path ``rotate_handle`` builds, checked once here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ._checks import as_points, finite, positive
from .colliders import rotation
from .errors import InvalidInputError

F64 = npt.NDArray[np.float64]


def keyframes(times: Sequence[float], translations: npt.ArrayLike | None,
              rotations: npt.ArrayLike | None) -> tuple[list[float], F64, F64]:
    """``times`` (s from now), ``translations (K, 3)`` m (default 0) and
    ``rotations (K, 3, 3)`` (default identity), checked for matching counts."""
    try:
        ts = [finite(t, "times") for t in times]
    except TypeError as e:
        raise InvalidInputError(f"times must be a sequence of numbers; got {times!r}") from e
    k = len(ts)
    if k == 0:
        raise InvalidInputError("a handle needs at least one keyframe time")
    tr = np.zeros((k, 3)) if translations is None else as_points(translations, "translations")
    rot = (np.repeat(np.eye(3)[None], k, axis=0) if rotations is None
           else np.ascontiguousarray(np.asarray(rotations, dtype=np.float64)))
    if tr.shape != (k, 3) or rot.shape != (k, 3, 3):
        raise InvalidInputError(
            f"translations must be ({k}, 3) and rotations ({k}, 3, 3) for {k} times; got {tr.shape}, {rot.shape}")
    if not np.isfinite(rot).all():
        raise InvalidInputError("rotations contain NaN or inf")
    return ts, tr, rot


def rotation_path(axis: Any, angle: float, duration: float) -> tuple[list[float], F64]:
    """Keyframes turning by ``angle`` rad about ``axis`` over ``duration`` s at
    constant angular speed: keys at most 90° apart, because keyframe rotation
    follows the shortest arc between keys."""
    dur = positive(duration, "duration")
    a = finite(angle, "angle")
    nseg = max(1, int(np.ceil(abs(a) / (np.pi / 2))))
    times = [dur * i / nseg for i in range(nseg + 1)]
    rots = np.stack([rotation(axis, np.degrees(a * i / nseg)) for i in range(nseg + 1)])
    return times, rots
