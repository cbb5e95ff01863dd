"""Built-in persistent-wrinkle cloth scenes (spec ``persistent_wrinkles.md`` §8):
each runs at a small scale with shortened load/settle phases, writes its frames,
picture and metrics.json, stays finite, and shows the spec's orderings where
they hold at that size (E2, E3, E6, E7, E8)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import trimesh
from PIL import Image

import crumple as cr

SMALL = 0.5  # mesh spacing twice the scene default


def _run(name: str, out: Path, **options: Any) -> dict[str, Any]:
    """Run ``name`` into ``out`` and check what every scene must write: the
    cloth frames 0..N (triangle meshes, N ≥ 2, finite, moving), a rendered
    picture and metrics.json with finite §8 metrics. Returns metrics.json."""
    d = cr.scenes.run(name, out_dir=out, scale=options.pop("scale", SMALL), **options)
    assert d == out / name
    files = sorted(d.glob("cloth_*.ply"))
    assert len(files) >= 3
    assert [f.name for f in files] == [f"cloth_{i:05d}.ply" for i in range(len(files))]
    last = trimesh.load(str(files[-1]), process=False)
    assert isinstance(last, trimesh.Trimesh) and len(last.faces) > 10
    first = np.asarray(getattr(trimesh.load(str(files[0]), process=False), "vertices"))
    x = np.asarray(last.vertices)
    assert x.shape == first.shape and np.isfinite(x).all()
    # Twist scenes end where they started: look for motion in any frame.
    frames = (np.asarray(getattr(trimesh.load(str(f), process=False), "vertices")) for f in files[1::3])
    moved = max(np.linalg.norm(v - first, axis=1).max() for v in frames)
    assert moved > 1e-3, "the cloth did not move"
    img = np.asarray(Image.open(d / f"{name}.png").convert("RGB")).astype(int)
    assert img.shape == (720, 1280, 3)
    assert (np.abs(img - img[0, 0]).sum(axis=2) > 30).mean() > 0.01, "blank picture"
    m = json.loads((d / "metrics.json").read_text())
    assert m["scene"] == name
    for k in ("M_abs", "M_sharp", "M_max", "M_plastic", "M_anchor"):
        assert np.isfinite(m["metrics"][k]), k
    assert m["frames_written"] == len(files)
    return m


def test_scenes_are_registered() -> None:
    """The six cloth scenes are in the registry with a description."""
    for name in ("wrinkle_strip", "cylinder_twist", "flat_twist", "pressed_square", "crumple_in_container",
                 "knee_bend"):
        assert name in cr.scenes.names()
        assert len(cr.scenes.describe(name).split()) > 5
        assert cr.scenes.default_frames(name) > 0


# -- E2 ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def strip(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], dict[str, Any]]:
    """E2 at a 10 mm grid, load 0.5 s, settle ≤ 1.5 s, no stretch: θ_c per (mode, hold)."""
    root = tmp_path_factory.mktemp("strip")
    out = {}
    for mode in ("friction", "plastic"):
        for hold in ("immediate", "held"):
            out[mode, hold] = _run("wrinkle_strip", root / f"{mode}_{hold}", mode=mode, hold=hold, load_time=0.5,
                                   settle=1.5, stretch=False)
    return out


def test_strip_loads_the_crease_exactly(strip: dict[tuple[str, str], dict[str, Any]]) -> None:
    """Every vertex is a handle during loading, so each crease hinge sees θ = Φ."""
    for (mode, _), m in strip.items():
        assert m["theta_c_loaded"] == pytest.approx(1.0 if mode == "friction" else 2.6, abs=1e-4)


def test_strip_held_keeps_more_than_immediate(strip: dict[tuple[str, str], dict[str, Any]]) -> None:
    """E2: after release θ_c(held) > θ_c(immediate) with friction only and with
    plasticity only. The held friction fold sticks near the 1-DOF value 0.6 rad
    (still swinging a little after the shortened 1.5 s settle); the immediate
    one is still creeping toward 0.2 rad (0.21 after the default 4 s)."""
    for mode in ("friction", "plastic"):
        assert strip[mode, "held"]["theta_c"] > strip[mode, "immediate"]["theta_c"] + 0.1, mode
    assert strip["friction", "held"]["theta_c"] == pytest.approx(0.6, abs=0.05)
    assert 0.15 < strip["friction", "immediate"]["theta_c"] < 0.5
    # The plastic rest angle is the 1-DOF value exactly: every crease hinge saw θ = 2.6.
    assert strip["plastic", "immediate"]["theta_p_crease"] == pytest.approx(0.40, abs=0.01)
    assert strip["plastic", "held"]["theta_p_crease"] == pytest.approx(0.79, abs=0.01)


def test_strip_plastic_keeps_more_than_friction(strip: dict[tuple[str, str], dict[str, Any]]) -> None:
    """E2: for an equal hold the plastic fold (Φ = 2.6) keeps more than the friction fold (Φ = 1.0)."""
    for hold in ("immediate", "held"):
        assert strip["plastic", hold]["theta_c"] > strip["friction", hold]["theta_c"], hold


def test_strip_stretch_recovers_friction_folds(tmp_path: Path) -> None:
    """E2 stretch step: pulling the strip to 1 % strain flattens an immediate
    friction fold (R > 0.3) at a 20 mm grid."""
    m = _run("wrinkle_strip", tmp_path, scale=0.25, mode="friction", hold="immediate", load_time=0.5, settle=1.5,
             stretch_time=0.5)
    assert m["theta_c"] > 0.1
    assert m["recovery_R"] > 0.3


def test_strip_sweep_plots_residual_against_hold_time(tmp_path: Path) -> None:
    """sweep=True runs 0, 10, 50, 200, 500 s holds into sub-folders and plots θ_c."""
    pytest.importorskip("matplotlib")
    d = cr.scenes.run("wrinkle_strip", out_dir=tmp_path, scale=0.25, mode="friction", load_time=0.3, settle=0.5,
                      stretch=False, sweep=True)
    m = json.loads((d / "metrics.json").read_text())
    assert [r["hold_time_s"] for r in m["rows"]] == [0.0, 10.0, 50.0, 200.0, 500.0]
    assert all((d / r["folder"] / "cloth_00000.ply").is_file() for r in m["rows"])
    values = [r["value"] for r in m["rows"]]
    assert values[-1] > values[0]
    img = Image.open(d / "sweep.png")
    assert img.size[0] > 300 and img.size[1] > 200


# -- E3 ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tube(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], dict[str, Any]]:
    """E3 at 32 × 15 rings (480 vertices), settle ≤ 0.5 s."""
    root = tmp_path_factory.mktemp("tube")
    return {(mat, hold): _run("cylinder_twist", root / f"{mat}_{hold}", material=mat, hold=hold, settle=0.5)
            for mat, hold in (("cotton", "immediate"), ("cotton", "held"), ("polyester", "immediate"),
                              ("polyester", "held"), ("denim", "immediate"), ("denim", "held"))}


def test_cylinder_twist_held_cotton_keeps_more(tube: dict[tuple[str, str], dict[str, Any]]) -> None:
    """E3: M_abs(held) > M_abs(immediate) for cotton."""
    assert tube["cotton", "held"]["M_abs"] > 1.1 * tube["cotton", "immediate"]["M_abs"]


def test_cylinder_twist_cotton_beats_polyester(tube: dict[tuple[str, str], dict[str, Any]]) -> None:
    """E3: M_abs Cotton > Polyester (both held). The flat-rest tube is curved
    by construction, so part of M_abs is no memory: the excess over the
    elastic-only tube (M_elastic) is what cotton keeps and polyester does not."""
    assert tube["cotton", "held"]["M_abs"] > tube["polyester", "held"]["M_abs"]
    assert tube["cotton", "held"]["M_abs_excess"] > 0.01
    assert abs(tube["polyester", "held"]["M_abs_excess"]) < 0.005


def test_cylinder_twist_polyester_barely_remembers(tube: dict[tuple[str, str], dict[str, Any]]) -> None:
    """E3: for polyester the relative change from holding is < 1/3 of cotton's."""
    def rel(mat: str) -> float:
        return (tube[mat, "held"]["M_abs"] - tube[mat, "immediate"]["M_abs"]) / tube[mat, "immediate"]["M_abs"]

    assert rel("cotton") > 0.1
    assert abs(rel("polyester")) < rel("cotton") / 3


def test_cylinder_twist_denim_between_cotton_and_polyester(tube: dict[tuple[str, str], dict[str, Any]]) -> None:
    """E3: M_abs Cotton > Denim > Polyester (held), and denim held > immediate.

    Holds with the tube's own angles as its rest shape (the scene's default
    ``rest="mesh"``). With the paper code's flat rest the axial hinges start
    bent past denim's ε0 and that offset hides denim's memory (denim held ≈
    immediate, below polyester); and at scale 1 (half the hinge angles) Table
    2 denim's hinges stay under the dwell threshold the 2 s of twisting has
    already built, so held = immediate there (spec A4: the thresholds are raw
    angles, so they depend on the mesh). Both are stated in the issue note."""
    assert tube["cotton", "held"]["M_abs"] > tube["denim", "held"]["M_abs"] > tube["polyester", "held"]["M_abs"]
    assert tube["denim", "held"]["M_abs"] > tube["denim", "immediate"]["M_abs"]


# -- E6 ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def twist(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[bool, str], dict[str, Any]]:
    """E6 at a 20 mm grid (338 vertices), settle ≤ 0.5 s."""
    root = tmp_path_factory.mktemp("twist")
    return {(b, hold): _run("flat_twist", root / f"{b}_{hold}", baseline=b, hold=hold, settle=0.5)
            for b in (True, False) for hold in ("immediate", "held")}


def test_flat_twist_baseline_ignores_hold_time(twist: dict[tuple[bool, str], dict[str, Any]]) -> None:
    """E6: the time-independent hardening baseline gives bit-identical results
    for the immediate and the held protocol."""
    a, b = twist[True, "immediate"], twist[True, "held"]
    assert a["positions_sha"] == b["positions_sha"]
    assert a["metrics"] == b["metrics"]


def test_flat_twist_ours_held_keeps_more(twist: dict[tuple[bool, str], dict[str, Any]]) -> None:
    """E6: ours M_abs(held) > M_abs(immediate), and ours > the baseline."""
    assert twist[False, "held"]["metrics"]["M_abs"] > twist[False, "immediate"]["metrics"]["M_abs"]
    assert twist[False, "held"]["positions_sha"] != twist[False, "immediate"]["positions_sha"]
    assert twist[False, "held"]["metrics"]["M_abs"] > twist[True, "held"]["metrics"]["M_abs"]


# -- E7 ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pressed(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[float, str], dict[str, Any]]:
    """E7 at a 10 mm grid (441 vertices), lift 0.3 s, settle ≤ 0.5 s."""
    root = tmp_path_factory.mktemp("pressed")
    return {(depth, hold): _run("pressed_square", root / f"{depth}_{hold}", depth=depth, hold=hold, lift_time=0.3,
                                settle=0.5)
            for depth in (0.01, 0.03) for hold in ("immediate", "held")}


def test_pressed_square_large_press_leaves_more_sag(pressed: dict[tuple[float, str], dict[str, Any]]) -> None:
    """E7: residual centre sag minus the elastic-only sag, large (3 cm) > small (1 cm)."""
    for hold in ("immediate", "held"):
        print(f"E7 {hold}: residual sag excess 3 cm {pressed[0.03, hold]['residual_sag_excess'] * 1e3:.3f} mm, "
              f"1 cm {pressed[0.01, hold]['residual_sag_excess'] * 1e3:.3f} mm")
        assert pressed[0.03, hold]["residual_sag_excess"] > pressed[0.01, hold]["residual_sag_excess"] > 0.0


def test_pressed_square_held_sags_more(pressed: dict[tuple[float, str], dict[str, Any]]) -> None:
    """E7: residual centre sag minus the elastic-only sag, held > immediate
    (strictly), for both depths. Measured at this size: 5.36 vs 4.96 mm
    (1 cm press) and 26.30 vs 24.32 mm (3 cm press)."""
    for depth in (0.01, 0.03):
        held, imm = pressed[depth, "held"]["residual_sag_excess"], pressed[depth, "immediate"]["residual_sag_excess"]
        print(f"E7 depth {depth} m: residual sag excess held {held * 1e3:.3f} mm, immediate {imm * 1e3:.3f} mm")
        assert held > imm, depth


# -- E8 ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def container(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], dict[str, Any]]:
    """E8 at a 25 mm grid with self-collision: (b) the plate and (a) the
    container alone, each held and immediate, and the elastic reference
    (every wrinkle element off). The lifted sheet hangs clear of the floor,
    its corners apart, and settles ≤ 1 s (kinetic damping) before it is
    measured."""
    root = tmp_path_factory.mktemp("container")
    runs = {(v, hold): dict(plate=v == "b", hold=hold) for v in ("a", "b") for hold in ("held", "immediate")}
    runs["elastic", "immediate"] = dict(wrinkles=False, hold="immediate")
    return {k: _run("crumple_in_container", root / "_".join(k), settle=1.0, **o) for k, o in runs.items()}


def test_crumple_in_container_has_no_self_intersections(container: dict[tuple[str, str], dict[str, Any]]) -> None:
    """E8: the cloth stays inside the container while it crumples, and no two
    triangles cross at the end."""
    for m in container.values():
        assert m["protocol"]["self_collision"] is True
        assert m["max_radius_in_container_m"] < 0.08 + 1e-3
        assert m["self_intersections"] == 0


def test_crumple_in_container_keeps_more_than_the_elastic_sheet(
        container: dict[tuple[str, str], dict[str, Any]]) -> None:
    """E8, all variants: M_abs > M_elastic after lifting. The elastic sheet
    hangs nearly flat (its M_abs is the no-memory reference of §8)."""
    elastic = container["elastic", "immediate"]["metrics"]["M_abs"]
    assert elastic < 0.02
    for key, m in container.items():
        if key[0] != "elastic":
            assert m["metrics"]["M_abs"] > 3.0 * elastic, key


def test_crumple_in_container_held_is_sharper(container: dict[tuple[str, str], dict[str, Any]]) -> None:
    """E8: hold > immediate in both variants (M_sharp and M_abs), and the
    plate's creases are sharper than the container's: M_sharp (b) > (a) for
    either hold."""
    for v in ("a", "b"):
        held, imm = container[v, "held"]["metrics"], container[v, "immediate"]["metrics"]
        assert held["M_sharp"] > 1.5 * imm["M_sharp"], v
        assert held["M_abs"] > 1.5 * imm["M_abs"], v
    for hold in ("held", "immediate"):
        assert container["b", hold]["metrics"]["M_sharp"] > container["a", hold]["metrics"]["M_sharp"], hold


def test_crumple_in_container_friction_dominates_and_remembers_the_hold(
        container: dict[tuple[str, str], dict[str, Any]]) -> None:
    """E8 (a): M_plastic ≪ M_anchor after the long hold (friction-dominated
    wrinkles), and the anchors after lifting are larger for the held than
    for the immediate run."""
    held, imm = container["a", "held"]["metrics"], container["a", "immediate"]["metrics"]
    assert held["M_plastic"] < 0.5 * held["M_anchor"]
    assert held["M_anchor"] > 2.0 * imm["M_anchor"]


# -- knee ------------------------------------------------------------------------------


def test_knee_bend_runs_and_measures_the_knee(tmp_path: Path) -> None:
    """The trouser leg bends at the knee (sharp folds while bent) and keeps part
    of them after straightening; knee metrics come from a region mask."""
    m = _run("knee_bend", tmp_path, hold="held", settle=0.3)
    assert (tmp_path / "knee_bend" / "thigh_00000.ply").is_file()
    assert (tmp_path / "knee_bend" / "shin_00000.ply").is_file()
    assert m["knee_hinges"] > 0
    assert m["knee_metrics_bent"]["M_sharp"] > 1.0
    assert 0.0 < m["knee_M_sharp"] < m["knee_metrics_bent"]["M_sharp"]
