"""Meshes, strands, generators and sampling through the Python API."""

from __future__ import annotations

import numpy as np
import pytest

import crumple as cr
from crumple.geometry import TriMesh

TRI_V = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], dtype=np.float64)
TRI_F = np.array([[0, 1, 2], [2, 1, 3]])


def test_trimesh_roundtrip_and_topology() -> None:
    """A two-triangle quad has 5 edges, 1 hinge ordered per the cloth spec."""
    m = TriMesh(TRI_V, TRI_F)
    assert m.num_vertices == 4 and m.num_faces == 2
    np.testing.assert_array_equal(m.vertices, TRI_V)
    np.testing.assert_array_equal(m.faces, TRI_F)
    assert m.edges.shape == (5, 2) and (m.edges[:, 0] < m.edges[:, 1]).all()
    assert m.hinges.shape == (1, 4)
    x0, x1, x2, x3 = m.hinges[0]
    f0, f1 = m.hinge_faces[0]
    # face 0 traverses x0 -> x1 and has third vertex x2; face 1 the reverse with x3
    tri0 = list(m.faces[f0])
    i = tri0.index(x0)
    assert tri0[(i + 1) % 3] == x1 and tri0[(i + 2) % 3] == x2
    tri1 = list(m.faces[f1])
    j = tri1.index(x1)
    assert tri1[(j + 1) % 3] == x0 and tri1[(j + 2) % 3] == x3
    np.testing.assert_allclose(m.face_areas, [0.5, 0.5])
    np.testing.assert_allclose(m.vertex_normals, np.tile([0, 0, 1.0], (4, 1)), atol=1e-12)
    assert not m.is_closed


@pytest.mark.parametrize(
    "verts, faces, match",
    [
        (np.where(np.arange(12).reshape(4, 3) == 4, np.nan, TRI_V), TRI_F, r"vertex 1 .*non-finite"),
        (TRI_V, [[0, 1, 7]], r"face 0 references vertex 7"),
        (TRI_V, [[0, -1, 2]], r"face 0 references vertex -1"),
        (TRI_V, [[0, 1, 1]], r"face 0 .*degenerate"),
        (np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0.0]]), [[0, 1, 2]], r"face 0 .*degenerate"),
        (TRI_V, [[0, 1, 2], [1, 2, 0]], r"faces 0 and 1 are duplicates"),
    ],
)
def test_trimesh_rejects_bad_meshes(verts: np.ndarray, faces: object, match: str) -> None:
    """Each kind of bad mesh raises MeshError naming the offending indices."""
    with pytest.raises(cr.MeshError, match=match):
        TriMesh(verts, faces)


def test_nonmanifold_edge_is_named() -> None:
    """Three faces on edge (0, 1) are rejected with the edge and faces named."""
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1.0]])
    f = [[0, 1, 2], [1, 0, 3], [0, 1, 4]]
    with pytest.raises(cr.MeshError, match=r"edge \(0, 1\) is shared by 3 faces"):
        TriMesh(v, f)


@pytest.mark.parametrize(
    "verts, faces, match",
    [
        (TRI_V[:, :2], TRI_F, r"vertices must have shape \(N, 3\)"),
        (TRI_V.astype(str), TRI_F, r"vertices must be an \(N, 3\) array of real numbers"),
        (TRI_V, TRI_F.astype(np.float64) + 0.5, r"faces must hold integer vertex indices"),
        (TRI_V, TRI_F[:, :2], r"faces must have shape \(M, 3\)"),
        (np.zeros((0, 3)), TRI_F, r"vertices is empty"),
    ],
)
def test_trimesh_rejects_bad_arrays(verts: np.ndarray, faces: np.ndarray, match: str) -> None:
    """Wrong shapes and dtypes raise InvalidInputError (also a ValueError)."""
    with pytest.raises(cr.InvalidInputError, match=match):
        TriMesh(verts, faces)
    with pytest.raises(ValueError):
        TriMesh(verts, faces)


def _euler(m: TriMesh) -> int:
    return m.num_vertices - len(m.edges) + m.num_faces


def _signed_volume(m: TriMesh) -> float:
    v, f = m.vertices, m.faces
    return float(np.einsum("ij,ij->i", v[f[:, 0]], np.cross(v[f[:, 1]], v[f[:, 2]])).sum() / 6.0)


def test_generators_are_valid_closed_and_outward() -> None:
    """Closed generators have the right Euler characteristic and volume."""
    s = cr.geometry.uv_sphere(center=(1, 2, 3), radius=0.5, n_lat=24, n_lon=48)
    assert s.is_closed and s.is_consistently_oriented and _euler(s) == 2
    assert _signed_volume(s) == pytest.approx(4 / 3 * np.pi * 0.125, rel=0.02)
    b = cr.geometry.box_mesh(center=(0, 0, 0), half_extents=(0.5, 1.0, 1.5), subdivisions=3)
    assert b.is_closed and _euler(b) == 2
    assert _signed_volume(b) == pytest.approx(6.0, rel=1e-9)
    t = cr.geometry.torus_mesh(major_radius=0.5, minor_radius=0.2, n_major=48, n_minor=24)
    assert t.is_closed and _euler(t) == 0
    assert _signed_volume(t) == pytest.approx(2 * np.pi**2 * 0.5 * 0.04, rel=0.03)
    c = cr.geometry.cylinder_mesh(radius=0.5, height=2.0, n_around=64, capped=True)
    assert c.is_closed and _euler(c) == 2
    assert _signed_volume(c) == pytest.approx(np.pi * 0.25 * 2.0, rel=0.01)
    tube = cr.geometry.cylinder_mesh(radius=0.5, height=2.0, capped=False)
    assert not tube.is_closed and _euler(tube) == 0


def test_grid_mesh_layout() -> None:
    """A y-normal grid lies in y = center.y, spans `size`, normals +y."""
    g = cr.geometry.grid_mesh(size=(2.0, 1.0), resolution=(4, 2), center=(0.5, 0.8, 0.5))
    assert g.num_vertices == 15 and g.num_faces == 16 and _euler(g) == 1
    np.testing.assert_allclose(g.vertices[:, 1], 0.8)
    lo, hi = g.bounds
    np.testing.assert_allclose(hi - lo, [2.0, 0.0, 1.0], atol=1e-12)
    assert (g.vertex_normals[:, 1] > 0.999).all()
    gx = cr.geometry.grid_mesh(resolution=(3, 3), normal="x")
    assert (gx.vertex_normals[:, 0] > 0.999).all()


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: cr.geometry.uv_sphere(radius=-1.0), r"radius must be > 0"),
        (lambda: cr.geometry.grid_mesh(resolution=(0, 4)), r"resolution\[0\] must be an integer >= 1"),
        (lambda: cr.geometry.grid_mesh(size=(1.0, np.nan)), r"size\[1\] must be finite"),
        (lambda: cr.geometry.grid_mesh(normal="w"), r"unknown normal axis 'w'"),
        (lambda: cr.geometry.torus_mesh(major_radius=0.2, minor_radius=0.3), r"minor_radius"),
        (lambda: cr.geometry.box_mesh(half_extents=(1, 0, 1)), r"half_extents\[1\] must be > 0"),
        (lambda: cr.geometry.cylinder_mesh(axis=(0, 0, 0)), r"axis must be a non-zero"),
    ],
)
def test_generators_reject_bad_parameters(call: object, match: str) -> None:
    """Generators raise InvalidInputError naming the bad parameter."""
    with pytest.raises(cr.InvalidInputError, match=match):
        call()  # type: ignore[operator]


def test_curves() -> None:
    """Curves validate offsets; generators give the asked-for strands."""
    pts = np.array([[0, 0, 0], [0, 1, 0], [1, 0, 0], [1, 1, 0], [1, 2, 0.0]])
    c = cr.geometry.Curves(pts, [0, 2, 5])
    assert c.num_strands == 2
    np.testing.assert_array_equal(c.segments, [[0, 1], [2, 3], [3, 4]])
    with pytest.raises(cr.InvalidInputError, match="strand"):
        cr.geometry.Curves(pts, [0, 1, 5])  # a strand with one point
    with pytest.raises(cr.InvalidInputError):
        cr.geometry.Curves(pts, [0, 2, 4])  # does not end at the number of points
    h = cr.geometry.helix_curves(count=(3, 2), radius=0.01, pitch=0.02, turns=4, points_per_turn=12)
    assert h.num_strands == 6
    seg = h.points[h.segments[:, 1]] - h.points[h.segments[:, 0]]
    assert (np.linalg.norm(seg, axis=1) > 0).all()
    s = cr.geometry.straight_curves([[0, 1, 0], [0.1, 1, 0]], direction=(0, -1, 0), length=0.5, segments=10)
    assert s.num_strands == 2 and len(s.points) == 22
    np.testing.assert_allclose(s.points[10], [0, 0.5, 0], atol=1e-12)


def test_sampling_inside_and_spaced() -> None:
    """Lattice and Poisson samples fill the region, stay inside, keep spacing."""
    box = cr.geometry.sample_box(lower=(0, 0, 0), upper=(0.2, 0.1, 0.1), spacing=0.01)
    assert len(box) == 20 * 10 * 10
    assert (box > 0).all() and (box < [0.2, 0.1, 0.1]).all()
    ball = cr.geometry.sample_sphere(center=(0.5, 0.5, 0.5), radius=0.1, spacing=0.01, method="poisson", seed=3)
    assert (np.linalg.norm(ball - 0.5, axis=1) <= 0.1 + 1e-12).all()
    d = np.linalg.norm(ball[:, None] - ball[None], axis=2) + np.eye(len(ball))
    assert d.min() >= 0.01 - 1e-12
    again = cr.geometry.sample_sphere(center=(0.5, 0.5, 0.5), radius=0.1, spacing=0.01, method="poisson", seed=3)
    np.testing.assert_array_equal(ball, again)
    mesh = cr.geometry.uv_sphere(center=(0, 0, 0), radius=0.1, n_lat=16, n_lon=32)
    inside = cr.geometry.sample_mesh(mesh, spacing=0.01)
    assert (np.linalg.norm(inside, axis=1) < 0.1).all()
    # lattice count ~ volume / spacing^3 (the faceted sphere is slightly smaller)
    assert 0.85 < len(inside) / (4 / 3 * np.pi * 0.1**3 / 0.01**3) < 1.05
    with pytest.raises(cr.MeshError, match="closed"):
        cr.geometry.sample_mesh(cr.geometry.grid_mesh(), spacing=0.1)
    with pytest.raises(cr.InvalidInputError, match="sampling method"):
        cr.geometry.sample_box(lower=(0, 0, 0), upper=(1, 1, 1), spacing=0.1, method="random")
    with pytest.raises(cr.InvalidInputError, match="upper"):
        cr.geometry.sample_box(lower=(0, 0, 0), upper=(1, -1, 1), spacing=0.1)
