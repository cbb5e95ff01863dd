"""Built-in MPM scenes: each runs small and briefly, writes its frames and a
picture, and its objects move and stay finite."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trimesh
from PIL import Image

import crumple as cr
from crumple.cli import main

SCENES = {
    # name: (objects written every frame, whether they are triangle meshes)
    "cloth_on_sphere": {"cloth": True},
    "curtain_ball": {"curtain": True},
    "cloth_stack": {"lower": True, "upper": True},
    "friction_slope": {"sheet": True, "slider": True},
    "hair_tubes": {"lower": False, "upper": False},
    "sand_on_cloth": {"cloth": True, "sand": False},
    "cloth_twister": {"cloth": True},
    "goo_on_curtain": {"curtain": True, "goo": False},
}
FRAMES = 3
TINY = 0.25  # dx four times the default, meshes a quarter of the resolution


def _positions(path: Path) -> np.ndarray:
    return np.asarray(getattr(trimesh.load(str(path), process=False), "vertices"))


@pytest.mark.parametrize("name", sorted(SCENES))
def test_scene_runs_small_and_writes_frames_and_a_picture(name: str, tmp_path: Path) -> None:
    """At scale 0.25 for 3 frames: every object has frames 0..3 (meshes with
    faces, strands and grains as point clouds), its particles moved and stayed
    finite, and the PNG is a rendered picture, not a blank one."""
    out = cr.scenes.run(name, out_dir=tmp_path, frames=FRAMES, scale=TINY, backend="cpu")
    assert out == tmp_path / name
    for obj, is_mesh in SCENES[name].items():
        files = sorted(out.glob(f"{obj}_*.ply"))
        assert [f.name for f in files] == [f"{obj}_{i:05d}.ply" for i in range(FRAMES + 1)]
        first, last = trimesh.load(str(files[0]), process=False), trimesh.load(str(files[-1]), process=False)
        assert isinstance(last, trimesh.Trimesh) == is_mesh, f"{obj}: wrong kind {type(last).__name__}"
        x0, x1 = np.asarray(getattr(first, "vertices")), np.asarray(getattr(last, "vertices"))
        assert x0.shape == x1.shape and len(x0) > 10
        assert np.isfinite(x1).all(), f"{name}/{obj}: non-finite positions"
        moved = np.linalg.norm(x1 - x0, axis=1).max()
        assert moved > 1e-3, f"{name}/{obj}: moved only {moved:.2e} m in {FRAMES} frames"
        assert moved < 1.0, f"{name}/{obj}: a particle moved {moved:.2f} m in {FRAMES} frames"
    img = np.asarray(Image.open(out / f"{name}.png").convert("RGB")).astype(int)
    assert img.shape == (720, 1280, 3)
    differs = np.abs(img - img[0, 0]).sum(axis=2) > 30
    assert differs.mean() > 0.03, f"only {differs.mean():.2%} of the picture differs from the background"
    assert len(np.unique(img.reshape(-1, 3) // 16, axis=0)) > 10  # shaded objects, not flat fills


def test_scene_options_reach_the_scene(tmp_path: Path) -> None:
    """Scene keyword options pass through scenes.run: on the 15° slope a small
    sheet with 45° layer friction slides less than one with 0°."""
    th = np.radians(15.0)
    slide = []
    for phi in (0.0, 45.0):
        out = cr.scenes.run("friction_slope", out_dir=tmp_path / str(phi), frames=6, scale=0.5, backend="cpu",
                            friction_angle=phi)
        d = _positions(out / "slider_00006.ply").mean(axis=0) - _positions(out / "slider_00000.ply").mean(axis=0)
        slide.append(d[0] * np.cos(th) - d[1] * np.sin(th))
    assert slide[0] > 0.01
    assert slide[1] < 0.5 * slide[0]


def test_cli_lists_all_scenes(capsys: pytest.CaptureFixture[str]) -> None:
    """`crumple scenes` prints every built-in scene with its description."""
    assert main(["scenes"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    listed = sorted(line.split()[0] for line in lines)
    assert listed == cr.scenes.names()
    # Every MPM scene is there (the cloth module registers its own too).
    assert set(SCENES) <= set(listed)
    assert all(len(line.split()) > 3 for line in lines)


def test_cli_run_with_scale(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`crumple run NAME --frames --scale --out` writes the scene's folder."""
    assert main(["run", "cloth_twister", "--frames", "2", "--scale", str(TINY), "--backend", "cpu",
                 "--out", str(tmp_path)]) == 0
    assert "wrote" in capsys.readouterr().out
    assert len(list((tmp_path / "cloth_twister").glob("cloth_*.ply"))) == 3
    assert (tmp_path / "cloth_twister" / "cloth_twister.png").is_file()


def test_unknown_scene_and_bad_arguments(tmp_path: Path) -> None:
    """An unknown name lists the built-in scenes; bad frames, scale or options are refused."""
    with pytest.raises(cr.InvalidInputError, match=r"unknown scene 'nope'.*cloth_on_sphere"):
        cr.scenes.run("nope", out_dir=tmp_path)
    with pytest.raises(cr.InvalidInputError, match="frames"):
        cr.scenes.run("cloth_on_sphere", out_dir=tmp_path, frames=0)
    with pytest.raises(cr.InvalidInputError, match="scale"):
        cr.scenes.run("cloth_on_sphere", out_dir=tmp_path, scale=0.0)
    with pytest.raises(TypeError, match="no_such_option"):
        cr.scenes.run("cloth_on_sphere", out_dir=tmp_path, frames=1, scale=TINY, no_such_option=1)
    with pytest.raises(cr.InvalidInputError, match="friction_angle"):
        cr.scenes.run("friction_slope", out_dir=tmp_path, frames=1, scale=TINY, friction_angle=95.0)
