"""What one frame of a simulation shows: the stream every exporter and viewer reads.

A simulation's ``sim.frame()`` returns a :class:`Frame`: the time and, by
name, every simulated object (a :class:`FrameMesh`, :class:`FramePoints` or
:class:`FrameCurves`) and every collider (a :class:`FrameCollider` with its
pose). :mod:`crumple.io` writes frames (PLY sequences, USD) and reads them
back as frames; :mod:`crumple.viz` shows and renders them. Nothing
downstream of a frame knows which solver made it.

All parts are frozen dataclasses whose arrays are validated, converted to
the documented dtype, copied and made read-only when the part is built, so
a frame is a snapshot that later steps cannot change.

Units are SI (m, s); y is up.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Union

import numpy as np
import numpy.typing as npt

from ._checks import finite, rotation_matrix
from .errors import InvalidInputError

__all__ = [
    "Frame",
    "FrameMesh",
    "FramePoints",
    "FrameCurves",
    "FrameCollider",
    "FrameObject",
    "collider_part",
    "check_name",
    "unique_name",
]

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]

# Names become file names (``cloth_00012.ply``) and USD prim and primvar
# names, which must be identifiers; checking here keeps every writer simple
# and the error early.
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def unique_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name_1``, ``name_2``, ... : the first not in ``taken``
    (objects and colliders of one simulation share one name space)."""
    if name not in taken:
        return name
    k = 1
    while f"{name}_{k}" in taken:
        k += 1
    return f"{name}_{k}"


def check_name(name: Any, what: str = "object") -> str:
    """Return ``name`` if it can name a part of a frame (letters, digits and
    ``_``, not starting with a digit), else raise
    :class:`~crumple.InvalidInputError`. Solvers call this when an object or
    collider is added, so a bad name fails there rather than at export."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise InvalidInputError(
            f"{what} name {name!r} is not usable: names become file and USD prim names, so use letters, "
            "digits and '_' and do not start with a digit (e.g. 'cloth_1')"
        )
    return name


def _set(obj: object, **values: Any) -> None:
    """Fill the fields of a frozen dataclass from its own ``__init__``."""
    for k, v in values.items():
        object.__setattr__(obj, k, v)


def _frozen(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
    a.setflags(write=False)
    return a


def _points(value: Any, what: str) -> F64:
    """An ``(N, 3)`` finite float64 copy, read-only."""
    try:
        a = np.array(value, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as e:
        raise InvalidInputError(f"{what} must be a numeric array of shape (N, 3); got {type(value).__name__}") from e
    if a.ndim != 2 or a.shape[1] != 3:
        raise InvalidInputError(f"{what} must have shape (N, 3); got {a.shape}")
    if not np.isfinite(a).all():
        bad = int(np.flatnonzero(~np.isfinite(a).all(axis=1))[0])
        raise InvalidInputError(f"{what} must be finite; row {bad} is {a[bad].tolist()}")
    return _frozen(np.ascontiguousarray(a))


def _faces(value: Any, n: int, what: str) -> I64:
    """An ``(F, 3)`` int64 copy with every index in ``[0, n)``, read-only."""
    a = np.asarray(value)
    if a.size == 0:
        a = a.reshape(0, 3)
    if a.ndim != 2 or a.shape[1] != 3:
        raise InvalidInputError(f"{what} must have shape (F, 3); got {a.shape}")
    if a.dtype.kind not in "iu":
        raise InvalidInputError(f"{what} must hold integers (vertex indices); got dtype {a.dtype}")
    f = np.array(a, dtype=np.int64, copy=True)
    if f.size and (f.min() < 0 or f.max() >= n):
        bad = int(np.flatnonzero(((f < 0) | (f >= n)).any(axis=1))[0])
        raise InvalidInputError(f"{what}: face {bad} {f[bad].tolist()} indexes outside the {n} vertices")
    return _frozen(np.ascontiguousarray(f))


def _radii(value: Any, n: int, what: str) -> F64:
    """``(n,)`` non-negative finite float64 radii; a scalar is broadcast."""
    try:
        a = np.array(value, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as e:
        raise InvalidInputError(f"{what} must be numbers (m); got {type(value).__name__}") from e
    if a.ndim == 0:
        a = np.full(n, float(a))
    if a.shape != (n,):
        raise InvalidInputError(f"{what} must have shape ({n},) (one radius per point, m) or be one number; "
                                f"got {a.shape}")
    if not (np.isfinite(a).all() and (a >= 0).all()):
        raise InvalidInputError(f"{what} must be finite and >= 0 (m)")
    return _frozen(a)


def _data(value: Any, n: int, what: str, per: str, *, vectors: bool = True) -> dict[str, F64]:
    """Named per-element arrays: each ``(n,)`` or ``(n, 3)``, finite, float64."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{what} must be a dict from a name to an array; got {type(value).__name__}")
    out: dict[str, F64] = {}
    for key, arr in value.items():
        check_name(key, f"{what}")
        try:
            a = np.array(arr, dtype=np.float64, copy=True)
        except (TypeError, ValueError) as e:
            raise InvalidInputError(f"{what}[{key!r}] must be a numeric array") from e
        shapes = f"({n},) or ({n}, 3)" if vectors else f"({n},)"
        if not (a.shape == (n,) or (vectors and a.shape == (n, 3))):
            raise InvalidInputError(f"{what}[{key!r}] must have shape {shapes} (one value per {per}); got {a.shape}")
        if not np.isfinite(a).all():
            raise InvalidInputError(f"{what}[{key!r}] must be finite")
        out[key] = _frozen(np.ascontiguousarray(a))
    return out


@dataclass(frozen=True, eq=False, init=False, repr=False)
class FrameMesh:
    """A triangle mesh in world space (a cloth, a skinned body surface).

    Attributes
    ----------
    positions : (N, 3) float64, m, world space.
    faces : (F, 3) int64 vertex indices, counter-clockwise seen from the
        front.
    vertex_data : dict from a name to ``(N,)`` or ``(N, 3)`` float64, one
        value per vertex (e.g. ``"plastic_angle"`` rad, ``"speed"`` m/s).
    face_data : dict from a name to ``(F,)`` float64, one value per face.
    """

    kind: ClassVar[str] = "mesh"
    positions: F64
    faces: I64
    vertex_data: dict[str, F64]
    face_data: dict[str, F64]

    def __init__(self, positions: npt.ArrayLike, faces: npt.ArrayLike,
                 vertex_data: Mapping[str, npt.ArrayLike] | None = None,
                 face_data: Mapping[str, npt.ArrayLike] | None = None) -> None:
        p = _points(positions, "FrameMesh.positions")
        f = _faces(faces, len(p), "FrameMesh.faces")
        _set(self, positions=p, faces=f,
             vertex_data=_data(vertex_data, len(p), "FrameMesh.vertex_data", "vertex"),
             face_data=_data(face_data, len(f), "FrameMesh.face_data", "face", vectors=False))

    def __repr__(self) -> str:
        return (f"FrameMesh({len(self.positions)} vertices, {len(self.faces)} faces, "
                f"vertex_data={list(self.vertex_data)}, face_data={list(self.face_data)})")


@dataclass(frozen=True, eq=False, init=False, repr=False)
class FramePoints:
    """Particles drawn as balls (sand, snow, the material points of a solid).

    Attributes
    ----------
    positions : (N, 3) float64, m, world space.
    radii : (N,) float64, m, the radius each point is drawn with (a single
        number is broadcast).
    point_data : dict from a name to ``(N,)`` or ``(N, 3)`` float64, one value
        per point.
    """

    kind: ClassVar[str] = "points"
    positions: F64
    radii: F64
    point_data: dict[str, F64]

    def __init__(self, positions: npt.ArrayLike, radii: npt.ArrayLike,
                 point_data: Mapping[str, npt.ArrayLike] | None = None) -> None:
        p = _points(positions, "FramePoints.positions")
        _set(self, positions=p, radii=_radii(radii, len(p), "FramePoints.radii"),
             point_data=_data(point_data, len(p), "FramePoints.point_data", "point"))

    def __repr__(self) -> str:
        return f"FramePoints({len(self.positions)} points, point_data={list(self.point_data)})"


@dataclass(frozen=True, eq=False, init=False, repr=False)
class FrameCurves:
    """Polyline strands (hair, yarn), all curves' points back to back.

    Attributes
    ----------
    positions : (N, 3) float64, m, world space.
    offsets : (C + 1,) int64; curve ``c`` is ``positions[offsets[c]:offsets[c + 1]]``,
        ``offsets[0] == 0``, ``offsets[-1] == N``, each curve at least 2 points.
    radii : (N,) float64, m, the strand radius at each point (a single number
        is broadcast).
    point_data : dict from a name to ``(N,)`` or ``(N, 3)`` float64, one value
        per point.
    """

    kind: ClassVar[str] = "curves"
    positions: F64
    offsets: I64
    radii: F64
    point_data: dict[str, F64]

    def __init__(self, positions: npt.ArrayLike, offsets: npt.ArrayLike, radii: npt.ArrayLike,
                 point_data: Mapping[str, npt.ArrayLike] | None = None) -> None:
        p = _points(positions, "FrameCurves.positions")
        o = np.asarray(offsets)
        if o.ndim != 1 or o.dtype.kind not in "iu" or len(o) < 1:
            raise InvalidInputError(f"FrameCurves.offsets must be a 1-D integer array (C + 1,); "
                                    f"got {o.dtype} {o.shape}")
        o = np.array(o, dtype=np.int64, copy=True)
        if o[0] != 0 or o[-1] != len(p):
            raise InvalidInputError(
                f"FrameCurves.offsets must start at 0 and end at the number of points {len(p)}; "
                f"got {int(o[0])} ... {int(o[-1])}")
        if len(o) > 1 and (np.diff(o) < 2).any():
            c = int(np.flatnonzero(np.diff(o) < 2)[0])
            raise InvalidInputError(f"FrameCurves.offsets: curve {c} has {int(o[c + 1] - o[c])} points; "
                                    "each curve needs at least 2")
        _set(self, positions=p, offsets=_frozen(o), radii=_radii(radii, len(p), "FrameCurves.radii"),
             point_data=_data(point_data, len(p), "FrameCurves.point_data", "point"))

    def __repr__(self) -> str:
        return (f"FrameCurves({self.num_curves} curves, {len(self.positions)} points, "
                f"point_data={list(self.point_data)})")

    @property
    def num_curves(self) -> int:
        """Number of curves ``C``."""
        return len(self.offsets) - 1

    @property
    def segments(self) -> I64:
        """``(K, 2)`` int64 point-index pairs of every segment of every curve."""
        o = self.offsets
        per_curve = np.diff(o) - 1  # segments of each curve
        total = int(per_curve.sum())
        # Index of each segment within its curve, then shifted to the curve's start.
        first = np.repeat(np.cumsum(per_curve) - per_curve, per_curve)
        a = np.repeat(o[:-1], per_curve) + (np.arange(total) - first)
        return np.stack([a, a + 1], axis=1).astype(np.int64)


@dataclass(frozen=True, eq=False, init=False, repr=False)
class FrameCollider:
    """A collider's surface in its own (local) frame and its current pose.

    World positions are ``rotation @ local + translation``; the local shape
    does not change while the collider moves, so writers store it once and
    the pose per frame.

    Attributes
    ----------
    vertices : (V, 3) float64, m, in the collider's local frame.
    faces : (F, 3) int64 vertex indices.
    rotation : (3, 3) float64, a proper rotation (local → world).
    translation : (3,) float64, m, where the local origin is in the world.
    """

    kind: ClassVar[str] = "collider"
    vertices: F64
    faces: I64
    rotation: F64
    translation: F64

    def __init__(self, vertices: npt.ArrayLike, faces: npt.ArrayLike, rotation: npt.ArrayLike | None = None,
                 translation: npt.ArrayLike | None = None) -> None:
        v = _points(vertices, "FrameCollider.vertices")
        f = _faces(faces, len(v), "FrameCollider.faces")
        r = np.eye(3) if rotation is None else rotation_matrix(rotation, "FrameCollider.rotation")
        t = np.zeros(3) if translation is None else np.array(translation, dtype=np.float64, copy=True).reshape(-1)
        if t.shape != (3,) or not np.isfinite(t).all():
            raise InvalidInputError(f"FrameCollider.translation must be 3 finite numbers (m); got {t.shape}")
        _set(self, vertices=v, faces=f, rotation=_frozen(r), translation=_frozen(t))

    def __repr__(self) -> str:
        return (f"FrameCollider({len(self.vertices)} vertices, {len(self.faces)} faces, "
                f"translation={self.translation.tolist()})")

    def world_vertices(self) -> F64:
        """``(V, 3)`` float64 vertex positions in the world, m."""
        return self.vertices @ self.rotation.T + self.translation

    def matrix(self) -> F64:
        """The ``4x4`` local → world transform (column vectors: ``world = M @ [p, 1]``)."""
        m = np.eye(4)
        m[:3, :3] = self.rotation
        m[:3, 3] = self.translation
        return m


FrameObject = Union[FrameMesh, FramePoints, FrameCurves]
_OBJECT_TYPES = (FrameMesh, FramePoints, FrameCurves)


@dataclass(frozen=True, eq=False, init=False, repr=False)
class Frame:
    """Everything one frame shows.

    Attributes
    ----------
    time : float, s, simulated time of the frame.
    objects : dict from a name to a :class:`FrameMesh`, :class:`FramePoints`
        or :class:`FrameCurves`, in the order they were added.
    colliders : dict from a name to a :class:`FrameCollider`.
    stats : dict from a name to a float: the solver's figures for the step
        that ended at this frame, as its ``sim.stats()`` gives them (counts,
        residuals and that step's seconds per solver stage, e.g. eol's
        ``time_cd``, ``time_rm``, ``time_mf``, ``time_vi``, the paper's
        Table 1 buckets); empty where a module reports none (mpm) and
        before the simulation (made or loaded) took a step. A figure may be
        NaN (a PLY run's manifest stores it as null).

    Names are unique across ``objects`` and ``colliders`` and are identifiers
    (letters, digits, ``_``), because they become file and USD prim names;
    ``stats`` names are identifiers too (they become USD attribute names).
    """

    time: float
    objects: dict[str, FrameObject]
    colliders: dict[str, FrameCollider]
    stats: dict[str, float]

    def __init__(self, time: float, objects: Mapping[str, FrameObject] | None = None,
                 colliders: Mapping[str, FrameCollider] | None = None,
                 stats: Mapping[str, float] | None = None) -> None:
        t = finite(time, "Frame.time (s)")
        if stats is not None and not isinstance(stats, Mapping):
            raise InvalidInputError(f"Frame.stats must be a dict from a name to a number; got {type(stats).__name__}")
        figures: dict[str, float] = {}
        for key, figure in (stats or {}).items():
            check_name(key, "stats")
            if not isinstance(figure, (int, float, np.integer, np.floating, np.bool_)):  # bool is an int: 0 or 1
                raise InvalidInputError(f"Frame.stats[{key!r}] must be a number; got {type(figure).__name__}")
            figures[key] = float(figure)
        for what, value in (("objects", objects), ("colliders", colliders)):
            if value is not None and not isinstance(value, Mapping):
                raise InvalidInputError(f"Frame.{what} must be a dict from a name to a part; "
                                        f"got {type(value).__name__}")
        objects = dict(objects or {})
        colliders = dict(colliders or {})
        for name, part in objects.items():
            check_name(name, "object")
            if not isinstance(part, _OBJECT_TYPES):
                raise InvalidInputError(
                    f"Frame.objects[{name!r}] must be a FrameMesh, FramePoints or FrameCurves; "
                    f"got {type(part).__name__}"
                    + (" (colliders go into Frame.colliders)" if isinstance(part, FrameCollider) else ""))
        for name, col in colliders.items():
            check_name(name, "collider")
            if not isinstance(col, FrameCollider):
                raise InvalidInputError(f"Frame.colliders[{name!r}] must be a FrameCollider; got {type(col).__name__}")
            if name in objects:
                raise InvalidInputError(f"the name {name!r} is used by an object and a collider; names must be unique")
        _set(self, time=t, objects=objects, colliders=colliders, stats=figures)

    def __repr__(self) -> str:
        parts = [f"{n}: {p!r}" for n, p in [*self.objects.items(), *self.colliders.items()]]
        return f"Frame(time={self.time:g}, {{{', '.join(parts)}}})"

    @property
    def names(self) -> list[str]:
        """Every object name, then every collider name."""
        return [*self.objects, *self.colliders]

    def bounds(self, *, colliders: bool = True) -> tuple[F64, F64]:
        """``(lower, upper)`` corners (m) of the box around every object (and,
        with ``colliders``, every collider in world space). A frame with
        nothing in it gives the unit box."""
        pts = [o.positions for o in self.objects.values()]
        if colliders:
            pts += [c.world_vertices() for c in self.colliders.values()]
        pts = [p for p in pts if len(p)]
        if not pts:
            return np.zeros(3), np.ones(3)
        allp = np.concatenate(pts)
        return allp.min(axis=0), allp.max(axis=0)


# --- colliders as surfaces ---------------------------------------------------


def _revolution(profile: list[tuple[float, float]], n_around: int) -> tuple[F64, I64]:
    """A closed surface of revolution about local y from a profile of
    ``(y, r)`` rings running from the bottom pole to the top pole (the first
    and last entries, whose ``r`` is ignored). Faces wind outwards."""
    ang = np.linspace(0.0, 2 * np.pi, n_around, endpoint=False)
    rings = profile[1:-1]
    verts = [np.array([[0.0, profile[0][0], 0.0]])]
    for y, r in rings:
        verts.append(np.stack([r * np.cos(ang), np.full(n_around, y), -r * np.sin(ang)], axis=1))
    verts.append(np.array([[0.0, profile[-1][0], 0.0]]))
    v = np.concatenate(verts)
    top = len(v) - 1
    faces: list[list[int]] = []

    def ring(i: int, j: int) -> int:
        return 1 + i * n_around + (j % n_around)

    # The angle turns clockwise seen from +y (z = -r sin), so these
    # orderings are counter-clockwise seen from outside.
    for j in range(n_around):
        faces.append([0, ring(0, j + 1), ring(0, j)])
    for i in range(len(rings) - 1):
        for j in range(n_around):
            a, b, c, d = ring(i, j), ring(i, j + 1), ring(i + 1, j + 1), ring(i + 1, j)
            faces.append([a, b, c])
            faces.append([a, c, d])
    last = len(rings) - 1
    for j in range(n_around):
        faces.append([top, ring(last, j), ring(last, j + 1)])
    return v, np.asarray(faces, dtype=np.int64)


def _capsule(half_height: float, radius: float, n_around: int, n_cap: int) -> tuple[F64, I64]:
    """A capsule about local y: hemispheres of ``radius`` centred at ``y = ±half_height``."""
    prof: list[tuple[float, float]] = []
    for i in range(n_cap + 1):  # bottom pole up to the bottom equator
        a = -0.5 * np.pi + 0.5 * np.pi * i / n_cap
        prof.append((-half_height + radius * np.sin(a), radius * np.cos(a)))
    for i in range(n_cap + 1):  # top equator up to the top pole
        a = 0.5 * np.pi * i / n_cap
        prof.append((half_height + radius * np.sin(a), radius * np.cos(a)))
    if half_height == 0.0:
        del prof[n_cap + 1]  # both equators coincide: keep one ring
    return _revolution(prof, n_around)


def _plane_square(point: F64, normal: F64, half_size: float) -> tuple[F64, I64]:
    n = normal / np.linalg.norm(normal)
    # Any unit vector not parallel to n gives the in-plane axes.
    helper = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 0.0, 1.0])
    u = np.cross(n, helper)
    u /= np.linalg.norm(u)
    w = np.cross(n, u)  # (u, w, n) right-handed, so corners in u-w order wind about +n
    h = half_size
    v = np.stack([point - h * u - h * w, point + h * u - h * w, point + h * u + h * w, point - h * u + h * w])
    return v, np.array([[0, 1, 2], [0, 2, 3]], dtype=np.int64)


def collider_part(collider: Any, *, plane_half_size: float = 2.0, resolution: int = 32) -> FrameCollider:
    """A :class:`FrameCollider` for any :class:`crumple.colliders.Collider`:
    its surface tessellated in the collider's local frame and its current
    pose (``collider.rotation``, ``collider.translation``).

    A :class:`~crumple.colliders.Plane` is drawn as a square of half size
    ``plane_half_size`` (m) around its point; round shapes get
    ``resolution`` segments around. A :class:`~crumple.colliders.MeshSDF`
    shows the mesh it was built from.
    """
    from . import colliders as co
    from . import geometry as geo

    if not isinstance(collider, co.Collider):
        raise InvalidInputError(f"collider_part needs a crumple.colliders.Collider; got {type(collider).__name__}")
    if not (isinstance(resolution, int) and resolution >= 3):
        raise InvalidInputError(f"resolution must be an integer >= 3; got {resolution!r}")
    if not (math.isfinite(plane_half_size) and plane_half_size > 0):
        raise InvalidInputError(f"plane_half_size must be > 0 (m); got {plane_half_size!r}")
    spec = collider._spec
    n_lat = max(resolution // 2, 2)
    # Each core shape sits at the local origin with its axis along local y,
    # except the plane and the mesh, which keep their world coordinates at
    # construction as their local frame (identity initial pose).
    v: F64
    f: I64
    if isinstance(collider, co.Plane):
        v, f = _plane_square(np.asarray(spec["point"], float), np.asarray(spec["normal"], float), plane_half_size)
    elif isinstance(collider, co.Sphere):
        m = geo.uv_sphere(radius=float(spec["radius"]), n_lat=n_lat, n_lon=resolution)
        v, f = m.vertices, m.faces
    elif isinstance(collider, co.Box):
        m = geo.box_mesh(half_extents=spec["half_extents"], subdivisions=1)
        v, f = m.vertices, m.faces
    elif isinstance(collider, co.Capsule):
        length = float(np.linalg.norm(np.subtract(spec["b"], spec["a"])))
        v, f = _capsule(0.5 * length, float(spec["radius"]), resolution, max(resolution // 4, 2))
    elif isinstance(collider, co.Cylinder):
        m = geo.cylinder_mesh(radius=float(spec["radius"]), height=float(spec["height"]), axis=(0, 1, 0),
                              n_around=resolution, n_along=1, capped=True)
        v, f = m.vertices, m.faces
    elif isinstance(collider, co.MeshSDF):
        v, f = np.asarray(spec["vertices"], float), np.asarray(spec["faces"], np.int64)
    else:
        raise InvalidInputError(f"collider_part does not know how to draw a {type(collider).__name__}")
    return FrameCollider(vertices=v, faces=f, rotation=collider.rotation, translation=collider.translation)
