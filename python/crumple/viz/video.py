"""Rendering every frame of a run into an ``.mp4`` (imageio-ffmpeg) or a ``.gif`` (Pillow)."""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import CrumpleError, InvalidInputError
from .window import _polyscope
from .runs import _RunScene, _as_run, _size

if TYPE_CHECKING:
    from ..io import Run


_VIDEO_EXTS = (".mp4", ".gif")


def render_video(run: Run | str | os.PathLike[str], out: str | os.PathLike[str], *, fps: float | None = None,
                 progress: bool = True, size: tuple[int, int] | None = None,
                 camera: tuple[Sequence[float], Sequence[float]] | None = None) -> Path:
    """Render every frame of a run without a window into a video.

    ``out`` ends in ``.mp4`` (H.264 through imageio-ffmpeg, ``pip install
    'crumple[video]'``) or ``.gif`` (Pillow). ``fps`` defaults to the run's.
    ``size`` is ``(width, height)`` in pixels, default 1280x720 for mp4 and
    640x360 for gif; H.264 needs even sizes, so an odd one is rounded down.
    The camera, the ground and the colour-map ranges are fixed from the first
    and last frames. ``progress`` shows a tqdm bar. Returns the path.
    """
    from .._progress import progress as progress_bar

    p = Path(out)
    ext = p.suffix.lower()
    if ext not in _VIDEO_EXTS:
        raise InvalidInputError(f"videos are written as .mp4 or .gif; got {str(p)!r}")
    r = _as_run(run)
    rate = float(r.fps if fps is None else fps)
    if not (np.isfinite(rate) and rate > 0):
        raise InvalidInputError(f"fps must be > 0; got {fps!r}")
    w, h = _size(size or ((1280, 720) if ext == ".mp4" else (640, 360)))
    if ext == ".mp4":
        w, h = w - w % 2, h - h % 2
    encoder = _Mp4(p, rate) if ext == ".mp4" else _Gif(p, rate)
    ps = _polyscope(headless=True)
    scene = _RunScene(ps, r, camera, cache=2)
    ps.set_window_size(w, h)
    p.parent.mkdir(parents=True, exist_ok=True)
    try:
        with progress_bar(r.num_frames, f"render {p.name}", enabled=progress) as bar:
            for k in range(r.num_frames):
                scene.show(k)
                rgba = ps.screenshot_to_buffer(transparent_bg=False)
                encoder.add(np.ascontiguousarray(rgba[:h, :w, :3]))
                bar.update(1)
    except BaseException:
        encoder.abort()
        raise
    encoder.close()
    return p


class _Mp4:
    """H.264 in an mp4 through imageio's ffmpeg plugin, one frame at a time."""

    def __init__(self, path: Path, fps: float) -> None:
        try:
            import imageio.v2 as iio

            importlib.import_module("imageio_ffmpeg")  # the ffmpeg binary imageio runs
        except ImportError as e:
            raise CrumpleError("mp4 videos need imageio and imageio-ffmpeg: pip install 'crumple[video]'") from e
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        # yuv420p plays everywhere (browsers, QuickTime); macro_block_size=2
        # keeps the (even) size instead of padding it to a multiple of 16.
        self.w = iio.get_writer(str(path), format="FFMPEG", mode="I", fps=fps, codec="libx264",
                                pixelformat="yuv420p", macro_block_size=2, quality=8, ffmpeg_log_level="error")

    def add(self, rgb: np.ndarray) -> None:
        self.w.append_data(rgb)

    def close(self) -> None:
        self.w.close()

    def abort(self) -> None:
        try:
            self.w.close()
        finally:
            self.path.unlink(missing_ok=True)


class _Gif:
    """An animated GIF through Pillow (frames kept in memory until closed)."""

    def __init__(self, path: Path, fps: float) -> None:
        try:
            from PIL import Image
        except ImportError as e:
            raise CrumpleError("gif videos need Pillow: pip install pillow") from e
        self.Image = Image
        self.path = path
        self.ms = max(int(round(1000.0 / fps)), 10)  # GIF delays are in 1/100 s
        self.frames: list[Any] = []

    def add(self, rgb: np.ndarray) -> None:
        self.frames.append(self.Image.fromarray(rgb))

    def close(self) -> None:
        if not self.frames:
            raise InvalidInputError("a run with no frames makes no video")
        first, rest = self.frames[0], self.frames[1:]
        first.save(str(self.path), save_all=True, append_images=rest, duration=self.ms, loop=0)

    def abort(self) -> None:
        self.frames.clear()
