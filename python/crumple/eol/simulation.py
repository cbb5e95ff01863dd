"""The EOL cloth simulation: one cloth, obstacles (boxes, wires, points),
scripted vertices, stepping, frames and checkpoints."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from .. import _core
from .._checks import (as_array, as_points, as_vec3, choice, flag, non_negative, positive, positive_int,
                      vertex_indices, velocity_field)
from .._simulation import SimulationBase
from ..cloth.garment import vertex_plastic_angles
from ..cloth.material import Material, Wrinkles
from ..colliders import Box, Collider
from ..errors import InvalidInputError
from ..frames import Frame, FrameCollider, FrameMesh, unique_name
from ..geometry import TriMesh, Vec3Like

__all__ = ["Simulation", "Cloth", "Sizing", "planar_coordinates"]

Mode = Literal["eol", "lag_static", "lag_nonconformal", "lag_conformal_avg", "lag_conformal_cone"]
_MODES = ("eol", "lag_static", "lag_nonconformal", "lag_conformal_avg", "lag_conformal_cone")


@dataclasses.dataclass(frozen=True)
class Sizing:
    """The sizing remesh of spec eol_cloth §5.6 (ARCSim's dynamic remesh in
    material space, written here): every step after the contact-conforming
    pass, edges longer than the sizing metric allows are split (worst
    first), flips make the mesh Delaunay in the metric, and edges are
    collapsed while every edge they make stays under 0.9 of it. The metric
    of a face asks for edges no longer than ``refine_angle`` rad of bend
    (world curvature and the change of the vertex normals) and
    ``refine_velocity`` m/s of velocity difference, clamped to
    ``[size_min, size_max]`` m (material) with an anisotropy of at least
    ``aspect_min``. Defaults: spec §8.1 (0.015 and 0.03 m, chosen there
    for about 2.6K faces per m² of equilateral faces; this remesher splits
    at edge midpoints and leaves edges between about half and all of
    ``size_max``: about 6K faces per m² on a flat sheet at these sizes). Conformal and border
    edges never flip; EOL, border and pinned vertices are never collapsed
    away; a conformal edge splits into an EOL vertex on its feature.
    [D] ARCSim's compression metric and obstacle sizing are not used."""

    size_min: float = 0.015
    size_max: float = 0.03
    aspect_min: float = 0.2
    refine_angle: float = 0.3
    refine_velocity: float = 0.5

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            object.__setattr__(self, f.name, positive(getattr(self, f.name), f.name))
        _core.EolSimulation.check_sizing(self._tuple())  # the core's rules (size_min ≤ size_max, ...)

    def _tuple(self) -> tuple[float, float, float, float, float]:
        return (self.size_min, self.size_max, self.aspect_min, self.refine_angle, self.refine_velocity)


def _sizing(value: Sizing | dict[str, float] | bool | None, mode: str) -> Sizing | None:
    """``Simulation(sizing=...)``: a :class:`Sizing`, its fields as a dict
    (a checkpoint's), True for the defaults, or None/False for none (the
    mode "lag_nonconformal" is the sizing remesher alone: defaults then)."""
    if value is None or value is False:
        return Sizing() if mode == "lag_nonconformal" else None
    if value is True:
        return Sizing()
    if isinstance(value, Sizing):
        return value
    if isinstance(value, dict):
        try:
            return Sizing(**value)
        except TypeError as e:
            raise InvalidInputError(f"sizing: {e}") from e
    raise InvalidInputError(f"sizing must be a crumple.eol.Sizing, True or None; got {type(value).__name__}")


def _material_areas(u: npt.NDArray[np.float64], faces: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
    """Per face, the material area (m²) of ``faces`` over material
    coordinates ``u`` ``(N, 2)``."""
    d1, d2 = u[faces[:, 1]] - u[faces[:, 0]], u[faces[:, 2]] - u[faces[:, 0]]
    return np.asarray(0.5 * np.abs(d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]), dtype=np.float64)


def _barycentric_lookup(u: npt.NDArray[np.float64], faces: npt.NDArray[Any], p: npt.NDArray[np.float64],
                        values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``values`` (per vertex) interpolated at the material points ``p``
    ``(K, 2)``: the face whose smallest barycentric of ``p`` is largest (the
    one holding it; on a shared edge either gives the same value), NaN where
    that is below −1e-9 (outside the sheet). Dense over faces in chunks of
    points: a tracer read-out is a handful of points, so a spatial index would
    cost more to build than it saves."""
    a, b, c = u[faces[:, 0]], u[faces[:, 1]], u[faces[:, 2]]
    e1, e2 = b - a, c - a
    det = e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0]  # > 0: CCW faces (spec §10 test 14)
    ok = np.abs(det) > 0.0
    det = np.where(ok, det, 1.0)  # a zero-area face holds no point
    out = np.full((len(p), values.shape[1]), np.nan)
    chunk = max(1, 2_000_000 // max(len(faces), 1))  # about 150 MB of temporaries
    for s in range(0, len(p), chunk):
        d = p[s:s + chunk, None, :] - a[None]  # (k, F, 2)
        w1 = (d[..., 0] * e2[:, 1] - d[..., 1] * e2[:, 0]) / det
        w2 = (e1[:, 0] * d[..., 1] - e1[:, 1] * d[..., 0]) / det
        w = np.stack([1.0 - w1 - w2, w1, w2], axis=-1)  # (k, F, 3)
        best = np.where(ok[None], w.min(axis=-1), -np.inf).argmax(axis=1)
        k = np.arange(len(best))
        wb = w[k, best]
        inside = ok[best] & (wb.min(axis=1) >= -1e-9)
        vals = np.einsum("kj,kjd->kd", wb, values[faces[best]])
        out[s:s + chunk][inside] = vals[inside]
    return out


def planar_coordinates(mesh: TriMesh) -> npt.NDArray[np.float64]:
    """Material coordinates ``(N, 2)`` m of a flat ``mesh``: its vertices in
    an orthonormal frame of its plane, oriented so the faces run
    counter-clockwise (the mesh's front is the frame's +normal), so lengths
    and areas are those of the mesh. Raises :class:`InvalidInputError` when
    the mesh is not flat (pass ``material_coordinates`` then)."""
    if not isinstance(mesh, TriMesh):
        raise InvalidInputError(f"mesh must be a crumple.geometry.TriMesh; got {type(mesh).__name__}")
    x = mesh.vertices
    c = x.mean(axis=0)
    # The plane from the summed face normals (well defined for a flat
    # sheet), its in-plane axes from the principal directions.
    f = mesh.faces
    n = np.cross(x[f[:, 1]] - x[f[:, 0]], x[f[:, 2]] - x[f[:, 0]]).sum(axis=0)
    nn = float(np.linalg.norm(n))
    size = float(np.ptp(x, axis=0).max())
    if nn == 0.0 or not size > 0.0:
        raise InvalidInputError("the cloth mesh has no area; give a flat sheet or material_coordinates")
    n = n / nn
    off = np.abs((x - c) @ n).max()
    if off > 1e-9 * max(size, 1.0):
        raise InvalidInputError(
            f"the cloth mesh is not flat (a vertex is {off:.3g} m off its plane): give material_coordinates "
            "(N, 2) m, the cloth's rest shape in the plane")
    _, _, vt = np.linalg.svd(x - c - np.outer((x - c) @ n, n), full_matrices=False)
    e1 = vt[0] - n * (vt[0] @ n)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(n, e1)
    return np.ascontiguousarray(np.stack([(x - c) @ e1, (x - c) @ e2], axis=1))


class Cloth:
    """The cloth of an EOL simulation (the handle ``add_cloth`` returns).

    Its vertex numbering changes when the remesher adds EOL vertices on an
    edge or collapses vertices into them: index read-outs afresh after a
    step; :attr:`vertex_ids` follow a vertex across steps."""

    def __init__(self, sim: Simulation, name: str, mesh: TriMesh, material: Material,
                 wrinkles: Wrinkles | None = None) -> None:
        self._sim = sim
        self.name = name
        #: The mesh as given (the rest shape; the current one is :attr:`faces`).
        self.mesh = mesh
        self.material = material
        self._wrinkles = wrinkles

    @property
    def wrinkles(self) -> Wrinkles | None:
        """The wrinkle switches the hinges run (None: elastic bending)."""
        return self._wrinkles

    @property
    def _s(self) -> Any:
        return self._sim._core()

    @property
    def num_vertices(self) -> int:
        """Vertices now (the remesher changes the count)."""
        return int(self._s.positions().shape[0])

    @property
    def positions(self) -> npt.NDArray[np.float64]:
        """World positions ``(N, 3)`` float64, m."""
        return np.asarray(self._s.positions())

    @property
    def velocities(self) -> npt.NDArray[np.float64]:
        """World velocities ẋ ``(N, 3)`` float64, m/s (settable: one 3-vector or ``(N, 3)``)."""
        return np.asarray(self._s.velocities())

    @velocities.setter
    def velocities(self, v: npt.ArrayLike) -> None:
        self._s.set_velocities(velocity_field(v, self.num_vertices, "velocities"))

    @property
    def faces(self) -> npt.NDArray[np.int64]:
        """Faces now ``(F, 3)`` int64, counter-clockwise in material space."""
        return np.asarray(self._s.faces())

    @property
    def material_coordinates(self) -> npt.NDArray[np.float64]:
        """Material coordinates X ``(N, 2)`` float64, m: where in the rest
        sheet each vertex is. They move only at EOL vertices (material
        slides through them)."""
        return np.asarray(self._s.material_coordinates())

    @property
    def material_velocities(self) -> npt.NDArray[np.float64]:
        """Material velocities Ẋ ``(N, 2)`` float64, m/s (zero off the features)."""
        return np.asarray(self._s.material_velocities())

    def positions_at(self, material_points: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """World positions ``(K, 3)`` float64, m, of fixed material points
        ``(K, 2)`` m (tracers, spec §9): each is found in the current
        material mesh and mapped by its face's barycentrics (paper Eq. 1).
        Unlike vertex read-outs, a tracer is the same piece of cloth in
        every step, however the remesher changes the vertices or material
        slides through EOL vertices. NaN rows for points outside the sheet."""
        p = as_array(material_points, "material_points")
        if p.ndim == 1:
            p = p[None, :]
        if p.ndim != 2 or p.shape[1] != 2 or not np.isfinite(p).all():
            raise InvalidInputError(f"material_points must be finite (K, 2) m; got shape {p.shape}")
        return _barycentric_lookup(self.material_coordinates, self.faces, p, self.positions)

    @property
    def is_eol(self) -> npt.NDArray[np.bool_]:
        """Per vertex: on a feature (EOL), ``(N,)`` bool."""
        return np.asarray(self._s.is_eol())

    @property
    def feature_kinds(self) -> npt.NDArray[np.int64]:
        """Per vertex: −1 (none), 0 corner, 1 edge, 2 wire, 3 point; ``(N,)`` int64."""
        return np.asarray(self._s.features()[0])

    @property
    def feature_colliders(self) -> npt.NDArray[np.int64]:
        """Per vertex: the obstacle whose feature it is on, as its index
        among the obstacles of its kind (see :attr:`feature_kinds`): into
        ``sim.colliders`` for box edges and corners, ``sim.wires`` for wires,
        ``sim.points`` for points; −1 off the features. ``(N,)`` int64."""
        return np.asarray(self._s.features()[1])

    @property
    def vertex_ids(self) -> npt.NDArray[np.uint32]:
        """Persistent vertex ids ``(N,)`` uint32: kept by a vertex through
        remeshing, never reused (new vertices take new ids)."""
        return np.asarray(self._s.vertex_ids())

    @property
    def masses(self) -> npt.NDArray[np.float64]:
        """Lumped vertex masses ``(N,)`` float64, kg (areal density times a
        third of the material area around each vertex)."""
        return np.asarray(self._s.masses())

    @property
    def hinges(self) -> npt.NDArray[np.int64]:
        """Hinges ``(H, 4)`` int64 now: edge (x0, x1) and wing tips (x2,
        x3), the cloth module's order (the remesher renumbers them)."""
        return np.asarray(self._s.hinges())

    @property
    def hinge_angles(self) -> npt.NDArray[np.float64]:
        """Signed dihedral angle per hinge ``(H,)`` float64, rad, flat = 0."""
        return np.asarray(self._s.hinge_angles())

    def _hinge_state(self, column: int, what: str) -> npt.NDArray[np.float64]:
        if self.wrinkles is None:
            raise InvalidInputError(f"{what} needs the wrinkle model: add the cloth with "
                                    "wrinkles=crumple.cloth.Wrinkles()")
        return np.ascontiguousarray(np.asarray(self._s.hinge_states())[:, column])

    @property
    def plastic_angles(self) -> npt.NDArray[np.float64]:
        """Plastic rest angle θ_p per hinge ``(H,)`` float64, rad (needs
        ``wrinkles``)."""
        return self._hinge_state(0, "plastic_angles")

    @property
    def anchor_angles(self) -> npt.NDArray[np.float64]:
        """Friction anchor θ_a per hinge ``(H,)`` float64, rad (needs
        ``wrinkles``)."""
        return self._hinge_state(1, "anchor_angles")

    @property
    def stick_times(self) -> npt.NDArray[np.float64]:
        """Friction dwell clock per hinge ``(H,)`` float64, s (needs
        ``wrinkles``)."""
        return self._hinge_state(2, "stick_times")

    @property
    def pinned(self) -> npt.NDArray[np.int64]:
        """The pinned vertices' indices now, ``(K,)`` int64."""
        return np.asarray(self._s.pinned())

    def pin(self, indices: npt.ArrayLike, targets: npt.ArrayLike | None = None, *,
            stiffness: float | None = None) -> None:
        """Pin vertices ``indices`` (ints or a boolean mask, now's numbering)
        at ``targets (K, 3)`` m (default: where they are). EOL pins are exact
        velocity rows of the QP (spec §6.5), so ``stiffness`` must be None.
        A pinned vertex never becomes EOL and is never collapsed."""
        if stiffness is not None:
            raise InvalidInputError("EOL pins are exact constraints; leave stiffness=None")
        idx = vertex_indices(indices, self.num_vertices)
        t = self.positions[idx] if targets is None else as_points(targets, "targets", allow_empty=idx.size == 0)
        if t.shape[0] != idx.size:
            raise InvalidInputError(f"targets must have one row per pinned vertex ({idx.size}); got {t.shape[0]}")
        self._s.pin(idx, t, np.zeros_like(t))

    def set_pin_targets(self, indices: npt.ArrayLike, positions: npt.ArrayLike,
                        velocities: npt.ArrayLike | None = None) -> None:
        """Move pinned vertices (pinning them if they were not): their
        targets are at ``positions (K, 3)`` m now and move on with
        ``velocities (K, 3)`` m/s (default zero); each step lands a pinned
        vertex on its target."""
        idx = vertex_indices(indices, self.num_vertices)
        p = as_points(positions, "positions", allow_empty=idx.size == 0)
        v = np.zeros_like(p) if velocities is None else as_points(velocities, "velocities",
                                                                   allow_empty=idx.size == 0)
        if p.shape[0] != idx.size or v.shape[0] != idx.size:
            raise InvalidInputError(f"positions and velocities must have one row per index ({idx.size})")
        self._s.pin(idx, p, v)

    def release(self, indices: npt.ArrayLike | None = None) -> None:
        """Unpin ``indices`` (default: every pinned vertex)."""
        self._s.release(None if indices is None else vertex_indices(indices, self.num_vertices))

    def _frame_part(self) -> FrameMesh:
        u = self.material_coordinates
        data = {
            "speed": np.linalg.norm(self.velocities, axis=1),
            "material_u": u[:, 0], "material_v": u[:, 1],
            "eol": self.is_eol.astype(np.float64),
            # Which feature: its kind (see feature_kinds) and the obstacle's
            # index among those of its kind.
            "feature_kind": self.feature_kinds.astype(np.float64),
            "feature_collider": self.feature_colliders.astype(np.float64),
        }
        if self.wrinkles is not None:
            # The cloth module's frame field, from the same hinge state.
            data["plastic_angle"] = vertex_plastic_angles(self.num_vertices, self.hinges, self.plastic_angles)
        return FrameMesh(positions=self.positions, faces=self.faces, vertex_data=data)

    def __repr__(self) -> str:
        return f"eol.Cloth({self.name!r}, {self.num_vertices} vertices, {int(self.is_eol.sum())} EOL)"


def _wire_drawing(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64],
                  radius: float = 2e-3) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """A thin triangular prism from ``a`` to ``b`` (for frames and pictures
    only: the wire itself has no thickness)."""
    t = (b - a) / np.linalg.norm(b - a)
    e1 = np.cross(t, [1.0, 0.0, 0.0] if abs(t[0]) < 0.9 else [0.0, 1.0, 0.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(t, e1)
    ring = [radius * (np.cos(k) * e1 + np.sin(k) * e2) for k in (0.0, 2.0944, 4.1888)]
    v = np.array([a + r for r in ring] + [b + r for r in ring])
    f = []
    for k in range(3):
        j = (k + 1) % 3
        f += [[k, j, 3 + j], [k, 3 + j, 3 + k]]
    f += [[0, 2, 1], [3, 4, 5]]
    return v, np.array(f, dtype=np.int64)


def _point_drawing(p: npt.NDArray[np.float64], n: npt.NDArray[np.float64], length: float = 0.03,
                   radius: float = 1.5e-3) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """A nail: a thin three-sided cone from ``length`` m behind the point up
    to its tip (for frames and pictures only)."""
    ring, _ = _wire_drawing(p - n * length, p, radius=radius)
    v = np.vstack([ring[:3], p[None, :]])
    f = np.array([[0, 1, 3], [1, 2, 3], [2, 0, 3], [0, 2, 1]], dtype=np.int64)
    return v, f


class Simulation(SimulationBase):
    """Eulerian-on-Lagrangian cloth (spec eol_cloth): one cloth added with
    :meth:`add_cloth`; obstacles whose sharp features the cloth bends
    exactly at and slides along: box colliders (:meth:`add_collider`: their
    edges and corners), wires (:meth:`add_wire`) and points (:meth:`add_point`); one QP
    per step.

    Keyword options (spec §8.1): ``dt`` time step (s, 5e-3);
    ``gravity`` (m/s², (0, −9.81, 0)); ``collision_threshold`` thr (m,
    5e-3: cloth edges within 2·thr of a box edge become EOL there, new EOL
    vertices sit 0.1·thr inside, vertices within 5·thr inside a face get a
    contact row); ``collapse_length`` τ (material m; default 1 % of the
    cloth's size: shorter edges at an EOL vertex collapse into it);
    ``qp_solver``: "active_set" (default: a primal–dual active-set
    method warm-started from the previous step's active rows on faer's
    sparse LDLᵀ: the first pass factors, the later ones re-solve bordered
    with the rows that changed; the symbolic analysis is kept between
    steps, with Clarabel when it does not settle in 12 passes) or
    "clarabel" (the interior-point reference every step, then the same
    active-set refinement from its active set); both give KKT-valid
    solutions (spec §10 test 10). ``verify_qp`` (False): also solve every
    step's QP with Clarabel and report the difference in ``stats()``
    (``qp_gap``, ``qp_gap_raw``; slow, for checking).

    Friction (spec §6.7, after the QP: the tangential relative velocity, or
    at EOL vertices the material velocity, scaled by max(0, 1 − μ
    Δv_n/‖v_t‖)) is each obstacle's: a box collider's ``friction`` in its
    default ``mode="separate"`` (``"slip"``: frictionless, as in the
    paper's scenes), the ``friction`` of a wire or point. A Lagrangian
    contact row spread over several vertices (a wire crossing the inside of
    a cloth edge, a point or box corner under a face: the baseline modes,
    or cloth on its way to a feature) is frictionless.

    ``mode`` (spec §12.1): "eol" (the method); "lag_static" (the regular
    Lagrangian baseline: no remesher, no EOL vertices, box faces and edges,
    wires and points as contacts only; the cloth bends only at its mesh
    edges);
    "lag_conformal_avg" and "lag_conformal_cone" (the same contact-
    conforming remesher as "eol" puts vertices on the features, but they
    stay Lagrangian, Ẋ = 0, with one averaged normal row or one row per
    face normal: spec §6.4; the cone locks when the cloth is pulled over
    an edge); "lag_nonconformal" (no contact-conforming remesher: the
    sizing remesher alone refines the mesh where it bends, and box faces
    and edges, wires and points are contacts only).

    ``sizing``: a :class:`Sizing` (or True for its defaults) runs the sizing
    remesh of spec §5.6 after the contact-conforming pass every step, in
    any mode; None (default) keeps the mesh but for the features, except
    in "lag_nonconformal", which is that remesher and takes the defaults.

    ``transfer``: the velocity of a vertex the remesher puts on a feature
    where the cloth reaches it (spec §5.7): "zero_eulerian" (default, as
    the authors' code: ``Ẋ = 0``, ``ẋ`` the material's world velocity) or
    "eq13" (the paper's Eq. 13: as much of the world velocity as the
    feature allows goes into ``Ẋ``, so the vertex starts on the feature
    and the material slides through it; ``ẋ − F Ẋ`` is the world velocity
    either way). The two differ by a null vector of the generalized mass
    (spec §3.3.3: ``ẋ = F Ẋ``), so the next QP sees nearly the same inertia
    and the runs agree closely (the nail of spec E3: 0.046093 and 0.046102 m
    of material slid over the tip in 0.2 s).

    The cloth's membrane and bending are the cloth module's (its
    :class:`crumple.cloth.Material`, default the ``eol_sheet`` preset: the
    EOL paper's sheet of spec §8.1); its wrinkle elements run on the
    hinges when :meth:`add_cloth` is given ``wrinkles`` (beyond the paper),
    and the paper's elastic bending alone otherwise.
    Raises :class:`InvalidInputError` for bad options.
    """

    _solver = "eol"

    def __init__(self, *, dt: float = 5e-3, gravity: Vec3Like = (0.0, -9.81, 0.0),
                 collision_threshold: float = 5e-3, collapse_length: float | None = None,
                 mode: Mode = "eol", qp_solver: Literal["active_set", "clarabel"] = "active_set",
                 verify_qp: bool = False, sizing: Sizing | dict[str, float] | bool | None = None,
                 transfer: Literal["zero_eulerian", "eq13"] = "zero_eulerian") -> None:
        m = choice(mode, "mode", _MODES)
        sz = _sizing(sizing, m)
        tau = None if collapse_length is None else positive(collapse_length, "collapse_length")
        super().__init__(dict(dt=positive(dt, "dt"), gravity=as_vec3(gravity, "gravity"),
                              collision_threshold=positive(collision_threshold, "collision_threshold"),
                              collapse_length=tau, mode=m,
                              qp_solver=choice(qp_solver, "qp_solver", ("active_set", "clarabel")),
                              verify_qp=flag(verify_qp, "verify_qp"),
                              sizing=None if sz is None else dataclasses.asdict(sz),
                              transfer=choice(transfer, "transfer", ("zero_eulerian", "eq13"))))
        self._s: Any = None  # the core simulation, made by add_cloth
        self._objects: list[Cloth] = []
        # Wires and points added before the cloth: (kind, args).
        self._pending: list[tuple[str, tuple[Any, ...]]] = []
        self._cloth_args: dict[str, Any] = {}

    def _core_or_none(self) -> Any:
        return self._s

    def _core(self) -> Any:
        if self._s is None:
            raise InvalidInputError("the EOL simulation has no cloth yet; call add_cloth(mesh) first")
        return self._s

    @property
    def dt(self) -> float:
        """Time step, s."""
        return float(self._params["dt"])

    @property
    def mode(self) -> str:
        """"eol" or a Lagrangian baseline."""
        return str(self._params["mode"])

    @property
    def objects(self) -> tuple[Cloth, ...]:
        """The cloth (a one-element tuple once added)."""
        return tuple(self._objects)

    def add_collider(self, collider: Collider, *, name: str | None = None) -> int:
        """Add a box obstacle: a :class:`crumple.colliders.Box` in any
        orientation (``rotation=``), static, moving and turning
        (``set_velocity(linear=..., angular=...)``: m/s of its centre and
        rad/s about it, world frame; spec §2.5, §4.2: EOL vertices on a
        moving or turning edge ride on it and slide along it), or moved by
        a callback that returns its pose and velocities. A box given a new
        orientation between steps (a replaced collider or a callback's pose
        that is not where its angular velocity turned it) releases the EOL vertices
        on its features; the remesher makes new ones. Keyframed boxes
        (``set_keyframes``) follow their path step by step (each step's
        velocity carries the box from its pose to the keyed pose at the
        step's end). Its 12 edges and 8 corners are the sharp features,
        its faces contacts. Its ``mode`` says how it rubs: ``"separate"``
        (the default) Coulomb friction with its ``friction``, ``"slip"``
        frictionless. Raises :class:`InvalidInputError` for other shapes
        and ``"sticky"``. Returns its index."""
        if not isinstance(collider, Box):
            raise InvalidInputError(
                f"crumple.eol takes Box colliders (their edges are the features); got {type(collider).__name__}")
        _core.EolSimulation.check_collider(collider._c)
        return super().add_collider(collider, name=name)

    def add_wire(self, points: npt.ArrayLike, *, normal: Vec3Like = (0.0, 1.0, 0.0),
                 velocity: Vec3Like = (0.0, 0.0, 0.0), friction: float = 0.0) -> tuple[int, ...]:
        """Add a wire (spec §4.1: a thin line the cloth bends exactly over and
        slides across, with no thickness): ``points (K, 3)`` m, K ≥ 2, a
        polyline whose K − 1 segments are each a wire feature; ``normal``
        the side the cloth rests on (unit after scaling, perpendicular to
        every segment; the cloth may lift off that way); ``velocity`` m/s,
        until :meth:`set_wire_velocity` changes it (the wire translates); ``friction`` its Coulomb μ (0:
        frictionless). Returns the segments' indices into
        :attr:`wires`. Raises :class:`InvalidInputError` for fewer than two
        points, a zero-length segment, a normal not perpendicular to it, or
        a cloth vertex on the wire now (then no segment is added)."""
        p = as_points(points, "points")
        if p.shape[0] < 2:
            raise InvalidInputError(f"a wire needs at least two points; got {p.shape[0]}")
        n, v = as_vec3(normal, "normal"), as_vec3(velocity, "velocity")
        mu = non_negative(friction, "friction")
        segs = [((float(a[0]), float(a[1]), float(a[2])), (float(b[0]), float(b[1]), float(b[2])), n, v, mu)
                for a, b in zip(p[:-1], p[1:])]
        # Every segment checked before any is added.
        for args in segs:
            if self._s is None:
                _core.EolSimulation.check_wire(*args)  # the cloth is checked when it comes
            else:
                self._s.check_wire_now(*args)
        out = []
        for args in segs:
            if self._s is None:
                self._pending.append(("wire", args))
                out.append(sum(1 for k, _ in self._pending if k == "wire") - 1)
            else:
                out.append(int(self._s.add_wire(*args)))
        return tuple(out)

    def add_point(self, position: Vec3Like, *, normal: Vec3Like = (0.0, 1.0, 0.0),
                  velocity: Vec3Like = (0.0, 0.0, 0.0), friction: float = 0.0) -> int:
        """Add a point obstacle (spec §4.1: a nail tip the cloth rests on and
        slides over): ``position`` m, ``normal`` the side the cloth rests on,
        ``velocity`` m/s until :meth:`set_point_velocity` changes it, ``friction`` its Coulomb μ.
        Returns its index into :attr:`points`.
        Raises :class:`InvalidInputError` for a zero normal or a cloth vertex
        on the point at the start."""
        args = (as_vec3(position, "position"), as_vec3(normal, "normal"), as_vec3(velocity, "velocity"),
                non_negative(friction, "friction"))
        if self._s is None:
            _core.EolSimulation.check_point(*args)
            self._pending.append(("point", args))
            return sum(1 for k, _ in self._pending if k == "point") - 1
        return int(self._s.add_point(*args))

    def set_wire_velocity(self, segments: int | Sequence[int], velocity: Vec3Like) -> None:
        """Set the velocity (m/s, a 3-vector) of wire ``segments`` (indices
        from :meth:`add_wire`) from the next step on: a scripted wire
        starts, stops or turns back. Raises :class:`InvalidInputError` for an
        index that names no segment or a non-finite velocity."""
        self._set_obstacle_velocity("wire", segments, velocity)

    def set_point_velocity(self, points: int | Sequence[int], velocity: Vec3Like) -> None:
        """Set the velocity (m/s, a 3-vector) of point obstacles ``points``
        (indices from :meth:`add_point`) from the next step on, e.g. teeth
        that close in and stop. Raises :class:`InvalidInputError` for an
        index that names no point or a non-finite velocity."""
        self._set_obstacle_velocity("point", points, velocity)

    def _set_obstacle_velocity(self, kind: str, which: int | Sequence[int], velocity: Vec3Like) -> None:
        v = as_vec3(velocity, "velocity")
        try:
            idx = [which] if isinstance(which, (int, np.integer)) else list(which)
        except TypeError:
            raise InvalidInputError(f"{kind} indices must be an int or a sequence of ints; got {which!r}") from None
        pending = [j for j, (k, _) in enumerate(self._pending) if k == kind]
        count = len(pending) if self._s is None else len(self.wires if kind == "wire" else self.points)
        for i in idx:
            if not isinstance(i, (int, np.integer)) or isinstance(i, bool) or not 0 <= int(i) < count:
                raise InvalidInputError(f"no {kind} {i!r}: there are {count} (indices from add_{kind})")
        for i in idx:
            if self._s is None:
                # Before the cloth: the pending arguments carry the velocity
                # (wire: a, b, normal, velocity, μ; point: position, normal, velocity, μ).
                j = pending[int(i)]
                args = list(self._pending[j][1])
                args[3 if kind == "wire" else 2] = v
                self._pending[j] = (kind, tuple(args))
            elif kind == "wire":
                self._s.set_wire_velocity(int(i), v)
            else:
                self._s.set_point_velocity(int(i), v)

    @property
    def wires(self) -> npt.NDArray[np.float64]:
        """The wire segments now, ``(K, 2, 3)`` float64 m (their ends)."""
        if self._s is None:
            return np.array([[a, b] for k, (a, b, *_) in self._pending if k == "wire"],
                            dtype=np.float64).reshape(-1, 2, 3)
        return np.asarray(self._s.wires()[0]).reshape(-1, 2, 3)

    @property
    def points(self) -> npt.NDArray[np.float64]:
        """The point obstacles now, ``(P, 3)`` float64 m."""
        if self._s is None:
            return np.array([a[0] for k, a in self._pending if k == "point"], dtype=np.float64).reshape(-1, 3)
        return np.asarray(self._s.points()[0]).reshape(-1, 3)

    def frame(self) -> Frame:
        """The frame (see :meth:`SimulationBase.frame`), with each wire
        segment (``wire0``, ``wire1``, …) and point (``point0``, …) drawn
        as a thin prism or nail among the colliders (2 mm thick for the
        eye; the obstacles have no thickness; a name already taken gets a
        ``_1`` suffix)."""
        f = super().frame()
        if self._s is None:
            return f
        colliders = dict(f.colliders)
        taken = set(colliders) | set(f.objects)
        ends, _, _ = self._s.wires()
        ends = np.asarray(ends).reshape(-1, 2, 3)
        for k, (a, b) in enumerate(ends):
            v, faces = _wire_drawing(a, b)
            name = unique_name(f"wire{k}", taken)
            taken.add(name)
            colliders[name] = FrameCollider(v, faces)
        pos, nrm, _ = self._s.points()
        for k, (p, n) in enumerate(zip(np.asarray(pos), np.asarray(nrm))):
            v, faces = _point_drawing(p, n)
            name = unique_name(f"point{k}", taken)
            taken.add(name)
            colliders[name] = FrameCollider(v, faces)
        return Frame(time=f.time, objects=dict(f.objects), colliders=colliders, stats=f.stats)

    def add_cloth(self, mesh: TriMesh, material: Material | str | None = None, *,
                  material_coordinates: npt.ArrayLike | None = None,
                  velocity: Vec3Like | npt.ArrayLike = (0.0, 0.0, 0.0), name: str = "cloth",
                  wrinkles: Wrinkles | None = None) -> Cloth:
        """Add the cloth: ``mesh`` its world shape now (m), a manifold
        triangle mesh; ``material`` a :class:`crumple.cloth.Material` or a
        preset name (default ``eol_sheet``); ``material_coordinates (N, 2)``
        m its rest shape in the plane (default: a flat ``mesh`` laid into its
        own plane, see :func:`planar_coordinates`); faces must run
        counter-clockwise in them; ``velocity`` m/s, one 3-vector or
        ``(N, 3)``; ``name`` its name in frames; ``wrinkles`` a
        :class:`crumple.cloth.Wrinkles` to run the cloth module's persistent
        wrinkles on the hinges (beyond the paper: plasticity and friction
        with dwell, or the Dahl baseline, from ``material``; the state follows the edges through
        remeshing; the tensile elements are not run here), None for the
        paper's elastic bending.

        One cloth per simulation. Raises :class:`MeshError` for a
        non-manifold or degenerate mesh and :class:`InvalidInputError` for
        bad arguments (a curved mesh without material coordinates, faces
        clockwise in material space, a second cloth).
        """
        if self._s is not None:
            raise InvalidInputError("an EOL simulation holds one cloth; make another Simulation for another")
        if not isinstance(mesh, TriMesh):
            raise InvalidInputError(f"mesh must be a crumple.geometry.TriMesh; got {type(mesh).__name__}")
        # Every argument is checked before the core simulation exists: a bad
        # one must leave this Simulation as it was (no cloth, pending wires
        # and points kept), so that add_cloth can be called again.
        nm = self._unique_name(name)
        material = Material.coerce(material, "eol_sheet", "cloth.Material")
        if wrinkles is not None:
            if not isinstance(wrinkles, Wrinkles):
                raise InvalidInputError(f"wrinkles must be a crumple.cloth.Wrinkles or None; got {wrinkles!r}")
            if wrinkles.tensile_friction or wrinkles.tensile_plasticity:
                raise InvalidInputError("crumple.eol runs the hinge elements of Wrinkles only: set "
                                        "tensile_friction and tensile_plasticity to False")
        if material_coordinates is None:
            u = planar_coordinates(mesh)
        else:
            # as_array refuses complex values (not cut to their real part),
            # text, dicts and ragged lists.
            u = np.ascontiguousarray(as_array(material_coordinates, "material_coordinates",
                                              what="an (N, 2) array of real material coordinates (m)"))
            if u.shape != (mesh.num_vertices, 2):
                raise InvalidInputError(
                    f"material_coordinates must have shape ({mesh.num_vertices}, 2); got {u.shape}")
            if not np.all(np.isfinite(u)):
                raise InvalidInputError("material_coordinates contain NaN or inf")
        vel = velocity_field(velocity, mesh.num_vertices, "velocity")
        tau = self._params["collapse_length"]
        if tau is None:
            tau = 0.01 * float(np.ptp(u, axis=0).max())
        p = self._params
        if p["sizing"] is not None:
            # The remesh may make about area / (0.433 size_min²) faces:
            # refuse a size_min that would allow more than 500K.
            area = float(_material_areas(u, mesh.faces).sum())
            most = area / (0.433 * p["sizing"]["size_min"] ** 2)
            if most > 5e5:
                raise InvalidInputError(
                    f"sizing size_min {p['sizing']['size_min']} m is too small for a cloth of {area:.3g} m² "
                    f"(up to {most:.3g} faces); use at least {math.sqrt(area / (0.433 * 5e5)):.3g} m")
        s = _core.EolSimulation(mesh.vertices, u, mesh.faces, material._dict(), p["dt"], p["gravity"],
                                p["collision_threshold"], tau, p["mode"] == "eol")
        s.set_qp(p["qp_solver"], p["verify_qp"])
        s.set_mode(p["mode"])
        s.set_sizing(None if p["sizing"] is None else Sizing(**p["sizing"])._tuple())
        s.set_transfer(p.get("transfer", "zero_eulerian"))
        if wrinkles is not None:
            s.set_wrinkles(material._dict(), wrinkles._dict())
        for c in self._colliders:
            s.add_collider(c._c)
        for kind, args in self._pending:
            (s.add_wire if kind == "wire" else s.add_point)(*args)
        self._pending = []
        self._s = s
        obj = Cloth(self, nm, mesh, material, wrinkles)
        self._objects.append(obj)
        self._cloth_args = dict(material_coordinates=u)
        if np.any(vel != 0):
            obj.velocities = vel
        return obj

    # -- read-outs ---------------------------------------------------------------

    def kinetic_energy(self) -> float:
        """Σ ½ m |ẋ|² over the vertices (lumped masses), J."""
        return float(self._core().kinetic_energy())

    def hold_warp(self, per_step: float, steps: int) -> None:
        """Hold-time warp (spec persistent_wrinkles §4.6): add ``per_step``
        s to every hinge's stick and plastic clocks after each of the next
        ``steps`` steps (a long hold in a few steps). Needs a cloth added
        with ``wrinkles``."""
        self._core().set_hold_warp(non_negative(per_step, "per_step"), positive_int(steps, "steps", 0))

    def stats(self) -> dict[str, float]:
        """The last step: KKT residuals of its QP (spec §10 test 10:
        ``kkt_stationarity``, ``kkt_equality``, ``kkt_inequality``,
        ``kkt_complementarity`` and ``kkt_dual``, the most negative
        inequality multiplier relative to the force),
        solver passes (``qp_iterations``), the active-set path's numeric KKT
        factorizations (``qp_factorizations``: its passes after the first
        re-solve against that factor unless many rows changed state), its
        analyses of the KKT structure (``qp_analyses``: the fill-reducing
        ordering and symbolic factorization, 0 on a step whose mesh and
        rows keep the last step's structure; like ``qp_factorizations``,
        the active-set path's only, so 0 with ``qp_solver="clarabel"``),
        whether it went to Clarabel
        (``qp_clarabel``), with ``verify_qp`` the largest difference from
        Clarabel's solution relative to the largest velocity (``qp_gap``:
        after its refinement; ``qp_gap_raw``: its interior point), the
        sub-steps a failing step split into (``substeps``), ill-conditioned
        triangles mended (``mended_triangles``), edges flipped at EOL
        vertices by the cleanup loop (``flipped_edges``), long edges split
        without :class:`Sizing` (``split_edges``: those over 1.5 × the
        cloth's longest given edge), short edges collapsed into new EOL
        vertices (``collapsed_edges``), non-conformal edges at EOL vertices
        still shorter than τ after the cleanup loop (``short_kept``: spec
        §10 test 15 lets them stand when reported), equality and inequality
        rows (``equality_rows``, ``inequality_rows``), the Lagrangian
        contact rows against obstacles (``obstacle_contacts``: a vertex
        near a box face, a cloth edge across a box edge, a wire or a nail
        tip against a face; a vertex near two boxes counts twice), EOL
        vertices made and released (``eol_created``, ``eol_released``), EOL
        vertices now (``eol_vertices``), the sizing remesh's edges split,
        collapsed and flipped (``sizing_split_edges``,
        ``sizing_collapsed_edges``, ``sizing_flipped_edges``; 0 without
        :class:`Sizing`), hinge friction slips and plastic yields
        (``hinge_slips``, ``hinge_yields``, summed over sub-steps; 0 without
        wrinkles), and its
        seconds per Table 1 bucket
        (``time_cd``, ``time_rm``, ``time_mf``, ``time_vi``)."""
        return dict(self._core().last_stats())

    def stage_times(self) -> dict[str, float]:
        """Seconds per solver stage since the start, in the paper's Table 1
        buckets (spec §8.2): ``cd`` collision detection, ``rm`` remeshing,
        ``mf`` matrix fill, ``vi`` velocity integration (the QP)."""
        return dict(self._core().timings())  # the core's name for the same buckets

    # -- checkpoints -------------------------------------------------------------

    def _save_objects(self, arrays: dict[str, npt.NDArray[Any]]) -> dict[str, Any]:
        cloth = []
        for o in self._objects:
            arrays["cloth_vertices"] = o.mesh.vertices
            arrays["cloth_faces"] = o.mesh.faces
            arrays["cloth_material_coordinates"] = self._cloth_args["material_coordinates"]
            cloth.append({"name": o.name, "material": dataclasses.asdict(o.material),
                          "wrinkles": None if o.wrinkles is None else o.wrinkles._dict()})
        return {"cloth": cloth}

    def _load_objects(self, arrays: dict[str, npt.NDArray[Any]], meta: dict[str, Any]) -> None:
        for c in meta["cloth"]:
            w = c.get("wrinkles")
            self.add_cloth(TriMesh(arrays["cloth_vertices"], arrays["cloth_faces"]), Material(**c["material"]),
                           material_coordinates=arrays["cloth_material_coordinates"], name=c["name"],
                           wrinkles=None if w is None else Wrinkles(**w))

    def _restore_handle(self, obj: Any, arrays: dict[str, Any], handle: dict[str, Any]) -> int:
        raise InvalidInputError("EOL cloth has no scripted handles (its pins are in the state)")

