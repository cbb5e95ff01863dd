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
default stiffness-to-density ratio at a density chosen so that a 1 m cloth of
Table 1 can carry it (see each scene).

Wall time at ``scale=1`` with the default frames, ``crumple run NAME`` on a
2-core machine (CPU backend, f32), including writing the frames and the PNG:

====================  ======  =========  ========  ==========
scene                 frames  particles  dx (m)    wall (s)
====================  ======  =========  ========  ==========
cloth_on_sphere       48      12 675     1/64      WALL1
curtain_ball          48      12 675     1/64      WALL2
cloth_stack           48      10 178     1/64      WALL3
friction_slope        16      —          1/64      WALL4
hair_tubes            48      —          1/64      WALL5
sand_on_cloth         48      —          1/48      WALL6
cloth_twister         48      —          1/64      WALL7
goo_on_curtain        48      —          1/64      WALL8
====================  ======  =========  ========  ==========
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import colliders, geometry, io, mpm
from .._progress import progress as _progress_bar
from ..colliders import Collider
from ..geometry import Curves, TriMesh
from . import register

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
OBSTACLE: Color = (0.62, 0.62, 0.64)
GROUND: Color = (0.80, 0.80, 0.78)
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

    def write(self, writer: io.FrameWriter, frame: int) -> None:
        if isinstance(self.obj, mpm.Cloth):
            writer.write(frame, self.obj.positions, self.obj.faces)
        else:
            writer.write(frame, self.obj.positions)

    def item(self) -> Any:
        x = np.asarray(self.obj.positions, dtype=np.float64)
        if isinstance(self.obj, mpm.Cloth):
            return (x, self.obj.faces)
        if isinstance(self.obj, mpm.Strands):
            return Curves(x, self.obj.offsets)
        return x


@dataclass
class _Prop:
    """A collider drawn as a mesh: ``mesh()`` builds it at the collider's current pose."""

    name: str
    mesh: Callable[[], TriMesh]
    color: Color = OBSTACLE
    moving: bool = False


@dataclass
class _Setup:
    """What a scene function builds; :func:`_play` runs it."""

    sim: mpm.Simulation
    shown: list[_Shown]
    props: list[_Prop]
    camera: tuple[Vec3, Vec3]
    before_frame: Callable[[float], None] | None = None
    info: dict[str, Any] = field(default_factory=dict)


def _play(name: str, setup: _Setup, *, out_dir: Path, frames: int, progress: bool) -> Path:
    """Run ``frames`` frames of ``FRAME_DT``, writing every frame (frame 0 is the
    initial state) and a picture of the last one; returns ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    writers = {s.name: io.FrameWriter(out_dir, prefix=s.name) for s in setup.shown}
    prop_writers = {p.name: io.FrameWriter(out_dir, prefix=p.name) for p in setup.props if p.moving}
    for p in setup.props:
        if not p.moving:
            io.save_mesh(out_dir / f"{p.name}.ply", p.mesh())

    def write(frame: int) -> None:
        for s in setup.shown:
            s.write(writers[s.name], frame)
        for p in setup.props:
            if p.moving:
                m = p.mesh()
                prop_writers[p.name].write(frame, m.vertices, m.faces)

    sim = setup.sim
    write(0)
    with _progress_bar(frames, name, enabled=progress) as bar:
        for frame in range(1, frames + 1):
            if setup.before_frame is not None:
                setup.before_frame(sim.time)
            steps = sim.advance(FRAME_DT)
            write(frame)
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
    """A simulation whose box holds ``[lo, hi]`` (m) plus the wall padding."""
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


def _sphere_prop(name: str, ball: colliders.Sphere, radius: float, dx: float, *, moving: bool = False) -> _Prop:
    return _Prop(name, lambda: geometry.uv_sphere(center=ball.translation, radius=radius - _INSET * dx,
                                                  n_lat=32, n_lon=64), moving=moving)


def _cylinder_prop(name: str, cyl: colliders.Cylinder, radius: float, height: float, dx: float, *,
                   moving: bool = False) -> _Prop:
    def mesh() -> TriMesh:
        axis = cyl.rotation @ np.array([0.0, 1.0, 0.0])
        return geometry.cylinder_mesh(center=cyl.translation, axis=axis, radius=radius - _INSET * dx,
                                      height=height, n_around=64, n_along=2)

    return _Prop(name, mesh, moving=moving)


def _ground_prop(size: float, height: float, *, center: Sequence[float] = (0.0, 0.0),
                 rotation: F64 | None = None, origin: Sequence[float] = (0.0, 0.0, 0.0)) -> _Prop:
    """A square floor of side ``size`` at ``height`` (drawn slightly below), turned
    by ``rotation`` about ``origin``."""

    def mesh() -> TriMesh:
        g = geometry.grid_mesh(size=(size, size), resolution=(1, 1), center=(center[0], height, center[1]))
        if rotation is None:
            return g
        o = np.asarray(origin, dtype=np.float64)
        return TriMesh((g.vertices - o) @ rotation.T + o, g.faces)

    return _Prop("ground", mesh, color=GROUND)


def _pinned_rows(res: tuple[int, int], rows: str) -> npt.NDArray[np.int64]:
    """Vertex indices of a :func:`~crumple.geometry.grid_mesh` of ``res`` quads on
    its sides ``rows``: any of ``"u0"``, ``"u1"`` (first/last along the first axis),
    ``"v0"``, ``"v1"``, ``"corners"``."""
    nu, nv = res[0] + 1, res[1] + 1
    idx = np.arange(nu * nv).reshape(nv, nu)
    out: list[npt.NDArray[np.int64]] = []
    for r in rows.split(","):
        r = r.strip()
        if r == "u0":
            out.append(idx[:, 0])
        elif r == "u1":
            out.append(idx[:, -1])
        elif r == "v0":
            out.append(idx[0, :])
        elif r == "v1":
            out.append(idx[-1, :])
        elif r == "corners":
            out.append(np.array([idx[0, 0], idx[0, -1], idx[-1, 0], idx[-1, -1]]))
    return np.unique(np.concatenate(out)).astype(np.int64)


def _scaled(material: Any, density: float, **extra: Any) -> Any:
    """A volumetric material at ``density`` with every stress (moduli, yield
    stress, viscosity) scaled by the same factor, so it moves exactly as the
    default would under gravity; only its weight on cloth changes."""
    import dataclasses

    base = type(material)()
    f = density / base.density
    stress = {k: getattr(base, k) * f for k in ("youngs_modulus", "yield_stress", "viscosity") if hasattr(base, k)}
    return dataclasses.replace(base, density=density, **{**stress, **extra})


def _grid_vertices(mesh: TriMesh) -> F64:
    return np.asarray(mesh.vertices)


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
    cloth = sim.add_cloth(mesh, mpm.ClothMaterial.preset("cloth_ball"), damping=0.7)
    ball = colliders.Sphere(center=c, radius=r, mode="separate", friction=sphere_friction)
    if spin:
        ball.set_velocity(angular=(0.0, spin, 0.0))
    sim.add_collider(ball)
    sim.add_collider(colliders.Plane(point=(0, 0, 0), normal=(0, 1, 0), mode="separate", friction=ground_friction))
    setup = _Setup(sim, [_Shown("cloth", cloth, CLOTH)], [_sphere_prop("sphere", ball, r, dx), _ground_prop(1.6, -dx)],
                   camera=((0.75, 0.75, 1.05), (0.0, 0.22, 0.0)))
    return _play("cloth_on_sphere", setup, out_dir=out_dir, frames=frames, progress=progress)
