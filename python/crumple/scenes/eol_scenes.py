"""Eulerian-on-Lagrangian cloth scenes (spec eol_cloth §9), y up.

Scene            What it shows                                 Frames
---------------  --------------------------------------------  ------
eol_edge         E1: cloth draped over a box edge, then        48
                 pulled over it (its EOL vertices slide)
eol_wire         E2: a wire rising into a sheet held at its    12
                 four corners (the bend gets sharp, material
                 slides over the wire)
eol_points       E3: cloth dropped on three nails, then        36
                 pulled over them by two corners
eol_moving_box   E5/E6: a box lifts a sheet folded over two    36
                 of its edges, then drops away; the sheet
                 lifts off and lands again
eol_tilting_box  a box tilts (it turns) under a sheet folded    24
                 over its long edges: without friction the
                 sheet slides along the edges at g sin(tilt),
                 with it the sheet stays
eol_corner       a sheet sliding over a box's upturned corner  14
                 (the corner vertex stays on the tip)
eol_friction     E8: a sheet dropped on four turned boxes      36
                 (``setup="four_boxes"``) or hung over a
                 table edge (``"table"``): it slides off
                 without friction and stays with it
eol_crease       beyond the paper: a sheet with the cloth      60
                 module's wrinkles held over a box edge, then
                 let go (a longer hold keeps a sharper crease)

Each scene writes its frames through the frame stream, a PNG of the last
frame and ``metrics.json``, and runs in ``mode="eol"`` or one of the
Lagrangian baselines (``"lag_static"``, ``"lag_conformal_avg"``,
``"lag_conformal_cone"``) for comparison.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import colliders, eol, errors, geometry
from .._checks import choice, non_negative, positive, positive_int
from .._progress import progress as _progress_bar
from ..eol.simulation import _material_areas
from ..geometry import TriMesh
from . import frame_writer, register
from ._harness import OBSTACLE, write_json

Mode = eol.simulation.Mode

__all__ = ["eol_edge", "eol_wire", "eol_points", "eol_moving_box", "eol_tilting_box", "eol_corner", "eol_friction",
           "eol_crease", "four_turned_boxes",
           "FRAME_DT"]

FRAME_DT = 1.0 / 24.0
CLOTH = (0.85, 0.45, 0.30)


def _box_mesh(b: colliders.Collider, inset: float = 0.0) -> TriMesh:
    """The box's surface where it is now (its pose: rotation and
    translation), ``inset`` m smaller on every side (for pictures: cloth
    lying exactly on a face would be hidden in it)."""
    s = b._spec
    m = geometry.box_mesh(center=(0.0, 0.0, 0.0), half_extents=tuple(h - inset for h in s["half_extents"]))
    v = m.vertices @ np.asarray(b.rotation).T + np.asarray(b.translation)
    return TriMesh(v, m.faces)


@register("eol_edge", "E1: cloth draped over a box edge, then pulled over it; EOL vertices slide along the edge",
          frames=48)
def eol_edge(*, out_dir: Path, frames: int = 48, backend: str = "cpu", scale: float = 1.0, progress: bool = False,
             mode: str = "eol", pull_start: float = 0.35, pull_speed: float = 0.1,
             sizing: Sequence[float] | None = None) -> Path:
    """Spec §9 E1 in y-up axes, its setup simplified: a 1 m × 1 m sheet
    lies 1 mm above the top of a box (top at y = 0, its sharp edge along z
    at x = 0) with 0.3 m of it beyond the edge; it folds over the edge and
    the part beyond hangs down. The sheet's far border (x = 0.7 m) is
    pinned; from ``pull_start`` s it moves at ``pull_speed`` m/s in +x,
    pulling material up over the edge. dt 5e-3 s. ([D] The spec's E1 holds
    the two corners of one side 4.9 cm above the top instead; the cloth
    then lifts off the edge near them and the crossing there comes and goes
    from step to step, which needs the full cleanup loop of spec §5.3 that
    is not written yet.) ``scale`` sets the resolution (1: a 24 × 24 grid,
    1152 faces; the paper's 2116 faces is about scale 1.35; at 12 × 12 the
    top facets where vertices collapse into the edge line; the scene runs
    without the sizing remesh); ``mode``: "eol", "lag_static",
    "lag_nonconformal" (the sizing remesh alone, default :class:`Sizing`),
    "lag_conformal_avg" or "lag_conformal_cone" (spec §12.1; in the last
    two the "EOL" metrics are of the conformal Lagrangian vertices);
    ``sizing`` ``(size_min, size_max)`` material m runs the sizing remesh of
    spec §5.6 every step in any mode (:class:`crumple.eol.Sizing` with those
    sizes; on the command line ``--set sizing=[0.02,0.045]``).

    Metrics per frame: EOL vertex count, the largest distance of an EOL
    vertex from the edge line (m), the deepest point inside the box (m),
    how far the cloth passes from the edge (m, the largest over
    cross-sections along it; E1 proxies (c) and (d)),
    the material position of the EOL line (the mean material x of the EOL
    vertices, m: it runs back at the pull speed while material crosses),
    the material hanging below the top (m: material area over the sheet's
    width)
    and the dihedral angle of the fold (degrees: the top part's normal
    against the hanging part's). At the end: the material pulled over the
    edge against the pull (E1 proxy (g): EOL slides, the conformal
    Lagrangian baseline with cone rows locks), the mean material distance
    and the largest world distance an EOL vertex that stayed EOL moved in
    one frame of the pull (they slide in material space and stay on the
    edge in the world)."""
    sc = positive(scale, "scale")
    choice(backend, "backend", ("cpu", "auto"))  # the EOL solver runs on the CPU
    mode_ = _mode(mode)
    n = max(4, int(round(24 * sc)))
    edge_x, top_y = 0.0, 0.0
    sheet = geometry.grid_mesh(size=(1.0, 1.0), resolution=(n, n), center=(edge_x + 0.2, top_y + 0.001, 0.5),
                               normal="y")
    sz = None
    if sizing is not None:
        try:
            vals = np.asarray(sizing, dtype=np.float64).ravel()
        except (TypeError, ValueError):
            vals = np.zeros(0)
        if vals.shape != (2,):
            raise errors.InvalidInputError(f"sizing must be (size_min, size_max) in m; got {sizing!r}")
        sz = eol.Sizing(size_min=float(vals[0]), size_max=float(vals[1]))
    sim = eol.Simulation(dt=5e-3, gravity=(0.0, -9.8, 0.0), mode=mode_, sizing=sz)
    cloth = sim.add_cloth(sheet, "eol_sheet")
    box_lo = np.array([edge_x, top_y - 1.0, -0.25])
    box_hi = np.array([edge_x + 1.2, top_y, 1.25])
    # Frictionless ("slip"), as the paper's edge scene.
    box = colliders.Box(center=tuple(0.5 * (box_lo + box_hi)), half_extents=tuple(0.5 * (box_hi - box_lo)),
                        mode="slip")
    sim.add_collider(box, name="box")
    x0 = cloth.positions
    far = np.flatnonzero(np.abs(x0[:, 0] - (edge_x + 0.7)) < 1e-9)
    cloth.pin(far)
    pinned_ids = cloth.vertex_ids[far]
    pulling = False
    hanging_at_pull = float("nan")
    thr = float(sim._params["collision_threshold"])

    def line_distance(x: np.ndarray) -> np.ndarray:
        return np.hypot(x[:, 0] - edge_x, x[:, 1] - top_y)

    def inside_depth(x: np.ndarray) -> float:
        d = np.minimum(x - box_lo, box_hi - x).min(axis=1)
        return float(max(0.0, d.max()))

    def edge_gap(x: np.ndarray) -> float:
        # E1 proxies (c)/(d) as one number: how far the cloth passes from the
        # box edge, the largest over cross-sections z = 0.1 … 0.9 m of the
        # distance from the edge to the cloth's section there. EOL cloth
        # passes through the edge (δ inside); a Lagrangian fold cuts the
        # corner by up to its edge length, lifted off both faces.
        f = cloth.faces
        worst = 0.0
        for z0 in np.linspace(0.1, 0.9, 17):
            d = x[f, 2] - z0  # (F, 3)
            cut = (d.min(axis=1) < 0) & (d.max(axis=1) > 0)
            best = np.inf
            for t in np.flatnonzero(cut):
                pts = []
                for a, b in ((0, 1), (1, 2), (2, 0)):
                    if d[t, a] * d[t, b] < 0:
                        w = d[t, a] / (d[t, a] - d[t, b])
                        pts.append(x[f[t, a], :2] + w * (x[f[t, b], :2] - x[f[t, a], :2]))
                if len(pts) != 2:
                    continue
                p, q = pts
                e = np.array([edge_x, top_y])
                seg = q - p
                s_ = float(np.clip((e - p) @ seg / max(seg @ seg, 1e-300), 0.0, 1.0))
                best = min(best, float(np.linalg.norm(p + s_ * seg - e)))
            if np.isfinite(best):
                worst = max(worst, best)
        return worst

    def hanging() -> float:
        # The material hanging below the top (E1 proxy (g), the same
        # measure in both modes): the material area of the faces whose
        # centre is more than 1 cm below the top, over the sheet's width.
        x, u, f = cloth.positions, cloth.material_coordinates, cloth.faces
        below = x[f].mean(axis=1)[:, 1] < top_y - 0.01
        a = _material_areas(u, f)
        return float(a[below].sum() / 1.0)

    def fold_angle() -> float:
        x, f = cloth.positions, cloth.faces
        c = x[f].mean(axis=1)
        nrm = np.cross(x[f[:, 1]] - x[f[:, 0]], x[f[:, 2]] - x[f[:, 0]])
        top = (c[:, 0] > edge_x + 0.05) & (np.abs(c[:, 1] - top_y) < 0.02)
        hang = (c[:, 0] < edge_x + 0.02) & (c[:, 1] < top_y - 0.05)
        if not top.any() or not hang.any():
            return float("nan")
        a, b = nrm[top].sum(axis=0), nrm[hang].sum(axis=0)
        cos = a @ b / (np.linalg.norm(a) * np.linalg.norm(b))
        return float(180.0 - math.degrees(math.acos(np.clip(cos, -1.0, 1.0))))

    series: dict[str, list[Any]] = {"time_s": [], "eol_vertices": [], "eol_line_distance_m": [],
                                    "deepest_m": [], "edge_gap_m": [], "crossed_m": [], "fold_angle_deg": [],
                                    "hanging_m": []}
    track: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    slid: list[float] = []
    drift: list[float] = []
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with frame_writer(out, "eol_edge", fps=1.0 / FRAME_DT, sim=sim) as writer:
        writer.write(sim.frame())
        with _progress_bar(frames, "eol_edge", enabled=progress) as bar:
            for _ in range(max(int(frames), 1)):
                end = sim.time + FRAME_DT
                if not pulling and end > pull_start:
                    sim.advance(max(0.0, pull_start - sim.time))
                    now = cloth.vertex_ids
                    idx = np.flatnonzero(np.isin(now, pinned_ids))
                    cloth.set_pin_targets(idx, cloth.positions[idx],
                                          np.tile([pull_speed, 0.0, 0.0], (len(idx), 1)))
                    pulling = True
                    hanging_at_pull = hanging()
                sim.advance(max(0.0, end - sim.time))
                x, u, e, ids = cloth.positions, cloth.material_coordinates, cloth.is_eol, cloth.vertex_ids
                series["time_s"].append(sim.time)
                series["eol_vertices"].append(int(e.sum()))
                series["eol_line_distance_m"].append(float(line_distance(x[e]).max()) if e.any() else 0.0)
                series["deepest_m"].append(inside_depth(x))
                series["edge_gap_m"].append(edge_gap(x))
                series["crossed_m"].append(float(u[e, 0].mean()) if e.any() else float("nan"))
                series["fold_angle_deg"].append(fold_angle())
                series["hanging_m"].append(hanging())
                if pulling:
                    for i in np.flatnonzero(e):
                        k = int(ids[i])
                        if k in track:
                            x0_, u0_ = track[k]
                            slid.append(float(np.linalg.norm(u[i] - u0_)))
                            drift.append(float(np.linalg.norm(x[i] - x0_)))
                    track = {int(ids[i]): (x[i].copy(), u[i].copy()) for i in np.flatnonzero(e)}
                writer.write(sim.frame())
                bar.update(1)
    from .. import viz

    # Seen from the side, a little from the front: the fold at the edge. The
    # box is drawn 3 mm inside its faces, or the cloth on them would hide in it.
    eye = (edge_x - 1.0, top_y + 0.55, 2.2)
    viz.screenshot({"cloth": TriMesh(cloth.positions, cloth.faces), "box": _box_mesh(box, 0.003)},
                   out / "eol_edge.png", camera=(eye, (edge_x + 0.35, top_y - 0.3, 0.5)), colors=[CLOTH, OBSTACLE])
    t = sim.stage_times()
    write_json(out / "metrics.json", {
        "scene": "eol_edge", "mode": mode_, "faces": int(len(cloth.faces)), "steps": sim.step_count,
        "sizing": None if sz is None else [sz.size_min, sz.size_max],
        "snap_depth_m": 0.1 * thr,
        "eol_line_distance_max_m": max(series["eol_line_distance_m"]),
        "deepest_max_m": max(series["deepest_m"]),
        # After the first 0.2 s of falling and folding.
        "edge_gap_max_m": max((g for t_, g in zip(series["time_s"], series["edge_gap_m"]) if t_ > 0.2), default=0.0),
        "eol_material_slide_per_frame_m": float(np.mean(slid)) if slid else 0.0,
        "eol_world_drift_per_frame_m": float(np.max(drift)) if drift else 0.0,
        # E1 proxy (g): material pulled over the edge against the pull.
        "pulled_over_m": hanging_at_pull - series["hanging_m"][-1] if pulling else 0.0,
        "pull_m": pull_speed * max(0.0, sim.time - pull_start),
        "seconds_per_step": sum(t.values()) / max(sim.step_count, 1),
        "timings_s": t, **series,
    })
    return out


_MODES: tuple[Mode, ...] = ("eol", "lag_static", "lag_nonconformal", "lag_conformal_avg", "lag_conformal_cone")


def _mode(mode: str) -> Mode:
    m = choice(mode, "mode", _MODES)
    return next(k for k in _MODES if k == m)


def _stretches(x: np.ndarray, u: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per face: the smallest and largest principal stretch of the
    deformation gradient F (world edges over material edges)."""
    dx = np.stack([x[f[:, 1]] - x[f[:, 0]], x[f[:, 2]] - x[f[:, 0]]], axis=2)  # (F, 3, 2)
    du = np.stack([u[f[:, 1]] - u[f[:, 0]], u[f[:, 2]] - u[f[:, 0]]], axis=2)  # (F, 2, 2)
    g = dx @ np.linalg.inv(du)
    s = np.linalg.svd(g, compute_uv=False)
    return s[:, -1], s[:, 0]


def _height_over(x: np.ndarray, f: np.ndarray, px: float, pz: float) -> float:
    """The cloth's height (y) over the plan point (px, pz): the highest face
    whose plan view holds it, interpolated; NaN where none does."""
    return float(_over(x, f, px, pz, x[:, 1:2])[0])


def _over(x: np.ndarray, f: np.ndarray, px: float, pz: float, values: np.ndarray) -> np.ndarray:
    """Per-vertex ``values`` (N, k) interpolated at the cloth's highest
    point over the plan point (px, pz) (the highest face whose plan view
    holds it); NaN where no face does."""
    a, b, c = x[f[:, 0]], x[f[:, 1]], x[f[:, 2]]

    def cross(p: np.ndarray, q: np.ndarray) -> np.ndarray:
        return p[:, 0] * q[:, 2] - p[:, 2] * q[:, 0]

    o = np.array([px, 0.0, pz])
    area = cross(b - a, c - a)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.stack([cross(b - o, c - o), cross(c - o, a - o), cross(a - o, b - o)], axis=1) / area[:, None]
    inside = np.flatnonzero(np.all(w >= -1e-12, axis=1) & (np.abs(area) > 0))
    if not len(inside):
        return np.full(values.shape[1], np.nan)
    y = (w[inside] * np.stack([a[inside, 1], b[inside, 1], c[inside, 1]], axis=1)).sum(axis=1)
    k = inside[int(np.argmax(y))]
    return np.asarray(w[k] @ values[f[k]], dtype=np.float64)


@register("eol_wire", "E2: a wire rises into a sheet held at its four corners; the bend at the wire stays sharp",
          frames=12)
def eol_wire(*, out_dir: Path, frames: int = 12, backend: str = "cpu", scale: float = 1.0, progress: bool = False,
             mode: str = "eol", wire_speed: float = 1.0) -> Path:
    """Spec §9 E2 in y-up axes: a 1 m × 1 m sheet at y = 0 over
    [0, 1] × [0, 1] in x and z, its four corners held; a straight wire
    along x at z = 0.51 starts 1 cm under it and rises at ``wire_speed``
    m/s (dt 1e-3 s as in the spec), so the bend over it gets sharp and
    material slides over it. ``scale`` sets the resolution (1: a 16 × 16
    grid, 512 faces); ``mode``: "eol" or a Lagrangian baseline
    ("lag_static", "lag_conformal_avg", "lag_conformal_cone").

    Metrics per frame: EOL vertices, their largest distance across the
    wire (m, along its normal × tangent: the equality row holds it at 0)
    and under it (m, beyond the snap δ = 0.1·thr), the cloth's lowest
    height over the wire along it minus the wire's height (m: a sharp EOL
    bend passes through the wire, δ under it), the cloth's highest point
    over the wire away from the borders (m: EOL −δ, the bend is at the wire; a Lagrangian
    cloth's crease is at its mesh rows, which ride above the wire by the
    slope times their distance from it: E2's "no sharp bend"), the smallest and largest principal stretch of the faces
    within 5 cm of the wire (E2's "no bunching": compression under 10 %),
    and the material position of the EOL line (the mean material z of the
    EOL vertices, m: it moves where material slides over the wire)."""
    sc = positive(scale, "scale")
    choice(backend, "backend", ("cpu", "auto"))
    mode_ = _mode(mode)
    speed = positive(wire_speed, "wire_speed")
    n = max(4, int(round(16 * sc)))
    sheet = geometry.grid_mesh(size=(1.0, 1.0), resolution=(n, n), center=(0.5, 0.0, 0.5), normal="y")
    sim = eol.Simulation(dt=1e-3, gravity=(0.0, -9.8, 0.0), mode=mode_)
    # Material coordinates (z, x): counter-clockwise for this grid, and u[:, 0] is z.
    cloth = sim.add_cloth(sheet, "eol_sheet", material_coordinates=sheet.vertices[:, [2, 0]])
    x0 = cloth.positions
    corner = (np.isclose(x0[:, 0], 0.0) | np.isclose(x0[:, 0], 1.0)) & (
        np.isclose(x0[:, 2], 0.0) | np.isclose(x0[:, 2], 1.0))
    cloth.pin(np.flatnonzero(corner))
    wire_z = 0.51
    sim.add_wire([(-0.25, -0.01, wire_z), (1.25, -0.01, wire_z)], normal=(0.0, 1.0, 0.0),
                 velocity=(0.0, speed, 0.0))
    thr = float(sim._params["collision_threshold"])
    series: dict[str, list[Any]] = {"time_s": [], "eol_vertices": [], "across_wire_m": [], "under_wire_m": [],
                                    "height_over_wire_m": [], "top_over_wire_m": [], "min_stretch_near_wire": [],
                                    "max_stretch_near_wire": [], "eol_line_material_z_m": []}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with frame_writer(out, "eol_wire", fps=1.0 / FRAME_DT, sim=sim) as writer:
        writer.write(sim.frame())
        with _progress_bar(frames, "eol_wire", enabled=progress) as bar:
            for _ in range(max(int(frames), 1)):
                sim.advance(FRAME_DT)
                x, u, f, e = cloth.positions, cloth.material_coordinates, cloth.faces, cloth.is_eol
                wy = float(sim.wires[0, 0, 1])
                series["time_s"].append(sim.time)
                series["eol_vertices"].append(int(e.sum()))
                series["across_wire_m"].append(float(np.abs(x[e, 2] - wire_z).max()) if e.any() else 0.0)
                series["under_wire_m"].append(float(max(0.0, (wy - x[e, 1]).max() - 0.1 * thr)) if e.any() else 0.0)
                h = [_height_over(x, f, px, wire_z) - wy for px in np.linspace(0.15, 0.85, 15)]
                series["height_over_wire_m"].append(float(np.nanmin(h)) if np.isfinite(h).any() else float("nan"))
                inner = np.abs(x[:, 0] - 0.5) < 0.4  # away from the borders, where §5.4 releases EOL vertices
                series["top_over_wire_m"].append(float(x[inner, 1].max()) - wy)
                near = np.abs(x[f].mean(axis=1)[:, 2] - wire_z) < 0.05
                lo, hi = _stretches(x, u, f)
                series["min_stretch_near_wire"].append(float(lo[near].min()) if near.any() else float("nan"))
                series["max_stretch_near_wire"].append(float(hi[near].max()) if near.any() else float("nan"))
                series["eol_line_material_z_m"].append(float(u[e, 0].mean()) if e.any() else float("nan"))
                writer.write(sim.frame())
                bar.update(1)
    from .. import viz

    w = sim.wires[0]
    wire_mesh = TriMesh(*eol.simulation._wire_drawing(w[0], w[1], radius=4e-3))
    eye = (1.6, float(w[0, 1]) + 0.35, -0.6)
    viz.screenshot({"cloth": TriMesh(cloth.positions, cloth.faces), "wire": wire_mesh}, out / "eol_wire.png",
                   camera=(eye, (0.5, float(w[0, 1]) - 0.2, 0.5)), colors=[CLOTH, (0.15, 0.15, 0.18)])
    t = sim.stage_times()
    write_json(out / "metrics.json", {
        "scene": "eol_wire", "mode": mode_, "faces": int(len(cloth.faces)), "steps": sim.step_count,
        "snap_depth_m": 0.1 * thr,
        "across_wire_max_m": max(series["across_wire_m"]), "under_wire_max_m": max(series["under_wire_m"]),
        "height_over_wire_last_m": series["height_over_wire_m"][-1],
        "top_over_wire_last_m": series["top_over_wire_m"][-1],
        "min_stretch_near_wire_min": float(np.nanmin(series["min_stretch_near_wire"])),
        "seconds_per_step": sum(t.values()) / max(sim.step_count, 1), "timings_s": t, **series,
    })
    return out


@register("eol_points", "E3: cloth dropped on three nails, then pulled over them by two corners", frames=36)
def eol_points(*, out_dir: Path, frames: int = 36, backend: str = "cpu", scale: float = 1.0, progress: bool = False,
               mode: str = "eol", pull_start: float = 0.25, pull_speed: float = 0.1) -> Path:
    """Spec §9 E3 in y-up axes: a 1 m × 1 m sheet at y = 0 over [0, 1] ×
    [0, 1] in x and z drops onto three points (nails) at (0.751, 0.751),
    (0.71, 0.22), (0.27, 0.51) in (x, z), 5 mm under it, normal +y. The
    two corners at z = 1 are held; from ``pull_start`` s they move at
    ``pull_speed`` m/s in +x, pulling the cloth over the nails. dt 2e-3 s.
    ``scale`` sets the resolution (1: a 16 × 16 grid); ``mode``: "eol" or
    a Lagrangian baseline.

    Metrics per frame: the EOL vertices (one per nail while the cloth rests
    on it), the largest distance of a point-EOL vertex from its tip in the
    plane (m; the tangential equality rows hold it at 0), the cloth's
    height over each tip (m: on it within the snap, not through it), and
    per nail the material distance slid past it since the pull started
    (m: the EOL vertex's material coordinate moves while it stays on the
    tip; a Lagrangian cloth snags), and per nail the material point of the
    cloth over its tip (m, the highest face over it; NaN off the cloth: the
    tracer of spec E3's throughput, the same measure in every mode)."""
    sc = positive(scale, "scale")
    choice(backend, "backend", ("cpu", "auto"))
    mode_ = _mode(mode)
    n = max(4, int(round(16 * sc)))
    sheet = geometry.grid_mesh(size=(1.0, 1.0), resolution=(n, n), center=(0.5, 0.0, 0.5), normal="y")
    sim = eol.Simulation(dt=2e-3, gravity=(0.0, -9.8, 0.0), mode=mode_)
    cloth = sim.add_cloth(sheet, "eol_sheet")
    x0 = cloth.positions
    held = np.flatnonzero(np.isclose(x0[:, 2], 1.0) & (np.isclose(x0[:, 0], 0.0) | np.isclose(x0[:, 0], 1.0)))
    cloth.pin(held)
    held_ids = cloth.vertex_ids[held]
    tips = np.array([(0.751, -0.005, 0.751), (0.71, -0.005, 0.22), (0.27, -0.005, 0.51)])
    for p in tips:
        sim.add_point(tuple(p), normal=(0.0, 1.0, 0.0))
    thr = float(sim._params["collision_threshold"])
    series: dict[str, list[Any]] = {"time_s": [], "eol_vertices": [], "tip_offset_m": [],
                                    "height_over_tips_m": [], "slid_m": [], "over_tip_material_m": []}
    at_pull: dict[int, np.ndarray] = {}
    pulling = False
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with frame_writer(out, "eol_points", fps=1.0 / FRAME_DT, sim=sim) as writer:
        writer.write(sim.frame())
        with _progress_bar(frames, "eol_points", enabled=progress) as bar:
            for _ in range(max(int(frames), 1)):
                end = sim.time + FRAME_DT
                if not pulling and end > pull_start:
                    sim.advance(max(0.0, pull_start - sim.time))
                    idx = np.flatnonzero(np.isin(cloth.vertex_ids, held_ids))
                    cloth.set_pin_targets(idx, cloth.positions[idx], np.tile([pull_speed, 0.0, 0.0], (len(idx), 1)))
                    pulling = True
                sim.advance(max(0.0, end - sim.time))
                x, u, f, e = cloth.positions, cloth.material_coordinates, cloth.faces, cloth.is_eol
                kinds, owner = cloth.feature_kinds, cloth.feature_colliders
                series["time_s"].append(sim.time)
                series["eol_vertices"].append(int(e.sum()))
                off = [float(np.hypot(*(x[i, [0, 2]] - tips[owner[i], [0, 2]]))) for i in np.flatnonzero(kinds == 3)]
                series["tip_offset_m"].append(max(off, default=0.0))
                series["height_over_tips_m"].append([_height_over(x, f, p[0], p[2]) - p[1] for p in tips])
                series["over_tip_material_m"].append([_over(x, f, p[0], p[2], u).tolist() for p in tips])
                slid = []
                for k in range(len(tips)):
                    on = np.flatnonzero((kinds == 3) & (owner == k))
                    if pulling and len(on):
                        at_pull.setdefault(k, u[on[0]].copy())
                        slid.append(float(np.linalg.norm(u[on[0]] - at_pull[k])))
                    else:
                        slid.append(0.0)
                series["slid_m"].append(slid)
                writer.write(sim.frame())
                bar.update(1)
    from .. import viz

    nails = {f"nail{k}": TriMesh(*eol.simulation._point_drawing(p, np.array([0.0, 1.0, 0.0]), length=0.6,
                                                                radius=6e-3))
             for k, p in enumerate(tips)}
    viz.screenshot({"cloth": TriMesh(cloth.positions, cloth.faces), **nails}, out / "eol_points.png",
                   camera=((-0.7, 0.8, -0.6), (0.55, -0.3, 0.5)),
                   colors=[CLOTH] + [(0.15, 0.15, 0.18)] * len(tips))
    t = sim.stage_times()
    pull = pull_speed * max(0.0, sim.time - pull_start)
    write_json(out / "metrics.json", {
        "scene": "eol_points", "mode": mode_, "faces": int(len(cloth.faces)), "steps": sim.step_count,
        "snap_depth_m": 0.1 * thr, "tip_offset_max_m": max(series["tip_offset_m"]),
        "slid_last_m": series["slid_m"][-1], "pull_m": pull,
        "seconds_per_step": sum(t.values()) / max(sim.step_count, 1), "timings_s": t, **series,
    })
    return out


@register("eol_moving_box", "E5/E6: a box lifts a sheet folded over two edges, then drops away and catches it",
          frames=36)
def eol_moving_box(*, out_dir: Path, frames: int = 36, backend: str = "cpu", scale: float = 1.0,
                   progress: bool = False, mode: str = "eol", rise_speed: float = 0.2, rise_time: float = 0.5,
                   drop_speed: float = 1.0) -> Path:
    """Spec §9 E5/E6 in y-up axes: a 1 m × 0.6 m sheet lies 1 mm over the
    top of a box 0.5 m wide in x (top at y = 0), 0.25 m of it beyond each
    of the two long edges; it folds over both. The box rises at
    ``rise_speed`` m/s for ``rise_time`` s (from 0.25 s), carrying it, then
    moves down at ``drop_speed`` m/s: the sheet lifts off (its EOL vertices
    are released), falls and lands on the box again (new EOL vertices on
    the moving edges). dt 2e-3 s. ``scale`` sets the resolution (1: 24 ×
    14); ``mode``: "eol" or a Lagrangian baseline.

    Metrics per frame: the box's height, the EOL vertices, their largest
    distance from the nearer edge line (m), the deepest cloth point inside
    the box (m), and the sheet's centre-of-mass height over the box top
    (m, of the part over the top: 0 while carried, positive while it
    flies). At the end: whether the
    EOL vertices were all released while the sheet was off the box and
    made again after it landed."""
    sc = positive(scale, "scale")
    choice(backend, "backend", ("cpu", "auto"))
    mode_ = _mode(mode)
    nx, nz = max(4, int(round(24 * sc))), max(3, int(round(14 * sc)))
    sheet = geometry.grid_mesh(size=(1.0, 0.6), resolution=(nx, nz), center=(0.0, 0.001, 0.0), normal="y")
    sim = eol.Simulation(dt=2e-3, gravity=(0.0, -9.8, 0.0), mode=mode_)
    cloth = sim.add_cloth(sheet, "eol_sheet")
    box = colliders.Box(center=(0.0, -0.5, 0.0), half_extents=(0.25, 0.5, 0.5), mode="slip")
    sim.add_collider(box, name="box")
    thr = float(sim._params["collision_threshold"])
    phase = "rest"
    start, stop = 0.25, 0.25 + float(rise_time)
    series: dict[str, list[Any]] = {"time_s": [], "box_top_m": [], "eol_vertices": [], "edge_distance_m": [],
                                    "deepest_m": [], "com_over_top_m": []}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)

    def go(t_end: float) -> None:
        nonlocal phase
        while sim.time < t_end - 1e-12:
            nxt = {"rest": start, "rise": stop}.get(phase, t_end)
            sim.advance(max(0.0, min(nxt, t_end) - sim.time))
            if sim.time >= nxt - 1e-12 and phase != "drop":
                phase = "rise" if phase == "rest" else "drop"
                v = rise_speed if phase == "rise" else -float(drop_speed)
                sim.colliders[0].set_velocity((0.0, v, 0.0))

    with frame_writer(out, "eol_moving_box", fps=1.0 / FRAME_DT, sim=sim) as writer:
        writer.write(sim.frame())
        with _progress_bar(frames, "eol_moving_box", enabled=progress) as bar:
            for _ in range(max(int(frames), 1)):
                go(sim.time + FRAME_DT)
                b = sim.colliders[0]
                top = float(b.translation[1]) + 0.5
                x, e = cloth.positions, cloth.is_eol
                series["time_s"].append(sim.time)
                series["box_top_m"].append(top)
                series["eol_vertices"].append(int(e.sum()))
                d = np.minimum(np.hypot(x[e, 0] - 0.25, x[e, 1] - top), np.hypot(x[e, 0] + 0.25, x[e, 1] - top))
                series["edge_distance_m"].append(float(d.max()) if e.any() else 0.0)
                series["deepest_m"].append(float(max(0.0, -b.signed_distance(x).min())))
                over = np.abs(x[:, 0]) < 0.2
                series["com_over_top_m"].append(float(np.average(x[over, 1], weights=cloth.masses[over])) - top
                                                if over.any() else float("nan"))
                writer.write(sim.frame())
                bar.update(1)
    from .. import viz

    b = sim.colliders[0]
    eye = (0.35, float(b.translation[1]) + 0.9, 1.9)
    viz.screenshot({"cloth": TriMesh(cloth.positions, cloth.faces), "box": _box_mesh(b, 0.003)},
                   out / "eol_moving_box.png", camera=(eye, (0.0, float(b.translation[1]) + 0.3, 0.0)),
                   colors=[CLOTH, OBSTACLE])
    t = sim.stage_times()
    ev = series["eol_vertices"]
    off = [i for i, (tt, c) in enumerate(zip(series["time_s"], ev)) if tt > stop and c == 0]
    write_json(out / "metrics.json", {
        "scene": "eol_moving_box", "mode": mode_, "faces": int(len(cloth.faces)), "steps": sim.step_count,
        "snap_depth_m": 0.1 * thr, "edge_distance_max_m": max(series["edge_distance_m"]),
        "deepest_max_m": max(series["deepest_m"]),
        "released_after_drop": bool(off), "landed_again": bool(off) and any(c > 0 for c in ev[off[0]:]),
        "seconds_per_step": sum(t.values()) / max(sim.step_count, 1), "timings_s": t, **series,
    })
    return out


@register("eol_tilting_box", "a sheet folded over a box's two long edges; the box tilts and the sheet slides "
          "along the turning edges (frictionless: at g sin(tilt)), or stays with friction", frames=24)
def eol_tilting_box(*, out_dir: Path, frames: int = 24, backend: str = "cpu", scale: float = 1.0,
                    progress: bool = False, mode: str = "eol", tilt: float = 0.25, tilt_speed: float = 1.0,
                    friction: float = 0.0) -> Path:
    """A turning box (spec §2.5's constant twist, §4.2) in y-up axes: a 1 m
    × 0.6 m sheet lies 1 mm over the top of a box 0.5 m wide in x, 0.2 m
    high and 1.8 m long in z (top at y = 0); it folds over the two long top
    edges (along z) and round the bottom ones. The box is keyframed: from
    0.3 s it turns about its own x axis (through its centre) at
    ``tilt_speed`` rad/s until it is tilted by ``tilt`` rad (its +z end
    down), then holds. The sheet's EOL vertices ride the
    turning edges and, with ``friction`` μ = 0 (a ``"slip"`` box), the whole
    sheet slides down along them at g·sin(tilt) once the box holds (the
    flaps hang symmetrically, so nothing else drives it); with μ above
    tan(tilt) (a ``"separate"`` box) it stays. dt 2e-3 s. ``scale`` sets
    the resolution (1: 24 × 14); ``mode``: "eol" or a Lagrangian baseline.

    Metrics per frame: the tilt (rad), the EOL vertices, the largest
    distance of those inside the box from the nearest of its four long
    edge lines (m; EOL vertices sit δ = 0.1·thr inside it, spec §4.4), the deepest
    cloth point inside the box (m), and the slide (m): the sheet's centre
    of mass along the box's length in its own frame (local z; positive is
    downhill). At the end: the slide from the first frame after the box
    stopped turning to the last, the acceleration fitted over those frames
    (m/s²; NaN with fewer than 4 of them: a slow or large tilt needs more
    ``frames``) and g·sin(tilt)."""
    sc = positive(scale, "scale")
    choice(backend, "backend", ("cpu", "auto"))
    mode_ = _mode(mode)
    mu = non_negative(friction, "friction")
    angle, speed = positive(tilt, "tilt"), positive(tilt_speed, "tilt_speed")
    if angle > 1.0:
        raise errors.InvalidInputError(f"tilt must be at most 1 rad (the sheet would slide off the box's end "
                                        f"within a few frames); got {angle}")
    nx, nz = max(4, int(round(24 * sc))), max(3, int(round(14 * sc)))
    sheet = geometry.grid_mesh(size=(1.0, 0.6), resolution=(nx, nz), center=(0.0, 0.001, 0.0), normal="y")
    g = 9.8
    sim = eol.Simulation(dt=2e-3, gravity=(0.0, -g, 0.0), mode=mode_)
    cloth = sim.add_cloth(sheet, "eol_sheet")
    half = (0.25, 0.1, 0.9)
    box = colliders.Box(center=(0.0, -0.1, 0.0), half_extents=half, mode="slip" if mu == 0 else "separate",
                        friction=mu)
    start, stop = 0.3, 0.3 + angle / speed
    # Keyframed: level until `start`, turned about x by `angle` at `stop`
    # (one constant angular velocity between the keys), held after.
    box.set_keyframes([start, stop], [box.translation, box.translation],
                      [np.eye(3), colliders.rotation((1.0, 0.0, 0.0), math.degrees(angle))])
    sim.add_collider(box, name="box")
    thr = float(sim._params["collision_threshold"])
    series: dict[str, list[Any]] = {"time_s": [], "tilt_rad": [], "eol_vertices": [], "edge_distance_m": [],
                                    "deepest_m": [], "slide_m": []}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)

    with frame_writer(out, "eol_tilting_box", fps=1.0 / FRAME_DT, sim=sim) as writer:
        writer.write(sim.frame())
        with _progress_bar(frames, "eol_tilting_box", enabled=progress) as bar:
            for _ in range(max(int(frames), 1)):
                sim.advance(FRAME_DT)
                b = sim.colliders[0]
                r = np.asarray(b.rotation)
                x, e = cloth.positions, cloth.is_eol
                p = (x - np.asarray(b.translation)) @ r  # the box's frame
                held = e & (b.signed_distance(x) <= 0.0)
                d = np.min([np.hypot(p[held, 0] - sx * half[0], p[held, 1] - sy * half[1])
                            for sx in (-1, 1) for sy in (-1, 1)], axis=0) if held.any() else np.zeros(1)
                series["time_s"].append(sim.time)
                series["tilt_rad"].append(float(np.arctan2(r[2, 1], r[1, 1])))
                series["eol_vertices"].append(int(e.sum()))
                series["edge_distance_m"].append(float(d.max()))
                series["deepest_m"].append(float(max(0.0, -b.signed_distance(x).min())))
                series["slide_m"].append(float(np.average(p[:, 2], weights=cloth.masses)))
                writer.write(sim.frame())
                bar.update(1)
    from .. import viz

    b = sim.colliders[0]
    viz.screenshot({"cloth": TriMesh(cloth.positions, cloth.faces), "box": _box_mesh(b, 0.003)},
                   out / "eol_tilting_box.png", camera=((1.3, 0.45, 1.0), (0.0, -0.25, 0.2)), colors=[CLOTH, OBSTACLE])
    t = sim.stage_times()
    hold = [(tt, s_) for tt, s_ in zip(series["time_s"], series["slide_m"]) if tt >= stop + FRAME_DT - 1e-9]
    accel = float(2.0 * np.polyfit([h[0] for h in hold], [h[1] for h in hold], 2)[0]) if len(hold) >= 4 else float("nan")
    write_json(out / "metrics.json", {
        "scene": "eol_tilting_box", "mode": mode_, "friction": mu, "tilt_rad": angle, "faces": int(len(cloth.faces)),
        "steps": sim.step_count, "snap_depth_m": 0.1 * thr, "edge_distance_max_m": max(series["edge_distance_m"]),
        "deepest_max_m": max(series["deepest_m"]),
        "slid_while_held_m": (hold[-1][1] - hold[0][1]) if len(hold) > 1 else 0.0,
        "acceleration_held_m_s2": accel, "g_sin_tilt_m_s2": g * math.sin(angle),
        "seconds_per_step": sum(t.values()) / max(sim.step_count, 1), "timings_s": t, **series,
    })
    return out


def four_turned_boxes(friction: float, *, resolution: int = 12, mode: str = "eol"
                      ) -> tuple[eol.Simulation, eol.Cloth]:
    """Spec §9 E8 in y-up axes: a 1 m sheet (``resolution`` × ``resolution``
    grid) 1 cm above four 1 m boxes, each turned 5° about the vertical,
    that fill its footprint's quadrants with a 0.2 m cross-shaped gap
    between them (centres at (±0.6, ±0.6) under the sheet's centre; [D]
    the spec gives no spacing: at 0.1 m the frictionless sheet stays lying
    on the tops, at 0.3 m μ = 0.8 does not hold it, and at the authors'
    0.58 m (specs/eol_reference.md) the sheet falls through unless μ ≥ 3;
    docs/limits.md). The sheet lands on the four inner corners and the
    edges around the gap. Boxes with ``friction`` μ (``"slip"`` at 0);
    dt 5e-3 s; ``mode``: "eol" or a Lagrangian baseline. Returns the
    simulation and its cloth."""
    mu = non_negative(friction, "friction")
    n = positive_int(resolution, "resolution")
    sheet = geometry.grid_mesh(size=(1.0, 1.0), resolution=(n, n), center=(0.0, 0.01, 0.0), normal="y")
    sim = eol.Simulation(dt=5e-3, mode=_mode(mode))
    cloth = sim.add_cloth(sheet, "eol_sheet")
    turn = colliders.rotation((0.0, 1.0, 0.0), 5.0)
    for k, (sx, sz) in enumerate(((-1.0, -1.0), (-1.0, 1.0), (1.0, -1.0), (1.0, 1.0))):
        sim.add_collider(colliders.Box(center=(0.6 * sx, -0.5, 0.6 * sz), half_extents=(0.5, 0.5, 0.5), rotation=turn,
                                       mode="slip" if mu == 0 else "separate", friction=mu), name=f"box{k}")
    return sim, cloth


@register("eol_friction", "E8: a sheet dropped on four turned boxes (setup=\"four_boxes\") or hung over a table "
          "edge (\"table\"): it slides off without friction and stays with it", frames=36)
def eol_friction(*, out_dir: Path, frames: int = 36, backend: str = "cpu", scale: float = 1.0,
                 progress: bool = False, mode: str = "eol", friction: float = 0.8, setup: str = "table") -> Path:
    """Spec §6.7 friction, in y-up axes, on one of two setups.

    ``setup="table"`` (the default; a simplified E8 with a closed form, the
    chain off a table): a 0.6 m × 0.4 m sheet lies 1 mm over a table top
    (y = 0) with 0.2 m of it beyond the edge (x = 0, along z); nothing
    holds it. It folds over the edge; with ``friction`` μ = 0 the hanging
    part pulls the rest after it, with μ above the hanging-to-lying ratio
    (0.5) it stays. dt 2e-3 s; ``scale`` 1: an 18 × 12 grid.

    ``setup="four_boxes"``: spec §9 E8, the sheet dropped on the corners
    of four boxes turned 5° (:func:`four_turned_boxes`; ``scale`` 1: a
    12 × 12 grid). With μ = 0 it slides into the gap between them and
    falls; with μ = 0.8 it comes to rest on them.

    ``mode``: "eol" or a Lagrangian baseline. Metrics per frame: the
    material hanging over the edge (m, table only: beyond the EOL line in
    material space; without EOL vertices, the material area of the faces
    more than 1 cm below the top over the sheet's width), the kinetic
    energy (J), the centre-of-mass height and the lowest point (m: the box
    tops are at y = 0), the EOL vertices and the deepest cloth vertex
    inside a box (m). A step that fails
    (``SolverError``: the remesher outrun by fast flow) ends the run early;
    ``failed_at_s`` says when."""
    sc = positive(scale, "scale")
    choice(backend, "backend", ("cpu", "auto"))
    choice(setup, "setup", ("table", "four_boxes"))
    mode_ = _mode(mode)
    mu = non_negative(friction, "friction")
    if setup == "four_boxes":
        sim, cloth = four_turned_boxes(mu, resolution=max(4, int(round(12 * sc))), mode=mode_)
        obstacles = [_box_mesh(b, 0.003) for b in sim.colliders]
        camera = ((1.2, 1.0, 1.6), (0.0, -0.15, 0.0))
    else:
        nx, nz = max(4, int(round(18 * sc))), max(3, int(round(12 * sc)))
        sheet = geometry.grid_mesh(size=(0.6, 0.4), resolution=(nx, nz), center=(0.1, 0.001, 0.0), normal="y")
        sim = eol.Simulation(dt=2e-3, gravity=(0.0, -9.8, 0.0), mode=mode_)
        # Material coordinates (z, x): counter-clockwise for this grid; u[:, 1] is x.
        cloth = sim.add_cloth(sheet, "eol_sheet", material_coordinates=sheet.vertices[:, [2, 0]])
        box = colliders.Box(center=(0.6, -0.5, 0.0), half_extents=(0.6, 0.5, 0.5), friction=mu)
        sim.add_collider(box, name="table")
        obstacles = [_box_mesh(box, 0.003)]
        camera = ((-0.9, 0.45, 1.1), (0.05, -0.2, 0.0))
    series: dict[str, list[Any]] = {"time_s": [], "kinetic_energy_j": [], "com_height_m": [], "lowest_m": [],
                                    "eol_vertices": [], "deepest_m": []}
    if setup == "table":
        series["hanging_m"] = []
    failed_at: float | None = None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)

    def hanging() -> float:
        # With EOL vertices on the edge: the material length beyond their
        # line (their mean material x less the sheet's border, −0.2 m);
        # without (Lagrangian modes, or once the sheet is off the table):
        # the material area of the faces more than 1 cm below the top over
        # the width (to a mesh cell).
        x, u, f, e = cloth.positions, cloth.material_coordinates, cloth.faces, cloth.is_eol
        if e.any() and cloth.feature_kinds[e].max() == 1:
            return float(u[e, 1].mean() - (0.1 - 0.3))
        below = x[f].mean(axis=1)[:, 1] < -0.01
        a = _material_areas(u, f)
        return float(a[below].sum() / 0.4)

    with frame_writer(out, "eol_friction", fps=1.0 / FRAME_DT, sim=sim) as writer:
        writer.write(sim.frame())
        with _progress_bar(frames, "eol_friction", enabled=progress) as bar:
            for _ in range(max(int(frames), 1)):
                try:
                    sim.advance(FRAME_DT)
                except errors.SolverError:
                    failed_at = sim.time
                    break
                x = cloth.positions
                series["time_s"].append(sim.time)
                if setup == "table":
                    series["hanging_m"].append(hanging())
                series["kinetic_energy_j"].append(sim.kinetic_energy())
                series["com_height_m"].append(float(np.average(x[:, 1], weights=cloth.masses)))
                series["lowest_m"].append(float(x[:, 1].min()))
                series["eol_vertices"].append(int(cloth.is_eol.sum()))
                series["deepest_m"].append(float(max(0.0, -min(float(b.signed_distance(x).min())
                                                                for b in sim.colliders))))
                writer.write(sim.frame())
                bar.update(1)
    from .. import viz

    viz.screenshot({"cloth": TriMesh(cloth.positions, cloth.faces),
                    **{f"box{k}": m for k, m in enumerate(obstacles)}},
                   out / "eol_friction.png", camera=camera, colors=[CLOTH] + [OBSTACLE] * len(obstacles))
    t = sim.stage_times()

    def last(key: str) -> float:
        return float(series[key][-1]) if series[key] else float("nan")

    table = {"hanging_first_m": series["hanging_m"][0] if series["hanging_m"] else float("nan"),
             "hanging_last_m": last("hanging_m")} if setup == "table" else {}
    write_json(out / "metrics.json", {
        "scene": "eol_friction", "setup": setup, "mode": mode_, "friction": mu, "faces": int(len(cloth.faces)),
        "steps": sim.step_count, "failed_at_s": failed_at, **table,
        "kinetic_energy_last_j": last("kinetic_energy_j"), "com_height_last_m": last("com_height_m"),
        "lowest_last_m": last("lowest_m"), "deepest_max_m": max(series["deepest_m"], default=0.0),
        "seconds_per_step": sum(t.values()) / max(sim.step_count, 1), "timings_s": t, **series,
    })
    return out


@register("eol_corner", "a sheet sliding over the upturned corner of a box; the corner vertex stays on the tip",
          frames=14)
def eol_corner(*, out_dir: Path, frames: int = 14, backend: str = "cpu", scale: float = 1.0, progress: bool = False,
               mode: str = "eol", friction: float = 0.0, speed: float = 0.2) -> Path:
    """Box corners (spec §4.1, §4.3 test 2, §6.1 corner rows) in y-up axes:
    a box 0.4 m on a side stands on one corner's opposite, its top corner
    pointing up 5 mm under a 0.6 m sheet that moves sideways at ``speed``
    m/s; the sheet lands on the corner, which gets a corner-EOL vertex (its
    three face normals as rows: it stays on the tip while the material
    slides through it), drapes over the three upper faces and edges. dt
    2e-3 s. ``friction`` is the box's Coulomb μ. ``scale`` sets the
    resolution (1: 16 × 16); ``mode``: "eol" or a Lagrangian baseline.
    ([D] The spec's E8, cloth dropped on the corners of four boxes turned
    5°, is in the tests (``test_eol.py``, ``test_e8_*``): there the cloth
    lies on the box tops around the corners and the edges take it before
    the corners hold it, so it is not this corner check.)

    Metrics per frame: corner vertices, edge vertices, the corner vertex's
    distance from the tip (m: δ = 0.1·thr along the corner normal), the
    material distance slid through it since it was made (m), the deepest
    cloth point inside the box (m) and the lowest cloth point (m)."""
    sc = positive(scale, "scale")
    choice(backend, "backend", ("cpu", "auto"))
    mode_ = _mode(mode)
    n = max(4, int(round(16 * sc)))
    sheet = geometry.grid_mesh(size=(0.6, 0.6), resolution=(n, n), center=(0.0, 0.0, 0.0), normal="y")
    sim = eol.Simulation(dt=2e-3, gravity=(0.0, -9.8, 0.0), mode=mode_, collapse_length=0.005)
    cloth = sim.add_cloth(sheet, "eol_sheet", velocity=(float(speed), 0.0, 0.0))
    d = np.ones(3) / math.sqrt(3.0)
    up = np.array([0.0, 1.0, 0.0])
    rot = colliders.rotation(np.cross(d, up), math.degrees(math.acos(float(d @ up))))
    h = 0.2
    tip = np.array([0.013, -0.005, 0.021])  # off the grid's vertices and edges
    center = tip - rot @ np.array([h, h, h])
    box = colliders.Box(center=tuple(center), half_extents=(h, h, h), rotation=rot, friction=float(friction))
    sim.add_collider(box, name="box")
    thr = float(sim._params["collision_threshold"])
    series: dict[str, list[Any]] = {"time_s": [], "corner_vertices": [], "edge_vertices": [], "corner_offset_m": [],
                                    "slid_m": [], "deepest_m": [], "lowest_m": []}
    first: dict[int, np.ndarray] = {}
    failed_at: float | None = None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with frame_writer(out, "eol_corner", fps=1.0 / FRAME_DT, sim=sim) as writer:
        writer.write(sim.frame())
        with _progress_bar(frames, "eol_corner", enabled=progress) as bar:
            for _ in range(max(int(frames), 1)):
                try:
                    sim.advance(FRAME_DT)
                except errors.SolverError:
                    failed_at = sim.time
                    break
                x, u, kinds, ids = cloth.positions, cloth.material_coordinates, cloth.feature_kinds, cloth.vertex_ids
                on = np.flatnonzero(kinds == 0)
                series["time_s"].append(sim.time)
                series["corner_vertices"].append(int(len(on)))
                series["edge_vertices"].append(int((kinds == 1).sum()))
                series["corner_offset_m"].append(float(np.linalg.norm(x[on] - tip, axis=1).max()) if len(on) else 0.0)
                slid = 0.0
                for i in on:
                    u0 = first.setdefault(int(ids[i]), u[i].copy())
                    slid = max(slid, float(np.linalg.norm(u[i] - u0)))
                series["slid_m"].append(slid)
                series["deepest_m"].append(float(max(0.0, -box.signed_distance(x).min())))
                series["lowest_m"].append(float(x[:, 1].min()))
                writer.write(sim.frame())
                bar.update(1)
    from .. import viz

    viz.screenshot({"cloth": TriMesh(cloth.positions, cloth.faces), "box": _box_mesh(sim.colliders[0], 0.003)},
                   out / "eol_corner.png", camera=((0.9, 0.45, 1.0), (0.0, -0.15, 0.0)), colors=[CLOTH, OBSTACLE])
    t = sim.stage_times()
    write_json(out / "metrics.json", {
        "scene": "eol_corner", "mode": mode_, "friction": float(friction), "faces": int(len(cloth.faces)),
        "steps": sim.step_count, "failed_at_s": failed_at, "snap_depth_m": 0.1 * thr,
        "corner_offset_max_m": max(series["corner_offset_m"], default=0.0),
        "slid_max_m": max(series["slid_m"], default=0.0),
        "deepest_max_m": max(series["deepest_m"], default=0.0),
        "seconds_per_step": sum(t.values()) / max(sim.step_count, 1), "timings_s": t, **series,
    })
    return out


@register("eol_crease", "beyond the paper: a denim sheet held over a box edge, then let go; a longer hold keeps a "
          "sharper crease (the cloth module's wrinkles on the EOL hinges)", frames=60)
def eol_crease(*, out_dir: Path, frames: int = 60, backend: str = "cpu", scale: float = 1.0, progress: bool = False,
               hold_time: float = 200.0, material: str = "denim", wrinkles: bool = True, release_at: float = 0.5,
               friction: float = 0.0) -> Path:
    """Issue 16's "beyond the paper" item: a 0.5 m × 0.5 m sheet of
    ``material`` (a :class:`crumple.cloth.Material` preset) lies 1 mm over
    the top of a box, half of it beyond the sharp edge (along z at x = 0);
    it folds over the edge, where its EOL vertices bend it exactly, its far
    border held on the top. The
    hinges run the cloth module's persistent wrinkles (``wrinkles=False``:
    the paper's elastic bending). The last 20 steps before ``release_at`` s
    add ``hold_time`` s of dwell to every hinge's clocks (the hold-time warp,
    spec persistent_wrinkles §4.6; 0 = a short hold of ``release_at`` s).
    At ``release_at`` (or within 20 steps after it, as frames fall) the box
    is removed and the border let go: the sheet
    falls freely, so
    gravity does not bend it and only its own moments unfold the crease.
    ``scale`` sets the resolution (1: 16 × 16 quads); dt 2e-3 s.
    ``friction`` is the box's Coulomb μ (0: frictionless, the paper's).

    Metrics: the crease line (the hinges between the vertices that were EOL
    at release, followed by id) — its mean angle at release
    (``crease_held_rad``), per frame (``crease_rad``), and its mean over the
    last second after the release (``crease_kept_rad``: the angle the
    swinging crease centres on; measured at scale 1: -0.45 rad after a
    200 s hold, -0.07 after a short one, -0.10 elastic); the largest plastic angle
    (``plastic_angle_max_rad``)."""
    sc = positive(scale, "scale")
    choice(backend, "backend", ("cpu", "auto"))
    if not (math.isfinite(hold_time) and hold_time >= 0.0):
        raise errors.InvalidInputError(f"hold_time must be >= 0 s; got {hold_time!r}")
    positive(release_at, "release_at")
    mu = non_negative(friction, "friction")
    n = max(4, int(round(16 * sc)))
    sheet = geometry.grid_mesh(size=(0.5, 0.5), resolution=(n, n), center=(0.0, 0.001, 0.25), normal="y")
    sim = eol.Simulation(dt=2e-3, gravity=(0.0, -9.8, 0.0), mode="eol")
    from ..cloth import Wrinkles

    cloth = sim.add_cloth(sheet, material, wrinkles=Wrinkles() if wrinkles else None)
    box = colliders.Box(center=(0.5, -0.5, 0.25), half_extents=(0.5, 0.5, 0.5),
                        mode="slip" if mu == 0.0 else "separate", friction=mu)
    sim.add_collider(box, name="box")
    # The far border is held on the top (the frictionless box would let the
    # hanging half pull the sheet off) until the release.
    x0 = cloth.positions
    cloth.pin(np.flatnonzero(x0[:, 0] > x0[:, 0].max() - 1e-9))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    line: np.ndarray = np.zeros(0, dtype=np.uint32)
    held = float("nan")
    released, released_at = False, float("inf")
    series: dict[str, list[float]] = {"time_s": [], "crease_rad": [], "eol_vertices": []}

    def crease() -> float:
        if line.size == 0:
            return float("nan")
        ids = cloth.vertex_ids
        h = cloth.hinges
        on = np.isin(ids[h[:, 0]], line) & np.isin(ids[h[:, 1]], line)
        return float(cloth.hinge_angles[on].mean()) if on.any() else float("nan")

    with frame_writer(out, "eol_crease", fps=1.0 / FRAME_DT, sim=sim) as writer:
        writer.write(sim.frame())
        with _progress_bar(frames, "eol_crease", enabled=progress) as bar:
            for _ in range(max(int(frames), 1)):
                end = sim.time + FRAME_DT
                if not released and end >= release_at - 1e-9:
                    # The hold's last 20 steps, taken one by one so that the
                    # warp is spent on them whatever the frame layout (the
                    # release may come up to 20 steps after release_at).
                    warp_from = release_at - 20 * sim.dt
                    if sim.time < warp_from:
                        sim.advance(warp_from - sim.time)
                    if wrinkles and hold_time > 0.0:
                        sim.hold_warp(hold_time / 20.0, 20)
                    for _ in range(20):
                        sim.step()
                    line = cloth.vertex_ids[cloth.is_eol]
                    held = crease()
                    sim.remove_collider(0)
                    cloth.release()
                    released, released_at = True, sim.time
                sim.advance(max(0.0, end - sim.time))
                series["time_s"].append(sim.time)
                series["crease_rad"].append(crease())
                series["eol_vertices"].append(int(cloth.is_eol.sum()))
                writer.write(sim.frame())
                bar.update(1)
    from .. import viz

    x = cloth.positions
    c = x.mean(axis=0)
    # Nearly along the crease line (z), a little from above and the side:
    # the sheet's profile shows the kept angle and its surface the crease
    # (straight along z, the sheet was a line at this distance).
    viz.screenshot({"cloth": TriMesh(x, cloth.faces)}, out / "eol_crease.png",
                   camera=((c[0] + 0.35, c[1] + 0.3, c[2] + 0.9), tuple(c)), colors=[CLOTH])
    last = [a for t_, a in zip(series["time_s"], series["crease_rad"]) if t_ > max(sim.time - 1.0, released_at)]
    write_json(out / "metrics.json", {
        "scene": "eol_crease", "material": material, "wrinkles": bool(wrinkles), "hold_s": hold_time, "friction": mu,
        "faces": int(len(cloth.faces)), "steps": sim.step_count, "crease_line_vertices": int(line.size),
        "released_at_s": released_at,
        "crease_held_rad": held,
        "crease_kept_rad": float(np.nanmean(last)) if last else float("nan"),
        "plastic_angle_max_rad": float(np.abs(cloth.plastic_angles).max()) if wrinkles else 0.0,
        **series,
    })
    return out
