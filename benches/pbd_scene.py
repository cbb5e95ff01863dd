"""The SM-block scene of the shape-matching peer comparison, built the same
way for crumple and every peer.

A cubic lattice of ``n³`` particles at spacing r = 0.1 m (mass 1 each),
lowest corner at (0, 0.3, 0), falls onto the ground plane y = 0. Clusters are
centred on the lattice points whose three indices are 1 modulo 3 (r^G = 3r)
and hold every particle closer than 4r to the centre (r^C = 4r); clusters
with fewer than 4 members are dropped. Gravity (0, −9.81, 0), dt = 1/60 s, one
substep, 4 solver iterations, no plasticity, no re-sampling: the *Sim*
column of the paper's Table 1 (spec shape_matching §10.3). Particle ids run
x-major, then y, then z: id = (i·n + j)·n + k, the order of PositionBasedDynamics'
regular tet model, so every framework numbers the particles alike.

Sizes: 24³ = 13,824 and 34³ = 39,304 particles (the "13.8K" and "39.3K" of
the issue).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

R = 0.1
"""Lattice spacing r, m."""
Y0 = 0.3
"""Height of the block's lowest layer, m."""
DT = 1.0 / 60.0
GRAVITY = (0.0, -9.81, 0.0)
ITERATIONS = 4
STIFFNESS = 0.9
"""Shape-matching stiffness K of every cluster."""
CLUSTER_STRIDE = 3
CLUSTER_RADIUS = 4.0
"""r^C in spacings (strict: |x − centre| < 4r)."""
MIN_MEMBERS = 4


@dataclass(frozen=True)
class Block:
    """One SM-block size."""

    n: int
    warmup: int = 5
    steps: int = 120

    @property
    def particles(self) -> int:
        return self.n ** 3


SIZES = {"13.8K": Block(24), "39.3K": Block(34, steps=60)}


def lattice(n: int) -> npt.NDArray[np.float64]:
    """``(n³, 3)`` positions, m, in the id order of the module docstring."""
    i, j, k = np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij")
    ijk = np.stack([i.ravel(), j.ravel(), k.ravel()], axis=1)
    return ijk * R + np.array([0.0, Y0, 0.0])


def clusters(n: int) -> tuple[list[npt.NDArray[np.int64]], npt.NDArray[np.int64]]:
    """The clusters (ascending index arrays) and each particle's cluster count."""
    i, j, k = np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij")
    ijk = np.stack([i.ravel(), j.ravel(), k.ravel()], axis=1).astype(np.float64)
    centres = np.arange(1, n, CLUSTER_STRIDE) if n > 1 else np.array([0])
    out: list[npt.NDArray[np.int64]] = []
    r2 = CLUSTER_RADIUS ** 2
    for a in centres:
        for b in centres:
            for c in centres:
                d2 = ((ijk - (a, b, c)) ** 2).sum(axis=1)
                members = np.flatnonzero(d2 < r2 - 1e-9)
                if len(members) >= MIN_MEMBERS:
                    out.append(members.astype(np.int64))
    count = np.zeros(n ** 3, dtype=np.int64)
    for m in out:
        count[m] += 1
    if count.min() < 1:
        raise ValueError(f"a particle of the {n}³ block is in no cluster")
    return out, count


def boundary_mesh(n: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """The block's boundary as a closed triangle mesh through its surface
    particles (two triangles per boundary quad, outward): vertices ``(V, 3)``
    m and faces ``(F, 3)``; crumple skins it to the particles."""
    x = lattice(n)

    def pid(i: int, j: int, k: int) -> int:
        return (i * n + j) * n + k

    quads: list[tuple[int, int, int, int]] = []
    last = n - 1
    for a in range(last):
        for b in range(last):
            quads.append((pid(0, a, b), pid(0, a, b + 1), pid(0, a + 1, b + 1), pid(0, a + 1, b)))
            quads.append((pid(last, a, b), pid(last, a + 1, b), pid(last, a + 1, b + 1), pid(last, a, b + 1)))
            quads.append((pid(a, 0, b), pid(a + 1, 0, b), pid(a + 1, 0, b + 1), pid(a, 0, b + 1)))
            quads.append((pid(a, last, b), pid(a, last, b + 1), pid(a + 1, last, b + 1), pid(a + 1, last, b)))
            quads.append((pid(a, b, 0), pid(a, b + 1, 0), pid(a + 1, b + 1, 0), pid(a + 1, b, 0)))
            quads.append((pid(a, b, last), pid(a + 1, b, last), pid(a + 1, b + 1, last), pid(a, b + 1, last)))
    q = np.asarray(quads, dtype=np.int64)
    tris = np.concatenate([q[:, [0, 1, 2]], q[:, [0, 2, 3]]])
    used = np.unique(tris)
    remap = np.full(n ** 3, -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    return x[used], remap[tris]


def rigid_residual(x0: npt.ArrayLike, x: npt.ArrayLike) -> float:
    """RMS distance (in r) of ``x`` from the best rigid fit of ``x0`` (Kabsch)."""
    a0 = np.asarray(x0, dtype=np.float64)
    a = np.asarray(x, dtype=np.float64)
    a0 = a0 - a0.mean(axis=0)
    a = a - a.mean(axis=0)
    u, _, vt = np.linalg.svd(a0.T @ a)
    d = np.sign(np.linalg.det(u @ vt))
    rot = u @ np.diag([1.0, 1.0, d]) @ vt
    return float(np.sqrt(((a0 @ rot - a) ** 2).sum(axis=1).mean()) / R)


def sanity(x0: npt.ArrayLike, x: npt.ArrayLike) -> dict[str, float | bool]:
    """What every framework reports at the end: lowest and mean height, the
    rigid residual, finiteness (the block should rest on the ground)."""
    a = np.asarray(x, dtype=np.float64)
    return {"min_y": float(a[:, 1].min()), "mean_y": float(a[:, 1].mean()),
            "residual_r": rigid_residual(x0, a), "finite": bool(np.isfinite(a).all())}
