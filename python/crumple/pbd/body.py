"""The handle of one shape-matching body: its particles, its skinned
surface, its clusters' plastic state, and pins."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .._checks import as_points, as_vec3, vertex_indices
from ..errors import InvalidInputError
from ..frames import FrameMesh
from ..geometry import TriMesh
from .material import Material

if TYPE_CHECKING:
    from .simulation import Simulation


class Body:
    """One body of a :class:`Simulation`, returned by
    :meth:`Simulation.add_body`. Particle arrays use the body's own numbering
    (ascending in the simulation; re-sampling adds and removes particles, so
    the count can change from step to step)."""

    def __init__(self, sim: Simulation, index: int, name: str, material: Material) -> None:
        self._sim = sim
        self.index = index
        self.name = name
        self.material = material

    def __repr__(self) -> str:
        return (f"pbd.Body({self.name!r}, {self.num_particles} particles, "
                f"{self.num_clusters} clusters)")

    @property
    def num_particles(self) -> int:
        """Particles of the body now."""
        return int(self._sim._core().num_particles(self.index))

    @property
    def num_clusters(self) -> int:
        """Shape-matching clusters of the body now."""
        return int(self._sim._core().num_clusters(self.index))

    @property
    def positions(self) -> npt.NDArray[np.float32]:
        """Particle positions, ``(N, 3)`` float32, m (a copy)."""
        return np.asarray(self._sim._core().positions(self.index))

    @property
    def velocities(self) -> npt.NDArray[np.float32]:
        """Particle velocities, ``(N, 3)`` float32, m/s (a copy; assignable)."""
        return np.asarray(self._sim._core().velocities(self.index))

    @velocities.setter
    def velocities(self, v: npt.ArrayLike) -> None:
        n = self.num_particles
        a = as_points(v, "velocities")
        if a.shape != (n, 3):
            raise InvalidInputError(f"velocities must have shape ({n}, 3); got {a.shape}")
        self._sim._core().set_velocities(self.index, a)

    @property
    def masses(self) -> npt.NDArray[np.float32]:
        """Particle masses, ``(N,)`` float32, kg."""
        return np.asarray(self._sim._core().masses(self.index))

    @property
    def particle_ids(self) -> npt.NDArray[np.uint32]:
        """Persistent particle ids, ``(N,)`` uint32: given in creation order,
        never reused, kept by every particle that survives re-sampling; use
        them to follow material points between frames."""
        return np.asarray(self._sim._core().particle_ids(self.index))

    @property
    def pinned(self) -> npt.NDArray[np.int64]:
        """Indices of the pinned particles in the body's numbering now,
        ``(K,)`` int64 ascending. Re-sampling renumbers particles but never
        removes or reorders pinned ones, so ``set_pin_targets(body.pinned,
        targets)`` addresses the same particles, in the same order, every step."""
        return np.asarray(self._sim._core().pinned(self.index))

    @property
    def surface(self) -> TriMesh:
        """The skinned surface mesh now (the input mesh's connectivity), m."""
        y, f = self._sim._core().surface(self.index)
        return TriMesh(np.asarray(y, dtype=np.float64), np.asarray(f))

    @property
    def plastic_norms(self) -> npt.NDArray[np.float32]:
        """‖F_P‖_F of every cluster of the body, ``(C,)`` (√3 ≈ 1.732 = no plastic deformation)."""
        return np.asarray(self._sim._core().plastic_norms(self.index))

    def _indices(self, indices: Any) -> npt.NDArray[np.int64]:
        return vertex_indices(indices, self.num_particles, "indices")

    def cut(self, point: Any, normal: Any) -> int:
        """Cut the body along the plane through ``point`` (m) with normal
        ``normal`` (spec §7's user cut; needs ``surface_level=2``): the
        surface triangles crossing the plane are removed and both holes
        capped, the particles on either side are told apart, and the next
        step removes the clusters spanning the cut, so the two pieces move
        on as separate components. Returns the surface's component count."""
        return int(self._sim._core().cut(self.index, as_vec3(point, "point"), as_vec3(normal, "normal")))

    def pin(self, indices: npt.ArrayLike, targets: npt.ArrayLike | None = None, *,
            stiffness: float | None = None) -> None:
        """Make particles ``indices`` (ints or a bool mask, the body's
        numbering) kinematic, held at ``targets`` ``(K, 3)`` m (default: where
        they are). Pins are exact (``stiffness`` must be None); pinned
        particles are never removed by re-sampling."""
        if stiffness is not None:
            raise InvalidInputError("shape-matching pins are exact: pass stiffness=None")
        idx = self._indices(indices)
        t = None if targets is None else as_points(targets, "targets")
        if t is not None and len(t) != len(idx):
            raise InvalidInputError(f"targets must have shape ({len(idx)}, 3); got {t.shape}")
        self._sim._core().pin(self.index, idx, t)

    def set_pin_targets(self, indices: npt.ArrayLike, positions: npt.ArrayLike,
                        velocities: npt.ArrayLike | None = None) -> None:
        """Move pinned particles: ``positions`` ``(K, 3)`` m are where they are
        at the end of the next step (their velocity follows from the motion;
        ``velocities`` must be None)."""
        if velocities is not None:
            raise InvalidInputError("shape-matching pin targets are positions at the end of the next step: "
                                    "pass velocities=None")
        idx = self._indices(indices)
        p = as_points(positions, "positions")
        if len(p) != len(idx):
            raise InvalidInputError(f"positions must have shape ({len(idx)}, 3); got {p.shape}")
        self._sim._core().set_pin_targets(self.index, idx, p)

    def release(self, indices: npt.ArrayLike | None = None) -> None:
        """Make pinned particles dynamic again (all of the body's when None)."""
        idx = None if indices is None else self._indices(indices)
        self._sim._core().release(self.index, idx)

    def _frame_part(self) -> FrameMesh:
        # The skinned surface, with the vertex data every module's frames
        # carry: ``speed`` (m/s), here the skinned particles' velocities
        # blended with the skinning weights.
        y, f, speed = self._sim._core().surface_frame(self.index)
        return FrameMesh(positions=np.asarray(y, dtype=np.float64), faces=np.asarray(f),
                         vertex_data={"speed": np.asarray(speed, dtype=np.float64)})
