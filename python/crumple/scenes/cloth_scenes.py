"""Built-in persistent-wrinkle cloth scenes (Gong, Yang, Shao, Wang 2025; spec
``persistent_wrinkles.md`` §8), each an experiment of the paper at laptop size.

Every scene builds a :class:`crumple.cloth.Simulation` with one garment
(the :class:`crumple.cloth.Cloth` handle of ``add_cloth``; implicit Euler,
``dt = 1e-3`` s, the paper's step), runs a load → hold → unload → settle
protocol, writes the cloth every 1/24 s of simulated time as
``cloth_00012.ply`` (frame 0 is the initial state; colliders as meshes: one
file when static, one per frame when they move), renders the final state to
``<scene>.png`` and writes ``metrics.json`` with the protocol choices, the
wrinkle metrics of §8 on the settled state (``M_abs``, ``M_sharp``, ``M_max``,
``M_plastic``, ``M_anchor``, rad) and the scene's own read-outs.

Shared protocol choices (spec §4.6, §8, A18):

- **Self-collision**: cloth–cloth contact is off (``self_collision=False``)
  except in ``crumple_in_container`` and ``knee_bend``, where it is the
  ``self_collision`` option (default on).
- **Hold**: ``hold="held"`` = 50 steps whose clocks are each advanced by
  ``hold_time / 50`` s (default 500 s = 10 s × 50, paper App. G);
  ``hold="immediate"`` = the same 50 steps with no warp, so clock-free
  models give bit-identical results (§8).
- **Settle**: the paper gives no settle criterion and the solver has no
  damping (γ = 0, A23), so a released fold swings for many seconds (the
  crease mode of the strip has a period of about 2 s and implicit Euler at
  1 ms barely damps it). Settling uses *kinetic damping* (dynamic
  relaxation): every velocity is set to zero whenever the kinetic energy
  passes a peak (spec §6.1 hook 13 is the same velocity reset). It ends
  after ``settle`` s, or earlier once the kinetic energy per unit mass has
  stayed below 1e-7 m²/s² for 0.2 s (§8 asks for < 1e-6). While a hinge is
  stopped its dwell clock runs, so a relaxed friction fold keeps a little
  more than the 1-DOF quasi-static release of §9 predicts; both are reported.
- ``sweep=True`` (hold-time experiments) runs the held protocol for total
  hold times 0, 10, 50, 200, 500 s into sub-folders ``hold_XXXXs`` and plots
  the residual metric against hold time (``sweep.png``, matplotlib Agg).

``scale`` refines the mesh (spacing ∝ 1/scale). ``frames`` is the number of
frames written over the protocol (evenly spaced; the protocol fixes the
length). The cloth solver runs on the CPU: ``backend="gpu"`` is refused.

Wall time at ``scale=1`` with the default options, on a 2-core machine,
including the frames, the PNG and the reference runs (±20 %):

====================  ============================  ======  =======  ========
scene                 default protocol              verts   frames   wall (s)
====================  ============================  ======  =======  ========
wrinkle_strip         friction, Φ = 1.0, held       1 281   150      40 (plastic 60)
cylinder_twist        cotton, π/4, held             1 792   56       15
flat_twist            ours, ±π/2, held              1 326   64–75    15
pressed_square        3 cm, held                    1 681   51       20
crumple_in_container  plate, held, self-collision   861     72       60
knee_bend             trouser_cotton, 90°, held     1 230   63       40
====================  ============================  ======  =======  ========
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import cloth, colliders, geometry, io
from .._checks import choice, non_negative, positive
from .._progress import progress as _progress_bar
from ..errors import InvalidInputError
from ..geometry import TriMesh
from . import frame_writer, register
from ._harness import GROUND, OBSTACLE, Prop, write_json

__all__ = [
    "FRAME_DT",
    "HOLD_STEPS",
    "SWEEP_HOLDS",
    "wrinkle_strip",
    "cylinder_twist",
    "flat_twist",
    "pressed_square",
    "crumple_in_container",
    "knee_bend",
]

FRAME_DT = 1.0 / 24.0
"""Frame length, s (24 frames per second)."""

HOLD_STEPS = 50
"""Steps of a hold phase (spec §4.6: 50 warped steps)."""

SWEEP_HOLDS: tuple[float, ...] = (0.0, 10.0, 50.0, 200.0, 500.0)
"""Total hold times (s) of ``sweep=True``."""

# Settled when KE/mass stays below this (m²/s²) for _SETTLE_WINDOW s (§8 uses 1e-6).
_SETTLE_KE = 1e-7
_SETTLE_WINDOW = 0.2

F64 = npt.NDArray[np.float64]
Color = tuple[float, float, float]
Vec3 = tuple[float, float, float]

CLOTH: Color = (0.86, 0.37, 0.34)


# -- shared machinery --------------------------------------------------------


@dataclass
class _Run:
    """Steps a cloth simulation through a protocol, writing a frame of the
    simulation (through the frame stream) whenever simulated time passes a
    multiple of the frame length: :data:`FRAME_DT`, or ``total_time /
    frames`` when the run asks for ``frames`` frames."""

    name: str
    sim: cloth.Simulation
    garment: cloth.Cloth
    out_dir: Path
    camera: tuple[Vec3, Vec3]
    progress: bool = False
    props: list[Prop] = field(default_factory=list)
    total_time: float = 1.0
    phases: list[dict[str, Any]] = field(default_factory=list)
    frames: int = 0

    def __post_init__(self) -> None:
        self.out_dir = Path(self.out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.frame_dt = self.total_time / self.frames if self.frames > 0 else FRAME_DT
        self._writer = frame_writer(self.out_dir, self.name, fps=1.0 / self.frame_dt)
        self._frame = 0
        self._t_wall = time.perf_counter()
        self._bar = _progress_bar(max(1, round(self.total_time / self.frame_dt)), self.name,
                                  enabled=self.progress)
        self._write()

    def add_prop(self, p: Prop) -> None:
        """Show a collider added mid-protocol in the pictures."""
        self.props.append(p)

    def _write(self) -> None:
        self._writer.write(self.sim.frame())

    def _after_step(self) -> None:
        if self.sim.time >= (self._frame + 1) * self.frame_dt - 1e-9:
            self._frame += 1
            self._write()
            self._bar.update(1)

    def steps(self, n: int, phase: str) -> int:
        """Take ``n`` plain steps (phase ``phase`` in the log)."""
        t0 = self.sim.time
        for _ in range(n):
            self.sim.step()
            self._after_step()
        self.phases.append(dict(phase=phase, t_start=t0, t_end=self.sim.time, steps=n))
        return n

    def seconds(self, duration: float, phase: str) -> int:
        """Take ``round(duration / dt)`` plain steps."""
        return self.steps(int(round(duration / self.sim.dt)), phase)

    def hold(self, per_step: float, phase: str = "hold") -> int:
        """The hold of spec §4.6: :data:`HOLD_STEPS` steps, each adding
        ``per_step`` s to the clocks (0 = the "immediate" protocol)."""
        self.sim.hold_warp(per_step, HOLD_STEPS)
        return self.steps(HOLD_STEPS, phase)

    def settle(self, max_time: float, phase: str = "settle") -> dict[str, Any]:
        """Kinetic damping (module docstring): zero every velocity whenever the
        kinetic energy passes a peak; stop after ``max_time`` s or once KE per
        unit mass has stayed below 1e-7 m²/s² for 0.2 s. Returns what happened."""
        sim, garment = self.sim, self.garment
        mass = float(garment.masses.sum())
        n_max = int(round(max_time / sim.dt))
        window = int(round(_SETTLE_WINDOW / sim.dt))
        t0 = sim.time
        ke_prev, rising, resets, calm, n = 0.0, False, 0, 0, 0
        settled = False
        while n < n_max:
            sim.step()
            n += 1
            ke = sim.kinetic_energy()
            if rising and ke < ke_prev:
                garment.velocities = np.zeros((garment.num_vertices, 3))
                resets += 1
                rising, ke_prev = False, 0.0
            else:
                rising, ke_prev = ke > ke_prev, ke
            self._after_step()
            calm = calm + 1 if ke / mass < _SETTLE_KE else 0
            if calm >= window:
                settled = True
                break
        info = dict(phase=phase, t_start=t0, t_end=sim.time, steps=n, velocity_resets=resets, settled=settled,
                    kinetic_energy_per_mass=sim.kinetic_energy() / mass)
        self.phases.append(info)
        return info

    def picture(self, tag: str = "") -> Path:
        """Render the current state to ``<name>[_tag].png`` with the visible
        colliders, and ``<name>[_tag]_wrinkles.png``: the cloth coloured by
        its wrinkle map (per vertex, the largest |θ| of the hinges on it, rad)."""
        from .. import viz

        its: dict[str, Any] = {"cloth": (self.garment.positions, self.garment.faces)}
        cols: list[Color] = [CLOTH]
        for p in self.props:
            if p.visible():
                its[p.name] = p.mesh()
                cols.append(p.color)
        stem = self.name + (f"_{tag}" if tag else "")
        path = viz.screenshot(its, self.out_dir / f"{stem}.png", camera=self.camera, colors=cols)
        viz.screenshot({"cloth": its["cloth"]}, self.out_dir / f"{stem}_wrinkles.png", camera=self.camera,
                       colors=[CLOTH], scalars={"cloth": wrinkle_map(self.garment)})
        return path

    def finish(self, result: dict[str, Any]) -> Path:
        """Write the last frame (if not written), the picture of the final state
        with the colliders still present, and ``metrics.json`` (``result`` plus
        frame count, simulated and wall time, and the phase log)."""
        if self.sim.time > self._frame * self.frame_dt + 1e-9:
            self._frame += 1
            self._write()
        self._writer.close()
        self._bar.close()
        self.picture()
        result = dict(result)
        result.setdefault("scene", self.name)
        result["frames_written"] = self._frame + 1
        result["simulated_time_s"] = self.sim.time
        result["steps"] = self.sim.step_count
        result["wall_time_s"] = time.perf_counter() - self._t_wall
        result["phases"] = self.phases
        write_json(self.out_dir / "metrics.json", result)
        return self.out_dir


def wrinkle_map(garment: cloth.Cloth) -> F64:
    """Per-vertex wrinkle value (N,) of ``garment``: the largest |dihedral
    angle| (rad) of the hinges whose edge touches the vertex; 0 where no
    hinge does."""
    a = np.abs(garment.hinge_angles)
    h = garment.hinges
    out = np.zeros(garment.num_vertices)
    np.maximum.at(out, h[:, 0], a)
    np.maximum.at(out, h[:, 1], a)
    return out


def _hold_per_step(hold: str, hold_time: float) -> float:
    """Warp per hold step (s): ``hold_time / 50`` when held, 0 when immediate."""
    choice(hold, "hold", ("immediate", "held"))
    return non_negative(hold_time, "hold_time") / HOLD_STEPS if hold == "held" else 0.0


def _protocol(hold: str, hold_time: float, material: str, **more: Any) -> dict[str, Any]:
    return dict(hold=hold, hold_time_s=hold_time if hold == "held" else 0.0, hold_steps=HOLD_STEPS,
                hold_warp_per_step_s=_hold_per_step(hold, hold_time), material=material, dt_s=1e-3, **more)


def _metrics(garment: cloth.Cloth, mask: npt.ArrayLike | None = None) -> dict[str, float]:
    return garment.metrics(mask)


def _res(n: float, scale: float, least: int = 2) -> int:
    return max(least, int(round(n * scale)))


def _rot(axis: Sequence[float], angle: float) -> F64:
    """Rotation by ``angle`` rad about ``axis``."""
    return np.asarray(colliders.rotation(axis, math.degrees(angle)))


def _ground_prop(size: float, height: float = 0.0) -> Prop:
    return Prop("ground", lambda: geometry.grid_mesh(size=(size, size), resolution=(1, 1),
                                                     center=(0.0, height, 0.0)), color=GROUND)


def _box_mesh(c: colliders.Collider, half_extents: Sequence[float]) -> TriMesh:
    m = geometry.box_mesh(half_extents=tuple(half_extents))
    return TriMesh(m.vertices @ c.rotation.T + c.translation, m.faces)


def _capsule_mesh(c: colliders.Capsule, half_height: float, radius: float) -> TriMesh:
    """A capsule drawn as a capped cylinder plus end spheres, at its pose."""
    cyl = geometry.cylinder_mesh(radius=radius, height=2 * half_height, n_around=24, n_along=4, capped=True)
    s1 = geometry.uv_sphere(center=(0, half_height, 0), radius=radius, n_lat=12, n_lon=24)
    s2 = geometry.uv_sphere(center=(0, -half_height, 0), radius=radius, n_lat=12, n_lon=24)
    v = np.concatenate([cyl.vertices, s1.vertices, s2.vertices])
    f = np.concatenate([cyl.faces, s1.faces + cyl.num_vertices, s2.faces + cyl.num_vertices + s1.num_vertices])
    return TriMesh(v @ c.rotation.T + c.translation, f)


def _sweep(name: str, fn: Callable[..., Path], out_dir: Path, key: str, label: str, *, progress: bool,
           kwargs: dict[str, Any], holds: Sequence[float] = SWEEP_HOLDS) -> Path:
    """Run scene ``fn`` held for each total hold time in ``holds`` (s) into
    ``out_dir/hold_XXXXs``, then plot ``key`` (a metrics.json entry) against
    hold time to ``sweep.png`` and collect the table in ``metrics.json``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for T in holds:
        sub = fn(out_dir=out_dir / f"hold_{int(round(T)):04d}s", frames=1, backend="cpu", progress=progress,
                 **kwargs, hold="held", hold_time=float(T), sweep=False)
        m = json.loads((sub / "metrics.json").read_text())
        rows.append(dict(hold_time_s=float(T), value=m[key], metrics=m["metrics"], folder=sub.name))
    _plot_sweep(out_dir / "sweep.png", [r["hold_time_s"] for r in rows], [r["value"] for r in rows],
                ylabel=label, title=f"{name}: {label} vs hold time")
    # The picture of the longest hold stands for the sweep.
    shutil.copyfile(out_dir / rows[-1]["folder"] / f"{name}.png", out_dir / f"{name}.png")
    write_json(out_dir / "metrics.json", dict(scene=name, sweep=True, key=key, options=kwargs, rows=rows))
    return out_dir


def _plot_sweep(path: Path, x: Sequence[float], y: Sequence[float], *, ylabel: str, title: str) -> Path:
    """A residual-vs-hold-time plot (matplotlib, Agg backend)."""
    try:
        import matplotlib
    except ImportError as e:  # an optional dependency (the viz/dev extras)
        raise ImportError("hold-time plots need matplotlib: pip install 'crumple[viz]'") from e

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.0, 4.0), dpi=120)
    ax.plot(x, y, "o-", color="#c0504d")
    ax.set_xscale("symlog", linthresh=10.0)
    ax.set_xlabel("hold time (s, warped)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _check_options(**kw: Any) -> None:
    for k, v in kw.items():
        positive(v, k)


# -- E2: one-wrinkle strip -----------------------------------------------------


def _strip_wrinkles(mode: str) -> cloth.Wrinkles:
    if mode == "friction":
        return cloth.Wrinkles(bend_friction="dwell", bend_plasticity=False)
    return cloth.Wrinkles(bend_friction="off", bend_plasticity=True)


@register("wrinkle_strip", "E2 (App. A.3, Fig. 21): a cotton strip folded about a crease, held, released; "
          "residual crease angle (friction or plasticity only)", frames=150, backends=("cpu",))
def wrinkle_strip(*, out_dir: Path, frames: int = 0, backend: str = "cpu", scale: float = 1.0,
                  progress: bool = False, mode: str = "friction", phi: float | None = None,
                  hold: str = "held", hold_time: float = 500.0, material: str = "cotton",
                  load_time: float = 1.0, settle: float = 4.0, stretch: bool = True, stretch_time: float = 1.0,
                  strain: float = 0.01, sweep: bool = False) -> Path:
    """Spec E2. A 0.10 × 0.30 m strip (5 mm grid at scale 1: 21 × 61 = 1 281
    vertices), crease along the grid line at mid-length (along x), gravity off.
    Every vertex is a handle: the half z ≤ 0 stays fixed, the half z > 0 turns
    rigidly about the crease line to ``phi`` rad over ``load_time`` s, so each
    crease hinge sees exactly θ = ``phi`` (default 1.0 rad for
    ``mode="friction"``, 2.6 rad for ``mode="plastic"``). Hold (50 steps,
    warped by ``hold_time`` s when ``hold="held"``), release the turned half,
    settle (≤ ``settle`` s, kinetic damping; spec: 2 s free). With
    ``stretch``, then release everything, pin both short edges, pull them
    apart until the strip is 1 + ``strain`` times its length over
    ``stretch_time`` s, release, settle again (spec: 1 % over 1 s).

    Read-outs (rad): ``theta_c`` = mean θ over the crease hinges after the
    release (positive = folded the way it was loaded), ``theta_c_loaded``,
    ``theta_c_after_stretch`` and the relative recovery
    ``R = (θ_c − θ_c,after)/θ_c``; the 1-DOF quasi-static predictions of §8
    (friction 0.2 / 0.6, plastic ≈ 0.40 / 0.79 rad) for comparison.
    ~40 s (friction) / ~60 s (plastic) at scale 1."""
    mode = choice(mode, "mode", ("friction", "plastic"))
    phi = (1.0 if mode == "friction" else 2.6) if phi is None else float(phi)
    _check_options(load_time=load_time, settle=settle, stretch_time=stretch_time, strain=strain)
    if not 0.0 < abs(phi) < math.pi:
        raise InvalidInputError(f"phi must be in (0, π) rad; got {phi}")
    kwargs = dict(scale=scale, mode=mode, phi=phi, material=material, load_time=load_time, settle=settle,
                  stretch=stretch, stretch_time=stretch_time, strain=strain)
    if sweep:
        return _sweep("wrinkle_strip", wrinkle_strip, out_dir, "theta_c", "crease angle θ_c after release (rad)",
                      progress=progress, kwargs=kwargs)
    warp = _hold_per_step(hold, hold_time)
    nx, nz = _res(20, scale), 2 * _res(30, scale, 1)  # nz even: a grid line at mid-length
    mesh = geometry.grid_mesh(size=(0.10, 0.30), resolution=(nx, nz))
    X = mesh.vertices
    sim = cloth.Simulation(gravity=(0.0, 0.0, 0.0), self_collision=False)
    strip = sim.add_cloth(mesh, cloth.Material.preset(material), wrinkles=_strip_wrinkles(mode))
    hinges = strip.hinges
    on_line = np.abs(X[:, 2]) < 1e-9
    crease = on_line[hinges[:, 0]] & on_line[hinges[:, 1]]
    fixed = np.flatnonzero(X[:, 2] <= 1e-9)
    turned = np.flatnonzero(X[:, 2] > 1e-9)
    total = load_time + HOLD_STEPS * 1e-3 + settle + (stretch_time + settle if stretch else 0.0)
    run = _Run("wrinkle_strip", sim, strip, out_dir, frames=frames, camera=((0.32, 0.22, 0.30), (0.0, 0.03, 0.0)),
               progress=progress, total_time=total)

    strip.pin(fixed)
    h = strip.rotate_handle(turned, axis=(1.0, 0.0, 0.0), angle=phi, duration=load_time, pivot=(0.0, 0.0, 0.0))
    run.seconds(load_time, "load")
    sign = float(np.sign(np.mean(strip.hinge_angles[crease])) or 1.0)

    def theta_c() -> float:
        return sign * float(np.mean(strip.hinge_angles[crease]))

    loaded = theta_c()
    run.hold(warp)
    strip.release_handle(h)
    s1 = run.settle(settle, "settle after release")
    th_c = theta_c()
    crease_metrics = _metrics(strip, crease)
    whole = _metrics(strip)
    result: dict[str, Any] = dict(
        protocol=_protocol(hold, hold_time, material, mode=mode, phi_rad=phi, load_time_s=load_time,
                           settle_max_s=settle, stretch=stretch, strain=strain, gravity="off",
                           grid_m=0.10 / nx, vertices=mesh.num_vertices, crease_hinges=int(crease.sum())),
        theta_c_loaded=loaded, theta_c=th_c, settle=s1, crease_metrics=crease_metrics,
        theta_p_crease=sign * float(np.mean(strip.plastic_angles[crease])),
        theta_a_crease=sign * float(np.mean(strip.anchor_angles[crease])),
        one_dof_prediction={"friction": {"immediate": 0.2, "held": 0.6},
                            "plastic": {"immediate": 0.40, "held": 0.79}}[mode][hold],
    )
    if stretch:
        # Spec E2: pin both short edges, pull them apart to 1 % strain, release.
        strip.release(fixed)
        x = strip.positions
        near = np.flatnonzero(np.abs(X[:, 2] - X[:, 2].min()) < 1e-9)
        far = np.flatnonzero(np.abs(X[:, 2] - X[:, 2].max()) < 1e-9)
        a, b = x[near].mean(axis=0), x[far].mean(axis=0)
        d = float(np.linalg.norm(b - a))
        u = (b - a) / d
        move = 0.5 * ((1.0 + strain) * 0.30 - d)
        ha = strip.add_handle(near, times=[0.0, stretch_time], translations=[[0, 0, 0], -move * u])
        hb = strip.add_handle(far, times=[0.0, stretch_time], translations=[[0, 0, 0], move * u])
        run.seconds(stretch_time, "stretch")
        result["theta_c_stretched"] = theta_c()
        strip.release_handle(ha)
        strip.release_handle(hb)
        result["settle_after_stretch"] = run.settle(settle, "settle after stretch")
        after = theta_c()
        result["theta_c_after_stretch"] = after
        result["recovery_R"] = (th_c - after) / th_c if th_c != 0 else float("nan")
        whole = _metrics(strip)
    result["metrics"] = whole
    return run.finish(result)


# -- E3: cylinder twist ------------------------------------------------------------


@register("cylinder_twist", "E3 (App. A.2, Fig. 20): an open tube twisted by π/4 at its top ring, held, "
          "twisted back; residual M_abs for cotton, denim or polyester", frames=56, backends=("cpu",))
def cylinder_twist(*, out_dir: Path, frames: int = 0, backend: str = "cpu", scale: float = 1.0,
                   progress: bool = False, material: str = "cotton", hold: str = "held", hold_time: float = 500.0,
                   twist: float = math.pi / 4, twist_time: float = 1.0, settle: float = 1.0,
                   rest: str = "mesh", elastic_reference: bool = True, sweep: bool = False) -> Path:
    """Spec E3. An open tube of radius 0.04 m and height 0.11 m (64 × 28 rings
    = 1 792 vertices at scale 1, the paper's ``Cylindar.obj`` count), axis
    vertical, gravity on. The bottom ring is pinned; the top ring turns by
    ``twist`` rad about the axis over ``twist_time`` s, holds (50 steps,
    warped by ``hold_time`` s when held), turns back over ``twist_time`` s
    and stays pinned at its original pose while the tube settles
    (≤ ``settle`` s, kinetic damping). Table 2 presets (``material``).
    ``rest="mesh"`` (default; spec §2.4 option ``init_rest_from_mesh``, our
    choice where E3 is silent) takes the tube's own dihedral angles as the
    rest and anchor angles, so the untwisted tube is stress-free and M_abs
    measures what the twist left. ``rest="flat"`` is the paper code's flat
    rest: every axial hinge then starts bent by 2π/n_around (0.196 rad at
    scale 0.5, above denim's ε0 = 0.1), slips at step 0, and that built-in
    offset dominates M_abs and hides denim's memory (measured: denim held
    ≈ immediate and below polyester). Read-outs: the §8 metrics (``M_abs``
    is the paper's proxy), the metrics at full twist, and with ``elastic_reference`` ``M_elastic`` (the same
    tube with every wrinkle element off, both rings pinned, settled under
    gravity: the no-memory reference of §8) and ``M_abs_excess`` =
    ``M_abs − M_elastic``, the part of M_abs that is memory. ~15 s at scale 1."""
    _check_options(twist_time=twist_time, settle=settle)
    kwargs = dict(scale=scale, material=material, twist=twist, twist_time=twist_time, settle=settle, rest=rest,
                  elastic_reference=elastic_reference)
    if sweep:
        return _sweep("cylinder_twist", cylinder_twist, out_dir, "M_abs", "M_abs after untwist (rad)",
                      progress=progress, kwargs=kwargs)
    warp = _hold_per_step(hold, hold_time)
    choice(rest, "rest", ("mesh", "flat"))
    curved = rest == "mesh"
    na, nl = _res(64, scale, 8), _res(27, scale, 3)
    r, height = 0.04, 0.11
    mesh = geometry.cylinder_mesh(center=(0.0, height / 2, 0.0), axis=(0.0, 1.0, 0.0), radius=r, height=height,
                                  n_around=na, n_along=nl, capped=False)
    mat = cloth.Material.preset(material)
    bottom = np.arange(na)
    top = np.arange(nl * na, (nl + 1) * na)
    m_elastic = float("nan")
    if elastic_reference:
        ref = cloth.Simulation(self_collision=False)
        ref_tube = ref.add_cloth(mesh, mat, wrinkles=cloth.Wrinkles.off(), init_rest_from_mesh=curved)
        ref_tube.pin(np.concatenate([bottom, top]))
        _settle_plain(ref, ref_tube, settle)
        m_elastic = ref_tube.metrics()["M_abs"]
    sim = cloth.Simulation(self_collision=False)
    tube = sim.add_cloth(mesh, mat, wrinkles=cloth.Wrinkles(), init_rest_from_mesh=curved)
    tube.pin(bottom)
    R = _rot((0.0, 1.0, 0.0), twist)
    hold_s = HOLD_STEPS * sim.dt
    # One keyframed handle for the whole schedule: twist, hold, twist back.
    tube.add_handle(top, times=[0.0, twist_time, twist_time + hold_s, 2 * twist_time + hold_s],
                    rotations=[np.eye(3), R, R, np.eye(3)], pivot=(0.0, height, 0.0))
    run = _Run("cylinder_twist", sim, tube, out_dir, frames=frames, camera=((0.12, 0.14, 0.16), (0.0, 0.05, 0.0)),
               progress=progress, total_time=2 * twist_time + hold_s + settle)
    run.seconds(twist_time, "twist")
    twisted = _metrics(tube)
    run.hold(warp)
    run.seconds(twist_time, "twist back")
    s = run.settle(settle)
    result = dict(
        protocol=_protocol(hold, hold_time, material, twist_rad=twist, twist_time_s=twist_time,
                           settle_max_s=settle, gravity="on", rest=rest, n_around=na, rings=nl + 1,
                           vertices=mesh.num_vertices),
        metrics_twisted=twisted, settle=s, metrics=_metrics(tube), M_abs=_metrics(tube)["M_abs"],
        M_elastic=m_elastic, M_abs_excess=_metrics(tube)["M_abs"] - m_elastic,
    )
    return run.finish(result)


# -- E6: flat twist vs the hardening baseline ---------------------------------------


@register("flat_twist", "E6 (Figs. 11/15): a hanging rectangle twisted ±π/2 at its short edges, held, "
          "untwisted; ours vs the time-independent hardening baseline", frames=75, backends=("cpu",))
def flat_twist(*, out_dir: Path, frames: int = 0, backend: str = "cpu", scale: float = 1.0,
               progress: bool = False, baseline: bool = False, hold: str = "held", hold_time: float = 500.0,
               material: str = "cotton", angle: float = math.pi / 2, twist_time: float = 1.0,
               settle: float = 1.0) -> Path:
    """Spec E6. The 0.25 × 0.5 m rectangle coarsened to a 10 mm grid at scale
    1 (26 × 51 = 1 326 vertices), hanging in the xy plane with its long axis
    vertical, gravity on. Both short edges are handles: the top one turns by
    +``angle``, the bottom one by −``angle`` about the long axis over
    ``twist_time`` s (the edges keep their distance, so the twisted sheet is
    stretched along its long edges and buckles), hold (50 steps, warped when
    held), untwist over ``twist_time`` s, settle (≤ ``settle`` s, edges
    pinned). ``baseline=True`` is the paper's comparison: time-independent
    linear hardening (g = 0) with friction off, same εY0 (spec A.2); its
    immediate and held runs are bit-identical. Read-outs: §8 metrics and
    ``positions_sha`` (a hash of the final positions). ~15 s at scale 1."""
    _check_options(twist_time=twist_time, settle=settle)
    warp = _hold_per_step(hold, hold_time)
    nx, ny = _res(25, scale), _res(50, scale)
    W, L, y0 = 0.25, 0.5, 0.35
    mesh = geometry.grid_mesh(size=(W, L), resolution=(nx, ny), center=(0.0, y0, 0.0), normal="z")
    X = mesh.vertices
    wr = cloth.Wrinkles(bend_friction="off", constant_hardening=True) if baseline else cloth.Wrinkles()
    sim = cloth.Simulation(self_collision=False)
    sheet = sim.add_cloth(mesh, cloth.Material.preset(material), wrinkles=wr)
    top = np.flatnonzero(np.abs(X[:, 1] - X[:, 1].max()) < 1e-9)
    bottom = np.flatnonzero(np.abs(X[:, 1] - X[:, 1].min()) < 1e-9)
    hold_s = HOLD_STEPS * sim.dt
    T = twist_time
    times = [0.0, T / 2, T, T + hold_s, 1.5 * T + hold_s, 2 * T + hold_s]
    axis = (0.0, 1.0, 0.0)
    for idx, sgn in ((top, 1.0), (bottom, -1.0)):
        # Keys 45° apart: keyframed rotation follows the shortest arc.
        rots = [_rot(axis, sgn * angle * f) for f in (0.0, 0.5, 1.0, 1.0, 0.5, 0.0)]
        sheet.add_handle(idx, times=times, rotations=rots, pivot=(0.0, y0, 0.0))
    run = _Run("flat_twist", sim, sheet, out_dir, frames=frames, camera=((0.45, 0.55, 0.75), (0.0, 0.35, 0.0)), progress=progress,
               total_time=2 * T + hold_s + settle)
    run.seconds(T, "twist")
    twisted = _metrics(sheet)
    run.hold(warp)
    run.seconds(T, "untwist")
    s = run.settle(settle)
    x = sheet.positions
    result = dict(
        protocol=_protocol(hold, hold_time, material, baseline=baseline, angle_rad=angle, twist_time_s=T,
                           settle_max_s=settle, gravity="on", grid_m=W / nx, vertices=mesh.num_vertices,
                           wrinkles="hardening baseline (g=0, friction off)" if baseline else "ours"),
        metrics_twisted=twisted, settle=s, metrics=_metrics(sheet),
        positions_sha=hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest(),
    )
    return run.finish(result)


# -- E7: pressed square (tensile friction and plasticity) -------------------------


@register("pressed_square", "E7 (Fig. 12): a square pinned at its edges pressed at the centre by a plate, held, "
          "lifted; residual centre sag from tensile friction/plasticity", frames=51, backends=("cpu",))
def pressed_square(*, out_dir: Path, frames: int = 0, backend: str = "cpu", scale: float = 1.0,
                   progress: bool = False, depth: float = 0.03, hold: str = "held", hold_time: float = 500.0,
                   material: str = "cotton", press_time: float = 1.0, lift_time: float = 0.5,
                   settle: float = 1.5, elastic_reference: bool = True) -> Path:
    """Spec E7. A 0.2 × 0.2 m square (5 mm grid at scale 1: 41 × 41 = 1 681
    vertices), all four edges pinned, gravity on, bending friction and
    plasticity off, tensile friction and plasticity on (spec §7.3 constants;
    the hold warp also advances the triangle clocks, ``warp_faces``, else a
    hold would change nothing). The sheet first sags under gravity
    (settle ≤ 1 s); a kinematic 5 × 5 cm plate (10 mm thick, edges rounded
    with a 5 mm radius, frictionless) then presses the centre down by
    ``depth`` m (1 cm small, 3 cm large) over ``press_time`` s, holds (50
    steps, warped when held), lifts off over ``lift_time`` s and is removed;
    the sheet settles (≤ ``settle`` s). Read-outs (m): ``sag_before_press``,
    ``residual_sag`` (centre below the pinned edges at the end),
    ``elastic_sag`` (the same sheet with every wrinkle element off, settled
    under gravity: the elastic-only residual of any protocol) and
    ``residual_sag_excess`` = residual − elastic (spec E7's proxy),
    ``residual_sag_increase`` = residual − sag before the press (the stuck
    tensile friction, 200 N/m beside the 50 N/m membrane, makes the sheet
    sag less than the elastic one before any press); the tensile plastic
    strain. The §7.3 constants soften after yield (K_h0 = 10 N/m), so the
    plastic stretch localises in the ring of triangles around the plate
    (max Green strain ≈ 2 at 10 mm, ≈ 6 at 5 mm for a 3 cm press): a
    square pocket whose depth, not whose wall strain, is the read-out.
    ~20 s at scale 1."""
    _check_options(depth=depth, press_time=press_time, lift_time=lift_time, settle=settle)
    warp = _hold_per_step(hold, hold_time)
    n = _res(40, scale)
    S = 0.2
    mesh = geometry.grid_mesh(size=(S, S), resolution=(n, n), center=(0.0, 0.0, 0.0))
    X = mesh.vertices
    edge = (np.abs(np.abs(X[:, 0]) - S / 2) < 1e-9) | (np.abs(np.abs(X[:, 2]) - S / 2) < 1e-9)
    centre = int(np.argmin(np.hypot(X[:, 0], X[:, 2])))
    mat = cloth.Material.preset(material)
    elastic_sag = float("nan")
    if elastic_reference:
        ref = cloth.Simulation(self_collision=False)
        ref_sheet = ref.add_cloth(mesh, mat, wrinkles=cloth.Wrinkles.off())
        ref_sheet.pin(np.flatnonzero(edge))
        _settle_plain(ref, ref_sheet, 1.5)
        elastic_sag = -float(ref_sheet.positions[centre, 1])
    wr = cloth.Wrinkles(bend_friction="off", bend_plasticity=False, tensile_friction=True, tensile_plasticity=True,
                        warp_faces=True)
    sim = cloth.Simulation(self_collision=False)
    sheet = sim.add_cloth(mesh, mat, wrinkles=wr)
    sheet.pin(np.flatnonzero(edge))
    a_plate, rr = 0.025, 0.005
    half = (a_plate, rr, a_plate)
    plate = _RoundedPlate(a_plate, rr)
    shown = {"on": False}
    run = _Run("pressed_square", sim, sheet, out_dir, frames=frames, camera=((0.15, 0.11, 0.2), (0.0, -0.02, 0.0)),
               progress=progress,
               props=[Prop("plate", lambda: _box_mesh(plate.parts[0], half),
                            visible=lambda: shown["on"])],
               total_time=1.0 + press_time + 0.05 + lift_time + settle)
    run.settle(1.0, "gravity sag")
    y_c = float(sheet.positions[centre, 1])
    sag0 = -y_c
    # Plate starts just outside the repulsion layer above the sagged centre
    # and ends with its bottom ``depth`` below where the centre was.
    gap = float(sim._params["repulsion_distance"]) + 1e-3
    yb = y_c + rr + gap
    t0 = sim.time
    hold_s = HOLD_STEPS * sim.dt
    low = yb - depth - gap
    plate.keyframes(sim, [t0, t0 + press_time, t0 + press_time + hold_s, t0 + press_time + hold_s + lift_time],
                    [yb, low, low, yb + 0.05])
    shown["on"] = True
    run.seconds(press_time, "press")
    pressed_sag = -float(sheet.positions[centre, 1])
    run.hold(warp)
    run.seconds(lift_time, "lift")
    plate.remove(sim)
    shown["on"] = False
    s = run.settle(settle)
    residual = -float(sheet.positions[centre, 1])
    ep = sheet.tensile_plastic_strains
    result = dict(
        protocol=_protocol(hold, hold_time, material, depth_m=depth, press_time_s=press_time,
                           lift_time_s=lift_time, settle_max_s=settle, plate_m=0.05, plate_edge_radius_m=rr,
                           grid_m=S / n,
                           vertices=mesh.num_vertices, wrinkles="tensile friction + plasticity (§7.3), warp_faces"),
        sag_before_press=sag0, sag_pressed=pressed_sag, residual_sag=residual, elastic_sag=elastic_sag,
        residual_sag_excess=residual - elastic_sag, residual_sag_increase=residual - sag0, settle=s,
        tensile_plastic_max=float(np.abs(ep).max()), tensile_plastic_mean=float(np.abs(ep).mean()),
        tensile_anchor_max=float(np.abs(sheet.tensile_anchors).max()),
        metrics=_metrics(sheet),
    )
    return run.finish(result)


class _RoundedPlate:
    """A kinematic square plate of half side ``a`` (m) and thickness ``2 rr``
    with rounded edges: a box core plus four capsules along its sides.
    Obstacle contact acts on cloth vertices only, so a sharp plate edge can
    pass between two vertex rows and cut a cliff into the sheet (Green strain
    ≈ 3 at a 10 mm grid); a rounded edge of radius ≈ the grid spacing drapes it."""

    def __init__(self, a: float, rr: float) -> None:
        c = a - rr
        self.parts: list[colliders.Collider] = [
            colliders.Box(center=(0.0, 0.0, 0.0), half_extents=(c, rr, c), mode="slip", friction=0.0)]
        for p, q in (((-c, 0, -c), (c, 0, -c)), ((-c, 0, c), (c, 0, c)), ((-c, 0, -c), (-c, 0, c)),
                     ((c, 0, -c), (c, 0, c))):
            self.parts.append(colliders.Capsule(a=p, b=q, radius=rr, mode="slip", friction=0.0))
        self.offsets = [np.asarray(pt.translation) for pt in self.parts]
        self._first = -1

    def keyframes(self, sim: cloth.Simulation, times: Sequence[float], heights: Sequence[float]) -> None:
        """Move the plate's centre along the axis x = z = 0 through
        ``heights`` (m) at ``times`` (s) and add it to ``sim``."""
        self._first = len(sim.colliders)
        for pt, off in zip(self.parts, self.offsets):
            pt.advance_to(times[0])
            pt.set_keyframes(times, [off + (0.0, h, 0.0) for h in heights], [pt.rotation] * len(times))
            sim.add_collider(pt)

    def remove(self, sim: cloth.Simulation) -> None:
        """Take the plate out of ``sim``."""
        for i in reversed(range(self._first, self._first + len(self.parts))):
            sim.remove_collider(i)


def _settle_plain(sim: cloth.Simulation, garment: cloth.Cloth, max_time: float) -> None:
    """Kinetic-damping settle of a one-garment simulation that writes nothing
    (references)."""
    mass = float(garment.masses.sum())
    ke_prev, rising, calm = 0.0, False, 0
    window = int(round(_SETTLE_WINDOW / sim.dt))
    for _ in range(int(round(max_time / sim.dt))):
        sim.step()
        ke = sim.kinetic_energy()
        if rising and ke < ke_prev:
            garment.velocities = np.zeros((garment.num_vertices, 3))
            rising, ke_prev = False, 0.0
        else:
            rising, ke_prev = ke > ke_prev, ke
        calm = calm + 1 if ke / mass < _SETTLE_KE else 0
        if calm >= window:
            return


# -- E8: crumple in a container --------------------------------------------------


def _container(radius: float, height: float, staves: int, wall: float = 0.02) -> list[colliders.Box]:
    """A hollow cylindrical container as ``staves`` thin boxes whose inner faces
    form a regular polygon of inradius ``radius`` (m) — the colliders'
    :class:`~crumple.colliders.Cylinder` is a *solid* (negative distance
    inside), which would push the cloth out, not keep it in."""
    out = []
    half_w = radius * math.tan(math.pi / staves) * 1.25  # overlap the corners
    for k in range(staves):
        a = 2 * math.pi * k / staves
        c = ((radius + wall / 2) * math.cos(a), height / 2, (radius + wall / 2) * math.sin(a))
        out.append(colliders.Box(center=c, half_extents=(wall / 2, height / 2, half_w),
                                 rotation=colliders.rotation((0, 1, 0), -math.degrees(a)), friction=0.3))
    return out


def _container_mesh(radius: float, height: float) -> TriMesh:
    return geometry.cylinder_mesh(center=(0.0, height / 2, 0.0), radius=radius + 0.001, height=height, n_around=48,
                                  n_along=2, capped=False)


@register("crumple_in_container", "E8 (Figs. 3-4): a rectangle falls into a cylindrical container and crumples; "
          "container removed, pressed by a plate, held, two corners lifted", frames=72, backends=("cpu",))
def crumple_in_container(*, out_dir: Path, frames: int = 0, backend: str = "cpu", scale: float = 1.0,
                         progress: bool = False, hold: str = "held", hold_time: float = 500.0,
                         material: str = "cotton", plate: bool = True, self_collision: bool = True,
                         radius: float = 0.08, drop_time: float = 1.2, press: float = 0.4,
                         lift_height: float = 0.6, lift_time: float = 0.8, settle: float = 1.0,
                         spread: bool = True, wrinkles: bool = True, bend_friction: str = "dwell",
                         bend_plasticity: bool = True, sweep: bool = False) -> Path:
    """Spec E8. The 0.25 × 0.5 m rectangle (12.5 mm grid at scale 1: 21 × 41 =
    861 vertices) starts rolled into a vertical half-open tube of radius
    0.065 m (0.25 m around, 0.5 m tall, standing on the floor) inside a
    container of radius ``radius`` m and 0.55 m height, and collapses under
    gravity into a crumpled pile at its bottom (``drop_time`` s). The
    container is a ring of 24 thin boxes (a hollow 24-gon of inradius
    ``radius``) plus a floor plane; it is then removed (0.1 s). With
    ``plate`` (E8 b), a kinematic 0.24 m square plate is lowered onto the
    pile until its height is ``press`` times the settled pile height
    (0.3 s); the spec's 0.5 kg weight cannot be a force here because contact
    is resolved by projection, so a prescribed squeeze replaces it. The
    hold (50 steps, warped when held) happens under the plate, or in the
    container without ``plate`` (E8 a); the plate lifts away (0.2 s). Two
    corners of one short edge are lifted by ``lift_height`` m over
    ``lift_time`` s (the default 0.6 m lifts the 0.5 m sheet clear of the
    floor, so no fold is kept by a heap on the floor) and, with ``spread``,
    moved apart to the edge's rest length, so the sheet hangs open as from
    a line; they are held while the cloth settles (≤ ``settle`` s, kinetic
    damping). ``self_collision`` is the cloth–cloth repulsion + continuous
    collision fail-safe. ``wrinkles=False`` turns every wrinkle element off
    (friction and plasticity, bending and tensile): the same protocol then
    gives §8's no-memory reference ``M_elastic``. ``bend_friction``
    ("dwell", "dahl", "off") and ``bend_plasticity`` choose the hinge
    elements otherwise (E9: "dahl" with plasticity off is the Dahl
    baseline). Read-outs: §8 metrics after lifting (``M_sharp``,
    ``M_anchor``, ``M_plastic``), metrics in the pile, ``self_intersections``
    and ``positions_sha`` (a hash of the final positions) at the end. ~60 s
    at scale 1."""
    _check_options(radius=radius, drop_time=drop_time, press=press, lift_height=lift_height, lift_time=lift_time,
                   settle=settle)
    kwargs = dict(scale=scale, material=material, plate=plate, self_collision=self_collision, radius=radius,
                  drop_time=drop_time, press=press, lift_height=lift_height, lift_time=lift_time, settle=settle,
                  spread=spread, wrinkles=wrinkles, bend_friction=bend_friction, bend_plasticity=bend_plasticity)
    if sweep:
        return _sweep("crumple_in_container", crumple_in_container, out_dir, "M_sharp",
                      "M_sharp after lifting (rad)", progress=progress, kwargs=kwargs)
    warp = _hold_per_step(hold, hold_time)
    W, L, roll = 0.25, 0.5, 0.065
    if roll >= radius - 0.005:
        raise InvalidInputError(f"radius must exceed {roll + 0.005} m (the rolled sheet's radius + 5 mm)")
    nu, nv = _res(20, scale), _res(40, scale)
    flat = geometry.grid_mesh(size=(W, L), resolution=(nu, nv), normal="z")
    F = flat.vertices
    # Roll the 0.25 m side around the vertical axis (arc length kept) so the
    # sheet fits the container; the rest shape stays flat (θ̄ = 0, §2.4).
    ang = F[:, 0] / roll
    Y = np.stack([roll * np.sin(ang), F[:, 1] + L / 2 + 0.003, roll * np.cos(ang)], axis=1)
    mesh = TriMesh(Y, flat.faces)
    model = (cloth.Wrinkles(bend_friction=bend_friction, bend_plasticity=bend_plasticity)  # type: ignore[arg-type]
             if wrinkles else cloth.Wrinkles.off())
    sim = cloth.Simulation(self_collision=self_collision)
    sheet = sim.add_cloth(mesh, cloth.Material.preset(material), wrinkles=model)
    floor = colliders.Plane(point=(0, 0, 0), normal=(0, 1, 0), friction=0.3)
    sim.add_collider(floor, name="ground")
    ch = 0.55
    walls = _container(radius, ch, 24)
    for w in walls:
        sim.add_collider(w)
    state = {"container": True, "plate": False}
    plate_half = (0.12, 0.005, 0.12)
    plate_c = colliders.Box(center=(0.0, 1.0, 0.0), half_extents=plate_half, friction=0.3)
    props = [_ground_prop(0.7, -0.001),
             Prop("container", lambda: _container_mesh(radius, ch), visible=lambda: state["container"])]
    total = drop_time + 0.1 + (0.55 if plate else 0.05) + lift_time + settle
    run = _Run("crumple_in_container", sim, sheet, out_dir, frames=frames, camera=((0.75, 0.6, 1.1), (0.0, 0.3, 0.0)),
               progress=progress, props=props, total_time=total)
    run.seconds(drop_time, "drop into the container")
    pile = _metrics(sheet)
    x = sheet.positions
    in_container = float(np.hypot(x[:, 0], x[:, 2]).max())
    if not plate:
        run.hold(warp, "hold in the container")
    for _ in walls:
        sim.remove_collider(len(sim.colliders) - 1)
    state["container"] = False
    run.seconds(0.1, "container removed")
    pile_height = float(sheet.positions[:, 1].max())
    pressed: dict[str, float] = {}
    if plate:
        t0 = sim.time
        hold_s = HOLD_STEPS * sim.dt
        y_start = pile_height + plate_half[1] + 0.006
        y_press = press * pile_height + plate_half[1]
        plate_c.advance_to(t0)
        plate_c.set_keyframes([t0, t0 + 0.3, t0 + 0.3 + hold_s, t0 + 0.5 + hold_s],
                              [(0, y_start, 0), (0, y_press, 0), (0, y_press, 0), (0, y_start + 0.15, 0)])
        ip = sim.add_collider(plate_c)
        state["plate"] = True
        run.add_prop(Prop("plate", lambda: _box_mesh(plate_c, plate_half),
                           visible=lambda: state["plate"]))
        run.seconds(0.3, "press")
        pressed = _metrics(sheet)
        run.hold(warp, "hold under the plate")
        run.seconds(0.2, "plate lifted")
        sim.remove_collider(ip)
        state["plate"] = False
    # Lift the two corners of the sheet's (originally) top short edge.
    top = np.flatnonzero(np.abs(F[:, 1] - F[:, 1].max()) < 1e-9)
    corners = top[[int(np.argmin(F[top, 0])), int(np.argmax(F[top, 0]))]]
    xc = sheet.positions[corners]
    up = np.array([0.0, lift_height, 0.0])
    if spread:
        # Each corner goes up by lift_height and, horizontally, to half the
        # edge's rest length W from the corners' midpoint, along the line
        # between them: the sheet then hangs open from its edge as from a
        # line, instead of folded in half where the crumpled corners lie
        # close together. That fold is geometry, not memory, and it would
        # fill the top percentile that M_sharp reads (§8).
        u = (xc[1] - xc[0]) * np.array([1.0, 0.0, 1.0])
        n = float(np.linalg.norm(u))
        u = u / n if n > 1e-9 else np.array([1.0, 0.0, 0.0])
        mid = 0.5 * (xc[0] + xc[1]) * np.array([1.0, 0.0, 1.0])
        for c, x, sign in zip(corners, xc, (-1.0, 1.0), strict=True):
            goal = mid + sign * 0.5 * W * u + np.array([0.0, x[1], 0.0]) + up
            sheet.add_handle([c], times=[0.0, lift_time], translations=np.array([np.zeros(3), goal - x]))
    else:
        sheet.add_handle(corners, times=[0.0, lift_time], translations=np.array([np.zeros(3), up]))
    run.seconds(lift_time, "lift two corners")
    # §8: metrics on the settled state. Kinetic damping, as in the other
    # scenes: measured mid-swing, the elastic reference (which friction
    # does not damp) showed more bending than the friction runs.
    hang = run.settle(settle, "hang")
    inter = sim.count_self_intersections()
    m = _metrics(sheet)
    result = dict(
        protocol=_protocol(hold, hold_time, material, variant="b (plate)" if plate else "a (container only)",
                           self_collision=self_collision, wrinkles=wrinkles, bend_friction=bend_friction,
                           bend_plasticity=bend_plasticity, container_radius_m=radius,
                           container="24 boxes + floor",
                           drop_time_s=drop_time, press_fraction=press, lift_height_m=lift_height,
                           lift_time_s=lift_time, lift_spread=spread, settle_max_s=settle, grid_m=W / nu,
                           vertices=mesh.num_vertices),
        metrics_pile=pile, metrics_pressed=pressed, pile_height_m=pile_height, settle=hang, metrics=m,
        M_sharp=m["M_sharp"], M_anchor=m["M_anchor"], M_plastic=m["M_plastic"], M_abs=m["M_abs"],
        self_intersections=inter, max_radius_in_container_m=in_container,
        positions_sha=hashlib.sha256(np.ascontiguousarray(sheet.positions).tobytes()).hexdigest(),
    )
    return run.finish(result)


# -- E10-like: knee bend ---------------------------------------------------------------


@register("knee_bend", "E10-like: a trouser-leg tube bent at a knee by two capsules, held short or long, "
          "straightened; knee-region wrinkle metrics", frames=63, backends=("cpu",))
def knee_bend(*, out_dir: Path, frames: int = 0, backend: str = "cpu", scale: float = 1.0,
              progress: bool = False, material: str = "trouser_cotton", hold: str = "held",
              hold_time: float = 500.0, angle: float = math.radians(90.0), bend_time: float = 1.0,
              settle: float = 0.5, self_collision: bool = True, sweep: bool = False) -> Path:
    """A trouser leg: an open tube of radius 0.07 m and length 0.6 m (15 mm
    spacing at scale 1: 30 × 41 = 1 230 vertices), Table 3 preset
    ``material``, waist ring pinned, gravity on, around a leg of two capsules
    (thigh r = 0.055 m above the knee at y = 0.3 m, shin r = 0.045 m below).
    The shin turns backwards about the knee (x axis) by ``angle`` rad over
    ``bend_time`` s, holds (50 steps, warped by ``hold_time`` s when held:
    the spec's short vs 500 s pose), straightens over ``bend_time`` s and
    the leg settles (≤ ``settle`` s, kinetic damping). Read-outs: §8
    metrics over the whole leg and in the knee region (hinges whose rest
    midpoint is within 0.1 m of the knee height; ``knee_metrics``), also
    while bent. ~40 s at scale 1."""
    _check_options(angle=angle, bend_time=bend_time, settle=settle)
    kwargs = dict(scale=scale, material=material, angle=angle, bend_time=bend_time, settle=settle,
                  self_collision=self_collision)
    if sweep:
        return _sweep("knee_bend", knee_bend, out_dir, "knee_M_sharp", "knee M_sharp after straightening (rad)",
                      progress=progress, kwargs=kwargs)
    warp = _hold_per_step(hold, hold_time)
    r, length, knee_y = 0.07, 0.6, 0.3
    na, nl = _res(30, scale, 8), _res(40, scale, 4)
    mesh = geometry.cylinder_mesh(center=(0.0, length / 2, 0.0), axis=(0.0, 1.0, 0.0), radius=r, height=length,
                                  n_around=na, n_along=nl, capped=False)
    sim = cloth.Simulation(self_collision=self_collision)
    leg = sim.add_cloth(mesh, cloth.Material.preset(material), wrinkles=cloth.Wrinkles())
    waist = np.arange(nl * na, (nl + 1) * na)
    leg.pin(waist)
    mid = leg.hinge_midpoints
    knee = np.abs(mid[:, 1] - knee_y) < 0.1
    r_thigh, r_shin = 0.055, 0.045
    thigh = colliders.Capsule(a=(0.0, knee_y, 0.0), b=(0.0, length + 0.1, 0.0), radius=r_thigh, friction=0.3)
    shin_len = knee_y + 0.05
    shin = colliders.Capsule(a=(0.0, knee_y - shin_len, 0.0), b=(0.0, knee_y, 0.0), radius=r_shin, friction=0.3)
    # Keys every 7.5°: the pose is interpolated linearly in translation, so
    # dense keys keep the shin's top on the knee while it turns about it.
    nk = max(2, int(math.ceil(math.degrees(angle) / 7.5)))
    hold_s = HOLD_STEPS * sim.dt
    pivot = np.array([0.0, knee_y, 0.0])
    c0 = np.array([0.0, knee_y - shin_len / 2, 0.0])
    times, trans, rots = [], [], []
    for k in range(nk + 1):
        Rk = _rot((1.0, 0.0, 0.0), angle * k / nk)
        times.append(bend_time * k / nk)
        trans.append(pivot + Rk @ (c0 - pivot))
        rots.append(Rk)
    back_t = [bend_time + hold_s + bend_time * k / nk for k in range(nk + 1)]
    times += back_t
    trans += trans[::-1]
    rots += rots[::-1]
    shin.set_keyframes(times, trans, rots)
    sim.add_collider(thigh, name="thigh")
    sim.add_collider(shin, name="shin")
    props = [Prop("thigh", lambda: _capsule_mesh(thigh, (length + 0.1 - knee_y) / 2, r_thigh - 0.002)),
             Prop("shin", lambda: _capsule_mesh(shin, shin_len / 2, r_shin - 0.002))]
    run = _Run("knee_bend", sim, leg, out_dir, frames=frames, camera=((0.95, 0.5, 0.55), (0.0, 0.28, 0.05)), progress=progress,
               props=props, total_time=2 * bend_time + hold_s + settle)
    run.seconds(bend_time, "bend")
    bent = _metrics(leg, knee)
    run.picture("bent")
    run.hold(warp)
    run.seconds(bend_time, "straighten")
    s = run.settle(settle)
    km = _metrics(leg, knee)
    result = dict(
        protocol=_protocol(hold, hold_time, material, angle_rad=angle, bend_time_s=bend_time, settle_max_s=settle,
                           self_collision=self_collision, knee_y_m=knee_y, knee_halfwidth_m=0.1,
                           n_around=na, rings=nl + 1, vertices=mesh.num_vertices),
        knee_metrics_bent=bent, knee_metrics=km, knee_M_sharp=km["M_sharp"], knee_M_abs=km["M_abs"],
        metrics=_metrics(leg), settle=s, knee_hinges=int(knee.sum()),
        self_intersections=sim.count_self_intersections() if self_collision else None,
    )
    return run.finish(result)
