"""Scene files (issue 17, item 2): TOML scenes for every module, validated
against the published JSON Schema (generated from the API), run by
``crumple run FILE.toml``; every built-in scene exported as a file; errors
that name the key path and the allowed values; fuzzed files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crumple as cr
from crumple import scenefile
from crumple.cli import main
from fuzz import attempt

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples" / "scenes").glob("*.toml"))


def test_the_published_schema_is_the_generated_one() -> None:
    published = json.loads((ROOT / "docs" / "scene.schema.json").read_text())
    assert published == json.loads(json.dumps(scenefile.schema())), \
        "docs/scene.schema.json is stale: crumple scenes --schema > docs/scene.schema.json"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_scene_files_run(tmp_path: Path, path: Path) -> None:
    """One declared scene per module runs: frames, PNG, metrics, a loadable
    checkpoint; the objects moved and stayed finite."""
    doc = scenefile.load(path)
    doc["frames"] = min(doc.get("frames", 24), 6)
    short = tmp_path / path.name
    short.write_text(_dump(doc))
    out = scenefile.run(short, out_dir=tmp_path / "out")
    m = json.loads((out / "metrics.json").read_text())
    assert m["finite"] and m["steps"] > 0 and m["module"] == doc["module"]
    assert len(list(out.glob("*.ply"))) >= 7 and (out / "manifest.json").exists()
    assert (out / f"{path.stem}.png").stat().st_size > 1000
    sim = getattr(cr, doc["module"]).Simulation.load(out / "checkpoint.npz")
    assert sim.step_count == m["steps"]
    start = scenefile.build(doc, path.parent)
    # Centres of mass (re-sampling and remeshing change the counts).
    moved = [np.linalg.norm(np.asarray(a.positions).mean(axis=0) - np.asarray(b.positions).mean(axis=0))
             for a, b in zip(start.objects, sim.objects, strict=True)]
    assert max(moved) > 1e-4, moved


def _dump(doc: dict[str, Any]) -> str:
    """A small TOML writer for the tests' edited documents (tables and arrays of tables)."""
    def value(v: Any) -> str:
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return scenefile._toml_value(v)
    lines = [f"{k} = {value(v)}" for k, v in doc.items() if not isinstance(v, (dict, list)) or
             (isinstance(v, list) and not (v and isinstance(v[0], dict)))]
    for k, v in doc.items():
        if isinstance(v, dict):
            lines += [f"[{k}]"] + [f"{a} = {value(b)}" for a, b in v.items()]
        elif isinstance(v, list) and v and isinstance(v[0], dict):
            for item in v:
                lines += [f"[[{k}]]"] + [f"{a} = {value(b)}" for a, b in item.items()]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", cr.scenes.names())
def test_every_builtin_scene_exports_as_a_valid_file(tmp_path: Path, name: str) -> None:
    text = scenefile.export(name, tmp_path / f"{name}.toml")
    doc = scenefile.load(tmp_path / f"{name}.toml")
    assert doc["scene"] == name and f'scene = "{name}"' in text


def test_an_exported_builtin_runs_through_the_cli(tmp_path: Path) -> None:
    assert main(["scenes", "--export", "pbd_taffy", "--out", str(tmp_path / "t.toml")]) == 0
    text = (tmp_path / "t.toml").read_text().replace("frames = 150", "frames = 4")
    (tmp_path / "t.toml").write_text(text)
    assert main(["run", str(tmp_path / "t.toml"), "--out", str(tmp_path / "out")]) == 0
    m = json.loads((tmp_path / "out" / "pbd_taffy" / "metrics.json").read_text())
    assert m["deletion_distance"] == 0.5 and len(m["particles"]) == 4


@pytest.mark.parametrize(("edit", "expect"), [
    ('module = "fem"', "module: 'fem' is not allowed; use one of 'mpm', 'cloth', 'pbd', 'eol'"),
    ('material = { preset = "silk" }', "objects[0].material.preset: 'silk' is not allowed; use one of 'cotton'"),
    ('material = { overrides = { bendin = 1.0 } }', "unknown key(s) 'bendin'; allowed here: areal_density"),
    ('mesh = { generator = "grid_mesh", resolution = "16" }', "objects[0].mesh.resolution: '16' is not of type 'array'"),
    ('pin = { lower = [0, 0] , upper = [1, 1, 1] }', "objects[0].pin.lower: [0, 0] is too short"),
    ('[simulation]\ndt = "fast"', "simulation.dt: 'fast' is not of type 'number'"),
    ('[simulation]\nlinear_solver = "lu"', "simulation.linear_solver: 'lu' is not allowed; use one of 'lagged'"),
    ("colour = 3", "unknown key(s) 'colour'"),
])
def test_errors_name_the_key_path_and_what_is_allowed(tmp_path: Path, edit: str, expect: str) -> None:
    base = {"module": 'module = "cloth"', "frames": "frames = 2"}
    obj = {"kind": 'kind = "cloth"', "mesh": 'mesh = { generator = "grid_mesh", size = [0.2, 0.2], resolution = [4, 4] }'}
    key = edit.split("=")[0].strip()
    if key in base:
        base[key] = edit
    elif key in obj or key in ("material", "pin"):
        obj[key] = edit
    top = "\n".join(base.values()) + ("\n" + edit if key not in base and key not in obj and
                                      key not in ("material", "pin") and not edit.startswith("[") else "")
    tables = edit if edit.startswith("[") else ""
    text = top + "\n" + tables + "\n[[objects]]\n" + "\n".join(obj.values()) + "\n"
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(scenefile.SceneFileError) as e:
        scenefile.load(p)
    assert expect in str(e.value), str(e.value)


def test_a_builtin_scenes_options_are_checked(tmp_path: Path) -> None:
    p = tmp_path / "b.toml"
    p.write_text('scene = "eol_crease"\n[options]\nhold_time = 1.0\nhld = 2.0\n')
    with pytest.raises(scenefile.SceneFileError, match="options: unknown key.s. 'hld'; allowed here: friction, hold_time"):
        scenefile.load(p)
    p.write_text('scene = "eol_crease"\n[options]\nhold_time = "long"\n')
    with pytest.raises(scenefile.SceneFileError, match="options.hold_time: 'long' is not of type 'number'"):
        scenefile.load(p)
    p.write_text('scene = "eol_crease"\n')
    assert main(["run", str(p), "--frames", "3"]) == 2  # flags that belong in the file are refused


def test_files_that_are_not_scenes(tmp_path: Path) -> None:
    with pytest.raises(scenefile.SceneFileError, match="does not exist"):
        scenefile.load(tmp_path / "missing.toml")
    (tmp_path / "x.toml").write_text("module = cloth\n")
    with pytest.raises(scenefile.SceneFileError, match="not valid TOML"):
        scenefile.load(tmp_path / "x.toml")
    # Parsed as data, never run: a string that looks like code is a string.
    (tmp_path / "y.toml").write_text('scene = "__import__(\'os\').system(\'echo hi\')"\n')
    with pytest.raises(scenefile.SceneFileError, match="is not allowed"):
        scenefile.load(tmp_path / "y.toml")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzzed_scene_files(tmp_path: Path, data: st.DataObject) -> None:
    """Example files truncated, with bytes overwritten, or with a value
    replaced: a SceneFileError or a valid document, never another error."""
    good = data.draw(st.sampled_from(EXAMPLES)).read_bytes()
    how = data.draw(st.sampled_from(["truncate", "flip", "random"]))
    if how == "truncate":
        body = good[: data.draw(st.integers(0, len(good)))]
    elif how == "flip":
        b = bytearray(good)
        for _ in range(data.draw(st.integers(1, 6))):
            b[data.draw(st.integers(0, len(b) - 1))] = data.draw(st.integers(0, 255))
        body = bytes(b)
    else:
        body = data.draw(st.binary(max_size=200))
    p = tmp_path / "fuzz.toml"
    p.write_bytes(body)
    doc = attempt("scene files", scenefile.load, p)
    if doc is not None and "module" in doc:
        attempt("scene files", scenefile.build, doc, EXAMPLES[0].parent)
