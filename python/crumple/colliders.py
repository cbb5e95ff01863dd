"""Kinematic colliders: plane, sphere, box, capsule, cylinder and a signed-distance
grid built from a closed mesh.

Every collider answers, at world points (m): :meth:`Collider.signed_distance`
(negative inside), :meth:`Collider.normal` (outward, unit) and
:meth:`Collider.velocity` (m/s, from its rigid motion). Each carries the
boundary response every solver applies where a point is inside:

- ``"sticky"``: the point moves with the collider;
- ``"slip"``: the approaching normal velocity is removed, sliding is free;
- ``"separate"``: Coulomb friction with coefficient ``friction`` while in
  contact, free to leave.

Motion: static (default), :meth:`Collider.set_velocity` (constant linear and
angular velocity), :meth:`Collider.set_keyframes`, or
:meth:`Collider.set_callback` (a Python function of time called once per
frame that returns the pose).
"""

from __future__ import annotations

import math

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from . import _core
from ._checks import as_array, as_points, as_vec3, choice, non_negative, positive, rotation_matrix
from .errors import InvalidInputError
from .geometry import TriMesh

__all__ = [
    "Collider",
    "Plane",
    "Sphere",
    "Box",
    "Capsule",
    "Cylinder",
    "MeshSDF",
    "Mode",
    "rotation",
    "boundary_response",
]

Mode = Literal["sticky", "slip", "separate"]
MODES = ("sticky", "slip", "separate")
F64 = npt.NDArray[np.float64]
Vec3Like = Sequence[float] | npt.ArrayLike
PoseCallback = Callable[[float], dict[str, Any]]


def rotation(axis: Vec3Like, degrees: float) -> F64:
    """The 3×3 rotation by ``degrees`` about ``axis`` (right-hand rule)."""
    a = np.asarray(as_vec3(axis, "axis"))
    n = float(np.linalg.norm(a))
    if n == 0.0:
        raise InvalidInputError("rotation axis must be non-zero")
    k = a / n
    t = np.radians(float(degrees))
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(t) * kx + (1 - np.cos(t)) * (kx @ kx)


def _rot(r: npt.ArrayLike | None, name: str = "rotation") -> F64:
    if r is None:
        return np.eye(3)
    return rotation_matrix(r, name)


def _mode(mode: str, friction: float) -> tuple[str, float]:
    return choice(mode, "boundary mode", MODES), non_negative(friction, "friction")


class Collider:
    """Base class of all colliders (see the module docstring)."""

    _c: _core.Collider
    _callback: PoseCallback | None = None
    # How the collider was built and moved, for checkpoints: constructor
    # keyword arguments and (time, kind, arguments) of each motion change.
    _spec: dict[str, Any]
    _motions: list[tuple[float, str, dict[str, Any]]]

    def _record(self, kind: str, **args: Any) -> None:
        if not hasattr(self, "_motions"):
            self._motions = []
        self._motions.append((self.time, kind, args))

    def signed_distance(self, points: npt.ArrayLike) -> F64:
        """Signed distance (m) at ``points (N, 3)``: negative inside. Returns ``(N,)``."""
        return self._c.signed_distance(as_points(points, "points", allow_empty=True))

    def normal(self, points: npt.ArrayLike) -> F64:
        """Outward unit normals ``(N, 3)`` at ``points (N, 3)``."""
        return self._c.normal(as_points(points, "points", allow_empty=True))

    def velocity(self, points: npt.ArrayLike) -> F64:
        """Velocity (m/s) ``(N, 3)`` of the collider's material at ``points (N, 3)``."""
        return self._c.velocity(as_points(points, "points", allow_empty=True))

    @property
    def mode(self) -> str:
        """Boundary response: ``"sticky"``, ``"slip"`` or ``"separate"``."""
        return self._c.mode

    @property
    def friction(self) -> float:
        """Coulomb coefficient used by ``"separate"``."""
        return self._c.friction

    @property
    def time(self) -> float:
        """Time (s) of the current pose."""
        return self._c.time

    @property
    def translation(self) -> F64:
        """Current position of the collider's origin (m)."""
        return np.asarray(self._c.translation)

    @property
    def rotation(self) -> F64:
        """Current orientation (3×3, local → world)."""
        return self._c.rotation

    def set_static(self) -> Collider:
        """Stop moving (keeps the current pose)."""
        self._callback = None
        self._c.set_static()
        self._record("static")
        return self

    def set_velocity(self, linear: Vec3Like = (0, 0, 0), angular: Vec3Like = (0, 0, 0)) -> Collider:
        """Move with constant ``linear`` velocity (m/s) and spin with constant
        ``angular`` velocity (rad/s, world axis, about the moving origin),
        starting from the current pose."""
        self._callback = None
        lin, ang = as_vec3(linear, "linear"), as_vec3(angular, "angular")
        self._c.set_constant_motion(lin, ang)
        self._record("velocity", linear=lin, angular=ang)
        return self

    def set_keyframes(self, times: npt.ArrayLike, translations: npt.ArrayLike,
                      rotations: npt.ArrayLike | None = None) -> Collider:
        """Follow keyframes: ``times (K,)`` strictly increasing (s),
        ``translations (K, 3)`` (m), ``rotations (K, 3, 3)`` (default identity).
        Translation is interpolated linearly, rotation along the shortest arc;
        the pose is held before the first and after the last key."""
        t = np.ascontiguousarray(as_array(times, "times").reshape(-1))
        tr = as_points(translations, "translations")
        r = np.tile(np.eye(3), (len(t), 1, 1)) if rotations is None else as_array(rotations, "rotations")
        self._callback = None
        self._c.set_keyframes(t, tr, np.ascontiguousarray(r))
        self._record("keyframes", times=t.tolist(), translations=tr.tolist(), rotations=np.asarray(r).tolist())
        return self

    def set_callback(self, fn: PoseCallback) -> Collider:
        """Drive the collider from Python: ``fn(t)`` is called once per frame and
        returns a dict with any of ``translation``, ``rotation`` (3×3),
        ``linear_velocity``, ``angular_velocity``; missing keys keep their
        current value. Velocities should match the motion so friction and
        sticking see the right surface speed."""
        if not callable(fn):
            raise InvalidInputError("set_callback needs a callable fn(t) -> dict")
        self._callback = fn
        self._c.set_scripted()
        self._record("callback")
        return self

    def advance_to(self, t: float) -> None:
        """Move to the pose at time ``t`` (s). Solvers call this once per frame."""
        if self._callback is not None:
            pose = self._callback(float(t))
            if not isinstance(pose, dict):
                raise InvalidInputError(f"collider callback must return a dict; got {type(pose).__name__}")
            unknown = set(pose) - {"translation", "rotation", "linear_velocity", "angular_velocity"}
            if unknown:
                raise InvalidInputError(f"collider callback returned unknown keys {sorted(unknown)}")
            self._c.set_pose(
                as_vec3(pose.get("translation", self._c.translation), "translation"),
                _rot(pose.get("rotation", self._c.rotation)),
                as_vec3(pose.get("linear_velocity", self._c.linear_velocity), "linear_velocity"),
                as_vec3(pose.get("angular_velocity", self._c.angular_velocity), "angular_velocity"),
            )
        self._c.advance_to(float(t))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(mode={self.mode!r}, friction={self.friction}, motion={self._c.motion_name!r})"


class Plane(Collider):
    """The half-space below the plane through ``point`` with outward ``normal``."""

    def __init__(self, *, point: Vec3Like = (0, 0, 0), normal: Vec3Like = (0, 1, 0), mode: Mode = "separate",
                 friction: float = 0.3) -> None:
        self._c = _core.Collider.plane(as_vec3(point, "point"), as_vec3(normal, "normal"), *_mode(mode, friction))
        self._spec = dict(type="Plane", point=as_vec3(point, "point"), normal=as_vec3(normal, "normal"), mode=mode,
                          friction=friction)


class Sphere(Collider):
    """A ball of ``radius`` (m) around ``center``."""

    def __init__(self, *, center: Vec3Like = (0, 0, 0), radius: float = 0.5, mode: Mode = "separate",
                 friction: float = 0.3) -> None:
        self._c = _core.Collider.sphere(as_vec3(center, "center"), positive(radius, "radius"), *_mode(mode, friction))
        self._spec = dict(type="Sphere", center=as_vec3(center, "center"), radius=radius, mode=mode, friction=friction)


class Box(Collider):
    """A box with ``half_extents`` (m) centred at ``center``, turned by ``rotation`` (3×3)."""

    def __init__(self, *, center: Vec3Like = (0, 0, 0), half_extents: Vec3Like = (0.5, 0.5, 0.5),
                 rotation: npt.ArrayLike | None = None, mode: Mode = "separate", friction: float = 0.3) -> None:
        he = as_vec3(half_extents, "half_extents")
        for i, h in enumerate(he):
            positive(h, f"half_extents[{i}]")
        self._c = _core.Collider.box(as_vec3(center, "center"), he, _rot(rotation), *_mode(mode, friction))
        self._spec = dict(type="Box", center=as_vec3(center, "center"), half_extents=he,
                          rotation=_rot(rotation).tolist(), mode=mode, friction=friction)


class Capsule(Collider):
    """All points within ``radius`` (m) of the segment from ``a`` to ``b``."""

    def __init__(self, *, a: Vec3Like, b: Vec3Like, radius: float, mode: Mode = "separate",
                 friction: float = 0.3) -> None:
        pa, pb = np.asarray(as_vec3(a, "a")), np.asarray(as_vec3(b, "b"))
        axis = pb - pa
        with np.errstate(over="ignore"):
            length = float(np.linalg.norm(axis))
        if not math.isfinite(length):
            raise InvalidInputError(f"capsule end points a and b are too far apart to measure ({length} m)")
        if length == 0.0:
            raise InvalidInputError("capsule end points a and b must differ (use a Sphere for a ball)")
        self._c = _core.Collider.capsule(tuple(0.5 * (pa + pb)), 0.5 * length, positive(radius, "radius"),
                                         _y_to(axis / length), *_mode(mode, friction))
        self._spec = dict(type="Capsule", a=pa.tolist(), b=pb.tolist(), radius=radius, mode=mode, friction=friction)


class Cylinder(Collider):
    """A solid capped cylinder of ``radius`` and ``height`` (m) around ``center``,
    its axis along ``axis``."""

    def __init__(self, *, center: Vec3Like = (0, 0, 0), axis: Vec3Like = (0, 1, 0), radius: float = 0.5,
                 height: float = 1.0, mode: Mode = "separate", friction: float = 0.3) -> None:
        ax = np.asarray(as_vec3(axis, "axis"))
        n = float(np.linalg.norm(ax))
        if n == 0.0:
            raise InvalidInputError("cylinder axis must be non-zero")
        self._c = _core.Collider.cylinder(as_vec3(center, "center"), positive(radius, "radius"),
                                          0.5 * positive(height, "height"), _y_to(ax / n), *_mode(mode, friction))
        self._spec = dict(type="Cylinder", center=as_vec3(center, "center"), axis=ax.tolist(), radius=radius,
                          height=height, mode=mode, friction=friction)


class MeshSDF(Collider):
    """A closed triangle mesh as a signed-distance grid of spacing ``dx`` (m),
    padded by ``padding`` cells; queried by trilinear interpolation. Accurate
    to about ``dx``. Raises :class:`~crumple.MeshError` if the mesh is not
    closed and consistently oriented."""

    def __init__(self, mesh: TriMesh, *, dx: float, padding: int = 3, mode: Mode = "separate",
                 friction: float = 0.3) -> None:
        if not isinstance(mesh, TriMesh):
            raise InvalidInputError(f"mesh must be a crumple.geometry.TriMesh; got {type(mesh).__name__}")
        if isinstance(padding, bool) or not isinstance(padding, int) or not 0 <= padding < 2**32:
            raise InvalidInputError(f"padding must be a non-negative integer (cells, below 2**32); got {padding!r}")
        self._c = _core.Collider.mesh(mesh._m, positive(dx, "dx"), padding, *_mode(mode, friction))
        self._spec = dict(type="MeshSDF", vertices=mesh.vertices.tolist(), faces=mesh.faces.tolist(), dx=dx,
                          padding=padding, mode=mode, friction=friction)


def _to_spec(c: Collider) -> dict[str, Any]:
    """A collider's checkpoint entry: its spec and the motion changes made so
    far; a callback-driven collider is recorded at its current pose (the
    inverse of :func:`_from_spec`)."""
    motions = list(getattr(c, "_motions", []))
    if c._callback is not None:
        motions.append((c.time, "pose", dict(
            translation=c.translation.tolist(), rotation=c.rotation.tolist(),
            linear_velocity=list(c._c.linear_velocity), angular_velocity=list(c._c.angular_velocity))))
    return {"spec": c._spec, "motions": motions}


def _from_spec(spec: dict[str, Any], motions: list[tuple[float, str, dict[str, Any]]]) -> Collider:
    """Rebuild a collider from its recorded spec and motion changes (checkpoints).
    A callback-driven collider comes back scripted at its recorded pose; attach
    the callback again with :meth:`Collider.set_callback`."""
    kw = dict(spec)
    kind = kw.pop("type")
    c: Collider
    if kind == "MeshSDF":
        mesh = TriMesh(np.asarray(kw.pop("vertices")), np.asarray(kw.pop("faces")))
        c = MeshSDF(mesh, **kw)
    else:
        c = {"Plane": Plane, "Sphere": Sphere, "Box": Box, "Capsule": Capsule, "Cylinder": Cylinder}[kind](**kw)
    for t, what, args in motions:
        c.advance_to(t)
        if what == "static":
            c.set_static()
        elif what == "velocity":
            c.set_velocity(args["linear"], args["angular"])
        elif what == "keyframes":
            c.set_keyframes(args["times"], args["translations"], args["rotations"])
        elif what == "callback":
            c._c.set_scripted()
            c._record("callback")
        elif what == "pose":
            c._c.set_pose(tuple(args["translation"]), np.asarray(args["rotation"]), tuple(args["linear_velocity"]),
                          tuple(args["angular_velocity"]))
    return c


def _y_to(d: F64) -> F64:
    """A rotation taking the local y axis onto unit vector ``d``."""
    y = np.array([0.0, 1.0, 0.0])
    c = float(np.dot(y, d))
    if c > 1 - 1e-12:
        return np.eye(3)
    if c < -1 + 1e-12:
        return np.diag([1.0, -1.0, -1.0])
    axis = np.cross(y, d)
    return rotation(axis, np.degrees(np.arccos(np.clip(c, -1, 1))))


def boundary_response(v: npt.ArrayLike, v_co: npt.ArrayLike, n: npt.ArrayLike, *, mode: Mode,
                      friction: float = 0.0) -> F64:
    """The boundary response every solver applies, vectorised: new velocities
    ``(N, 3)`` from velocities ``v``, collider velocities ``v_co`` and unit
    outward normals ``n`` (all ``(N, 3)``)."""
    m, mu = _mode(mode, friction)
    return _core.boundary_response(as_points(v, "v"), as_points(v_co, "v_co"), as_points(n, "n"), m, mu)
