"""SM-block (``pbd_scene.py``) as a Taichi program: the same Jacobi
shape-matching loop crumple runs (spec shape_matching §1.3: predict; per
iteration, every cluster's centre, A_pq and rotation by three warm-started
Müller iterations, then every particle's mean goal displacement over its
clusters with split weights μ = m/n_i; the ground at y = 0 with contact
offset 0.5r and position-level Coulomb friction μ_s 0.6, μ_k 0.5; v from the
motion), in f32 on Taichi's CPU backend. No plasticity or skinning: this is
the algorithm-identical peer for the *Sim* column.

Run through ``pbd_table1.py``; alone: ``python benches/pbd_peer_taichi.py
--size 13.8K`` prints one ``RESULT`` line.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

import pbd_scene as S
from _common import THREADS, time_steps, worker_main


def measure(size: str, threads: int = THREADS) -> dict[str, Any]:
    import taichi as ti

    block = S.SIZES[size]
    ti.init(arch=ti.cpu, cpu_max_num_threads=threads, default_fp=ti.f32, log_level=ti.WARN)
    x0 = S.lattice(block.n).astype(np.float32)
    cl, count = S.clusters(block.n)
    n, nc = len(x0), len(cl)
    offsets = np.zeros(nc + 1, dtype=np.int32)
    offsets[1:] = np.cumsum([len(c) for c in cl])
    members = np.concatenate(cl).astype(np.int32)
    mu = (1.0 / count[members]).astype(np.float32)
    rest = np.empty((len(members), 3), dtype=np.float32)
    for c in range(nc):
        s, e = offsets[c], offsets[c + 1]
        centre = (mu[s:e, None] * x0[members[s:e]]).sum(axis=0) / mu[s:e].sum()
        rest[s:e] = x0[members[s:e]] - centre
    # Particle → its entries (ascending), for the goal gather.
    by_particle = np.argsort(members, kind="stable").astype(np.int32)
    p_off = np.zeros(n + 1, dtype=np.int32)
    p_off[1:] = np.cumsum(np.bincount(members, minlength=n))
    entry_cluster = np.repeat(np.arange(nc, dtype=np.int32), np.diff(offsets))

    x = ti.Vector.field(3, ti.f32, n)
    xs = ti.Vector.field(3, ti.f32, n)
    v = ti.Vector.field(3, ti.f32, n)
    inv_count = ti.field(ti.f32, n)
    f_off = ti.field(ti.i32, nc + 1)
    f_mem = ti.field(ti.i32, len(members))
    f_mu = ti.field(ti.f32, len(members))
    f_rest = ti.Vector.field(3, ti.f32, len(members))
    f_by = ti.field(ti.i32, len(members))
    f_poff = ti.field(ti.i32, n + 1)
    f_ecl = ti.field(ti.i32, len(members))
    centre = ti.Vector.field(3, ti.f32, nc)
    rot = ti.Matrix.field(3, 3, ti.f32, nc)
    quat = ti.Vector.field(4, ti.f32, nc)
    for f, a in ((x, x0), (xs, x0), (v, np.zeros_like(x0)), (inv_count, (1.0 / count).astype(np.float32)),
                 (f_off, offsets), (f_mem, members), (f_mu, mu), (f_rest, rest), (f_by, by_particle),
                 (f_poff, p_off), (f_ecl, entry_cluster), (quat, np.tile(np.float32([1, 0, 0, 0]), (nc, 1)))):
        f.from_numpy(a)

    dt, k_sm = S.DT, S.STIFFNESS
    d_pw, mu_s, mu_k = 0.5 * S.R, 0.6, 0.5
    g = ti.Vector(list(S.GRAVITY))

    @ti.func
    def to_matrix(q):  # type: ignore[no-untyped-def]
        w, a, b, c = q[0], q[1], q[2], q[3]
        return ti.Matrix([[1 - 2 * (b * b + c * c), 2 * (a * b - w * c), 2 * (a * c + w * b)],
                          [2 * (a * b + w * c), 1 - 2 * (a * a + c * c), 2 * (b * c - w * a)],
                          [2 * (a * c - w * b), 2 * (b * c + w * a), 1 - 2 * (a * a + b * b)]])

    @ti.kernel
    def predict():  # type: ignore[no-untyped-def]
        for i in range(n):
            v[i] += dt * g
            xs[i] = x[i] + dt * v[i]

    @ti.kernel
    def fit():  # type: ignore[no-untyped-def]
        for c in range(nc):
            msum = 0.0
            cx = ti.Vector([0.0, 0.0, 0.0])
            for e in range(f_off[c], f_off[c + 1]):
                msum += f_mu[e]
                cx += f_mu[e] * xs[f_mem[e]]
            cx /= msum
            apq = ti.Matrix.zero(ti.f32, 3, 3)
            for e in range(f_off[c], f_off[c + 1]):
                apq += f_mu[e] * (xs[f_mem[e]] - cx).outer_product(f_rest[e])
            q = quat[c]
            for _ in ti.static(range(3)):  # Müller et al. 2016, warm-started
                m = to_matrix(q)
                num = ti.Vector([0.0, 0.0, 0.0])
                den = 0.0
                for col in ti.static(range(3)):
                    rc = ti.Vector([m[0, col], m[1, col], m[2, col]])
                    ac = ti.Vector([apq[0, col], apq[1, col], apq[2, col]])
                    num += rc.cross(ac)
                    den += rc.dot(ac)
                omega = num / (ti.abs(den) + 1e-9)
                angle = omega.norm()
                if angle > 1e-6:
                    axis = omega / angle
                    h = 0.5 * angle
                    dq = ti.Vector([ti.cos(h), axis[0] * ti.sin(h), axis[1] * ti.sin(h), axis[2] * ti.sin(h)])
                    q = ti.Vector([dq[0] * q[0] - dq[1] * q[1] - dq[2] * q[2] - dq[3] * q[3],
                                   dq[0] * q[1] + dq[1] * q[0] + dq[2] * q[3] - dq[3] * q[2],
                                   dq[0] * q[2] - dq[1] * q[3] + dq[2] * q[0] + dq[3] * q[1],
                                   dq[0] * q[3] + dq[1] * q[2] - dq[2] * q[1] + dq[3] * q[0]])
                    q = q / q.norm()
            quat[c] = q
            rot[c] = to_matrix(q)
            centre[c] = cx

    @ti.kernel
    def goals():  # type: ignore[no-untyped-def]
        for i in range(n):
            d = ti.Vector([0.0, 0.0, 0.0])
            for k in range(f_poff[i], f_poff[i + 1]):
                e = f_by[k]
                c = f_ecl[e]
                d += k_sm * (rot[c] @ f_rest[e] + centre[c] - xs[i])
            xs[i] += d * inv_count[i]

    @ti.kernel
    def ground():  # type: ignore[no-untyped-def]
        for i in range(n):
            pen = d_pw - xs[i][1]
            if pen > 0.0:
                xs[i][1] += pen
                u = xs[i] - x[i]
                ut = ti.Vector([u[0], 0.0, u[2]])
                t = ut.norm()
                if t < mu_s * pen:
                    xs[i] -= ut
                elif t > 0.0:
                    xs[i] -= ut * ti.min(mu_k * pen / t, 1.0)

    @ti.kernel
    def finish():  # type: ignore[no-untyped-def]
        for i in range(n):
            v[i] = (xs[i] - x[i]) / dt
            x[i] = xs[i]

    def step() -> None:
        predict()
        for _ in range(S.ITERATIONS):
            fit()
            goals()
            ground()
        finish()
        ti.sync()

    timing = time_steps(step, warmup=block.warmup, steps=block.steps)
    return {"framework": "taichi " + ".".join(map(str, ti.__version__)) + " (CPU, Jacobi shape matching)", "size": size,
            "particles": n, "clusters": nc, "memberships": int(len(members)), "threads": threads,
            "ms_per_step": 1e3 * timing.s_per_step, "median_ms_per_step": 1e3 * timing.median_s_per_step,
            "cpu_utilisation": timing.cpu_utilisation, **S.sanity(x0, x.to_numpy())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size", choices=sorted(S.SIZES), default="13.8K")
    ap.add_argument("--threads", type=int, default=THREADS)
    args = ap.parse_args()
    return worker_main(lambda: measure(args.size, args.threads))


if __name__ == "__main__":
    sys.exit(main())
