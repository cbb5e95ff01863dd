"""What every run writer and reader shares: the run format, the frame checks, the writer and reader bases."""

from __future__ import annotations

import abc
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InvalidInputError
from ..frames import Frame


RUN_FORMAT = "crumple-run"


RUN_VERSION = 1


RUN_FORMATS = ("ply", "usd")


MANIFEST = "manifest.json"


_USD_EXTS = (".usd", ".usdc", ".usda")


def _fps(fps: Any) -> float:
    try:
        f = float(fps)
    except (TypeError, ValueError) as e:
        raise InvalidInputError(f"fps must be a number of frames per second; got {fps!r}") from e
    if not (math.isfinite(f) and f > 0):
        raise InvalidInputError(f"fps must be > 0; got {fps!r}")
    return f


def _as_frame(frame: Any) -> Frame:
    if not isinstance(frame, Frame):
        raise InvalidInputError(f"write() takes a crumple.frames.Frame (what sim.frame() returns); got "
                                f"{type(frame).__name__}")
    return frame


class _RunWriter(abc.ABC):
    """What both writers share: frame counting, ``fps`` and the context manager."""

    fps: float
    num_frames: int
    _closed: bool

    def _start(self, fps: Any) -> None:
        self.fps = _fps(fps)
        self.num_frames = 0
        self._closed = False
        self._kinds: dict[str, str] = {}

    def _check(self, frame: Any) -> Frame:
        if self._closed:
            raise InvalidInputError(f"{type(self).__name__} is closed; open a new one to write more frames")
        f = _as_frame(frame)
        # A name keeps its kind for the whole run: the files or prims of one
        # name are read back as one object.
        for name, part in [*f.objects.items(), *f.colliders.items()]:
            old = self._kinds.get(name)
            if old is not None and old != part.kind:
                raise InvalidInputError(f"{name!r} was a {old} in earlier frames and is a {part.kind} now; "
                                        "a name keeps its kind for the whole run")
        for name, part in [*f.objects.items(), *f.colliders.items()]:
            self._kinds[name] = part.kind
        return f

    @abc.abstractmethod
    def write(self, frame: Frame) -> int:
        """Write ``frame``; returns its frame index."""

    @abc.abstractmethod
    def close(self) -> None:
        """Finish the run's files."""

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Run(abc.ABC):
    """A written run read back as frames (see :func:`open_run`).

    Attributes
    ----------
    path : the run folder or USD file.
    fps : frames per second the run was written with.
    num_frames : number of frames.
    names : every object and collider name that appears in the run (objects
        first, in the order they first appear).
    kinds : each name's kind: ``"mesh"``, ``"points"``, ``"curves"`` or
        ``"collider"``.
    """

    path: Path
    fps: float
    num_frames: int
    names: list[str]
    kinds: dict[str, str]

    @property
    def times(self) -> npt.NDArray[np.float64]:
        """``(num_frames,)`` simulated time (s) of every frame."""
        return np.array([self._time(k) for k in range(self.num_frames)], dtype=np.float64)

    def frame(self, k: int) -> Frame:
        """Frame ``k`` (``0 <= k < num_frames``; negative counts from the end,
        ``-1`` is the last)."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise InvalidInputError(f"frame index must be an integer; got {k!r}")
        n = self.num_frames
        i = int(k) + n if k < 0 else int(k)
        if not 0 <= i < n:
            raise InvalidInputError(f"frame {k} does not exist: {str(self.path)!r} has {n} frames (0..{n - 1})")
        return self._frame(i)

    def __len__(self) -> int:
        return self.num_frames

    def __iter__(self) -> Iterator[Frame]:
        for k in range(self.num_frames):
            yield self._frame(k)

    @abc.abstractmethod
    def _frame(self, k: int) -> Frame: ...

    @abc.abstractmethod
    def _time(self, k: int) -> float: ...

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r}, {self.num_frames} frames at {self.fps:g} fps, {self.names})"


def _check_run_header(info: Any, where: str, not_ours: str) -> None:
    """Refuses a run whose header is not crumple's (``not_ours`` says why) or
    was written by a newer run version."""
    if not isinstance(info, dict) or info.get("format") != RUN_FORMAT:
        raise InvalidInputError(not_ours)
    if int(info.get("version", 0)) > RUN_VERSION:
        raise InvalidInputError(f"{where!r} was written by a newer crumple (run version {info['version']}); "
                                "upgrade crumple")
