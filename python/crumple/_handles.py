"""Scripted handles shared by every module's object handles: the keyframes
``add_handle`` takes and the path ``rotate_handle`` builds, checked once here."""

from __future__ import annotations

import abc
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
    try:
        rot = (np.repeat(np.eye(3)[None], k, axis=0) if rotations is None
               else np.ascontiguousarray(np.asarray(rotations, dtype=np.float64)))
    except (TypeError, ValueError) as e:
        raise InvalidInputError(f"rotations must be a ({k}, 3, 3) array of numbers; got {rotations!r}") from e
    if tr.shape != (k, 3) or rot.shape != (k, 3, 3):
        raise InvalidInputError(
            f"translations must be ({k}, 3) and rotations ({k}, 3, 3) for {k} times; got {tr.shape}, {rot.shape}")
    if not np.isfinite(rot).all():
        raise InvalidInputError("rotations contain NaN or inf")
    return ts, tr, rot


#: Largest total turn of one rotate_handle, rad (about 1,600 turns: 6,400 keyframes).
MAX_ANGLE = 1e4


def rotation_path(axis: Any, angle: float, duration: float) -> tuple[list[float], F64]:
    """Keyframes turning by ``angle`` rad about ``axis`` over ``duration`` s at
    constant angular speed: keys at most 90° apart, because keyframe rotation
    follows the shortest arc between keys."""
    dur = positive(duration, "duration")
    a = finite(angle, "angle")
    rotation(axis, 0.0)  # a bad axis fails here, before any keyframe is made
    # One key per quarter turn: a limit keeps the key list bounded (a fuzzed
    # angle of 2e15 rad asked for 1e15 keys and hung).
    if abs(a) > MAX_ANGLE:
        raise InvalidInputError(f"angle must be within ±{MAX_ANGLE:g} rad ({MAX_ANGLE / (2 * np.pi):.0f} turns); "
                                f"got {angle!r}; for a longer spin add several handles one after the other")
    nseg = max(1, int(np.ceil(abs(a) / (np.pi / 2))))
    times = [dur * i / nseg for i in range(nseg + 1)]
    rots = np.stack([rotation(axis, np.degrees(a * i / nseg)) for i in range(nseg + 1)])
    return times, rots


class Scripted(abc.ABC):
    """The scripted-handle methods of an object handle, the same in every
    module. The simulation keeps every handle's record in ``sim._handles``
    (in the core's id order, for checkpoints); the object keeps the ids of
    its own (``_handle_ids``), so handle numbers are per object.

    A class using it provides ``_sim`` (with ``_s``, ``_handles`` and
    ``time``), ``index``, ``num_points``, ``positions`` and
    ``_add_core_handle``."""

    _sim: Any
    index: int
    _handle_ids: list[int]

    @property
    @abc.abstractmethod
    def num_points(self) -> int:
        """Number of vertices of the object (provided by the object class)."""

    @abc.abstractmethod
    def _add_core_handle(self, idx: npt.NDArray[np.int64], pivot: tuple[float, float, float], times: list[float],
                         translations: F64, rotations: F64, stiffness: float | None) -> int:
        """Create the handle in the core; returns its core id."""

    def add_handle(self, indices: npt.ArrayLike, *, times: Sequence[float], translations: npt.ArrayLike | None = None,
                   rotations: npt.ArrayLike | None = None, pivot: Any = (0.0, 0.0, 0.0),
                   stiffness: float | None = None) -> int:
        """Pin ``indices`` (ints or a boolean mask) and move them rigidly
        through keyframed poses relative to now: at ``times[k]`` (s from now)
        the vertices are at ``rotations[k] @ (X − pivot) + pivot +
        translations[k]`` (m). ``stiffness`` (N/m): the pin springs where the
        module's pins are springs (cloth; default its ``handle_stiffness``);
        None where pins are exact (mpm). Returns the handle's number on this
        object (for :meth:`release_handle` and :meth:`freeze_handle`)."""
        from ._checks import as_vec3, vertex_indices

        ts, tr, rot = keyframes(times, translations, rotations)
        idx = vertex_indices(indices, self.num_points)
        if idx.size == 0:
            raise InvalidInputError("a handle needs at least one vertex")
        pv = as_vec3(pivot, "pivot")
        reference = np.asarray(getattr(self, "positions"), dtype=np.float64)[idx]
        hid = self._add_core_handle(idx, pv, ts, tr, rot, None if stiffness is None else positive(stiffness,
                                                                                                     "stiffness"))
        self._sim._handles.append(dict(id=hid, object=self.index, indices=idx, reference=reference, pivot=pv,
                                       times=ts, translations=tr, rotations=rot, start=self._sim.time,
                                       status="active"))
        self._handle_ids.append(len(self._sim._handles) - 1)
        return len(self._handle_ids) - 1

    def rotate_handle(self, indices: npt.ArrayLike, *, axis: Any, angle: float, duration: float,
                      pivot: Any = (0.0, 0.0, 0.0)) -> int:
        """Pin ``indices`` and rotate them by ``angle`` rad about ``axis``
        through ``pivot`` (m) over ``duration`` s at constant angular speed;
        they then stay there (the usual "twist a ring" motion)."""
        times, rots = rotation_path(axis, angle, duration)
        return self.add_handle(indices, times=times, rotations=rots, pivot=pivot)

    def _handle(self, handle: int) -> dict[str, Any]:
        from ._checks import index

        rec: dict[str, Any] = self._sim._handles[self._handle_ids[index(handle, "handle", len(self._handle_ids))]]
        return rec

    def release_handle(self, handle: int) -> None:
        """Release handle ``handle`` (a number from :meth:`add_handle`): its vertices move freely."""
        h = self._handle(handle)
        self._sim._s.release_handle(h["id"])
        h["status"] = "released"

    def freeze_handle(self, handle: int) -> None:
        """Stop handle ``handle`` where it is; its vertices stay pinned there."""
        h = self._handle(handle)
        self._sim._s.freeze_handle(h["id"])
        h["status"] = "frozen"


_HANDLE_ARRAYS = ("indices", "reference", "translations", "rotations")


def save(records: list[dict[str, Any]], arrays: dict[str, Any]) -> list[dict[str, Any]]:
    """Put the handles' arrays into ``arrays`` (``handle{k}_*``) and return
    their JSON part for the checkpoint's metadata."""
    meta = []
    for k, h in enumerate(records):
        for key in _HANDLE_ARRAYS:
            arrays[f"handle{k}_{key}"] = np.asarray(h[key])
        meta.append({"object": h["object"], "pivot": list(h["pivot"]), "times": h["times"], "start": h["start"],
                     "status": h["status"]})
    return meta


def restore(sim: Any, meta: list[dict[str, Any]], arrays: dict[str, Any], core_restore: Any) -> None:
    """Recreate saved handles in ``sim``: ``core_restore(object, arrays,
    meta) -> core id`` makes each one in the core."""
    for k, h in enumerate(meta):
        a = {key: arrays[f"handle{k}_{key}"] for key in _HANDLE_ARRAYS}
        obj = sim._objects[int(h["object"])]
        hid = int(core_restore(obj, a, h))
        sim._handles.append(dict(id=hid, object=obj.index, indices=a["indices"], reference=a["reference"],
                                 pivot=tuple(h["pivot"]), times=list(h["times"]), translations=a["translations"],
                                 rotations=a["rotations"], start=float(h["start"]), status=h["status"]))
        obj._handle_ids.append(len(sim._handles) - 1)
