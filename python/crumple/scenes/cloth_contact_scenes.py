"""The cloth scenes with contact (spec persistent_wrinkles §8 E7, E8, E10): a square
pressed by a plate, a sheet crumpled in a container, a trouser leg bent at the knee.
The protocol they share and its options are described in :mod:`crumple.scenes.cloth_scenes`."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .. import cloth, colliders, geometry
from ..errors import InvalidInputError
from ..geometry import TriMesh
from . import register
from ._harness import Prop
from ._cloth_protocol import (
    HOLD_STEPS,
    _Run,
    _SETTLE_KE,
    _SETTLE_WINDOW,
    _box_mesh,
    _capsule_mesh,
    _check_options,
    _ground_prop,
    _hold_per_step,
    _metrics,
    _protocol,
    _res,
    _rot,
    _sweep,
)

__all__ = ["pressed_square", "crumple_in_container", "knee_bend"]


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
