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
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from .. import cloth, geometry
from .._checks import choice, positive
from ..errors import InvalidInputError
from . import register
from ._cloth_protocol import (
    FRAME_DT,
    HOLD_STEPS,
    SWEEP_HOLDS,
    _Run,
    _check_options,
    _hold_per_step,
    _metrics,
    _protocol,
    _res,
    _rot,
    _sweep,
)
from .cloth_contact_scenes import _settle_plain

__all__ = ["FRAME_DT", "HOLD_STEPS", "SWEEP_HOLDS", "wrinkle_strip", "cylinder_twist", "flat_twist"]


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
