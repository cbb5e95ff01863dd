"""Headless pictures through polyscope's EGL backend."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import crumple as cr


def test_screenshot_is_not_blank(tmp_path: Path) -> None:
    """A rendered scene PNG has the asked size and many non-background pixels
    of each registered colour family."""
    pytest.importorskip("polyscope")
    Image = pytest.importorskip("PIL.Image")
    import crumple.viz as viz

    g = cr.geometry.grid_mesh(size=(1, 1), resolution=(8, 8), center=(0, 0.5, 0))
    s = cr.geometry.uv_sphere(radius=0.3)
    pts = cr.geometry.sample_sphere(center=(0.6, 0.3, 0), radius=0.1, spacing=0.03)
    p = viz.screenshot({"cloth": g, "ball": s, "sand": pts}, tmp_path / "shot.png", size=(320, 240))
    img = np.asarray(Image.open(p).convert("RGB")).astype(int)
    assert img.shape == (240, 320, 3)
    background = img[0, 0]
    differs = np.abs(img - background).sum(axis=2) > 30
    assert differs.mean() > 0.05, f"only {differs.mean():.3%} of pixels differ from the background"
    # more than a couple of colours: shading of three objects
    assert len(np.unique(img.reshape(-1, 3) // 16, axis=0)) > 10


def test_screenshot_rejects_bad_arguments(tmp_path: Path) -> None:
    """Wrong extension, nothing to draw, or bad arrays raise InvalidInputError."""
    pytest.importorskip("polyscope")
    import crumple.viz as viz

    with pytest.raises(cr.InvalidInputError, match="png"):
        viz.screenshot([np.zeros((3, 3))], tmp_path / "a.jpg")
    with pytest.raises(cr.InvalidInputError, match="nothing to show"):
        viz.screenshot([], tmp_path / "a.png")
    with pytest.raises(cr.InvalidInputError, match=r"shape \(N, 3\)"):
        viz.screenshot([np.zeros((3, 2))], tmp_path / "a.png")


def test_screenshot_colours_a_mesh_by_vertex_values(tmp_path: Path) -> None:
    """``scalars`` colours a mesh by one value per vertex (the cloth scenes'
    wrinkle maps); a wrong length or a non-mesh item is a clear error."""
    pytest.importorskip("polyscope")
    Image = pytest.importorskip("PIL.Image")
    import crumple.viz as viz

    g = cr.geometry.grid_mesh(size=(1, 1), resolution=(8, 8), center=(0, 0.5, 0))
    values = g.vertices[:, 0]
    p = viz.screenshot({"sheet": g}, tmp_path / "map.png", scalars={"sheet": values}, size=(200, 120))
    px = np.asarray(Image.open(p).convert("RGB")).reshape(-1, 3).astype(int)
    # viridis runs from purple to yellow (lit, so lighter): both ends appear.
    assert ((px[:, 1] < 120) & (px[:, 2] > 140)).sum() > 50
    assert ((px[:, 0] > 200) & (px[:, 1] > 200) & (px[:, 2] < 130)).sum() > 50
    with pytest.raises(cr.InvalidInputError, match="one finite value per vertex"):
        viz.screenshot({"sheet": g}, tmp_path / "b.png", scalars={"sheet": values[:-1]})
    with pytest.raises(cr.InvalidInputError, match="meshes only"):
        viz.screenshot({"pts": np.zeros((4, 3))}, tmp_path / "c.png", scalars={"pts": np.zeros(4)})


def test_crease_split_keeps_a_fold_sharp_and_leaves_smooth_parts_alone() -> None:
    """Drawing only: two triangles folded by 90° along their shared edge
    get one copy of each edge vertex per side (4 → 6 vertices, the faces
    no longer share a vertex), each copy mapped to its original; folded by
    20° (under the 50° crease angle) or flat, the mesh is unchanged; a
    box's 8 corners become 24 (one per face plane) and each of its faces
    keeps its two triangles joined."""
    from crumple.viz.window import crease_split

    def folded(deg: float) -> tuple[np.ndarray, np.ndarray]:
        a = np.radians(deg)
        v = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.5], [-np.cos(a), np.sin(a), 0.5]])
        return v, np.array([[0, 1, 2], [1, 0, 3]])

    v, f = folded(90.0)
    v2, f2, src = crease_split(v, f)
    assert len(v2) == 6 and not set(f2[0]) & set(f2[1]), f2
    np.testing.assert_array_equal(v2, v[src])
    for deg in (0.0, 20.0):
        v, f = folded(deg)
        v2, f2, src = crease_split(v, f)
        np.testing.assert_array_equal(f2, f)
        np.testing.assert_array_equal(src, np.arange(4))
    import trimesh

    box = trimesh.creation.box()
    v2, f2, src = crease_split(box.vertices, box.faces)
    assert len(v2) == 24
    np.testing.assert_array_equal(v2, box.vertices[src])
    shared = [len(set(f2[a]) & set(f2[b])) for a in range(12) for b in range(a + 1, 12)
              if np.allclose(box.face_normals[a], box.face_normals[b])]
    assert shared == [2] * 6, shared


def test_run_pictures_draw_colliders_inset_under_resting_cloth() -> None:
    """A collider in a run's picture is drawn 3 mm inside its surface (at
    most 0.2 % of its size), whichever way its faces are wound, so cloth
    lying on it is not lost to depth fighting."""
    import trimesh

    from crumple.viz.runs import _inset

    box = trimesh.creation.box(extents=(2.0, 1.0, 2.0))
    for faces in (box.faces, box.faces[:, ::-1]):
        v = _inset(box.vertices, faces)
        np.testing.assert_allclose(np.linalg.norm(v - box.vertices, axis=1), 3e-3, rtol=1e-12)
        assert np.all(np.abs(v) < np.abs(box.vertices))
    small = trimesh.creation.box(extents=(0.1, 0.1, 0.1))
    np.testing.assert_allclose(np.linalg.norm(_inset(small.vertices, small.faces) - small.vertices, axis=1),
                               2e-3 * np.sqrt(3) * 0.1, rtol=1e-12)
