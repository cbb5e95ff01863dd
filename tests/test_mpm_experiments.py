"""Spec experiments E2, E3, E4, E6, E7, E8 and E9 (``mpm_anisotropic.md`` §7) as tests.

The spec scales the paper's scenes to "≤ 50k particles, ≤ 2 min on CPU"; these
are scaled further so that the whole file runs in a few minutes on a 2-core
machine (each test's docstring says how). Every run is float64 on the CPU
(spec §6.4: f64 for tests). The largest step ``dt_max`` is the paper's Table 2
value carried to the test's grid spacing in proportion to ``dx`` (explicit
stability), capped at 1 ms; the CFL rule (0.3 dx per step) applies on top.
Materials are the paper's Table 1 rows (spec §6.1). The pass criteria are the
spec's, unchanged; each test collects every criterion it measures and reports
all measured numbers when one fails. Measurement helpers live in
``mpm_metrics.py``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

import crumple as cr
from crumple.scenes.mpm_scenes import hair_tube
import mpm_metrics as mm

F64 = npt.NDArray[np.float64]
G = 9.81


def _paper_dt(dt_paper: float, dx_paper: float, dx: float) -> float:
    """The paper's largest step (Table 2) at spacing ``dx``: ∝ dx, at most 1 ms."""
    return min(1e-3, dt_paper * dx / dx_paper)


def _x(obj: cr.mpm.Cloth | cr.mpm.Strands | cr.mpm.Particles) -> F64:
    """Positions of a simulated object as float64."""
    return np.asarray(obj.positions, dtype=np.float64)


def _run(sim: cr.mpm.Simulation, duration: float, check: Callable[[], None], every: int = 1) -> int:
    """Advance ``sim`` by ``duration`` s in CFL-limited steps (``stable_dt``),
    the last one landing exactly on the end time; call ``check`` after every
    ``every``-th step and after the last. Returns the number of steps."""
    t_end = sim.time + duration
    n = 0
    while sim.time < t_end - 1e-12:
        sim.step(min(sim.stable_dt(), t_end - sim.time))
        n += 1
        if n % every == 0:
            check()
    check()
    return n


def _moved_and_finite(x0: F64, x: F64, least: float, what: str) -> list[str]:
    """Failures (possibly none): ``x`` has a non-finite entry, or no point of it
    moved at least ``least`` metres away from ``x0``."""
    out = []
    if not np.isfinite(x).all():
        out.append(f"{what}: non-finite positions")
    moved = float(np.linalg.norm(x - x0, axis=1).max())
    if not moved >= least:
        out.append(f"{what}: largest displacement {moved:.4g} m < {least:.4g} m (nothing happened)")
    return out


def _report(name: str, numbers: dict[str, object], failures: list[str]) -> None:
    """Print the measured numbers (shown with ``-s`` or on failure) and fail
    with every violated criterion at once."""
    line = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in numbers.items())
    print(f"{name}: {line}")
    assert not failures, f"{name} fails: " + "; ".join(failures) + f"  [measured: {line}]"


def test_metrics_on_known_geometry() -> None:
    """The measurement helpers of ``mpm_metrics`` give the known answers on
    simple geometry: no self-intersections in a flat sheet, exactly the
    triangles along the crossing line of two crossing sheets (checked against
    a brute-force all-pairs test), the analytic height of a tilted sheet, the
    below-surface fraction, uniform stretch, and the strand-proximity mask
    against brute force."""
    sheet = cr.geometry.grid_mesh(size=(1.0, 1.0), resolution=(8, 8))
    assert not mm.intersecting_triangles(sheet.vertices, sheet.faces)[0].any()
    wall = cr.geometry.grid_mesh(size=(1.0, 1.0), resolution=(7, 7), center=(0.03, 0.02, 0.01), normal="z")
    x = np.concatenate([sheet.vertices, wall.vertices @ cr.colliders.rotation((1, 1, 0), 30.0).T])
    f = np.concatenate([sheet.faces, wall.faces + sheet.num_vertices])
    mask, _ = mm.intersecting_triangles(x, f)
    i, j = np.triu_indices(len(f), k=1)  # brute force: every pair, no broad phase
    apart = ~(f[i][:, :, None] == f[j][:, None, :]).any(axis=(1, 2))
    i, j = i[apart], j[apart]
    hit = np.zeros(len(i), dtype=bool)
    for a, b in ((i, j), (j, i)):
        ta, tb = x[f[a]], x[f[b]]
        for k in range(3):
            hit |= mm._segments_cross_triangles(ta[:, k], ta[:, (k + 1) % 3], tb[:, 0], tb[:, 1], tb[:, 2])
    brute = np.zeros(len(f), dtype=bool)
    brute[i[hit]] = brute[j[hit]] = True
    assert mask.any() and (mask == brute).all()
    tilted = sheet.vertices.copy()
    tilted[:, 1] = 0.2 + 0.5 * tilted[:, 0]
    q = np.random.default_rng(0).uniform(-0.45, 0.45, size=(200, 2))
    np.testing.assert_allclose(mm.surface_height_at(tilted, sheet.faces, q), 0.2 + 0.5 * q[:, 0], atol=1e-12)
    assert np.isnan(mm.surface_height_at(tilted, sheet.faces, [[0.7, 0.0]])).all()
    pts = np.column_stack([q[:, 0], 0.2 + 0.5 * q[:, 0] + np.where(np.arange(200) < 50, -0.01, 0.01), q[:, 1]])
    assert mm.fraction_below_surface(pts, tilted, sheet.faces) == 0.25
    # signed distance along the nearest triangle's normal: ±0.01 m vertically
    # off a plane of slope 0.5 is ±0.01/√1.25 along its normal (+y side positive)
    np.testing.assert_allclose(mm.signed_distance_to_surface(pts, tilted, sheet.faces),
                               np.where(np.arange(200) < 50, -0.01, 0.01) / np.sqrt(1.25), atol=1e-12)
    # beyond the sheet's edge (nearest point on a boundary edge or corner): NaN,
    # never "below"; just inside the edge: signed as usual
    far = mm.signed_distance_to_surface([[0.7, -0.01, 0.0], [0.7, 0.01, 0.7], [0.4, -0.01, 0.0]],
                                        sheet.vertices, sheet.faces)
    assert np.isnan(far[:2]).all() and abs(far[2] + 0.01) < 1e-12
    assert mm.fraction_below(far) == 1 / 3
    # closest points on random triangles: on the triangle (barycentric ≥ 0) and
    # no farther than the nearest of 5 151 points sampled on it
    r = np.random.default_rng(2)
    a, b, c, p0 = (r.normal(size=(300, 3)) for _ in range(4))
    cp = mm.closest_points_on_triangles(p0, a, b, c)
    u, w = np.meshgrid(np.linspace(0, 1, 101), np.linspace(0, 1, 101))
    keep = u + w <= 1.0
    u, w = u[keep], w[keep]
    for k in range(len(p0)):
        samples = a[k] + np.outer(u, b[k] - a[k]) + np.outer(w, c[k] - a[k])
        assert np.linalg.norm(cp[k] - p0[k]) <= np.linalg.norm(samples - p0[k], axis=1).min() + 1e-12
        bary = np.linalg.lstsq(np.column_stack([b[k] - a[k], c[k] - a[k]]), cp[k] - a[k], rcond=None)[0]
        assert bary.min() >= -1e-9 and bary.sum() <= 1 + 1e-9
    np.testing.assert_allclose(mm.edge_stretch(1.1 * sheet.vertices, sheet.vertices, sheet.edges), 0.1, atol=1e-12)
    p = np.random.default_rng(1).uniform(0.0, 1.0, size=(400, 3))
    sid = np.repeat(np.arange(40), 10)
    dist = np.linalg.norm(p[:, None] - p[None], axis=2)
    want = ((dist < 0.08) & (sid[:, None] != sid[None])).any(axis=1)
    assert (mm.close_to_other_strand(p, sid, 0.08) == want).all()


def test_e2_cloth_drape_on_sphere() -> None:
    """E2 (paper Figs. 3/14, drape). A 1 m square cloth falls 0.3 m onto a fixed
    sticky sphere of radius 0.25 m whose centre is 0.3 m above a ground plane
    (spec §6.4 ground: "separate", μ_b = 0.3); Cloth & Ball (ρ = 2, E = 200,
    k = 100, ν_d = 0.7).

    Scaling: the spec's 64² vertices (63 × 63 quads, edge = 1.02 h) at
    dx = 1/64 m (paper Δx = 1.5e-3 m), 12 034 particles, the full 2 s of the
    spec; dt_max = 1 ms.

    Energy weight "full" (spec §9 A10 option): with the paper's default split
    the effective membrane modulus is E/4, and a 1 m Cloth & Ball sheet hanging
    under its own weight stretches by about 4ρgL/E ≈ 20% (measured: 21–23% at
    dx = 1/32, 1/48 and 1/64), so E2's "< 10%" is only reachable with the
    nominal stiffness; with "full" the estimate is ≈ 5%.

    Criteria (spec E2): after every step min over vertices of φ_sphere ≥ −1.0 h;
    at 2 s φ_sphere ≥ −0.5 h for ≥ 99% of the vertices, the cloth has settled
    (spec E2 revised: mean |v| < 5e-3 m/s at 2 s and < 1.5e-3 m/s at 5 s, the
    run going on to 5 s), and the largest edge stretch |ℓ/ℓ0 − 1| is
    < 10% (measured on the settled cloth; the peak during the impact is
    reported too).
    """
    dx = 1.0 / 64.0
    n = 63
    centre, radius = (0.0, 0.3, 0.0), 0.25
    sim = cr.mpm.Simulation(lower=(-0.7, -4 * dx, -0.7), upper=(0.7, 1.0, 0.7), dx=dx, precision="f64",
                            dt_max=_paper_dt(1e-4, 1.5e-3, dx))
    mesh = cr.geometry.grid_mesh(size=(1.0, 1.0), resolution=(n, n), center=(0.0, centre[1] + radius + 0.3, 0.0))
    cloth = sim.add_cloth(mesh, cr.mpm.ClothMaterial.preset("cloth_ball"), rpic_damping=0.7, energy_weight="full")
    ball = cr.colliders.Sphere(center=centre, radius=radius, mode="sticky")
    sim.add_collider(ball)
    sim.add_collider(cr.colliders.Plane(point=(0, 0, 0), normal=(0, 1, 0)))
    x0, edges = mesh.vertices, mesh.edges
    worst_phi = [np.inf]
    peak_stretch = [0.0]

    def check() -> None:
        x = _x(cloth)
        worst_phi[0] = min(worst_phi[0], float(ball.signed_distance(x).min()))
        peak_stretch[0] = max(peak_stretch[0], float(mm.edge_stretch(x, x0, edges).max()))

    steps = _run(sim, 2.0, check)
    x = _x(cloth)
    phi = ball.signed_distance(x)
    frac_ok = float(np.mean(phi >= -0.5 * dx))
    speeds = np.linalg.norm(cloth.velocities, axis=1)
    mean_v, median_v = float(speeds.mean()), float(np.median(speeds))
    stretch = float(mm.edge_stretch(x, x0, edges).max())
    failures = _moved_and_finite(x0, x, 0.25, "cloth")
    if not worst_phi[0] >= -1.0 * dx:
        failures.append(f"min φ over all steps {worst_phi[0] / dx:.3f} h < −1.0 h")
    if not frac_ok >= 0.99:
        failures.append(f"only {frac_ok:.4f} of vertices have φ ≥ −0.5 h at 2 s (need ≥ 0.99)")
    # Settling (spec E2, revised): mean |v| < 5e-3 m/s at 2 s and < 1.5e-3
    # m/s at 5 s. Two motions remain at 2 s: the skirt below the equator
    # still swings (only the transfers' numerical damping and the ground's
    # friction dissipate it, so a finer grid swings longer: 2.6e-3, 4.0e-3,
    # 5.3e-3, 8.2e-3 m/s at 2 s for dx = 1/48, 1/64, 1/96, 1/128 in
    # scripts/mpm_e2_settling.py), and the cloth creeps along and into the
    # sticky sphere's contact layer at about 5e-4 m/s (the paper's §6.1
    # limitation), which is the floor the 5 s bound leaves room for.
    if not mean_v < 5e-3:
        failures.append(f"not settled at 2 s: mean |v| = {mean_v:.3g} m/s (need < 5e-3)")
    if not stretch < 0.10:
        failures.append(f"max edge stretch at 2 s = {stretch:.3f} (need < 0.10)")
    # On to 5 s for the second settling bound (φ is still checked every step).
    steps += _run(sim, 3.0, check)
    mean_v5 = float(np.linalg.norm(cloth.velocities, axis=1).mean())
    if not mean_v5 < 1.5e-3:
        failures.append(f"not settled at 5 s: mean |v| = {mean_v5:.3g} m/s (need < 1.5e-3)")
    if not worst_phi[0] >= -1.0 * dx:
        failures.append(f"min φ over all steps to 5 s {worst_phi[0] / dx:.3f} h < −1.0 h")
    _report("E2", dict(steps=steps, min_phi_h=worst_phi[0] / dx, frac_phi_ge_m05h=frac_ok, mean_v=mean_v,
                       mean_v_5s=mean_v5, median_v=median_v,
                       stretch_settled=stretch, stretch_peak=peak_stretch[0],
                       p99_stretch=float(np.quantile(mm.edge_stretch(x, x0, edges), 0.99))), failures)


def test_e3_stacked_sheets_do_not_cross() -> None:
    """E3 (paper Figs. 1/14, self-contact). Two 0.5 m square sheets, the upper
    one turned 45° about the vertical (so that its corners overhang the lower
    sheet's edges and fold over them) and 1 h above the lower one, fall 0.2 m
    onto a ground plane (separate, μ_b = 0.3); Cloth Curtain (ρ = 2, E = 400,
    k = 800, γ = 0, Φ_F = 0, ν_d = 0.8).

    Scaling: 32 × 32 quads per sheet (edge = h) at dx = 1/64 m, 6 274
    particles, 0.6 s (fall, impact, settling of the overhanging corners);
    dt_max = 7e-5 s · dx / 2.2e-3 m ≈ 0.5 ms.

    Criteria (spec E3), every 10th step: no crossing — every upper-sheet vertex
    over the lower sheet's x–z footprint is no lower than 0.1 h below the lower
    sheet's surface at its x–z position (at least half of the upper sheet's
    vertices must be over it in every sample); triangle–triangle intersections
    (non-adjacent triangles, both sheets together) < 0.1% of the triangles.
    """
    dx = 1.0 / 64.0
    n = 32
    y0 = 0.2
    sim = cr.mpm.Simulation(lower=(-0.5, -4 * dx, -0.5), upper=(0.5, 0.45, 0.5), dx=dx, precision="f64",
                            dt_max=_paper_dt(7e-5, 2.2e-3, dx))
    mat = cr.mpm.ClothMaterial.preset("curtain")
    lower = cr.geometry.grid_mesh(size=(0.5, 0.5), resolution=(n, n), center=(0.0, y0, 0.0))
    flat = cr.geometry.grid_mesh(size=(0.5, 0.5), resolution=(n, n), center=(0.0, y0 + dx, 0.0))
    upper = cr.geometry.TriMesh(flat.vertices @ cr.colliders.rotation((0, 1, 0), 45.0).T, flat.faces)
    a = sim.add_cloth(lower, mat, rpic_damping=0.8)
    b = sim.add_cloth(upper, mat, rpic_damping=0.8)
    sim.add_collider(cr.colliders.Plane(point=(0, 0, 0), normal=(0, 1, 0)))
    faces = np.concatenate([lower.faces, upper.faces + lower.num_vertices])
    worst_gap = [np.inf]
    worst_inter = [0.0]
    samples = [0]
    fewest_over = [upper.num_vertices]

    def check() -> None:
        xa, xb = _x(a), _x(b)
        h = mm.surface_height_at(xa, lower.faces, xb[:, [0, 2]], mode="max")
        gap = xb[:, 1] - h
        over = int(np.isfinite(gap).sum())  # upper-sheet vertices over the lower sheet
        fewest_over[0] = min(fewest_over[0], over)
        if over:
            worst_gap[0] = min(worst_gap[0], float(np.nanmin(gap)))
        mask, _ = mm.intersecting_triangles(np.concatenate([xa, xb]), faces)
        worst_inter[0] = max(worst_inter[0], float(mask.mean()))
        samples[0] += 1

    steps = _run(sim, 0.6, check, every=10)
    failures = _moved_and_finite(lower.vertices, _x(a), 0.15, "lower sheet")
    failures += _moved_and_finite(upper.vertices, _x(b), 0.15, "upper sheet")
    if not fewest_over[0] >= upper.num_vertices // 2:
        failures.append(f"only {fewest_over[0]} upper-sheet vertices were over the lower sheet in some sample")
    if not worst_gap[0] >= -0.1 * dx:
        failures.append(f"upper sheet crossed the lower one: min height above it {worst_gap[0] / dx:.3f} h < −0.1 h")
    if not worst_inter[0] < 1e-3:
        failures.append(f"{worst_inter[0]:.4%} of triangles intersect (need < 0.1%)")
    _report("E3", dict(steps=steps, samples=samples[0], fewest_vertices_over=fewest_over[0],
                       min_gap_h=worst_gap[0] / dx,
                       max_intersecting_fraction=worst_inter[0]), failures)


def _slope_run(friction_angle: float, dx: float, slope: float, duration: float) -> float:
    """One E4 run: the top sheet's centroid displacement along the slope (m)."""
    rot = cr.colliders.rotation((0, 0, 1), -slope)
    down = rot @ np.array([1.0, 0.0, 0.0])
    normal = rot @ np.array([0.0, 1.0, 0.0])
    mat = cr.mpm.ClothMaterial(density=2.0, youngs_modulus=400.0, poisson_ratio=0.3, normal_stiffness=2000.0,
                               shear_stiffness=500.0, friction_angle=friction_angle)
    base = cr.geometry.grid_mesh(size=(1.0, 0.4), resolution=(round(1.0 / dx), round(0.4 / dx)), center=(0, dx, 0))
    top = cr.geometry.grid_mesh(size=(0.2, 0.2), resolution=(round(0.2 / dx), round(0.2 / dx)),
                                center=(-0.38, 2 * dx, 0))
    base = cr.geometry.TriMesh(base.vertices @ rot.T, base.faces)
    top = cr.geometry.TriMesh(top.vertices @ rot.T, top.faces)
    drop = np.tan(np.radians(slope)) * 0.6
    sim = cr.mpm.Simulation(lower=(-0.6 - 4 * dx, -drop - 0.1, -0.3 - 4 * dx),
                            upper=(0.6 + 4 * dx, drop + 0.15, 0.3 + 4 * dx), dx=dx, precision="f64",
                            dt_max=_paper_dt(7e-5, 2.2e-3, dx))
    sheet = sim.add_cloth(base, mat)
    slider = sim.add_cloth(top, mat)
    sim.add_collider(cr.colliders.Plane(point=(0, 0, 0), normal=normal, mode="sticky"))
    c0 = _x(slider).mean(axis=0)
    sim.advance(duration, frames=4)
    x = _x(slider)
    assert np.isfinite(x).all() and np.isfinite(_x(sheet)).all(), f"non-finite state at Φ_F = {friction_angle}°"
    return float((x.mean(axis=0) - c0) @ down)


def test_e4_friction_sweep_on_slope() -> None:
    """E4 (paper Fig. 12 / §5.1, surface friction sweep). A plane tilted by
    θ = 15° with a sticky boundary; a 1.0 m (along the slope) × 0.4 m sheet lies
    on it one cell above the plane; a 0.2 m × 0.2 m sheet starts 1 h above its
    upper end. Cloth with γ = 500, k = 2000 (E = 400, ν_P = 0.3, ρ = 2 from
    Cloth Curtain), Φ_F ∈ {0, 10, 20, 30, 45}°, T = 0.4 s.

    Damping ν_d = 0 (APIC, the API default): the spec gives none for E4. With
    Cloth Curtain's ν_d = 0.8 the RPIC damping of the shear across the two
    layers (they share grid nodes) holds the top sheet back and D(0°) drops to
    about 0.014 m at this resolution, so the sweep measures the damping, not the
    friction.

    Scaling: dx = 1/64 m (paper Δx = 2.2e-3), 64 × 26 and 13 × 13 quads
    (edge ≈ h), 5 617 particles per run, dt_max ≈ 0.5 ms.

    Criteria (spec E4): the top sheet's centroid displacement along the slope
    D(Φ_F) is non-increasing (tolerance 5% of D(0°)); D(45°) < 0.1·D(0°);
    D(0°) ≥ 0.3·(½ g sin θ T²).
    """
    dx, slope, duration = 1.0 / 64.0, 15.0, 0.4
    angles = (0.0, 10.0, 20.0, 30.0, 45.0)
    d = {phi: _slope_run(phi, dx, slope, duration) for phi in angles}
    free = 0.5 * G * np.sin(np.radians(slope)) * duration**2
    failures = []
    tol = 0.05 * d[0.0]
    for lo, hi in zip(angles, angles[1:]):
        if not d[hi] <= d[lo] + tol:
            failures.append(f"D({hi:g}°) = {d[hi]:.4f} m > D({lo:g}°) + 5% D(0°) = {d[lo] + tol:.4f} m")
    if not d[45.0] < 0.1 * d[0.0]:
        failures.append(f"D(45°) = {d[45.0]:.4f} m ≥ 0.1·D(0°) = {0.1 * d[0.0]:.4f} m")
    if not d[0.0] >= 0.3 * free:
        failures.append(f"D(0°) = {d[0.0]:.4f} m < 0.3·½ g sinθ T² = {0.3 * free:.4f} m")
    _report("E4", {**{f"D({p:g})": v for p, v in d.items()}, "0.3_free_slide": 0.3 * free}, failures)


def _fibre_pile(variant: str, dx: float, duration: float) -> tuple[F64, F64, npt.NDArray[np.int64],
                                                                       npt.NDArray[np.int64]]:
    """One E6 run; returns (rest points, final points, segments, strand id per point)."""
    layers, per_layer, length = 10, 6, 0.25
    segs = round(length / dx)
    rng = np.random.default_rng(7)
    pts = []
    for i in range(layers * per_layer):
        layer, k = divmod(i, per_layer)
        th = np.random.default_rng(100 + layer).uniform(0.0, np.pi)
        d = np.array([np.cos(th), 0.0, np.sin(th)])
        side = np.array([-d[2], 0.0, d[0]])
        c = np.array([0.0, 0.04 + 1.5 * dx * layer, 0.0]) + (k - 2.5) * 2.0 * dx * side + rng.uniform(-0.02, 0.02) * d
        pts.append(c - 0.5 * length * d + np.linspace(0.0, length, segs + 1)[:, None] * d)
    n_strands = layers * per_layer
    curves = cr.geometry.Curves(np.concatenate(pts), np.arange(n_strands + 1) * (segs + 1))
    hair = cr.mpm.CurveMaterial.preset("hair")
    if variant == "b":
        # tangent stress only: no fibre shear (γ) and no cross-section (μ, λ) stress; fibre stretch k kept
        mat = cr.mpm.CurveMaterial(density=hair.density, youngs_modulus=0.0, poisson_ratio=hair.poisson_ratio,
                                   stretch_stiffness=hair.stretch_stiffness, shear_stiffness=0.0,
                                   friction_angle=hair.friction_angle)
    else:
        mat = hair
    top = float(curves.points[:, 1].max())
    sim = cr.mpm.Simulation(lower=(-0.4, -4 * dx, -0.4), upper=(0.4, top + 0.1, 0.4), dx=dx, precision="f64",
                            dt_max=_paper_dt(2e-4, 7e-3, dx), return_map=(variant != "c"),
                            tangents="eulerian" if variant == "a" else "mesh")
    strands = sim.add_curves(curves, mat, rpic_damping=0.07)
    sim.add_collider(cr.colliders.Plane(point=(0, 0, 0), normal=(0, 1, 0)))
    sim.advance(duration, frames=4)
    return curves.points, _x(strands), curves.segments, np.repeat(np.arange(n_strands), segs + 1)


def test_e6_fibre_ablation_tangent_only_vs_full_model() -> None:
    """E6 (paper Fig. 10 ablation), the variants the API can express.

    Scene: 60 straight fibres of 0.25 m (16 segments each, edge = h), in 10
    layers 1.5 h apart; each layer holds 6 parallel fibres 2 h apart in a random
    horizontal direction; they fall onto a ground plane and pile up. Hair Tubes
    strand material (ρ = 1, E = 60, γ = 10, k = 2000, Φ_F = 15°, ν_d = 0.07) —
    Table 1 has no fibre-piling row. dx = 1/64 m, 1 980 particles, 1 s ((a): 6 s),
    dt_max ≈ 0.45 ms.

    Variants run:
      (a) all columns of F̃ Eulerian (``tangents="eulerian"``): the paper's
          traditional meshless MPM, no mesh forces and no barycentre
          enslaving. Run for 6 s: the fibres drift apart under the pile's
          weight at a growing rate (max length ratio 1.25 at 1 s, 1.44 at
          2 s, 1.88 at 3 s, 2.21 at 4 s, 2.53 at 6 s), where the other
          variants keep their length (d: 1.004 at 1 s).
      (b) tangent stress only: γ = 0 and E = 0 (μ = λ = 0, no cross-section
          stress); the fibre stretch k stays (for curves k is the tangent term).
      (c) full elasticity without the return map (``return_map=False``).
      (d) the full model (Hair Tubes values, return map with friction and
          tension separation).

    Criteria: (a) numerical fracture (spec E6): some segment longer than 2×
    its rest length, or ≥ 5% of the segments longer than 1.5×; (b) clumping
    — the fraction of vertices with a vertex of another fibre closer than
    0.1 h is ≥ 3× that of (d) (spec E6), and > 0 so that the comparison is
    not vacuous; (d) spreads more than (c) (pile half-width,
    spec E6: friction and separation let fibres slide apart, pure elasticity
    holds them together); (d) shows none of (a)'s numerical fracture (max
    segment length / rest ≤ 2 and < 5% of segments stretched > 50%).
    """
    dx, duration = 1.0 / 64.0, 1.0
    rest, xb, segs, sid = _fibre_pile("b", dx, duration)
    _, xa, _, _ = _fibre_pile("a", dx, 6.0)
    _, xc, _, _ = _fibre_pile("c", dx, duration)
    _, xd, _, _ = _fibre_pile("d", dx, duration)
    hw_c, hw_d = mm.pile_half_width(xc), mm.pile_half_width(xd)
    clump_b = float(mm.close_to_other_strand(xb, sid, 0.1 * dx).mean())
    clump_d = float(mm.close_to_other_strand(xd, sid, 0.1 * dx).mean())
    ratio = mm.edge_lengths(xd, segs) / mm.edge_lengths(rest, segs)
    failures = _moved_and_finite(rest, xb, 0.05, "(b)") + _moved_and_finite(rest, xd, 0.05, "(d)")
    if not clump_b >= 3.0 * clump_d:
        failures.append(f"clumping (b) {clump_b:.4f} < 3 × (d) {clump_d:.4f}")
    if not clump_b > 0.0:
        failures.append("no clumping at 0.1 h in (b): the comparison is vacuous")
    if not hw_d > hw_c:
        failures.append(f"(d) half-width {hw_d:.4f} m does not exceed (c) {hw_c:.4f} m")
    failures += _moved_and_finite(rest, xc, 0.05, "(c)")
    failures += _moved_and_finite(rest, xa, 0.05, "(a)")
    ratio_a = mm.edge_lengths(xa, segs) / mm.edge_lengths(rest, segs)
    if not (ratio_a.max() > 2.0 or np.mean(ratio_a > 1.5) >= 0.05):
        failures.append(f"(a) does not fracture: max length ratio {ratio_a.max():.3f}, "
                        f"{np.mean(ratio_a > 1.5):.3%} of segments > 1.5")
    if not (ratio.max() <= 2.0 and np.mean(ratio > 1.5) < 0.05):
        failures.append(f"(d) fractures: max length ratio {ratio.max():.3f}, {np.mean(ratio > 1.5):.3%} > 1.5")
    _report("E6", dict(clump_b=clump_b, clump_d=clump_d, height95_b=float(np.quantile(xb[:, 1], 0.95)),
                       height95_d=float(np.quantile(xd[:, 1], 0.95)), half_width_b=mm.pile_half_width(xb),
                       half_width_d=hw_d, half_width_c=hw_c,
                       a_max_length_ratio=float(ratio_a.max()), a_frac_over_1_5=float(np.mean(ratio_a > 1.5)),
                       d_max_length_ratio=float(ratio.max())), failures)


def test_e7_hair_tube_on_hair_tube() -> None:
    """E7 (paper Fig. 13, hair). Two tubes of straight strands of radius 0.1 m
    lie crosswise: the lower one (axis x, 0.7 m long) rests on a ground plane,
    the upper one (axis z, 0.4 m long) starts 0.1 m above it and falls onto it.
    Hair Tubes (ρ = 1, E = 60, γ = 10, k = 2000, Φ_F = 15°, ν_d = 0.07).

    Size: the spec's, 200 strands per tube (2 rings × 100) of 30 segments
    (edges 2.3 cm and 1.3 cm: 1.1 h and 0.64 h), dx = 1/48 m, 24 400 particles, 1 s,
    dt_max ≈ 0.6 ms.

    Criteria (spec E7), sampled every 1/24 s: no NaN; strand stretch
    |ℓ/ℓ0 − 1| < 5% for ≥ 99% of the segments of both tubes. At the end ≥ 90%
    of the upper tube's strands lie above the lower tube's mid-height (the mean
    height of its vertices): a strand's height is the median height of its
    vertices directly over the lower tube (|z| < R/2); strands that slid off
    the lower tube's ends (their crossing point beyond its x extent, where they
    legitimately lie on the ground) are left out and counted.
    """
    dx, radius = 1.0 / 48.0, 0.1
    count, segs = 100, 30
    lower = hair_tube((0.0, radius + 2 * dx, 0.0), (1.0, 0.0, 0.0), radius, 0.7, count, segs)
    upper = hair_tube((0.0, 3 * radius + 0.1, 0.0), (0.0, 0.0, 1.0), radius, 0.4, count, segs)
    sim = cr.mpm.Simulation(lower=(-0.45, -4 * dx, -0.3), upper=(0.45, 0.6, 0.3), dx=dx, precision="f64",
                            dt_max=_paper_dt(2e-4, 7e-3, dx))
    mat = cr.mpm.CurveMaterial.preset("hair")
    a = sim.add_curves(lower, mat, rpic_damping=0.07)
    b = sim.add_curves(upper, mat, rpic_damping=0.07)
    sim.add_collider(cr.colliders.Plane(point=(0, 0, 0), normal=(0, 1, 0)))
    worst_p99 = 0.0
    worst_ok = 1.0
    for _ in range(24):
        sim.advance(1.0 / 24.0)
        s = np.concatenate([mm.edge_stretch(_x(a), lower.points, lower.segments),
                            mm.edge_stretch(_x(b), upper.points, upper.segments)])
        worst_p99 = max(worst_p99, float(np.quantile(s, 0.99)))
        worst_ok = min(worst_ok, float(np.mean(s < 0.05)))
    xa, xb = _x(a), _x(b)
    mid = float(xa[:, 1].mean())
    sid = np.repeat(np.arange(upper.num_strands), segs + 1)
    over = np.abs(xb[:, 2]) < radius / 2
    x_lo, x_hi = float(xa[:, 0].min()) + dx, float(xa[:, 0].max()) - dx
    heights, off_end = [], 0
    for i in range(upper.num_strands):
        m = (sid == i) & over
        if not m.any() or not x_lo < float(xb[m, 0].mean()) < x_hi:
            off_end += 1
            continue
        heights.append(float(np.median(xb[m, 1])))
    above = float(np.mean(np.asarray(heights) > mid)) if heights else 0.0
    failures = _moved_and_finite(upper.points, xb, 0.1, "upper tube") + (
        [] if np.isfinite(xa).all() else ["lower tube: non-finite positions"])
    if not worst_ok >= 0.99:
        failures.append(f"only {worst_ok:.4f} of segments within 5% stretch at some frame (need ≥ 0.99)")
    if not len(heights) >= 0.5 * upper.num_strands:
        failures.append(f"only {len(heights)} of {upper.num_strands} upper strands cross the lower tube")
    if not above >= 0.9:
        failures.append(f"{above:.3f} of the upper strands end above the lower tube's mid-height (need ≥ 0.9)")
    _report("E7", dict(p99_stretch_worst=worst_p99, frac_within_5pct_worst=worst_ok, mid_height=mid,
                       strands_counted=len(heights), strands_off_end=off_end, frac_above=above), failures)


def test_e8_sand_on_cloth_hammock() -> None:
    """E8 (paper Figs. 9/19, two-way coupling). A 1 m square cloth at 0.55 m,
    pinned at its four corners (a hammock) over a ground plane; a column of
    Drucker–Prager sand (Klár et al.: friction 35°, hardening 9/0.2/10, ν = 0.3;
    E/ρ = 3.537e5/2200 as Klár, but ρ = 22 and E = 3537: the same granular
    dynamics — wave speed and friction cone unchanged — in the cloth's units.
    The paper's cloth values (ρ = 2, E = 200) are not SI: with SI sand
    (2200 kg/m³) a 1 m hammock carries 300× its own mass and is pushed to the
    ground, measured 54.6% of the sand below it) 0.16 × 0.16 × 0.3 m
    starts 0.07 m above the cloth and falls onto it. Cloth & Sand (ρ = 2,
    E = 200, k = 40000, γ = 0, ν_d = 0).

    Scaling: dx = 1/32 m, 32 × 32 quads (edge = h), 2 420 sand particles
    (8 per cell; spec: 20k), 5 557 particles in all, 1 s, dt_max ≈ 0.6 ms.

    Criteria (spec E8): grid mass equals particle mass after every step
    (relative 1e-12, f64); the cloth centre deflects downward (by more than
    one cell); at the end < 0.5% of the sand particles lie below the cloth
    surface: their signed distance to the nearest triangle, along that
    triangle's normal (up in the rest mesh), is negative (grains whose nearest
    cloth point is on its edge, i.e. beyond the hammock, are not below).
    """
    dx = 1.0 / 32.0
    n = 32
    sim = cr.mpm.Simulation(lower=(-0.6 - 4 * dx, -4 * dx, -0.6 - 4 * dx), upper=(0.6 + 4 * dx, 1.0 + 4 * dx, 0.6 + 4 * dx),
                            dx=dx, precision="f64", dt_max=_paper_dt(1e-4, 5e-3, dx))
    mesh = cr.geometry.grid_mesh(size=(1.0, 1.0), resolution=(n, n), center=(0.0, 0.55, 0.0))
    cloth = sim.add_cloth(mesh, cr.mpm.ClothMaterial.preset("cloth_sand"), rpic_damping=0.0)
    v = mesh.vertices
    corners = np.array([int(np.argmin(sx * v[:, 0] + sz * v[:, 2])) for sx in (-1, 1) for sz in (-1, 1)])
    cloth.pin(corners)
    grains = cr.geometry.sample_box(lower=(-0.08, 0.62, -0.08), upper=(0.08, 0.92, 0.08), spacing=dx / 2)
    sand = sim.add_granular(grains, cr.mpm.SandMaterial(density=22.0, youngs_modulus=3537.0))
    sim.add_collider(cr.colliders.Plane(point=(0, 0, 0), normal=(0, 1, 0)))
    centre = int(np.argmin(np.linalg.norm(v[:, [0, 2]], axis=1)))
    worst_mass = [0.0]

    def check() -> None:
        worst_mass[0] = max(worst_mass[0], abs(sim.grid_mass() / sim.total_mass() - 1.0))

    steps = _run(sim, 1.0, check)
    xc, xs = _x(cloth), _x(sand)
    deflection = float(v[centre, 1] - xc[centre, 1])
    sd = mm.signed_distance_to_surface(xs, xc, mesh.faces)
    below, below_half_cell = mm.fraction_below(sd), mm.fraction_below(sd, 0.5 * dx)
    failures = _moved_and_finite(v, xc, 0.05, "cloth") + _moved_and_finite(grains, xs, 0.05, "sand")
    if not worst_mass[0] <= 1e-12:
        failures.append(f"grid mass differs from particle mass by {worst_mass[0]:.3g} (relative)")
    if not deflection > dx:
        failures.append(f"cloth centre deflection {deflection:.4f} m ≤ one cell")
    if not below < 0.005:
        failures.append(f"{below:.2%} of the sand ends below the cloth (need < 0.5%)")
    _report("E8", dict(steps=steps, grains=len(grains), mass_err=worst_mass[0], deflection=deflection,
                       cloth_centre_y=float(xc[centre, 1]), frac_below=below,
                       frac_below_more_than_half_cell=below_half_cell, beyond_edge=int(np.isnan(sd).sum()),
                       min_signed_dist_h=float(np.nanmin(sd)) / dx, median_signed_dist_h=float(np.nanmedian(sd)) / dx,
                       sand_mean_y=float(xs[:, 1].mean())), failures)


def test_e9_cloth_twister() -> None:
    """E9 (paper Figs. 4/5, twister). A 0.5 m wide, 0.8 m tall cloth hangs from
    its pinned top edge; its bottom edge is held by a kinematic sticky cylinder
    (radius 1.5 h, axis along the edge) that turns about the vertical axis at
    180°/s and rises 0.3 m per turn, wringing the cloth through one full turn.
    Cloth Twister (ρ = 2, E = 200, k = 400, γ = 0, ν_d = 0.1).

    Scaling: dx = 1/48 m, 24 × 38 quads (edge = h), 2 799 particles, 2 s
    (the spec's length), dt_max = 7e-5 s · dx / 3e-3 m ≈ 0.5 ms.

    Criteria (spec E9): 2 s without NaN or solver error; inverted ("red case")
    return-map events < 0.1% of element-steps (``counters()``); at every
    1/8 s self-intersecting triangles (non-adjacent pairs, all candidate pairs
    tested, no sampling) < 0.5% of the triangles. The bottom edge must follow
    the cylinder (direction within 10° of the turned rest direction), so the
    cloth really is being twisted.
    """
    dx = 1.0 / 48.0
    width, height = 0.5, 0.8
    rate = np.radians(180.0)
    rise = 0.3 * rate / (2 * np.pi)
    sim = cr.mpm.Simulation(lower=(-0.4, 0.0, -0.4), upper=(0.4, 1.1, 0.4), dx=dx, precision="f64",
                            dt_max=_paper_dt(7e-5, 3e-3, dx))
    mesh = cr.geometry.grid_mesh(size=(width, height), resolution=(round(width / dx), round(height / dx)),
                                 center=(0.0, 0.55, 0.0), normal="z")
    cloth = sim.add_cloth(mesh, cr.mpm.ClothMaterial.preset("twister"), rpic_damping=0.1)
    v = mesh.vertices
    top = np.flatnonzero(np.abs(v[:, 1] - v[:, 1].max()) < 1e-9)
    bottom = np.flatnonzero(np.abs(v[:, 1] - v[:, 1].min()) < 1e-9)
    cloth.pin(top)
    clamp = cr.colliders.Cylinder(center=(0.0, float(v[:, 1].min()), 0.0), axis=(1, 0, 0), radius=1.5 * dx,
                                  height=width + 6 * dx, mode="sticky")
    clamp.set_velocity(linear=(0.0, rise, 0.0), angular=(0.0, rate, 0.0))
    sim.add_collider(clamp)
    worst_inter, worst_turn = 0.0, 0.0
    for _ in range(16):
        sim.advance(1.0 / 8.0)
        x = _x(cloth)
        mask, _ = mm.intersecting_triangles(x, mesh.faces)
        worst_inter = max(worst_inter, float(mask.mean()))
        d = x[bottom[-1]] - x[bottom[0]]
        d /= np.linalg.norm(d)
        a = rate * sim.time
        want = np.array([np.cos(a), 0.0, -np.sin(a)])
        worst_turn = max(worst_turn, float(np.degrees(np.arccos(np.clip(d @ want, -1.0, 1.0)))))
    c = sim.counters()
    inverted = c["inverted"] / c["element_steps"]
    failures = _moved_and_finite(v, _x(cloth), 0.1, "cloth")
    if not inverted < 1e-3:
        failures.append(f"inverted elements {c['inverted']} = {inverted:.4%} of element-steps (need < 0.1%)")
    if not worst_inter < 5e-3:
        failures.append(f"{worst_inter:.3%} of triangles self-intersect (need < 0.5%)")
    if not worst_turn < 10.0:
        failures.append(f"bottom edge lags the cylinder by {worst_turn:.1f}° (the cloth is not being twisted)")
    _report("E9", dict(time=sim.time, steps=sim.step_count, inverted_fraction=inverted,
                       max_intersecting_fraction=worst_inter, bottom_edge_lag_deg=worst_turn), failures)
