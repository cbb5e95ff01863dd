"""The implicit cloth simulation: garments, colliders, stepping, frames and checkpoints."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from .. import _core
from .._checks import as_array, as_vec3, choice, flag, non_negative, positive, positive_int, velocity_field
from ..colliders import Collider
from ..errors import InvalidInputError
from ..frames import check_name
from ..geometry import TriMesh
from .._simulation import SimulationBase
from .material import Material, Vec3Like, Wrinkles
from .garment import Cloth


class Simulation(SimulationBase):
    """Implicit persistent-wrinkle cloth: garments added with
    :meth:`add_cloth`, solved together in one sparse system per step.

    Keyword options: ``dt`` time step (s, 1e-3 as in the paper);
    ``gravity`` (m/s²); ``rayleigh_damping`` Rayleigh stiffness damping γ
    (s, 0); ``handle_stiffness`` pin spring k_h (N/m, 1e5);
    ``self_collision`` cloth–cloth contact (default on: repulsion inside the
    solve plus a continuous-collision fail-safe, so no garment passes
    through itself or another; turn off only to time the solver alone);
    ``repulsion_distance`` (m, 5e-3), ``repulsion_stiffness`` k_c (N/m³, 3e3: a vertex
    of area A at depth q into the layer stores k_c A q³ / (6 d_rep) J, spec §6.3),
    ``contact_thickness`` (m, 1e-3: the gap the post-step projection keeps
    from colliders and between layers), ``self_friction`` (0.01) of the contact model
    (spec §6.3); ``linear_solver`` "lagged" (default: CG to
    ``cg_tolerance`` preconditioned by a single-precision sparse Cholesky
    factor refreshed only when CG slows down), "cholesky" (exact sparse
    Cholesky every step) or "cg" (block-Jacobi CG to ``cg_tolerance``).

    Raises :class:`InvalidInputError` for bad parameters.
    """

    _solver = "cloth"

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
        super().__init__(self._checked(dict(
            dt=dt, gravity=gravity, rayleigh_damping=rayleigh_damping, handle_stiffness=handle_stiffness,
            repulsion_distance=repulsion_distance, repulsion_stiffness=repulsion_stiffness,
            contact_thickness=contact_thickness,
            self_friction=self_friction, self_collision=self_collision, linear_solver=linear_solver,
            cg_tolerance=cg_tolerance, cg_max_iterations=cg_max_iterations)))
        self._s: Any = None  # the core simulation, made by the first add_cloth
        self._objects: list[Cloth] = []
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
        material = Material.coerce(material, "cotton", "cloth.Material")
        wrinkles = Wrinkles() if wrinkles is None else wrinkles
        if not isinstance(wrinkles, Wrinkles):
            raise InvalidInputError(f"wrinkles must be a cloth.Wrinkles; got {type(wrinkles).__name__}")
        check_name(name, "name")
        vel = velocity_field(velocity, mesh.num_vertices, "velocity")
        uv_arr = None
        if uv is not None:
            uv_arr = np.ascontiguousarray(as_array(uv, "uv", what="an (F, 3, 2) array of real material coordinates (m)"))
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
        obj = Cloth(self, len(self._objects), self._unique_name(name), mesh, material, wrinkles)
        self._objects.append(obj)
        self._garment_args.append(dict(uv=uv_arr, warp_direction=wd, init_rest=init_rest))
        if np.any(vel != 0):
            obj.velocities = vel
        return obj

    @property
    def objects(self) -> tuple[Cloth, ...]:
        """The garments, in the order added (the handles ``add_cloth`` returned)."""
        return tuple(self._objects)

    def _core_or_none(self) -> Any:
        return self._s

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

    # -- stepping --------------------------------------------------------------

    def hold_warp(self, per_step: float, steps: int) -> None:
        """Hold-time warp (spec §4.6): add ``per_step`` s to every hinge's
        stick and plastic clocks after each of the next ``steps`` steps (the
        paper: 10 s × 50 steps = a 500 s hold in 50 steps)."""
        self._core().set_hold_warp(non_negative(per_step, "per_step"), positive_int(steps, "steps", 0))

    # -- read-outs ---------------------------------------------------------------

    def kinetic_energy(self) -> float:
        """Kinetic energy of all garments, J."""
        return float(self._core().kinetic_energy())

    def stats(self) -> dict[str, float]:
        """Last step: CG iterations, solve residual, hinge slips/yields,
        contact counts and its seconds per stage (``time_proximity``,
        ``time_elements``, ``time_assemble``, ``time_solve``,
        ``time_collide``; eol names its stages the same way)."""
        return dict(self._core().last_stats())

    def count_self_intersections(self) -> int:
        """Pairs of non-adjacent triangles that intersect now, over all
        garments (within one garment and between garments)."""
        return int(self._core().count_self_intersections())

    # -- checkpoints -------------------------------------------------------------

    def save(self, path: str | Any) -> Any:
        """Write a checkpoint ``.npz``: the garments (rest meshes, materials,
        switches, frames), settings, handles, colliders and their motions,
        pins, and every state array (internal variables included). A run
        restored with :meth:`load` continues bit-identically to this one
        (saving drops the lagged solver's cached factor in both, so both
        refactorize next step). Collider callbacks are not saved: re-attach
        them."""
        self._core().invalidate_solver_cache()
        return super().save(path)

    def _save_objects(self, arrays: dict[str, npt.NDArray[Any]]) -> dict[str, Any]:
        garments = []
        for gi, (o, ga) in enumerate(zip(self._objects, self._garment_args)):
            arrays[f"g{gi}_vertices"] = o.mesh.vertices
            arrays[f"g{gi}_faces"] = o.mesh.faces
            if ga["uv"] is not None:
                arrays[f"g{gi}_uv"] = ga["uv"]
            garments.append({"name": o.name, "material": dataclasses.asdict(o.material),
                             "wrinkles": o.wrinkles._dict(), "warp_direction": ga["warp_direction"],
                             "init_rest": ga["init_rest"], "uv": ga["uv"] is not None})
        return {"garments": garments}

    def _load_objects(self, arrays: dict[str, npt.NDArray[Any]], meta: dict[str, Any]) -> None:
        for gi, g in enumerate(meta["garments"]):
            mesh = TriMesh(arrays[f"g{gi}_vertices"], arrays[f"g{gi}_faces"])
            self.add_cloth(mesh, Material(**g["material"]), wrinkles=Wrinkles(**g["wrinkles"]),
                           uv=arrays[f"g{gi}_uv"] if g["uv"] else None, warp_direction=g["warp_direction"],
                           init_rest_from_mesh=g["init_rest"], name=g["name"])

    def _restore_handle(self, obj: Any, arrays: dict[str, Any], handle: dict[str, Any]) -> int:
        return int(self._core().restore_handle(
            arrays["indices"] + obj._ranges()[0].start, arrays["reference"], tuple(handle["pivot"]),
            float(handle["start"]), handle["status"] == "active", list(handle["times"]),
            arrays["translations"], arrays["rotations"]))
