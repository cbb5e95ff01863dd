"""The MPM simulation: objects, colliders, CFL-limited stepping, frames and checkpoints."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, TypeVar

import numpy as np
import numpy.typing as npt

from .. import _core
from .._checks import as_points, as_vec3, choice, finite, flag, in_range, index, positive, velocity_field
from ..backend import Backend, resolve_backend
from ..errors import InvalidInputError
from ..geometry import Curves, TriMesh
from .._simulation import SimulationBase
from .materials import ClothMaterial, CurveMaterial, ElasticMaterial, GooMaterial, SandMaterial, Vec3Like
from .objects import Cloth, Particles, Strands


_Mat = TypeVar("_Mat")


def _material(material: Any, cls: type[_Mat]) -> _Mat:
    """``material``, or the class's defaults when None; anything else is refused."""
    mat = cls() if material is None else material
    if not isinstance(mat, cls):
        raise InvalidInputError(f"material must be a {cls.__name__}; got {type(mat).__name__}")
    return mat


class Simulation(SimulationBase):
    """An MPM simulation in the box ``[lower, upper]`` (m) with grid spacing ``dx`` (m).

    Keyword options: ``gravity`` (m/s², default (0, −9.81, 0)), ``cfl`` (0.3:
    no particle moves more than 0.3·dx per step), ``dt_max`` (s, the largest
    step), ``kernel`` ("quadratic" or "cubic"), ``precision`` ("f32" default,
    "f64" for tests), ``backend`` ("cpu"; "gpu": every stage as a wgpu compute
    shader in f32, the state kept on the device and read back when you ask for
    arrays; "auto": a hardware GPU when there is one), ``out_of_domain``
    ("error", "clamp", or "remove": delete sand/goo/solid particles that
    leave; their objects shrink), ``transfer`` ("apic": the paper's kernel-gradient
    forces, default; "mls": MLS-MPM, cheaper, as in MLS-MPM codes),
    ``return_map`` (True; False drops the cloth/strand plasticity, an
    ablation: layers then resist sliding and separating), ``tangents``
    ("mesh": the paper's in-manifold columns from the mesh; "eulerian": the
    ablation of its Fig. 10 (a), traditional meshless MPM: every column is
    advected by the grid and element particles move with their own velocity
    instead of being kept at their vertices' barycentre; it fractures).
    Nodes within 3 cells of the box walls act as slip
    walls; particles must start inside them.
    """

    _solver = "mpm"

    def __init__(
        self,
        *,
        lower: Vec3Like = (0.0, 0.0, 0.0),
        upper: Vec3Like = (1.0, 1.0, 1.0),
        dx: float = 1.0 / 64.0,
        gravity: Vec3Like = (0.0, -9.81, 0.0),
        cfl: float = 0.3,
        dt_max: float = 1e-3,
        kernel: Literal["quadratic", "cubic"] = "quadratic",
        precision: Literal["f32", "f64"] = "f32",
        backend: str = "cpu",
        out_of_domain: Literal["error", "clamp", "remove"] = "error",
        boundary_padding: int = 3,
        transfer: Literal["apic", "mls"] = "apic",
        return_map: bool = True,
        tangents: Literal["mesh", "eulerian"] = "mesh",
    ) -> None:
        super().__init__(dict(
            lower=as_vec3(lower, "lower"), upper=as_vec3(upper, "upper"), dx=dx, gravity=as_vec3(gravity, "gravity"),
            cfl=cfl, dt_max=dt_max, kernel=kernel, precision=precision, backend=backend,
            out_of_domain=out_of_domain, boundary_padding=boundary_padding, transfer=transfer,
            return_map=return_map, tangents=tangents,
        ))
        # Every object added, in order, for checkpoints: (kind, arrays, options).
        self._recipe: list[tuple[str, dict[str, npt.NDArray[Any]], dict[str, Any]]] = []
        self.backend: Backend = resolve_backend(backend)
        if self.backend == "gpu" and backend == "auto" and precision != "f32":
            self.backend = "cpu"  # the GPU runs f32 only: "auto" falls back rather than fail
        self.dx = positive(dx, "dx")
        self._s = _core.MpmSimulation(dict(
            lower=as_vec3(lower, "lower"), upper=as_vec3(upper, "upper"), dx=self.dx, gravity=as_vec3(gravity, "gravity"),
            cfl=finite(cfl, "cfl"), dt_max=positive(dt_max, "dt_max"), kernel=choice(kernel, "kernel", ("quadratic", "cubic")),
            boundary_padding=index(boundary_padding, "boundary_padding"),
            out_of_domain=choice(out_of_domain, "out_of_domain", ("error", "clamp", "remove")),
            transfer=choice(transfer, "transfer", ("apic", "mls")), return_map=flag(return_map, "return_map"),
            eulerian_tangents=choice(tangents, "tangents", ("mesh", "eulerian")) == "eulerian",
        ), choice(precision, "precision", ("f32", "f64")))
        if self.backend == "gpu":
            if precision != "f32":
                raise InvalidInputError(
                    "the GPU backend runs in single precision; pass precision='f32' (the default) with backend='gpu'"
                )
            # Every stage runs as a wgpu compute shader; state stays on the device.
            self._s.use_gpu()
        self._objects: list[Cloth | Strands | Particles] = []

    def _core_or_none(self) -> Any:
        return self._s

    # -- building ---------------------------------------------------------

    @staticmethod
    def _rpic(rpic_damping: float) -> float:
        return in_range(rpic_damping, "rpic_damping ν_d", 0.0, 1.0, hint=" (0 = APIC, 1 = RPIC)")

    def add_cloth(self, mesh: TriMesh, material: ClothMaterial | None = None, *, rpic_damping: float = 0.0,
                  velocity: Vec3Like = (0, 0, 0), energy_weight: Literal["split", "full"] = "split",
                  name: str = "cloth") -> Cloth:
        """Add a cloth mesh and return its handle. ``rpic_damping`` is the
        paper's ν_d in [0, 1] (0 = APIC, 1 = RPIC: removes non-rigid affine
        motion, spec Eq. 2). ``velocity``: m/s, one 3-vector or (N, 3).
        ``energy_weight`` "split" (default) weights each triangle's energy by
        a quarter of its volume, as the paper does (its Table 1 values assume
        it: the effective modulus is E/4); "full" uses the whole volume (spec
        §9 A10). ``name``: its name in frames and exports (made unique)."""
        if not isinstance(mesh, TriMesh):
            raise InvalidInputError(f"mesh must be a crumple.geometry.TriMesh; got {type(mesh).__name__}")
        mat = _material(material, ClothMaterial)
        ew = choice(energy_weight, "energy_weight", ("split", "full"))
        nu = self._rpic(rpic_damping)
        vel = velocity_field(velocity, mesh.num_vertices, "velocity")
        uniform = bool(np.all(vel == vel[0]))
        v0 = as_vec3(vel[0], "velocity") if uniform else (0.0, 0.0, 0.0)
        nm = self._unique_name(name)
        idx = self._s.add_cloth(mesh._m, mat._params(), float(mat.density), float(mat.thickness or self.dx),
                                v0, nu, ew)
        self._recipe.append(("cloth", {"vertices": mesh.vertices, "faces": mesh.faces},
                             dict(material=dataclasses.asdict(mat), rpic_damping=nu, velocity=v0,
                                  energy_weight=ew, name=nm)))
        obj = Cloth(self, idx, nm, mesh)
        self._objects.append(obj)
        if not uniform:
            obj.velocities = vel
        return obj

    def add_curves(self, curves: Curves, material: CurveMaterial | None = None, *, rpic_damping: float = 0.0,
                   velocity: Vec3Like = (0, 0, 0), energy_weight: Literal["split", "full"] = "split",
                   name: str = "strands") -> Strands:
        """Add strands (hair, yarn, fibres) and return their handle;
        ``rpic_damping``, ``velocity``, ``energy_weight`` (a third of each
        segment's volume by default) and ``name`` as in :meth:`add_cloth`."""
        if not isinstance(curves, Curves):
            raise InvalidInputError(f"curves must be a crumple.geometry.Curves; got {type(curves).__name__}")
        mat = _material(material, CurveMaterial)
        ew = choice(energy_weight, "energy_weight", ("split", "full"))
        nu = self._rpic(rpic_damping)
        vel = velocity_field(velocity, len(curves.points), "velocity")
        uniform = bool(np.all(vel == vel[0]))
        v0 = as_vec3(vel[0], "velocity") if uniform else (0.0, 0.0, 0.0)
        nm = self._unique_name(name)
        radius = float(mat.radius or self.dx / 2)
        idx = self._s.add_curves(curves._c, mat._params(), float(mat.density), radius, v0, nu, ew)
        self._recipe.append(("curves", {"points": curves.points, "offsets": curves.offsets},
                             dict(material=dataclasses.asdict(mat), rpic_damping=nu, velocity=v0,
                                  energy_weight=ew, name=nm)))
        obj = Strands(self, idx, nm, curves, radius)
        self._objects.append(obj)
        if not uniform:
            obj.velocities = vel
        return obj

    def _add_volume(self, kind: str, points: npt.ArrayLike, material: Any, particle_volume: float | None,
                    velocity: Any, rpic_damping: float, name: str) -> Particles:
        pts = as_points(points, "points")
        pv = (self.dx / 2) ** 3 if particle_volume is None else positive(particle_volume, "particle_volume")
        nu = self._rpic(rpic_damping)
        vel = velocity_field(velocity, len(pts), "velocity")
        uniform = bool(np.all(vel == vel[0]))
        v0 = as_vec3(vel[0], "velocity") if uniform else (0.0, 0.0, 0.0)
        nm = self._unique_name(name)
        idx = self._s.add_volume(pts, kind, material._params(), float(material.density), pv, v0, nu)
        self._recipe.append((kind, {"points": pts}, dict(material=dataclasses.asdict(material), rpic_damping=nu,
                                                          velocity=v0, particle_volume=pv, name=nm)))
        obj = Particles(self, idx, nm, pv)
        self._objects.append(obj)
        if not uniform:
            obj.velocities = vel
        return obj

    def add_solid(self, points: npt.ArrayLike, material: ElasticMaterial | None = None, *,
                  velocity: Vec3Like = (0, 0, 0), rpic_damping: float = 0.0,
                  particle_volume: float | None = None, name: str = "solid") -> Particles:
        """Add an elastic solid sampled by ``points (N, 3)`` m; each particle
        has rest volume ``particle_volume`` m³ (default (dx/2)³: 8 per cell).
        ``velocity``: one 3-vector or (N, 3), m/s."""
        mat = _material(material, ElasticMaterial)
        return self._add_volume("elastic", points, mat, particle_volume, velocity, rpic_damping, name)

    def add_granular(self, points: npt.ArrayLike, material: SandMaterial | None = None, *,
                     velocity: Vec3Like = (0, 0, 0), rpic_damping: float = 0.0,
                     particle_volume: float | None = None, name: str = "sand") -> Particles:
        """Add sand (Drucker–Prager) sampled by ``points (N, 3)`` m."""
        mat = _material(material, SandMaterial)
        return self._add_volume("sand", points, mat, particle_volume, velocity, rpic_damping, name)

    def add_goo(self, points: npt.ArrayLike, material: GooMaterial | None = None, *,
                velocity: Vec3Like = (0, 0, 0), rpic_damping: float = 0.0,
                particle_volume: float | None = None, name: str = "goo") -> Particles:
        """Add viscoplastic goo sampled by ``points (N, 3)`` m."""
        mat = _material(material, GooMaterial)
        return self._add_volume("goo", points, mat, particle_volume, velocity, rpic_damping, name)

    @property
    def objects(self) -> tuple[Cloth | Strands | Particles, ...]:
        """The objects, in the order added (the handles the ``add_*`` methods returned)."""
        return tuple(self._objects)

    # -- read-outs --------------------------------------------------------

    @property
    def num_particles(self) -> int:
        """All MPM particles (volumetric, mesh vertices and element particles)."""
        return self._s.num_particles

    def stable_dt(self) -> float:
        """The step the CFL rule and ``dt_max`` allow now, s."""
        return self._s.stable_dt()

    def total_momentum(self) -> npt.NDArray[np.float64]:
        """Σ m v over all particles, kg·m/s."""
        return np.asarray(self._s.total_momentum())

    def kinetic_energy(self) -> float:
        """Σ ½ m |v|² over all particles, J."""
        return self._s.kinetic_energy()

    def elastic_energy(self) -> float:
        """Elastic potential Φ = Σ V⁰ ψ over volumetric particles (ψ of F^E)
        and cloth/strand elements (ψ of F̃), J: the energy whose negative
        gradient is the elastic grid force (paper Eq. 6). Gravity's potential
        is not included. Without gravity, colliders, pins or plastic flow,
        ``kinetic_energy() + elastic_energy()`` stays constant up to the
        transfers' dissipation, which damping ν_d > 0 increases."""
        return self._s.elastic_energy()

    def total_mass(self) -> float:
        """Σ m over all particles, kg."""
        return self._s.total_mass()

    def grid_mass(self) -> float:
        """Mass transferred to the grid in the last step, kg (equals total_mass)."""
        return self._s.grid_mass()

    # -- checkpoints --------------------------------------------------------

    def _save_objects(self, arrays: dict[str, npt.NDArray[Any]]) -> dict[str, Any]:
        recipe = []
        for i, (kind, arrs, opts) in enumerate(self._recipe):
            if kind in ("elastic", "sand", "goo"):
                # particles may have been removed: rebuild with today's count
                arrs = {"points": np.asarray(self._s.positions(i), dtype=np.float64)}
            for k, a in arrs.items():
                arrays[f"obj{i}_{k}"] = np.asarray(a)
            recipe.append({"kind": kind, "arrays": list(arrs), "options": opts})
        return {"recipe": recipe}

    def _load_objects(self, arrays: dict[str, npt.NDArray[Any]], meta: dict[str, Any]) -> None:
        for i, item in enumerate(meta["recipe"]):
            a = {k: arrays[f"obj{i}_{k}"] for k in item["arrays"]}
            o = item["options"]
            kind = item["kind"]
            # Checkpoints written before the rename call ν_d "damping".
            nu = o.get("rpic_damping", o.get("damping", 0.0))
            name = o.get("name", "strands" if kind == "curves" else kind)
            if kind == "cloth":
                self.add_cloth(TriMesh(a["vertices"], a["faces"]), ClothMaterial(**o["material"]),
                               rpic_damping=nu, velocity=o["velocity"], energy_weight=o["energy_weight"], name=name)
            elif kind == "curves":
                self.add_curves(Curves(a["points"], a["offsets"]), CurveMaterial(**o["material"]),
                                rpic_damping=nu, velocity=o["velocity"], energy_weight=o["energy_weight"], name=name)
            else:
                mat_cls = {"elastic": ElasticMaterial, "sand": SandMaterial, "goo": GooMaterial}[kind]
                # Only the count matters here (the saved state overwrites the
                # positions); particles saved inside the wall padding would
                # fail add_volume's placement check, so place them at the
                # domain centre first.
                centre = 0.5 * (np.asarray(self._params["lower"]) + np.asarray(self._params["upper"]))
                pts = np.tile(centre, (len(a["points"]), 1))
                self._add_volume(kind, pts, mat_cls(**o["material"]), o["particle_volume"], o["velocity"], nu, name)

    def _restore_handle(self, obj: Any, arrays: dict[str, Any], handle: dict[str, Any]) -> int:
        return int(self._s.restore_handle(obj.index, arrays["indices"], arrays["reference"], tuple(handle["pivot"]),
                                          float(handle["start"]), handle["status"] == "active",
                                          list(handle["times"]), arrays["translations"], arrays["rotations"]))

    def stage_times(self) -> dict[str, float]:
        """Seconds spent in each solver stage since the start (for profiling)."""
        return dict(self._s.stage_times())

    def removed_particles(self) -> int:
        """Volumetric particles deleted on leaving the domain (``out_of_domain="remove"``)."""
        return self._s.removed_particles()

    def counters(self) -> dict[str, int]:
        """Return-map events since the start: slide, tension, inverted, degenerate, element_steps."""
        return dict(self._s.counters())
