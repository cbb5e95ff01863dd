"""Loading checkpoints for the solvers' ``Simulation.load``: every way a
file can be wrong (missing, truncated, corrupt, not a checkpoint, another
module's) ends in one typed :class:`~crumple.errors.CheckpointError` that
names the file, never in an exception of the zip or JSON libraries."""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy.typing as npt

from . import io
from .errors import CheckpointError, InvalidInputError

__all__ = ["load"]


_READER_ERRORS = (zipfile.BadZipFile, zlib.error, NotImplementedError, struct.error, MemoryError, EOFError, OSError,
                  ValueError, KeyError, UnicodeDecodeError)


def load(path: Any, solver: str) -> tuple[dict[str, npt.NDArray[Any]], dict[str, Any]]:
    """``(arrays, meta)`` of the checkpoint at ``path`` written by module
    ``solver`` ("mpm", "cloth", ...)."""
    p = Path(path)
    if not p.is_file():
        raise CheckpointError(f"checkpoint {str(p)!r} does not exist")
    try:
        arrays, meta = io.load_checkpoint(p)
    except CheckpointError:
        raise
    except InvalidInputError as e:
        raise CheckpointError(str(e)) from e
    # What the zip, zlib, .npy and JSON readers raise on a damaged file: a
    # zip header claiming a newer version (NotImplementedError), a packed
    # field cut short (struct.error), a .npy header claiming a shape no
    # memory holds (MemoryError). Named, so a bug of ours is not reported
    # as a corrupt file.
    except _READER_ERRORS as e:
        raise CheckpointError(
            f"{str(p)!r} cannot be read as a crumple checkpoint (truncated or corrupt?): {type(e).__name__}: {e}"
        ) from e
    if not isinstance(meta, dict) or meta.get("solver") != solver:
        other = meta.get("solver") if isinstance(meta, dict) else None
        hint = f"; load it with crumple.{other}.Simulation.load" if isinstance(other, str) else ""
        raise CheckpointError(f"{str(p)!r} is a {other!r} checkpoint, not a {solver!r} one{hint}")
    return arrays, meta
