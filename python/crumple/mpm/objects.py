"""Handles of the objects in an MPM simulation: particle sets, cloth meshes and strands."""

from __future__ import annotations

from typing import Any, ClassVar
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from .._checks import as_points, index, velocity_field, vertex_indices
from .. import _handles
from ..errors import InvalidInputError
from ..frames import FrameCurves, FrameMesh, FramePoints
from ..geometry import Curves, TriMesh

if TYPE_CHECKING:
    from .simulation import Simulation


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
