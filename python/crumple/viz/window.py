"""Polyscope set-up (imported lazily; EGL without a display) and the item viewer: :func:`show` and :func:`screenshot`."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .._checks import as_faces, as_points, as_vec3
from ..backend import _ensure_runtime_dir
from ..errors import CrumpleError, InvalidInputError
from ..geometry import Curves, TriMesh


Item = Any  # TriMesh | Curves | tuple[array, array] | array


_PALETTE = [
    (0.86, 0.37, 0.34),
    (0.30, 0.55, 0.80),
    (0.95, 0.75, 0.30),
    (0.45, 0.70, 0.45),
    (0.65, 0.50, 0.80),
    (0.60, 0.60, 0.60),
]


_initialised: str | None = None


def has_display() -> bool:
    """Whether a window can open here (an X11 or Wayland display is set)."""
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _polyscope(headless: bool) -> Any:
    """Import and initialise polyscope once per process."""
    global _initialised
    try:
        import polyscope as ps
    except ImportError as e:  # pragma: no cover - depends on the install
        raise CrumpleError("crumple.viz needs polyscope: pip install 'crumple[viz]'") from e
    if _initialised is None:
        # Mesa's EGL and GLFW probe Wayland, which complains on stderr when
        # there is no runtime dir (a server, a container): give it a private one.
        _ensure_runtime_dir()
        backend: Any = ""
        if headless or not has_display():
            ps.set_allow_headless_backends(True)
            backend = "openGL3_egl"
        try:
            ps.init(backend or "auto")
        except Exception as e:
            raise CrumpleError(
                f"polyscope could not start its {backend or 'default'} backend ({e}). Headless rendering needs "
                "EGL and an OpenGL driver: on Debian, apt-get install libegl1 libegl-mesa0 libgl1-mesa-dri"
            ) from e
        _initialised = backend or "window"
        ps.set_program_name("crumple")
        ps.set_up_dir("y_up")
        ps.set_ground_plane_mode("shadow_only")
    return ps


def _named(items: Iterable[Item] | Mapping[str, Item]) -> list[tuple[str, Item]]:
    if isinstance(items, Mapping):
        return [(str(k), v) for k, v in items.items()]
    return [(f"item{i}", it) for i, it in enumerate(items)]


# Faces meeting at a vertex at more than this angle get their own copy of
# it in the picture (degrees).
CREASE_DEG = 50.0


def crease_split(vertices: np.ndarray, faces: np.ndarray,
                 angle_deg: float = CREASE_DEG) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For drawing only: ``(vertices', faces', source)`` with each vertex
    split where its faces meet across a sharp edge (the two faces' normals
    more than ``angle_deg`` apart: a fold at a box edge, a box's own edges),
    one copy per fan of faces joined through smooth edges, so smooth
    shading keeps the crease sharp instead of blending the two sides'
    normals into streaks along it. ``source`` maps each new vertex to its
    original (to carry per-vertex values). Vertices with one fan keep their
    index; the copies follow the original vertices."""
    v = np.asarray(vertices, dtype=np.float64)
    f = np.asarray(faces, dtype=np.int64)
    nv, nf = len(v), len(f)
    if nf == 0:
        return v, f, np.arange(nv)
    n = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
    fn = n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-300)
    # Every face side (a, b) with its corners; the sides of one edge sort
    # next to each other. An edge with exactly two faces whose normals are
    # within the angle joins the corners of its two faces at each end.
    k = np.arange(3)
    a, b = f[:, k].reshape(-1), f[:, (k + 1) % 3].reshape(-1)
    ca = (3 * np.arange(nf)[:, None] + k).reshape(-1)
    cb = (3 * np.arange(nf)[:, None] + (k + 1) % 3).reshape(-1)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    order = np.lexsort((hi, lo))
    lo, hi, a, ca, cb = lo[order], hi[order], a[order], ca[order], cb[order]
    same = (lo[1:] == lo[:-1]) & (hi[1:] == hi[:-1])
    alone = np.ones(len(lo) - 1, dtype=bool)  # exactly two sides (not three or more)
    alone[1:] &= ~same[:-1]
    alone[:-1] &= ~same[1:]
    i = np.flatnonzero(same & alone)
    j = i + 1
    smooth = np.einsum("ij,ij->i", fn[ca[i] // 3], fn[ca[j] // 3]) >= np.cos(np.radians(angle_deg))
    i, j = i[smooth], j[smooth]
    # Side j's corner at the vertex a[i] (its sides run either way round).
    j_at_a = np.where(a[j] == a[i], ca[j], cb[j])
    j_at_b = np.where(a[j] == a[i], cb[j], ca[j])
    p = np.concatenate([ca[i], cb[i]])
    q = np.concatenate([j_at_a, j_at_b])
    # Connected corners by label propagation and pointer jumping (the fans
    # around a vertex are small, so this settles in a few passes).
    label = np.arange(3 * nf)
    while True:
        m = np.minimum(label[p], label[q])
        new = label.copy()
        np.minimum.at(new, p, m)
        np.minimum.at(new, q, m)
        new = new[new]
        if np.array_equal(new, label):
            break
        label = new
    corner_v = f.reshape(-1)
    pairs, inverse = np.unique(corner_v * (3 * nf) + label, return_inverse=True)
    pv = pairs // (3 * nf)
    first = np.ones(len(pairs), dtype=bool)
    first[1:] = pv[1:] != pv[:-1]
    index = np.where(first, pv, nv + np.cumsum(~first) - 1)
    source = np.concatenate([np.arange(nv), pv[~first]])
    return v[source], index[inverse.reshape(-1)].reshape(-1, 3), source


def _register(ps: Any, name: str, item: Item, color: tuple[float, float, float],
              scalar: npt.ArrayLike | None = None) -> None:
    if scalar is not None:
        _register_with_scalar(ps, name, item, color, scalar)
    elif isinstance(item, TriMesh):
        v, f, _ = crease_split(item.vertices, item.faces)
        ps.register_surface_mesh(name, v, f, color=color, smooth_shade=True, edge_width=0.0)
    elif isinstance(item, Curves):
        pts = item.points
        ps.register_curve_network(name, pts, item.segments, color=color, radius=0.002)
    elif isinstance(item, tuple) and len(item) == 2:
        v, f = as_points(item[0], f"{name} vertices"), as_faces(item[1], f"{name} faces")
        v, f, _ = crease_split(v, f)
        ps.register_surface_mesh(name, v, f, color=color, smooth_shade=True)
    else:
        pts = as_points(item, f"{name} points", allow_empty=True)
        ps.register_point_cloud(name, pts, color=color, radius=0.003)


def _register_with_scalar(ps: Any, name: str, item: Item, color: tuple[float, float, float],
                          scalar: npt.ArrayLike) -> None:
    """A surface mesh coloured by one value per vertex (viridis), e.g. the
    wrinkle map of a cloth: where a picture of the value says more than shading."""
    if isinstance(item, TriMesh):
        v, f = item.vertices, item.faces
    elif isinstance(item, tuple) and len(item) == 2:
        v, f = as_points(item[0], f"{name} vertices"), as_faces(item[1], f"{name} faces")
    else:
        raise InvalidInputError(f"scalars can colour meshes only; {name!r} is not a mesh")
    a = np.asarray(scalar, dtype=np.float64).reshape(-1)
    if a.shape != (len(v),) or not np.all(np.isfinite(a)):
        raise InvalidInputError(f"scalars for {name!r} need one finite value per vertex ({len(v)}); got {a.shape}")
    v, f, source = crease_split(v, f)
    m = ps.register_surface_mesh(name, v, f, color=color, smooth_shade=True, edge_width=0.0)
    m.add_scalar_quantity("value", a[source], enabled=True, cmap="viridis")


def _bounds(items: list[tuple[str, Item]]) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    for _, it in items:
        if isinstance(it, TriMesh):
            p = it.vertices
        elif isinstance(it, Curves):
            p = it.points
        elif isinstance(it, tuple):
            p = np.asarray(it[0], dtype=np.float64)
        else:
            p = np.asarray(it, dtype=np.float64)
        if p.size:
            lo, hi = np.minimum(lo, p.min(axis=0)), np.maximum(hi, p.max(axis=0))
    if not np.isfinite(lo).all():
        lo, hi = np.zeros(3), np.ones(3)
    return lo, hi


def _setup(
    items: Iterable[Item] | Mapping[str, Item],
    headless: bool,
    camera: tuple[Sequence[float], Sequence[float]] | None,
    colors: Sequence[tuple[float, float, float]] | None,
    scalars: Mapping[str, npt.ArrayLike] | None = None,
) -> Any:
    named = _named(items)
    if not named:
        raise InvalidInputError("nothing to show: pass at least one mesh, curve set or point array")
    ps = _polyscope(headless)
    ps.remove_all_structures()
    # A run's view pins the ground at its lowest point; pictures of items
    # let polyscope place it under them again.
    ps.set_ground_plane_height_mode("automatic")
    for i, (name, it) in enumerate(named):
        c = colors[i % len(colors)] if colors else _PALETTE[i % len(_PALETTE)]
        _register(ps, name, it, c, None if scalars is None else scalars.get(name))
    _look(ps, _bounds(named), camera)
    return ps


def _look(ps: Any, bounds: tuple[np.ndarray, np.ndarray],
          camera: tuple[Sequence[float], Sequence[float]] | None) -> None:
    """Point the camera at ``camera = (eye, target)`` (m), or by default from
    above and in front so that the box ``bounds`` fills the view."""
    if camera is None:
        lo, hi = bounds
        center = 0.5 * (lo + hi)
        r = max(float(np.linalg.norm(hi - lo)), 1e-3)
        eye = center + r * np.array([0.55, 0.55, 0.95])
        ps.look_at(tuple(eye), tuple(center))
    else:
        ps.look_at(as_vec3(camera[0], "camera eye"), as_vec3(camera[1], "camera target"))


def show(
    items: Iterable[Item] | Mapping[str, Item],
    *,
    camera: tuple[Sequence[float], Sequence[float]] | None = None,
    colors: Sequence[tuple[float, float, float]] | None = None,
) -> None:
    """Open a polyscope window showing ``items`` (blocks until it is closed).

    ``camera`` is ``(eye, target)`` in world coordinates (m); by default the
    camera frames everything.
    """
    ps = _setup(items, headless=False, camera=camera, colors=colors)
    if _initialised == "openGL3_egl":
        raise CrumpleError("no display: crumple.viz.show needs a window; use crumple.viz.screenshot instead")
    ps.show()


def screenshot(
    items: Iterable[Item] | Mapping[str, Item],
    path: str | os.PathLike[str],
    *,
    camera: tuple[Sequence[float], Sequence[float]] | None = None,
    colors: Sequence[tuple[float, float, float]] | None = None,
    size: tuple[int, int] = (1280, 720),
    scalars: Mapping[str, npt.ArrayLike] | None = None,
) -> Path:
    """Render ``items`` to the PNG ``path`` without opening a window.

    ``camera`` is ``(eye, target)`` in metres; ``size`` is ``(width, height)``
    in pixels; ``scalars`` maps an item's name to one value per vertex that
    colours that mesh (viridis). Returns the path written.
    """
    p = Path(path)
    if p.suffix.lower() != ".png":
        raise InvalidInputError(f"screenshots are written as .png; got {str(p)!r}")
    ps = _setup(items, headless=True, camera=camera, colors=colors, scalars=scalars)
    w, h = int(size[0]), int(size[1])
    if w < 16 or h < 16:
        raise InvalidInputError(f"size must be at least 16x16 pixels; got {size!r}")
    ps.set_window_size(w, h)
    p.parent.mkdir(parents=True, exist_ok=True)
    ps.screenshot(str(p), transparent_bg=False)
    return p
