"""Implicit cloth with time-dependent persistent wrinkles (Gong, Yang, Shao,
Wang 2025; spec ``persistent_wrinkles.md``).

Triangle meshes with an orthotropic StVK membrane and discrete-shell hinge
bending, stepped by linearized implicit Euler (one sparse solve per step).
Each hinge (and optionally each membrane strain component) carries an
internal-friction element whose stick threshold grows with how long it has
stuck, and a hardening-plasticity element whose hardening falls the longer
plastic flow lasts. Holding a fold longer therefore leaves a sharper, less
recoverable wrinkle.

Example::

    sim = cr.cloth.Simulation(dt=1e-3)
    strip = sim.add_cloth(cr.geometry.grid_mesh(size=(0.1, 0.3), resolution=(20, 60)),
                          cr.cloth.Material.preset("cotton"), wrinkles=cr.cloth.Wrinkles())
    strip.pin(edge_indices)
    sim.add_collider(cr.colliders.Sphere(center=(0, -0.1, 0), radius=0.05))
    sim.advance(0.5)
    strip.metrics()["M_abs"]

Several garments can share one simulation (``add_cloth`` again): they are
solved together and collide with each other and themselves (cloth–cloth
contact is on by default). Units are SI: m, s, kg; areal density kg/m²;
membrane stiffness N/m; bending stiffness J; angles in radians. The shared
vocabulary of all modules is in ``docs/api.md``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt

from . import _core
from . import _checkpoint, _handles
from . import io as _io
from ._checks import (
    as_points,
    as_vec3,
    choice,
    finite,
    flag,
    in_range,
    index,
    non_negative,
    positive,
    positive_int,
    velocity_field,
    vertex_indices,
)
from ._progress import progress as _progress_bar
from .colliders import Collider, _from_spec, _to_spec
from .errors import CheckpointError, InvalidInputError
from .frames import Frame, FrameMesh, check_name, collider_part, unique_name
from .geometry import TriMesh

__all__ = [
    "Material",
    "Wrinkles",
    "Simulation",
    "Cloth",
    "wrinkle_metrics",
    "count_triangle_intersections",
]

Vec3Like = Sequence[float] | npt.ArrayLike
Triple = tuple[float, float, float]

def _triple(x: Any, name: str) -> Triple:
    v = np.asarray(x, dtype=np.float64).reshape(-1)
    if v.size == 1:
        v = np.repeat(v, 3)
    if v.size != 3 or not np.all(np.isfinite(v)):
        raise InvalidInputError(f"{name} needs 3 finite values (uu, vv, uv) or one for all; got {x!r}")
    return (float(v[0]), float(v[1]), float(v[2]))


@dataclass(frozen=True)
class Material:
    """A cloth material: one row of the paper's Table 2/3 plus the tensile
    constants of spec §7.3. Use :meth:`preset` for the paper's fabrics
    (names in :attr:`PRESETS`). Frozen: use ``dataclasses.replace`` or
    ``Material.preset(name, field=value)`` for a variant. Every field is
    range-checked when the material is made.

    Fields (units): ``areal_density`` ρ (kg/m², > 0); membrane ``k11`` warp,
    ``k22`` weft, ``k12`` coupling, ``k33`` shear (N/m, ≥ 0); ``bending``
    K̂_b (J, the tables' "3×K_b", ≥ 0); ``bending_scale`` c_b (0.25
    reproduces the paper's figures, spec A1); ``friction_stiffness`` K̂_f
    (J), ``friction_eps0`` and ``friction_eps_inf`` (rad: stick threshold at
    zero and infinite dwell), ``friction_tau`` (s, > 0); ``yield_angle`` εY0
    (rad), ``hardening`` K_h0 (J), ``hardening_drop`` g (in [0, 1]),
    ``hardening_tau`` τ_p (s, > 0); tensile friction and plasticity per
    strain component (uu, vv, uv): stiffness (N/m), thresholds (Green
    strain), times (s).
    """

    areal_density: float = 0.06
    k11: float = 50.0
    k22: float = 50.0
    k12: float = 0.2
    k33: float = 30.0
    bending: float = 5e-6
    bending_scale: float = 0.25
    friction_stiffness: float = 1e-5
    friction_eps0: float = 0.1
    friction_eps_inf: float = 1.7
    friction_tau: float = 30.0
    yield_angle: float = 1.8
    hardening: float = 5e-6
    hardening_drop: float = 0.99
    hardening_tau: float = 30.0
    tensile_friction_stiffness: Triple = (200.0, 200.0, 5.0)
    tensile_eps0: Triple = (0.005, 0.005, 0.005)
    tensile_eps_inf: Triple = (0.05, 0.05, 0.05)
    tensile_tau_f: Triple = (30.0, 30.0, 30.0)
    tensile_eps_y0: Triple = (0.033, 0.033, 0.033)
    tensile_k_h0: Triple = (10.0, 10.0, 5.0)
    tensile_g: Triple = (0.5, 0.5, 0.5)
    tensile_tau_p: Triple = (30.0, 30.0, 30.0)

    #: The paper's fabrics by name: ``cotton``, ``denim``, ``polyester``
    #: (Table 2) and ``trouser_cotton``, ``trouser_denim``,
    #: ``trouser_polyester`` (Table 3), each a dict of field values.
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {}

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.name.startswith("tensile_"):
                t = _triple(v, f"Material.{f.name}")
                if min(t) < 0:
                    raise InvalidInputError(f"Material.{f.name} must be >= 0; got {v!r}")
                object.__setattr__(self, f.name, t)
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)):
                raise InvalidInputError(f"Material.{f.name} must be a number; got {v!r}")
            non_negative(v, f"Material.{f.name}")
            object.__setattr__(self, f.name, float(v))
        positive(self.areal_density, "Material.areal_density (kg/m²)")
        positive(self.friction_tau, "Material.friction_tau (s)")
        positive(self.hardening_tau, "Material.hardening_tau (s)")
        in_range(self.hardening_drop, "Material.hardening_drop g", 0.0, 1.0)
        if self.friction_eps_inf < self.friction_eps0:
            raise InvalidInputError(
                f"Material.friction_eps_inf ({self.friction_eps_inf}) must be >= friction_eps0 "
                f"({self.friction_eps0}): the stick threshold grows with dwell")
        for name in ("tensile_tau_f", "tensile_tau_p"):
            if min(getattr(self, name)) <= 0:
                raise InvalidInputError(f"Material.{name} must be > 0 s; got {getattr(self, name)}")

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> Material:
        """The paper's fabric ``name`` (a key of :attr:`PRESETS`) with
        optional field overrides. Unknown names or fields raise
        :class:`InvalidInputError`."""
        key = choice(name, "cloth preset", tuple(cls.PRESETS))
        known = {f.name for f in dataclasses.fields(cls)}
        bad = set(overrides) - known
        if bad:
            raise InvalidInputError(f"unknown Material fields {sorted(bad)}; known: {sorted(known)}")
        return cls(**{**cls.PRESETS[key], **overrides})

    def _dict(self) -> dict[str, Any]:
        # The core lists the same field names (crumple_core::cloth::material).
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


Material.PRESETS.update({n: _core.cloth_preset(n) for n in _core.cloth_preset_names()})


@dataclass(frozen=True)
class Wrinkles:
    """Which wrinkle elements run (spec §4, §5.2–5.3).

    ``bend_friction``: "dwell" (the paper's stick–slip anchor with dwell),
    "dahl" (the Dahl baseline of E9) or "off"; ``bend_plasticity``: hinge
    hardening plasticity; ``tensile_friction`` / ``tensile_plasticity``: the
    same elements on the three Green-strain components of each triangle;
    ``clock``: plastic-clock semantics ("alg2" default, "eq14", "always"; A2);
    ``friction_slip_tangent``: keep κ_f in the Jacobian of slipping hinges
    (the paper's behaviour, A15); ``warp_faces``: the hold warp also advances
    triangle clocks; ``constant_hardening``: the time-independent hardening
    baseline of E6 (g = 0).
    """

    bend_friction: Literal["dwell", "dahl", "off"] = "dwell"
    bend_plasticity: bool = True
    tensile_friction: bool = False
    tensile_plasticity: bool = False
    clock: Literal["alg2", "eq14", "always"] = "alg2"
    friction_slip_tangent: bool = True
    warp_faces: bool = False
    constant_hardening: bool = False

    def __post_init__(self) -> None:
        choice(self.bend_friction, "bend_friction", ("dwell", "dahl", "off"))
        choice(self.clock, "clock", ("alg2", "eq14", "always"))
        for f in dataclasses.fields(self):
            if f.type in ("bool",):
                flag(getattr(self, f.name), f"Wrinkles.{f.name}")

    @classmethod
    def off(cls) -> Wrinkles:
        """All elements off: plain elastic cloth (the ``M_elastic`` reference)."""
        return cls(bend_friction="off", bend_plasticity=False)

    def _dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


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
    from ._checks import as_faces

    return int(_core.count_triangle_intersections(as_points(positions, "positions"), as_faces(faces)))


class Cloth(_handles.Scripted):
    """One garment in a :class:`Simulation`, returned by
    :meth:`Simulation.add_cloth`. Its arrays use the garment's own vertex,
    face and hinge numbering (that of the mesh it was made from).

    Read-outs are properties (copies); pins and scripted handles live here,
    with the same names and signatures as on :mod:`crumple.mpm` objects.
    """

    def __init__(self, sim: Simulation, index: int, name: str, mesh: TriMesh, material: Material,
                 wrinkles: Wrinkles) -> None:
        self._sim = sim
        self.index = index
        self.name = name
        self.mesh = mesh
        self.material = material
        self.wrinkles = wrinkles
        self._handle_ids: list[int] = []  # this garment's handles (positions in sim._handles)

    def __repr__(self) -> str:
        return f"Cloth(name={self.name!r}, vertices={self.num_vertices}, faces={self.mesh.num_faces})"

    # -- numbering ---------------------------------------------------------

    def _ranges(self) -> tuple[slice, slice, slice]:
        v0, v1, f0, f1, h0, h1 = self._sim._s.garment_ranges()[self.index]
        return slice(v0, v1), slice(f0, f1), slice(h0, h1)

    @property
    def num_vertices(self) -> int:
        """Number of vertices."""
        return self.mesh.num_vertices

    def _global(self, indices: npt.ArrayLike, name: str = "indices") -> npt.NDArray[np.int64]:
        return vertex_indices(indices, self.num_vertices, name) + self._ranges()[0].start

    # -- state -------------------------------------------------------------

    @property
    def positions(self) -> npt.NDArray[np.float64]:
        """Vertex positions (N, 3) float64, m (a copy). Settable."""
        return np.asarray(self._sim._s.positions)[self._ranges()[0]]

    @positions.setter
    def positions(self, x: npt.ArrayLike) -> None:
        xs = as_points(x, "positions")
        if xs.shape[0] != self.num_vertices:
            raise InvalidInputError(f"positions must have shape ({self.num_vertices}, 3); got {xs.shape}")
        all_x = np.asarray(self._sim._s.positions)
        all_x[self._ranges()[0]] = xs
        self._sim._s.set_positions(all_x)

    @property
    def velocities(self) -> npt.NDArray[np.float64]:
        """Vertex velocities (N, 3) float64, m/s (a copy). Settable from one
        3-vector or an (N, 3) array."""
        return np.asarray(self._sim._s.velocities)[self._ranges()[0]]

    @velocities.setter
    def velocities(self, v: npt.ArrayLike) -> None:
        all_v = np.asarray(self._sim._s.velocities)
        all_v[self._ranges()[0]] = velocity_field(v, self.num_vertices, "velocities")
        self._sim._s.set_velocities(all_v)

    @property
    def faces(self) -> npt.NDArray[np.int64]:
        """Triangles (F, 3) int64, in this garment's vertex numbering."""
        return self.mesh.faces

    @property
    def hinges(self) -> npt.NDArray[np.int64]:
        """Hinges (H, 4) int64: edge (x0, x1) and wing tips (x2, x3), spec §2.1,
        in this garment's vertex numbering."""
        vr, _, hr = self._ranges()
        return np.asarray(self._sim._s.hinges)[hr] - vr.start

    def _hinge_array(self, name: str) -> npt.NDArray[np.float64]:
        return np.asarray(getattr(self._sim._s, name))[self._ranges()[2]]

    @property
    def hinge_rest_lengths(self) -> npt.NDArray[np.float64]:
        """Rest edge length per hinge (H,) float64, m."""
        return self._hinge_array("hinge_rest_length")

    @property
    def masses(self) -> npt.NDArray[np.float64]:
        """Lumped vertex masses (N,) float64, kg."""
        return np.asarray(self._sim._s.masses)[self._ranges()[0]]

    @property
    def hinge_angles(self) -> npt.NDArray[np.float64]:
        """Signed dihedral angle per hinge (H,) float64, rad, flat = 0, at the
        current positions."""
        return np.asarray(self._sim._s.hinge_angles())[self._ranges()[2]]

    @property
    def plastic_angles(self) -> npt.NDArray[np.float64]:
        """Plastic rest angle θ_p per hinge (H,) float64, rad."""
        return self._hinge_array("plastic_angle")

    @property
    def anchor_angles(self) -> npt.NDArray[np.float64]:
        """Friction anchor θ_a per hinge (H,) float64, rad."""
        return self._hinge_array("anchor_angle")

    @property
    def stick_times(self) -> npt.NDArray[np.float64]:
        """Friction dwell clock per hinge (H,) float64, s."""
        return self._hinge_array("stick_time")

    @property
    def plastic_times(self) -> npt.NDArray[np.float64]:
        """Hardening clock per hinge (H,) float64, s."""
        return self._hinge_array("plastic_time")

    @property
    def yield_angles(self) -> npt.NDArray[np.float64]:
        """Current yield angle ε_Y per hinge (H,) float64, rad."""
        return self._hinge_array("yield_angle")

    @property
    def tensile_plastic_strains(self) -> npt.NDArray[np.float64]:
        """Tensile plastic Green strain per triangle (F, 3) float64: uu, vv, uv."""
        return np.asarray(self._sim._s.tensile_plastic_strain)[self._ranges()[1]]

    @property
    def tensile_anchors(self) -> npt.NDArray[np.float64]:
        """Tensile friction anchors per triangle (F, 3) float64 (Green strain)."""
        return np.asarray(self._sim._s.tensile_anchor)[self._ranges()[1]]

    @property
    def pin_forces(self) -> npt.NDArray[np.float64]:
        """Handle spring force on each vertex (N, 3) float64, N (0 where free)."""
        return np.asarray(self._sim._s.pin_forces())[self._ranges()[0]]

    @property
    def hinge_midpoints(self) -> npt.NDArray[np.float64]:
        """Midpoint of each hinge edge (H, 3) float64, m: for region masks."""
        x = self.positions
        h = self.hinges
        return 0.5 * (x[h[:, 0]] + x[h[:, 1]])

    def metrics(self, mask: npt.ArrayLike | None = None) -> dict[str, float]:
        """Wrinkle metrics of spec §8 (``M_abs``, ``M_sharp``, ``M_max``,
        ``M_plastic``, ``M_anchor``, rad) now, optionally over the hinges in
        ``mask`` (H,) bool."""
        return wrinkle_metrics(self.hinge_angles, self.hinge_rest_lengths, self.plastic_angles,
                               self.anchor_angles, mask)

    def trimesh(self) -> TriMesh:
        """The current shape as a TriMesh (for export and viewing)."""
        return TriMesh(self.positions, self.faces)

    def count_self_intersections(self) -> int:
        """Pairs of non-adjacent triangles of this garment that intersect now."""
        return count_triangle_intersections(self.positions, self.faces)

    # -- pins and handles ----------------------------------------------------

    def pin(self, indices: npt.ArrayLike, targets: npt.ArrayLike | None = None, *,
            stiffness: float | None = None) -> None:
        """Pin vertices ``indices`` (ints or a boolean mask) to ``targets
        (K, 3)`` m (default: where they are) with springs of ``stiffness``
        N/m (default: the simulation's ``handle_stiffness``)."""
        idx = self._global(indices)
        t = None if targets is None else as_points(targets, "targets")
        self._sim._s.pin(idx, t, None if stiffness is None else positive(stiffness, "stiffness"))

    def set_pin_targets(self, indices: npt.ArrayLike, positions: npt.ArrayLike,
                        velocities: npt.ArrayLike | None = None) -> None:
        """Move pinned vertices: their targets are at ``positions (K, 3)`` m
        now. Cloth pins hold still between calls: ``velocities`` must be
        None or zero (call this once per frame for scripted motion, or use
        :meth:`add_handle` for a keyframed path)."""
        if velocities is not None and np.any(velocity_field(velocities, len(np.atleast_1d(np.asarray(indices))),
                                                            "velocities") != 0):
            raise InvalidInputError(
                "cloth pin targets do not move by themselves: pass velocities=None and update the targets "
                "every frame, or use add_handle(...) for a keyframed path")
        self._sim._s.set_pin_targets(self._global(indices), as_points(positions, "positions"))

    def release(self, indices: npt.ArrayLike | None = None) -> None:
        """Unpin ``indices`` (default: every pinned vertex of this garment);
        they become free."""
        idx = (np.arange(self.num_vertices, dtype=np.int64) + self._ranges()[0].start if indices is None
               else self._global(indices))
        self._sim._s.release(idx)

    @property
    def num_points(self) -> int:
        """Number of vertices (the name every module's objects share)."""
        return self.mesh.num_vertices

    def _add_core_handle(self, idx: npt.NDArray[np.int64], pivot: tuple[float, float, float], times: list[float],
                         translations: npt.NDArray[np.float64], rotations: npt.NDArray[np.float64],
                         stiffness: float | None) -> int:
        return int(self._sim._s.add_handle_keyframes(idx + self._ranges()[0].start, pivot, times, translations,
                                                     rotations, stiffness))

    # -- frames --------------------------------------------------------------

    def _frame_part(self) -> FrameMesh:
        x = self.positions
        speed = np.linalg.norm(self.velocities, axis=1)
        # Per-vertex plastic angle for colouring: the largest |θ_p| of the
        # hinges whose edge touches the vertex.
        h = self.hinges
        pa = np.abs(self.plastic_angles)
        vert_pa = np.zeros(len(x))
        if len(h):
            np.maximum.at(vert_pa, h[:, 0], pa)
            np.maximum.at(vert_pa, h[:, 1], pa)
        return FrameMesh(positions=x, faces=self.faces,
                         vertex_data={"speed": speed, "plastic_angle": vert_pa})


class Simulation:
    """Implicit persistent-wrinkle cloth: garments added with
    :meth:`add_cloth`, solved together in one sparse system per step.

    Keyword options: ``dt`` time step (s, 1e-3 as in the paper);
    ``gravity`` (m/s²); ``rayleigh_damping`` Rayleigh stiffness damping γ
    (s, 0); ``handle_stiffness`` pin spring k_h (N/m, 1e5);
    ``self_collision`` cloth–cloth contact (default on: repulsion inside the
    solve plus a continuous-collision fail-safe, so no garment passes
    through itself or another; turn off only to time the solver alone);
    ``repulsion_distance`` (m, 5e-3), ``repulsion_stiffness`` (3e3),
    ``contact_thickness`` (m, 1e-3: the gap the post-step projection keeps
    from colliders and between layers), ``self_friction`` (0.01) of the contact model
    (spec §6.3); ``linear_solver`` "lagged" (default: CG to
    ``cg_tolerance`` preconditioned by a single-precision sparse Cholesky
    factor refreshed only when CG slows down), "cholesky" (exact sparse
    Cholesky every step) or "cg" (block-Jacobi CG to ``cg_tolerance``).

    Raises :class:`InvalidInputError` for bad parameters.
    """

    def __init__(
        self,
        *,
        dt: float = 1e-3,
        gravity: Vec3Like = (0.0, -9.81, 0.0),
        rayleigh_damping: float = 0.0,
        handle_stiffness: float = 1e5,
        self_collision: bool = True,
        repulsion_distance: float = 0.005,
        repulsion_stiffness: float = 3e3,
        contact_thickness: float = 0.001,
        self_friction: float = 0.01,
        linear_solver: Literal["lagged", "cholesky", "cg"] = "lagged",
        cg_tolerance: float = 1e-8,
        cg_max_iterations: int = 5000,
    ) -> None:
        self._params: dict[str, Any] = self._checked(dict(
            dt=dt, gravity=gravity, rayleigh_damping=rayleigh_damping, handle_stiffness=handle_stiffness,
            repulsion_distance=repulsion_distance, repulsion_stiffness=repulsion_stiffness,
            contact_thickness=contact_thickness,
            self_friction=self_friction, self_collision=self_collision, linear_solver=linear_solver,
            cg_tolerance=cg_tolerance, cg_max_iterations=cg_max_iterations))
        self._s: Any = None  # the core simulation, made by the first add_cloth
        self._objects: list[Cloth] = []
        self._colliders: list[Collider] = []
        self._collider_names: list[str] = []
        # Scripted handles as made, for checkpoints (core id order).
        self._handles: list[dict[str, Any]] = []
        # What add_cloth was given, per garment, for checkpoints.
        self._garment_args: list[dict[str, Any]] = []

    @staticmethod
    def _checked(p: dict[str, Any]) -> dict[str, Any]:
        return dict(
            dt=positive(p["dt"], "dt"),
            gravity=as_vec3(p["gravity"], "gravity"),
            rayleigh_damping=non_negative(p["rayleigh_damping"], "rayleigh_damping"),
            handle_stiffness=positive(p["handle_stiffness"], "handle_stiffness"),
            repulsion_distance=positive(p["repulsion_distance"], "repulsion_distance"),
            repulsion_stiffness=non_negative(p["repulsion_stiffness"], "repulsion_stiffness"),
            contact_thickness=non_negative(p["contact_thickness"], "contact_thickness"),
            self_friction=non_negative(p["self_friction"], "self_friction"),
            self_collision=flag(p["self_collision"], "self_collision"),
            linear_solver=choice(p["linear_solver"], "linear_solver", ("lagged", "cholesky", "cg")),
            cg_tolerance=positive(p["cg_tolerance"], "cg_tolerance"),
            cg_max_iterations=positive_int(p["cg_max_iterations"], "cg_max_iterations"),
        )

    # -- building --------------------------------------------------------------

    def add_cloth(
        self,
        mesh: TriMesh,
        material: Material | str | None = None,
        *,
        wrinkles: Wrinkles | None = None,
        velocity: Vec3Like = (0.0, 0.0, 0.0),
        uv: npt.ArrayLike | None = None,
        warp_direction: Vec3Like | None = None,
        init_rest_from_mesh: bool = False,
        name: str = "cloth",
    ) -> Cloth:
        """Add a garment whose rest shape is ``mesh`` and return its handle.

        ``material``: a :class:`Material` or a preset name (default cotton);
        ``wrinkles``: which wrinkle elements run (default :class:`Wrinkles`);
        ``velocity``: m/s, one 3-vector or (N, 3); ``uv (F, 3, 2)``: per-corner
        material coordinates (m) giving warp = +u, weft = +v; else
        ``warp_direction`` projected into each triangle; else the mesh's
        principal axis; ``init_rest_from_mesh``: the mesh's dihedral angles
        are the rest angles (default flat); ``name``: the garment's name in
        frames and exports (made unique).

        Raises :class:`MeshError` for non-manifold or inconsistently oriented
        meshes and :class:`InvalidInputError` for bad arguments.
        """
        if not isinstance(mesh, TriMesh):
            raise InvalidInputError(f"mesh must be a crumple.geometry.TriMesh; got {type(mesh).__name__}")
        if material is None:
            material = Material.preset("cotton")
        elif isinstance(material, str):
            material = Material.preset(material)
        if not isinstance(material, Material):
            raise InvalidInputError(f"material must be a cloth.Material or a preset name; got {type(material).__name__}")
        wrinkles = Wrinkles() if wrinkles is None else wrinkles
        if not isinstance(wrinkles, Wrinkles):
            raise InvalidInputError(f"wrinkles must be a cloth.Wrinkles; got {type(wrinkles).__name__}")
        check_name(name, "name")
        vel = velocity_field(velocity, mesh.num_vertices, "velocity")
        uv_arr = None
        if uv is not None:
            uv_arr = np.ascontiguousarray(np.asarray(uv, dtype=np.float64))
            if uv_arr.ndim != 3 or uv_arr.shape[1:] != (3, 2) or uv_arr.shape[0] != mesh.num_faces:
                raise InvalidInputError(f"uv must have shape ({mesh.num_faces}, 3, 2); got {uv_arr.shape}")
            if not np.all(np.isfinite(uv_arr)):
                raise InvalidInputError("uv contains NaN or inf")
        wd = None if warp_direction is None else as_vec3(warp_direction, "warp_direction")
        init_rest = bool(init_rest_from_mesh)
        if self._s is None:
            self._s = _core.ClothSimulation(mesh._m, material._dict(), wrinkles._dict(), self._params,
                                            uv_arr, wd, init_rest)
            # Colliders added before the first garment reach the core now.
            for c in self._colliders:
                self._s.add_collider(c._c)
        else:
            self._s.add_garment(mesh._m, material._dict(), wrinkles._dict(), uv_arr, wd, init_rest)
        taken = {o.name for o in self._objects} | set(self._collider_names)
        obj = Cloth(self, len(self._objects), unique_name(name, taken), mesh, material, wrinkles)
        self._objects.append(obj)
        self._garment_args.append(dict(uv=uv_arr, warp_direction=wd, init_rest=init_rest))
        if np.any(vel != 0):
            obj.velocities = vel
        return obj

    @property
    def objects(self) -> tuple[Cloth, ...]:
        """The garments, in the order added (the handles ``add_cloth`` returned)."""
        return tuple(self._objects)

    def _core(self) -> Any:
        if self._s is None:
            raise InvalidInputError("the simulation has no cloth yet; call add_cloth(mesh, material) first")
        return self._s

    # -- settings ----------------------------------------------------------------

    @property
    def dt(self) -> float:
        """Time step, s."""
        return float(self._params["dt"])

    def set(self, **params: Any) -> None:
        """Change step settings (any keyword option of the constructor),
        e.g. ``sim.set(self_collision=False, dt=5e-4)``."""
        bad = set(params) - set(self._params)
        if bad:
            raise InvalidInputError(f"unknown settings {sorted(bad)}; known: {sorted(self._params)}")
        new = self._checked({**self._params, **params})
        if self._s is not None:
            self._s.set_params(new)
        self._params = new

    # -- colliders -----------------------------------------------------------

    def add_collider(self, collider: Collider, *, name: str | None = None) -> int:
        """Add a kinematic collider (plane, sphere, box, capsule, cylinder,
        mesh SDF) and return its index. Contact uses the spec's cubic
        repulsion with the collider's friction, plus a post-step projection
        to ``contact_thickness``. ``name``: its name in frames (default its type)."""
        if not isinstance(collider, Collider):
            raise InvalidInputError(f"collider must be a crumple.colliders.Collider; got {type(collider).__name__}")
        collider.advance_to(self.time)
        self._colliders.append(collider)
        if name is not None:
            check_name(name, "name")
        taken = {o.name for o in self._objects} | set(self._collider_names)
        self._collider_names.append(unique_name(name or type(collider).__name__.lower(), taken))
        if self._s is not None:
            self._s.add_collider(collider._c)
        return len(self._colliders) - 1

    @property
    def colliders(self) -> tuple[Collider, ...]:
        """The colliders, in the order added."""
        return tuple(self._colliders)

    def remove_collider(self, index_: int) -> None:
        """Remove collider ``index_`` (later ones shift down)."""
        i = index(index_, "collider index", len(self._colliders))
        if self._s is not None:
            self._s.remove_collider(i)
        del self._colliders[i]
        del self._collider_names[i]

    def _push_colliders(self) -> None:
        s = self._core()
        for i, c in enumerate(self._colliders):
            if c._callback is not None:
                c.advance_to(self.time)
            s.replace_collider(i, c._c)

    def _pull_colliders(self) -> None:
        for i, c in enumerate(self._colliders):
            c._c = self._s.get_collider(i)

    # -- stepping --------------------------------------------------------------

    def hold_warp(self, per_step: float, steps: int) -> None:
        """Hold-time warp (spec §4.6): add ``per_step`` s to every hinge's
        stick and plastic clocks after each of the next ``steps`` steps (the
        paper: 10 s × 50 steps = a 500 s hold in 50 steps)."""
        self._core().set_hold_warp(non_negative(per_step, "per_step"), positive_int(steps, "steps", 0))

    def step(self, dt: float | None = None) -> None:
        """One step of ``dt`` s (default: the configured ``dt``). Raises
        :class:`SimulationDiverged` if the state blows up; the simulation is
        then left as it was before the step."""
        h = None if dt is None else positive(dt, "dt")
        self._push_colliders()
        try:
            self._s.step(h)
        finally:
            self._pull_colliders()

    def advance(self, duration: float, *, frames: int = 1, progress: bool = False) -> int:
        """Advance by ``duration`` s (≥ 0) and land exactly on ``time +
        duration``: steps of ``dt``, each frame's last step shortened when
        needed. ``frames``: equal chunks (collider callbacks run once per
        chunk; a progress bar when ``progress``). Ctrl-C stops it at a step
        boundary with the state intact. A diverging step raises
        :class:`SimulationDiverged` with the state rolled back to the start
        of that step. Returns the steps taken."""
        d = non_negative(duration, "duration")
        frames = positive_int(frames, "frames")
        self._core()
        steps = 0
        t0 = self.time
        with _progress_bar(frames, "cloth", enabled=progress and frames > 1) as bar:
            for k in range(frames):
                self._push_colliders()
                try:
                    # Frame ends from the start time, so rounding does not accumulate.
                    steps += int(self._s.advance(t0 + d * (k + 1) / frames - self.time))
                finally:
                    self._pull_colliders()
                bar.update(1)
        return steps

    # -- read-outs ---------------------------------------------------------------

    @property
    def time(self) -> float:
        """Simulated time, s."""
        return 0.0 if self._s is None else float(self._s.time)

    @property
    def step_count(self) -> int:
        """Steps taken."""
        return 0 if self._s is None else int(self._s.step_count)

    def kinetic_energy(self) -> float:
        """Kinetic energy of all garments, J."""
        return float(self._core().kinetic_energy())

    def stats(self) -> dict[str, float]:
        """Last step: CG iterations, solve residual, hinge slips/yields,
        contact counts and stage times (s)."""
        return dict(self._core().last_stats())

    def count_self_intersections(self) -> int:
        """Pairs of non-adjacent triangles that intersect now, over all
        garments (within one garment and between garments)."""
        return int(self._core().count_self_intersections())

    def frame(self) -> Frame:
        """What a frame shows now: every garment as a mesh (per-vertex
        ``speed`` m/s and ``plastic_angle`` rad) and every collider with its
        pose. Exporters (PLY, USD), the viewer and the video renderer read
        only this."""
        objects: dict[str, Any] = {o.name: o._frame_part() for o in self._objects}
        colliders = {n: collider_part(c) for n, c in zip(self._collider_names, self._colliders)}
        return Frame(time=self.time, objects=objects, colliders=colliders)

    # -- checkpoints -------------------------------------------------------------

    def save(self, path: str | Any) -> Any:
        """Write a checkpoint ``.npz``: the garments (rest meshes, materials,
        switches, frames), settings, handles, colliders and their motions,
        pins, and every state array (internal variables included). A run
        restored with :meth:`load` continues bit-identically to this one
        (saving drops the lagged solver's cached factor in both, so both
        refactorize next step). Collider callbacks are not saved: re-attach
        them."""
        s = self._core()
        s.invalidate_solver_cache()
        arrays: dict[str, npt.NDArray[Any]] = {}
        garments = []
        handles = []
        for gi, (o, ga) in enumerate(zip(self._objects, self._garment_args)):
            arrays[f"g{gi}_vertices"] = o.mesh.vertices
            arrays[f"g{gi}_faces"] = o.mesh.faces
            if ga["uv"] is not None:
                arrays[f"g{gi}_uv"] = ga["uv"]
            garments.append({"name": o.name, "material": dataclasses.asdict(o.material),
                             "wrinkles": o.wrinkles._dict(), "warp_direction": ga["warp_direction"],
                             "init_rest": ga["init_rest"], "uv": ga["uv"] is not None})
        handles = _handles.save(self._handles, arrays)
        for k, v in s.state_arrays().items():
            arrays[f"state_{k}"] = np.asarray(v)
        meta = {"solver": "cloth", "params": self._params, "garments": garments, "handles": handles,
                "colliders": [_to_spec(c) for c in self._colliders], "collider_names": self._collider_names}
        return _io.save_checkpoint(path, arrays, meta)

    @classmethod
    def load(cls, path: str | Any) -> Simulation:
        """Rebuild a simulation from a checkpoint written by :meth:`save`;
        its garments are in :attr:`objects` (in the order added). Raises
        :class:`CheckpointError` for a missing, corrupt, truncated or
        foreign file."""
        arrays, meta = _checkpoint.load(path, "cloth")
        try:
            sim = cls(**meta["params"])
            for gi, g in enumerate(meta["garments"]):
                mesh = TriMesh(arrays[f"g{gi}_vertices"], arrays[f"g{gi}_faces"])
                sim.add_cloth(mesh, Material(**g["material"]), wrinkles=Wrinkles(**g["wrinkles"]),
                              uv=arrays[f"g{gi}_uv"] if g["uv"] else None, warp_direction=g["warp_direction"],
                              init_rest_from_mesh=g["init_rest"], name=g["name"])
            for c, n in zip(meta["colliders"], meta["collider_names"]):
                sim.add_collider(_from_spec(c["spec"], [tuple(m) for m in c["motions"]]), name=n)
            def core_restore(o: Cloth, a: dict[str, Any], h: dict[str, Any]) -> int:
                return int(sim._s.restore_handle(a["indices"] + o._ranges()[0].start, a["reference"],
                                                 tuple(h["pivot"]), float(h["start"]), h["status"] == "active",
                                                 list(h["times"]), a["translations"], a["rotations"]))

            _handles.restore(sim, meta["handles"], arrays, core_restore)
            state: dict[str, Any] = {k[len("state_"):]: v for k, v in arrays.items() if k.startswith("state_")}
            for key in ("time", "warp_per_step"):
                state[key] = float(state[key])
            for key in ("step", "warp_steps_left"):
                state[key] = int(state[key])
            sim._push_colliders()
            sim._s.set_state_arrays(state)
        except CheckpointError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, OverflowError, AttributeError) as e:
            raise CheckpointError(f"{str(path)!r} is not a usable cloth checkpoint: {type(e).__name__}: {e}") from e
        for c in sim._colliders:
            c.advance_to(sim.time)
        return sim
