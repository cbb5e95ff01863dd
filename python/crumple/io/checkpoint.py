"""Checkpoints: named arrays in one ``.npz`` with a format header, for exact restarts."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InvalidInputError
from .mesh import PathLike, _ext


CHECKPOINT_VERSION = 1


def save_checkpoint(path: PathLike, arrays: Mapping[str, npt.ArrayLike], meta: Mapping[str, Any] | None = None) -> Path:
    """Save named arrays and JSON-able metadata to one compressed ``.npz``.

    Arrays are stored bit-exactly, so a simulation restored from a checkpoint
    continues identically.
    """
    if _ext(path) != "npz":
        raise InvalidInputError(f"checkpoints are .npz files; got {str(path)!r}")
    for k in arrays:
        if k.startswith("__"):
            raise InvalidInputError(f"checkpoint array names may not start with '__': {k!r}")
    header = {"format": "crumple-checkpoint", "version": CHECKPOINT_VERSION, "meta": dict(meta or {})}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    payload: dict[str, Any] = {k: np.asarray(v) for k, v in arrays.items()}
    payload["__header__"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    np.savez_compressed(str(path), **payload)
    return Path(path)


def load_checkpoint(path: PathLike) -> tuple[dict[str, npt.NDArray[Any]], dict[str, Any]]:
    """Load a checkpoint written by :func:`save_checkpoint`: ``(arrays, meta)``."""
    p = Path(path)
    if not p.is_file():
        raise InvalidInputError(f"checkpoint {str(p)!r} does not exist")
    with np.load(str(p), allow_pickle=False) as z:
        if "__header__" not in z.files:
            raise InvalidInputError(f"{str(p)!r} is not a crumple checkpoint (no header)")
        header = json.loads(bytes(z["__header__"]).decode())
        if header.get("format") != "crumple-checkpoint":
            raise InvalidInputError(f"{str(p)!r} is not a crumple checkpoint")
        if header.get("version", 0) > CHECKPOINT_VERSION:
            raise InvalidInputError(
                f"{str(p)!r} was written by a newer crumple (checkpoint version {header['version']}); upgrade crumple"
            )
        arrays = {k: z[k] for k in z.files if k != "__header__"}
    return arrays, header.get("meta", {})
