"""Built-in shape-matching scenes (Chentanez, Müller, Macklin 2016; spec
``shape_matching.md`` §10–§11), each a figure of the paper at laptop size.

Every scene builds a :class:`crumple.pbd.Simulation` at the paper's
spacing r = 0.1 m and step 1/60 s, writes every frame (30 per second: two
steps each) through the frame stream, renders the last frame to
``<scene>.png`` and writes ``metrics.json``. Procedural closed meshes stand
in for the paper's scanned models; every scene also takes a user's mesh
file (``mesh=PATH``, any format :func:`crumple.io.load_mesh` reads), which is
scaled to the default body's size.

====================  ==========================================  ===========
scene                 what                                        wall (s)
====================  ==========================================  ===========
pbd_shot              a ball dented by projectiles (Fig. 1/4)     ~5
pbd_drop_sweep        balls dropped over ν or κ (Figs. 2–3)       ~15
pbd_taffy             a bar pulled and twisted to 5× (Fig. 6)     ~25
pbd_cut               a block cut by moving bars (Fig. 5)         ~10
pbd_dough             dough squeezed, rolled, folded, split       ~20
                      (Fig. 7)
====================  ==========================================  ===========
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import colliders, geometry, io, pbd
from .._checks import choice, positive, positive_int
from .._progress import progress as _progress_bar
from ..errors import InvalidInputError
from ..frames import collider_part
from ..geometry import TriMesh
from . import frame_writer, register
from ._harness import GROUND, OBSTACLE, Prop, write_json

__all__ = ["FRAME_DT", "pbd_shot", "pbd_drop_sweep", "pbd_taffy", "pbd_cut", "pbd_dough", "body_mesh", "bar_mesh",
           "dent_depth", "enclosed_volume", "longest_edge"]

FRAME_DT = 1.0 / 30.0
"""Frame length, s: two steps of the paper's 1/60 s."""

R = 0.1
"""The paper's particle spacing r, m."""

BODY = (0.45, 0.78, 0.62)


def body_mesh(mesh: str | Path | None, center: Sequence[float], radius: float) -> TriMesh:
    """The scene's body: a UV sphere of ``radius`` at ``center`` (m), or the
    user's mesh file scaled so its bounding sphere has that radius and
    moved there."""
    if mesh is None:
        n = max(12, int(round(8 * radius / R)))
        return geometry.uv_sphere(center=tuple(center), radius=radius, n_lat=n, n_lon=2 * n)
    m = io.load_mesh(mesh)
    v = np.asarray(m.vertices)
    c = 0.5 * (v.min(axis=0) + v.max(axis=0))
    s = radius / max(float(np.linalg.norm(v - c, axis=1).max()), 1e-12)
    return TriMesh((v - c) * s + np.asarray(center, dtype=np.float64), m.faces)


def _ground() -> colliders.Plane:
    return colliders.Plane(point=(0, 0, 0), normal=(0, 1, 0), mode="separate", friction=0.5)


def _ground_prop(half: float) -> Prop:
    return Prop("ground", lambda: geometry.box_mesh(center=(0, -0.02, 0), half_extents=(half, 0.02, half)),
                color=GROUND)


def _play(name: str, sim: pbd.Simulation, *, out_dir: Path, frames: int, progress: bool,
          props: Sequence[Prop] = (), camera: Any = None,
          before_step: Callable[[float], None] | None = None,
          after_frame: Callable[[], None] | None = None) -> Path:
    """Run ``frames`` frames of ``FRAME_DT``, writing every frame (frame 0 is
    the initial state) and a picture of the last one; returns ``out_dir``.
    ``before_step(t1)`` runs before every step ending at time ``t1`` s (to
    move pins), ``after_frame()`` after every frame (to measure)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with frame_writer(out_dir, name, fps=1.0 / FRAME_DT, sim=sim) as writer:
        writer.write(sim.frame())
        with _progress_bar(frames, name, enabled=progress) as bar:
            for _ in range(frames):
                if before_step is None:
                    sim.advance(FRAME_DT)
                else:
                    end = sim.time + FRAME_DT
                    while end - sim.time > 1e-9:
                        h = min(sim.dt, end - sim.time)
                        before_step(sim.time + h)
                        sim.step(h)
                if after_frame is not None:
                    after_frame()
                writer.write(sim.frame())
                bar.update(1)
    _picture(sim, out_dir / f"{name}.png", props, camera)
    return out_dir


def _picture(sim: pbd.Simulation, path: Path, props: Sequence[Prop], camera: Any) -> Path:
    from .. import viz

    items: dict[str, Any] = {b.name: b.surface for b in sim.objects}
    colors = [BODY] * len(items)
    for p in props:
        if p.visible():
            items[p.name] = p.mesh()
            colors.append(p.color)
    return viz.screenshot(items, path, camera=camera, colors=colors)


def longest_edge(surface: TriMesh) -> float:
    """The longest edge of ``surface``, m."""
    v = np.asarray(surface.vertices, dtype=np.float64)
    f = np.asarray(surface.faces)
    if len(f) == 0:
        return 0.0
    e = v[f] - v[np.roll(f, -1, axis=1)]
    return float(np.sqrt((e * e).sum(axis=2).max()))


def dent_depth(surface: TriMesh, center: Sequence[float], direction: Sequence[float], radius: float) -> float:
    """How far (m) the surface under ``direction`` from ``center`` sits
    inside the sphere of ``radius``: the largest inward offset of the
    vertices within 30° of the direction, relative to ``radius``."""
    v = np.asarray(surface.vertices) - np.asarray(center, dtype=np.float64)
    d = np.asarray(direction, dtype=np.float64)
    d = d / np.linalg.norm(d)
    dist = np.linalg.norm(v, axis=1)
    cosang = (v @ d) / np.maximum(dist, 1e-12)
    near = cosang > math.cos(math.radians(30.0))
    if not near.any():
        return 0.0
    return float(radius - dist[near].min())


@register("pbd_shot", "Fig. 1/4: a ball dented by projectiles that cross its surface and withdraw", frames=60,
          backends=("cpu", "gpu"))
def pbd_shot(*, out_dir: Path, frames: int = 60, backend: str = "cpu", scale: float = 1.0,
             progress: bool = False, shots: int = 3, yield_strain: float = 0.1, mesh: str | None = None,
             use_gravity: bool = False, projectile_radius: float = 3.0 * R, depth: float = 7.0 * R) -> Path:
    """A ball of radius 10r (the armadillo material: K 0.1, ε_γ 0.1, ν 0.9)
    is hit by ``shots`` kinematic projectiles of radius ``projectile_radius``
    (m, 3r), one after the other from different sides, each crossing the
    surface at 5 m/s to ``depth`` (m, 7r) and withdrawing. Spec X9's shot is
    ``projectile_radius=2r, depth=3r``: its dent (0.1r) is too small to see
    in the picture, as a 2r projectile strains the 4r clusters little.
    ``yield_strain=inf`` gives the elastic reference. ``scale`` scales the
    ball (and so the particle count) at the paper's spacing. The picture
    looks at the first dent. ``use_gravity``: the ball rests on a ground
    plane under gravity (default: it floats, gravity off). Metrics: the
    dent depth under every shot (m and r), 2 s after it."""
    shots = positive_int(shots, "shots")
    pr, depth = positive(projectile_radius, "projectile_radius (m)"), positive(depth, "depth (m)")
    radius = 10.0 * R * positive(scale, "scale")
    center = (0.0, radius + (2.0 * R if use_gravity else 1.0), 0.0)
    sim = pbd.Simulation(spacing=R, resampling=False, gravity=(0, -9.81 if use_gravity else 0.0, 0), backend=backend)
    mat = pbd.Material.preset("armadillo", yield_strain=yield_strain)
    ball = sim.add_body(body_mesh(mesh, center, radius), mat, name="ball")
    props: list[Prop] = []
    if use_gravity:
        sim.add_collider(_ground(), name="ground")
        props.append(_ground_prop(radius * 2))
    directions = [(1.0, 0.3, 0.0), (-0.5, 0.2, 0.8), (0.0, 0.4, -1.0), (0.3, 1.0, 0.2), (-1.0, -0.2, -0.3)]
    speed = 5.0
    start = 0.1
    hit_dirs = []
    for k in range(shots):
        d = np.asarray(directions[k % len(directions)], dtype=np.float64)
        d /= np.linalg.norm(d)
        c = np.asarray(center)
        out = c + d * (radius + pr + R)
        deep = c + d * (radius - depth + pr)
        travel = float(np.linalg.norm(out - deep)) / speed
        t0 = start + k * 0.4
        proj = colliders.Sphere(center=tuple(out + d * 50.0), radius=pr, mode="slip")
        proj.set_keyframes([0.0, t0 - 1e-3, t0, t0 + travel, t0 + 2 * travel, t0 + 2 * travel + 1e-3],
                           [out + d * 50.0, out + d * 50.0, out, deep, out, out + d * 50.0])
        sim.add_collider(proj, name=f"projectile_{k}")
        hit_dirs.append(d)
    n_frames = max(int(frames), int(math.ceil((start + shots * 0.4 + 0.2) / FRAME_DT)))
    # Seen from above and well beside the first shot's direction: the dent is near the outline, where its shading shows.
    d0 = hit_dirs[0]
    eye = np.asarray(center) + 2.4 * radius * (d0 + np.array([0.0, 0.6, 0.0]) + 0.9 * np.cross(d0, [0.0, 1.0, 0.0]))
    _play("pbd_shot", sim, out_dir=out_dir, frames=n_frames, progress=progress, props=props,
          camera=(tuple(eye.tolist()), center))
    # Let the dents settle without projectiles, then measure each.
    for _ in range(shots):  # the projectiles were added last
        sim.remove_collider(len(sim.colliders) - 1)
    sim.advance(max(0.0, 2.0 - (sim.time - start)))
    c_now = np.asarray(ball.positions, dtype=np.float64).mean(axis=0)
    dents = [dent_depth(ball.surface, c_now.tolist(), d.tolist(), radius) for d in hit_dirs]
    write_json(Path(out_dir) / "metrics.json", {
        "scene": "pbd_shot", "shots": shots, "radius_m": radius, "spacing_m": R,
        "yield_strain": yield_strain, "particles": ball.num_particles, "clusters": ball.num_clusters,
        "dent_depth_m": dents, "dent_depth_r": [x / R for x in dents], "time_s": sim.time,
        "max_plastic_norm": float(ball.plastic_norms.max()),
    })
    return Path(out_dir)


#: The sweeps of Figs. 2–3 (spec §10.2): flow rate ν at two yields, and hardening rate κ.
NU_SWEEP = (0.1, 0.2, 0.5, 0.9)
KAPPA_SWEEP = (0.0, 0.1, 1.0, 5.0)


def drop_height_ratio(*, flow_rate: float, yield_strain: float, hardening_rate: float = 0.0, steps: int = 150,
                      resampling: bool = False, mesh: str | None = None, backend: str = "cpu") -> float:
    """Spec X4: a ball of radius 4.5r dropped from y = 1.0 onto the ground
    (K 0.9), ``steps`` steps of 1/60 s; its final height over its initial one."""
    sim = pbd.Simulation(spacing=R, resampling=resampling, backend=backend)
    sim.add_collider(_ground(), name="ground")
    mat = pbd.Material(shape_stiffness=0.9, yield_strain=yield_strain, flow_rate=flow_rate, hardening_rate=hardening_rate)
    ball = sim.add_body(body_mesh(mesh, (0.0, 1.0, 0.0), 4.5 * R), mat, name="ball")
    y = ball.positions[:, 1]
    h0 = float(y.max() - y.min())
    for _ in range(steps):
        sim.step()
    y = ball.positions[:, 1]
    return float(y.max() - y.min()) / h0


@register("pbd_drop_sweep", "Figs. 2-3: balls dropped on the ground over flow rates ν (two yields) and hardening rates κ",
          frames=45, backends=("cpu", "gpu"))
def pbd_drop_sweep(*, out_dir: Path, frames: int = 45, backend: str = "cpu", scale: float = 1.0,
                   progress: bool = False, parameter: str = "flow_rate", mesh: str | None = None) -> Path:
    """Balls of radius 4.5r (K 0.9) dropped from y = 1 m onto the ground,
    side by side, one per value of the sweep: ``parameter="flow_rate"`` runs
    ν = 0.1, 0.2, 0.5, 0.9 at ε_γ = 1e-4 (Fig. 2 top row; the bottom row's
    ε_γ = 1e-2 is in the metrics), ``parameter="hardening_rate"`` runs κ = 0, 0.1, 1, 5
    at ε_γ = 1e-4, ν = 0.9 (Fig. 3). Writes the frames of the side-by-side
    run, a plot of the final height ratio H/H0 (``sweep.png``) and
    ``metrics.json`` with every ratio (spec X4)."""
    parameter = choice(parameter, "parameter", ("flow_rate", "hardening_rate"))
    values = NU_SWEEP if parameter == "flow_rate" else KAPPA_SWEEP
    radius = 4.5 * R * positive(scale, "scale")
    sim = pbd.Simulation(spacing=R, resampling=False, backend=backend)
    sim.add_collider(_ground(), name="ground")
    gap = 2.5 * radius
    for k, v in enumerate(values):
        x = (k - 0.5 * (len(values) - 1)) * gap
        if parameter == "flow_rate":
            mat = pbd.Material(shape_stiffness=0.9, yield_strain=1e-4, flow_rate=v)
        else:
            mat = pbd.Material(shape_stiffness=0.9, yield_strain=1e-4, flow_rate=0.9, hardening_rate=v)
        sim.add_body(body_mesh(mesh, (x, 1.0, 0.0), radius), mat, name=f"ball_{k}")
    h0 = [float(np.ptp(b.positions[:, 1])) for b in sim.objects]
    steps = 150
    n_frames = max(int(frames), int(round(steps / 2)))
    _play("pbd_drop_sweep", sim, out_dir=out_dir, frames=n_frames, progress=progress,
          props=[_ground_prop(gap * len(values))])
    ratios = [float(np.ptp(b.positions[:, 1])) / h for b, h in zip(sim.objects, h0)]
    metrics: dict[str, Any] = {"scene": "pbd_drop_sweep", "parameter": parameter, "values": list(values),
                               "height_ratio": ratios, "steps": n_frames * 2}
    if parameter == "flow_rate":
        metrics["height_ratio_yield_1e-2"] = [drop_height_ratio(flow_rate=v, yield_strain=1e-2, mesh=mesh,
                                                                backend=backend) for v in values]
        metrics["height_ratio_elastic"] = drop_height_ratio(flow_rate=0.9, yield_strain=math.inf, mesh=mesh,
                                                            backend=backend)
    write_json(Path(out_dir) / "metrics.json", metrics)
    _plot(Path(out_dir) / "sweep.png", values, ratios, parameter,
          metrics.get("height_ratio_yield_1e-2"))
    return Path(out_dir)


def _plot(path: Path, x: Sequence[float], y: Sequence[float], sweep: str, y2: Sequence[float] | None) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.2), dpi=120)
    label = "ε_γ = 1e-4" if sweep == "flow_rate" else "ε_γ = 1e-4, ν = 0.9"
    ax.plot(x, y, "o-", color="tab:red", label=label)
    if y2 is not None:
        ax.plot(x, y2, "s--", color="tab:blue", label="ε_γ = 1e-2")
    ax.set_xlabel("flow rate ν" if sweep == "flow_rate" else "hardening rate κ (1/s)")
    if sweep == "hardening_rate":
        ax.set_xscale("symlog", linthresh=0.1)
    ax.set_ylabel("final height H / H0")
    ax.set_title("shape matching: ball drop (spec X4)")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def enclosed_volume(surface: TriMesh) -> float:
    """Volume (m³) enclosed by a closed, outward-wound triangle mesh."""
    v = np.asarray(surface.vertices, dtype=np.float64)
    f = np.asarray(surface.faces)
    a, b, c = v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)


def bar_mesh(mesh: str | Path | None, center: Sequence[float], half: Sequence[float], *,
             quad: float = 2.0 * R) -> TriMesh:
    """A box body: half extents ``half`` (m) at ``center``, in quads of
    about ``quad`` (m), or the user's mesh file scaled uniformly so its
    extent along x is the box's and moved there."""
    if mesh is None:
        n = [max(1, int(round(2.0 * h / quad))) for h in half]
        return geometry.box_mesh(center=tuple(center), half_extents=tuple(half), subdivisions=tuple(n))
    m = io.load_mesh(mesh)
    v = np.asarray(m.vertices)
    c = 0.5 * (v.min(axis=0) + v.max(axis=0))
    s = 2.0 * half[0] / max(float(np.ptp(v[:, 0])), 1e-12)
    return TriMesh((v - c) * s + np.asarray(center, dtype=np.float64), m.faces)


@register("pbd_taffy", "Fig. 6: a taffy bar gripped at both ends, pulled apart to 5x its length and twisted",
          frames=150, backends=("cpu", "gpu"))
def pbd_taffy(*, out_dir: Path, frames: int = 150, backend: str = "cpu", scale: float = 1.0,
              progress: bool = False, stretch_ratio: float = 5.0, turns: float = 0.5, resampling: bool = True,
              deletion_distance: float = 0.5, seed_distance: float = 1.35, mesh: str | None = None,
              surface_level: int | None = None) -> Path:
    """Spec X7 as a scene: a taffy bar 40r × 4r × 4r (K 0.99, ε_γ 1e-4,
    ν 0.99, volume correction) is gripped at both end layers; the grips
    move apart until the bar is ``stretch_ratio`` times its length and turn
    ``turns`` revolutions each about the pull axis, in opposite senses, over
    the run (``frames`` frames of 1/30 s: 5 s by default), like the arms of
    a taffy-pulling machine. Re-sampling (on by default; ``resampling=False``
    is spec X8) keeps the strand filled; ``deletion_distance`` and
    ``seed_distance`` (0.5 and 1.35 spacings here, the paper's 0.1 and 1
    double the particle density of the strand) are the simulation's options
    of those names. ``scale`` scales the bar's cross section.
    ``surface_level`` (default 1 with re-sampling, else 0): at level 1 the
    surface is remeshed every step (spec §8.6), so the strand keeps edges
    of at most ``max_edge`` (2 spacings) instead of a few long triangles.
    Metrics per frame: particle count, particles per volume (N r³/V)
    over its initial value, enclosed volume over its initial value, largest
    ‖F_P‖_F; at the end: the strand's length over the grips' separation,
    the largest gap between neighbouring particles (r), the surface's
    vertex count (and at the start) and longest edge (m)."""
    stretch_ratio = positive(stretch_ratio, "stretch_ratio")
    if stretch_ratio < 1.0:
        raise InvalidInputError(f"stretch_ratio is a length ratio ≥ 1; got {stretch_ratio}")
    sc = positive(scale, "scale")
    half = (20.0 * R, 2.0 * R * sc, 2.0 * R * sc)
    center = (0.0, 1.0, 0.0)
    level = (1 if resampling else 0) if surface_level is None else surface_level
    sim = pbd.Simulation(spacing=R, gravity=(0, 0, 0), resampling=resampling, backend=backend,
                         deletion_distance=deletion_distance, seed_distance=seed_distance, surface_level=level)
    mat = pbd.Material.preset("taffy")
    bar = sim.add_body(bar_mesh(mesh, center, half), mat, name="taffy")
    x0 = bar.positions.astype(np.float64)
    lo, hi = float(x0[:, 0].min()), float(x0[:, 0].max())
    grip = (x0[:, 0] <= lo + 0.5 * R) | (x0[:, 0] >= hi - 0.5 * R)
    start = x0[grip]
    bar.pin(np.flatnonzero(grip))
    length0 = hi - lo
    duration = frames * FRAME_DT
    c = np.asarray(center)

    def grips_at(t: float) -> np.ndarray:
        u = min(max(t / duration, 0.0), 1.0)
        side = np.sign(start[:, 0] - c[0])
        # The grips turn in opposite senses about the x axis through the centre.
        ang = side * 2.0 * math.pi * turns * u
        y, z = start[:, 1] - c[1], start[:, 2] - c[2]
        out = np.empty_like(start)
        out[:, 0] = start[:, 0] + side * 0.5 * (stretch_ratio - 1.0) * length0 * u
        out[:, 1] = c[1] + np.cos(ang) * y - np.sin(ang) * z
        out[:, 2] = c[2] + np.sin(ang) * y + np.cos(ang) * z
        return out

    def before_step(t1: float) -> None:
        bar.set_pin_targets(bar.pinned, grips_at(t1))

    v0 = enclosed_volume(bar.surface)
    n0 = bar.num_particles
    nv0 = len(bar.surface.vertices)
    series: dict[str, list[float]] = {"time_s": [], "particles": [], "density_ratio": [], "volume_ratio": [],
                                      "max_plastic_norm": []}

    def after_frame() -> None:
        n = bar.num_particles
        v = enclosed_volume(bar.surface)
        series["time_s"].append(sim.time)
        series["particles"].append(n)
        series["density_ratio"].append((n / v) / (n0 / v0))
        series["volume_ratio"].append(v / v0)
        series["max_plastic_norm"].append(float(bar.plastic_norms.max()))

    # The bar as it started, drawn below the strand for scale.
    start_bar = bar_mesh(mesh, (center[0], center[1] - 8.0 * half[1], center[2]), half)
    props = [Prop("initial_bar", lambda: start_bar, color=OBSTACLE)]
    _play("pbd_taffy", sim, out_dir=out_dir, frames=int(frames), progress=progress, before_step=before_step,
          after_frame=after_frame, props=props,
          camera=((0.0, 1.0 + 0.3 * stretch_ratio * length0, 0.7 * stretch_ratio * length0), center))
    x = bar.positions.astype(np.float64)
    free = np.ones(len(x), dtype=bool)
    free[bar.pinned] = False
    span = float(np.ptp(x[free, 0])) if free.any() else 0.0
    d = np.linalg.norm(x[free][:, None, :] - x[None, :, :], axis=2) if free.any() else np.zeros((0, 1))
    d[d == 0.0] = np.inf
    surface = bar.surface
    write_json(Path(out_dir) / "metrics.json", {
        "scene": "pbd_taffy", "stretch_ratio": stretch_ratio, "turns": turns, "resampling": resampling, "spacing_m": R,
        "deletion_distance": deletion_distance, "seed_distance": seed_distance,
        "particles_initial": n0, "particles_final": bar.num_particles, "clusters_final": bar.num_clusters,
        "length_ratio": span / (stretch_ratio * length0),
        "max_gap_r": float(d.min(axis=1).max() / R) if len(d) else 0.0,
        "surface_closed": bool(surface.is_closed), "surface_level": level,
        "surface_vertices_initial": nv0,
        "surface_vertices": len(surface.vertices), "longest_edge_m": longest_edge(surface),
        **series,
    })
    return Path(out_dir)


@register("pbd_cut", "Fig. 5: a block caught between moving blades that cut it into slices (surface level 2)",
          frames=60, backends=("cpu", "gpu"))
def pbd_cut(*, out_dir: Path, frames: int = 60, backend: str = "cpu", scale: float = 1.0,
            progress: bool = False, blades: int = 3, mesh: str | None = None) -> Path:
    """The cow of Fig. 5 (K 0.5, ε_γ 1e-4, ν 0.99; a 16r × 8r × 8r block
    stands in for the scan, or ``mesh``) floats without gravity; ``blades``
    thin blades across it press down into it (0.2–0.7 s), each cutting the
    block along its plane as its edge enters (:meth:`Body.cut`, spec §7's
    user cut: the surface splits and is capped, the clusters spanning the
    cut are removed), then the outer blades move outwards (0.9–1.9 s) and
    push the end slices away. Surface level 2. ``scale`` scales the block.
    Metrics per frame: particles, surface components, the widest gap
    between slices along x, largest ‖F_P‖; at the end, the pieces and
    whether the surface is closed."""
    sc = positive(scale, "scale")
    nb = positive_int(blades, "blades")
    half = (8.0 * R * sc, 4.0 * R * sc, 4.0 * R * sc)
    center = (0.0, 1.0, 0.0)
    sim = pbd.Simulation(spacing=R, surface_level=2, gravity=(0.0, 0.0, 0.0), backend=backend)
    cow = sim.add_body(bar_mesh(mesh, center, half, quad=R), "cow", name="cow")
    blade_half = (0.1 * R, 2.0 * half[1], half[2] + 2.0 * R)
    y_up = center[1] + half[1] + blade_half[1] + R
    y_in = center[1] + blade_half[1] - 0.5 * half[1]
    xs = [(k + 1) / (nb + 1) * 2.0 * half[0] - half[0] for k in range(nb)]
    handles = []
    for k, x in enumerate(xs):
        out = x + math.copysign(0.5 * half[0], x) if abs(x) > 1e-9 else x
        b = colliders.Box(center=(x, y_up, 0.0), half_extents=blade_half, friction=0.3)
        b.set_keyframes([0.0, 0.2, 0.7, 0.9, 1.9], [(x, y_up, 0), (x, y_up, 0), (x, y_in, 0), (x, y_in, 0),
                                                    (out, y_in, 0)])
        sim.add_collider(b, name=f"blade_{k}")
        handles.append(b)
    top = center[1] + half[1]
    cut = [False] * nb

    def before_step(t1: float) -> None:
        for k, b in enumerate(handles):
            edge = float(np.asarray(b.translation)[1]) - blade_half[1]
            if not cut[k] and edge <= top:
                cow.cut(point=(xs[k], 0.0, 0.0), normal=(1.0, 0.0, 0.0))
                cut[k] = True

    series: dict[str, list[float]] = {"time_s": [], "particles": [], "components": [], "widest_gap_m": [],
                                      "max_plastic_norm": []}

    def after_frame() -> None:
        x = np.sort(cow.positions[:, 0].astype(np.float64))
        series["time_s"].append(sim.time)
        series["particles"].append(len(x))
        # The tracker's own count (surface level 2 labels the pieces every step).
        series["components"].append(int(sim.stats()["surface_components"]))
        series["widest_gap_m"].append(float(np.diff(x).max()) if len(x) > 1 else 0.0)
        series["max_plastic_norm"].append(float(cow.plastic_norms.max()))

    def drawn(c: colliders.Collider) -> Callable[[], TriMesh]:
        def mesh() -> TriMesh:
            part = collider_part(c)
            return TriMesh(part.world_vertices(), part.faces)
        return mesh

    _play("pbd_cut", sim, out_dir=out_dir, frames=max(int(frames), 1), progress=progress,
          before_step=before_step, after_frame=after_frame, props=[Prop(f"blade_{k}", drawn(b)) for k, b in enumerate(handles)],
          camera=((0.0, 2.4, 3.0), center))
    write_json(Path(out_dir) / "metrics.json", {
        "scene": "pbd_cut", "spacing_m": R, "surface_level": 2, "blades": nb,
        "pieces": series["components"][-1], "surface_closed": bool(cow.surface.is_closed),
        "particles_final": cow.num_particles, "clusters_final": cow.num_clusters, **series,
    })
    return Path(out_dir)


@register("pbd_dough", "Fig. 7: a dough slab squeezed, rolled, folded over and split (surface level 2)",
          frames=120, backends=("cpu", "gpu"))
def pbd_dough(*, out_dir: Path, frames: int = 120, backend: str = "cpu", scale: float = 1.0,
              progress: bool = False, mesh: str | None = None) -> Path:
    """Fig. 7's dough (K 0.1, ε_γ 0.1, ν 0.9, volume correction) as a slab
    12r × 6r × 8r on the ground (or ``mesh``), worked in four phases of 1 s
    (``frames`` frames of 1/30 s; 120 = all four): squeezed between two
    plates closing along x; rolled flat by a pin travelling along x;
    folded over by a paddle under its left half turning 180° about a hinge
    above the dough's middle, which lays the flap on the right half
    (2–3.1 s; the rolling pin rolls and the paddle holds the dough: sticky
    contact); split at its middle by a thick blade pressed down through it
    to the ground (3.2–3.8 s), which cuts it as it enters (:meth:`Body.cut`,
    surface level 2).
    Metrics per frame: particles, height and length of the dough, surface
    components; at the end, the pieces and whether the surface is closed."""
    sc = positive(scale, "scale")
    # Six layers, not four: the four-layer slab was rolled to a sheet one or
    # two particles thick, too thin to fold (docs/limits.md).
    half = (6.0 * R * sc, 3.0 * R * sc, 4.0 * R * sc)
    center = (0.0, half[1] + 0.5 * R, 0.0)
    sim = pbd.Simulation(spacing=R, surface_level=2, backend=backend)
    sim.add_collider(_ground(), name="ground")
    dough = sim.add_body(bar_mesh(mesh, center, half, quad=R), "dough", name="dough")
    far = 3.0
    zs = 2.0 * half[2]
    # Phase 1 (0–1 s): plates close from the ends to 60 % of the length, then leave slowly.
    plate_half = (0.05, 2.0 * half[1], zs)
    for side in (-1.0, 1.0):
        x0 = side * (half[0] + R + plate_half[0])
        x1 = side * (0.6 * half[0] + plate_half[0])
        y = plate_half[1]
        p = colliders.Box(center=(x0, y, 0.0), half_extents=plate_half, friction=0.5)
        p.set_keyframes([0.0, 0.8, 0.85, 1.0], [(x0, y, 0), (x1, y, 0), (x1, y, 0), (side * far, y, 0)])
        sim.add_collider(p, name=f"plate_{'left' if side < 0 else 'right'}")
    # Phase 2 (1–2 s): a pin waiting beside the slab rolls along x at 55 % of its height, then lifts.
    pin_r = 1.5 * R
    y_pin = pin_r + 1.1 * half[1]
    span = 1.6 * half[0] + 2.0 * pin_r
    pin = colliders.Capsule(a=(-span, y_pin, -zs), b=(-span, y_pin, zs), radius=pin_r, mode="sticky")
    # It rolls: turning about z at -v/r keeps its lowest line still against
    # the dough (sticky contact, no sliding); keys every 0.05 s keep each
    # step of the shortest-arc interpolation under half a turn.
    t_roll = np.linspace(1.0, 1.9, 19)
    x_roll = -span + (t_roll - 1.0) / 0.9 * 2.0 * span
    rot_roll = [colliders.rotation((0, 0, 1), float(np.degrees(-(x + span) / pin_r))) @ pin.rotation
                for x in x_roll]
    pin.set_keyframes([0.0, *t_roll.tolist(), 2.1],
                      [(-span, y_pin, 0), *[(float(x), y_pin, 0) for x in x_roll], (span, far, 0)],
                      [pin.rotation, *rot_roll, rot_roll[-1]])
    sim.add_collider(pin, name="rolling_pin")
    # Phase 3 (2–3 s): a paddle flush with the ground under the left half
    # turns 170° about z at the dough's middle (placed when the phase starts).
    pad_t = 0.04
    # Sticky: the dough turns over with the paddle instead of sliding off it.
    paddle = colliders.Box(center=(-far, -pad_t, 0.0), half_extents=(half[0], pad_t, 2.0 * zs), mode="sticky")
    sim.add_collider(paddle, name="paddle")
    # Phase 4 (3–4 s): a blade down through the middle of the folded dough.
    # Thick, wider than the spread dough and pressed to the ground, so the
    # halves have no contact left through which level 2 joins them again.
    blade_half = (0.06, 2.5 * half[1], 2.0 * zs)
    blade = colliders.Box(center=(0.0, far, 0.0), half_extents=blade_half, friction=0.2)
    sim.add_collider(blade, name="blade")
    state = {"fold": False, "blade": False, "cut": False, "x_cut": 0.0}

    def before_step(t1: float) -> None:
        if not state["fold"] and t1 >= 2.0:
            x = dough.positions
            lo, hi = float(x[:, 0].min()), float(x[:, 0].max())
            mid = 0.5 * (lo + hi)
            ph = half[0]  # the paddle's half length: it reaches under the whole left half
            # The hinge sits above the middle, at the height that turns the
            # flap's lowest particles to 3r above the right half's top ones:
            # the flap is laid on the right half and the paddle stops above
            # the stack. A hinge on the ground swept the paddle through the
            # right half and flung the slab; one that turned the flap to 1r
            # above pressed the stack into a thin rim the surface could not
            # follow (a sawtooth edge, 6 pieces at the end).
            ys = x[:, 1]
            hinge = np.array([mid, 0.5 * (float(ys.max()) + 3.0 * R + float(ys.min())), 0.0])
            # Eased in and out (smoothstep) over 180°, so the flap is laid down, not thrown.
            u = np.linspace(0.0, 1.0, 13)
            times = 2.0 + 1.1 * u
            trans, rots = [], []
            for a in 180.0 * u * u * (3.0 - 2.0 * u):
                rm = colliders.rotation((0, 0, -1), float(a))
                trans.append(hinge + rm @ (np.array([mid - ph, -pad_t, 0.0]) - hinge))
                rots.append(rm)
            paddle.set_keyframes([0.0, 1.99, *times.tolist(), 3.15, 3.6],
                                 [trans[0], trans[0], *trans, trans[-1], trans[-1] + np.array([0.0, far, 0.0])],
                                 [rots[0], rots[0], *rots, rots[-1], rots[-1]])
            state["fold"] = True
        if not state["blade"] and t1 >= 3.2:
            x = dough.positions
            xc = float(0.5 * (x[:, 0].min() + x[:, 0].max()))
            top = float(x[:, 1].max()) + 0.5 * R
            yb = top + blade_half[1]
            blade.set_keyframes([0.0, 3.2, 3.3, 3.8], [(xc, yb, 0), (xc, yb, 0), (xc, yb, 0),
                                                       (xc, blade_half[1], 0)])
            state.update(blade=True, x_cut=xc, top=top)
        if state["blade"] and not state["cut"]:
            edge = float(np.asarray(blade.translation)[1]) - blade_half[1]
            if edge <= state["top"] - R:
                dough.cut(point=(state["x_cut"], 0.0, 0.0), normal=(1.0, 0.0, 0.0))
                state["cut"] = True

    series: dict[str, list[float]] = {"time_s": [], "particles": [], "height_m": [], "length_m": [],
                                      "components": []}

    def after_frame() -> None:
        x = dough.positions
        series["time_s"].append(sim.time)
        series["particles"].append(len(x))
        series["height_m"].append(float(np.ptp(x[:, 1])))
        series["length_m"].append(float(np.ptp(x[:, 0])))
        series["components"].append(int(sim.stats()["surface_components"]))

    _play("pbd_dough", sim, out_dir=out_dir, frames=max(int(frames), 1), progress=progress,
          before_step=before_step, after_frame=after_frame, props=[_ground_prop(1.5)],
          camera=((0.8, 3.2, 3.4), (0.6, 0.0, 0.0)))
    write_json(Path(out_dir) / "metrics.json", {
        "scene": "pbd_dough", "spacing_m": R, "surface_level": 2,
        "pieces": series["components"][-1], "surface_closed": bool(dough.surface.is_closed),
        "particles_final": dough.num_particles, "clusters_final": dough.num_clusters,
        "initial_height_m": 2.0 * half[1], "initial_length_m": 2.0 * half[0], **series,
    })
    return Path(out_dir)
