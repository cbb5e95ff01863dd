"""Mesh files, frame sequences and checkpoints."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import crumple as cr


@pytest.mark.parametrize("ext", ["ply", "obj", "stl", "off"])
def test_mesh_roundtrip(tmp_path: Path, ext: str) -> None:
    """A saved mesh loads back with the same vertices (to float32 for STL) and faces."""
    m = cr.geometry.uv_sphere(radius=0.3, n_lat=8, n_lon=12)
    p = cr.io.save_mesh(tmp_path / f"s.{ext}", m)
    back = cr.io.load_mesh(p)
    if ext == "stl":  # STL stores triangle soup: compare the geometry, not the indexing
        np.testing.assert_allclose(back.vertices[back.faces], m.vertices[m.faces], atol=1e-6)
    else:
        np.testing.assert_allclose(back.vertices, m.vertices, atol=1e-6)
        np.testing.assert_array_equal(back.faces, m.faces)


def test_io_errors(tmp_path: Path) -> None:
    """Missing files, unknown formats and garbage raise typed errors."""
    with pytest.raises(cr.InvalidInputError, match="does not exist"):
        cr.io.load_mesh(tmp_path / "nope.obj")
    with pytest.raises(cr.InvalidInputError, match="unsupported mesh format"):
        cr.io.save_mesh(tmp_path / "a.xyz", cr.geometry.grid_mesh())
    bad = tmp_path / "bad.obj"
    bad.write_text("this is not a mesh\n")
    with pytest.raises(cr.MeshError):
        cr.io.load_mesh(bad)


def test_frame_writer(tmp_path: Path) -> None:
    """Frames are numbered files readable as meshes or point clouds."""
    w = cr.io.FrameWriter(tmp_path / "frames")
    g = cr.geometry.grid_mesh(resolution=(4, 4))
    for k in range(3):
        w.write(k, g.vertices + [0, 0.1 * k, 0], g.faces)
    assert [p.name for p in w.paths] == ["frame_00000.ply", "frame_00001.ply", "frame_00002.ply"]
    last = cr.io.load_mesh(w.paths[-1])
    np.testing.assert_allclose(last.vertices[:, 1], 0.2, atol=1e-6)
    pts = cr.io.FrameWriter(tmp_path / "pts", prefix="sand").write(0, np.random.default_rng(0).random((50, 3)))
    assert pts.name == "sand_00000.ply" and pts.stat().st_size > 50 * 12


def test_checkpoint_roundtrip_is_bit_exact(tmp_path: Path) -> None:
    """Checkpoint arrays come back bit for bit, with metadata."""
    rng = np.random.default_rng(1)
    arrays = {"x": rng.standard_normal((100, 3)).astype(np.float32), "step": np.array([42], dtype=np.int64)}
    p = cr.io.save_checkpoint(tmp_path / "c.npz", arrays, meta={"dt": 1e-3, "solver": "mpm"})
    back, meta = cr.io.load_checkpoint(p)
    assert back["x"].dtype == np.float32 and back["x"].tobytes() == arrays["x"].tobytes()
    assert meta == {"dt": 1e-3, "solver": "mpm"}
    np.savez(tmp_path / "other.npz", a=np.zeros(3))
    with pytest.raises(cr.InvalidInputError, match="not a crumple checkpoint"):
        cr.io.load_checkpoint(tmp_path / "other.npz")
