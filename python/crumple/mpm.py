"""Material point method for cloth, knit, hair, sand, elastic solids and goo
(Jiang, Gast, Teran 2017: anisotropic elastoplasticity for frictional contact).

Cloth and strands are Lagrangian meshes whose vertices and elements are MPM
particles; contact between layers, strands and other materials happens in
the constitutive model, with no collision detection (spec
``mpm_anisotropic.md``). Units are SI; the paper's material values (its
Table 1) are available as presets.

Example::

    sim = cr.mpm.Simulation(lower=(0, 0, 0), upper=(1, 1, 1), dx=1 / 64)
    cloth = sim.add_cloth(mesh, cr.mpm.ClothMaterial.preset("cloth_ball"), rpic_damping=0.7)
    sim.add_collider(cr.colliders.Sphere(center=(0.5, 0.4, 0.5), radius=0.2))
    sim.advance(1 / 24)
    cloth.positions  # (N, 3) float32
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar

import numpy as np
import numpy.typing as npt

from . import _core
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
from . import _checkpoint, _handles
from . import io as _io
from .colliders import Collider, _from_spec, _to_spec
from .backend import Backend, resolve_backend
from .errors import CheckpointError, InvalidInputError
from .frames import Frame, FrameCurves, FrameMesh, FramePoints, check_name, collider_part, unique_name
from .geometry import Curves, TriMesh

__all__ = [
    "ClothMaterial",
    "CurveMaterial",
    "ElasticMaterial",
    "SandMaterial",
    "GooMaterial",
    "Simulation",
    "Cloth",
    "Strands",
    "Particles",
]

Vec3Like = Sequence[float] | npt.ArrayLike


def _angle(x: float, name: str) -> float:
    return in_range(x, name, 0.0, 90.0, hi_open=True, hint=" degrees")


def _poisson(x: float) -> float:
    return in_range(x, "poisson_ratio", -1.0, 0.5, lo_open=True, hi_open=True)


_M = TypeVar("_M", bound="_Presets")


class _Presets:
    """``PRESETS`` (name → field values) and ``preset(name, **overrides)``,
    the same on every material class of every module."""

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {}

    @classmethod
    def preset(cls: type[_M], name: str, **overrides: Any) -> _M:
        """The material ``name`` (a key of ``PRESETS``) with optional field
        overrides; unknown names or fields raise :class:`InvalidInputError`."""
        key = choice(name, f"{cls.__name__} preset", tuple(cls.PRESETS))
        known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]  # subclasses are dataclasses
        bad = set(overrides) - known
        if bad:
            raise InvalidInputError(f"unknown {cls.__name__} fields {sorted(bad)}; known: {sorted(known)}")
        return cls(**{**cls.PRESETS[key], **overrides})

    def _params(self) -> dict[str, float]:
        """The constitutive fields by name, as the core's material specs list
        them (density, thickness and radius go to the object instead)."""
        return {f.name: float(getattr(self, f.name)) for f in dataclasses.fields(self)  # type: ignore[arg-type]
                if f.name not in ("density", "thickness", "radius")}


@dataclass(frozen=True)
class ClothMaterial(_Presets):
    """A cloth (surface) material (spec §4.3; paper Table 1 columns).

    density: kg/m³ of the shell (mass = density · area · thickness).
    youngs_modulus, poisson_ratio: in-plane elasticity (Pa, -).
    normal_stiffness: k, resistance to compression across the sheet (contact), Pa.
    shear_stiffness: γ, resistance to layers sliding over each other, Pa.
    friction_angle: Φ_F in degrees; Coulomb friction between layers (c_F = tan Φ_F).
    thickness: τ_h in m (default: the grid spacing dx).
    """

    density: float = 2.0
    youngs_modulus: float = 400.0
    poisson_ratio: float = 0.3
    normal_stiffness: float = 800.0
    shear_stiffness: float = 0.0
    friction_angle: float = 0.0
    thickness: float | None = None

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        # paper Table 1 (spec §6.1); ν_d is add_cloth's rpic_damping
        "curtain": dict(density=2, youngs_modulus=400, poisson_ratio=0.3, normal_stiffness=800),
        "cloth_ball": dict(density=2, youngs_modulus=200, poisson_ratio=0.3, normal_stiffness=100),
        "twister": dict(density=2, youngs_modulus=200, poisson_ratio=0.3, normal_stiffness=400),
        "curtain_goo": dict(density=2, youngs_modulus=400, poisson_ratio=0.3, normal_stiffness=40000),
        "cloth_slime": dict(density=2.5, youngs_modulus=15000, poisson_ratio=0.35, normal_stiffness=20000),
        "curtain_sand": dict(density=2, youngs_modulus=400, poisson_ratio=0.3, normal_stiffness=200000),
        "cloth_sand": dict(density=2, youngs_modulus=200, poisson_ratio=0.3, normal_stiffness=40000),
    }

    def __post_init__(self) -> None:
        positive(self.density, "density")
        non_negative(self.youngs_modulus, "youngs_modulus")
        _poisson(self.poisson_ratio)
        non_negative(self.normal_stiffness, "normal_stiffness")
        non_negative(self.shear_stiffness, "shear_stiffness")
        _angle(self.friction_angle, "friction_angle")
        if self.thickness is not None:
            positive(self.thickness, "thickness")



@dataclass(frozen=True)
class CurveMaterial(_Presets):
    """A strand (curve) material for hair, yarn and fibres (spec §4.4, §5.2).

    stretch_stiffness: k, fibre stretching stiffness, Pa.
    shear_stiffness: γ, fibre shear stiffness, Pa.
    youngs_modulus, poisson_ratio: cross-section (contact) stiffness.
    friction_angle: Φ_F in degrees (α for the cross-section, β = tan Φ_F along the fibre).
    radius: cross-section radius r_h in m (default dx / 2).
    """

    density: float = 1.0
    youngs_modulus: float = 60.0
    poisson_ratio: float = 0.3
    stretch_stiffness: float = 2000.0
    shear_stiffness: float = 10.0
    friction_angle: float = 15.0
    radius: float | None = None

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "hair": dict(density=1, youngs_modulus=60, stretch_stiffness=2000, shear_stiffness=10, friction_angle=15),
        "knit_sweater": dict(density=4, youngs_modulus=500, stretch_stiffness=500, shear_stiffness=100,
                             friction_angle=10),
        "knit_poncho": dict(density=4, youngs_modulus=500, stretch_stiffness=2000, shear_stiffness=500,
                            friction_angle=40),
        "knit_curtain": dict(density=4, youngs_modulus=500, stretch_stiffness=500, shear_stiffness=500,
                             friction_angle=20),
        "shag_carpet": dict(density=2, youngs_modulus=400, stretch_stiffness=800, shear_stiffness=0,
                            friction_angle=0),
        "tearing_fiber": dict(density=4, youngs_modulus=100, stretch_stiffness=8000, shear_stiffness=500,
                              friction_angle=40),
    }

    def __post_init__(self) -> None:
        positive(self.density, "density")
        non_negative(self.youngs_modulus, "youngs_modulus")
        _poisson(self.poisson_ratio)
        non_negative(self.stretch_stiffness, "stretch_stiffness")
        non_negative(self.shear_stiffness, "shear_stiffness")
        _angle(self.friction_angle, "friction_angle")
        if self.radius is not None:
            positive(self.radius, "radius")



@dataclass(frozen=True)
class ElasticMaterial(_Presets):
    """A fixed-corotated elastic solid (spec §4.6): density kg/m³, Young's modulus Pa."""

    density: float = 1000.0
    youngs_modulus: float = 1e4
    poisson_ratio: float = 0.3

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "jelly": dict(density=1000.0, youngs_modulus=1e4, poisson_ratio=0.3),
    }

    def __post_init__(self) -> None:
        positive(self.density, "density")
        non_negative(self.youngs_modulus, "youngs_modulus")
        _poisson(self.poisson_ratio)



@dataclass(frozen=True)
class SandMaterial(_Presets):
    """Drucker–Prager sand with hardening (Klár et al. 2016; spec §5.4). The
    defaults are Klár's: friction angle φ = h0 + (h1 q − h3) exp(−h2 q) in degrees."""

    density: float = 2200.0
    youngs_modulus: float = 3.537e5
    poisson_ratio: float = 0.3
    friction_angle: float = 35.0
    hardening_slope: float = 9.0
    hardening_decay: float = 0.2
    initial_deficit: float = 10.0

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        # Klár et al. 2016's sand (the defaults)
        "sand": dict(density=2200.0, youngs_modulus=3.537e5, poisson_ratio=0.3, friction_angle=35.0),
    }

    def __post_init__(self) -> None:
        positive(self.density, "density")
        non_negative(self.youngs_modulus, "youngs_modulus")
        _poisson(self.poisson_ratio)
        _angle(self.friction_angle, "friction_angle")
        non_negative(self.hardening_slope, "hardening_slope")
        non_negative(self.hardening_decay, "hardening_decay")
        non_negative(self.initial_deficit, "initial_deficit")



@dataclass(frozen=True)
class GooMaterial(_Presets):
    """Viscoplastic goo (our choice where the paper is silent, spec §4.6):
    Hencky elasticity with a von Mises yield stress (Pa) and a viscosity (Pa·s)
    that relaxes the stress above it."""

    density: float = 1000.0
    youngs_modulus: float = 2000.0
    poisson_ratio: float = 0.3
    yield_stress: float = 50.0
    viscosity: float = 10.0

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "goo": dict(density=1000.0, youngs_modulus=2000.0, poisson_ratio=0.3, yield_stress=50.0, viscosity=10.0),
    }

    def __post_init__(self) -> None:
        positive(self.density, "density")
        non_negative(self.youngs_modulus, "youngs_modulus")
        _poisson(self.poisson_ratio)
        non_negative(self.yield_stress, "yield_stress")
        non_negative(self.viscosity, "viscosity")



class _Object:
    """A handle on one object added to a :class:`Simulation`."""

    kind: ClassVar[str] = "object"

    def __init__(self, sim: Simulation, index: int, name: str) -> None:
        self._sim = sim
        self.index = index
        self.name = name

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, points={self.num_points})"

    @property
    def num_points(self) -> int:
        """Number of particles (volumes) or vertices (meshes, strands)."""
        return int(self._sim._s.positions(self.index).shape[0])

    @property
    def positions(self) -> npt.NDArray[np.floating[Any]]:
        """(N, 3) positions in metres (a copy, in the simulation's precision:
        float32 by default)."""
        return self._sim._s.positions(self.index)

    @property
    def velocities(self) -> npt.NDArray[np.floating[Any]]:
        """(N, 3) velocities in m/s (a copy). Settable from one 3-vector or an
        (N, 3) array."""
        return self._sim._s.velocities(self.index)

    @velocities.setter
    def velocities(self, v: npt.ArrayLike) -> None:
        self._sim._s.set_velocities(self.index, velocity_field(v, self.num_points, "velocities"))


class Particles(_Object):
    """Volumetric particles (sand, goo, elastic solid)."""

    def __init__(self, sim: Simulation, index: int, name: str, particle_volume: float) -> None:
        super().__init__(sim, index, name)
        self.particle_volume = particle_volume

    def _frame_part(self) -> FramePoints:
        x = np.asarray(self.positions, dtype=np.float64)
        # Drawn as spheres of the particle's rest volume.
        r = np.full(len(x), (3.0 * self.particle_volume / (4.0 * np.pi)) ** (1.0 / 3.0))
        speed = np.linalg.norm(np.asarray(self.velocities, dtype=np.float64), axis=1)
        return FramePoints(positions=x, radii=r, point_data={"speed": speed})


class _Mesh(_Object, _handles.Scripted):
    def __init__(self, sim: Simulation, index: int, name: str) -> None:
        super().__init__(sim, index, name)
        self._handle_ids: list[int] = []  # this object's handles (positions in sim._handles)

    def pin(self, indices: npt.ArrayLike, targets: npt.ArrayLike | None = None, *,
            stiffness: float | None = None) -> None:
        """Pin vertices ``indices`` (ints or a boolean mask) at ``targets
        (K, 3)`` m (default: where they are). MPM pins are exact (the pinned
        vertices follow their targets), so ``stiffness`` must be None."""
        if stiffness is not None:
            raise InvalidInputError("MPM pins are exact constraints; leave stiffness=None "
                                    "(cloth.Simulation pins are springs and take a stiffness)")
        idx = vertex_indices(indices, self.num_points)
        t = None if targets is None else as_points(targets, "targets", allow_empty=idx.size == 0)
        if t is not None and t.shape[0] != idx.size:
            raise InvalidInputError(f"targets must have one row per pinned vertex ({idx.size}); got {t.shape[0]}")
        self._sim._s.pin(self.index, idx)
        if t is not None:
            self.set_pin_targets(idx, t)

    def set_pin_targets(self, indices: npt.ArrayLike, positions: npt.ArrayLike,
                        velocities: npt.ArrayLike | None = None) -> None:
        """Move pinned vertices: they are at ``positions (K, 3)`` m now and move on
        with ``velocities (K, 3)`` m/s (default zero)."""
        idx = vertex_indices(indices, self.num_points)
        p = as_points(positions, "positions", allow_empty=idx.size == 0)
        v = np.zeros_like(p) if velocities is None else as_points(velocities, "velocities",
                                                                   allow_empty=idx.size == 0)
        self._sim._s.set_pin_targets(self.index, idx, p, v)

    def release(self, indices: npt.ArrayLike | None = None) -> None:
        """Unpin ``indices`` (default: every pinned vertex of this object);
        they move freely again."""
        if indices is None:
            self._sim._s.unpin(self.index)
        else:
            self._sim._s.unpin_vertices(self.index, vertex_indices(indices, self.num_points))


    def _add_core_handle(self, idx: npt.NDArray[np.int64], pivot: tuple[float, float, float], times: list[float],
                         translations: npt.NDArray[np.float64], rotations: npt.NDArray[np.float64],
                         stiffness: float | None) -> int:
        if stiffness is not None:
            raise InvalidInputError("MPM pins are exact constraints; leave stiffness=None")
        return int(self._sim._s.add_handle_keyframes(self.index, idx, pivot, times, translations, rotations))


class Cloth(_Mesh):
    """A cloth mesh in a simulation; ``faces`` are those of the input mesh."""

    def __init__(self, sim: Simulation, index: int, name: str, mesh: TriMesh) -> None:
        super().__init__(sim, index, name)
        self.mesh = mesh

    @property
    def faces(self) -> npt.NDArray[np.int64]:
        """Triangles (F, 3) int64 (those of the mesh it was made from)."""
        return self.mesh.faces

    def _frame_part(self) -> FrameMesh:
        speed = np.linalg.norm(np.asarray(self.velocities, dtype=np.float64), axis=1)
        return FrameMesh(positions=np.asarray(self.positions, dtype=np.float64), faces=self.faces,
                         vertex_data={"speed": speed})


class Strands(_Mesh):
    """Strands (hair, yarn) in a simulation."""

    def __init__(self, sim: Simulation, index: int, name: str, curves: Curves, radius: float) -> None:
        super().__init__(sim, index, name)
        self.curves = curves
        self.radius = radius

    @property
    def offsets(self) -> npt.NDArray[np.int64]:
        """(C + 1,) int64: strand ``c`` is ``positions[offsets[c]:offsets[c + 1]]``."""
        return self.curves.offsets

    @property
    def segments(self) -> npt.NDArray[np.int64]:
        """(S, 2) int64 vertex pairs of every segment."""
        return self.curves.segments

    def _frame_part(self) -> FrameCurves:
        x = np.asarray(self.positions, dtype=np.float64)
        speed = np.linalg.norm(np.asarray(self.velocities, dtype=np.float64), axis=1)
        return FrameCurves(positions=x, offsets=self.offsets, radii=np.full(len(x), self.radius),
                           point_data={"speed": speed})


class Simulation:
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
        self._params: dict[str, Any] = dict(
            lower=as_vec3(lower, "lower"), upper=as_vec3(upper, "upper"), dx=dx, gravity=as_vec3(gravity, "gravity"),
            cfl=cfl, dt_max=dt_max, kernel=kernel, precision=precision, backend=backend,
            out_of_domain=out_of_domain, boundary_padding=boundary_padding, transfer=transfer,
            return_map=return_map, tangents=tangents,
        )
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
        self._colliders: list[Collider] = []
        self._collider_names: list[str] = []
        self._objects: list[Cloth | Strands | Particles] = []
        # Scripted handles as made, for checkpoints (core id = list position).
        self._handles: list[dict[str, Any]] = []

    # -- building ---------------------------------------------------------

    def _name(self, name: str) -> str:
        check_name(name, "name")
        return unique_name(name, {o.name for o in self._objects} | set(self._collider_names))

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
        mat = material or ClothMaterial()
        if not isinstance(mat, ClothMaterial):
            raise InvalidInputError(f"material must be a ClothMaterial; got {type(mat).__name__}")
        ew = choice(energy_weight, "energy_weight", ("split", "full"))
        nu = self._rpic(rpic_damping)
        vel = velocity_field(velocity, mesh.num_vertices, "velocity")
        uniform = bool(np.all(vel == vel[0]))
        v0 = as_vec3(vel[0], "velocity") if uniform else (0.0, 0.0, 0.0)
        nm = self._name(name)
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
        mat = material or CurveMaterial()
        if not isinstance(mat, CurveMaterial):
            raise InvalidInputError(f"material must be a CurveMaterial; got {type(mat).__name__}")
        ew = choice(energy_weight, "energy_weight", ("split", "full"))
        nu = self._rpic(rpic_damping)
        vel = velocity_field(velocity, len(curves.points), "velocity")
        uniform = bool(np.all(vel == vel[0]))
        v0 = as_vec3(vel[0], "velocity") if uniform else (0.0, 0.0, 0.0)
        nm = self._name(name)
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
        nm = self._name(name)
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
        mat = material or ElasticMaterial()
        if not isinstance(mat, ElasticMaterial):
            raise InvalidInputError(f"material must be an ElasticMaterial; got {type(mat).__name__}")
        return self._add_volume("elastic", points, mat, particle_volume, velocity, rpic_damping, name)

    def add_granular(self, points: npt.ArrayLike, material: SandMaterial | None = None, *,
                     velocity: Vec3Like = (0, 0, 0), rpic_damping: float = 0.0,
                     particle_volume: float | None = None, name: str = "sand") -> Particles:
        """Add sand (Drucker–Prager) sampled by ``points (N, 3)`` m."""
        mat = material or SandMaterial()
        if not isinstance(mat, SandMaterial):
            raise InvalidInputError(f"material must be a SandMaterial; got {type(mat).__name__}")
        return self._add_volume("sand", points, mat, particle_volume, velocity, rpic_damping, name)

    def add_goo(self, points: npt.ArrayLike, material: GooMaterial | None = None, *,
                velocity: Vec3Like = (0, 0, 0), rpic_damping: float = 0.0,
                particle_volume: float | None = None, name: str = "goo") -> Particles:
        """Add viscoplastic goo sampled by ``points (N, 3)`` m."""
        mat = material or GooMaterial()
        if not isinstance(mat, GooMaterial):
            raise InvalidInputError(f"material must be a GooMaterial; got {type(mat).__name__}")
        return self._add_volume("goo", points, mat, particle_volume, velocity, rpic_damping, name)

    @property
    def objects(self) -> tuple[Cloth | Strands | Particles, ...]:
        """The objects, in the order added (the handles the ``add_*`` methods returned)."""
        return tuple(self._objects)

    def add_collider(self, collider: Collider, *, name: str | None = None) -> int:
        """Add a collider (its motion and later changes to it are followed)
        and return its index. ``name``: its name in frames (default its type)."""
        if not isinstance(collider, Collider):
            raise InvalidInputError(f"collider must be a crumple.colliders.Collider; got {type(collider).__name__}")
        nm = self._name(name or type(collider).__name__.lower())
        collider.advance_to(self.time)
        i = self._s.add_collider(collider._c)
        self._colliders.append(collider)
        self._collider_names.append(nm)
        return int(i)

    @property
    def colliders(self) -> tuple[Collider, ...]:
        """The colliders, in the order added."""
        return tuple(self._colliders)

    def remove_collider(self, index_: int) -> None:
        """Remove collider ``index_`` (later ones shift down)."""
        i = index(index_, "collider index", len(self._colliders))
        self._s.remove_collider(i)
        del self._colliders[i]
        del self._collider_names[i]

    # -- stepping ---------------------------------------------------------

    def _push_colliders(self) -> None:
        for i, c in enumerate(self._colliders):
            if c._callback is not None:
                c.advance_to(self.time)
            self._s.set_collider(i, c._c)

    def _pull_colliders(self) -> None:
        for i, c in enumerate(self._colliders):
            c._c = self._s.get_collider(i)

    def advance(self, duration: float, *, frames: int = 1, progress: bool = False) -> int:
        """Advance by ``duration`` s (≥ 0) in ``frames`` equal frames
        (collider callbacks are called once per frame; a progress bar when
        ``progress``), with CFL-limited steps that land exactly on each frame
        time and on ``time + duration``. Ctrl-C stops it at a step boundary
        with the state intact. A diverging step raises
        :class:`SimulationDiverged` with the state rolled back to the start of
        that step (on either backend). Returns the number of steps taken."""
        d = non_negative(duration, "duration")
        frames = positive_int(frames, "frames")
        steps = 0
        t0 = self.time
        with _progress_bar(frames, "mpm", enabled=progress and frames > 1) as bar:
            for k in range(frames):
                self._push_colliders()
                try:
                    # Frame ends from the start time, so rounding does not accumulate.
                    steps += self._s.advance(max(0.0, t0 + d * (k + 1) / frames - self.time))
                finally:
                    self._pull_colliders()
                bar.update(1)
        return steps

    def step(self, dt: float | None = None) -> None:
        """One step of exactly ``dt`` s (default: the step the CFL rule and
        ``dt_max`` allow now, :meth:`stable_dt`)."""
        h = None if dt is None else positive(dt, "dt")
        self._push_colliders()
        try:
            self._s.step(h)
        finally:
            self._pull_colliders()

    def frame(self) -> Frame:
        """What a frame shows now: cloth as meshes, strands as curves with
        their radius, sand/goo/solids as points with the radius of their rest
        volume (each with per-point ``speed``, m/s), and every collider with
        its pose. Exporters (PLY, USD), the viewer and the video renderer read
        only this."""
        objects: dict[str, Any] = {o.name: o._frame_part() for o in self._objects}
        colliders = {n: collider_part(c) for n, c in zip(self._collider_names, self._colliders)}
        return Frame(time=self.time, objects=objects, colliders=colliders)

    # -- read-outs --------------------------------------------------------

    @property
    def time(self) -> float:
        """Simulated time, s."""
        return self._s.time

    @property
    def step_count(self) -> int:
        """Steps taken so far."""
        return self._s.step_count

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

    def save(self, path: str | Any) -> Any:
        """Write a checkpoint ``.npz``: the objects as added, the colliders and
        their motions, pins, and the full particle state. :meth:`load` continues
        bit-identically (collider callbacks are not saved: re-attach them)."""
        arrays: dict[str, npt.NDArray[Any]] = {}
        recipe = []
        for i, (kind, arrs, opts) in enumerate(self._recipe):
            if kind in ("elastic", "sand", "goo"):
                # particles may have been removed: rebuild with today's count
                arrs = {"points": np.asarray(self._s.positions(i), dtype=np.float64)}
            for k, a in arrs.items():
                arrays[f"obj{i}_{k}"] = np.asarray(a)
            recipe.append({"kind": kind, "arrays": list(arrs), "options": opts})
        colliders = [_to_spec(c) for c in self._colliders]
        for k, v in self._s.state_arrays().items():
            arrays[f"state_{k}"] = np.asarray(v)
        handles = _handles.save(self._handles, arrays)
        meta = {"solver": "mpm", "params": self._params, "recipe": recipe, "colliders": colliders,
                "collider_names": self._collider_names, "handles": handles}
        return _io.save_checkpoint(path, arrays, meta)

    @classmethod
    def load(cls, path: str | Any) -> Simulation:
        """Rebuild a simulation from a checkpoint written by :meth:`save`; its
        objects are in :attr:`objects` (in the order added, the same handle
        types ``add_*`` return). Raises :class:`CheckpointError` for a
        missing, corrupt, truncated or foreign file."""
        arrays, meta = _checkpoint.load(path, "mpm")
        try:
            sim = cls(**meta["params"])
            for i, item in enumerate(meta["recipe"]):
                a = {k: arrays[f"obj{i}_{k}"] for k in item["arrays"]}
                o = item["options"]
                kind = item["kind"]
                # Checkpoints written before the rename call ν_d "damping".
                nu = o.get("rpic_damping", o.get("damping", 0.0))
                name = o.get("name", "strands" if kind == "curves" else kind)
                if kind == "cloth":
                    sim.add_cloth(TriMesh(a["vertices"], a["faces"]), ClothMaterial(**o["material"]),
                                  rpic_damping=nu, velocity=o["velocity"], energy_weight=o["energy_weight"],
                                  name=name)
                elif kind == "curves":
                    sim.add_curves(Curves(a["points"], a["offsets"]), CurveMaterial(**o["material"]),
                                   rpic_damping=nu, velocity=o["velocity"], energy_weight=o["energy_weight"],
                                   name=name)
                else:
                    mat_cls = {"elastic": ElasticMaterial, "sand": SandMaterial, "goo": GooMaterial}[kind]
                    # Only the count matters here (the saved state overwrites the
                    # positions below); particles saved inside the wall padding
                    # would fail add_volume's placement check, so place them at
                    # the domain centre first.
                    centre = 0.5 * (np.asarray(sim._params["lower"]) + np.asarray(sim._params["upper"]))
                    pts = np.tile(centre, (len(a["points"]), 1))
                    sim._add_volume(kind, pts, mat_cls(**o["material"]), o["particle_volume"], o["velocity"],
                                    nu, name)
            names = meta.get("collider_names") or [None] * len(meta["colliders"])
            for c, n in zip(meta["colliders"], names):
                sim.add_collider(_from_spec(c["spec"], [tuple(m) for m in c["motions"]]), name=n)
            def core_restore(o: Any, a: dict[str, Any], h: dict[str, Any]) -> int:
                return int(sim._s.restore_handle(o.index, a["indices"], a["reference"], tuple(h["pivot"]),
                                                 float(h["start"]), h["status"] == "active", list(h["times"]),
                                                 a["translations"], a["rotations"]))

            _handles.restore(sim, meta.get("handles", []), arrays, core_restore)
            state: dict[str, Any] = {k[len("state_"):]: v for k, v in arrays.items() if k.startswith("state_")}
            state["time"] = float(state["time"])
            state["step"] = int(state["step"])
            sim._s.set_state_arrays(state)
        except CheckpointError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, OverflowError, AttributeError) as e:
            raise CheckpointError(f"{str(path)!r} is not a usable MPM checkpoint: {type(e).__name__}: {e}") from e
        for i, c in enumerate(sim._colliders):
            c._c.advance_to(sim.time)
            sim._s.set_collider(i, c._c)
        return sim

    def stage_times(self) -> dict[str, float]:
        """Seconds spent in each solver stage since the start (for profiling)."""
        return dict(self._s.stage_times())

    def removed_particles(self) -> int:
        """Volumetric particles deleted on leaving the domain (``out_of_domain="remove"``)."""
        return self._s.removed_particles()

    def counters(self) -> dict[str, int]:
        """Return-map events since the start: slide, tension, inverted, degenerate, element_steps."""
        return dict(self._s.counters())

