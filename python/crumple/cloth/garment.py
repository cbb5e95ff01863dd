"""The handle of one garment in a cloth simulation: its arrays, read-outs, pins and scripted handles."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from .. import _handles
from .._checks import as_points, index, positive, velocity_field, vertex_indices
from ..errors import InvalidInputError
from ..frames import FrameMesh
from ..geometry import TriMesh
from .material import Material, Wrinkles
from .metrics import count_triangle_intersections, wrinkle_metrics

if TYPE_CHECKING:
    from .simulation import Simulation


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
        idx = self._global(indices)
        if velocities is not None and np.any(velocity_field(velocities, len(idx), "velocities") != 0):
            raise InvalidInputError(
                "cloth pin targets do not move by themselves: pass velocities=None and update the targets "
                "every frame, or use add_handle(...) for a keyframed path")
        self._sim._s.set_pin_targets(idx, as_points(positions, "positions"))

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
        return FrameMesh(positions=x, faces=self.faces, vertex_data={
            "speed": speed, "plastic_angle": vertex_plastic_angles(len(x), self.hinges, self.plastic_angles)})


def vertex_plastic_angles(num_vertices: int, hinges: npt.NDArray[np.int64],
                          plastic_angles: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The frames' per-vertex ``plastic_angle`` ``(N,)`` rad (cloth and eol):
    the largest |θ_p| of the hinges whose edge (columns 0 and 1 of
    ``hinges`` ``(H, 4)``) touches the vertex, 0 where none does."""
    out = np.zeros(num_vertices)
    if len(hinges):
        pa = np.abs(plastic_angles)
        np.maximum.at(out, hinges[:, 0], pa)
        np.maximum.at(out, hinges[:, 1], pa)
    return out
