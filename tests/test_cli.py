"""The crumple command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import crumple as cr
from crumple.cli import main


def test_info_json(capsys: pytest.CaptureFixture[str]) -> None:
    """`crumple info --json` reports version, threads and the adapter or a reason."""
    assert main(["info", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["version"] == cr.__version__
    assert d["threads"] >= 1
    assert (d["gpu_adapter"] is None) != (d["gpu_unavailable_reason"] is None)


def test_unknown_scene_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    """Running an unknown scene exits 2 with the reason."""
    assert main(["run", "no_such_scene", "--out", "unused"]) == 2
    assert "unknown scene 'no_such_scene'" in capsys.readouterr().err


def test_entry_point_and_demo(tmp_path: Path) -> None:
    """The installed `crumple` script runs the demo: `crumple info` on top, the
    cloth_on_sphere scene's PLY frames (cloth meshes, sphere and ground) and a
    rendered PNG of its last frame, and where they are."""
    from crumple import scenes

    exe = Path(sys.executable).parent / "crumple"
    r = subprocess.run([str(exe), "demo", "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].startswith(f"crumple {cr.__version__} | ")
    assert (tmp_path / "cloth_on_sphere.png").stat().st_size > 10_000
    frames = scenes.default_frames("cloth_on_sphere")
    assert len(list(tmp_path.glob("cloth_*.ply"))) == frames + 1
    # The colliders are in the frame stream too, one file per frame.
    assert (tmp_path / "sphere_00000.ply").is_file() and (tmp_path / "ground_00000.ply").is_file()
    assert (tmp_path / "manifest.json").is_file()
    assert str(tmp_path / "cloth_on_sphere.png") in r.stdout
    assert "done in" in r.stdout


def test_run_passes_scene_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`crumple run NAME --set KEY=VALUE` forwards scene options (JSON values)."""
    assert main(["run", "cylinder_twist", "--scale", "0.3", "--set", "hold=immediate", "--set",
                 "material=polyester", "--out", str(tmp_path)]) == 0
    m = json.loads((tmp_path / "cylinder_twist" / "metrics.json").read_text())
    assert m["protocol"]["hold"] == "immediate" and m["protocol"]["material"] == "polyester"
    assert main(["run", "cylinder_twist", "--set", "hold"]) == 2
    assert "KEY=VALUE" in capsys.readouterr().err


def test_run_reads_python_literals_and_refuses_bad_scene_options(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """`--set wrinkles=False` is false (it was the text "False", which the
    scene read as true), and options the scene does not take, or values of
    the wrong type, are refused before the run with what the scene takes."""
    from crumple._sweep import parse_value

    assert parse_value("False") is False and parse_value("True") is True and parse_value("None") is None
    assert parse_value("false") is False and parse_value("2.5") == 2.5 and parse_value("denim") == "denim"
    assert parse_value("inf") == float("inf") and parse_value("-inf") == float("-inf")
    assert main(["run", "eol_crease", "--frames", "2", "--set", "wrinkles=False", "--out", str(tmp_path)]) == 0
    assert json.loads((tmp_path / "eol_crease" / "metrics.json").read_text())["wrinkles"] is False
    for bad, says in (("wrinkles=Flase", "wrinkles: 'Flase' is not of type 'boolean'"),
                      ("foo=1", "unknown key(s) 'foo'; allowed: friction, hold_time, material"),
                      ("hold_time=abc", "hold_time: 'abc' is not of type 'number'"),
                      ("scale=0.5", "a run setting: give it as --scale")):
        assert main(["run", "eol_crease", "--set", bad, "--out", str(tmp_path / "bad")]) == 2
        assert says in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()
    # The keywords of scenes.run pass by; checkpoint (no flag of its own) through --set.
    import inspect

    from crumple import scenes
    from crumple.cli import _RUN_KEYS

    assert set(_RUN_KEYS) == {k for k, p in inspect.signature(scenes.run).parameters.items()
                              if p.kind is p.KEYWORD_ONLY and k != "out_dir"}
    assert main(["run", "eol_crease", "--frames", "2", "--set", "checkpoint=true", "--out", str(tmp_path / "ck")]) == 0
    assert (tmp_path / "ck" / "eol_crease" / "checkpoint.npz").is_file()
    assert main(["sweep", "eol_crease", "--grid", "hold_time=0,x", "--out", str(tmp_path / "sweep")]) == 2
    assert "hold_time: 'x' is not of type 'number'" in capsys.readouterr().err
    assert not (tmp_path / "sweep" / "results.csv").exists()


def test_sweep_ray_before_the_scene_is_read_as_the_scene(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """``--ray`` takes an optional address: ``sweep --ray SCENE`` used to
    read the scene's name as the address and fail on the missing scene; a
    built-in scene's name there is the scene (local Ray), an address after
    the scene stays the address, and no scene at all is a clear error."""
    import crumple._sweep as sw

    seen: list[tuple[Any, str, Any]] = []

    def fake(target: Any, grid: Any, **kw: Any) -> Any:
        seen.append((target, kw["executor"], kw["address"]))
        raise cr.InvalidInputError("stop here")

    monkeypatch.setattr(sw, "sweep", fake)
    assert main(["sweep", "--ray", "eol_crease", "--grid", "hold_time=0,100"]) == 2
    assert main(["sweep", "eol_crease", "--ray", "ray://head:10001", "--grid", "hold_time=0,100"]) == 2
    assert main(["sweep", "eol_crease", "--grid", "hold_time=0,100"]) == 2
    assert seen == [("eol_crease", "ray", None), ("eol_crease", "ray", "ray://head:10001"),
                    ("eol_crease", "local", None)]
    assert main(["sweep", "--ray", "ray://head:10001", "--grid", "hold_time=0,100"]) == 2
    assert "a sweep needs a scene" in capsys.readouterr().err


def test_scenes_out_without_export_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``scenes --out FILE`` alone (or with ``--schema``) used to list the
    scenes (print the schema) and write nothing."""
    for extra in ([], ["--schema"]):
        assert main(["scenes", "--out", str(tmp_path / "x.toml"), *extra]) == 2
        assert "give --export NAME" in capsys.readouterr().err
        assert not (tmp_path / "x.toml").exists()
