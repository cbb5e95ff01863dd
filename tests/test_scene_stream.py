"""Scenes write through the frame stream: `crumple run SCENE --format usd`
gives one .usdc whose time-sampled points are the PLY frames of the same run;
`crumple render` makes a movie of it and `crumple view --screenshot --frame K`
shows frame K; cloth scenes honour --frames and refuse --backend gpu."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trimesh
from PIL import Image

import crumple as cr
from crumple.cli import main

FRAMES = 6


def _ply_points(path: Path) -> np.ndarray:
    return np.asarray(getattr(trimesh.load(str(path), process=False), "vertices"), dtype=np.float64)


def _usd_points(path: Path, prim: str, k: int) -> np.ndarray:
    from pxr import Usd

    stage = Usd.Stage.Open(str(path))
    p = [q for q in stage.Traverse() if q.GetName() == prim]
    assert len(p) == 1, [q.GetPath() for q in stage.Traverse()]
    return np.asarray(p[0].GetAttribute("points").Get(float(k)), dtype=np.float64)


@pytest.mark.parametrize("scene, obj, options", [
    ("cloth_on_sphere", "cloth", dict(scale=0.25)),
    ("cylinder_twist", "cloth", dict(scale=0.5, twist_time=0.1, settle=0.1)),
])
def test_usd_run_equals_ply_run(scene: str, obj: str, options: dict, tmp_path: Path) -> None:
    """The same scene written as PLY and as USD: at every frame the USD
    points equal the PLY vertices to 1e-6 m, the stage is in metres, y up, at
    the run's frame rate, and the run opens, renders to an mp4 with one
    picture per frame, and shows frame K in a screenshot."""
    ply = cr.scenes.run(scene, out_dir=tmp_path / "ply", frames=FRAMES, backend="cpu", **options)
    cr.scenes.run(scene, out_dir=tmp_path / "usd", frames=FRAMES, backend="cpu", format="usd", **options)
    usd = tmp_path / "usd" / f"{scene}.usdc"
    assert usd.is_file() and not list((tmp_path / "usd" / scene).glob("*.ply"))
    from pxr import Usd, UsdGeom

    stage = Usd.Stage.Open(str(usd))
    assert UsdGeom.GetStageMetersPerUnit(stage) == 1.0 and UsdGeom.GetStageUpAxis(stage) == "Y"
    fps = stage.GetTimeCodesPerSecond()
    assert fps == stage.GetFramesPerSecond() == cr.io.open_run(ply).fps
    if scene == "cloth_on_sphere":
        assert fps == 24.0  # MPM scenes write 24 frames per simulated second
    files = sorted(ply.glob(f"{obj}_*.ply"))
    assert len(files) == FRAMES + 1
    moved = 0.0
    for k, f in enumerate(files):
        x_ply = _ply_points(f)
        x_usd = _usd_points(usd, obj, k)
        assert x_usd.shape == x_ply.shape
        assert np.abs(x_usd - x_ply).max() <= 1e-6, (k, np.abs(x_usd - x_ply).max())
        moved = max(moved, float(np.abs(x_ply - _ply_points(files[0])).max()))
    assert moved > 1e-3
    run = cr.io.open_run(tmp_path / "usd")
    assert run.num_frames == FRAMES + 1
    movie = tmp_path / "movie.mp4"
    assert main(["render", str(tmp_path / "usd"), "--out", str(movie)]) == 0
    import imageio.v3 as iio

    assert sum(1 for _ in iio.imiter(movie)) == FRAMES + 1
    shots = []
    for k in (0, FRAMES):
        png = tmp_path / f"frame{k}.png"
        assert main(["view", str(ply), "--screenshot", str(png), "--frame", str(k)]) == 0
        shots.append(np.asarray(Image.open(png).convert("RGB")).astype(int))
    assert shots[0].std() > 5 and np.abs(shots[0] - shots[1]).mean() > 0.1, "frame K is shown, not frame 0"


def test_cloth_scenes_refuse_the_gpu_and_honour_frames(tmp_path: Path) -> None:
    """crumple.cloth has no GPU backend: a cloth scene asked for it says so;
    --frames sets how many frames the protocol writes."""
    with pytest.raises(cr.InvalidInputError, match="cpu only"):
        cr.scenes.run("cylinder_twist", out_dir=tmp_path, backend="gpu")
    assert main(["run", "cylinder_twist", "--backend", "gpu", "--out", str(tmp_path)]) == 2
    d = cr.scenes.run("cylinder_twist", out_dir=tmp_path, frames=4, scale=0.5, twist_time=0.1, settle=0.1)
    run = cr.io.open_run(d)
    assert run.num_frames == 5
    assert len(sorted(d.glob("cloth_*.ply"))) == 5


def test_run_with_video_writes_a_movie(tmp_path: Path) -> None:
    """crumple run SCENE --video renders the run into OUT/SCENE/SCENE.mp4
    with one picture per frame."""
    assert main(["run", "cloth_on_sphere", "--frames", "2", "--scale", "0.25", "--backend", "cpu",
                 "--out", str(tmp_path), "--video"]) == 0
    movie = tmp_path / "cloth_on_sphere" / "cloth_on_sphere.mp4"
    import imageio.v3 as iio

    frames = list(iio.imiter(movie))
    assert len(frames) == 3 and frames[0].std() > 5


def test_the_stream_saves_a_checkpoint_on_a_clean_close_only(tmp_path: Path) -> None:
    """scenes.run(checkpoint=True): the frame stream saves the simulation
    when it closes, not when the scene raised; a stream opened without its
    simulation cannot promise a checkpoint."""
    from crumple import scenes

    class Sim:
        saved: list[Path] = []

        def save(self, p: Path) -> Path:
            self.saved.append(p)
            return p

    sim = Sim()
    with scenes.SceneStream(cr.io.PlyWriter(tmp_path / "a"), sim, tmp_path / "a" / "checkpoint.npz"):
        pass
    assert sim.saved == [tmp_path / "a" / "checkpoint.npz"]
    with pytest.raises(RuntimeError):
        with scenes.SceneStream(cr.io.PlyWriter(tmp_path / "b"), sim, tmp_path / "b" / "checkpoint.npz"):
            raise RuntimeError("the scene failed")
    assert len(sim.saved) == 1
    with pytest.raises(cr.InvalidInputError, match="without its simulation"):
        scenes.SceneStream(cr.io.PlyWriter(tmp_path / "c"), None, tmp_path / "c" / "checkpoint.npz")
