"""What the built-in scenes of every module share: colliders drawn in the
scenes' pictures and the metrics file. (Frames go through
:func:`crumple.scenes.frame_writer`, which every scene uses.)"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..geometry import TriMesh

__all__ = ["Color", "OBSTACLE", "GROUND", "Prop", "write_json"]

Color = tuple[float, float, float]

OBSTACLE: Color = (0.62, 0.62, 0.64)
GROUND: Color = (0.80, 0.80, 0.78)


def _always() -> bool:
    return True


@dataclass
class Prop:
    """A collider drawn in a scene's picture: ``mesh()`` builds it at its
    current pose; ``visible()`` says whether it is still in the scene."""

    name: str
    mesh: Callable[[], TriMesh]
    color: Color = OBSTACLE
    visible: Callable[[], bool] = _always


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as indented JSON, numpy scalars and arrays and paths
    converted (a scene's ``metrics.json``)."""

    def conv(o: Any) -> Any:
        if isinstance(o, (np.floating, np.integer)):
            return o.item()
        if isinstance(o, np.ndarray):
            return o.tolist()
        if isinstance(o, Path):
            return str(o)
        raise TypeError(f"not JSON-able: {type(o).__name__}")

    path.write_text(json.dumps(data, indent=2, default=conv, allow_nan=True) + "\n")
