# The kernels are warp DSL (annotations are warp types, tuple returns and vector
# indexing follow warp's rules), which mypy cannot type; build() is plain Python.
# mypy: disable-error-code="valid-type,misc,index,operator"
"""The elastic-cube scene as NVIDIA warp kernels on the CPU device (3-D
MLS-MPM, quadratic B-spline, fixed corotated): the same four stages as the
taichi program, scatter with ``wp.atomic_add``.

Warp's CPU backend runs each launch as a serial loop over the launch's
threads on the calling thread, so this peer uses one core whatever the
thread setting.

Imported only inside the warp worker process of ``mpm_vs_peers``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import warp as wp

from mpm_scene import CubeScene

DEVICE = "cpu"


@wp.func
def bspline_weights(fx: wp.vec3) -> wp.mat33:
    """Quadratic B-spline weights: row ``k`` holds node ``k``'s weight on each axis."""
    w0 = wp.cw_mul(wp.vec3(1.5) - fx, wp.vec3(1.5) - fx) * 0.5
    d1 = fx - wp.vec3(1.0)
    w1 = wp.vec3(0.75) - wp.cw_mul(d1, d1)
    d2 = fx - wp.vec3(0.5)
    w2 = wp.cw_mul(d2, d2) * 0.5
    return wp.mat33(w0[0], w0[1], w0[2], w1[0], w1[1], w1[2], w2[0], w2[1], w2[2])


@wp.kernel
def clear_grid(grid_v: wp.array3d(dtype=wp.vec3), grid_m: wp.array3d(dtype=float)) -> None:
    i, j, k = wp.tid()
    grid_v[i, j, k] = wp.vec3(0.0)
    grid_m[i, j, k] = 0.0


@wp.kernel
def p2g(
    x: wp.array(dtype=wp.vec3),
    v: wp.array(dtype=wp.vec3),
    c_aff: wp.array(dtype=wp.mat33),
    f_def: wp.array(dtype=wp.mat33),
    grid_v: wp.array3d(dtype=wp.vec3),
    grid_m: wp.array3d(dtype=float),
    dx: float,
    dt: float,
    p_mass: float,
    p_vol: float,
    mu: float,
    lam: float,
) -> None:
    p = wp.tid()
    inv_dx = 1.0 / dx
    xp = x[p] * inv_dx
    bi = int(wp.floor(xp[0] - 0.5))
    bj = int(wp.floor(xp[1] - 0.5))
    bk = int(wp.floor(xp[2] - 0.5))
    fx = xp - wp.vec3(float(bi), float(bj), float(bk))
    w = bspline_weights(fx)
    fp = f_def[p]
    u, sigma, vv = wp.svd3(fp)
    rot = u * wp.transpose(vv)
    jac = wp.determinant(fp)
    # Kirchhoff stress of fixed corotated: 2μ(F − R)Fᵀ + λ(J − 1)J I
    tau = (fp - rot) * wp.transpose(fp) * (2.0 * mu) + wp.identity(n=3, dtype=float) * (lam * (jac - 1.0) * jac)
    affine = tau * (-dt * p_vol * 4.0 * inv_dx * inv_dx) + c_aff[p] * p_mass
    mv = v[p] * p_mass
    for a in range(3):
        for b in range(3):
            for c in range(3):
                dpos = (wp.vec3(float(a), float(b), float(c)) - fx) * dx
                weight = w[a, 0] * w[b, 1] * w[c, 2]
                wp.atomic_add(grid_v, bi + a, bj + b, bk + c, (mv + affine * dpos) * weight)
                wp.atomic_add(grid_m, bi + a, bj + b, bk + c, weight * p_mass)


@wp.kernel
def grid_update(
    grid_v: wp.array3d(dtype=wp.vec3),
    grid_m: wp.array3d(dtype=float),
    dt: float,
    gravity: float,
    bound: int,
    n_nodes: int,
) -> None:
    i, j, k = wp.tid()
    m = grid_m[i, j, k]
    if m > 0.0:
        vel = grid_v[i, j, k] / m + wp.vec3(0.0, gravity * dt, 0.0)
        idx = wp.vec3i(i, j, k)
        for a in range(3):
            if (idx[a] < bound and vel[a] < 0.0) or (idx[a] > n_nodes - 1 - bound and vel[a] > 0.0):
                vel[a] = 0.0
        grid_v[i, j, k] = vel


@wp.kernel
def g2p(
    x: wp.array(dtype=wp.vec3),
    v: wp.array(dtype=wp.vec3),
    c_aff: wp.array(dtype=wp.mat33),
    f_def: wp.array(dtype=wp.mat33),
    grid_v: wp.array3d(dtype=wp.vec3),
    dx: float,
    dt: float,
) -> None:
    p = wp.tid()
    inv_dx = 1.0 / dx
    xp = x[p] * inv_dx
    bi = int(wp.floor(xp[0] - 0.5))
    bj = int(wp.floor(xp[1] - 0.5))
    bk = int(wp.floor(xp[2] - 0.5))
    fx = xp - wp.vec3(float(bi), float(bj), float(bk))
    w = bspline_weights(fx)
    new_v = wp.vec3(0.0)
    new_c = wp.mat33(0.0)
    for a in range(3):
        for b in range(3):
            for c in range(3):
                dpos = wp.vec3(float(a), float(b), float(c)) - fx
                weight = w[a, 0] * w[b, 1] * w[c, 2]
                gv = grid_v[bi + a, bj + b, bk + c]
                new_v = new_v + gv * weight
                new_c = new_c + wp.outer(gv, dpos) * (4.0 * inv_dx * weight)
    v[p] = new_v
    c_aff[p] = new_c
    f_def[p] = (wp.identity(n=3, dtype=float) + new_c * dt) * f_def[p]
    x[p] = x[p] + new_v * dt


def build(scene: CubeScene) -> tuple[Callable[[], None], Callable[[], npt.NDArray[Any]]]:
    """Initialise warp and set up the scene on the CPU device.

    Returns ``(step, positions)``: ``step()`` advances one step of
    ``scene.dt``; ``positions()`` reads the particles back as numpy.
    """
    wp.init()
    n = scene.particles
    nn = scene.n_grid + 1
    x: wp.array = wp.array(scene.points(), dtype=wp.vec3, device=DEVICE)
    v0 = np.tile(np.array([0.0, scene.v0, 0.0], np.float32), (n, 1))
    v: wp.array = wp.array(v0, dtype=wp.vec3, device=DEVICE)
    c_aff = wp.zeros(n, dtype=wp.mat33, device=DEVICE)
    f_def: wp.array = wp.array(np.tile(np.eye(3, dtype=np.float32), (n, 1, 1)), dtype=wp.mat33, device=DEVICE)
    grid_v = wp.zeros((nn, nn, nn), dtype=wp.vec3, device=DEVICE)
    grid_m = wp.zeros((nn, nn, nn), dtype=float, device=DEVICE)
    dx, dt = float(scene.dx), float(scene.dt)

    def step() -> None:
        wp.launch(clear_grid, dim=(nn, nn, nn), inputs=[grid_v, grid_m], device=DEVICE)
        wp.launch(p2g, dim=n, inputs=[x, v, c_aff, f_def, grid_v, grid_m, dx, dt, float(scene.p_mass),
                                      float(scene.p_vol), float(scene.mu), float(scene.lam)], device=DEVICE)
        wp.launch(grid_update, dim=(nn, nn, nn),
                  inputs=[grid_v, grid_m, dt, float(scene.gravity), int(scene.bound), nn], device=DEVICE)
        wp.launch(g2p, dim=n, inputs=[x, v, c_aff, f_def, grid_v, dx, dt], device=DEVICE)
        wp.synchronize_device(DEVICE)

    def positions() -> npt.NDArray[Any]:
        return np.asarray(x.numpy())

    return step, positions
