"""Examples run as smoke tests with a physical or geometric check."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _load(name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_readme_tour(tmp_path: Path) -> None:
    """The README example prints what the README says and writes its files."""
    pytest.importorskip("polyscope")
    r = _load("readme_tour").main(tmp_path)
    assert r["vertices"] == 33 * 33
    assert r["hinges"] == 32 * 33 * 2 + 32 * 32 - 4 * 32  # all edges of a 32x32 quad grid minus the boundary
    assert r["gap"] == pytest.approx(0.2, abs=1e-9)  # cloth at y=0.8, ball top at 0.6
    assert r["sand"] > 1000
    assert (tmp_path / "cloth.obj").stat().st_size > 1000
    assert (tmp_path / "cloth.png").stat().st_size > 5000


def test_readme_drape(tmp_path: Path) -> None:
    """The README's MPM example runs (shortened to 0.4 s), the cloth has fallen
    onto the ball without sinking more than a cell, and the checkpoint loads."""
    pytest.importorskip("polyscope")
    import crumple as cr

    r = _load("readme_drape").main(tmp_path, duration=0.4)
    assert r["time"] == pytest.approx(0.4) and r["finite"] == 1.0
    assert r["min_phi"] > -1 / 64  # contact layer within one cell (spec E2)
    assert r["min_y"] < 0.84 - 0.5 * 9.81 * 0.3**2 + 0.05  # it fell
    assert (tmp_path / "drape.png").stat().st_size > 5000
    back = cr.mpm.Simulation.load(tmp_path / "drape.npz")
    assert back.time == pytest.approx(0.4)


def test_readme_garments(tmp_path: Path) -> None:
    """The README's cloth example: both garments fall (they start at 0.26 and
    0.30 m), nothing crosses, and the USD file holds every frame."""
    pytest.importorskip("pxr")
    r = _load("readme_garments").main(tmp_path, frames=6)
    assert r["time"] == pytest.approx(0.25) and r["intersections"] == 0
    assert r["lower_min_y"] < 0.25 and r["upper_min_y"] < 0.29
    import crumple as cr

    assert cr.io.open_run(tmp_path / "two_garments.usdc").num_frames == 6
