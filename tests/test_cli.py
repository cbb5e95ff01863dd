"""The crumple command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
    """The installed `crumple` script runs the demo and writes a PNG and PLYs."""
    exe = Path(sys.executable).parent / "crumple"
    r = subprocess.run([str(exe), "demo", "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "demo.png").stat().st_size > 10_000
    assert len(list(tmp_path.glob("*.ply"))) == 7
    assert "wrote" in r.stdout
