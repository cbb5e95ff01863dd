"""The gallery (issue 17, item 3): one script per paper figure in
``examples/gallery/``, each run briefly (2 frames at a small scale) without a
window: it writes its scene's picture. Every built-in scene has its script,
and the README shows every gallery picture."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

import crumple as cr

ROOT = Path(__file__).resolve().parents[1]
GALLERY = ROOT / "examples" / "gallery"


def _load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"gallery_{path.stem}", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_scene_has_a_gallery_script_and_a_readme_picture() -> None:
    assert sorted(p.stem for p in GALLERY.glob("*.py")) == cr.scenes.names()
    readme = (ROOT / "README.md").read_text()
    for name in cr.scenes.names():
        assert f"docs/gallery/{name}.png" in readme, name
        assert (ROOT / "docs" / "gallery" / f"{name}.png").stat().st_size > 5000, name


@pytest.mark.parametrize("name", cr.scenes.names())
def test_gallery_script_runs_briefly(tmp_path: Path, name: str) -> None:
    png = _load(GALLERY / f"{name}.py").main(out=str(tmp_path), frames=2, scale=0.3, window=False)
    assert png.name == f"{name}.png" and png.stat().st_size > 1000
    assert (png.parent / "manifest.json").exists()  # the frames went through the frame stream
