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
