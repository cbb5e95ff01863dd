"""Built-in MPM scenes (Jiang, Gast, Teran 2017), each a paper figure at laptop size.

Every scene builds a :class:`crumple.mpm.Simulation`, runs ``frames`` frames
of 1/24 s, writes each simulated object's frames as PLY into ``out_dir``
(cloth as triangle meshes ``cloth_00012.ply``, strands and sand as point
clouds; colliders as meshes, one file when static, one per frame when they
move) and renders the last frame to ``out_dir / "<scene>.png"``.

``scale`` is the knob toward the paper's size: the grid spacing is
``dx = base_dx / scale`` and mesh resolutions and strand counts grow with
``scale`` (so particle counts grow like ``scale**2``, the cost like
``scale**3``). The largest step ``dt_max`` follows the paper's Table 2 value
scaled with ``dx`` (explicit stability: the step shrinks in proportion to
the cell). Materials are the paper's Table 1 rows (spec ``mpm_anisotropic.md``
§6.1); where the paper gives none (sand, goo) the volumetric material keeps its
stiffness-to-density ratio at a density the Table 1 cloth can carry (see
each scene). Extra keyword options of a scene function (friction angle,
densities, speeds) pass through :func:`crumple.scenes.run`.

Wall time at ``scale=1`` with the default frames: ``time crumple run NAME``
on a 2-core machine (CPU backend, f32), including writing the frames and the
PNG, measured while other jobs shared the machine (expect ±30%):

====================  ======  =========  =====  ===========  ========
scene                 frames  particles  dx     dt_max (s)   wall (s)
====================  ======  =========  =====  ===========  ========
cloth_on_sphere       48      12 417     1/64   1.0e-3       9–15
curtain_ball          48      12 417     1/64   5.0e-4       21–31
cloth_stack           48       8 818     1/64   5.0e-4       14–16
friction_slope        16       5 617     1/64   5.0e-4       3–4
hair_tubes            48      26 000     1/64   4.5e-4       46–51
sand_on_cloth         48      11 043     1/64   3.1e-4       36–42
cloth_twister         48       4 980     1/64   3.6e-4       12
goo_on_curtain        24      12 363     1/64   4.2e-4       18
====================  ======  =========  =====  ===========  ========
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import colliders, geometry, io, mpm
from .._checks import positive
from .._progress import progress as _progress_bar
from ..geometry import Curves, TriMesh
from . import frame_writer, register
from ._harness import GROUND, OBSTACLE, Prop, write_json

__all__ = [
    "FRAME_DT",
    "cloth_on_sphere",
    "curtain_ball",
    "cloth_stack",
    "friction_slope",
    "hair_tubes",
    "sand_on_cloth",
    "cloth_twister",
    "goo_on_curtain",
]

FRAME_DT = 1.0 / 24.0
"""Frame length, s (24 frames per second)."""

F64 = npt.NDArray[np.float64]
Color = tuple[float, float, float]
Vec3 = tuple[float, float, float]

CLOTH: Color = (0.86, 0.37, 0.34)
CLOTH_2: Color = (0.30, 0.55, 0.80)
SAND: Color = (0.93, 0.76, 0.38)
GOO: Color = (0.20, 0.45, 0.90)
HAIR: Color = (0.55, 0.33, 0.17)
HAIR_2: Color = (0.95, 0.75, 0.30)

# A drawn collider is this many cells smaller than the real one: contact layers
# are about half a cell thick (spec §7), so cloth resting on a collider sits up
# to half a cell inside it and would be hidden by a surface drawn at full size.
_INSET = 1.0


# -- shared machinery --------------------------------------------------------


@dataclass
class _Shown:
    """A simulated object written every frame and drawn in the picture."""

    name: str
    obj: mpm.Cloth | mpm.Strands | mpm.Particles
    color: Color

    def item(self) -> Any:
        x = np.asarray(self.obj.positions, dtype=np.float64)
        if isinstance(self.obj, mpm.Cloth):
            return (x, self.obj.faces)
        if isinstance(self.obj, mpm.Strands):
            return Curves(x, self.obj.offsets)
        return x


@dataclass
class _Setup:
    """What a scene function builds; :func:`_play` runs it."""

    sim: mpm.Simulation
    shown: list[_Shown]
    props: list[Prop]
    camera: tuple[Vec3, Vec3]
    before_frame: Callable[[float], None] | None = None


def _play(name: str, setup: _Setup, *, out_dir: Path, frames: int, progress: bool) -> Path:
    """Run ``frames`` frames of ``FRAME_DT``, writing every frame (frame 0 is the
    initial state) and a picture of the last one; returns ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    sim = setup.sim
    # The frame stream names objects as the scene shows them.
    for s in setup.shown:
        s.obj.name = s.name
    with frame_writer(out_dir, name, fps=1.0 / FRAME_DT, sim=sim) as writer:
        writer.write(sim.frame())
        with _progress_bar(frames, name, enabled=progress) as bar:
            for _ in range(1, frames + 1):
                if setup.before_frame is not None:
                    setup.before_frame(sim.time)
                steps = sim.advance(FRAME_DT)
                writer.write(sim.frame())
                bar.set_postfix(steps=steps, refresh=False)
                bar.update(1)
    _picture(setup, out_dir / f"{name}.png")
    return out_dir


def _picture(setup: _Setup, path: Path) -> Path:
    from .. import viz

    items: dict[str, Any] = {}
    colors: list[Color] = []
    for s in setup.shown:
        items[s.name] = s.item()
        colors.append(s.color)
    for p in setup.props:
        items[p.name] = p.mesh()
        colors.append(p.color)
    return viz.screenshot(items, path, camera=setup.camera, colors=colors)


def _simulation(lo: Sequence[float], hi: Sequence[float], dx: float, *, backend: str, dt_max: float,
                **kw: Any) -> mpm.Simulation:
    """A simulation whose box holds ``[lo, hi]`` (m) plus the wall padding, with
    the largest step ``dt_max`` capped at the solver's default 1 ms."""
    pad = 4 * dx
    lower = tuple(float(v) - pad for v in lo)
    upper = tuple(float(v) + pad for v in hi)
    return mpm.Simulation(lower=lower, upper=upper, dx=dx, backend=backend, precision="f32",
                          dt_max=min(dt_max, 1e-3), **kw)


def _paper_dt(dt_paper: float, dx_paper: float, dx: float) -> float:
    """The paper's largest step (Table 2) carried to spacing ``dx``: ∝ dx."""
    return dt_paper * dx / dx_paper


def _res(n: float, scale: float, least: int = 4) -> int:
    return max(least, int(round(n * scale)))


def _sphere_prop(name: str, ball: colliders.Sphere, radius: float, dx: float) -> Prop:
    return Prop(name, lambda: geometry.uv_sphere(center=ball.translation, radius=radius - _INSET * dx,
                                                  n_lat=32, n_lon=64))


def _bar_prop(name: str, ends: Callable[[], F64], radius: float) -> Prop:
    """A thin rod between the two points ``ends() (2, 3)``: draws a held edge."""

    def mesh() -> TriMesh:
        a, b = ends()
        return geometry.cylinder_mesh(center=0.5 * (a + b), axis=b - a, radius=radius,
                                      height=float(np.linalg.norm(b - a)) + 4 * radius, n_around=16, n_along=1)

    return Prop(name, mesh)


def _ground_prop(size: float, height: float, *, rotation: F64 | None = None,
                 origin: Sequence[float] = (0.0, 0.0, 0.0)) -> Prop:
    """A square floor of side ``size`` (m) centred under the origin at ``height``
    (scenes draw it a cell below the real ground), turned by ``rotation`` about
    ``origin``."""

    def mesh() -> TriMesh:
        g = geometry.grid_mesh(size=(size, size), resolution=(1, 1), center=(0.0, height, 0.0))
        return g if rotation is None else _turned(g, rotation, origin)

    return Prop("ground", mesh, color=GROUND)


def _edge(mesh: TriMesh, axis: int, side: str) -> npt.NDArray[np.int64]:
    """Indices of the vertices with the largest (``side="max"``) or smallest
    (``"min"``) coordinate ``axis``: one edge row of a grid sheet."""
    v = mesh.vertices[:, axis]
    target = v.max() if side == "max" else v.min()
    return np.flatnonzero(np.abs(v - target) < 1e-9).astype(np.int64)


def _corners(mesh: TriMesh, radius: float = 0.0) -> npt.NDArray[np.int64]:
    """The vertices within ``radius`` (m) of the four corners of a flat
    rectangular sheet with normal y (the corner vertices alone for 0)."""
    v = mesh.vertices
    lo, hi = v.min(axis=0), v.max(axis=0)
    d = np.min([np.hypot(v[:, 0] - x, v[:, 2] - z) for x in (lo[0], hi[0]) for z in (lo[2], hi[2])], axis=0)
    return np.flatnonzero(d <= radius + 1e-9).astype(np.int64)


def _turned(mesh: TriMesh, rot: F64, origin: Sequence[float]) -> TriMesh:
    """``mesh`` turned by the rotation matrix ``rot`` about ``origin``."""
    o = np.asarray(origin, dtype=np.float64)
    return TriMesh((mesh.vertices - o) @ rot.T + o, mesh.faces)


def _scaled(material: Any, density: float) -> Any:
    """``material`` at ``density`` with every stress (moduli, yield stress,
    viscosity) scaled by the same factor, so it moves exactly as before under
    gravity; only its weight on the cloth changes."""
    f = density / material.density
    stress = {k: getattr(material, k) * f for k in ("youngs_modulus", "yield_stress", "viscosity")
              if hasattr(material, k)}
    return dataclasses.replace(material, density=density, **stress)


# -- scenes ------------------------------------------------------------------


@register("cloth_on_sphere", "Fig. 3: a square cloth dropped onto a rotating sphere (Cloth & Ball)", frames=48)
def cloth_on_sphere(*, out_dir: Path, frames: int, backend: str = "auto", scale: float = 1.0,
                    progress: bool = False, spin: float = 1.5, sphere_friction: float = 1.0,
                    ground_friction: float = 0.1) -> Path:
    """A 1 m square cloth (64×64 quads at scale 1) falls 0.3 m onto a sphere of
    radius 0.25 m spinning at ``spin`` rad/s about the vertical; high friction on
    the sphere, low on the ground (paper Fig. 3, spec E2). Cloth & Ball: E = 200,
    k = 100, ν_d = 0.7."""
    dx = 1.0 / 64.0 / scale
    n = _res(64, scale)
    r, c = 0.25, (0.0, 0.3, 0.0)
    sim = _simulation((-0.6, 0.0, -0.6), (0.6, 0.95, 0.6), dx, backend=backend,
                      dt_max=_paper_dt(1e-4, 1.5e-3, dx))
    mesh = geometry.grid_mesh(size=(1.0, 1.0), resolution=(n, n), center=(0.0, c[1] + r + 0.3, 0.0))
    cloth = sim.add_cloth(mesh, mpm.ClothMaterial.preset("cloth_ball"), rpic_damping=0.7)
    ball = colliders.Sphere(center=c, radius=r, mode="separate", friction=sphere_friction)
    if spin:
        ball.set_velocity(angular=(0.0, spin, 0.0))
    sim.add_collider(ball)
    sim.add_collider(colliders.Plane(point=(0, 0, 0), normal=(0, 1, 0), mode="separate", friction=ground_friction), name="ground")
    setup = _Setup(sim, [_Shown("cloth", cloth, CLOTH)], [_sphere_prop("sphere", ball, r, dx), _ground_prop(1.6, -dx)],
                   camera=((0.75, 0.75, 1.05), (0.0, 0.22, 0.0)))
    return _play("cloth_on_sphere", setup, out_dir=out_dir, frames=frames, progress=progress)


@register("curtain_ball", "Fig. 14: a curtain pinned along its top edge is hit by a moving ball (Cloth Curtain)",
          frames=48)
def curtain_ball(*, out_dir: Path, frames: int, backend: str = "auto", scale: float = 1.0,
                 progress: bool = False, ball_speed: float = 1.25) -> Path:
    """A 1 m × 1 m curtain hangs from its pinned top edge; after 0.3 s a ball of
    radius 0.15 m moves into it at ``ball_speed`` m/s, pushes it 0.3 m back
    and stays there (paper Fig. 14 right). Cloth Curtain: E = 400, k = 800, ν_d = 0.8."""
    dx = 1.0 / 64.0 / scale
    n = _res(64, scale)
    sim = _simulation((-0.6, 0.0, -0.6), (0.6, 1.1, 0.6), dx, backend=backend,
                      dt_max=_paper_dt(7e-5, 2.2e-3, dx))
    mesh = geometry.grid_mesh(size=(1.0, 1.0), resolution=(n, n), center=(0.0, 0.58, 0.0), normal="z")
    curtain = sim.add_cloth(mesh, mpm.ClothMaterial.preset("curtain"), rpic_damping=0.8)
    curtain.pin(_edge(mesh, 1, "max"))
    r, z0, z1, t_in = 0.15, -0.42, 0.3, 0.3
    ball = colliders.Sphere(center=(0.1, 0.45, z0), radius=r, mode="separate", friction=0.3)
    ball.set_keyframes([0.0, t_in, t_in + (z1 - z0) / positive(ball_speed, "ball_speed")], [(0.1, 0.45, z0), (0.1, 0.45, z0), (0.1, 0.45, z1)])
    sim.add_collider(ball)
    sim.add_collider(colliders.Plane(point=(0, 0, 0), normal=(0, 1, 0)), name="ground")
    setup = _Setup(sim, [_Shown("curtain", curtain, CLOTH)],
                   [_sphere_prop("ball", ball, r, dx), _ground_prop(1.4, -dx)],
                   camera=((1.4, 0.9, -1.5), (0.0, 0.48, 0.0)))
    return _play("curtain_ball", setup, out_dir=out_dir, frames=frames, progress=progress)


@register("cloth_stack", "Fig. 1/14 (E3): two sheets dropped on each other, then pushed by a sphere (Cloth Curtain)",
          frames=48)
def cloth_stack(*, out_dir: Path, frames: int, backend: str = "auto", scale: float = 1.0,
                progress: bool = False, gap_cells: float = 1.0, push: bool = True) -> Path:
    """Two 0.6 m sheets, the upper turned 45° and ``gap_cells`` cells above the
    lower, fall 0.1 m onto the ground (spec E3); with ``push`` a sphere then
    moves in from the side at 0.47 m/s after 0.4 s and pushes them into folds
    (paper Fig. 1 left).
    Cloth Curtain: E = 400, k = 800, Φ_F = 0, ν_d = 0.8."""
    dx = 1.0 / 64.0 / scale
    n = _res(38, scale)
    sim = _simulation((-0.65, 0.0, -0.5), (0.65, 0.4, 0.5), dx, backend=backend,
                      dt_max=_paper_dt(7e-5, 2.2e-3, dx))
    mat = mpm.ClothMaterial.preset("curtain")
    y0 = 0.1
    lower = geometry.grid_mesh(size=(0.6, 0.6), resolution=(n, n), center=(0.0, y0, 0.0))
    upper = _turned(geometry.grid_mesh(size=(0.6, 0.6), resolution=(n, n), center=(0.0, y0 + gap_cells * dx, 0.0)),
                    colliders.rotation((0, 1, 0), 45.0), (0.0, 0.0, 0.0))
    a = sim.add_cloth(lower, mat, rpic_damping=0.8)
    b = sim.add_cloth(upper, mat, rpic_damping=0.8)
    sim.add_collider(colliders.Plane(point=(0, 0, 0), normal=(0, 1, 0), friction=0.3), name="ground")
    props = [_ground_prop(1.4, -dx)]
    if push:
        r = 0.12
        ball = colliders.Sphere(center=(-0.55, r, 0.0), radius=r, mode="separate", friction=0.3)
        ball.set_keyframes([0.0, 0.4, 2.0], [(-0.55, r, 0.0), (-0.55, r, 0.0), (0.2, r, 0.0)])
        sim.add_collider(ball)
        props.append(_sphere_prop("ball", ball, r, dx))
    setup = _Setup(sim, [_Shown("lower", a, CLOTH), _Shown("upper", b, CLOTH_2)], props,
                   camera=((0.55, 0.7, 0.9), (0.22, 0.03, 0.0)))
    return _play("cloth_stack", setup, out_dir=out_dir, frames=frames, progress=progress)


@register("friction_slope", "Sec. 5.1 (E4): a small sheet slides down a sheet lying on a 15° slope; friction angle "
          "is an option", frames=16)
def friction_slope(*, out_dir: Path, frames: int, backend: str = "auto", scale: float = 1.0,
                   progress: bool = False, friction_angle: float = 0.0, slope: float = 15.0,
                   rpic_damping: float = 0.0) -> Path:
    """A 1.0 m × 0.4 m sheet lies on a sticky plane tilted by ``slope`` degrees;
    a 0.2 m × 0.2 m sheet starts one cell above its upper end and slides down.
    Layer friction Φ_F = ``friction_angle`` (0–45°) with γ = 500, k = 2000
    (spec E4): at 0° it slides (about 60% of the frictionless distance: the
    layers share grid nodes), at 45° (tan 45° = 1 > tan 15°) it barely moves.
    ``rpic_damping`` is ν_d, 0 by default: RPIC damping removes the non-rigid
    velocity inside a cell, which is exactly the sliding of one layer over the
    other (at ν_d = 0.8 the slider moves 7% of the frictionless distance)."""
    dx = 1.0 / 64.0 / scale
    rot = colliders.rotation((0, 0, 1), -slope)
    mat = mpm.ClothMaterial(density=2.0, youngs_modulus=400.0, poisson_ratio=0.3, normal_stiffness=2000.0,
                            shear_stiffness=500.0, friction_angle=friction_angle)
    base = geometry.grid_mesh(size=(1.0, 0.4), resolution=(_res(64, scale), _res(26, scale)),
                              center=(0.0, dx, 0.0))
    top = geometry.grid_mesh(size=(0.2, 0.2), resolution=(_res(13, scale), _res(13, scale)),
                             center=(-0.38, 2 * dx, 0.0))
    base, top = _turned(base, rot, (0, 0, 0)), _turned(top, rot, (0, 0, 0))
    drop = np.tan(np.radians(slope)) * 0.6
    sim = _simulation((-0.6, -drop - 0.1, -0.3), (0.6, drop + 0.15, 0.3), dx, backend=backend,
                      dt_max=_paper_dt(7e-5, 2.2e-3, dx))
    sheet = sim.add_cloth(base, mat, rpic_damping=rpic_damping)
    slider = sim.add_cloth(top, mat, rpic_damping=rpic_damping)
    normal = rot @ np.array([0.0, 1.0, 0.0])
    sim.add_collider(colliders.Plane(point=(0, 0, 0), normal=normal, mode="sticky"), name="ground")
    setup = _Setup(sim, [_Shown("sheet", sheet, CLOTH_2), _Shown("slider", slider, CLOTH)],
                   [_ground_prop(1.3, -dx, rotation=rot)], camera=((0.35, 0.75, 1.15), (0.0, -0.02, 0.0)))
    return _play("friction_slope", setup, out_dir=out_dir, frames=frames, progress=progress)


def hair_tube(center: Sequence[float], axis: Sequence[float], radius: float, length: float, count: int,
              segments: int, rings: int = 2) -> Curves:
    """A tube of hair (spec E7): ``count`` straight strands per ring on
    ``rings`` coaxial rings (radii ``radius`` down to ``radius / 2``, m) of
    ``length`` m along ``axis``, centred at ``center``, ``segments`` segments each."""
    ax = np.asarray(axis, dtype=np.float64)
    ax = ax / np.linalg.norm(ax)
    e1 = np.cross(ax, [0.0, 1.0, 0.0] if abs(ax[1]) < 0.9 else [1.0, 0.0, 0.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(ax, e1)
    roots = []
    for k in range(rings):
        rr = radius * (1.0 - 0.5 * k / max(rings - 1, 1))
        th = 2 * np.pi * (np.arange(count) + 0.5 * k) / count
        roots.append(np.asarray(center) - 0.5 * length * ax
                     + rr * (np.cos(th)[:, None] * e1 + np.sin(th)[:, None] * e2))
    return geometry.straight_curves(np.concatenate(roots), direction=ax, length=length, segments=segments)


@register("hair_tubes", "Fig. 13 (E7): a tube of hair strands dropped onto another (Hair Tubes)", frames=48)
def hair_tubes(*, out_dir: Path, frames: int, backend: str = "auto", scale: float = 1.0,
               progress: bool = False) -> Path:
    """Two tubes of straight strands (2 rings × 100 strands × 32 segments each
    at scale 1; spec E7 asks 200 × 30), radius 0.1 m, length 0.5 m, lying
    crosswise: the upper falls onto the lower one, which rests on the ground.
    Hair Tubes: k = 2000, γ = 10, E = 60, Φ_F = 15°, ν_d = 0.07."""
    dx = 1.0 / 64.0 / scale
    count, segs = _res(100, scale), _res(32, scale)
    R, L = 0.1, 0.5
    sim = _simulation((-0.45, 0.0, -0.45), (0.45, 0.65, 0.45), dx, backend=backend,
                      dt_max=_paper_dt(2e-4, 7e-3, dx))
    mat = mpm.CurveMaterial.preset("hair")
    lower = hair_tube((0.0, R + 2 * dx, 0.0), (1, 0, 0), R, L, count, segs, 2)
    upper = hair_tube((0.0, 3 * R + 0.15, 0.0), (0, 0, 1), R, L, count, segs, 2)
    a = sim.add_curves(lower, mat, rpic_damping=0.07)
    b = sim.add_curves(upper, mat, rpic_damping=0.07)
    sim.add_collider(colliders.Plane(point=(0, 0, 0), normal=(0, 1, 0)), name="ground")
    setup = _Setup(sim, [_Shown("lower", a, HAIR), _Shown("upper", b, HAIR_2)], [_ground_prop(1.0, -dx)],
                   camera=((0.5, 0.5, 0.72), (0.0, 0.08, 0.0)))
    return _play("hair_tubes", setup, out_dir=out_dir, frames=frames, progress=progress)


@register("sand_on_cloth", "Fig. 9 (E8): a sand column pours onto a hammock pinned at its corners (Cloth & Sand)",
          frames=48)
def sand_on_cloth(*, out_dir: Path, frames: int, backend: str = "auto", scale: float = 1.0,
                  progress: bool = False, sand_density: float = 5.0) -> Path:
    """A 0.1 m × 0.1 m × 0.3 m column of Drucker–Prager sand (about 8
    particles per cell, Poisson-disk sampled) falls onto a 0.6 m cloth whose
    four corners are clamped (the vertices within 5 cm of each corner are
    pinned: one pinned vertex per corner concentrates the whole weight on a
    single element, which a cloth of E = 200 Pa cannot carry). Cloth & Sand:
    E = 200, k = 40000 (stiff contact so sand does not stick), ν_d = 0. The
    paper gives no sand values: Klár et al.'s, with the density lowered to
    ``sand_density`` kg/m³ and every stress lowered in proportion (the sand
    flows exactly as Klár's would; the cloth could not carry sand of
    2200 kg/m³)."""
    dx = 1.0 / 64.0 / scale
    size = 0.6
    n = _res(38, scale)
    sim = _simulation((-0.45, 0.0, -0.45), (0.45, 0.95, 0.45), dx, backend=backend,
                      dt_max=_paper_dt(1e-4, 5e-3, dx))
    mesh = geometry.grid_mesh(size=(size, size), resolution=(n, n), center=(0.0, 0.55, 0.0))
    cloth = sim.add_cloth(mesh, mpm.ClothMaterial.preset("cloth_sand"), rpic_damping=0.0)
    cloth.pin(_corners(mesh, 0.05))
    lo, hi = (-0.05, 0.6, -0.05), (0.05, 0.9, 0.05)
    pts = geometry.sample_box(lower=lo, upper=hi, spacing=0.42 * dx, method="poisson", seed=7)
    sand = sim.add_granular(pts, _scaled(mpm.SandMaterial(), sand_density),
                            particle_volume=float(np.prod(np.subtract(hi, lo))) / len(pts))
    sim.add_collider(colliders.Plane(point=(0, 0, 0), normal=(0, 1, 0)), name="ground")
    setup = _Setup(sim, [_Shown("cloth", cloth, CLOTH_2), _Shown("sand", sand, SAND)], [_ground_prop(1.0, -dx)],
                   camera=((0.45, 1.25, 0.8), (0.0, 0.3, 0.0)))
    return _play("sand_on_cloth", setup, out_dir=out_dir, frames=frames, progress=progress)


@register("cloth_twister", "Fig. 4 (E9): a hanging cloth twisted by turning its pinned lower edge (Cloth Twister)",
          frames=48)
def cloth_twister(*, out_dir: Path, frames: int, backend: str = "auto", scale: float = 1.0,
                  progress: bool = False, turn_rate: float = 180.0, lift: float = 0.3) -> Path:
    """A 0.5 m wide, 0.8 m tall cloth hangs from its pinned top edge; its bottom
    edge is pinned too and turned about the vertical axis at ``turn_rate``
    degrees per second while rising ``lift`` m per turn, wringing the cloth
    (paper Fig. 4, spec E9). The pins follow the circle: each frame they are
    put on it with their tangential velocity. Cloth Twister: E = 200, k = 400,
    ν_d = 0.1."""
    dx = 1.0 / 64.0 / scale
    sim = _simulation((-0.4, 0.0, -0.4), (0.4, 1.0, 0.4), dx, backend=backend,
                      dt_max=_paper_dt(7e-5, 3e-3, dx))
    mesh = geometry.grid_mesh(size=(0.5, 0.8), resolution=(_res(32, scale), _res(51, scale)),
                              center=(0.0, 0.55, 0.0), normal="z")
    cloth = sim.add_cloth(mesh, mpm.ClothMaterial.preset("twister"), rpic_damping=0.1)
    top, bottom = _edge(mesh, 1, "max"), _edge(mesh, 1, "min")
    cloth.pin(top)
    cloth.pin(bottom)
    rest = mesh.vertices[bottom]
    omega = np.radians(turn_rate)
    rise = lift * omega / (2 * np.pi)

    def turn(t: float) -> None:
        c, s_ = np.cos(omega * t), np.sin(omega * t)
        x = np.stack([c * rest[:, 0] + s_ * rest[:, 2], rest[:, 1] + rise * t, -s_ * rest[:, 0] + c * rest[:, 2]],
                     axis=1)
        v = np.stack([omega * x[:, 2], np.full(len(x), rise), -omega * x[:, 0]], axis=1)
        cloth.set_pin_targets(bottom, x, v)

    top_ends = mesh.vertices[[top[0], top[-1]]]
    bars = [_bar_prop("top_bar", lambda: top_ends, 0.012),
            _bar_prop("bottom_bar", lambda: cloth.positions[[bottom[0], bottom[-1]]].astype(np.float64), 0.012)]
    setup = _Setup(sim, [_Shown("cloth", cloth, CLOTH)], bars, camera=((0.55, 0.75, 0.85), (0.0, 0.6, 0.0)),
                   before_frame=turn)
    return _play("cloth_twister", setup, out_dir=out_dir, frames=frames, progress=progress)


@register("goo_on_curtain", "Fig. 19: a goo blob thrown onto a curtain pinned along its top edge (Curtain & Goo)",
          frames=24)
def goo_on_curtain(*, out_dir: Path, frames: int, backend: str = "auto", scale: float = 1.0,
                   progress: bool = False, goo_density: float = 10.0, speed: float = 1.5) -> Path:
    """A 0.8 m curtain hangs from its pinned top edge; a goo ball of radius
    0.08 m is thrown at it at ``speed`` m/s, hits it, pushes it back and
    drags it down to the floor (the stiff contact keeps the goo from sticking
    to the cloth; paper Fig. 19 bottom). Curtain & Goo: E = 400, k = 40000,
    ν_d = 1. The paper gives no goo values: ours is a thick goo (at
    1000 kg/m³: E = 2000 Pa, yield stress 500 Pa so a 5 cm blob keeps its
    shape, viscosity 100 Pa·s) carried to ``goo_density`` kg/m³ with every
    stress lowered in proportion (it moves the same; see ``sand_on_cloth``)."""
    dx = 1.0 / 64.0 / scale
    n = _res(51, scale)
    sim = _simulation((-0.5, 0.0, -0.5), (0.5, 0.95, 0.5), dx, backend=backend,
                      dt_max=_paper_dt(2e-4, 7.5e-3, dx))
    mesh = geometry.grid_mesh(size=(0.8, 0.8), resolution=(n, n), center=(0.0, 0.5, 0.0), normal="z")
    curtain = sim.add_cloth(mesh, mpm.ClothMaterial.preset("curtain_goo"), rpic_damping=1.0)
    curtain.pin(_edge(mesh, 1, "max"))
    pts = geometry.sample_sphere(center=(0.0, 0.65, -0.3), radius=0.08, spacing=dx / 2)
    thick = mpm.GooMaterial(yield_stress=500.0, viscosity=100.0)
    goo = sim.add_goo(pts, _scaled(thick, goo_density), velocity=(0.0, 0.5, speed))
    sim.add_collider(colliders.Plane(point=(0, 0, 0), normal=(0, 1, 0)), name="ground")
    setup = _Setup(sim, [_Shown("curtain", curtain, CLOTH), _Shown("goo", goo, GOO)], [_ground_prop(1.0, -dx)],
                   camera=((0.9, 0.8, -1.1), (0.0, 0.4, 0.0)))
    return _play("goo_on_curtain", setup, out_dir=out_dir, frames=frames, progress=progress)
