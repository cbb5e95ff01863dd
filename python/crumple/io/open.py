"""Choosing a run writer by format, and opening a written run (PLY folder or USD file)."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import InvalidInputError
from .mesh import PathLike
from .run import MANIFEST, RUN_FORMATS, Run, _USD_EXTS
from .ply import PlyWriter, _PlyRun
from .usd import UsdWriter, _UsdRun


def writer(format: str, out: PathLike, name: str = "run", *, fps: float = 24.0) -> PlyWriter | UsdWriter:
    """A run writer by format name: ``"ply"`` gives :class:`PlyWriter` into the
    folder ``out``; ``"usd"`` gives :class:`UsdWriter` writing
    ``out/{name}.usdc``."""
    fmt = str(format).lower()
    if fmt == "ply":
        return PlyWriter(out, fps=fps)
    if fmt == "usd":
        return UsdWriter(Path(out) / f"{name}.usdc", fps=fps)
    raise InvalidInputError(f"unknown run format {format!r}; use one of {', '.join(RUN_FORMATS)}")


def open_run(path: PathLike) -> Run:
    """Open a written run: a folder with ``manifest.json`` (from
    :class:`PlyWriter`) or a ``.usd`` / ``.usdc`` / ``.usda`` file (from
    :class:`UsdWriter`). Frames are read when asked for with
    :meth:`Run.frame`."""
    p = Path(path)
    if p.is_dir() and not (p / MANIFEST).is_file():
        # An output folder holding one run (`crumple run SCENE --out DIR`
        # writes DIR/SCENE/ with a manifest, or DIR/SCENE.usdc): open that one.
        found = sorted([q for q in p.iterdir() if q.is_dir() and (q / MANIFEST).is_file()]
                       + [q for q in p.iterdir() if q.is_file() and q.suffix.lower() in _USD_EXTS])
        if len(found) == 1:
            return open_run(found[0])
        if len(found) > 1:
            raise InvalidInputError(f"{str(p)!r} holds several runs; pass one of: "
                                    + ", ".join(str(q) for q in found))
    if p.is_dir():
        if not (p / MANIFEST).is_file():
            raise InvalidInputError(
                f"{str(p)!r} has no {MANIFEST}, so it is not a crumple run. Write runs with crumple.io.PlyWriter "
                "(or `crumple run SCENE --out DIR`), or pass a .usd/.usdc/.usda file written by crumple.io.UsdWriter")
        return _PlyRun(p)
    if p.name == MANIFEST and p.is_file():
        return _PlyRun(p.parent)
    if p.suffix.lower() in _USD_EXTS:
        return _UsdRun(p)
    if not p.exists():
        raise InvalidInputError(f"{str(p)!r} does not exist")
    raise InvalidInputError(f"cannot open {str(p)!r} as a run: pass a run folder (with {MANIFEST}) or a "
                            ".usd/.usdc/.usda file")
