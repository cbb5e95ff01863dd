"""Measurement helpers for the MPM experiments (spec ``mpm_anisotropic.md`` §7).

Plain numpy, no solver calls: every function takes positions and topology
arrays and returns numbers or masks, so the experiment tests can state their
pass criteria on them. Lengths are in metres.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
Bool = npt.NDArray[np.bool_]


def as_f64(x: npt.ArrayLike) -> F64:
    """``x`` as a contiguous float64 array (solver read-outs may be float32)."""
    return np.ascontiguousarray(np.asarray(x, dtype=np.float64))


def edge_lengths(x: npt.ArrayLike, edges: npt.ArrayLike) -> F64:
    """Lengths ``(E,)`` of the edges or segments ``(E, 2)`` at positions ``x (N, 3)``."""
    p = as_f64(x)
    e = np.asarray(edges, dtype=np.int64)
    return np.asarray(np.linalg.norm(p[e[:, 1]] - p[e[:, 0]], axis=1), dtype=np.float64)


def edge_stretch(x: npt.ArrayLike, x_rest: npt.ArrayLike, edges: npt.ArrayLike) -> F64:
    """Relative stretch ``|len / rest_len − 1|`` ``(E,)`` of every edge (or strand
    segment) between the rest positions ``x_rest`` and the current ``x``."""
    return np.abs(edge_lengths(x, edges) / edge_lengths(x_rest, edges) - 1.0)


def _grid_pairs(lo: F64, hi: F64, cell: float) -> I64:
    """Candidate pairs ``(P, 2)`` (``i < j``) of boxes ``[lo_i, hi_i]`` that share
    a cell of a uniform grid of spacing ``cell`` (each box spans at most 2 cells
    per axis when ``cell`` is at least the largest box extent)."""
    n = len(lo)
    c0 = np.floor(lo / cell).astype(np.int64)
    c1 = np.floor(hi / cell).astype(np.int64)
    c1 = np.minimum(c1, c0 + 1)
    base = c0.min(axis=0)
    dims = (c1.max(axis=0) - base) + 2
    keys, owners = [], []
    for dx in (0, 1):
        for dy in (0, 1):
            for dz in (0, 1):
                c = c0 + np.array([dx, dy, dz])
                ok = (c <= c1).all(axis=1)
                cc = c[ok] - base
                keys.append((cc[:, 0] * dims[1] + cc[:, 1]) * dims[2] + cc[:, 2])
                owners.append(np.flatnonzero(ok))
    key = np.concatenate(keys)
    own = np.concatenate(owners)
    order = np.lexsort((own, key))
    key, own = key[order], own[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    sizes = np.diff(np.r_[starts, len(key)])
    pairs = []
    for s in np.unique(sizes):
        if s < 2:
            continue
        st = starts[sizes == s]
        a, b = np.triu_indices(int(s), k=1)
        pairs.append(np.stack([own[st[:, None] + a[None, :]].ravel(), own[st[:, None] + b[None, :]].ravel()], axis=1))
    if not pairs:
        return np.zeros((0, 2), dtype=np.int64)
    p = np.concatenate(pairs)
    p.sort(axis=1)
    p = p[p[:, 0] != p[:, 1]]
    u = np.unique(p[:, 0] * n + p[:, 1])
    return np.stack([u // n, u % n], axis=1)


def _expand(start: I64, stop: I64) -> tuple[I64, I64]:
    """For ranges ``[start_q, stop_q)``: the query index and the slot of every
    element of every range, concatenated (a vectorised nested loop)."""
    cnt = stop - start
    qi = np.repeat(np.arange(len(start)), cnt)
    offs = np.arange(len(qi)) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    return qi, np.repeat(start, cnt) + offs


def _segments_cross_triangles(p0: F64, p1: F64, a: F64, b: F64, c: F64, eps: float = 1e-12) -> Bool:
    """Möller–Trumbore: does segment ``p0 → p1`` cross triangle ``abc`` (row-wise)?"""
    d = p1 - p0
    e1, e2 = b - a, c - a
    pv = np.cross(d, e2)
    det = np.einsum("ij,ij->i", e1, pv)
    ok = np.abs(det) > eps
    inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    tv = p0 - a
    u = np.einsum("ij,ij->i", tv, pv) * inv
    qv = np.cross(tv, e1)
    v = np.einsum("ij,ij->i", d, qv) * inv
    t = np.einsum("ij,ij->i", e2, qv) * inv
    return np.asarray(ok & (u >= 0) & (v >= 0) & (u + v <= 1) & (t >= 0) & (t <= 1), dtype=bool)


def intersecting_triangles(x: npt.ArrayLike, faces: npt.ArrayLike, *, max_pairs: int | None = None,
                           seed: int = 0) -> tuple[Bool, int]:
    """Self-intersections of a triangle soup: returns ``(mask (M,), pairs_tested)``
    where ``mask[t]`` is true when triangle ``t`` intersects a triangle it shares
    no vertex with.

    Broad phase: a uniform grid whose cell is the largest triangle bounding-box
    extent (candidates share a cell), then a bounding-box overlap test. Narrow
    phase: two non-coplanar triangles intersect iff an edge of one crosses the
    other, tested with Möller–Trumbore on the 3 + 3 edges (exactly coplanar
    overlaps, of measure zero in a simulation, are not counted). When
    ``max_pairs`` is set and more candidate pairs remain, a uniform random
    subset of that size (``seed``) is tested instead and the mask only covers it.
    """
    p = as_f64(x)
    f = np.asarray(faces, dtype=np.int64)
    tri = p[f]
    lo, hi = tri.min(axis=1), tri.max(axis=1)
    cell = float((hi - lo).max()) * 1.0001 + 1e-12
    pairs = _grid_pairs(lo, hi, cell)
    i, j = pairs[:, 0], pairs[:, 1]
    keep = (lo[i] <= hi[j]).all(axis=1) & (lo[j] <= hi[i]).all(axis=1)
    fi, fj = f[i], f[j]
    shared = (fi[:, :, None] == fj[:, None, :]).any(axis=(1, 2))
    keep &= ~shared
    i, j = i[keep], j[keep]
    if max_pairs is not None and len(i) > max_pairs:
        pick = np.random.default_rng(seed).choice(len(i), size=max_pairs, replace=False)
        i, j = i[pick], j[pick]
    hit = np.zeros(len(i), dtype=bool)
    ti, tj = tri[i], tri[j]
    for k in range(3):
        s0, s1 = ti[:, k], ti[:, (k + 1) % 3]
        hit |= _segments_cross_triangles(s0, s1, tj[:, 0], tj[:, 1], tj[:, 2])
        s0, s1 = tj[:, k], tj[:, (k + 1) % 3]
        hit |= _segments_cross_triangles(s0, s1, ti[:, 0], ti[:, 1], ti[:, 2])
    mask = np.zeros(len(f), dtype=bool)
    mask[i[hit]] = True
    mask[j[hit]] = True
    return mask, int(len(i))


def surface_height_at(x: npt.ArrayLike, faces: npt.ArrayLike, xz: npt.ArrayLike, *,
                      mode: str = "max") -> F64:
    """Height ``y`` of the triangle surface ``(x, faces)`` above each query point
    ``xz (Q, 2)`` (its x and z coordinates), by barycentric interpolation inside
    the triangles whose x–z projection contains the point. Where several layers
    lie above a point (folds) ``mode`` picks ``"max"`` (the top layer) or
    ``"min"`` (the bottom one); NaN where no triangle covers the point."""
    p = as_f64(x)
    f = np.asarray(faces, dtype=np.int64)
    q = as_f64(xz).reshape(-1, 2)
    tri = p[f][:, :, [0, 2]]
    lo, hi = tri.min(axis=1), tri.max(axis=1)
    cell = float((hi - lo).max()) * 1.0001 + 1e-12
    base = np.minimum(lo.min(axis=0), q.min(axis=0)) if len(q) else lo.min(axis=0)
    nz = int(np.floor((max(hi[:, 1].max(), q[:, 1].max() if len(q) else 0) - base[1]) / cell)) + 2
    # every triangle is listed in each grid cell its x–z box touches (at most 2 × 2)
    c0 = np.floor((lo - base) / cell).astype(np.int64)
    c1 = np.minimum(np.floor((hi - base) / cell).astype(np.int64), c0 + 1)
    keys, owners = [], []
    for da in (0, 1):
        for db in (0, 1):
            c = c0 + np.array([da, db])
            ok = (c <= c1).all(axis=1)
            keys.append(c[ok, 0] * nz + c[ok, 1])
            owners.append(np.flatnonzero(ok))
    key = np.concatenate(keys)
    own = np.concatenate(owners)
    order = np.argsort(key, kind="stable")
    key, own = key[order], own[order]
    qc = np.floor((q - base) / cell).astype(np.int64)
    qkey = qc[:, 0] * nz + qc[:, 1]
    start = np.searchsorted(key, qkey, side="left")
    stop = np.searchsorted(key, qkey, side="right")
    qi, slot = _expand(start, stop)
    ti = own[slot]
    a, b, c = tri[ti, 0], tri[ti, 1], tri[ti, 2]
    v0, v1, v2 = b - a, c - a, q[qi] - a
    den = v0[:, 0] * v1[:, 1] - v1[:, 0] * v0[:, 1]
    okd = np.abs(den) > 1e-18
    den = np.where(okd, den, 1.0)
    l1 = (v2[:, 0] * v1[:, 1] - v1[:, 0] * v2[:, 1]) / den
    l2 = (v0[:, 0] * v2[:, 1] - v2[:, 0] * v0[:, 1]) / den
    l0 = 1.0 - l1 - l2
    tol = -1e-9
    inside = okd & (l0 >= tol) & (l1 >= tol) & (l2 >= tol)
    y = p[f[ti]][:, :, 1]
    h = l0 * y[:, 0] + l1 * y[:, 1] + l2 * y[:, 2]
    out = np.full(len(q), -np.inf if mode == "max" else np.inf)
    if mode == "max":
        np.maximum.at(out, qi[inside], h[inside])
    else:
        np.minimum.at(out, qi[inside], h[inside])
    out[~np.isfinite(out)] = np.nan
    return out


def closest_points_on_triangles(p: F64, a: F64, b: F64, c: F64) -> F64:
    """Closest point to each ``p (N, 3)`` on the triangle ``(a, b, c)`` of the
    same row (Voronoi regions of the vertices, edges and face; Ericson,
    Real-Time Collision Detection §5.1.5), vectorised over rows."""
    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = (ab * ap).sum(1), (ac * ap).sum(1)
    bp, cp = p - b, p - c
    d3, d4 = (ab * bp).sum(1), (ac * bp).sum(1)
    d5, d6 = (ab * cp).sum(1), (ac * cp).sum(1)
    va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2
    tiny = 1e-300
    # Ericson tests the regions A, B, AB, C, AC, BC, face in this order and
    # returns at the first match; writing them in the reverse order, each
    # overwriting the last, gives the same precedence
    den = np.maximum(va + vb + vc, tiny)
    out = a + ab * (vb / den)[:, None] + ac * (vc / den)[:, None]
    bc_t = (d4 - d3) / np.maximum((d4 - d3) + (d5 - d6), tiny)
    ac_t = d2 / np.maximum(d2 - d6, tiny)
    ab_t = d1 / np.maximum(d1 - d3, tiny)
    regions = (
        ((va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0), b + (c - b) * bc_t[:, None]),
        ((vb <= 0) & (d2 >= 0) & (d6 <= 0), a + ac * ac_t[:, None]),
        ((d6 >= 0) & (d5 <= d6), c),
        ((vc <= 0) & (d1 >= 0) & (d3 <= 0), a + ab * ab_t[:, None]),
        ((d3 >= 0) & (d4 <= d3), b),
        ((d1 <= 0) & (d2 <= 0), a),
    )
    for m, v in regions:
        out[m] = v[m]
    return out


def signed_distance_to_surface(points: npt.ArrayLike, x: npt.ArrayLike, faces: npt.ArrayLike) -> F64:
    """Signed distance (m) of each of ``points (Q, 3)`` to the triangle surface
    ``(x, faces)``: the distance to the nearest triangle, signed by that
    triangle's normal (right-handed winding; negative = behind it). A point
    whose nearest surface point lies on the surface's boundary (a boundary
    edge or vertex: the point is beyond the sheet's edge, where "above" and
    "below" mean nothing) gets NaN. Brute force over all triangles, in chunks
    of about 2¹⁷ point–triangle pairs."""
    pts = as_f64(points).reshape(-1, 3)
    p = as_f64(x)
    f = np.asarray(faces, dtype=np.int64)
    a, b, c = p[f[:, 0]], p[f[:, 1]], p[f[:, 2]]
    n = np.cross(b - a, c - a)
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-300)
    # boundary edges belong to one face; the edge opposite corner k of face t
    # is (f[t, k+1], f[t, k+2])
    opp = np.stack([np.sort(f[:, [(k + 1) % 3, (k + 2) % 3]], axis=1) for k in range(3)], axis=1)
    keys = opp[:, :, 0] * len(p) + opp[:, :, 1]
    uniq, counts = np.unique(keys, return_counts=True)
    on_boundary_edge = counts[np.searchsorted(uniq, keys)] == 1  # (T, 3), by opposite corner
    boundary_vertex = np.zeros(len(p), dtype=bool)
    boundary_vertex[opp[on_boundary_edge].ravel()] = True
    out = np.empty(len(pts))
    nt = len(f)
    chunk = max(1, 2**17 // nt)
    for s in range(0, len(pts), chunk):
        q = pts[s:s + chunk]
        qq = np.repeat(q, nt, axis=0)
        cp = closest_points_on_triangles(qq, np.tile(a, (len(q), 1)), np.tile(b, (len(q), 1)), np.tile(c, (len(q), 1)))
        d2 = ((qq - cp) ** 2).sum(1).reshape(len(q), nt)
        t = d2.argmin(axis=1)
        k = np.arange(len(q)) * nt + t
        sd = np.sqrt(d2[np.arange(len(q)), t]) * np.sign(((qq[k] - cp[k]) * n[t]).sum(1))
        # barycentric coordinates of the nearest point on its triangle: a zero
        # coordinate puts it on the opposite edge, two zeros on a vertex
        e0, e1, r = b[t] - a[t], c[t] - a[t], cp[k] - a[t]
        g00, g01, g11 = (e0 * e0).sum(1), (e0 * e1).sum(1), (e1 * e1).sum(1)
        r0, r1 = (r * e0).sum(1), (r * e1).sum(1)
        det = np.maximum(g00 * g11 - g01 * g01, 1e-300)
        l1, l2 = (g11 * r0 - g01 * r1) / det, (g00 * r1 - g01 * r0) / det
        lam = np.column_stack([1.0 - l1 - l2, l1, l2])
        zero = lam <= 1e-9
        edge_hit = (zero & on_boundary_edge[t]).any(axis=1)
        vertex_hit = np.zeros(len(q), dtype=bool)
        for j in range(3):  # two zero coordinates: the nearest point is corner j
            corner = ~zero[:, j] & zero[:, (j + 1) % 3] & zero[:, (j + 2) % 3]
            vertex_hit |= corner & boundary_vertex[f[t, j]]
        sd[edge_hit | vertex_hit] = np.nan
        out[s:s + chunk] = sd
    return out


def fraction_below(signed_distance: npt.ArrayLike, tolerance: float = 0.0) -> float:
    """Fraction of the points whose ``signed_distance`` (from
    :func:`signed_distance_to_surface`) is below ``−tolerance`` (m); points
    beyond the surface's edge (NaN) count as not below."""
    sd = as_f64(signed_distance)
    return float((sd < -tolerance).mean()) if len(sd) else 0.0


def fraction_below_surface(points: npt.ArrayLike, x: npt.ArrayLike, faces: npt.ArrayLike,
                           tolerance: float = 0.0) -> float:
    """Fraction of ``points (Q, 3)`` more than ``tolerance`` (m) below the
    triangle surface ``(x, faces)``: signed distance to the nearest triangle
    along its normal (spec E8) below ``−tolerance``; points beyond the
    surface's edge count as not below."""
    return fraction_below(signed_distance_to_surface(points, x, faces), tolerance)


def close_to_other_strand(x: npt.ArrayLike, strand_of: npt.ArrayLike, radius: float) -> Bool:
    """Mask ``(N,)`` of the vertices that have a vertex of another strand within
    ``radius`` (strand ids ``strand_of (N,)``); a uniform-grid neighbour search."""
    p = as_f64(x)
    sid = np.asarray(strand_of, dtype=np.int64)
    cells = np.floor(p / radius).astype(np.int64)
    cells -= cells.min(axis=0)
    dims = cells.max(axis=0) + 3
    key = ((cells[:, 0] + 1) * dims[1] + cells[:, 1] + 1) * dims[2] + cells[:, 2] + 1
    order = np.argsort(key, kind="stable")
    skey = key[order]
    out = np.zeros(len(p), dtype=bool)
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            for dz in (-1, 0, 1):
                nk = key + (dx * dims[1] + dy) * dims[2] + dz
                qi, slot = _expand(np.searchsorted(skey, nk, side="left"), np.searchsorted(skey, nk, side="right"))
                oj = order[slot]
                near = (sid[qi] != sid[oj]) & (np.linalg.norm(p[qi] - p[oj], axis=1) < radius)
                out[qi[near]] = True
    return out


def pile_half_width(x: npt.ArrayLike, quantile: float = 0.95) -> float:
    """Pile half-width: the ``quantile`` of the horizontal (x–z) distance of the
    points ``x (N, 3)`` from their horizontal centroid (spec E5/E6)."""
    p = as_f64(x)
    d = p[:, [0, 2]] - p[:, [0, 2]].mean(axis=0)
    return float(np.quantile(np.linalg.norm(d, axis=1), quantile))
