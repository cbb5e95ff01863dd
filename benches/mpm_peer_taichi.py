"""The elastic-cube scene as a taichi MLS-MPM program (3-D, quadratic B-spline,
fixed corotated), in the style of taichi's ``mpm3d`` example: dense grid,
one kernel per stage, scatter with taichi's atomic ``+=``.

Imported only inside the taichi worker process of ``mpm_vs_peers``. No
``from __future__ import annotations`` here, and no ``-> None`` on kernels:
taichi reads kernel annotations as live objects and rejects a ``None`` return.
"""

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import taichi as ti  # type: ignore[import-untyped]

from mpm_scene import CubeScene


def build(scene: CubeScene, threads: int) -> tuple[Callable[[], None], Callable[[], npt.NDArray[Any]]]:
    """Initialise taichi on the CPU with ``threads`` threads and set up the scene.

    Returns ``(step, positions)``: ``step()`` advances one step of ``scene.dt``
    (and waits for it); ``positions()`` reads the particles back as numpy.
    """
    ti.init(arch=ti.cpu, cpu_max_num_threads=threads, default_fp=ti.f32, random_seed=0)
    n = scene.particles
    n_nodes = scene.n_grid + 1
    dx = scene.dx
    inv_dx = 1.0 / dx
    dt = scene.dt
    p_mass, p_vol = scene.p_mass, scene.p_vol
    mu, lam = scene.mu, scene.lam
    bound = scene.bound
    gravity = ti.Vector([0.0, scene.gravity, 0.0])

    x = ti.Vector.field(3, ti.f32, n)
    v = ti.Vector.field(3, ti.f32, n)
    c_aff = ti.Matrix.field(3, 3, ti.f32, n)
    f_def = ti.Matrix.field(3, 3, ti.f32, n)
    grid_v = ti.Vector.field(3, ti.f32, (n_nodes, n_nodes, n_nodes))
    grid_m = ti.field(ti.f32, (n_nodes, n_nodes, n_nodes))

    @ti.kernel
    def init(v0: ti.f32):
        for p in x:
            v[p] = ti.Vector([0.0, v0, 0.0])
            c_aff[p] = ti.Matrix.zero(ti.f32, 3, 3)
            f_def[p] = ti.Matrix.identity(ti.f32, 3)

    @ti.kernel
    def clear_grid():
        for i, j, k in grid_m:
            grid_v[i, j, k] = ti.Vector.zero(ti.f32, 3)
            grid_m[i, j, k] = 0.0

    @ti.kernel
    def p2g():
        for p in x:
            xp = x[p] * inv_dx
            base = ti.cast(ti.floor(xp - 0.5), ti.i32)
            fx = xp - ti.cast(base, ti.f32)
            w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1.0) ** 2, 0.5 * (fx - 0.5) ** 2]
            fp = f_def[p]
            u, _, vv = ti.svd(fp)
            rot = u @ vv.transpose()
            jac = fp.determinant()
            # Kirchhoff stress of fixed corotated: 2μ(F − R)Fᵀ + λ(J − 1)J I
            tau = 2.0 * mu * (fp - rot) @ fp.transpose() + ti.Matrix.identity(ti.f32, 3) * (lam * (jac - 1.0) * jac)
            affine = (-dt * p_vol * 4.0 * inv_dx * inv_dx) * tau + p_mass * c_aff[p]
            mv = p_mass * v[p]
            for off in ti.static(ti.grouped(ti.ndrange(3, 3, 3))):
                dpos = (ti.cast(off, ti.f32) - fx) * dx
                weight = w[off[0]][0] * w[off[1]][1] * w[off[2]][2]
                grid_v[base + off] += weight * (mv + affine @ dpos)
                grid_m[base + off] += weight * p_mass

    @ti.kernel
    def grid_update():
        for i, j, k in grid_m:
            m = grid_m[i, j, k]
            if m > 0.0:
                vel = grid_v[i, j, k] / m + dt * gravity
                idx = ti.Vector([i, j, k])
                for a in ti.static(range(3)):
                    if (idx[a] < bound and vel[a] < 0.0) or (idx[a] > n_nodes - 1 - bound and vel[a] > 0.0):
                        vel[a] = 0.0
                grid_v[i, j, k] = vel

    @ti.kernel
    def g2p():
        for p in x:
            xp = x[p] * inv_dx
            base = ti.cast(ti.floor(xp - 0.5), ti.i32)
            fx = xp - ti.cast(base, ti.f32)
            w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1.0) ** 2, 0.5 * (fx - 0.5) ** 2]
            new_v = ti.Vector.zero(ti.f32, 3)
            new_c = ti.Matrix.zero(ti.f32, 3, 3)
            for off in ti.static(ti.grouped(ti.ndrange(3, 3, 3))):
                dpos = ti.cast(off, ti.f32) - fx
                weight = w[off[0]][0] * w[off[1]][1] * w[off[2]][2]
                gv = grid_v[base + off]
                new_v += weight * gv
                new_c += (4.0 * inv_dx * weight) * gv.outer_product(dpos)
            v[p] = new_v
            c_aff[p] = new_c
            f_def[p] = (ti.Matrix.identity(ti.f32, 3) + dt * new_c) @ f_def[p]
            x[p] += dt * new_v

    x.from_numpy(scene.points())
    init(scene.v0)

    def step() -> None:
        clear_grid()
        p2g()
        grid_update()
        g2p()
        ti.sync()

    def positions() -> npt.NDArray[Any]:
        return np.asarray(x.to_numpy())

    return step, positions
