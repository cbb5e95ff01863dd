"""The shape-matching simulation: bodies from closed meshes, colliders,
stepping, frames and checkpoints."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from .. import _core
from .._checks import as_points, as_vec3, choice, finite, flag, non_negative, positive, positive_int, real
from .._simulation import SimulationBase
from ..backend import Backend, resolve_backend
from ..errors import InvalidInputError
from ..geometry import TriMesh, Vec3Like
from .body import Body
from .material import Material



def _surface_level(level: Any) -> int:
    if isinstance(level, bool) or level not in (0, 1, 2):
        raise InvalidInputError(
            f"surface_level must be 0 (fixed connectivity), 1 (remeshing without topology change) or 2 "
            f"(remeshing, tearing, cuts, components); got {level!r}")
    return int(level)


def _max_edge(x: Any) -> float:
    try:
        f = float(x)
    except (TypeError, ValueError):
        f = math.nan
    if not f > 0:
        raise InvalidInputError(f"max_edge must be > 0 spacings (inf keeps the input mesh); got {x!r}")
    return f


class Simulation(SimulationBase):
    """Shape matching with plasticity (spec shape_matching): bodies added
    with :meth:`add_body`, solved together by a Jacobi PBD loop.

    Keyword options (the spec's defaults, §1.3 and §10.1): ``dt`` (s, 1/60);
    ``substeps`` (1); ``iterations`` (4); ``sor`` over-relaxation (1.0);
    ``gravity`` (m/s²); ``spacing`` r (m, 0.1: the lattice spacing, the
    contact distance between bodies and the unit of the distances below);
    ``damping`` (fraction of velocity removed per second, 0); ``max_speed``
    (m/s, inf); ``world_distance`` and ``contact_margin`` (in spacings, 0.5
    and 0.5); ``particle_static_friction`` / ``particle_kinetic_friction``
    between bodies (0.3 / 0.2); ``static_friction_ratio`` (static over
    kinetic friction against colliders, 1.2; a collider's ``friction`` is
    the kinetic coefficient, ``sticky`` colliders hold, ``slip`` ones do
    not rub); ``max_neighbors`` (64); ``weights`` ("split": m/n, momentum
    conserving; "particle": the paper's m); ``rotation_fit`` ("rigid":
    torque-free, default; "linear": the paper's text); ``resampling`` (True;
    False = the §4.8 baseline with each material's ``plastic_cap``);
    ``cluster_spacing`` and ``cluster_radius`` (in spacings, 3 and 4);
    ``min_clusters`` / ``max_clusters`` per particle (3 / 10);
    ``deletion_distance`` (in spacings, 0.1: the paper's η; of a pair closer
    than this the lower index is deleted, spec §5.1) and ``seed_distance``
    (in spacings, 1: a seeded particle is farther than this from every
    other, §5.2); the paper's pair doubles the particle density of a body
    pulled to 5× along one axis, (0.5, 1.35) keeps it to about 1.2×
    (``pbd_taffy`` uses it); ``seed``;
    ``conserve_mass_momentum`` (False: the paper); ``surface_level`` (0:
    the surface keeps its connectivity; 1: every step its edges longer
    than ``max_edge`` are split, those shorter than a tenth of it
    collapsed and edges flipped where that widens thin triangles, so a
    body stretched to many times its length keeps a fine, closed surface,
    spec §8.6, needs ``resampling`` and a finite ``max_edge``; 2: level 1,
    and the surface also tears where no particle
    supports it, :meth:`Body.cut` cuts it, and its pieces become components
    that no cluster spans, spec §7 and §8.6, needs ``resampling``; pieces
    pressed together merge again: their touching faces are joined by a
    seam and clusters form across it, while the faces of a cut never
    heal); ``max_edge`` (in spacings, 2: ``add_body`` splits
    longer edges of the mesh at their midpoints, spec §2.4, so the skinned
    surface can bend and stretch with the particles, and surface levels 1
    and 2 keep every edge at most this long; ``inf`` keeps the mesh as
    given, at level 0 only); ``backend`` ("cpu":
    rayon, bitwise the same for any thread count; "gpu": the PBD loop,
    plasticity and orientations as wgpu compute shaders with the state on
    the device between steps, spec §14, agreeing with the CPU within f32
    rounding; with ``resampling`` the re-sampling stages run on the host
    once per step; "auto": a hardware GPU when there is one).

    Raises :class:`InvalidInputError` for bad options.
    """

    _solver = "pbd"

    def __init__(
        self,
        *,
        dt: float = 1.0 / 60.0,
        substeps: int = 1,
        iterations: int = 4,
        sor: float = 1.0,
        gravity: Vec3Like = (0.0, -9.81, 0.0),
        spacing: float = 0.1,
        damping: float = 0.0,
        max_speed: float = math.inf,
        world_distance: float = 0.5,
        contact_margin: float = 0.5,
        particle_static_friction: float = 0.3,
        particle_kinetic_friction: float = 0.2,
        static_friction_ratio: float = 1.2,
        max_neighbors: int = 64,
        weights: Literal["split", "particle"] = "split",
        rotation_fit: Literal["rigid", "linear"] = "rigid",
        resampling: bool = True,
        cluster_spacing: float = 3.0,
        cluster_radius: float = 4.0,
        min_clusters: int = 3,
        max_clusters: int = 10,
        deletion_distance: float = 0.1,
        seed_distance: float = 1.0,
        seed: int = 0x5EEDC1A57E25,
        conserve_mass_momentum: bool = False,
        surface_level: int = 0,
        max_edge: float = 2.0,
        backend: str = "cpu",
    ) -> None:
        ms = real(max_speed, "max_speed (m/s, inf for none)")
        if not ms > 0:
            raise InvalidInputError(f"max_speed must be > 0 m/s (inf for none); got {max_speed!r}")
        super().__init__(dict(
            dt=positive(dt, "dt"), substeps=positive_int(substeps, "substeps"),
            iterations=positive_int(iterations, "iterations"), sor=finite(sor, "sor"),
            gravity=as_vec3(gravity, "gravity"), spacing=positive(spacing, "spacing"),
            damping=non_negative(damping, "damping"), max_speed=ms,
            world_distance=non_negative(world_distance, "world_distance"),
            contact_margin=non_negative(contact_margin, "contact_margin"),
            particle_static_friction=non_negative(particle_static_friction, "particle_static_friction"),
            particle_kinetic_friction=non_negative(particle_kinetic_friction, "particle_kinetic_friction"),
            static_friction_ratio=finite(static_friction_ratio, "static_friction_ratio"),
            max_neighbors=positive_int(max_neighbors, "max_neighbors"),
            weights=choice(weights, "weights", ("split", "particle")),
            rotation_fit=choice(rotation_fit, "rotation_fit", ("rigid", "linear")),
            resampling=flag(resampling, "resampling"),
            cluster_spacing=positive(cluster_spacing, "cluster_spacing"),
            cluster_radius=positive(cluster_radius, "cluster_radius"),
            min_clusters=positive_int(min_clusters, "min_clusters"),
            max_clusters=positive_int(max_clusters, "max_clusters"),
            deletion_distance=non_negative(deletion_distance, "deletion_distance"),
            seed_distance=positive(seed_distance, "seed_distance"),
            seed=positive_int(seed, "seed", 0), conserve_mass_momentum=flag(conserve_mass_momentum,
                                                                              "conserve_mass_momentum"),
            surface_level=_surface_level(surface_level),
            max_edge=_max_edge(max_edge),
            backend=backend,
        ))
        self.backend: Backend = resolve_backend(backend)
        self._s = _core.PbdSimulation({k: v for k, v in self._params.items() if k != "backend"})
        if self.backend == "gpu":
            self._s.use_gpu()
        self._objects: list[Body] = []
        # What add_body was given, per body, for checkpoints.
        self._body_args: list[dict[str, Any]] = []

    def _core_or_none(self) -> Any:
        return self._s

    @property
    def dt(self) -> float:
        """Time step, s."""
        return float(self._params["dt"])

    @property
    def spacing(self) -> float:
        """Particle spacing r, m."""
        return float(self._params["spacing"])

    @property
    def objects(self) -> tuple[Body, ...]:
        """The bodies, in the order added (the handles ``add_body`` returned)."""
        return tuple(self._objects)

    def add_body(self, mesh: TriMesh, material: Material | str | None = None, *,
                 spacing: float | None = None, velocity: Vec3Like = (0.0, 0.0, 0.0),
                 name: str = "body", particles: npt.ArrayLike | None = None,
                 clusters: Sequence[npt.ArrayLike] | None = None) -> Body:
        """Add a body: the inside of the closed, consistently oriented ``mesh``
        (m; e.g. from :func:`crumple.io.load_mesh` or a generator) sampled on a
        lattice of the simulation's ``spacing``, clusters built over it (spec
        §2.4), and the mesh skinned to the particles as its surface (its
        edges first split down to the simulation's ``max_edge``, so
        ``body.surface`` can have more vertices than ``mesh``).

        ``material``: a :class:`Material` or a preset name (default
        ``armadillo``); ``spacing``: must equal the simulation's (the
        spacing is shared by every body: it is their contact distance);
        ``velocity``: one 3-vector, m/s; ``name``: its name in frames.

        ``particles`` ``(N, 3)`` m replaces the lattice sampling and
        ``clusters`` (a sequence of integer index arrays into the particles,
        each a cluster) replaces the cluster creation: for a sampling and
        cluster layout of one's own (a benchmark scene, a dataset's fixed
        layout). Every particle must be in a cluster; the mesh is still the
        surface that is skinned to them.

        Raises :class:`MeshError` for an open or non-manifold mesh and
        :class:`InvalidInputError` when the body holds fewer than 4 lattice
        points (a spacing too large for it) or for bad arguments.
        """
        if not isinstance(mesh, TriMesh):
            raise InvalidInputError(f"mesh must be a crumple.geometry.TriMesh; got {type(mesh).__name__}")
        material = Material.coerce(material, "armadillo", "pbd.Material")
        if spacing is not None and positive(spacing, "spacing") != self.spacing:
            raise InvalidInputError(
                f"spacing={spacing} differs from the simulation's spacing {self.spacing}: every body shares one "
                "(it is their contact distance); pass spacing to pbd.Simulation instead")
        v0 = as_vec3(velocity, "velocity")
        pts = None if particles is None else as_points(particles, "particles")
        offsets = members = None
        if clusters is not None:
            offsets, members = _cluster_csr(clusters)
        nm = self._unique_name(name)
        idx = int(self._s.add_body(mesh._m, material._dict(), v0, pts, offsets, members))
        body = Body(self, idx, nm, material)
        self._objects.append(body)
        self._body_args.append(dict(velocity=v0, mesh=mesh, particles=pts, offsets=offsets, members=members))
        return body

    # -- read-outs --------------------------------------------------------------

    def kinetic_energy(self) -> float:
        """Σ ½ m |v|² over all particles, J."""
        return float(self._s.kinetic_energy())

    def total_momentum(self) -> npt.NDArray[np.float64]:
        """Σ m v over all particles, kg·m/s."""
        return np.asarray(self._s.total_momentum())

    def stats(self) -> dict[str, float]:
        """The last step's counters (plastic clusters ``plastic_clusters``,
        cap rejections ``capped_updates``, degenerate clusters, contact
        candidates ``particle_contacts`` and ``obstacle_contacts``: particle–
        collider pairs, re-sampling's particles and clusters deleted and
        made, the surface remesher's ``split_edges``, ``collapsed_edges``,
        ``flipped_edges``) and its seconds per stage ``time_integrate``,
        ``time_contacts``, ``time_shape_matching``, ``time_projection``,
        ``time_plasticity``, ``time_skin``, ``time_resample`` (what
        :meth:`stage_times` adds up; with ``backend="gpu"`` the stages that
        run on the device are not timed, to keep the step free of host
        waits, and read 0)."""
        return dict(self._s.last_stats())

    def stage_times(self) -> dict[str, float]:
        """Seconds spent per solver stage since the start."""
        return dict(self._s.stage_times())

    # -- checkpoints -------------------------------------------------------------

    def _save_objects(self, arrays: dict[str, npt.NDArray[Any]]) -> dict[str, Any]:
        bodies = []
        for i, (b, args) in enumerate(zip(self._objects, self._body_args)):
            # The input mesh rebuilds the body; the saved state then replaces
            # its particles, clusters and surface.
            arrays[f"body{i}_vertices"] = np.asarray(args["mesh"].vertices)
            arrays[f"body{i}_faces"] = np.asarray(args["mesh"].faces)
            for key in ("particles", "offsets", "members"):
                if args[key] is not None:
                    arrays[f"body{i}_{key}"] = args[key]
            bodies.append({"name": b.name, "material": b.material._dict(), "velocity": args["velocity"]})
        return {"bodies": bodies}

    def _load_objects(self, arrays: dict[str, npt.NDArray[Any]], meta: dict[str, Any]) -> None:
        for i, b in enumerate(meta["bodies"]):
            fields = dict(b["material"])
            # Checkpoints written before two fields were renamed (CHANGELOG, 2026-11-30).
            for old, new in (("hardening", "hardening_rate"), ("stiffness", "shape_stiffness")):
                if old in fields:
                    fields[new] = fields.pop(old)
            mesh = TriMesh(arrays[f"body{i}_vertices"], arrays[f"body{i}_faces"])
            pts = arrays.get(f"body{i}_particles")
            clusters = None
            if f"body{i}_offsets" in arrays:
                off, mem = arrays[f"body{i}_offsets"], arrays[f"body{i}_members"]
                clusters = [mem[off[k]:off[k + 1]] for k in range(len(off) - 1)]
            self.add_body(mesh, Material(**fields), velocity=b["velocity"], name=b["name"],
                          particles=pts, clusters=clusters)

    def _restore_handle(self, obj: Any, arrays: dict[str, Any], handle: dict[str, Any]) -> int:
        raise InvalidInputError("shape-matching bodies have no scripted handles")


def _cluster_csr(clusters: Sequence[npt.ArrayLike]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Clusters (index arrays) as CSR offsets ``(C + 1,)`` and members, int64."""
    if isinstance(clusters, (str, bytes)) or not hasattr(clusters, "__len__"):
        raise InvalidInputError("clusters must be a sequence of integer index arrays, one per cluster")
    parts = []
    for k, c in enumerate(clusters):
        a = np.asarray(c)
        if a.ndim != 1 or not (np.issubdtype(a.dtype, np.integer) or a.size == 0):
            raise InvalidInputError(f"cluster {k} must be a 1-D array of particle indices; got shape {a.shape} "
                                    f"dtype {a.dtype}")
        if a.size and a.min() < 0:
            raise InvalidInputError(f"cluster {k} has a negative particle index {int(a.min())}")
        parts.append(a.astype(np.int64))
    offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(p) for p in parts])
    members = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    return offsets, members
