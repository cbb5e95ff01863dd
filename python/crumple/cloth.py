"""Implicit cloth with time-dependent persistent wrinkles (Gong, Yang, Shao,
Wang 2025; spec ``persistent_wrinkles.md``).

A triangle mesh with an orthotropic StVK membrane and discrete-shell hinge
bending, stepped by linearized implicit Euler (one sparse solve per step).
Each hinge (and optionally each membrane strain component) carries an
internal-friction element whose stick threshold grows with how long it has
stuck, and a hardening-plasticity element whose hardening falls the longer
plastic flow lasts. Holding a fold longer therefore leaves a sharper, less
recoverable wrinkle.

Example::

    mesh = cr.geometry.grid_mesh(size=(0.1, 0.3), resolution=(20, 60))
    sim = cr.cloth.Simulation(mesh, cr.cloth.Material.preset("cotton"), cr.cloth.Wrinkles(), dt=1e-3)
    sim.pin(edge_indices)
    sim.add_collider(cr.colliders.Sphere(center=(0, -0.1, 0), radius=0.05))
    sim.advance(0.5)
    sim.metrics()["M_abs"]

Units are SI: m, s, kg; areal density kg/m²; membrane stiffness N/m;
bending stiffness J; angles in radians.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from . import _core
from ._checks import as_points, as_vec3, choice, finite, non_negative, positive, positive_int
from ._progress import progress as _progress_bar
from . import io as _io
from .colliders import Collider, _from_spec, _to_spec, rotation
from .errors import InvalidInputError
from .geometry import TriMesh

__all__ = [
    "Material",
    "Wrinkles",
    "Simulation",
    "wrinkle_metrics",
    "count_triangle_intersections",
    "PRESETS",
]

Vec3Like = Sequence[float] | npt.ArrayLike

#: Names accepted by :meth:`Material.preset`: the paper's Table 2 specimens
#: and Table 3 trouser fabrics.
PRESETS: tuple[str, ...] = tuple(_core.cloth_preset_names())


def _triple(x: Any, name: str) -> list[float]:
    v = np.asarray(x, dtype=np.float64).reshape(-1)
    if v.size == 1:
        v = np.repeat(v, 3)
    if v.size != 3 or not np.all(np.isfinite(v)):
        raise InvalidInputError(f"{name} needs 3 finite values (uu, vv, uv) or one for all; got {x!r}")
    return [float(a) for a in v]


@dataclass
class Material:
    """A cloth material: one row of the paper's Table 2/3 plus the tensile
    constants of spec §7.3. Use :meth:`preset` for the paper's fabrics.

    Fields (units): ``density`` ρ (kg/m²); membrane ``k11`` warp, ``k22``
    weft, ``k12`` coupling, ``k33`` shear (N/m); ``bending`` K̂_b (J, the
    tables' "3×K_b"); ``bending_scale`` c_b (0.25 reproduces the paper's
    figures, spec A1); ``friction_stiffness`` K̂_f (J), ``friction_eps0`` and
    ``friction_eps_inf`` (rad: stick threshold at zero and infinite dwell),
    ``friction_tau`` (s); ``yield_angle`` εY0 (rad), ``hardening`` K_h0 (J),
    ``hardening_drop`` g, ``hardening_tau`` τ_p (s); tensile friction and
    plasticity per strain component (uu, vv, uv): stiffness (N/m),
    thresholds (Green strain), times (s).
    """

    density: float = 0.06
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
    tensile_friction_stiffness: Sequence[float] = field(default_factory=lambda: [200.0, 200.0, 5.0])
    tensile_eps0: Sequence[float] = field(default_factory=lambda: [0.005] * 3)
    tensile_eps_inf: Sequence[float] = field(default_factory=lambda: [0.05] * 3)
    tensile_tau_f: Sequence[float] = field(default_factory=lambda: [30.0] * 3)
    tensile_eps_y0: Sequence[float] = field(default_factory=lambda: [0.033] * 3)
    tensile_k_h0: Sequence[float] = field(default_factory=lambda: [10.0, 10.0, 5.0])
    tensile_g: Sequence[float] = field(default_factory=lambda: [0.5] * 3)
    tensile_tau_p: Sequence[float] = field(default_factory=lambda: [30.0] * 3)

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> Material:
        """The paper's fabric ``name`` (one of :data:`PRESETS`: ``cotton``,
        ``denim``, ``polyester`` from Table 2; ``trouser_cotton``,
        ``trouser_denim``, ``trouser_polyester`` from Table 3), with optional
        field overrides. Unknown names raise :class:`InvalidInputError`."""
        if not isinstance(name, str):
            raise InvalidInputError(f"preset name must be a string; got {type(name).__name__}")
        d = _core.cloth_preset(name)
        known = {f.name for f in dataclasses.fields(cls)}
        bad = set(overrides) - known
        if bad:
            raise InvalidInputError(f"unknown Material fields {sorted(bad)}; known: {sorted(known)}")
        d.update(overrides)
        return cls(**d)

    def _dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.name.startswith("tensile_"):
                d[f.name] = _triple(v, f.name)
            else:
                if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)):
                    raise InvalidInputError(f"Material.{f.name} must be a number; got {v!r}")
                d[f.name] = float(v)
        return d


@dataclass
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

    @classmethod
    def off(cls) -> Wrinkles:
        """All elements off: plain elastic cloth (the ``M_elastic`` reference)."""
        return cls(bend_friction="off", bend_plasticity=False)

    def _dict(self) -> dict[str, Any]:
        choice(self.bend_friction, "bend_friction", ("dwell", "dahl", "off"))
        choice(self.clock, "clock", ("alg2", "eq14", "always"))
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def _indices(a: npt.ArrayLike, name: str = "indices") -> npt.NDArray[np.int64]:
    arr = np.asarray(a).reshape(-1)
    if arr.size and arr.dtype.kind not in "iu":
        if arr.dtype == bool:
            return np.flatnonzero(arr).astype(np.int64)
        raise InvalidInputError(f"{name} must be integer vertex indices or a boolean mask; got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.int64)


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


class Simulation:
    """Implicit persistent-wrinkle cloth of ``mesh`` (rest shape = the mesh).

    Parameters (keyword-only after ``wrinkles``): ``dt`` time step (s, 1e-3 as
    in the paper); ``gravity`` (m/s²); ``damping`` Rayleigh stiffness damping
    γ (s, 0); ``handle_stiffness`` pin spring k_h (N/m, 1e5);
    ``self_collision`` cloth–cloth repulsion plus the continuous-collision
    fail-safe (no crossings at the end of any step); ``repulsion_distance``
    (m, 5e-3), ``repulsion_stiffness`` (3e3), ``thickness`` (m, 1e-3),
    ``self_friction`` (0.01) of the contact model (spec §6.3);
    ``linear_solver`` "lagged" (default: CG to ``cg_tolerance``
    preconditioned by a single-precision sparse Cholesky factor refreshed
    only when CG slows down), "cholesky" (exact sparse Cholesky every step)
    or "cg" (block-Jacobi CG to ``cg_tolerance``); ``uv (F, 3, 2)`` per-corner
    material coordinates (m) giving warp = +u, weft = +v; else
    ``warp_direction`` projected into each triangle; else the mesh's
    principal axis; ``init_rest_from_mesh``: the mesh's dihedral angles are
    the rest angles (default flat).

    Raises :class:`MeshError` for non-manifold or inconsistently oriented
    meshes and :class:`InvalidInputError` for bad parameters.
    """

    def __init__(
        self,
        mesh: TriMesh,
        material: Material | str | None = None,
        wrinkles: Wrinkles | None = None,
        *,
        dt: float = 1e-3,
        gravity: Vec3Like = (0.0, -9.81, 0.0),
        damping: float = 0.0,
        handle_stiffness: float = 1e5,
        self_collision: bool = False,
        repulsion_distance: float = 0.005,
        repulsion_stiffness: float = 3e3,
        thickness: float = 0.001,
        self_friction: float = 0.01,
        linear_solver: Literal["lagged", "cholesky", "cg"] = "lagged",
        cg_tolerance: float = 1e-8,
        cg_max_iterations: int = 5000,
        uv: npt.ArrayLike | None = None,
        warp_direction: Vec3Like | None = None,
        init_rest_from_mesh: bool = False,
    ) -> None:
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
        self.material = material
        self.wrinkles = wrinkles
        self._params: dict[str, Any] = dict(
            dt=positive(dt, "dt"),
            gravity=as_vec3(gravity, "gravity"),
            damping=non_negative(damping, "damping"),
            handle_stiffness=positive(handle_stiffness, "handle_stiffness"),
            repulsion_distance=positive(repulsion_distance, "repulsion_distance"),
            repulsion_stiffness=non_negative(repulsion_stiffness, "repulsion_stiffness"),
            thickness=non_negative(thickness, "thickness"),
            self_friction=non_negative(self_friction, "self_friction"),
            self_collision=bool(self_collision),
            linear_solver=choice(linear_solver, "linear_solver", ("lagged", "cholesky", "cg")),
            cg_tolerance=positive(cg_tolerance, "cg_tolerance"),
            cg_max_iterations=positive_int(cg_max_iterations, "cg_max_iterations"),
        )
        uv_arr = None
        if uv is not None:
            uv_arr = np.ascontiguousarray(np.asarray(uv, dtype=np.float64))
            if uv_arr.ndim != 3 or uv_arr.shape[1:] != (3, 2) or uv_arr.shape[0] != mesh.num_faces:
                raise InvalidInputError(f"uv must have shape ({mesh.num_faces}, 3, 2); got {uv_arr.shape}")
            if not np.all(np.isfinite(uv_arr)):
                raise InvalidInputError("uv contains NaN or inf")
        wd = None if warp_direction is None else as_vec3(warp_direction, "warp_direction")
        self._uv = uv_arr
        self._warp_direction = wd
        self._init_rest = bool(init_rest_from_mesh)
        # Handles as created, for checkpoints: options, reference positions,
        # creation time and status ("active", "frozen", "released").
        self._handles: list[dict[str, Any]] = []
        self.mesh = mesh
        self._s = _core.ClothSimulation(
            mesh._m, material._dict(), wrinkles._dict(), self._params, uv_arr, wd, bool(init_rest_from_mesh)
        )
        self._colliders: list[Collider] = []

    # -- settings -----------------------------------------------------------

    @property
    def dt(self) -> float:
        """Time step, s."""
        return float(self._params["dt"])

    def set(self, **params: Any) -> None:
        """Change step settings (the keyword options of the constructor other
        than mesh/material/uv), e.g. ``sim.set(self_collision=True)``."""
        bad = set(params) - set(self._params)
        if bad:
            raise InvalidInputError(f"unknown settings {sorted(bad)}; known: {sorted(self._params)}")
        new = dict(self._params)
        new.update(params)
        if "gravity" in params:
            new["gravity"] = as_vec3(params["gravity"], "gravity")
        self._s.set_params(new)
        self._params = new

    # -- pins and handles ---------------------------------------------------

    def pin(self, indices: npt.ArrayLike, targets: npt.ArrayLike | None = None, *,
            stiffness: float | None = None) -> None:
        """Pin vertices ``indices`` (ints or a boolean mask) to ``targets (K, 3)``
        (default: where they are) with springs of ``stiffness`` N/m."""
        idx = _indices(indices)
        t = None if targets is None else as_points(targets, "targets")
        self._s.pin(idx, t, None if stiffness is None else positive(stiffness, "stiffness"))

    def set_pin_targets(self, indices: npt.ArrayLike, targets: npt.ArrayLike) -> None:
        """Move the targets of pinned vertices (host-scripted motion), m."""
        self._s.set_pin_targets(_indices(indices), as_points(targets, "targets"))

    def release(self, indices: npt.ArrayLike) -> None:
        """Unpin vertices (they become free)."""
        self._s.release(_indices(indices))

    def add_handle(self, indices: npt.ArrayLike, *, times: Sequence[float], translations: npt.ArrayLike | None = None,
                   rotations: npt.ArrayLike | None = None, pivot: Vec3Like = (0.0, 0.0, 0.0),
                   stiffness: float | None = None) -> int:
        """Pin ``indices`` and move them rigidly through keyframed poses
        relative to now: at ``times[k]`` (s from now) the vertices are at
        ``rotations[k] @ (X − pivot) + pivot + translations[k]``. Returns the
        handle id (for :meth:`release_handle`)."""
        ts = [finite(t, "times") for t in times]
        k = len(ts)
        tr = np.zeros((k, 3)) if translations is None else as_points(translations, "translations")
        rot = np.repeat(np.eye(3)[None], k, axis=0) if rotations is None else np.asarray(rotations, dtype=np.float64)
        if tr.shape != (k, 3) or rot.shape != (k, 3, 3):
            raise InvalidInputError(
                f"translations must be ({k}, 3) and rotations ({k}, 3, 3) for {k} times; got {tr.shape}, {rot.shape}")
        idx = _indices(indices)
        hid = int(self._s.add_handle_keyframes(idx, as_vec3(pivot, "pivot"), ts, tr, np.ascontiguousarray(rot),
                                               None if stiffness is None else positive(stiffness, "stiffness")))
        # Reference = where the vertices are now (the core validated idx).
        self._handles.append(dict(indices=idx, reference=self.positions[idx], pivot=as_vec3(pivot, "pivot"), times=ts,
                                  translations=tr, rotations=np.ascontiguousarray(rot), start=self.time,
                                  status="active"))
        return hid

    def rotate_handle(self, indices: npt.ArrayLike, *, axis: Vec3Like, angle: float, duration: float,
                      pivot: Vec3Like = (0.0, 0.0, 0.0)) -> int:
        """Pin ``indices`` and rotate them by ``angle`` rad about ``axis``
        through ``pivot`` over ``duration`` s at constant angular speed; they
        then stay there (the usual "twist a ring" motion)."""
        dur = positive(duration, "duration")
        a = finite(angle, "angle")
        # Keys at most 90° apart: keyframe rotation follows the shortest arc.
        nseg = max(1, int(np.ceil(abs(a) / (np.pi / 2))))
        times = [dur * i / nseg for i in range(nseg + 1)]
        rots = np.stack([rotation(axis, np.degrees(a * i / nseg)) for i in range(nseg + 1)])
        return self.add_handle(indices, times=times, rotations=rots, pivot=pivot)

    def release_handle(self, handle: int) -> None:
        """Release a handle's vertices."""
        self._s.release_handle(int(handle))
        self._handles[int(handle)]["status"] = "released"

    def freeze_handle(self, handle: int) -> None:
        """Stop a handle where it is; its vertices stay pinned there."""
        self._s.freeze_handle(int(handle))
        self._handles[int(handle)]["status"] = "frozen"

    # -- colliders ------------------------------------------------------------

    def add_collider(self, collider: Collider) -> int:
        """Add a kinematic collider (plane, sphere, box, capsule, cylinder,
        mesh SDF). Contact uses the spec's cubic repulsion with the collider's
        friction, plus a post-step projection to ``thickness``."""
        if not isinstance(collider, Collider):
            raise InvalidInputError(f"collider must be a crumple.colliders.Collider; got {type(collider).__name__}")
        collider.advance_to(self.time)
        i = int(self._s.add_collider(collider._c))
        self._colliders.append(collider)
        return i

    def remove_collider(self, index: int) -> None:
        """Remove collider ``index`` (later ones shift down)."""
        self._s.remove_collider(int(index))
        del self._colliders[int(index)]

    def _push_colliders(self) -> None:
        for i, c in enumerate(self._colliders):
            if c._callback is not None:
                c.advance_to(self.time)
            self._s.replace_collider(i, c._c)

    def _pull_colliders(self) -> None:
        for i, c in enumerate(self._colliders):
            c._c = self._s.get_collider(i)

    # -- stepping -------------------------------------------------------------

    def hold_warp(self, per_step: float, steps: int) -> None:
        """Hold-time warp (spec §4.6): add ``per_step`` s to every hinge's
        stick and plastic clocks after each of the next ``steps`` steps (the
        paper: 10 s × 50 steps = a 500 s hold in 50 steps)."""
        self._s.set_hold_warp(non_negative(per_step, "per_step"), positive_int(steps, "steps", 0))

    def step(self) -> None:
        """One step of ``dt``. Raises :class:`SimulationDiverged` if the state blows up."""
        self._push_colliders()
        try:
            self._s.step()
        finally:
            self._pull_colliders()

    def advance(self, duration: float, *, frames: int = 1, progress: bool = False) -> int:
        """Advance by ``duration`` s (``round(duration/dt)`` steps) in
        ``frames`` chunks (collider callbacks run once per chunk; a progress bar
        when ``progress``). Returns the steps taken."""
        d = positive(duration, "duration")
        frames = positive_int(frames, "frames")
        steps = 0
        with _progress_bar(frames, "cloth", enabled=progress and frames > 1) as bar:
            for _ in range(frames):
                self._push_colliders()
                try:
                    steps += int(self._s.advance(d / frames))
                finally:
                    self._pull_colliders()
                bar.update(1)
        return steps

    # -- read-outs --------------------------------------------------------------

    @property
    def time(self) -> float:
        """Simulated time, s."""
        return float(self._s.time)

    @property
    def step_count(self) -> int:
        """Steps taken."""
        return int(self._s.step_count)

    @property
    def positions(self) -> npt.NDArray[np.float64]:
        """Vertex positions (N, 3), m (a copy)."""
        return np.asarray(self._s.positions)

    @positions.setter
    def positions(self, x: npt.ArrayLike) -> None:
        self._s.set_positions(as_points(x, "positions"))

    @property
    def velocities(self) -> npt.NDArray[np.float64]:
        """Vertex velocities (N, 3), m/s (a copy)."""
        return np.asarray(self._s.velocities)

    @velocities.setter
    def velocities(self, v: npt.ArrayLike) -> None:
        self._s.set_velocities(as_points(v, "velocities"))

    @property
    def faces(self) -> npt.NDArray[np.int64]:
        """Triangles (F, 3)."""
        return np.asarray(self._s.faces)

    @property
    def hinges(self) -> npt.NDArray[np.int64]:
        """Hinges (H, 4): edge (x0, x1) and wing tips (x2, x3), spec §2.1."""
        return np.asarray(self._s.hinges)

    @property
    def hinge_rest_length(self) -> npt.NDArray[np.float64]:
        """Rest edge length per hinge (H,), m."""
        return np.asarray(self._s.hinge_rest_length)

    @property
    def masses(self) -> npt.NDArray[np.float64]:
        """Lumped vertex masses (N,), kg."""
        return np.asarray(self._s.masses)

    def hinge_angles(self) -> npt.NDArray[np.float64]:
        """Signed dihedral angle per hinge (H,), rad, flat = 0."""
        return np.asarray(self._s.hinge_angles())

    @property
    def plastic_angle(self) -> npt.NDArray[np.float64]:
        """Plastic rest angle θ_p per hinge (H,), rad."""
        return np.asarray(self._s.plastic_angle)

    @property
    def anchor_angle(self) -> npt.NDArray[np.float64]:
        """Friction anchor θ_a per hinge (H,), rad."""
        return np.asarray(self._s.anchor_angle)

    @property
    def stick_time(self) -> npt.NDArray[np.float64]:
        """Friction dwell clock per hinge (H,), s."""
        return np.asarray(self._s.stick_time)

    @property
    def plastic_time(self) -> npt.NDArray[np.float64]:
        """Hardening clock per hinge (H,), s."""
        return np.asarray(self._s.plastic_time)

    @property
    def yield_angle(self) -> npt.NDArray[np.float64]:
        """Current yield angle ε_Y per hinge (H,), rad."""
        return np.asarray(self._s.yield_angle)

    @property
    def tensile_plastic_strain(self) -> npt.NDArray[np.float64]:
        """Tensile plastic Green strain per triangle (F, 3): uu, vv, uv."""
        return np.asarray(self._s.tensile_plastic_strain)

    @property
    def tensile_anchor(self) -> npt.NDArray[np.float64]:
        """Tensile friction anchors per triangle (F, 3)."""
        return np.asarray(self._s.tensile_anchor)

    def pin_forces(self) -> npt.NDArray[np.float64]:
        """Handle spring force on each vertex (N, 3), N (0 where free)."""
        return np.asarray(self._s.pin_forces())

    def kinetic_energy(self) -> float:
        """Kinetic energy, J."""
        return float(self._s.kinetic_energy())

    def stats(self) -> dict[str, float]:
        """Last step: CG iterations, solve residual, hinge slips/yields,
        contact counts and stage times (s)."""
        return dict(self._s.last_stats())

    def metrics(self, mask: npt.ArrayLike | None = None) -> dict[str, float]:
        """Wrinkle metrics of spec §8 (``M_abs``, ``M_sharp``, ``M_max``,
        ``M_plastic``, ``M_anchor``) now, optionally over the hinges in
        ``mask`` (H,) bool."""
        return wrinkle_metrics(self.hinge_angles(), self.hinge_rest_length, self.plastic_angle,
                               self.anchor_angle, mask)

    def hinge_midpoints(self) -> npt.NDArray[np.float64]:
        """Midpoint of each hinge edge (H, 3), m: for region masks."""
        x = self.positions
        h = self.hinges
        return 0.5 * (x[h[:, 0]] + x[h[:, 1]])

    def count_self_intersections(self) -> int:
        """Pairs of non-adjacent triangles that intersect now."""
        return int(self._s.count_self_intersections())

    # -- checkpoints ----------------------------------------------------------

    def save(self, path: str | Any) -> Any:
        """Write a checkpoint ``.npz``: rest mesh, material, switches,
        settings, handles, colliders and their motions, pins, and every state
        array (internal variables included). A run restored with :meth:`load`
        continues bit-identically to this one (saving drops the lagged
        solver's cached factor in both, so both refactorize next step).
        Collider callbacks are not saved: re-attach them."""
        self._s.invalidate_solver_cache()
        arrays: dict[str, npt.NDArray[Any]] = {
            "mesh_vertices": self.mesh.vertices, "mesh_faces": self.mesh.faces,
        }
        if self._uv is not None:
            arrays["uv"] = self._uv
        handles = []
        for i, h in enumerate(self._handles):
            for k in ("indices", "reference", "translations", "rotations"):
                arrays[f"handle{i}_{k}"] = np.asarray(h[k])
            handles.append({"pivot": list(h["pivot"]), "times": h["times"], "start": h["start"],
                            "status": h["status"]})
        colliders = [_to_spec(c) for c in self._colliders]
        for k, v in self._s.state_arrays().items():
            arrays[f"state_{k}"] = np.asarray(v)
        meta = {"solver": "cloth", "material": self.material._dict(), "wrinkles": self.wrinkles._dict(),
                "params": self._params, "warp_direction": self._warp_direction, "init_rest": self._init_rest,
                "handles": handles, "colliders": colliders}
        return _io.save_checkpoint(path, arrays, meta)

    @classmethod
    def load(cls, path: str | Any) -> Simulation:
        """Rebuild a simulation from a checkpoint written by :meth:`save`."""
        arrays, meta = _io.load_checkpoint(path)
        if meta.get("solver") != "cloth":
            raise InvalidInputError(f"{str(path)!r} is not a cloth checkpoint")
        mesh = TriMesh(arrays["mesh_vertices"], arrays["mesh_faces"])
        p = dict(meta["params"])
        sim = cls(mesh, Material(**meta["material"]), Wrinkles(**meta["wrinkles"]), uv=arrays.get("uv"),
                  warp_direction=meta["warp_direction"], init_rest_from_mesh=meta["init_rest"], **p)
        for c in meta["colliders"]:
            sim.add_collider(_from_spec(c["spec"], [tuple(m) for m in c["motions"]]))
        for i, h in enumerate(meta["handles"]):
            a = {k: arrays[f"handle{i}_{k}"] for k in ("indices", "reference", "translations", "rotations")}
            sim._s.restore_handle(a["indices"], a["reference"], tuple(h["pivot"]), float(h["start"]),
                                  h["status"] == "active", list(h["times"]), a["translations"], a["rotations"])
            sim._handles.append(dict(indices=a["indices"], reference=a["reference"], pivot=tuple(h["pivot"]),
                                     times=list(h["times"]), translations=a["translations"],
                                     rotations=a["rotations"], start=float(h["start"]), status=h["status"]))
        state: dict[str, Any] = {k[len("state_"):]: v for k, v in arrays.items() if k.startswith("state_")}
        for k in ("time", "warp_per_step"):
            state[k] = float(state[k])
        for k in ("step", "warp_steps_left"):
            state[k] = int(state[k])
        sim._s.set_state(state)
        for c in sim._colliders:
            c.advance_to(sim.time)
        return sim

    def trimesh(self) -> TriMesh:
        """The current shape as a TriMesh (for export and viewing)."""
        return TriMesh(self.positions, self.faces)

