"""The cloth benchmark's twist scene in NVIDIA Newton, on warp's CPU device.

A worker of ``cloth_wrinkles.py``: it runs in the Newton peer's own virtual
environment (``bench-out/peers/newton``, ``newton==1.8.0`` with
``warp-lang==1.19.0``) and never imports crumple. One process measures one
(solver, size) and prints a ``RESULT {json}`` line: seconds per step, the
vertex count, whether the state stayed finite, the twist profile after the
timed steps (``twist.mid_over_top``, the accuracy proxy that crumple's worker
reports too) and the versions used.

The scene (``cloth_wrinkles``'s constants): an open tube, radius 0.04 m,
height 0.11 m, along +y centred at the origin, ``n_around × (n_along + 1)``
vertices triangulated exactly as crumple's ``cylinder_mesh`` (ring ``j``,
column ``k`` is vertex ``j·n_around + k`` at angle 2πk/n_around from +z
towards +x; quad (j, k) is split along its 0–2 diagonal when j + k is even);
bottom ring fixed, top ring turned about +y by π/4 over 1 s; dt = 1 ms,
gravity −9.81 m/s² along y, no self-collision, no ground, no other shapes.

Crumple's "cotton" (areal density 0.06 kg/m², K11 = K22 = 50 N/m,
K12 = 0.2 N/m, K33 = 30 N/m, bending κ = 0.25 · 5e-6 J, flat rest shape,
no damping) maps to each solver as follows.

- ``vbd`` (``SolverVBD``, default iterations): the isotropic membrane with
  Lamé μ = ½K11 − ½K12 (``tri_ke``) and λ = K12 (``tri_ka``), which has
  crumple's small-strain stretch and Poisson terms; per-edge dihedral bending
  stiffness ``ke = κ·l/(A0 + A1)`` (edge length l, areas of the two adjacent
  triangles: Newton's ½·ke·l·θ² equals crumple's ½·κ·l²/(A0 + A1)·θ²), zero
  on boundary edges; rest angles 0; all damping 0; mesh coloured with the
  bending edges.
- ``style3d`` (``SolverStyle3D``, default ``Config()``): the anisotropic
  membrane ``tri_aniso_ke = (K11, K22, K33/2)`` (its shear term is
  ½·ks·(Fu·Fv)², crumple's K33·E12² = ¼·K33·(Fu·Fv)²), bending
  ``edge_aniso_ke = κ/3`` on each axis; rest shape given as the panel = the
  tube unrolled with chord spacing and the seam column duplicated (in the
  panel only); its collision handler switched off.

Fixed and driven vertices get mass 0 and lose ``ParticleFlags.ACTIVE``; before
each step the top ring's target for the end of that step is written, with
zero velocity, into both state buffers. Particle radius 0 and no particle
grid: no particle contact of any kind.

Warp runs CPU kernels serially on the calling thread, so this peer uses one
core; the first run compiles warp's kernels (cached under ``~/.cache/warp``),
which falls in ``build_s``/``warmup_s``, not in the timed window.

Run (inside the Newton environment): ``python benches/cloth_peer_newton.py
--solver {vbd,style3d} --size {2K,7K,27K} [--warmup 3] [--steps 10]``.
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time
from typing import Any

import numpy as np
import numpy.typing as npt

from _common import time_steps, worker_main
from cloth_wrinkles import COTTON, DT, HEIGHT, RADIUS, SIZES, twist_angle, twist_profile

SOLVERS = ("vbd", "style3d")
GRAVITY = -9.81
"""m/s², along y."""
DEVICE = "cpu"

I32 = npt.NDArray[np.int32]
F64 = npt.NDArray[np.float64]


def _quad_split(rows: int, quads_around: int, stride: int, wrap: bool) -> I32:
    """Triangles of a ``rows × quads_around`` band of quads, vertex (j, k) at
    ``j·stride + k`` (``k`` taken modulo ``quads_around`` when ``wrap``), each quad
    split as crumple's generators do: (q0, q1, q2), (q0, q2, q3) when j + k is
    even, else (q0, q1, q3), (q1, q2, q3)."""
    j, k = np.meshgrid(np.arange(rows), np.arange(quads_around), indexing="ij")
    k1 = (k + 1) % quads_around if wrap else k + 1
    q = np.stack([j * stride + k, j * stride + k1, (j + 1) * stride + k1, (j + 1) * stride + k], axis=-1).reshape(-1, 4)
    even = ((j + k) % 2 == 0).reshape(-1)
    a = np.where(even[:, None], q[:, [0, 1, 2]], q[:, [0, 1, 3]])
    b = np.where(even[:, None], q[:, [0, 2, 3]], q[:, [1, 2, 3]])
    return np.stack([a, b], axis=1).reshape(-1, 3).astype(np.int32)


def tube(n_around: int, n_along: int) -> tuple[F64, I32]:
    """The open tube as crumple's ``cylinder_mesh(axis=+y, capped=False)`` makes it:
    vertices ``(N, 3)`` m and triangles ``(T, 3)``."""
    phi = 2.0 * np.pi * np.arange(n_around) / n_around
    y = HEIGHT * np.arange(n_along + 1) / n_along - 0.5 * HEIGHT
    v = np.empty((n_along + 1, n_around, 3))
    v[:, :, 0] = RADIUS * np.sin(phi)
    v[:, :, 1] = y[:, None]
    v[:, :, 2] = RADIUS * np.cos(phi)
    return v.reshape(-1, 3), _quad_split(n_along, n_around, n_around, wrap=True)


def tube_panel(n_around: int, n_along: int) -> tuple[F64, I32]:
    """Style3D's rest panel: the tube cut along its seam and unrolled, ``u`` along
    the rings with the chord as spacing, ``v`` = height (m); ``n_around + 1``
    columns, and triangles in the same order as :func:`tube`'s."""
    chord = 2.0 * RADIUS * math.sin(math.pi / n_around)
    u = chord * np.arange(n_around + 1)
    y = HEIGHT * np.arange(n_along + 1) / n_along - 0.5 * HEIGHT
    uv = np.stack(np.meshgrid(u, y, indexing="xy"), axis=-1).reshape(-1, 2)
    return uv, _quad_split(n_along, n_around, n_around + 1, wrap=False)


def bending_ke(edges: npt.NDArray[Any], x: F64, kappa: float) -> F64:
    """Newton's dihedral bending stiffness per edge for crumple's bending ``kappa``
    (J): ``kappa·l/(A0 + A1)``; 0 on boundary edges. ``edges`` rows are Newton's
    ``(o0, o1, v0, v1)``: the two opposite vertices (−1 if absent), then the edge."""
    o0, o1, v0, v1 = (edges[:, c] for c in range(4))
    inner = (o0 >= 0) & (o1 >= 0)
    o0, o1 = np.where(inner, o0, v0), np.where(inner, o1, v0)
    e = x[v1] - x[v0]
    area0 = 0.5 * np.linalg.norm(np.cross(e, x[o0] - x[v0]), axis=1)
    area1 = 0.5 * np.linalg.norm(np.cross(e, x[o1] - x[v0]), axis=1)
    ke = kappa * np.linalg.norm(e, axis=1) / np.where(inner, area0 + area1, 1.0)
    return np.where(inner, ke, 0.0)


def measure(solver_name: str, size: str, warmup: int, steps: int) -> dict[str, Any]:
    """Build the scene for ``solver_name`` at ``size``, run ``warmup`` + ``steps``
    steps and return the measurement."""
    import warp as wp

    wp.config.log_level = getattr(wp, "LOG_WARNING", 30)  # no start-up banner or module-load lines
    wp.init()
    import newton
    from newton.solvers import style3d

    n_around, n_along = SIZES[size]
    x0, tris = tube(n_around, n_along)
    ring = np.round(x0[:, 1], 9)
    bottom = np.flatnonzero(ring == ring.min())
    top = np.flatnonzero(ring == ring.max())
    kappa = COTTON["bending_scale"] * COTTON["bending"]
    k11, k22, k12, k33 = (COTTON[k] for k in ("k11", "k22", "k12", "k33"))

    t0 = time.perf_counter()
    builder = newton.ModelBuilder(up_axis=newton.Axis.Y, gravity=(0.0, GRAVITY, 0.0))
    mesh_args: dict[str, Any] = {
        "pos": wp.vec3(0.0, 0.0, 0.0), "rot": wp.quat_identity(), "vel": wp.vec3(0.0, 0.0, 0.0), "scale": 1.0,
        "vertices": [wp.vec3(*p) for p in x0], "indices": tris.reshape(-1).tolist(),
        "density": COTTON["areal_density"], "particle_radius": 0.0,
    }
    if solver_name == "style3d":
        newton.solvers.SolverStyle3D.register_custom_attributes(builder)
        uv, panel_tris = tube_panel(n_around, n_along)
        style3d.add_cloth_mesh(builder, **mesh_args, panel_verts=[wp.vec2(*p) for p in uv],
                               panel_indices=panel_tris.reshape(-1).tolist(),
                               tri_aniso_ke=wp.vec3(k11, k22, 0.5 * k33),
                               edge_aniso_ke=wp.vec3(kappa / 3.0, kappa / 3.0, kappa / 3.0),
                               tri_ka=0.0, tri_kd=0.0, edge_kd=0.0)
    else:
        # edge_ke is a placeholder: the per-edge stiffness is set after finalize().
        builder.add_cloth_mesh(**mesh_args, tri_ke=0.5 * k11 - 0.5 * k12, tri_ka=k12, tri_kd=0.0,
                               edge_ke=1.0, edge_kd=0.0)
    inactive = ~int(newton.ParticleFlags.ACTIVE)
    for v in np.concatenate([bottom, top]).tolist():
        builder.particle_mass[v] = 0.0
        builder.particle_flags[v] = int(builder.particle_flags[v]) & inactive
    if solver_name == "vbd":
        builder.color(include_bending=True)
    model = builder.finalize(device=DEVICE)
    model.particle_grid = None
    if solver_name == "vbd":
        props = model.edge_bending_properties.numpy()
        props[:, 0] = bending_ke(model.edge_indices.numpy().reshape(-1, 4), x0, kappa)
        props[:, 1] = 0.0
        model.edge_bending_properties.assign(props)
        model.edge_rest_angle.zero_()
        solver: Any = newton.solvers.SolverVBD(model)
    else:
        solver = newton.solvers.SolverStyle3D(model)
        solver.collision = None  # no self-collision
    states = [model.state(), model.state()]
    control = model.control()
    build_s = time.perf_counter() - t0

    top_xz = x0[top][:, [0, 2]]
    clock = {"t": 0.0}

    def drive(t: float) -> None:
        """Top ring at its prescribed place for time ``t``, at rest, in both buffers
        (warp CPU arrays: numpy views write straight into them)."""
        c, s = math.cos(twist_angle(t)), math.sin(twist_angle(t))
        target = np.empty((len(top), 3), dtype=np.float32)
        target[:, 0] = top_xz[:, 0] * c + top_xz[:, 1] * s
        target[:, 1] = x0[top, 1]
        target[:, 2] = -top_xz[:, 0] * s + top_xz[:, 1] * c
        for st in states:
            st.particle_q.numpy()[top] = target
            st.particle_qd.numpy()[top] = 0.0

    def step() -> None:
        drive(clock["t"] + DT)
        states[0].clear_forces()
        solver.step(states[0], states[1], control, None, DT)
        wp.synchronize_device(DEVICE)
        states.reverse()
        clock["t"] += DT

    tm = time_steps(step, warmup=warmup, steps=steps)
    x = states[0].particle_q.numpy().astype(np.float64)
    twist = twist_profile(x, x0, clock["t"])
    if twist["top_ring_angle_rad"] is not None and abs(twist["top_ring_angle_rad"] - twist_angle(clock["t"])) > 1e-4:
        raise RuntimeError(f"top ring at {twist['top_ring_angle_rad']:.6f} rad, driven to "
                           f"{twist_angle(clock['t']):.6f} rad: the targets did not reach warp's buffers")
    return {
        "engine": "newton",
        "solver": solver_name,
        "size": size,
        "vertices": int(x0.shape[0]),
        "triangles": int(tris.shape[0]),
        "dt": DT,
        "warmup": warmup,
        "steps": steps,
        "build_s": build_s,
        "warmup_s": tm.warmup_s,
        "s_per_step": tm.s_per_step,
        "median_s_per_step": tm.median_s_per_step,
        "cpu_utilisation": tm.cpu_utilisation,
        "threads": 1,
        "threads_setting": "none: warp's CPU device runs each kernel launch serially on the calling thread",
        "finite": bool(np.all(np.isfinite(x))),
        "twist": twist,
        "versions": {"newton": str(newton.__version__), "warp": str(wp.__version__), "numpy": np.__version__,
                     "python": platform.python_version()},
    }


def main() -> int:
    """CLI: one (solver, size) measurement, printed as a ``RESULT`` line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--solver", choices=SOLVERS, required=True)
    ap.add_argument("--size", choices=tuple(SIZES), required=True)
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps first (default 3)")
    ap.add_argument("--steps", type=int, default=10, help="timed steps (default 10)")
    a = ap.parse_args()
    return worker_main(lambda: measure(a.solver, a.size, a.warmup, a.steps))


if __name__ == "__main__":
    sys.exit(main())
