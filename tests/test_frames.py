"""The frame stream: crumple.frames parts, PLY and USD runs, and what reads them
(open_run, the viewer's screenshots, videos, the CLI)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import TypeVar

import numpy as np
import pytest

import crumple as cr
from crumple import io
from crumple.frames import Frame, FrameCollider, FrameCurves, FrameMesh, FramePoints, collider_part

T = TypeVar("T")
DT = 0.05  # s between synthetic frames
N_FRAMES = 4
GRID = 6  # vertices per side of the synthetic cloth


def _sheet(n: int = GRID) -> tuple[np.ndarray, np.ndarray]:
    """A flat ``n x n`` vertex sheet in the y = 0 plane, 0.8 m wide."""
    x, z = np.meshgrid(np.linspace(-0.4, 0.4, n), np.linspace(-0.4, 0.4, n))
    pos = np.stack([x.ravel(), np.zeros(n * n), z.ravel()], axis=1)
    faces = []
    for i in range(n - 1):
        for j in range(n - 1):
            a = i * n + j
            faces += [[a, a + n, a + 1], [a + 1, a + n, a + n + 1]]
    return pos, np.asarray(faces, dtype=np.int64)


def _frames(n: int = N_FRAMES) -> list[Frame]:
    """A small run: a sheet sagging as it falls (vertex and face data), sand
    grains (radii, a vector per point), two hair strands, a sphere collider
    moving with constant velocity and a static ground plane."""
    rest, faces = _sheet()
    rng = np.random.default_rng(7)
    grains = rng.uniform((0.2, 0.05, -0.1), (0.4, 0.25, 0.1), size=(30, 3))
    ball = cr.colliders.Sphere(center=(0.0, 0.15, 0.0), radius=0.15).set_velocity(linear=(0.4, 0.0, 0.0))
    ground = cr.colliders.Plane(point=(0, 0, 0), normal=(0, 1, 0))
    out = []
    for k in range(n):
        t = k * DT
        ball.advance_to(t)
        ground.advance_to(t)
        pos = rest + (0.0, 0.6 - 0.4 * t, 0.0)
        pos[:, 1] -= 2.0 * t * (pos[:, 0] ** 2 + pos[:, 2] ** 2)
        vel = np.tile((0.0, -0.4, 0.0), (len(pos), 1)) + k
        hair = np.concatenate([
            np.stack([np.full(5, -0.5), np.linspace(0.8, 0.5, 5), np.full(5, 0.1 * t)], axis=1),
            np.stack([np.full(3, -0.45), np.linspace(0.8, 0.6, 3), np.full(3, -0.1)], axis=1),
        ])
        out.append(Frame(
            time=t,
            objects={
                "cloth": FrameMesh(pos, faces, vertex_data={"sag": rest[:, 1] - pos[:, 1], "velocity": vel},
                                   face_data={"face_id": np.arange(len(faces), dtype=float) + k}),
                "sand": FramePoints(grains - (0, 0.5 * t, 0), np.linspace(0.005, 0.015, len(grains)) * (1 + k),
                                    point_data={"speed": np.full(len(grains), 0.5 * t)}),
                "hair": FrameCurves(hair, [0, 5, 8], np.full(8, 0.003)),
            },
            colliders={"ball": collider_part(ball), "ground": collider_part(ground, plane_half_size=1.0)},
            # Solver figures; frame 2 has none and frame 3 a new one (a reader
            # must not hold frame 1's figures over frame 2).
            stats={} if k == 2 else {"cg_iterations": 3 + k, "time_solve": 1e-3 / (k + 1), "qp_clarabel": k == 1,
                                     **({"hinge_slips": 7.0} if k == 3 else {})},
        ))
    return out


def _part(frame: Frame, name: str, kind: type[T]) -> T:
    """The object ``name`` of ``frame``, checked to be a ``kind``."""
    p = frame.objects[name]
    assert isinstance(p, kind), f"{name} is a {type(p).__name__}"
    return p


def _assert_same_frame(a: Frame, b: Frame, tol: float = 1e-6) -> None:
    assert b.time == pytest.approx(a.time, abs=1e-12)
    assert list(b.objects) == list(a.objects) and list(b.colliders) == list(a.colliders)
    for name, pa in a.objects.items():
        pb = b.objects[name]
        assert type(pb) is type(pa), name
        np.testing.assert_allclose(pb.positions, pa.positions, atol=tol, err_msg=name)
        if isinstance(pa, FrameMesh):
            assert isinstance(pb, FrameMesh)
            np.testing.assert_array_equal(pb.faces, pa.faces)
            pairs = [(pa.vertex_data, pb.vertex_data), (pa.face_data, pb.face_data)]
        else:
            assert isinstance(pb, (FramePoints, FrameCurves))
            np.testing.assert_allclose(pb.radii, pa.radii, rtol=1e-6, err_msg=name)
            pairs = [(pa.point_data, pb.point_data)]
            if isinstance(pa, FrameCurves):
                assert isinstance(pb, FrameCurves)
                np.testing.assert_array_equal(pb.offsets, pa.offsets)
        for da, db in pairs:
            assert sorted(db) == sorted(da), name
            for key in da:
                assert db[key].shape == da[key].shape
                np.testing.assert_allclose(db[key], da[key], atol=tol, err_msg=f"{name}.{key}")
    for name, ca in a.colliders.items():
        np.testing.assert_allclose(b.colliders[name].world_vertices(), ca.world_vertices(), atol=tol, err_msg=name)
    assert b.stats == a.stats  # doubles both ways: exact


# --- the data model -------------------------------------------------------------


def test_frame_parts_are_validated_read_only_copies() -> None:
    """Parts convert to the documented dtypes, copy their inputs and are
    read-only; a scalar radius is broadcast; names come out in insertion order."""
    pos, faces = _sheet(3)
    src = pos.copy()
    m = FrameMesh(src, faces.astype(np.int32), vertex_data={"a": np.arange(9)})
    src[0, 0] = 99.0
    assert m.positions[0, 0] != 99.0
    assert m.positions.dtype == np.float64 and m.faces.dtype == np.int64 and m.vertex_data["a"].dtype == np.float64
    with pytest.raises(ValueError):
        m.positions[0, 0] = 1.0
    p = FramePoints(pos, 0.01)
    np.testing.assert_array_equal(p.radii, np.full(9, 0.01))
    c = FrameCurves(pos, [0, 4, 9], 0.002)
    assert c.num_curves == 2 and c.segments.shape == (7, 2)
    col = FrameCollider(pos, faces, rotation=cr.colliders.rotation((0, 0, 1), 90), translation=(1, 2, 3))
    np.testing.assert_allclose(col.world_vertices()[1], col.rotation @ pos[1] + (1, 2, 3))
    np.testing.assert_allclose(col.matrix()[:3, 3], (1, 2, 3))
    f = Frame(time=0.5, objects={"z": p, "a": m, "c": c}, colliders={"ball": col},
              stats={"passes": np.int64(2), "time_vi": np.float32(0.25), "fallback": True})
    assert f.names == ["z", "a", "c", "ball"]
    assert f.stats == {"passes": 2.0, "time_vi": 0.25, "fallback": 1.0}
    assert all(type(v) is float for v in f.stats.values())
    assert Frame(time=0.5).stats == {}
    lo, hi = f.bounds(colliders=False)
    np.testing.assert_allclose(lo, pos.min(axis=0))
    np.testing.assert_allclose(hi, pos.max(axis=0))


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda p, f: FrameMesh(p[:, :2], f), r"shape \(N, 3\)"),
        (lambda p, f: FrameMesh(np.where(p == p[1, 0], np.nan, p), f), "finite"),
        (lambda p, f: FrameMesh(p, f + 1), "indexes outside"),
        (lambda p, f: FrameMesh(p, f.astype(float)), "integers"),
        (lambda p, f: FrameMesh(p, f, vertex_data={"a": np.zeros(3)}), r"one value per vertex"),
        (lambda p, f: FrameMesh(p, f, face_data={"a": np.zeros((len(f), 3))}), r"one value per face"),
        (lambda p, f: FrameMesh(p, f, vertex_data={"bad name": np.zeros(len(p))}), "not usable"),
        (lambda p, f: FramePoints(p, -0.1), ">= 0"),
        (lambda p, f: FramePoints(p, np.ones(2)), "one radius per point"),
        (lambda p, f: FrameCurves(p, [0, 4], 0.1), "start at 0 and end"),
        (lambda p, f: FrameCurves(p, [0, 1, 9], 0.1), "at least 2"),
        (lambda p, f: FrameCollider(p, f, rotation=2 * np.eye(3)), "proper rotation"),
        (lambda p, f: FrameCollider(p, f, translation=(1, 2)), "translation"),
        (lambda p, f: Frame(time=float("nan")), "finite"),
        (lambda p, f: Frame(time=0, objects={"a": FramePoints(p, 0.1)}, colliders={"a": FrameCollider(p, f)}),
         "unique"),
        (lambda p, f: Frame(time=0, objects={"1st": FramePoints(p, 0.1)}), "not usable"),
        (lambda p, f: Frame(time=0, objects={"ball": FrameCollider(p, f)}),  # type: ignore[dict-item]
         "Frame.colliders"),
        (lambda p, f: Frame(time=0, objects={"a": p}), "FrameMesh, FramePoints or FrameCurves"),
        (lambda p, f: Frame(time=0, stats={"time vi": 1.0}), "not usable"),
        (lambda p, f: Frame(time=0, stats={"passes": "2"}), r"stats\['passes'\] must be a number"),
        (lambda p, f: Frame(time=0, stats=[1.0]), "Frame.stats must be a dict"),  # type: ignore[arg-type]
    ],
)
def test_bad_parts_raise_invalid_input(build: object, match: str) -> None:
    """Wrong shapes, non-finite values, out-of-range indices, bad offsets,
    non-rotations, clashing or unusable names and wrong part types raise
    InvalidInputError (also a ValueError) saying what is wrong."""
    pos, faces = _sheet(3)
    with pytest.raises(cr.InvalidInputError, match=match):
        build(pos, faces)  # type: ignore[operator]


def _colliders() -> list[tuple[cr.colliders.Collider, float]]:
    """Every collider type, each with its size (m)."""
    box = cr.geometry.box_mesh(center=(0.3, 0.2, 0.1), half_extents=(0.2, 0.15, 0.1))
    return [
        (cr.colliders.Plane(point=(0.1, 0.2, -0.1), normal=(0.2, 1.0, 0.1)), 2.0),
        (cr.colliders.Sphere(center=(0.1, 0.5, -0.2), radius=0.3), 0.3),
        (cr.colliders.Box(center=(0.2, 0.1, 0.0), half_extents=(0.3, 0.1, 0.2),
                          rotation=cr.colliders.rotation((1, 1, 0), 30)), 0.3),
        (cr.colliders.Capsule(a=(0.0, 0.1, 0.0), b=(0.4, 0.5, 0.2), radius=0.1), 0.3),
        (cr.colliders.Cylinder(center=(0.0, 0.2, 0.1), axis=(1, 0.5, 0), radius=0.15, height=0.5), 0.25),
        (cr.colliders.MeshSDF(box, dx=0.02), 0.15),
    ]


def test_collider_part_lies_on_each_collider_surface() -> None:
    """The tessellated surface of every collider type, put into the world with
    the collider's pose, lies on the collider's zero level set (|d| < 1e-3 of
    its size), before and after the collider
    moved (set_velocity + advance_to)."""
    for col, size in _colliders():
        name = type(col).__name__
        tol = 1e-3 * size
        part = collider_part(col)
        assert len(part.faces) > 0
        d = col.signed_distance(part.world_vertices())
        assert np.abs(d).max() < tol, f"{name}: max |d| {np.abs(d).max():.2e} at rest"
        col.set_velocity(linear=(0.3, -0.1, 0.2), angular=(0.5, 1.0, -0.4))
        col.advance_to(0.7)
        moved = collider_part(col)
        assert not np.allclose(moved.rotation, np.eye(3)), name
        np.testing.assert_allclose(moved.vertices, part.vertices)  # the local shape is fixed
        d = col.signed_distance(moved.world_vertices())
        assert np.abs(d).max() < tol, f"{name}: max |d| {np.abs(d).max():.2e} after moving"
        # Faces wind outwards: their normals agree with the collider's.
        w = moved.world_vertices()
        tri = w[moved.faces]
        n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
        keep = np.linalg.norm(n, axis=1) > 1e-12
        centroids = tri.mean(axis=1)[keep]
        agree = np.einsum("ij,ij->i", n[keep], col.normal(centroids)) > 0
        assert agree.mean() > 0.95, f"{name}: only {agree.mean():.0%} of faces wind outwards"
    with pytest.raises(cr.InvalidInputError, match="Collider"):
        collider_part("sphere")


# --- PLY runs ---------------------------------------------------------------------


def test_ply_run_round_trip(tmp_path: Path) -> None:
    """PlyWriter writes one PLY per object and collider per frame and a
    manifest current after every frame (a crashed run opens); open_run reads
    every frame back: positions, faces, radii, offsets and per-element data
    (1e-6, PLY stores float32 positions), colliders in world space."""
    frames = _frames()
    out = tmp_path / "run"
    with io.PlyWriter(out, fps=20) as w:
        for k, f in enumerate(frames):
            assert w.write(f) == k
            # readable mid-run, as after a crash
            assert io.open_run(out).num_frames == k + 1
    files = sorted(p.name for p in out.glob("*.ply"))
    assert len(files) == 5 * N_FRAMES and "cloth_00003.ply" in files and "ground_00000.ply" in files
    m = json.loads((out / "manifest.json").read_text())
    assert m["format"] == "crumple-run" and m["version"] == 1 and m["fps"] == 20
    assert [e["index"] for e in m["frames"]] == list(range(N_FRAMES))
    assert m["objects"]["hair"]["offsets"] == [0, 5, 8] and m["objects"]["cloth"]["vertex_data"] == {
        "sag": 1, "velocity": 3}
    assert m["objects"]["sand"]["file"].format(frame=2) == "sand_00002.ply"
    # Other tools see the data as plain PLY properties.
    header = (out / "cloth_00001.ply").read_bytes().split(b"end_header")[0].decode()
    for prop in ("double sag", "double velocity_x", "double velocity_z", "double face_id"):
        assert prop in header
    assert "double radius" in (out / "sand_00000.ply").read_bytes().split(b"end_header")[0].decode()
    run = io.open_run(out)
    assert run.fps == 20 and run.num_frames == N_FRAMES == len(run)
    assert run.names == ["cloth", "sand", "hair", "ball", "ground"]
    assert run.kinds["hair"] == "curves" and run.kinds["ball"] == "collider"
    np.testing.assert_allclose(run.times, [k * DT for k in range(N_FRAMES)])
    for k, f in enumerate(frames):
        _assert_same_frame(f, run.frame(k))
    _assert_same_frame(frames[-1], run.frame(-1))
    assert len(list(run)) == N_FRAMES


def test_solver_figures_that_are_not_finite_survive_a_ply_run(tmp_path: Path) -> None:
    """A NaN or infinite figure in ``Frame.stats`` is written to the PLY
    manifest as null (JSON has no NaN) and read back as NaN."""
    f = Frame(time=0.0, stats={"residual": float("nan"), "gap": float("inf"), "passes": 2})
    with io.PlyWriter(tmp_path / "run") as w:
        w.write(f)
    m = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert m["frames"][0]["stats"] == {"residual": None, "gap": None, "passes": 2.0}
    back = io.open_run(tmp_path / "run").frame(0).stats
    assert np.isnan(back["residual"]) and np.isnan(back["gap"]) and back["passes"] == 2.0


def test_ply_writer_rejects_bad_use(tmp_path: Path) -> None:
    """Writing something that is not a Frame, changing a name's kind, data that
    would clash with a PLY property, and writing after close are clear errors."""
    f = _frames(1)[0]
    w = io.PlyWriter(tmp_path / "a")
    with pytest.raises(cr.InvalidInputError, match="Frame"):
        w.write({"cloth": 1})  # type: ignore[arg-type]
    w.write(f)
    pts = FramePoints(np.zeros((2, 3)), 0.1)
    with pytest.raises(cr.InvalidInputError, match="keeps its kind"):
        w.write(Frame(time=1.0, objects={"cloth": pts}))
    with pytest.raises(cr.InvalidInputError, match="taken"):
        w.write(Frame(time=1.0, objects={"p": FramePoints(np.zeros((2, 3)), 0.1, {"radius": np.ones(2)})}))
    w.close()
    with pytest.raises(cr.InvalidInputError, match="closed"):
        w.write(f)
    with pytest.raises(cr.InvalidInputError, match="fps"):
        io.PlyWriter(tmp_path / "b", fps=0)


def test_open_run_errors_name_the_fix(tmp_path: Path) -> None:
    """A folder without a manifest, a missing path, an unknown file type, a
    bad frame index and an unknown writer format raise InvalidInputError
    saying what to do."""
    (tmp_path / "frames").mkdir()
    (tmp_path / "frames" / "cloth_00000.ply").write_text("ply")
    with pytest.raises(cr.InvalidInputError, match=r"no manifest.json.*PlyWriter.*\.usd"):
        io.open_run(tmp_path / "frames")
    with pytest.raises(cr.InvalidInputError, match="does not exist"):
        io.open_run(tmp_path / "nowhere")
    (tmp_path / "x.obj").write_text("")
    with pytest.raises(cr.InvalidInputError, match="run folder"):
        io.open_run(tmp_path / "x.obj")
    with io.PlyWriter(tmp_path / "run") as w:
        w.write(_frames(1)[0])
    run = io.open_run(tmp_path / "run" / "manifest.json")
    with pytest.raises(cr.InvalidInputError, match=r"has 1 frames \(0..0\)"):
        run.frame(1)
    with pytest.raises(cr.InvalidInputError, match="unknown run format"):
        io.writer("obj", tmp_path / "o")
    (tmp_path / "other.usda").write_text("#usda 1.0\n")
    pytest.importorskip("pxr")
    with pytest.raises(cr.InvalidInputError, match="not written by crumple"):
        io.open_run(tmp_path / "other.usda")


# --- USD runs ---------------------------------------------------------------------


def _write_usd(path: Path, frames: list[Frame], fps: float = 24) -> Path:
    with io.UsdWriter(path, fps=fps) as w:
        for k, f in enumerate(frames):
            assert w.write(f) == k
    return path


@pytest.mark.parametrize("ext", [".usdc", ".usda"])
def test_usd_run_round_trip(tmp_path: Path, ext: str) -> None:
    """UsdWriter → open_run gives back every frame (time, positions, faces,
    radii, offsets, per-element data, collider poses) to 1e-6."""
    pytest.importorskip("pxr")
    frames = _frames()
    path = _write_usd(tmp_path / f"run{ext}", frames, fps=30)
    run = io.open_run(path)
    assert run.fps == 30 and run.num_frames == N_FRAMES
    assert run.names == ["cloth", "sand", "hair", "ball", "ground"]
    for k, f in enumerate(frames):
        _assert_same_frame(f, run.frame(k))
    if ext == ".usda":
        assert path.read_text().startswith("#usda")


def test_usd_stage_as_other_tools_see_it(tmp_path: Path) -> None:
    """Read with raw pxr: stage metadata (metersPerUnit 1, upAxis Y, time codes
    per second = frames per second = fps, start 0, end = last frame), points
    at several time codes equal the written arrays, widths = 2 x radii,
    topology and collider local points written once (no time samples), the
    collider transform and primvars time-sampled, frame times in crumple:time."""
    pytest.importorskip("pxr")
    from pxr import Usd, UsdGeom

    frames = _frames()
    path = _write_usd(tmp_path / "run.usdc", frames, fps=24)
    stage = Usd.Stage.Open(str(path))
    assert UsdGeom.GetStageMetersPerUnit(stage) == 1.0
    assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.y
    assert stage.GetTimeCodesPerSecond() == 24 and stage.GetFramesPerSecond() == 24
    assert stage.GetStartTimeCode() == 0 and stage.GetEndTimeCode() == N_FRAMES - 1
    assert stage.GetDefaultPrim().GetPath() == "/World"

    cloth = UsdGeom.Mesh(stage.GetPrimAtPath("/World/cloth"))
    for attr in (cloth.GetFaceVertexCountsAttr(), cloth.GetFaceVertexIndicesAttr()):
        assert attr.HasAuthoredValue() and attr.GetNumTimeSamples() == 0
    np.testing.assert_array_equal(np.asarray(cloth.GetFaceVertexIndicesAttr().Get()).reshape(-1, 3),
                                  _part(frames[0], "cloth", FrameMesh).faces)
    assert cloth.GetPointsAttr().GetTimeSamples() == list(range(N_FRAMES))
    for k in (0, 2, 3):
        f = frames[k]
        fc, fs = _part(f, "cloth", FrameMesh), _part(f, "sand", FramePoints)
        np.testing.assert_allclose(np.asarray(cloth.GetPointsAttr().Get(k)), fc.positions, atol=1e-6)
        pv = UsdGeom.PrimvarsAPI(cloth.GetPrim())
        sag = pv.GetPrimvar("sag")
        assert sag.GetInterpolation() == UsdGeom.Tokens.vertex
        np.testing.assert_allclose(np.asarray(sag.Get(k)), fc.vertex_data["sag"], atol=1e-6)
        face_id = pv.GetPrimvar("face_id")
        assert face_id.GetInterpolation() == UsdGeom.Tokens.uniform
        np.testing.assert_allclose(np.asarray(face_id.Get(k)), fc.face_data["face_id"])
        sand = UsdGeom.Points(stage.GetPrimAtPath("/World/sand"))
        np.testing.assert_allclose(np.asarray(sand.GetPointsAttr().Get(k)), fs.positions, atol=1e-6)
        np.testing.assert_allclose(np.asarray(sand.GetWidthsAttr().Get(k)), 2 * fs.radii, rtol=1e-6)
        assert stage.GetPrimAtPath("/World").GetAttribute("crumple:time").Get(k) == f.time

    hair = UsdGeom.BasisCurves(stage.GetPrimAtPath("/World/hair"))
    assert hair.GetTypeAttr().Get() == UsdGeom.Tokens.linear
    assert list(hair.GetCurveVertexCountsAttr().Get()) == [5, 3]
    assert hair.GetCurveVertexCountsAttr().GetNumTimeSamples() == 0
    np.testing.assert_allclose(np.asarray(hair.GetWidthsAttr().Get(1)), 0.006, rtol=1e-6)

    ball_prim = stage.GetPrimAtPath("/World/ball")
    surface = UsdGeom.Mesh(stage.GetPrimAtPath("/World/ball/surface"))
    assert surface.GetPointsAttr().GetNumTimeSamples() == 0
    np.testing.assert_allclose(np.asarray(surface.GetPointsAttr().Get()), frames[0].colliders["ball"].vertices,
                               atol=1e-6)
    xf = UsdGeom.Xformable(ball_prim)
    assert xf.GetXformOpOrderAttr().Get() == ["xformOp:transform"]
    cache = UsdGeom.XformCache()
    for k in (0, 3):
        cache.SetTime(k)
        m = np.array(cache.GetLocalToWorldTransform(surface.GetPrim()))
        world = np.c_[frames[k].colliders["ball"].vertices, np.ones(len(surface.GetPointsAttr().Get()))] @ m
        np.testing.assert_allclose(world[:, :3], frames[k].colliders["ball"].world_vertices(), atol=1e-6)
    assert ball_prim.GetCustomDataByKey("crumple:kind") == "collider"


def test_usd_changes_over_time(tmp_path: Path) -> None:
    """Topology that changes mid-run becomes time-sampled (old faces before the
    change, new after); an object that appears late is invisible before it
    appears and absent from the frames read back; a vanished one likewise."""
    pytest.importorskip("pxr")
    from pxr import Usd, UsdGeom

    pos, faces = _sheet(3)
    pts = FramePoints(np.zeros((2, 3)), 0.1)
    frames = [
        Frame(time=0.0, objects={"cloth": FrameMesh(pos, faces)}),
        Frame(time=0.1, objects={"cloth": FrameMesh(pos, faces)}),
        Frame(time=0.2, objects={"cloth": FrameMesh(pos, faces[:-2]), "late": pts}),
        Frame(time=0.3, objects={"late": pts}),
    ]
    path = _write_usd(tmp_path / "change.usda", frames)
    stage = Usd.Stage.Open(str(path))
    idx = UsdGeom.Mesh(stage.GetPrimAtPath("/World/cloth")).GetFaceVertexIndicesAttr()
    assert len(idx.Get(0)) == len(idx.Get(1)) == 3 * len(faces)
    assert len(idx.Get(2)) == 3 * (len(faces) - 2)
    late = UsdGeom.Imageable(stage.GetPrimAtPath("/World/late"))
    assert late.ComputeVisibility(0) == UsdGeom.Tokens.invisible
    assert late.ComputeVisibility(2) == UsdGeom.Tokens.inherited
    run = io.open_run(path)
    assert [sorted(run.frame(k).objects) for k in range(4)] == [["cloth"], ["cloth"], ["cloth", "late"], ["late"]]
    assert len(_part(run.frame(2), "cloth", FrameMesh).faces) == len(faces) - 2


def test_usd_holds_a_collider_shape_until_it_changes(tmp_path: Path) -> None:
    """A collider drawn in world coordinates with no pose (eol's wires and
    points) that rests for frames 0-3 and moves at frame 4 reads back at
    rest at frames 1-3: the first value is sampled again at the last frame
    that had it, so USD's linear interpolation between samples does not
    blend the resting frames towards the new place."""
    pytest.importorskip("pxr")
    still = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    faces = np.array([[0, 1, 2]])
    pos, cloth_faces = _sheet(3)
    frames = [Frame(time=0.1 * k, objects={"cloth": FrameMesh(pos, cloth_faces)},
                    colliders={"wire0": FrameCollider(still + (0.0, -0.2 * max(k - 3, 0), 0.0), faces)})
              for k in range(6)]
    run = io.open_run(_write_usd(tmp_path / "wire.usdc", frames))
    for k in range(6):
        np.testing.assert_allclose(run.frame(k).colliders["wire0"].world_vertices(),
                                   frames[k].colliders["wire0"].world_vertices(), atol=1e-6)


def test_writer_factory(tmp_path: Path) -> None:
    """writer("ply", dir) is a PlyWriter into dir; writer("usd", dir, name) a
    UsdWriter writing dir/name.usdc; both read back with open_run."""
    pytest.importorskip("pxr")
    f = _frames(2)
    with io.writer("ply", tmp_path / "p", "demo", fps=12) as w:
        assert isinstance(w, io.PlyWriter)
        for x in f:
            w.write(x)
    with io.writer("usd", tmp_path / "u", "demo", fps=12) as w:
        assert isinstance(w, io.UsdWriter)
        for x in f:
            w.write(x)
    assert (tmp_path / "u" / "demo.usdc").is_file()
    for p in (tmp_path / "p", tmp_path / "u" / "demo.usdc"):
        run = io.open_run(p)
        assert run.fps == 12 and run.num_frames == 2
        _assert_same_frame(f[1], run.frame(1))
    with pytest.raises(cr.InvalidInputError, match=r"\.usd"):
        io.UsdWriter(tmp_path / "x.abc")


# --- pictures and videos ----------------------------------------------------------


@pytest.fixture(scope="module")
def ply_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synthetic run written once as PLY for the rendering tests."""
    out = tmp_path_factory.mktemp("render") / "run"
    with io.PlyWriter(out, fps=10) as w:
        for f in _frames():
            w.write(f)
    return out


def _pixels(path: Path) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(path).convert("RGB")).astype(int)


def test_screenshot_run_shows_the_asked_frame(ply_run: Path, tmp_path: Path) -> None:
    """screenshot_run of frames 0 and 3 writes PNGs of the asked size with
    much drawn on them, and the two pictures differ (the sheet fell and bent,
    the ball moved)."""
    pytest.importorskip("polyscope")
    pytest.importorskip("PIL")
    import crumple.viz as viz

    a = _pixels(viz.screenshot_run(ply_run, tmp_path / "a.png", frame=0, size=(320, 240)))
    b = _pixels(viz.screenshot_run(io.open_run(ply_run), tmp_path / "b.png", frame=3, size=(320, 240)))
    assert a.shape == b.shape == (240, 320, 3)
    for img in (a, b):
        drawn = np.abs(img - img[0, 0]).sum(axis=2) > 30
        assert drawn.mean() > 0.05, f"only {drawn.mean():.2%} of the picture is drawn"
    changed = np.abs(a - b).sum(axis=2) > 30
    assert changed.mean() > 0.01, f"frames 0 and 3 differ in only {changed.mean():.2%} of pixels"
    with pytest.raises(cr.InvalidInputError, match="png"):
        viz.screenshot_run(ply_run, tmp_path / "a.jpg")
    with pytest.raises(cr.InvalidInputError, match="does not exist"):
        viz.screenshot_run(ply_run, tmp_path / "c.png", frame=N_FRAMES)


def test_viewer_timeline_steps_and_plays(ply_run: Path) -> None:
    """The viewer's timeline panel runs inside polyscope's frame loop (drawn
    headless here); stepping clamps to the run, play from the last frame
    starts over and advances in real time at the run's fps, and without loop
    playback stops at the last frame."""
    pytest.importorskip("polyscope")
    import time

    import crumple.viz as viz

    ps = viz.window._polyscope(headless=True)
    scene = viz.runs._RunScene(ps, io.open_run(ply_run), None)
    tl = viz.runs._Timeline(scene, N_FRAMES - 1)
    ps.set_user_callback(tl)
    try:
        ps.frame_tick()  # draws the ImGui panel
        assert tl.k == N_FRAMES - 1 and not tl.playing
        tl.goto(N_FRAMES + 5)
        assert tl.k == N_FRAMES - 1
        tl.goto(1)
        assert tl.k == 1 and tl.time == pytest.approx(DT)
        tl.goto(N_FRAMES - 1)
        tl.loop = False
        tl.toggle()
        assert tl.playing and tl.k == 0
        time.sleep(2.5 / 10)  # the run is at 10 fps
        ps.frame_tick()
        assert 2 <= tl.k <= N_FRAMES - 1
        time.sleep(N_FRAMES / 10)
        ps.frame_tick()
        assert tl.k == N_FRAMES - 1 and not tl.playing
        assert set(scene.shown) == {"cloth", "sand", "hair", "ball", "ground"}
    finally:
        ps.clear_user_callback()


def test_render_video_mp4_and_gif(ply_run: Path, tmp_path: Path) -> None:
    """render_video writes an mp4 (even size, one video frame per run frame,
    read back by imageio) and a gif with one image per run frame; a wrong
    extension is a clear error."""
    pytest.importorskip("polyscope")
    iio = pytest.importorskip("imageio.v2")
    pytest.importorskip("imageio_ffmpeg")
    from PIL import Image

    import crumple.viz as viz

    mp4 = viz.render_video(ply_run, tmp_path / "movie.mp4", size=(241, 161), progress=False)
    reader = iio.get_reader(str(mp4))
    try:
        assert reader.count_frames() == N_FRAMES
        assert reader.get_meta_data()["size"] == (240, 160)
        assert reader.get_meta_data()["fps"] == pytest.approx(10)
        first = np.asarray(reader.get_data(0)).astype(int)
        last = np.asarray(reader.get_data(N_FRAMES - 1)).astype(int)
    finally:
        reader.close()
    assert np.abs(first - last).sum(axis=2).max() > 100  # the picture moves
    gif = viz.render_video(ply_run, tmp_path / "movie.gif", size=(120, 90), fps=5, progress=False)
    with Image.open(gif) as im:
        assert im.n_frames == N_FRAMES and im.size == (120, 90)
        assert im.info["duration"] == 200
    with pytest.raises(cr.InvalidInputError, match=r"\.mp4 or \.gif"):
        viz.render_video(ply_run, tmp_path / "movie.avi")


# --- command line -----------------------------------------------------------------


def test_python_m_crumple_is_the_cli() -> None:
    """`python -m crumple --help` lists the subcommands, view and render
    included, like the `crumple` script."""
    r = subprocess.run([sys.executable, "-m", "crumple", "--help"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    for cmd in ("info", "run", "view", "render", "demo"):
        assert cmd in r.stdout
    r = subprocess.run([sys.executable, "-m", "crumple", "view", "--help"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "--frame" in r.stdout and "--screenshot" in r.stdout


def test_cli_view_and_render(ply_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`crumple view DIR --screenshot x.png --frame 1` writes that frame's
    picture (different from the default, the last frame); `crumple render`
    writes a gif; a folder without a manifest exits 2 with the fix."""
    pytest.importorskip("polyscope")
    from crumple.cli import main

    assert main(["view", str(ply_run), "--screenshot", str(tmp_path / "x.png"), "--frame", "1"]) == 0
    assert str(tmp_path / "x.png") in capsys.readouterr().out
    assert main(["view", str(ply_run), "--screenshot", str(tmp_path / "last.png")]) == 0
    assert np.abs(_pixels(tmp_path / "x.png") - _pixels(tmp_path / "last.png")).sum() > 0
    assert main(["render", str(ply_run), "--out", str(tmp_path / "m.gif")]) == 0
    assert (tmp_path / "m.gif").stat().st_size > 1000
    assert f"({N_FRAMES} frames)" in capsys.readouterr().out
    (tmp_path / "empty").mkdir()
    assert main(["view", str(tmp_path / "empty"), "--screenshot", str(tmp_path / "y.png")]) == 2
    assert "no manifest.json" in capsys.readouterr().err


# --- no display -------------------------------------------------------------------


def test_private_runtime_dir_when_none_is_set(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Without a usable XDG_RUNTIME_DIR, crumple sets a private 0700 folder of
    this user's (a valid one is left alone), and `crumple info` then prints no
    XDG_RUNTIME_DIR complaint."""
    if os.name != "posix" or sys.platform == "darwin":
        pytest.skip("XDG_RUNTIME_DIR matters on Linux only")
    from crumple.backend import _ensure_runtime_dir

    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    _ensure_runtime_dir()
    assert os.environ["XDG_RUNTIME_DIR"] == str(tmp_path)
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    _ensure_runtime_dir()
    d = Path(os.environ["XDG_RUNTIME_DIR"])
    st = d.stat()
    assert d.is_dir() and st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) == 0o700
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "DISPLAY", "WAYLAND_DISPLAY")}
    r = subprocess.run([sys.executable, "-m", "crumple", "info"], capture_output=True, text=True, timeout=120,
                       env=env)
    assert r.returncode == 0, r.stderr
    assert "XDG_RUNTIME_DIR" not in r.stdout + r.stderr
    # The complaint comes from libwayland-client looking for a display (Mesa's
    # Vulkan and EGL drivers load it): after the GPU probe it looks quietly.
    import ctypes.util

    if ctypes.util.find_library("wayland-client") is None:
        return
    code = ("import ctypes, ctypes.util, crumple.backend as b; b._probe(); "
            "wl = ctypes.CDLL(ctypes.util.find_library('wayland-client')); "
            "wl.wl_display_connect.restype = ctypes.c_void_p; print(wl.wl_display_connect(None))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0 and r.stdout.strip() == "None", r.stderr
    assert "XDG_RUNTIME_DIR" not in r.stderr
