"""The load → hold → unload → settle protocol every cloth scene runs (described in
:mod:`crumple.scenes.cloth_scenes`), with its frames, PNG, metrics and hold-time sweeps."""

from __future__ import annotations

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

from .. import cloth, colliders, geometry
from .._checks import choice, non_negative, positive
from .._progress import progress as _progress_bar
from ..geometry import TriMesh
from . import frame_writer
from ._harness import GROUND, Prop, write_json


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
        self._writer = frame_writer(self.out_dir, self.name, fps=1.0 / self.frame_dt, sim=self.sim)
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
