"""Colliders through the Python API: distances, normals, motion, response."""

from __future__ import annotations

import numpy as np
import pytest

import crumple as cr
from crumple import colliders as co


def _pts(n: int = 200, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.5, 1.5, (n, 3))


def _fd_normal(c: co.Collider, p: np.ndarray, h: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(p)
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        g[:, k] = (c.signed_distance(p + e) - c.signed_distance(p - e)) / (2 * h)
    return g


def test_analytic_distances() -> None:
    """Plane, sphere, box, capsule and cylinder match closed forms."""
    p = _pts()
    pl = co.Plane(point=(0, 0.2, 0), normal=(0, 2, 0))
    np.testing.assert_allclose(pl.signed_distance(p), p[:, 1] - 0.2, atol=1e-12)
    sp = co.Sphere(center=(0.1, 0.2, 0.3), radius=0.5)
    np.testing.assert_allclose(sp.signed_distance(p), np.linalg.norm(p - [0.1, 0.2, 0.3], axis=1) - 0.5, atol=1e-12)
    bx = co.Box(center=(0, 0, 0), half_extents=(0.5, 0.3, 0.2))
    q = np.abs(p) - [0.5, 0.3, 0.2]
    box_d = np.linalg.norm(np.maximum(q, 0), axis=1) + np.minimum(q.max(axis=1), 0)
    np.testing.assert_allclose(bx.signed_distance(p), box_d, atol=1e-12)
    cap = co.Capsule(a=(0, -0.4, 0), b=(0, 0.4, 0), radius=0.2)
    y = np.clip(p[:, 1], -0.4, 0.4)
    np.testing.assert_allclose(cap.signed_distance(p), np.linalg.norm(p - np.c_[0 * y, y, 0 * y], axis=1) - 0.2,
                               atol=1e-12)
    cy = co.Cylinder(center=(0, 0, 0), axis=(0, 1, 0), radius=0.4, height=0.6)
    dr, dy = np.hypot(p[:, 0], p[:, 2]) - 0.4, np.abs(p[:, 1]) - 0.3
    cyl_d = np.minimum(np.maximum(dr, dy), 0) + np.hypot(np.maximum(dr, 0), np.maximum(dy, 0))
    np.testing.assert_allclose(cy.signed_distance(p), cyl_d, atol=1e-12)


def test_rotated_box_and_normals_match_finite_differences() -> None:
    """Normals are unit and equal the SDF gradient (away from kinks)."""
    r = co.rotation((1, 1, 0), 30)
    shapes = [co.Sphere(radius=0.5), co.Box(half_extents=(0.5, 0.3, 0.2), rotation=r),
              co.Capsule(a=(-0.3, 0, 0), b=(0.3, 0.2, 0.1), radius=0.2),
              co.Cylinder(axis=(1, 1, 1), radius=0.3, height=0.8)]
    p = _pts(300, 1)
    for c in shapes:
        n = c.normal(p)
        np.testing.assert_allclose(np.linalg.norm(n, axis=1), 1.0, atol=1e-9)
        fd = _fd_normal(c, p)
        ok = np.abs(np.linalg.norm(fd, axis=1) - 1) < 1e-4  # not on a kink of the SDF
        assert ok.mean() > 0.8
        np.testing.assert_allclose(n[ok], fd[ok], atol=1e-4)
    # the rotated box equals the axis-aligned box of rotated points
    rb = co.Box(half_extents=(0.5, 0.3, 0.2), rotation=r)
    ab = co.Box(half_extents=(0.5, 0.3, 0.2))
    np.testing.assert_allclose(rb.signed_distance(p), ab.signed_distance(p @ r), atol=1e-12)


def test_mesh_sdf_matches_analytic_sphere() -> None:
    """The signed-distance grid of a sphere mesh is within dx of the true SDF."""
    mesh = cr.geometry.uv_sphere(radius=0.4, n_lat=32, n_lon=64)
    dx = 0.02
    sdf = co.MeshSDF(mesh, dx=dx, padding=3)
    p = np.random.default_rng(2).uniform(-0.45, 0.45, (500, 3))
    err = np.abs(sdf.signed_distance(p) - (np.linalg.norm(p, axis=1) - 0.4))
    assert err.max() < dx, err.max()
    with pytest.raises(cr.MeshError, match="2 faces|closed"):
        co.MeshSDF(cr.geometry.grid_mesh(), dx=0.1)


def test_motion_constant_keyframes_callback() -> None:
    """Constant motion moves and spins; keyframes interpolate; callbacks set poses."""
    s = co.Sphere(center=(0, 0, 0), radius=0.1).set_velocity(linear=(1, 0, 0), angular=(0, 0, 2))
    s.advance_to(0.5)
    np.testing.assert_allclose(s.translation, [0.5, 0, 0], atol=1e-12)
    # surface velocity v + w x (x - c)
    v = s.velocity(np.array([[0.5, 0.1, 0.0]]))
    np.testing.assert_allclose(v[0], [1 - 0.2, 0, 0], atol=1e-12)
    b = co.Box(half_extents=(0.1, 0.1, 0.1)).set_keyframes([0, 1, 2], [[0, 0, 0], [1, 0, 0], [1, 1, 0]],
                                                          [np.eye(3), co.rotation((0, 1, 0), 90), np.eye(3)])
    b.advance_to(0.5)
    np.testing.assert_allclose(b.translation, [0.5, 0, 0], atol=1e-12)
    np.testing.assert_allclose(b.rotation, co.rotation((0, 1, 0), 45), atol=1e-9)
    b.advance_to(5.0)
    np.testing.assert_allclose(b.translation, [1, 1, 0], atol=1e-12)
    c = co.Sphere(radius=0.1).set_callback(lambda t: {"translation": (0, t, 0), "linear_velocity": (0, 1, 0)})
    c.advance_to(0.25)
    np.testing.assert_allclose(c.translation, [0, 0.25, 0])
    np.testing.assert_allclose(c.velocity(np.zeros((1, 3)))[0], [0, 1, 0])
    with pytest.raises(cr.InvalidInputError, match="unknown keys"):
        co.Sphere(radius=0.1).set_callback(lambda t: {"position": (0, 0, 0)}).advance_to(0.1)
    with pytest.raises(cr.InvalidInputError):
        co.Box().set_keyframes([0, 0], [[0, 0, 0], [1, 0, 0]])  # times not increasing


def test_boundary_response_modes() -> None:
    """sticky -> collider velocity; slip removes approach only; separate obeys Coulomb."""
    rng = np.random.default_rng(3)
    v = rng.standard_normal((100, 3))
    vco = rng.standard_normal((100, 3)) * 0.1
    n = np.tile([0.0, 1.0, 0.0], (100, 1))
    np.testing.assert_allclose(co.boundary_response(v, vco, n, mode="sticky"), vco)
    out = co.boundary_response(v, vco, n, mode="slip")
    rel, rel_out = v - vco, out - vco
    assert (rel_out[:, 1] >= -1e-12).all()
    leaving = rel[:, 1] >= 0
    np.testing.assert_allclose(out[leaving], v[leaving])
    np.testing.assert_allclose(rel_out[~leaving][:, [0, 2]], rel[~leaving][:, [0, 2]])
    mu = 0.5
    out = co.boundary_response(v, vco, n, mode="separate", friction=mu)
    rel_out = out - vco
    vt = np.linalg.norm(rel[:, [0, 2]], axis=1)
    expect = np.where(leaving, vt, np.maximum(0, vt + mu * np.minimum(rel[:, 1], 0)))
    np.testing.assert_allclose(np.linalg.norm(rel_out[:, [0, 2]], axis=1), expect, atol=1e-12)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: co.Sphere(radius=-1), r"radius must be > 0"),
        (lambda: co.Sphere(radius=0.1, mode="bouncy"), r"unknown boundary mode 'bouncy'"),
        (lambda: co.Sphere(radius=0.1, friction=-0.1), r"friction must be >= 0"),
        (lambda: co.Plane(normal=(0, 0, 0)), r"normal"),
        (lambda: co.Box(half_extents=(1, -1, 1)), r"half_extents\[1\]"),
        (lambda: co.Box(rotation=np.ones((3, 3))), r"proper rotation"),
        (lambda: co.Capsule(a=(0, 0, 0), b=(0, 0, 0), radius=0.1), r"must differ"),
        (lambda: co.Sphere(center=(np.nan, 0, 0)), r"center must be finite"),
        (lambda: co.MeshSDF(cr.geometry.uv_sphere(), dx=0), r"dx must be > 0"),
    ],
)
def test_colliders_reject_bad_input(make: object, match: str) -> None:
    """Bad collider parameters raise InvalidInputError naming the parameter."""
    with pytest.raises(cr.InvalidInputError, match=match):
        make()  # type: ignore[operator]


def test_queries_reject_bad_points() -> None:
    """Queries check their point arrays."""
    s = co.Sphere(radius=0.1)
    with pytest.raises(cr.InvalidInputError, match=r"shape \(N, 3\)"):
        s.signed_distance(np.zeros((4, 2)))
    with pytest.raises(cr.InvalidInputError, match="non-finite"):
        s.normal(np.array([[np.nan, 0, 0]]))
