"""Triangle meshes, strands, generators and volume sampling.

All lengths are in metres. Meshes are validated when built: non-finite
vertices, out-of-range indices, degenerate or duplicate faces and
non-manifold edges raise :class:`~crumple.MeshError` naming the offending
indices.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from . import _core
from ._checks import as_array, as_faces, as_points, as_vec3, choice, positive, positive_int
from .errors import InvalidInputError

__all__ = [
    "TriMesh",
    "Curves",
    "grid_mesh",
    "uv_sphere",
    "box_mesh",
    "cylinder_mesh",
    "torus_mesh",
    "helix_curves",
    "straight_curves",
    "sample_box",
    "sample_sphere",
    "sample_mesh",
]

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
Vec3Like = Sequence[float] | npt.ArrayLike

_AXES = {"x": 0, "y": 1, "z": 2}


class TriMesh:
    """A validated triangle mesh.

    Parameters
    ----------
    vertices : (N, 3) array of float, metres.
    faces : (M, 3) array of int, vertex indices with consistent winding
        (counter-clockwise seen from the side the normal points to).

    Topology (edges, hinges) is computed once and cached. Arrays returned by
    properties are copies.
    """

    __slots__ = ("_m",)

    def __init__(self, vertices: npt.ArrayLike, faces: npt.ArrayLike) -> None:
        self._m = _core.TriMesh(as_points(vertices, "vertices", check_finite=False), as_faces(faces, "faces"))

    @classmethod
    def _wrap(cls, m: _core.TriMesh) -> TriMesh:
        obj = cls.__new__(cls)
        obj._m = m
        return obj

    @property
    def vertices(self) -> F64:
        """(N, 3) float64 vertex positions, m."""
        return self._m.vertices

    @property
    def faces(self) -> I64:
        """(M, 3) int64 vertex indices."""
        return self._m.faces

    @property
    def num_vertices(self) -> int:
        return self._m.num_vertices

    @property
    def num_faces(self) -> int:
        return self._m.num_faces

    @property
    def edges(self) -> I64:
        """(E, 2) unique undirected edges ``(a, b)`` with ``a < b``, sorted."""
        return self._m.edges

    @property
    def hinges(self) -> I64:
        """(H, 4) interior-edge stencils ``(x0, x1, x2, x3)``: the edge is
        ``x0 -> x1`` in face 0 (third vertex ``x2``) and ``x1 -> x0`` in face 1
        (third vertex ``x3``)."""
        return self._m.hinges

    @property
    def hinge_faces(self) -> I64:
        """(H, 2) the two faces of each hinge (face 0, face 1)."""
        return self._m.hinge_faces

    @property
    def face_areas(self) -> F64:
        """(M,) triangle areas, m²."""
        return self._m.face_areas

    @property
    def vertex_normals(self) -> F64:
        """(N, 3) area-weighted unit vertex normals."""
        return self._m.vertex_normals

    @property
    def is_closed(self) -> bool:
        """True when every edge has exactly two faces (a watertight surface)."""
        return self._m.is_closed

    @property
    def is_consistently_oriented(self) -> bool:
        """True when no edge is traversed twice in the same direction."""
        return self._m.is_consistently_oriented

    @property
    def bounds(self) -> tuple[F64, F64]:
        """(lower, upper) corners of the bounding box, m."""
        lo, hi = self._m.bounds
        return np.asarray(lo), np.asarray(hi)

    def __repr__(self) -> str:
        return f"TriMesh({self.num_vertices} vertices, {self.num_faces} faces)"


class Curves:
    """A set of polyline strands (hair, yarn, fibres).

    Parameters
    ----------
    points : (P, 3) array of float, metres, all strands back to back.
    offsets : (S + 1,) array of int; strand ``i`` is
        ``points[offsets[i]:offsets[i+1]]``. ``offsets[0] == 0`` and
        ``offsets[-1] == P``; each strand has at least 2 points.
    """

    __slots__ = ("_c",)

    def __init__(self, points: npt.ArrayLike, offsets: npt.ArrayLike) -> None:
        off = as_array(offsets, "offsets", None, "a 1-D integer array")
        if off.ndim != 1 or off.dtype.kind not in "iu":
            raise InvalidInputError(f"offsets must be a 1-D integer array; got {off.dtype} shape {off.shape}")
        self._c = _core.Curves(as_points(points, "points"), np.ascontiguousarray(off, dtype=np.int64))

    @classmethod
    def _wrap(cls, c: _core.Curves) -> Curves:
        obj = cls.__new__(cls)
        obj._c = c
        return obj

    @property
    def points(self) -> F64:
        """(P, 3) float64 points, m."""
        return self._c.points

    @property
    def offsets(self) -> I64:
        """(S + 1,) strand offsets into ``points``."""
        return self._c.offsets

    @property
    def num_strands(self) -> int:
        return self._c.num_strands

    @property
    def segments(self) -> I64:
        """(K, 2) point-index pairs of every segment of every strand."""
        return self._c.segments

    def __repr__(self) -> str:
        return f"Curves({self.num_strands} strands, {len(self.points)} points)"


def _axis(normal: str | int) -> int:
    if isinstance(normal, str):
        return _AXES[choice(normal, "normal axis", tuple(_AXES))]
    if normal in (0, 1, 2):
        return int(normal)
    raise InvalidInputError(f"normal must be 'x', 'y' or 'z'; got {normal!r}")


def _pair(v: Any, name: str) -> tuple[float, float]:
    a = as_array(v, name, np.float64, "two numbers").reshape(-1)
    if a.shape != (2,):
        raise InvalidInputError(f"{name} must be two numbers; got {v!r}")
    return positive(a[0], f"{name}[0]"), positive(a[1], f"{name}[1]")


def grid_mesh(
    *,
    size: tuple[float, float] = (1.0, 1.0),
    resolution: tuple[int, int] = (32, 32),
    center: Vec3Like = (0.0, 0.0, 0.0),
    normal: Literal["x", "y", "z"] | int = "y",
) -> TriMesh:
    """A flat rectangular sheet of ``resolution[0] x resolution[1]`` quads, each
    split into two triangles (alternating diagonals), lying in the plane
    orthogonal to ``normal`` through ``center``, with faces wound so their
    normals point along +``normal``. ``size`` is the extent in metres along
    the two in-plane axes (for ``normal='y'``: x then z)."""
    sx, sy = _pair(size, "size")
    r = as_array(resolution, "resolution", None, "two integers").reshape(-1)
    if r.shape != (2,):
        raise InvalidInputError(f"resolution must be two integers; got {resolution!r}")
    rx, ry = positive_int(r[0], "resolution[0]"), positive_int(r[1], "resolution[1]")
    return TriMesh._wrap(_core.grid_mesh((sx, sy), (rx, ry), as_vec3(center, "center"), _axis(normal)))


def uv_sphere(*, center: Vec3Like = (0, 0, 0), radius: float = 1.0, n_lat: int = 16, n_lon: int = 32) -> TriMesh:
    """A closed UV sphere (outward normals) with ``n_lat`` latitude bands and
    ``n_lon`` longitude segments; radius in metres."""
    return TriMesh._wrap(_core.uv_sphere(as_vec3(center, "center"), positive(radius, "radius"),
                                         positive_int(n_lat, "n_lat", 2), positive_int(n_lon, "n_lon", 3)))


def box_mesh(*, center: Vec3Like = (0, 0, 0), half_extents: Vec3Like = (0.5, 0.5, 0.5),
             subdivisions: int | Sequence[int] = 1) -> TriMesh:
    """A closed axis-aligned box (outward normals); half extents in metres.
    ``subdivisions``: quads per edge, one int for every axis or three
    ``(nx, ny, nz)`` (a long bar wants more along its length)."""
    he = as_vec3(half_extents, "half_extents")
    for i, h in enumerate(he):
        positive(h, f"half_extents[{i}]")
    if isinstance(subdivisions, (int, np.integer)):
        n = positive_int(subdivisions, "subdivisions")
        sub = (n, n, n)
    else:
        parts = list(as_array(subdivisions, "subdivisions", None, "one int or three (nx, ny, nz)").reshape(-1))
        if len(parts) != 3:
            raise InvalidInputError(f"subdivisions must be one int or three (nx, ny, nz); got {subdivisions!r}")
        sub = (positive_int(parts[0], "subdivisions[0]"), positive_int(parts[1], "subdivisions[1]"),
               positive_int(parts[2], "subdivisions[2]"))
    return TriMesh._wrap(_core.box_mesh(as_vec3(center, "center"), he, sub))


def cylinder_mesh(*, center: Vec3Like = (0, 0, 0), axis: Vec3Like = (0, 1, 0), radius: float = 0.5,
                  height: float = 1.0, n_around: int = 32, n_along: int = 8, capped: bool = True) -> TriMesh:
    """A cylinder along ``axis`` centred at ``center``: a closed solid when
    ``capped``, else an open tube (a trouser leg, a sleeve)."""
    ax = as_vec3(axis, "axis")
    if np.linalg.norm(ax) == 0:
        raise InvalidInputError("axis must be a non-zero vector")
    return TriMesh._wrap(_core.cylinder_mesh(as_vec3(center, "center"), ax, positive(radius, "radius"),
                                             positive(height, "height"), positive_int(n_around, "n_around", 3),
                                             positive_int(n_along, "n_along"), bool(capped)))


def torus_mesh(*, center: Vec3Like = (0, 0, 0), major_radius: float = 0.5, minor_radius: float = 0.2,
               n_major: int = 32, n_minor: int = 16) -> TriMesh:
    """A closed torus around the y axis through ``center``."""
    big, small = positive(major_radius, "major_radius"), positive(minor_radius, "minor_radius")
    if small >= big:
        raise InvalidInputError(f"minor_radius ({small}) must be smaller than major_radius ({big})")
    return TriMesh._wrap(_core.torus_mesh(as_vec3(center, "center"), big, small,
                                          positive_int(n_major, "n_major", 3), positive_int(n_minor, "n_minor", 3)))


def helix_curves(*, center: Vec3Like = (0, 0, 0), count: tuple[int, int] = (4, 4), spacing: float = 0.05,
                 radius: float = 0.01, pitch: float = 0.02, turns: float = 5.0, points_per_turn: int = 16,
                 axis: Vec3Like = (0, -1, 0)) -> Curves:
    """``count[0] x count[1]`` helical strands (curly hair) whose roots lie on a
    grid of ``spacing`` around ``center``, winding along ``axis``. Helix
    ``radius`` and ``pitch`` (advance per turn) in metres."""
    c = as_array(count, "count", None, "two integers").reshape(-1)
    if c.shape != (2,):
        raise InvalidInputError(f"count must be two integers; got {count!r}")
    return Curves._wrap(_core.helix_curves(
        as_vec3(center, "center"), (positive_int(c[0], "count[0]"), positive_int(c[1], "count[1]")),
        positive(spacing, "spacing"), positive(radius, "radius"), positive(pitch, "pitch"),
        positive(turns, "turns"), positive_int(points_per_turn, "points_per_turn", 3), as_vec3(axis, "axis")))


def straight_curves(roots: npt.ArrayLike, *, direction: Vec3Like = (0, -1, 0), length: float = 0.3,
                    segments: int = 16) -> Curves:
    """One straight strand from each root point ``(S, 3)`` along ``direction``,
    ``length`` metres long, with ``segments`` segments."""
    return Curves._wrap(_core.straight_curves(as_points(roots, "roots"), as_vec3(direction, "direction"),
                                              positive(length, "length"), positive_int(segments, "segments")))


def _sample(region: Any, method: str, spacing: float, seed: int) -> F64:
    m = choice(method, "sampling method", ("lattice", "poisson"))
    h = positive(spacing, "spacing")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**64:
        raise InvalidInputError(f"seed must be an integer in [0, 2**64); got {seed!r}")
    return _core.sample_region(region, m, h, int(seed))


def sample_box(*, lower: Vec3Like, upper: Vec3Like, spacing: float, method: str = "lattice", seed: int = 0) -> F64:
    """Points filling the box ``[lower, upper]``: a regular lattice of
    ``spacing`` (cell centres), or Poisson-disk samples at least ``spacing``
    apart. Returns ``(N, 3)`` float64, m. Deterministic for a ``seed``."""
    lo, hi = np.asarray(as_vec3(lower, "lower")), np.asarray(as_vec3(upper, "upper"))
    if not (hi > lo).all():
        raise InvalidInputError(f"upper {tuple(hi)} must be greater than lower {tuple(lo)} on every axis")
    return _sample(_core.Region.box(tuple(lo), tuple(hi)), method, spacing, seed)


def sample_sphere(*, center: Vec3Like, radius: float, spacing: float, method: str = "lattice",
                  seed: int = 0) -> F64:
    """Points filling a ball (see :func:`sample_box` for ``method``)."""
    return _sample(_core.Region.sphere(as_vec3(center, "center"), positive(radius, "radius")), method, spacing, seed)


def sample_mesh(mesh: TriMesh, *, spacing: float, method: str = "lattice", seed: int = 0) -> F64:
    """Points filling the inside of a closed triangle mesh (raises
    :class:`~crumple.MeshError` if the mesh is not closed)."""
    if not isinstance(mesh, TriMesh):
        raise InvalidInputError(f"mesh must be a crumple.geometry.TriMesh; got {type(mesh).__name__}")
    return _sample(_core.Region.mesh(mesh._m), method, spacing, seed)


