"""Looking at written runs: the scene of one run (objects, colliders, attributes), the timeline, :func:`view_run` and :func:`screenshot_run`."""

from __future__ import annotations

import importlib
import os
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import CrumpleError, InvalidInputError
from ..frames import Frame, FrameCollider, FrameCurves, FrameMesh, FramePoints
from . import window as _window
from .window import _PALETTE, _look, _polyscope, crease_split, has_display


if TYPE_CHECKING:
    from ..io import Run


_COLLIDER_COLOR = (0.72, 0.72, 0.70)


def _as_run(run: Any) -> Run:
    from ..io import Run, open_run

    if isinstance(run, Run):
        return run
    if isinstance(run, (str, os.PathLike)):
        return open_run(run)
    raise InvalidInputError(f"expected a crumple.io.Run or the path of a run; got {type(run).__name__}")


def _is_colour(key: str, a: np.ndarray) -> bool:
    """(N, 3) data drawn as RGB rather than through a colour map: named as a
    colour and within [0, 1]."""
    return ("color" in key.lower() or "colour" in key.lower()) and a.size > 0 and a.min() >= 0 and a.max() <= 1


def _mapped(key: str, a: np.ndarray) -> np.ndarray:
    """What a colour map shows for ``a``: itself, or the length of each row of
    ``(N, 3)`` data (a speed for a velocity)."""
    return a if a.ndim == 1 else np.linalg.norm(a, axis=1)


def _part_data(part: Any) -> list[tuple[str, str, np.ndarray]]:
    """``(where, key, array)`` for every per-element array of a part."""
    if isinstance(part, FrameMesh):
        return ([("vertices", k, a) for k, a in part.vertex_data.items()]
                + [("faces", k, a) for k, a in part.face_data.items()])
    if isinstance(part, (FramePoints, FrameCurves)):
        return [("points", k, a) for k, a in part.point_data.items()]
    return []


class _RunScene:
    """Polyscope structures showing one frame of a run at a time.

    The camera, the ground height and every colour map's range are fixed from
    the first and last frames, so nothing jumps while scrubbing or in a
    video; structures are updated in place when their topology is unchanged,
    so choices made in the UI (enabled quantities, colours) survive a frame
    change.
    """

    def __init__(self, ps: Any, run: Run, camera: tuple[Sequence[float], Sequence[float]] | None,
                 cache: int = 32) -> None:
        self.ps = ps
        self.run = run
        self.colors = {n: _PALETTE[i % len(_PALETTE)] for i, n in enumerate(
            [n for n in run.names if run.kinds.get(n) != "collider"])}
        self.shown: dict[str, tuple[Any, Any]] = {}  # name -> (structure, topology key)
        self._cache: OrderedDict[int, Frame] = OrderedDict()
        self._cache_size = cache
        if run.num_frames == 0:
            raise InvalidInputError(f"{str(run.path)!r} holds no frames")
        refs = [self.frame(0)] if run.num_frames == 1 else [self.frame(0), self.frame(run.num_frames - 1)]
        self.ranges = self._ranges(refs)
        ps.remove_all_structures()
        lo, hi = self._view_bounds(refs)
        _look(ps, (lo, hi), camera)
        # The ground (a shadow catcher) at the lowest point of anything,
        # colliders included, so that it does not move with the material.
        # A little below it: a plane collider drawn at the very height of the
        # shadow catcher flickers in stripes (depth fighting).
        size = float(np.max(np.asarray(hi) - np.asarray(lo)))
        ground = min(float(f.bounds()[0][1]) for f in refs) - 5e-3 * size
        ps.set_ground_plane_height_mode("manual")
        ps.set_ground_plane_height(ground)

    def frame(self, k: int) -> Frame:
        """Frame ``k``, from a small cache (scrubbing back and forth reads
        each frame once)."""
        f = self._cache.get(k)
        if f is None:
            f = self.run.frame(k)
            self._cache[k] = f
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(k)
        return f

    @staticmethod
    def _ranges(frames: list[Frame]) -> dict[tuple[str, str, str], tuple[float, float]]:
        out: dict[tuple[str, str, str], tuple[float, float]] = {}
        for f in frames:
            for name, part in f.objects.items():
                for where, key, a in _part_data(part):
                    v = _mapped(key, a)
                    if not v.size:
                        continue
                    lo, hi = float(v.min()), float(v.max())
                    old = out.get((name, where, key))
                    out[(name, where, key)] = (lo, hi) if old is None else (min(lo, old[0]), max(hi, old[1]))
        # A constant quantity still needs a range that is not empty.
        return {k: (lo, hi) if hi > lo else (lo - 0.5, hi + 0.5) for k, (lo, hi) in out.items()}

    @staticmethod
    def _view_bounds(frames: list[Frame]) -> tuple[np.ndarray, np.ndarray]:
        """The box the camera frames: the simulated objects, plus colliders no
        more than twice their size (a ground plane many times larger than the
        cloth would otherwise shrink the cloth to a few pixels)."""
        lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
        for f in frames:
            if f.objects:
                a, b = f.bounds(colliders=False)
                lo, hi = np.minimum(lo, a), np.maximum(hi, b)
        if not np.isfinite(lo).all():
            for f in frames:
                a, b = f.bounds()
                lo, hi = np.minimum(lo, a), np.maximum(hi, b)
            return lo, hi
        size = max(float(np.linalg.norm(hi - lo)), 1e-3)
        for f in frames:
            for c in f.colliders.values():
                w = c.world_vertices()
                if len(w) and float(np.linalg.norm(w.max(axis=0) - w.min(axis=0))) <= 2.0 * size:
                    lo, hi = np.minimum(lo, w.min(axis=0)), np.maximum(hi, w.max(axis=0))
        return lo, hi

    def show(self, k: int) -> Frame:
        """Show frame ``k``; returns it."""
        f = self.frame(k)
        for name, part in f.objects.items():
            self._object(name, part)
        for name, col in f.colliders.items():
            self._collider(name, col)
        for name in [n for n in self.shown if n not in f.objects and n not in f.colliders]:
            self.shown.pop(name)[0].remove()
        return f

    def _reuse(self, name: str, key: Any) -> Any:
        """The structure of ``name`` if its topology key is unchanged, else
        None (after removing a stale one)."""
        old = self.shown.get(name)
        if old is None:
            return None
        s, old_key = old
        if isinstance(old_key, tuple) and isinstance(key, tuple) and len(old_key) == len(key) and all(
                np.array_equal(x, y) for x, y in zip(old_key, key)):
            return s
        s.remove()
        del self.shown[name]
        return None

    def _quantities(self, name: str, s: Any, part: Any, new: bool, source: np.ndarray | None = None) -> None:
        """The part's data on ``s``; ``source`` maps the drawn mesh's
        vertices to the part's (a mesh drawn with its creases split)."""
        first = new
        for where, key, a in _part_data(part):
            if where == "vertices" and source is not None:
                a = a[source]
            enabled = True if first else None
            first = False
            if a.ndim == 2 and _is_colour(key, a):
                kw: dict[str, Any] = {"enabled": enabled}
                if where in ("vertices", "faces"):
                    kw["defined_on"] = where
                s.add_color_quantity(key, a, **kw)
                continue
            kw = {"enabled": enabled, "cmap": "viridis", "vminmax": self.ranges.get((name, where, key))}
            if where in ("vertices", "faces"):
                kw["defined_on"] = where
            elif isinstance(part, FrameCurves):
                kw["defined_on"] = "nodes"
            s.add_scalar_quantity(key, _mapped(key, a), **kw)

    def _object(self, name: str, part: Any) -> None:
        ps = self.ps
        color = self.colors.get(name, _PALETTE[0])
        if len(part.positions) == 0:
            if name in self.shown:
                self.shown.pop(name)[0].remove()
            return
        source = None
        if isinstance(part, FrameMesh):
            # Sharp folds drawn sharp, as in the pictures (window.crease_split):
            # the drawn topology changes when a crease forms or goes.
            v, f, source = crease_split(part.positions, part.faces)
            key: Any = (f,)
            s = self._reuse(name, key)
            new = s is None
            if new:
                s = ps.register_surface_mesh(name, v, f, color=color, smooth_shade=True,
                                             edge_width=0.0, back_face_policy="different")
            else:
                s.update_vertex_positions(v)
        elif isinstance(part, FramePoints):
            key = (np.array(len(part.positions)),)
            s = self._reuse(name, key)
            new = s is None
            if new:
                s = ps.register_point_cloud(name, part.positions, color=color)
            else:
                s.update_point_positions(part.positions)
            self._radii(s, part.radii, "point")
        else:
            key = (part.offsets,)
            s = self._reuse(name, key)
            new = s is None
            if new:
                s = ps.register_curve_network(name, part.positions, part.segments, color=color)
            else:
                s.update_node_positions(part.positions)
            self._radii(s, part.radii, "node")
        self._quantities(name, s, part, new, source)
        self.shown[name] = (s, key)

    @staticmethod
    def _radii(s: Any, radii: np.ndarray, per: str) -> None:
        """Draw points or strands with their own radii (m), not polyscope's
        relative default."""
        if radii.size == 0 or radii.max() <= 0:
            return
        if np.ptp(radii) <= 1e-6 * radii.max():
            s.set_radius(float(radii.max()), relative=False)
            return
        # The radius quantity also shows up in the UI, as a colour map.
        if per == "point":
            s.add_scalar_quantity("radius", radii)
            s.set_point_radius_quantity("radius", autoscale=False)
        else:
            s.add_scalar_quantity("radius", radii, defined_on="nodes")
            s.set_node_radius_quantity("radius", autoscale=False)

    def _collider(self, name: str, col: FrameCollider) -> None:
        key = (col.vertices, col.faces)
        s = self._reuse(name, key)
        if s is None:
            s = self.ps.register_surface_mesh(name, _inset(col.vertices, col.faces), col.faces,
                                              color=_COLLIDER_COLOR, smooth_shade=False, edge_width=0.0)
        # The local shape once, the pose per frame.
        s.set_transform(col.matrix())
        self.shown[name] = (s, key)


def _inset(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """A collider's vertices moved inwards along their normals by 3 mm (at
    most 0.2 % of its size), for drawing only: cloth resting on a box lies
    on its surface, and the two drawn in the same place flicker through
    each other (depth fighting) as fragments. The scene pictures draw their
    boxes inset the same way."""
    v = np.asarray(vertices, dtype=np.float64)
    f = np.asarray(faces, dtype=np.int64)
    if len(v) == 0 or len(f) == 0:
        return v
    n = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
    vn = np.zeros_like(v)
    for k in range(3):
        np.add.at(vn, f[:, k], n)
    vn /= np.maximum(np.linalg.norm(vn, axis=1, keepdims=True), 1e-300)
    # Outward if the faces run counter-clockwise seen from outside; a mesh
    # wound the other way has its normals pointing in.
    if float(np.einsum("ij,ij->", vn, v - v.mean(axis=0))) < 0.0:
        vn = -vn
    eps = min(3e-3, 2e-3 * float(np.linalg.norm(np.ptp(v, axis=0))))
    return v - eps * vn


def _index(run: Run, frame: int) -> int:
    """``frame`` as an index in ``0..num_frames-1`` (negative counts from the
    end); a bad one raises the run's own error."""
    n = run.num_frames
    if isinstance(frame, bool) or not isinstance(frame, (int, np.integer)) or not -n <= frame < n:
        run.frame(frame)  # raises InvalidInputError naming the valid range
    return int(frame) % n


class _Timeline:
    """The viewer's ImGui panel (polyscope's user callback, run once per
    drawn frame): a frame slider, step and play buttons, and real-time
    playback at the run's fps."""

    def __init__(self, scene: _RunScene, k: int) -> None:
        # polyscope's ImGui bindings have no complete stubs.
        self.psim: Any = importlib.import_module("polyscope.imgui")
        self.scene = scene
        self.n = scene.run.num_frames
        self.fps = scene.run.fps
        self.k = k
        self.time = scene.show(k).time
        self.playing = False
        self.loop = True
        self._t0 = 0.0  # wall-clock time when playing started ...
        self._k0 = 0  # ... and the frame it started from

    def goto(self, k: int) -> None:
        """Show frame ``k`` (clamped to the run)."""
        k = max(0, min(self.n - 1, int(k)))
        if k != self.k:
            self.k = k
            self.time = self.scene.show(k).time

    def toggle(self) -> None:
        """Play or pause; playing from the last frame starts over."""
        self.playing = not self.playing
        if self.playing:
            if self.k == self.n - 1:
                self.goto(0)
            self._t0, self._k0 = time.perf_counter(), self.k

    def _step(self, k: int) -> None:
        self.playing = False
        self.goto(k)

    def __call__(self) -> None:
        psim, n = self.psim, self.n
        psim.PushItemWidth(300)
        changed, new_k = psim.SliderInt("frame", self.k, v_min=0, v_max=n - 1)
        psim.PopItemWidth()
        if changed:
            self._step(new_k)
        if psim.Button("|<"):
            self._step(0)
        psim.SameLine()
        if psim.Button("<") or psim.IsKeyPressed(psim.ImGuiKey_LeftArrow):
            self._step(self.k - 1)
        psim.SameLine()
        if psim.Button("pause" if self.playing else "play") or psim.IsKeyPressed(psim.ImGuiKey_Space, False):
            self.toggle()
        psim.SameLine()
        if psim.Button(">") or psim.IsKeyPressed(psim.ImGuiKey_RightArrow):
            self._step(self.k + 1)
        psim.SameLine()
        if psim.Button(">|"):
            self._step(n - 1)
        psim.SameLine()
        _, self.loop = psim.Checkbox("loop", self.loop)
        psim.Text(f"frame {self.k} / {n - 1}   t = {self.time:.4f} s   {self.fps:g} fps")
        if self.playing:
            # Real time: frames that cannot be read fast enough are skipped.
            target = self._k0 + int((time.perf_counter() - self._t0) * self.fps)
            if target > n - 1:
                if self.loop:
                    self._t0, self._k0 = time.perf_counter(), 0
                    target = 0
                else:
                    target = n - 1
                    self.playing = False
            self.goto(target)


def view_run(run: Run | str | os.PathLike[str], *, frame: int = -1,
             camera: tuple[Sequence[float], Sequence[float]] | None = None) -> None:
    """Open a polyscope window on a run (a :class:`crumple.io.Run` or its
    path) with a timeline: a frame slider, play/pause, step back/forward
    (also the left/right arrow keys and space), and loop. It opens at
    ``frame`` (default: the last). Every object and collider is shown;
    per-vertex, per-face and per-point data are colour quantities (the first
    of each object enabled; ``(N, 3)`` data show their length, or their RGB
    values when named as a colour). Blocks until the window is closed.
    ``camera`` is ``(eye, target)`` in metres."""
    r = _as_run(run)
    k = _index(r, frame)
    ps = _polyscope(headless=False)
    if _window._initialised == "openGL3_egl":
        raise CrumpleError("no display: crumple.viz.view_run needs a window; use crumple.viz.screenshot_run "
                           "or crumple.viz.render_video instead")
    timeline = _Timeline(_RunScene(ps, r, camera), k)
    ps.set_user_callback(timeline)
    try:
        ps.show()
    finally:
        ps.clear_user_callback()


def _size(size: tuple[int, int]) -> tuple[int, int]:
    w, h = int(size[0]), int(size[1])
    if w < 16 or h < 16:
        raise InvalidInputError(f"size must be at least 16x16 pixels; got {size!r}")
    return w, h


def screenshot_run(run: Run | str | os.PathLike[str], path: str | os.PathLike[str], *, frame: int = -1,
                   size: tuple[int, int] = (1280, 720),
                   camera: tuple[Sequence[float], Sequence[float]] | None = None) -> Path:
    """Render frame ``frame`` of a run (default: the last) to the PNG ``path``
    without a window, framed as :func:`view_run` and :func:`render_video`
    frame it. ``size`` is ``(width, height)`` in pixels. Returns the path."""
    p = Path(path)
    if p.suffix.lower() != ".png":
        raise InvalidInputError(f"screenshots are written as .png; got {str(p)!r}")
    w, h = _size(size)
    r = _as_run(run)
    k = _index(r, frame)  # a bad index fails before polyscope starts
    ps = _polyscope(headless=True)
    scene = _RunScene(ps, r, camera)
    scene.show(k)
    ps.set_window_size(w, h)
    p.parent.mkdir(parents=True, exist_ok=True)
    ps.screenshot(str(p), transparent_bg=False)
    return p


def play_scene(name: str, *, out: str | os.PathLike[str] = "out/gallery", frames: int | None = None,
               scale: float = 1.0, window: bool | None = None, **options: Any) -> Path:
    """Run built-in scene ``name`` (its frames, metrics and PNG under
    ``out / name``) and show it: with a display (``window=None`` asks
    :func:`has_display`), a window on the run with play/pause and a frame
    slider (:func:`view_run`, blocking until closed); without one, nothing
    more (the scene wrote its picture). Returns the scene's PNG. The
    gallery scripts in ``examples/gallery/`` are this call, one per paper
    figure."""
    from .. import scenes

    options.setdefault("backend", "cpu")
    folder = scenes.run(name, out_dir=Path(out), frames=frames, scale=scale, **options)
    png = folder / f"{name}.png"
    if window if window is not None else has_display():
        view_run(folder)
    return png
