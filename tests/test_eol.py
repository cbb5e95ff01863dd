"""crumple.eol: the API, bad input, checkpoints and the edge scene (spec
eol_cloth §9 E1 proxies at test size: EOL vertices on the edge, no
penetration, the fold at the edge where the Lagrangian baseline cuts the
corner, material sliding through the EOL vertices at the pull speed)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import crumple as cr
from crumple.cloth.garment import vertex_plastic_angles
from crumple.scenes import eol_scenes

THR = 5e-3


def _sheet(n: int = 8, y: float = 0.001) -> cr.geometry.TriMesh:
    return cr.geometry.grid_mesh(size=(0.5, 0.5), resolution=(n, n), center=(0.1, y, 0.25), normal="y")


def _edge_sim(**kw: object) -> tuple[cr.eol.Simulation, cr.eol.Cloth]:
    """A 0.5 m sheet 1 mm over a box top (y = 0) with 0.15 m beyond its edge (x = 0, along z)."""
    sim = cr.eol.Simulation(**kw)  # type: ignore[arg-type]
    cloth = sim.add_cloth(_sheet())
    sim.add_collider(cr.colliders.Box(center=(0.5, -0.5, 0.25), half_extents=(0.5, 0.5, 0.5), mode="slip"),
                     name="table")
    return sim, cloth


def test_the_sheet_folds_at_the_edge_and_its_eol_vertices_stay_on_it() -> None:
    """It moves and stays finite; the remesher makes EOL vertices on the
    edge, which stay on the edge line within the snap depth δ = 0.1·thr
    (+1e-8 m, E1 proxy (a)); nothing goes into the box deeper than 2·thr;
    read-outs have the documented shapes."""
    sim, cloth = _edge_sim(dt=5e-3)
    x0 = cloth.positions
    sim.advance(0.25)
    x = cloth.positions
    assert sim.step_count == 50 and sim.time == pytest.approx(0.25)
    assert np.all(np.isfinite(x)) and x[:, 1].min() < -0.05, "the part beyond the edge did not fall"
    e = cloth.is_eol
    assert e.sum() >= 5, e.sum()
    line = np.hypot(x[e, 0], x[e, 1])
    assert line.max() <= 0.1 * THR + 1e-8, line.max()
    assert np.all(cloth.feature_kinds[e] == 1) and np.all(cloth.feature_kinds[~e] == -1)
    assert np.all(cloth.feature_colliders[e] == 0)
    inside = np.minimum(x - [0.0, -1.0, -0.25], [1.0, 0.0, 0.75] - x).min(axis=1)
    assert inside.max() <= 2 * THR, inside.max()
    n = cloth.num_vertices
    assert cloth.vertex_ids.max() >= len(x0), "the remesher adds EOL vertices (new ids)"
    assert cloth.material_coordinates.shape == (n, 2) and cloth.material_velocities.shape == (n, 2)
    assert cloth.velocities.shape == (n, 3) and cloth.faces.shape[1] == 3 and cloth.masses.shape == (n,)
    assert cloth.masses.sum() == pytest.approx(0.05 * 0.25, rel=1e-12), "the material area (mass) is kept"
    ids = cloth.vertex_ids
    assert ids.dtype == np.uint32 and np.all(np.diff(ids.astype(np.int64)) > 0)
    st = sim.stats()
    assert st["kkt_equality"] <= 1e-9 and st["kkt_inequality"] <= 1e-9 and st["eol_vertices"] == e.sum()
    t = sim.stage_times()
    assert set(t) == {"cd", "rm", "mf", "vi"} and all(v > 0 for v in t.values())
    assert sim.kinetic_energy() > 0
    frame = sim.frame()
    part = frame.objects["cloth"]
    assert set(part.vertex_data) >= {"material_u", "material_v", "eol", "feature_kind", "feature_collider", "speed"}
    assert "plastic_angle" not in part.vertex_data  # no wrinkle model, no plastic angles
    assert part.vertex_data["eol"].sum() == e.sum()
    np.testing.assert_array_equal(part.vertex_data["feature_kind"], cloth.feature_kinds)
    # The frame stream carries the last step's figures: the step advance()
    # took last (its Table 1 seconds, not zeros), as sim.stats() gives them.
    assert frame.stats == {k: float(v) for k, v in st.items()}
    assert all(frame.stats[f"time_{k}"] > 0 for k in ("cd", "rm", "mf", "vi")) and frame.stats["qp_iterations"] >= 1
    assert sum(frame.stats[f"time_{k}"] for k in ("cd", "rm", "mf", "vi")) < sum(t.values())


def _hinge_angles(cloth: cr.eol.Cloth) -> np.ndarray:
    """World dihedral angles (degrees) at the interior edges."""
    x, f = cloth.positions, cloth.faces
    n = np.cross(x[f[:, 1]] - x[f[:, 0]], x[f[:, 2]] - x[f[:, 0]])
    n /= np.linalg.norm(n, axis=1)[:, None]
    e = np.sort(np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]]), axis=1)
    owner = np.tile(np.arange(len(f)), 3)
    order = np.lexsort((e[:, 1], e[:, 0]))
    e, owner = e[order], owner[order]
    pair = np.flatnonzero(np.all(e[1:] == e[:-1], axis=1))
    c = np.einsum("ij,ij->i", n[owner[pair]], n[owner[pair + 1]])
    return np.degrees(np.arccos(np.clip(c, -1.0, 1.0)))


def test_the_sizing_remesh_refines_at_the_fold_and_keeps_the_invariants(tmp_path: Path) -> None:
    """Spec §5.6 on the edge drape (0.5 m sheet of 8 × 8 quads, 0.25 s),
    sizing 2–5 cm: in "eol" the mesh is refined (more faces, shorter edges
    at the fold than away from it), the EOL vertices stay on the edge line
    (E1 proxy (a)), nothing goes into the box deeper than 2·thr, the mass
    (material area) is kept; "lag_nonconformal" (the sizing remesher
    alone) makes no EOL vertices and spreads the 90° turn over several
    hinges (E1 proxy (c): the largest hinge angle under 75°, so the turn is
    not at one hinge line) and has its edges near the fold shorter than
    0.9 of those away from it (EOL: 0.8; its fold is a chord resting on
    the edge, a gentler bend: measured 2.5 cm against 3.1 cm); in both
    modes a checkpoint keeps the sizing
    and continues bit-identically."""
    sz = cr.eol.Sizing(size_min=0.02, size_max=0.05)
    out = {}
    for mode in ("eol", "lag_nonconformal"):
        sim, cloth = _edge_sim(dt=5e-3, mode=mode, sizing=sz)
        faces0 = len(cloth.faces)
        x0, u0 = cloth.positions, cloth.material_coordinates
        sim.advance(0.25)
        x, u, f = cloth.positions, cloth.material_coordinates, cloth.faces
        assert np.isfinite(x).all() and x[:, 1].min() < -0.05
        assert len(f) > 2 * faces0, (mode, len(f))
        assert cloth.masses.sum() == pytest.approx(0.05 * 0.25, rel=1e-12)
        inside = np.minimum(x - [0.0, -1.0, -0.25], [1.0, 0.0, 0.75] - x).min(axis=1)
        assert inside.max() <= 2 * THR, (mode, inside.max())
        # Material edge lengths within 3 cm (material) of the edge's line and beyond 10 cm.
        e = np.unique(np.sort(np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]]), axis=1), axis=0)
        length = np.linalg.norm(u[e[:, 0]] - u[e[:, 1]], axis=1)
        # Distance in material space from the material now at the box edge
        # (world x = y = 0): through the flat start, material → initial world
        # x is affine (the planar coordinates are an isometry of the sheet).
        a, *_ = np.linalg.lstsq(np.c_[u0, np.ones(len(u0))], x0[:, 0], rcond=None)
        x_of = np.c_[u, np.ones(len(u))] @ a
        line = x_of[np.hypot(x[:, 0], x[:, 1]) < 3 * THR].mean()
        d = np.abs(x_of[e].mean(axis=1) - line)
        near, far = length[d < 0.03].mean(), length[d > 0.1].mean()
        angles = _hinge_angles(cloth)
        out[mode] = (len(f), near, far, angles.max(), int(cloth.is_eol.sum()), sim.stage_times())
        # lag_nonconformal's fold is a chord resting on the edge (the
        # box-edge rows of spec §6.4), a wider and gentler bend than EOL's,
        # so it refines less there (measured 2.5 cm against 3.1 cm).
        assert near < (0.8 if mode == "eol" else 0.9) * far, (mode, near, far)
        if mode == "eol":
            ee = np.flatnonzero(cloth.is_eol)
            assert len(ee) >= 5
            # On the line to δ + 1e-8 m, or lifting off it (spec §6.6: the
            # edge rows are inequalities; on the fine mesh the bend takes a
            # radius and the fold's vertex can leave the edge outwards,
            # across the side face (x < 0) or up off the top (y > 0)), and
            # then released at the next step's preprocess (§5.5).
            off = ee[np.hypot(x[ee, 0], x[ee, 1]) > 0.1 * THR + 1e-8]
            v = cloth.velocities
            leaving = ((x[off, 0] < 0) & (v[off, 0] < 0)) | ((x[off, 1] > 0) & (v[off, 1] > 0))
            assert leaving.all(), (x[off], v[off])
            # The next preprocess releases them; one caught again at once (a
            # crossing within τ of a vertex makes that vertex EOL, §5.2) is
            # snapped back onto the line, and each is on it after the step
            # or leaving it again.
            gone = cloth.vertex_ids[off]
            sim.step()
            x, v = cloth.positions, cloth.velocities
            again = np.flatnonzero(cloth.is_eol & np.isin(cloth.vertex_ids, gone))
            on = np.hypot(x[again, 0], x[again, 1]) <= 0.1 * THR + 1e-8
            leaving = ((x[again, 0] < 0) & (v[again, 0] < 0)) | ((x[again, 1] > 0) & (v[again, 1] > 0))
            assert (on | leaving).all(), (x[again], v[again])
        else:
            assert not cloth.is_eol.any()
            assert angles.max() < 75.0, angles.max()
        path = sim.save(tmp_path / f"sizing_{mode}.npz")
        back = cr.eol.Simulation.load(path)
        assert back._params["sizing"] == dataclasses.asdict(sz)
        sim.advance(0.02)
        back.advance(0.02)
        np.testing.assert_array_equal(back.objects[0].positions, cloth.positions)
        np.testing.assert_array_equal(back.objects[0].faces, cloth.faces)
    print({m: dict(faces=v[0], edge_near_m=round(v[1], 4), edge_far_m=round(v[2], 4),
                   largest_hinge_deg=round(float(v[3]), 1), eol=v[4],
                   rm_share=round(v[5]["rm"] / sum(v[5].values()), 3)) for m, v in out.items()})


def test_lag_static_mode_makes_no_eol_vertices() -> None:
    """The Lagrangian baseline runs the same scene without EOL vertices and
    without entering the box."""
    sim, cloth = _edge_sim(dt=5e-3, mode="lag_static")
    sim.advance(0.2)
    x = cloth.positions
    assert not cloth.is_eol.any() and cloth.num_vertices == _sheet().num_vertices
    assert np.all(np.isfinite(x)) and x[:, 1].min() < -0.03
    inside = np.minimum(x - [0.0, -1.0, -0.25], [1.0, 0.0, 0.75] - x).min(axis=1)
    assert inside.max() <= 2 * THR


def test_pins_follow_their_targets_through_remeshing() -> None:
    """A pinned row moved with a velocity lands on its moving target each
    step, by persistent id, while the remesher adds and removes vertices."""
    sim, cloth = _edge_sim(dt=5e-3)
    x = cloth.positions
    far = np.flatnonzero(np.isclose(x[:, 0], 0.35))
    ids = cloth.vertex_ids[far]
    cloth.pin(far)
    v = np.tile([0.05, 0.0, 0.0], (len(far), 1))
    cloth.set_pin_targets(far, x[far], v)
    sim.advance(0.2)
    now = np.flatnonzero(np.isin(cloth.vertex_ids, ids))
    assert len(now) == len(far)
    np.testing.assert_allclose(cloth.positions[now], x[far] + 0.2 * v, atol=1e-9)
    assert set(cloth.pinned.tolist()) == set(now.tolist())
    cloth.release()
    assert len(cloth.pinned) == 0


def test_checkpoint_continues_bit_identically(tmp_path: Path) -> None:
    """Save mid-run with moving pin targets, load, continue: the same bits."""
    sim, cloth = _edge_sim(dt=5e-3)
    far = np.flatnonzero(np.isclose(cloth.positions[:, 0], 0.35))
    cloth.set_pin_targets(far, cloth.positions[far], np.tile([0.05, 0.0, 0.0], (len(far), 1)))
    sim.advance(0.1)
    path = sim.save(tmp_path / "eol.npz")
    sim.advance(0.05)
    back = cr.eol.Simulation.load(path)
    back.advance(0.05)
    a, b = sim.objects[0], back.objects[0]
    assert back.time == sim.time and back.step_count == sim.step_count
    np.testing.assert_array_equal(a.faces, b.faces)
    np.testing.assert_array_equal(a.positions, b.positions)
    np.testing.assert_array_equal(a.material_coordinates, b.material_coordinates)
    np.testing.assert_array_equal(a.is_eol, b.is_eol)
    np.testing.assert_array_equal(a.velocities, b.velocities)
    np.testing.assert_array_equal(a.material_velocities, b.material_velocities)
    np.testing.assert_array_equal(a.vertex_ids, b.vertex_ids)
    np.testing.assert_array_equal(a.pinned, b.pinned)


@pytest.mark.parametrize("kw, what", [
    (dict(dt=0.0), "dt"),
    (dict(dt=-1e-3), "dt"),
    (dict(collision_threshold=float("nan")), "collision_threshold"),
    (dict(mode="eulerian"), "mode"),
    (dict(sizing=cr.eol.Sizing), "sizing"),
    (dict(sizing=dict(size_min=0.1, size_max=0.01)), "size_min"),
    (dict(sizing=dict(size_min=0.01, refine_angle=float("nan"))), "refine_angle"),
    (dict(sizing=dict(spacing=0.01)), "sizing"),
    (dict(transfer="average"), "transfer"),
])
def test_bad_options_raise(kw: dict[str, object], what: str) -> None:
    with pytest.raises(cr.InvalidInputError, match=what):
        cr.eol.Simulation(**kw)  # type: ignore[arg-type]


def test_a_sizing_too_fine_for_the_cloth_raises() -> None:
    """A size_min that would let the remesh make more than 500K faces on
    this cloth is refused when the cloth comes (a typed error naming the
    smallest size_min that is taken), not run into a step that never ends."""
    sim = cr.eol.Simulation(sizing=cr.eol.Sizing(size_min=1e-4, size_max=0.03))
    with pytest.raises(cr.InvalidInputError, match="too small"):
        sim.add_cloth(_sheet())


def test_bad_cloth_and_obstacles_raise() -> None:
    sim = cr.eol.Simulation()
    with pytest.raises(cr.InvalidInputError, match="has no cloth"):
        sim.step()
    # Not flat, and no material coordinates given.
    with pytest.raises(cr.InvalidInputError, match="not flat"):
        sim.add_cloth(cr.geometry.uv_sphere(radius=0.2))
    m = _sheet(4)
    with pytest.raises(cr.InvalidInputError, match="shape"):
        sim.add_cloth(m, material_coordinates=np.zeros((3, 2)))
    u = m.vertices[:, [0, 2]].copy()
    u[0, 0] = np.nan
    with pytest.raises(cr.InvalidInputError, match="NaN"):
        sim.add_cloth(m, material_coordinates=u)
    # Complex values are refused, not cut to their real part.
    with pytest.raises(cr.InvalidInputError, match="complex"):
        sim.add_cloth(m, material_coordinates=m.vertices[:, [0, 1]] + 0j)
    with pytest.raises(cr.InvalidInputError, match="complex"):
        sim.add_point((0, -1 + 1j, 0))
    # (x, z) sees the faces (wound about +y) clockwise.
    with pytest.raises(cr.InvalidInputError, match="clockwise"):
        sim.add_cloth(m, material_coordinates=m.vertices[:, [0, 2]])
    with pytest.raises(cr.InvalidInputError, match="preset"):
        sim.add_cloth(m, "silk_velvet")
    # Non-manifold: three triangles on one edge.
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 0, 1], [0, 0, -1], [0.5, 0, 0.5]], dtype=float)
    with pytest.raises(cr.MeshError):
        sim.add_cloth(cr.geometry.TriMesh(v, [[0, 1, 2], [1, 0, 3], [0, 1, 4]]))
    with pytest.raises(cr.InvalidInputError, match="Box"):
        sim.add_collider(cr.colliders.Sphere(center=(0, -1, 0), radius=0.5))
    with pytest.raises(cr.InvalidInputError, match="sticky"):
        sim.add_collider(cr.colliders.Box(center=(0, -1, 0), mode="sticky"))
    # Wires and points: too few points, no length, a normal along the wire
    # or zero, NaN.
    with pytest.raises(cr.InvalidInputError, match="two points"):
        sim.add_wire([(0, -1, 0)])
    with pytest.raises(cr.InvalidInputError, match="length"):
        sim.add_wire([(0, -1, 0), (0, -1, 0)])
    with pytest.raises(cr.InvalidInputError, match="perpendicular"):
        sim.add_wire([(0, -1, 0), (1, -1, 0)], normal=(1, 1, 0))
    with pytest.raises(cr.InvalidInputError, match="non-zero"):
        sim.add_point((0, -1, 0), normal=(0, 0, 0))
    with pytest.raises(cr.InvalidInputError):
        sim.add_point((0, np.nan, 0))
    assert sim.wires.shape == (0, 2, 3) and sim.points.shape == (0, 3)
    # What numpy refuses as numbers, and a mesh that is not a TriMesh.
    for bad in ("0 0", {"u": 0}, [[0.0, 0.0], [1.0]]):
        with pytest.raises(cr.InvalidInputError, match="material_coordinates"):
            sim.add_cloth(m, material_coordinates=bad)
    with pytest.raises(cr.InvalidInputError, match="TriMesh"):
        cr.eol.planar_coordinates(m.vertices)
    # A bad name is refused before the cloth is made: the simulation keeps
    # no cloth and the wire added before it, and takes the cloth again.
    sim.add_wire([(-1, -0.5, 0), (1, -0.5, 0)])
    with pytest.raises(cr.InvalidInputError, match="name"):
        sim.add_cloth(m, name="two words")
    assert sim.objects == () and len(sim.wires) == 1
    cloth = sim.add_cloth(m)
    assert sim.objects == (cloth,) and len(sim.wires) == 1
    with pytest.raises(cr.InvalidInputError, match="one cloth"):
        sim.add_cloth(m)
    with pytest.raises(cr.InvalidInputError, match="indices"):
        cloth.pin([[0, 1], [2]])
    with pytest.raises(cr.InvalidInputError, match="stiffness"):
        cloth.pin([0], stiffness=1e3)
    with pytest.raises(cr.InvalidInputError, match="out-of-range"):
        cloth.pin([10_000])
    with pytest.raises(cr.InvalidInputError, match="complex"):
        cloth.pin(np.zeros(0, dtype=complex))
    with pytest.raises(cr.InvalidInputError, match="dt"):
        sim.step(dt=0.0)


def test_cloth_starting_inside_or_on_an_edge_raises() -> None:
    """A vertex inside a box or on one of its edges at the start is refused
    (spec §10: the remesher makes EOL vertices when the cloth arrives),
    whichever of cloth and box comes first; nothing is added."""
    box = cr.colliders.Box(center=(0.5, -0.5, 0.25), half_extents=(0.5, 0.5, 0.5))
    for y, what in ((-0.01, "inside"), (0.0, "on an edge")):
        sheet = cr.geometry.grid_mesh(size=(0.5, 0.5), resolution=(4, 4), center=(0.0, y, 0.25), normal="y")
        sim = cr.eol.Simulation()
        sim.add_cloth(sheet)
        with pytest.raises(cr.InvalidInputError, match=what):
            sim.add_collider(box)
        assert sim.colliders == () and sim.step_count == 0
        sim = cr.eol.Simulation()
        sim.add_collider(box)
        with pytest.raises(cr.InvalidInputError, match=what):
            sim.add_cloth(sheet)
        assert sim.objects == ()


@pytest.mark.parametrize("name", ["eol_corner", "eol_friction", "eol_moving_box"])
@pytest.mark.parametrize("mode", ["lag_static", "lag_conformal_cone"])
def test_the_other_scenes_run_in_the_lagrangian_modes(tmp_path: Path, name: str, mode: str) -> None:
    """Issue 16 deliverable 4: every eol scene also runs in the Lagrangian
    baselines (the edge, wire, points, tilting-box and crease scenes are
    compared with them in their own tests): PNG, frames and metrics, the
    mode recorded, nothing into a box deeper than 2·thr, no feature vertex
    in the static baseline."""
    m = _scene(tmp_path, name, mode, scale=0.5, frames=6)
    assert m["mode"] == mode and m["steps"] > 0 and m.get("failed_at_s") is None
    assert float(m["deepest_max_m"]) <= 2 * THR
    counts = [k for k in ("eol_vertices", "edge_vertices", "corner_vertices") if k in m]
    assert counts, sorted(m)
    if mode == "lag_static":
        assert all(max(m[k]) == 0 for k in counts), {k: max(m[k]) for k in counts}


def test_a_vertex_on_a_nail_tip_or_an_open_obstacle_is_refused() -> None:
    """Issue 16's bad input: a cloth vertex on a point obstacle at the start
    is refused (within 0.1·thr; the remesher makes point-EOL vertices when
    the cloth arrives), whichever of cloth and point comes first, and
    nothing is added; obstacles that are not closed boxes are refused with
    what to use instead (a plane, a capsule), and a mesh SDF of an open
    sheet is refused when it is made (it has no inside)."""
    sheet = cr.geometry.grid_mesh(size=(0.5, 0.5), resolution=(4, 4), center=(0.0, 0.0, 0.0), normal="y")
    tip = (0.125, 0.0, 0.125)  # a vertex of the sheet
    sim = cr.eol.Simulation()
    sim.add_cloth(sheet)
    with pytest.raises(cr.InvalidInputError, match="on the point"):
        sim.add_point(tip)
    assert sim.points.shape == (0, 3)
    sim.add_point((0.125, -0.01, 0.125))  # 1 cm under it: taken
    sim = cr.eol.Simulation()
    sim.add_point(tip)
    with pytest.raises(cr.InvalidInputError, match="on the point"):
        sim.add_cloth(sheet)
    assert sim.objects == ()
    for c in (cr.colliders.Plane(point=(0, -1, 0), normal=(0, 1, 0)),
              cr.colliders.Capsule(a=(0, -1, 0), b=(1, -1, 0), radius=0.1)):
        with pytest.raises(cr.InvalidInputError, match="Box"):
            sim.add_collider(c)
    assert sim.colliders == ()
    with pytest.raises(cr.MeshError, match="not closed"):
        cr.colliders.MeshSDF(cr.geometry.grid_mesh(size=(0.5, 0.5), resolution=(4, 4), center=(0, -0.5, 0),
                                                   normal="y"), dx=0.05)


def _edge_scene(tmp_path: Path, mode: str) -> dict[str, object]:
    out = eol_scenes.eol_edge(out_dir=tmp_path / mode, frames=24, scale=0.375, mode=mode)
    assert (out / "eol_edge.png").stat().st_size > 10_000
    assert (out / "manifest.json").exists()
    m: dict[str, object] = json.loads((out / "metrics.json").read_text())
    return m


def test_edge_scene_folds_at_the_edge_and_slides_through_it(tmp_path: Path) -> None:
    """E1 at test size (spec §9): EOL vertices on the edge line within
    δ + 1e-8 m at every frame (a), nothing deeper in the box than 2·thr
    (b; the static Lagrangian baseline too), the cloth passes through the
    edge (gap ≤ 1 mm: c, d); while pulled, material slides through the EOL
    vertices at the pull speed (±10 %, proxies e, g) while they stay put in
    the world, and the material pulled over the edge follows the pull (g).
    The static Lagrangian baseline's failure (its fold is a chord over the
    edge, standing off both faces) is measured by the E7 test; the cone
    baseline's lock by the conformal baselines' test."""
    e = _edge_scene(tmp_path, "eol")
    lag = _edge_scene(tmp_path, "lag_static")
    assert e["eol_line_distance_max_m"] <= 0.1 * THR + 1e-8  # type: ignore[operator]
    assert e["deepest_max_m"] <= 2 * THR and lag["deepest_max_m"] <= 2 * THR  # type: ignore[operator]
    assert e["edge_gap_max_m"] <= 1e-3, e["edge_gap_max_m"]  # type: ignore[operator]
    want = 0.1 * eol_scenes.FRAME_DT
    assert abs(e["eol_material_slide_per_frame_m"] - want) <= 0.1 * want, e  # type: ignore[operator]
    assert e["eol_world_drift_per_frame_m"] <= 0.05 * want  # type: ignore[operator]
    assert min(e["eol_vertices"]) > 0  # type: ignore[type-var]
    # E1 (g): the material pulled over the edge follows the pull with EOL
    # (within 20 %: the hanging part also swings).
    assert abs(e["pulled_over_m"] - e["pull_m"]) <= 0.2 * e["pull_m"], e  # type: ignore[operator]


def test_active_set_and_clarabel_give_the_same_steps() -> None:
    """Issue 16's fast QP path: the warm-started active set (faer LDLᵀ)
    against Clarabel every step on the same scene: both KKT-valid and the
    same motion (they end on one active set's exact KKT point)."""
    runs = []
    for solver in ("active_set", "clarabel"):
        sim, cloth = _edge_sim(dt=5e-3, qp_solver=solver)
        for _ in range(30):
            sim.step()
            st = sim.stats()
            assert st["kkt_equality"] <= 1e-9 and st["kkt_inequality"] <= 1e-9 and st["kkt_dual"] <= 1e-6
            assert st["short_kept"] == 0  # spec §10 test 15: the cleanup left no short edge at an EOL vertex
            assert st["qp_clarabel"] == (solver == "clarabel")
        runs.append((cloth.positions, cloth.material_coordinates))
    np.testing.assert_allclose(runs[0][0], runs[1][0], rtol=0, atol=1e-9)
    np.testing.assert_allclose(runs[0][1], runs[1][1], rtol=0, atol=1e-9)
    with pytest.raises(cr.InvalidInputError, match="qp_solver"):
        cr.eol.Simulation(qp_solver="osqp")  # type: ignore[arg-type]


@pytest.mark.parametrize("transfer", ["zero_eulerian", "eq13"])
def test_a_sheet_dropped_on_a_nail_slides_over_it_and_checkpoints(tmp_path: Path, transfer: str) -> None:
    """Spec E3 at test size: a sheet moving sideways drops on a point
    obstacle; one EOL vertex of kind 3 (point) on obstacle 0 sits at the
    tip (0.1·thr under it, §4.4) while material slides through it; the
    frame draws the point; a checkpoint continues bit-identically. With
    either velocity transfer of §5.7 (with Eq. 13 the new vertex's ``Ẋ``
    takes the sideways motion at once)."""
    sheet = cr.geometry.grid_mesh(size=(0.5, 0.5), resolution=(10, 10), center=(0.013, 0.001, 0.021), normal="y")
    sim = cr.eol.Simulation(dt=2e-3, gravity=(0, -9.8, 0), collapse_length=0.005,
                            transfer=transfer)  # type: ignore[arg-type]
    assert sim.add_point((0.0, 0.0, 0.0), normal=(0, 1, 0)) == 0  # before the cloth: kept until add_cloth
    cloth = sim.add_cloth(sheet, velocity=(0.2, 0.0, 0.0))
    u0 = None
    for _ in range(10):
        sim.advance(0.02)
        e = np.flatnonzero(cloth.is_eol)
        assert len(e) <= 1
        if len(e):
            assert cloth.feature_kinds[e[0]] == 3 and cloth.feature_colliders[e[0]] == 0
            np.testing.assert_allclose(cloth.positions[e[0], [0, 2]], 0.0, atol=1e-9)
            assert cloth.positions[e[0], 1] >= -5e-4 - 1e-9
            if u0 is None:
                u0 = cloth.material_coordinates[e[0]].copy()
    assert u0 is not None, "the sheet never reached the nail"
    e = np.flatnonzero(cloth.is_eol)
    assert len(e) == 1
    assert np.linalg.norm(cloth.material_coordinates[e[0]] - u0) > 5e-3, "no material slid over the tip"
    assert cloth.positions[:, 1].min() < -0.05 and np.isfinite(cloth.positions).all()
    assert "point0" in sim.frame().colliders
    path = sim.save(tmp_path / "nail.npz")
    back = cr.eol.Simulation.load(path)
    assert back._params["transfer"] == transfer
    np.testing.assert_array_equal(back.points, sim.points)
    sim.advance(0.02)
    back.advance(0.02)
    np.testing.assert_array_equal(back.objects[0].positions, cloth.positions)
    np.testing.assert_array_equal(back.objects[0].material_coordinates, cloth.material_coordinates)


def test_the_transfer_option_reaches_the_core_and_barely_changes_the_motion() -> None:
    """``transfer="eq13"`` is not the default's copy: the nail run differs
    from the ``zero_eulerian`` one (not bit-identical), yet by little, since
    the two splits differ by a null vector of the generalized mass (spec
    §3.3.3): the material slid over the tip in 0.2 s agrees to 1e-4 m."""
    slid = {}
    for transfer in ("zero_eulerian", "eq13"):
        sheet = cr.geometry.grid_mesh(size=(0.5, 0.5), resolution=(10, 10), center=(0.013, 0.001, 0.021),
                                      normal="y")
        sim = cr.eol.Simulation(dt=2e-3, gravity=(0, -9.8, 0), collapse_length=0.005,
                                transfer=transfer)  # type: ignore[arg-type]
        sim.add_point((0.0, 0.0, 0.0), normal=(0, 1, 0))
        cloth = sim.add_cloth(sheet, velocity=(0.2, 0.0, 0.0))
        u0 = None
        for _ in range(100):
            sim.step()
            e = np.flatnonzero(cloth.is_eol)
            if len(e) and u0 is None:
                u0 = cloth.material_coordinates[e[0]].copy()
        e = np.flatnonzero(cloth.is_eol)
        assert u0 is not None and len(e) == 1
        slid[transfer] = float(np.linalg.norm(cloth.material_coordinates[e[0]] - u0))
    assert slid["eq13"] != slid["zero_eulerian"]
    assert abs(slid["eq13"] - slid["zero_eulerian"]) < 1e-4 and slid["eq13"] > 0.04, slid


def test_a_wire_catches_a_falling_sheet_and_refuses_a_vertex_on_it() -> None:
    """Spec §4.3 test 5: a sheet falling on a horizontal wire (normal +y)
    gets EOL vertices of kind 2 on it; they stay on its line (across it to
    1e-9 m, under it no deeper than δ = 0.1·thr). A cloth vertex on the
    wire at the start is refused."""
    sheet = cr.geometry.grid_mesh(size=(0.6, 0.4), resolution=(12, 8), center=(0.013, 0.002, 0.0), normal="y")
    sim = cr.eol.Simulation(dt=2e-3, gravity=(0, -9.8, 0), collapse_length=0.005)
    cloth = sim.add_cloth(sheet)
    assert sim.add_wire([(0.0, 0.0, -0.5), (0.0, 0.0, 0.5)]) == (0,)
    worst = 0.0
    for _ in range(8):
        sim.advance(0.025)
        e = cloth.is_eol
        if e.any():
            assert set(cloth.feature_kinds[e].tolist()) == {2}
            x = cloth.positions[e]
            assert np.abs(x[:, 0]).max() <= 1e-9
            worst = max(worst, float(-x[:, 1].min()))
    assert cloth.is_eol.sum() >= 3, "the wire made no EOL line"
    assert worst <= 5e-4 + 1e-8
    assert cloth.positions[:, 1].min() < -0.1
    assert "wire0" in sim.frame().colliders
    on = cr.eol.Simulation()
    on.add_cloth(cr.geometry.grid_mesh(size=(0.5, 0.5), resolution=(4, 4), center=(0.0, 0.0, 0.0), normal="y"))
    with pytest.raises(cr.InvalidInputError, match="on the wire"):
        on.add_wire([(-1.0, 0.0, 0.0), (1.0, 0.0, 0.0)])


def test_jaws_close_on_a_pulled_strip_and_it_slides_through_them() -> None:
    """Spec E4 (JAWS) at test size: two teeth (points), one under the strip
    rising (normal +y) and one over it descending (normal −y), close in at
    0.5 m/s for 0.04 s through a strip both of whose ends are pulled at
    0.1 m/s, then stop (``set_point_velocity``). Each tooth holds exactly
    one point-EOL vertex (no more EOL vertices than teeth in contact), on
    its tip tangentially to 1e-9 m; the material slides through each tooth
    at the pull speed (within 10 %) and never stalls (every 0.04 s window
    moves material)."""
    sheet = cr.geometry.grid_mesh(size=(0.6, 0.3), resolution=(18, 9), center=(0.013, 0.0, 0.011), normal="y")
    sim = cr.eol.Simulation(dt=2e-3, gravity=(0, 0, 0), collapse_length=0.005)
    lo = sim.add_point((-0.1, -0.005, 0.0), normal=(0, 1, 0), velocity=(0, 0.5, 0))
    hi = sim.add_point((0.08, 0.005, 0.0), normal=(0, -1, 0), velocity=(0, 0.5, 0))
    sim.set_point_velocity(hi, (0, -0.5, 0))  # before the cloth: kept with the pending point
    cloth = sim.add_cloth(sheet, material_coordinates=sheet.vertices[:, [2, 0]])
    ends = np.flatnonzero(np.abs(cloth.positions[:, 0] - 0.013) > 0.29)
    speed = 0.1
    cloth.pin(ends)
    cloth.set_pin_targets(ends, cloth.positions[ends], np.tile([speed, 0.0, 0.0], (len(ends), 1)))
    sim.advance(0.04)
    sim.set_point_velocity([lo, hi], (0, 0, 0))
    np.testing.assert_allclose(sim.points[:, 1], [0.015, -0.015], atol=1e-12)
    u: list[np.ndarray] = []
    for _ in range(10):
        sim.advance(0.04)
        e = np.flatnonzero(cloth.is_eol)
        assert len(e) == 2 and sorted(cloth.feature_colliders[e].tolist()) == [lo, hi]
        assert (cloth.feature_kinds[e] == 3).all()
        e = e[np.argsort(cloth.feature_colliders[e])]
        np.testing.assert_allclose(cloth.positions[e][:, [0, 2]], sim.points[:, [0, 2]], atol=1e-9)
        # Spec §4.4: δ = 0.1·thr inside each tip (against its normal).
        np.testing.assert_allclose(cloth.positions[e, 1], sim.points[:, 1] + np.array([-1, 1]) * 5e-4, atol=1e-8)
        u.append(cloth.material_coordinates[e, 1].copy())
    slid = -np.diff(np.array(u), axis=0)  # material x through each tooth per window (m)
    assert (slid > 0.2 * speed * 0.04).all(), f"a tooth snagged: {slid}"
    rate = (u[0] - u[-1]) / (0.04 * (len(u) - 1))
    np.testing.assert_allclose(rate, speed, rtol=0.1)
    with pytest.raises(cr.InvalidInputError, match="no point 2"):
        sim.set_point_velocity(2, (0, 0, 0))
    with pytest.raises(cr.InvalidInputError, match="finite"):
        sim.set_point_velocity(0, (0, float("nan"), 0))
    with pytest.raises(cr.InvalidInputError, match="no wire 0"):
        sim.set_wire_velocity(0, (0, 1, 0))
    with pytest.raises(cr.InvalidInputError, match="indices"):
        sim.set_point_velocity(1.5, (0, 0, 0))  # type: ignore[arg-type]
    sim.add_wire([(0.6, 0.1, -0.1), (0.6, 0.1, 0.0), (0.6, 0.1, 0.1)])  # beyond the strip
    sim.set_wire_velocity((0, 1), (0.0, 0.5, 0.0))
    sim.advance(0.04)
    np.testing.assert_allclose(sim.wires[:, :, 1], 0.12, atol=1e-12)


def test_a_translating_box_carries_the_eol_vertices_on_its_edge() -> None:
    """Spec §4.2 and E5: a box rising at 0.3 m/s under a sheet folded
    over its edge, its far border held and rising with it. The EOL
    vertices ride the moving edge: on its line within δ + 1e-8 m (E1 (a)
    with the rows' moving right-hand side), none deeper in the box than δ,
    each moving up at least at the box's 0.3 m/s (E5); the cloth is lifted,
    and the collider the user holds is where its motion puts it. When the
    box then drops away at 2 m/s, all EOL vertices are released within two
    steps (E5; world-velocity continuity at release is the Rust test
    `a_release_keeps_the_world_velocity_in_one_face_plane`)."""
    sim, cloth = _edge_sim(dt=5e-3)
    far = np.flatnonzero(np.isclose(cloth.positions[:, 0], 0.35))
    cloth.pin(far)  # or it slides off the top
    ids = cloth.vertex_ids[far]
    box = sim.colliders[0]
    sim.advance(0.3)
    assert cloth.is_eol.any()
    box.set_velocity((0.0, 0.3, 0.0))
    # The held border rises with the box (a box lifting a sheet against a
    # fixed border stretches it until the flap is flung over the edge).
    far = np.flatnonzero(np.isin(cloth.vertex_ids, ids))
    cloth.set_pin_targets(far, cloth.positions[far], np.tile([0.0, 0.3, 0.0], (len(far), 1)))
    y0 = float(box.translation[1])
    edge0 = np.array([0.0, 0.0])  # the edge line's (x, y) before the move
    slowest = np.inf
    for _ in range(6):
        for _ in range(10):
            sim.step()
            slowest = min(slowest, float(cloth.velocities[cloth.is_eol, 1].min()))
        box = sim.colliders[0]
        lift = float(box.translation[1]) - y0
        e = cloth.is_eol
        assert e.any()
        x = cloth.positions[e]
        d = np.hypot(x[:, 0] - edge0[0], x[:, 1] - (edge0[1] + lift))
        assert d.max() <= 5e-4 + 1e-8, d.max()
        assert box.signed_distance(x).min() >= -5e-4 - 1e-8
    assert abs(float(sim.colliders[0].translation[1]) - (y0 + 0.3 * 0.3)) < 1e-9
    assert cloth.positions[:, 1].max() > 0.08
    # E5: the cloth in contact moves up at least as fast as the box.
    assert slowest >= 0.3 - 1e-9, slowest
    # E5: the box drops away at 2 m/s; the cloth separates in the first
    # step, and every EOL vertex is released within two steps.
    sim.colliders[0].set_velocity((0.0, -2.0, 0.0))
    counts = []
    for _ in range(3):
        sim.step()
        counts.append(int(cloth.is_eol.sum()))
    assert counts[0] > 0 and counts[1:] == [0, 0], counts


def _scene(tmp_path: Path, name: str, mode: str, **kw: object) -> dict[str, Any]:
    out = getattr(eol_scenes, name)(out_dir=tmp_path / f"{name}_{mode}", mode=mode, **kw)
    assert (out / f"{name}.png").stat().st_size > 10_000
    assert (out / "manifest.json").exists()
    m: dict[str, Any] = json.loads((out / "metrics.json").read_text())
    return m


def test_edge_scene_takes_the_sizing_remesh(tmp_path: Path) -> None:
    """``eol_edge(sizing=(size_min, size_max))`` runs the §5.6 remesh in the
    non-conformal baseline: the 8 × 8 grid (128 faces) is refined, nothing
    goes into the box beyond 2·thr, the metrics name the sizing; a sizing
    that is not two numbers is a typed error."""
    m = _scene(tmp_path, "eol_edge", "lag_nonconformal", scale=1 / 3, frames=4, sizing=[0.04, 0.08])
    assert m["sizing"] == [0.04, 0.08] and m["faces"] > 2 * 128, m["faces"]
    assert m["deepest_max_m"] <= 2 * THR and m["eol_line_distance_max_m"] == 0.0
    with pytest.raises(cr.InvalidInputError, match="size_min, size_max"):
        eol_scenes.eol_edge(out_dir=tmp_path / "bad", sizing="fine")


def test_wire_scene_bends_sharply_at_the_wire_where_lagrangian_rounds_it(tmp_path: Path) -> None:
    """E2 at test size (a wire rising into a sheet held at its corners):
    EOL vertices on the wire (across it ≤ 1e-9 m, under it no deeper than
    the snap), the bend at the wire (the cloth's top at most δ over it), no
    bunching (E2: the faces within 5 cm of the wire compressed by less
    than 10 %), the cloth never under the wire by more than δ (it does not
    cross it); the Lagrangian baselines show E2's failure modes (Fig. 5):
    the static one's crease rides above the wire (no sharp bend), and the
    conformal one (averaged rows) falls off it: its conformal vertices,
    Lagrangian, drift across the wire's line with the material (measured
    2.5 mm) and the cloth goes under the wire (1.8 mm below its line),
    where EOL keeps both at 0 and δ."""
    e = _scene(tmp_path, "eol_wire", "eol", scale=0.5, frames=6)
    lag = _scene(tmp_path, "eol_wire", "lag_static", scale=0.5, frames=6)
    avg = _scene(tmp_path, "eol_wire", "lag_conformal_avg", scale=0.5, frames=6)
    assert min(e["eol_vertices"]) > 0
    assert float(e["across_wire_max_m"]) <= 1e-9 and float(e["under_wire_max_m"]) <= 1e-8
    assert float(e["top_over_wire_last_m"]) <= 1e-8
    # The cloth never crosses the wire: over it everywhere along it, at
    # most the snap depth δ = 0.1·thr under its line.
    assert min(e["height_over_wire_m"]) >= -0.1 * THR - 1e-8, min(e["height_over_wire_m"])
    assert 0.9 < e["min_stretch_near_wire_min"] == min(e["min_stretch_near_wire"])
    assert float(lag["top_over_wire_last_m"]) > 2e-3
    assert max(avg["eol_vertices"]) > 0, "the conformal baseline made no conformal vertices"
    assert float(avg["across_wire_max_m"]) > 2 * 0.1 * THR, avg["across_wire_max_m"]
    assert min(avg["height_over_wire_m"]) < -2 * 0.1 * THR, min(avg["height_over_wire_m"])


def test_points_scene_keeps_its_vertices_on_the_tips_while_cloth_slides(tmp_path: Path) -> None:
    """E3 at test size (cloth dropped on three nails, pulled by two
    corners): every point-EOL vertex on its tip in the plane (≤ 1e-9 m),
    one per nail at most, cloth slid over some nail by at least half the
    pull. The throughput past the nail the cloth rests on all along (nail
    0; the sheet swings off the others), from the frame at 0.417 s to the
    last at 0.75 s (pull 0.033 m): the material over its tip moves at least
    the pull with EOL (measured 0.067 m: the hanging cloth also slides
    under gravity) and snags in the Lagrangian baseline, under half the
    pull (measured 0.013 m; spec E3: throughput drop > 50 %)."""
    m = _scene(tmp_path, "eol_points", "eol", scale=0.5, frames=18)
    assert float(m["tip_offset_max_m"]) <= 1e-9
    counts = m["eol_vertices"]
    assert max(counts) == 3 and counts[-1] >= 1
    assert max(m["slid_last_m"]) >= 0.5 * float(m["pull_m"]) > 0
    lag = _scene(tmp_path, "eol_points", "lag_static", scale=0.5, frames=18)
    assert max(lag["eol_vertices"]) == 0

    def throughput(r: dict[str, Any]) -> tuple[float, float]:
        t = np.asarray(r["time_s"])
        over = np.asarray(r["over_tip_material_m"], dtype=float)[:, 0]  # nail 0, (frames, 2)
        i = int(np.argmin(np.abs(t - 0.4)))
        assert np.isfinite(over[i:]).all(), "the cloth left nail 0"
        return float(np.linalg.norm(over[-1] - over[i])), 0.1 * float(t[-1] - t[i])

    through, pull = throughput(m)
    lag_through, _ = throughput(lag)
    assert through >= pull > 0.02, (through, pull)
    assert lag_through <= 0.5 * pull, (lag_through, pull, through)


def test_moving_box_scene_carries_drops_and_catches_the_sheet(tmp_path: Path) -> None:
    """E5/E6 at test size: while the box lifts the sheet its EOL vertices
    ride the moving edges (within δ + 1e-8 m); when it drops away the sheet
    flies off its top and lands again; nothing enters the box deeper than
    2·thr."""
    m = _scene(tmp_path, "eol_moving_box", "eol", scale=0.75, frames=30)
    t, d = m["time_s"], m["edge_distance_m"]
    carried = [x for tt, x in zip(t, d) if tt < 0.75]
    assert carried and max(carried) <= 5e-4 + 1e-8
    assert float(m["deepest_max_m"]) <= 2 * 5e-3
    over = m["com_over_top_m"]
    assert max(over) > 0.02 and abs(over[-1]) < 2e-3
    assert m["released_after_drop"] and m["landed_again"]


def test_a_tilting_box_lets_the_sheet_slide_along_its_edges_at_g_sin_tilt(tmp_path: Path) -> None:
    """A turning box (spec §2.5, §4.2; keyframed): the box under a sheet
    folded over its two long edges tilts by 0.25 rad about its short axis.
    The EOL vertices ride the turning edges (those inside the box within
    δ + 1e-8 m of an edge line) and nothing enters the box deeper than
    2·thr. Frictionless, the sheet then slides down along the edges with
    the acceleration of a block on a frictionless slope, g·sin(tilt),
    within 5 % (no parasitic friction at the turned edges); with μ = 0.6 >
    tan 0.25 it stays (under 1 cm)."""
    slip = _scene(tmp_path, "eol_tilting_box", "eol", scale=0.75)
    held = _scene(tmp_path / "mu", "eol_tilting_box", "eol", scale=0.75, friction=0.6)
    for m in (slip, held):
        assert abs(m["tilt_rad"][-1] - 0.25) < 1e-9
        assert m["edge_distance_max_m"] <= 0.1 * THR + 1e-8, m["edge_distance_max_m"]
        assert m["deepest_max_m"] <= 2 * THR
        assert min(m["eol_vertices"]) > 0
        assert all(np.isfinite(m["slide_m"]))
    g_sin = slip["g_sin_tilt_m_s2"]
    assert abs(slip["acceleration_held_m_s2"] - g_sin) <= 0.05 * g_sin, (slip["acceleration_held_m_s2"], g_sin)
    assert slip["slid_while_held_m"] > 0.2, slip["slid_while_held_m"]
    assert abs(held["slid_while_held_m"]) < 0.01, held["slid_while_held_m"]
    with pytest.raises(cr.InvalidInputError, match="tilt"):
        eol_scenes.eol_tilting_box(out_dir=tmp_path / "bad", tilt=1.5)


def _held_edge_distance(sim: cr.eol.Simulation, cloth: cr.eol.Cloth) -> float:
    """The largest distance of an EOL vertex inside box 0 from the nearest
    of its 12 edge lines, m (in the box's frame: for a point inside, the
    nearest edge is the nearest pair of faces)."""
    b = sim.colliders[0]
    half = np.asarray(b._spec["half_extents"])
    x, e = cloth.positions, cloth.is_eol
    held = e & (b.signed_distance(x) <= 0.0)
    if not held.any():
        return 0.0
    gap = half - np.abs((x[held] - np.asarray(b.translation)) @ np.asarray(b.rotation))
    return float(np.min([np.hypot(gap[:, i], gap[:, j]) for i, j in ((0, 1), (1, 2), (0, 2))], axis=0).max())


@pytest.mark.parametrize("by", ["advance", "step"])
def test_a_keyframed_box_carries_its_eol_vertices_along_its_path(by: str) -> None:
    """A box keyframed to turn by −0.2 rad about z and rise 5 cm, with keys
    off the step grid (dt 2e-3 s; keys at 0.101 s and 0.601 s): each step's
    velocity lands the box on its keyed pose, so its EOL vertices stay on
    the edges of the box where the keys put it (those inside within δ +
    1e-8 m of an edge line), through both keys, whether the run advances
    by frames or by single steps; nothing enters the box deeper than
    2·thr; the box ends on its last key."""
    sim, cloth = _edge_sim(dt=2e-3)
    rz = cr.colliders.rotation((0.0, 0.0, 1.0), float(np.degrees(-0.2)))
    c0 = np.array([0.5, -0.5, 0.25])
    sim.colliders[0].set_keyframes([0.101, 0.601], [tuple(c0), tuple(c0 + [0.0, 0.05, 0.0])], [np.eye(3), rz])
    worst, deepest, eol_seen = 0.0, 0.0, 0
    while sim.time < 0.75 - 1e-9:
        if by == "advance":
            sim.advance(1.0 / 24.0)
        else:
            sim.step()
        worst = max(worst, _held_edge_distance(sim, cloth))
        deepest = max(deepest, float(-sim.colliders[0].signed_distance(cloth.positions).min()))
        eol_seen = max(eol_seen, int(cloth.is_eol.sum()))
        assert np.all(np.isfinite(cloth.positions))
    assert eol_seen > 0
    assert worst <= 0.1 * THR + 1e-8, worst
    assert deepest <= 2 * THR, deepest
    np.testing.assert_allclose(sim.colliders[0].rotation, rz, atol=1e-12)
    np.testing.assert_allclose(sim.colliders[0].translation, c0 + [0.0, 0.05, 0.0], atol=1e-12)


def test_a_turning_box_checkpoints_mid_turn(tmp_path: Path) -> None:
    """A box turning at a constant angular velocity (its edges carrying EOL
    vertices) saved mid-turn and loaded runs on bit for bit, box pose and
    all."""
    sim, cloth = _edge_sim(dt=5e-3)
    sim.colliders[0].set_velocity(angular=(0.0, 0.0, -0.5))
    sim.advance(0.1)
    assert cloth.is_eol.any()
    back = cr.eol.Simulation.load(sim.save(tmp_path / "turning.npz"))
    assert back.frame().stats == {}  # loaded: no last step of its own yet
    sim.advance(0.05)
    back.advance(0.05)
    assert back.frame().stats["qp_iterations"] >= 1
    np.testing.assert_array_equal(back.objects[0].positions, cloth.positions)
    np.testing.assert_array_equal(back.objects[0].is_eol, cloth.is_eol)
    np.testing.assert_array_equal(back.colliders[0].rotation, sim.colliders[0].rotation)
    assert not np.allclose(sim.colliders[0].rotation, np.eye(3))


def test_positions_at_reads_the_cloth_at_material_points() -> None:
    """``Cloth.positions_at``: at the vertices' own material coordinates it
    gives their world positions (also after the remesher added EOL vertices
    and material slid through them), a face's centroid maps to the mean of
    its corners, points off the sheet give NaN, bad shapes raise."""
    sim, cloth = _edge_sim(dt=5e-3)
    sim.advance(0.2)
    u, x, f = cloth.material_coordinates, cloth.positions, cloth.faces
    assert cloth.is_eol.any() and np.abs(cloth.material_velocities[cloth.is_eol]).max() > 1e-3
    np.testing.assert_allclose(cloth.positions_at(u), x, rtol=0, atol=1e-12)
    np.testing.assert_allclose(cloth.positions_at(u[f].mean(axis=1)), x[f].mean(axis=1), rtol=0, atol=1e-12)
    far = cloth.positions_at([[10.0, 10.0], *u[:1]])
    assert np.isnan(far[0]).all() and np.isfinite(far[1]).all()
    for bad in ([1.0, 2.0, 3.0], [[np.nan, 0.0]]):
        with pytest.raises(cr.InvalidInputError, match="material_points"):
            cloth.positions_at(bad)


def _pulled_over_the_edge(mode: str, n: int = 9, until: float = 0.95, bending: float = 4e-5) -> dict[str, Any]:
    """The E1 setup at test size, stepped one dt at a time: a 1 m sheet
    1 mm over a box top (y = 0) with 0.3 m beyond its edge (x = 0, along
    z), its far border pinned and pulled at 0.1 m/s in +x from 0.35 s.
    Four tracers (spec §9: fixed material points, found afresh every step
    with :meth:`Cloth.positions_at`) start 3.3 cm beyond the edge; the pull
    takes them over it. Returns their world paths ``(steps, 4, 3)`` and,
    per step of the pull, the bend (degrees) of the conformal hinges (both
    ends EOL), the largest bend of the others, the largest height over
    the top of the cloth vertices above it within 0.1 m of the edge (m)
    and the largest distance out from the side face of those beside it
    within 0.1 m under the edge (m; NaN when there are none). ``bending``
    is the ``eol_sheet`` preset's (J; the spec's k_b)."""
    sheet = cr.geometry.grid_mesh(size=(1.0, 1.0), resolution=(n, n), center=(0.2, 0.001, 0.5), normal="y")
    sim = cr.eol.Simulation(dt=5e-3, gravity=(0.0, -9.8, 0.0), mode=mode)  # type: ignore[arg-type]
    cloth = sim.add_cloth(sheet, cr.cloth.Material.preset("eol_sheet", bending=bending, hardening=bending))
    sim.add_collider(cr.colliders.Box(center=(0.6, -0.5, 0.5), half_extents=(0.6, 0.5, 0.75), mode="slip"))
    x0, u0 = cloth.positions, cloth.material_coordinates
    cloth.pin(np.flatnonzero(np.isclose(x0[:, 0], 0.7)))
    mid = np.abs(x0[:, 2] - 0.5) < 0.2
    a = np.flatnonzero(np.isclose(x0[:, 0], -0.3 + 2 / n) & mid)
    b = np.flatnonzero(np.isclose(x0[:, 0], -0.3 + 3 / n) & mid)
    tracers = 0.6 * u0[a] + 0.4 * u0[b]  # material points of the flat sheet at x = -0.033 m
    np.testing.assert_allclose(cloth.positions_at(tracers), 0.6 * x0[a] + 0.4 * x0[b], atol=1e-12)
    path, conformal, other, gap, side = [], [], [], [], []
    while sim.time < until - 1e-9:
        if sim.step_count == 70:  # t = 0.35 s
            p = cloth.pinned
            cloth.set_pin_targets(p, cloth.positions[p], np.tile([0.1, 0.0, 0.0], (len(p), 1)))
        sim.step()
        path.append(cloth.positions_at(tracers))
        if sim.step_count > 70:
            e, h = cloth.is_eol, cloth.hinges
            on = e[h[:, 0]] & e[h[:, 1]]
            bend = np.degrees(np.abs(cloth.hinge_angles))
            conformal.append(bend[on])
            other.append(float(bend[~on].max()))
            x = cloth.positions
            near = (x[:, 0] >= 0.0) & (x[:, 0] <= 0.1)
            gap.append(float(x[near, 1].max()))
            beside = (x[:, 0] < 0.0) & (x[:, 1] <= 0.0) & (x[:, 1] >= -0.1)
            side.append(float(-x[beside, 0].min()) if beside.any() else float("nan"))
    return {"path": np.array(path), "conformal": conformal, "other": other, "gap": gap, "side": side,
            "faces": len(cloth.faces)}


def _jerk(path: np.ndarray, h: float) -> np.ndarray:
    """Spec E1 (f): J = RMS over steps of ‖(v_{t+1} − 2v_t + v_{t−1})/h²‖
    with v_t = (x_{t+1} − x_t)/h, per tracer."""
    v = np.diff(path, axis=0) / h
    j = np.linalg.norm(v[2:] - 2 * v[1:-1] + v[:-2], axis=2) / h**2
    return np.sqrt((j**2).mean(axis=0))


def test_tracers_cross_the_edge_smoothly_and_the_fold_stays_at_the_edge() -> None:
    """E1 (f), (d) and (c) at test size. (d): during the pull no cloth
    vertex on the top within 0.1 m of the edge is more than 2·thr above it
    (measured 5e-17 m) where the averaged conformal baseline lifts the
    cloth by more than 2 cm (measured 5 cm). (f): tracers pulled over the edge move
    with a jerk at most half that of the averaged conformal Lagrangian
    baseline (measured: about 1/33; its vertices pop on and off the edge).
    (c), the sharp fold: the cloth hugs both box faces, every cloth
    vertex beside the side face within 0.1 m under the edge at most 2·thr
    out from it (measured 3.8 mm) where the averaged baseline stands more
    than 2 cm off (measured 5.2 cm). The fold sits on the conformal
    hinges: every other hinge bends < 5° during the pull, and they bend
    by 90° ± 10° (spec: ± 5°; measured 82.5–89.1°). [D] The fold opens by
    bending stiffness, not by the method: as the face beside the line on
    the hanging side thins before its collapse into the line (§5.3 step
    1), gravity's lever on it shrinks while the hinges on both of its
    sides keep their stiffness (∝ 1/(Ā0 + Ā1), spec §3.5), so they share
    the turn; see docs/limits.md. With a quarter of the spec's bending
    stiffness the worst bend is within the spec's 5° and its deviation
    less than half as large (measured 2.6° against 7.5°). A static
    Lagrangian cloth shares the turn between hinges: none of its hinges
    bends 80° (measured 64–76°; the spec's non-conformal baseline refines
    to 6,000 faces here, too slow for a test)."""
    eol = _pulled_over_the_edge("eol")
    avg = _pulled_over_the_edge("lag_conformal_avg")
    for run in (eol, avg):
        end = run["path"][-1]
        assert np.isfinite(run["path"]).all()
        assert (end[:, 0] > 0.01).all() and (np.abs(end[:, 1]) < 0.03).all(), f"a tracer did not cross: {end}"
    pull = slice(69, None)
    j_eol, j_avg = _jerk(eol["path"][pull], 5e-3), _jerk(avg["path"][pull], 5e-3)
    assert (j_eol <= 0.5 * j_avg).all(), (j_eol, j_avg)
    # (d): no lift-off near the edge with EOL; the averaged baseline lifts.
    assert max(eol["gap"]) <= 2 * THR and max(avg["gap"]) >= 0.02, (max(eol["gap"]), max(avg["gap"]))
    bends = np.concatenate(eol["conformal"])
    assert all(len(b) >= 5 for b in eol["conformal"]), "the EOL line broke up during the pull"
    assert np.abs(bends - 90.0).max() <= 10.0, (bends.min(), bends.max())
    assert max(eol["other"]) < 5.0, max(eol["other"])
    side, side_avg = np.nanmax(eol["side"]), np.nanmax(avg["side"])
    assert side <= 2 * THR and side_avg >= 0.02, (side, side_avg)
    soft = np.concatenate(_pulled_over_the_edge("eol", bending=1e-5)["conformal"])
    worst, worst_soft = np.abs(bends - 90.0).max(), np.abs(soft - 90.0).max()
    assert worst_soft <= 5.0 and worst_soft < 0.5 * worst, (worst_soft, worst)
    lag = _pulled_over_the_edge("lag_static", until=0.6)
    assert all(len(b) == 0 for b in lag["conformal"])
    assert max(lag["other"]) < 80.0, max(lag["other"])


def test_e7_at_low_resolution_the_fold_hugs_the_edge_and_nothing_snags() -> None:
    """Spec §9 E7 on the E1 setup: EOL on an 8 × 8 grid (128 faces, 144
    after the remesher; the spec's about 133) against the static
    Lagrangian run on the 9 × 9 grid ([D] 162 faces for the spec's 256).
    EOL: the tracers travel the pull's 6 cm over 0.6 s within 10 %
    (measured 6.15 cm: no snag), the cloth hugs both box faces within
    2·thr near the edge (measured: side 3.9 mm, top 4e-17 m). Lagrangian:
    with no vertex on the edge its fold is a chord resting on it (the
    box-edge rows of spec §6.4), so its vertices near the edge stand off
    both faces, at their farthest by more than 2 cm (measured: top 4.1 cm,
    side 6.2 cm); it does not lock either: its tracers travel at least
    90 % of the pull (measured 6.9 cm)."""
    eol = _pulled_over_the_edge("eol", n=8)
    lag = _pulled_over_the_edge("lag_static", n=9)
    pull = 0.1 * 0.6

    def travel(run: dict[str, Any]) -> np.ndarray:
        p = run["path"][69:]
        return np.linalg.norm(np.diff(p, axis=0), axis=2).sum(axis=0)

    assert eol["faces"] < 160, eol["faces"]
    assert np.all(np.abs(travel(eol) / pull - 1.0) <= 0.1), travel(eol)
    assert max(eol["gap"]) <= 2 * THR and np.nanmax(eol["side"]) <= 2 * THR, (max(eol["gap"]), np.nanmax(eol["side"]))
    assert np.isfinite(lag["path"]).all() and np.all(travel(lag) >= 0.9 * pull), travel(lag)
    assert max(lag["gap"]) > 0.02 and np.nanmax(lag["side"]) > 0.02, (max(lag["gap"]), np.nanmax(lag["side"]))


def test_conformal_lagrangian_baselines_lock_or_leave_the_edge(tmp_path: Path) -> None:
    """Spec §6.4's conformal Lagrangian baselines on the E1 scene at test
    size: the remesher puts vertices on the edge as for EOL, but they are
    held Lagrangian (Ẋ = 0). With the cone rows (both face normals) they
    cannot leave the edge, so the pull locks (E1 (g): material pulled over
    ≤ 10 % of the pull, EOL follows it within 20 %); with the averaged row
    they slide off the edge line into a face (farther than EOL's δ) and the
    fold cuts the corner (gap > 1 mm, EOL ≤ 1 mm)."""
    cone = _scene(tmp_path, "eol_edge", "lag_conformal_cone", frames=24, scale=0.375)
    avg = _scene(tmp_path, "eol_edge", "lag_conformal_avg", frames=24, scale=0.375)
    assert max(cone["eol_vertices"]) > 0 and max(avg["eol_vertices"]) > 0
    assert cone["pulled_over_m"] <= 0.1 * cone["pull_m"], cone["pulled_over_m"]
    assert cone["deepest_max_m"] <= 2 * THR and avg["deepest_max_m"] <= 2 * THR
    assert avg["eol_line_distance_max_m"] > 0.1 * THR + 1e-6, avg["eol_line_distance_max_m"]
    assert avg["edge_gap_max_m"] > 1e-3, avg["edge_gap_max_m"]


def test_friction_stops_a_sliding_sheet_as_coulomb_says() -> None:
    """Spec §6.7: a sheet lying on a table top, sent sliding at 0.5 m/s
    with μ = 0.5, decelerates at μg and stops after v²/(2μg) = 2.55 cm
    (within 10 %); without friction it keeps going."""
    sheet = cr.geometry.grid_mesh(size=(0.3, 0.3), resolution=(6, 6), center=(0.5, 0.0005, 0.0), normal="y")
    moved = {}
    for mu in (0.0, 0.5):
        sim = cr.eol.Simulation(dt=2e-3, gravity=(0.0, -9.8, 0.0))
        cloth = sim.add_cloth(sheet, velocity=(0.5, 0.0, 0.0))
        sim.add_collider(cr.colliders.Box(center=(0.5, -0.5, 0.0), half_extents=(0.5, 0.5, 0.5), friction=mu))
        x0 = cloth.positions[:, 0].mean()
        sim.advance(0.2)
        moved[mu] = cloth.positions[:, 0].mean() - x0
        if mu > 0:
            assert np.abs(cloth.velocities).max() < 1e-3
    want = 0.5**2 / (2 * 0.5 * 9.8)
    assert abs(moved[0.5] - want) <= 0.1 * want, (moved, want)
    assert moved[0.0] > 0.09


def test_friction_acts_on_lagrangian_wire_rows_inside_edges() -> None:
    """Spec §6.7 on rows over several vertices: in ``lag_static`` mode a
    sheet sliding at 0.5 m/s over four wires rests on them through rows
    inside its edges (two vertices each, weighted); their impulse is shared
    by the two vertices for friction, so μ = 0.5 slows the sheet where μ = 0
    does not. Measured after 0.1 s: mean vx 0.48 m/s (μ 0) and 0.17 m/s
    (μ 0.5); with these rows frictionless both were 0.48."""
    sheet = cr.geometry.grid_mesh(size=(0.6, 0.4), resolution=(12, 8), center=(0.3, 0.002, 0.0), normal="y")
    vx = {}
    for mu in (0.0, 0.5):
        sim = cr.eol.Simulation(dt=2e-3, gravity=(0.0, -9.8, 0.0), mode="lag_static")
        cloth = sim.add_cloth(sheet, velocity=(0.5, 0.0, 0.0))
        for xw in (0.07, 0.22, 0.37, 0.52):
            sim.add_wire([(xw, 0.0, -0.5), (xw, 0.0, 0.5)], friction=mu)
        sim.advance(0.1)
        v = cloth.velocities
        assert np.isfinite(v).all() and cloth.positions[:, 1].min() > -0.1  # it rests on the wires
        vx[mu] = float(v[:, 0].mean())
    assert vx[0.0] > 0.4, vx
    assert vx[0.5] < 0.5 * vx[0.0], vx


def test_friction_scene_holds_the_sheet_on_the_table(tmp_path: Path) -> None:
    """Simplified E8 at test size: without friction the sheet left hanging
    over the table edge slides off after its hanging part; with μ = 0.8
    (above the hanging-to-lying ratio 0.5) it stays, at rest."""
    free = _scene(tmp_path, "eol_friction", "eol", scale=0.5, frames=18, friction=0.0)
    held = _scene(tmp_path, "eol_friction", "eol", scale=0.5, frames=18, friction=0.8)
    assert free["failed_at_s"] is None and held["failed_at_s"] is None
    assert free["hanging_last_m"] > 0.4, free["hanging_last_m"]
    assert abs(held["hanging_last_m"] - 0.2) < 0.02, held["hanging_last_m"]
    assert held["kinetic_energy_last_j"] < 1e-4
    assert held["setup"] == "table" and max(held["eol_vertices"]) > 0


def test_friction_scene_runs_the_spec_e8_on_four_boxes(tmp_path: Path) -> None:
    """``eol_friction(setup="four_boxes")``: spec §9 E8 as a scene (the
    geometry of the E8 tests, :func:`eol_scenes.four_turned_boxes`): the
    sheet lands on the turned boxes (EOL vertices on their edges) and with
    μ = 0.8 stays on them, settling (kinetic energy falling; at rest by
    1.2 s in the E8 tests), its lowest point in the gap less than 0.1 m
    down; the metrics name the setup; an unknown setup is a typed error."""
    m = _scene(tmp_path, "eol_friction", "eol", frames=16, friction=0.8, setup="four_boxes")
    assert m["setup"] == "four_boxes" and m["failed_at_s"] is None
    assert max(m["eol_vertices"]) >= 20 and m["eol_vertices"][-1] >= 20
    assert m["lowest_last_m"] > -0.1 and abs(m["com_height_last_m"]) < 0.02
    ke = m["kinetic_energy_j"]
    assert ke[-1] < 0.1 * max(ke), (ke[-1], max(ke))
    with pytest.raises(cr.InvalidInputError, match="setup"):
        eol_scenes.eol_friction(out_dir=tmp_path / "bad", setup="five_boxes")


def test_corner_scene_keeps_a_vertex_on_the_tip_while_cloth_slides(tmp_path: Path) -> None:
    """Box corners (spec §4.3 test 2, §6.1 corner rows) at test size: a
    sheet sliding sideways lands on the upturned corner of a turned box; a
    corner vertex is made, sits at the tip (δ along the corner normal,
    + 1e-8 m) while material slides through it, and nothing enters the box
    deeper than 2·thr."""
    m = _scene(tmp_path, "eol_corner", "eol", scale=0.75, frames=5)
    assert m["failed_at_s"] is None
    assert max(m["corner_vertices"]) == 1
    # E6: the remesher makes edge vertices on the fly too, in the same run,
    # as the sheet folds over the corner's three edges.
    assert max(m["edge_vertices"]) > 0, m["edge_vertices"]  # the sheet starts with none
    assert m["corner_offset_max_m"] <= 0.1 * THR + 1e-8
    assert m["slid_max_m"] > 5e-3
    assert m["deepest_max_m"] <= 2 * THR


def test_removing_a_box_releases_its_vertices_and_a_turned_box_checkpoints(tmp_path: Path) -> None:
    """Removing the box a sheet is folded over (also right after a load)
    releases its EOL vertices; a turned, frictional box and a frictional
    wire survive a checkpoint bit-identically."""
    sim, cloth = _edge_sim(dt=5e-3)
    sim.advance(0.2)
    assert cloth.is_eol.any()
    path = sim.save(tmp_path / "edge.npz")
    back = cr.eol.Simulation.load(path)
    for s in (sim, back):
        s.remove_collider(0)
        assert not s.objects[0].is_eol.any() and (s.objects[0].feature_colliders == -1).all()
        s.advance(0.02)
    rot = cr.colliders.rotation((0.0, 1.0, 0.0), 20.0)
    sim = cr.eol.Simulation(dt=5e-3)
    cloth = sim.add_cloth(_sheet())
    sim.add_collider(cr.colliders.Box(center=(0.5, -0.5, 0.25), half_extents=(0.5, 0.5, 0.5), rotation=rot,
                                      friction=0.4))
    sim.add_wire([(-1.0, -0.3, 0.1), (1.0, -0.3, 0.1)], friction=0.2)
    sim.advance(0.1)
    back = cr.eol.Simulation.load(sim.save(tmp_path / "turned.npz"))
    sim.advance(0.05)
    back.advance(0.05)
    np.testing.assert_array_equal(back.objects[0].positions, cloth.positions)


def _verify_setups() -> dict[str, cr.eol.Simulation]:
    """Small versions of the wire, nail, corner and moving-box scenes."""
    out = {}
    sheet = cr.geometry.grid_mesh(size=(0.5, 0.5), resolution=(8, 8), center=(0.013, 0.001, 0.021), normal="y")
    sim = cr.eol.Simulation(dt=2e-3, verify_qp=True, collapse_length=0.005)
    sim.add_cloth(sheet)
    sim.add_wire([(-1.0, -0.004, 0.0), (1.0, -0.004, 0.0)], velocity=(0.0, 0.5, 0.0))
    out["wire"] = sim
    sim = cr.eol.Simulation(dt=2e-3, verify_qp=True, collapse_length=0.005)
    sim.add_cloth(sheet, velocity=(0.2, 0.0, 0.0))
    sim.add_point((0.0, -0.004, 0.0), friction=0.3)
    out["nail"] = sim
    d = np.ones(3) / np.sqrt(3.0)
    rot = cr.colliders.rotation(np.cross(d, [0.0, 1.0, 0.0]), float(np.degrees(np.arccos(d[1]))))
    sim = cr.eol.Simulation(dt=2e-3, verify_qp=True, collapse_length=0.005)
    sim.add_cloth(sheet, velocity=(0.2, 0.0, 0.0))
    tip = np.array([0.0, -0.004, 0.0])
    sim.add_collider(cr.colliders.Box(center=tuple(tip - rot @ np.full(3, 0.2)), half_extents=(0.2, 0.2, 0.2),
                                      rotation=rot, mode="slip"))
    out["corner"] = sim
    sim, _ = _edge_sim(dt=5e-3, verify_qp=True)
    sim.colliders[0].set_velocity((0.0, 0.2, 0.0))
    out["moving_box"] = sim
    sim, _ = _edge_sim(dt=5e-3, verify_qp=True)
    sim.colliders[0].set_velocity(angular=(0.0, 0.4, -0.5))
    out["turning_box"] = sim
    for mode in ("eol", "lag_static", "lag_conformal_avg", "lag_conformal_cone"):
        sim, _ = _edge_sim(dt=5e-3, verify_qp=True, mode=mode)
        out[f"edge_{mode}"] = sim
    return out


@pytest.mark.parametrize("name", ["wire", "nail", "corner", "moving_box", "turning_box", "edge_eol", "edge_lag_static",
                                  "edge_lag_conformal_avg", "edge_lag_conformal_cone"])
def test_the_fast_qp_path_agrees_with_clarabel_on_every_obstacle(name: str) -> None:
    """Issue 16: the active-set path checked against Clarabel every step on
    the wire, nail, corner, moving-box and turning-box setups, and on the
    static edge in EOL and the three Lagrangian baselines that run without
    the sizing remesh: KKT-valid (spec §10 test 10) and the same solution
    to 1e-6 (relative to the largest velocity). The baselines' rows
    (vertex–face, box edge ↔ cloth edge, conformal) are in the QP; the
    static one has no feature vertices, the others do. The passes after a
    step's first are bordered re-solves against its factor (fewer
    factorizations than passes), and their answers are the ones checked."""
    sim = _verify_setups()[name]
    worst, eol_seen, rows, passes, factorizations = 0.0, 0, 0, 0, 0
    for _ in range(40):
        sim.step()
        st = sim.stats()
        assert st["kkt_equality"] <= 1e-9 and st["kkt_inequality"] <= 1e-9
        assert not st["qp_clarabel"]
        passes += int(st["qp_iterations"])
        factorizations += int(st["qp_factorizations"])
        worst = max(worst, st["qp_gap"])
        eol_seen = max(eol_seen, int(st["eol_vertices"]))
        rows = max(rows, int(st["inequality_rows"]))
    assert rows > 0, "the setup never touched its obstacle"
    assert (eol_seen > 0) == (name != "edge_lag_static"), "the setup never reached its feature"
    assert worst <= 1e-6, worst
    assert 40 <= factorizations < passes, (factorizations, passes)


def test_a_step_reports_the_qp_structure_analyses_it_ran() -> None:
    """``stats()["qp_analyses"]``: the first step analyses the KKT structure
    (ordering and symbolic factorization) of a fresh workspace, a step
    whose mesh the remesher changed analyses it again, and a step whose
    mesh and rows repeat the last step's keeps it (0): on the sheet
    draping over the edge, 53 of 80 steps kept it (measured), the others
    changed the mesh or the contact rows."""
    sim, cloth = _edge_sim(dt=5e-3)
    counts, changed = [], []
    faces = cloth.faces
    for _ in range(80):
        sim.step()
        st = sim.stats()
        counts.append(int(st["qp_analyses"]))
        # (A split step's discarded attempt is not counted: only whole steps.)
        changed.append(not np.array_equal(faces, cloth.faces) and st["substeps"] == 1)
        faces = cloth.faces
    assert counts[0] == 1, counts[:5]
    assert all(c >= 1 for c, ch in zip(counts, changed) if ch), (counts, changed)
    assert any(changed), "the remesher never changed the mesh"
    assert counts.count(0) >= 40, counts


def test_the_fast_qp_path_agrees_with_clarabel_at_a_corner_over_a_long_slide() -> None:
    """Issue 16 at a box corner (its vertex's Eulerian direction fixed by
    inequality rows only, where the KKT system is worst conditioned): the
    eol_corner setup at full size, 250 steps, every QP checked against
    Clarabel's. The passes after a step's first re-solve bordered, and
    every answer is refined until its corrections reach rounding; with two
    refinement steps the two differed by 4e-5 of the largest velocity
    here, beyond the spec's 1e-6."""
    sheet = cr.geometry.grid_mesh(size=(0.6, 0.6), resolution=(16, 16), center=(0.0, 0.0, 0.0), normal="y")
    sim = cr.eol.Simulation(dt=2e-3, collapse_length=0.005, verify_qp=True)
    cloth = sim.add_cloth(sheet, velocity=(0.2, 0.0, 0.0))
    d = np.ones(3) / np.sqrt(3.0)
    rot = cr.colliders.rotation(np.cross(d, [0.0, 1.0, 0.0]), float(np.degrees(np.arccos(d[1]))))
    tip = np.array([0.013, -0.005, 0.021])
    sim.add_collider(cr.colliders.Box(center=tuple(tip - rot @ np.full(3, 0.2)), half_extents=(0.2, 0.2, 0.2),
                                      rotation=rot, mode="slip"))
    worst, corner, passes, factorizations = 0.0, 0, 0, 0
    for _ in range(250):
        sim.step()
        st = sim.stats()
        assert not st["qp_clarabel"]
        worst = max(worst, st["qp_gap"])
        passes += int(st["qp_iterations"])
        factorizations += int(st["qp_factorizations"])
        corner = max(corner, int((cloth.feature_kinds == 0).sum()))
    assert corner == 1, "no corner vertex was made"
    assert factorizations < passes
    assert worst <= 1e-6, worst


def test_wrinkles_run_on_the_hinges_and_their_state_checkpoints(tmp_path: Path) -> None:
    """``add_cloth(wrinkles=...)`` runs the cloth module's wrinkle model on
    the EOL hinges (beyond the paper): the hinge read-outs have the cloth
    module's names and shapes, the anchors follow the fold, the dwell clocks
    run and the hold warp adds to them, and a checkpoint brings the state
    back (the continued runs agree bit for bit)."""
    sim = cr.eol.Simulation(dt=2e-3)
    cloth = sim.add_cloth(_sheet(), "denim", wrinkles=cr.cloth.Wrinkles())
    sim.add_collider(cr.colliders.Box(center=(0.5, -0.5, 0.25), half_extents=(0.5, 0.5, 0.5), mode="slip"))
    sim.advance(0.1)
    h = cloth.hinges
    assert h.shape[1] == 4 and h.dtype == np.int64
    for a in (cloth.hinge_angles, cloth.plastic_angles, cloth.anchor_angles, cloth.stick_times):
        assert a.shape == (len(h),) and np.all(np.isfinite(a))
    assert cloth.is_eol.any()
    # The fold over the edge dragged anchors along (slips), sticking hinges' clocks run.
    assert np.abs(cloth.anchor_angles).max() > 0.5
    assert cloth.stick_times.max() > 0.0
    assert "hinge_slips" in sim.stats() and "hinge_yields" in sim.stats()
    # Frames carry the cloth module's per-vertex plastic angle, from this
    # cloth's hinges now (the remesher renumbers them).
    pa = sim.frame().objects["cloth"].vertex_data["plastic_angle"]
    np.testing.assert_array_equal(pa, vertex_plastic_angles(cloth.num_vertices, cloth.hinges, cloth.plastic_angles))
    # What it is, on hinges made up: vertex 4 is on the edges of hinges 0
    # and 1 (|θ_p| 0.3, 0.5), vertex 5 only on hinge 1's, vertex 6 on none.
    h = np.array([[0, 4, 1, 2], [4, 5, 3, 0]])
    np.testing.assert_array_equal(vertex_plastic_angles(7, h, np.array([-0.3, 0.5])),
                                  [0.3, 0.0, 0.0, 0.0, 0.5, 0.5, 0.0])
    before = cloth.stick_times.max()
    sim.hold_warp(5.0, 2)
    sim.advance(0.01)
    assert cloth.stick_times.max() >= before + 9.0
    path = sim.save(tmp_path / "wrinkled.npz")
    back = cr.eol.Simulation.load(path)
    b = back.objects[0]
    assert b.wrinkles == cloth.wrinkles
    np.testing.assert_array_equal(b.anchor_angles, cloth.anchor_angles)
    np.testing.assert_array_equal(b.stick_times, cloth.stick_times)
    sim.advance(0.02)
    back.advance(0.02)
    np.testing.assert_array_equal(b.positions, cloth.positions)
    np.testing.assert_array_equal(b.anchor_angles, cloth.anchor_angles)


def test_wrinkle_options_that_cannot_run_raise() -> None:
    """Tensile elements on an EOL cloth, a hold warp or hinge states without
    wrinkles, and a wrinkles value that is not a Wrinkles are typed errors."""
    sim = cr.eol.Simulation()
    with pytest.raises(cr.InvalidInputError, match="tensile"):
        sim.add_cloth(_sheet(), wrinkles=cr.cloth.Wrinkles(tensile_plasticity=True))
    with pytest.raises(cr.InvalidInputError, match="Wrinkles"):
        sim.add_cloth(_sheet(), wrinkles={"bend_plasticity": True})  # type: ignore[arg-type]
    cloth = sim.add_cloth(_sheet())
    with pytest.raises(cr.InvalidInputError, match="wrinkle"):
        sim.hold_warp(1.0, 3)
    with pytest.raises(cr.InvalidInputError, match="wrinkle"):
        _ = cloth.plastic_angles
    assert cloth.hinge_angles.shape == (len(cloth.hinges),)


def test_crease_scene_keeps_a_sharper_crease_after_a_longer_hold(tmp_path: Path) -> None:
    """Issue 16, beyond the paper: a denim sheet folded over a box edge for
    0.5 s, then let go (box removed, falling freely). After a 200 s hold (by
    the hold warp) its crease line swings about a kept angle (measured at
    scale 0.5: -0.452 rad; scale 1: -0.453) well away from flat; after a
    short hold (-0.170; scale 1: -0.073) and for the elastic sheet (-0.186;
    -0.099) it swings about a much flatter one."""
    def run(**kw: object) -> dict[str, Any]:
        out = eol_scenes.eol_crease(out_dir=tmp_path / f"crease_{len(kw)}_{kw.get('hold_time')}", scale=0.5, **kw)
        assert (out / "eol_crease.png").stat().st_size > 10_000
        assert (out / "manifest.json").exists()
        m: dict[str, Any] = json.loads((out / "metrics.json").read_text())
        assert m["crease_line_vertices"] >= 5, "the sheet did not fold over the edge"
        assert m["crease_held_rad"] < -1.0
        return m
    long_, short, elastic = run(hold_time=200.0), run(hold_time=0.0), run(wrinkles=False)
    assert long_["crease_kept_rad"] < -0.3
    assert abs(long_["crease_kept_rad"]) > 2.0 * abs(short["crease_kept_rad"])
    assert abs(long_["crease_kept_rad"]) > 2.0 * abs(elastic["crease_kept_rad"])
    with pytest.raises(cr.InvalidInputError, match="hold_time"):
        eol_scenes.eol_crease(out_dir=tmp_path / "bad", hold_time=-1.0)


def _depth_in(box: cr.colliders.Box, x: np.ndarray, faces: np.ndarray) -> float:
    """The deepest point of the cloth's surface inside ``box`` (m, 0 if
    none): each face sampled at 45 barycentric points (every vertex, edge
    and face point of an 8-step grid), so a box edge through a face between
    vertices counts."""
    k = 8
    bary = np.array([(i / k, j / k, 1 - (i + j) / k) for i in range(k + 1) for j in range(k + 1 - i)])
    p = np.einsum("sk,fkd->fsd", bary, x[faces]).reshape(-1, 3)
    return max(0.0, float(-box.signed_distance(p).min()))


def test_a_border_pulled_over_the_edge_does_not_cut_its_corner() -> None:
    """The E1 sheet (12 × 12) pulled at 0.3 m/s until its hanging border
    comes up over the edge: the remesher releases the EOL line as the
    material under it runs out, and for a dozen steps the faces from the
    border to the top span the edge with no EOL vertex on it. Rows on the
    Lagrangian cloth edges that cross over a box edge (spec §6.4, every
    mode) keep those faces out of the box: the deepest point of the cloth's surface
    (faces sampled between vertices) stays under 2·δ = 1 mm (measured
    0.51 mm; the snap depth δ puts EOL vertices 0.35 mm inside), where
    without them it cut the corner 8.2 mm deep with every vertex outside."""
    n = 12
    sheet = cr.geometry.grid_mesh(size=(1.0, 1.0), resolution=(n, n), center=(0.2, 0.001, 0.5), normal="y")
    sim = cr.eol.Simulation(dt=5e-3, gravity=(0.0, -9.8, 0.0))
    cloth = sim.add_cloth(sheet, "eol_sheet")
    box = cr.colliders.Box(center=(0.6, -0.5, 0.5), half_extents=(0.6, 0.5, 0.75), mode="slip")
    sim.add_collider(box)
    cloth.pin(np.flatnonzero(np.isclose(cloth.positions[:, 0], 0.7)))
    deepest, lines = 0.0, []
    while sim.time < 1.6 - 1e-9:
        if sim.step_count == 70:
            p = cloth.pinned
            cloth.set_pin_targets(p, cloth.positions[p], np.tile([0.3, 0.0, 0.0], (len(p), 1)))
        sim.step()
        deepest = max(deepest, _depth_in(box, cloth.positions, cloth.faces))
        lines.append(int(cloth.is_eol.sum()))
    x = cloth.positions
    assert np.all(np.isfinite(x))
    assert max(lines) >= 10 and lines[-1] == 0, (max(lines), lines[-1])
    assert x[:, 0].min() > 0.02, "the border did not come over the edge"
    assert deepest <= 2 * 0.1 * THR, deepest


def test_a_sheet_slides_off_a_frictionless_table_and_falls() -> None:
    """A denim sheet with half of it over a frictionless table edge slides
    off at dt = 5e-3 s. When its trailing border reaches the edge the
    material under the EOL line runs out: the remesher releases the line
    (before this rule the step's QP had no solution there and the run
    stopped with a SolverError at t = 0.325 s). Every step passes its KKT
    check, the whole line is released, the sheet ends below the table top,
    beside the box."""
    sheet = cr.geometry.grid_mesh(size=(0.5, 0.5), resolution=(16, 16), center=(0.0, 0.001, 0.25), normal="y")
    sim = cr.eol.Simulation(dt=5e-3)
    cloth = sim.add_cloth(sheet, "denim")
    sim.add_collider(cr.colliders.Box(center=(0.5, -0.5, 0.25), half_extents=(0.5, 0.5, 0.5), mode="slip"))
    most = released = 0
    for _ in range(100):
        sim.step()  # a step whose QP fails its KKT check raises
        most = max(most, int(cloth.is_eol.sum()))
        released += sim.stats()["eol_released"]
    x = cloth.positions
    assert released >= most, f"only {released} of {most} EOL vertices were released"
    assert most >= 10, "the sheet never folded over the edge"
    assert np.all(np.isfinite(x))
    # It falls along the box's side face (x = 0), within 2·thr of it.
    assert x[:, 1].max() < -0.05 and x[:, 0].max() <= 2 * THR, "the sheet did not slide off the table"
    assert not cloth.is_eol.any()


@pytest.mark.parametrize("mu", [0.0, 1.5])
def test_a_sheet_across_two_boxes_rests_with_friction_and_falls_without(mu: float) -> None:
    """A 0.5 m sheet dropped 1 cm onto two boxes 0.2 m apart (an E8-like
    friction proxy with two edges): with μ = 1.5 it comes to rest over the
    gap (kinetic energy < 1e-6 J after 0.6 s, the EOL vertices kept: none
    made or released in the last 0.1 s); with μ = 0 it slides into the gap
    and falls. [D] Before the flat rows at edge vertices bent up to 0.5 rad
    (``step::FLAT_EDGE``; the spec's 0.1) the μ = 1.5 sheet never rested: its EOL
    vertices left the edges sideways at 1–1.9 m/s and were caught again
    every few steps (KE ~2e-4 J, about 30 made and released per 8 steps).
    The resting sheet, lifted by its outer strips at 0.5 m/s, leaves the
    edges (no EOL vertex left after 0.2 s)."""
    sheet = cr.geometry.grid_mesh(size=(0.5, 0.5), resolution=(16, 16), center=(0.0, 0.01, 0.0), normal="y")
    sim = cr.eol.Simulation(dt=5e-3)
    cloth = sim.add_cloth(sheet, "eol_sheet")
    for cx in (-0.35, 0.35):
        sim.add_collider(cr.colliders.Box(center=(cx, -0.5, 0.0), half_extents=(0.25, 0.5, 0.5),
                                          mode="slip" if mu == 0 else "separate", friction=mu))
    churn = 0
    for k in range(140):
        sim.step()
        s = sim.stats()
        if k >= 120:
            churn += s["eol_created"] + s["eol_released"]
    x = cloth.positions
    assert np.all(np.isfinite(x))
    if mu > 0:
        assert sim.kinetic_energy() < 1e-6
        assert churn == 0 and cloth.is_eol.sum() >= 20
        assert x[:, 1].min() > -0.1, "the sheet slid into the gap"
        # Lifted by its outer strips (on the box tops), it leaves the edges:
        # the rows never hold an EOL vertex down.
        outer = np.flatnonzero(np.abs(x[:, 0]) > 0.2)
        cloth.set_pin_targets(outer, x[outer], np.tile([0.0, 0.5, 0.0], (len(outer), 1)))
        for _ in range(40):
            sim.step()
        assert not cloth.is_eol.any(), f"{int(cloth.is_eol.sum())} EOL vertices held on the edges"
        assert cloth.positions[:, 1].min() > 0.0
    else:
        assert x[:, 1].max() < -0.2, "the frictionless sheet did not fall through the gap"


def test_a_checkpoint_after_the_box_moved_loads_and_continues(tmp_path: Path) -> None:
    """A box scripted by velocity changes (up, then down) with the sheet on
    it: the checkpoint loads with the box where it was at the saved time
    (it used to be re-added at its first pose, where the loader found the
    cloth inside it, CheckpointError), and the run continues bit for bit."""
    sim = cr.eol.Simulation(dt=5e-3)
    sheet = sim.add_cloth(cr.geometry.grid_mesh(size=(0.4, 0.4), resolution=(6, 6), center=(0.0, 0.001, 0.0)))
    box = cr.colliders.Box(center=(0.0, -0.5, 0.0), half_extents=(0.25, 0.5, 0.5), mode="slip")
    sim.add_collider(box)
    sim.advance(0.1)
    box.set_velocity((0.0, 0.2, 0.0))
    sim.advance(0.3)
    # Saved mid-rise (the box's top above where the sheet started) and
    # after the drop (below it): both load where they were.
    mid = sim.save(tmp_path / "rising.npz")
    box.set_velocity((0.0, -0.5, 0.0))
    sim.advance(0.2)
    path = sim.save(tmp_path / "moved.npz")
    risen = cr.eol.Simulation.load(mid)
    assert risen.colliders[0].translation[1] > -0.5 + 0.05 and risen.objects[0].positions[:, 1].max() > 0.05
    again = cr.eol.Simulation.load(path)
    assert np.allclose(again.colliders[0].translation, sim.colliders[0].translation)
    for _ in range(10):
        sim.step()
        again.step()
    assert np.array_equal(again.objects[0].positions, sheet.positions)
    assert np.isfinite(sheet.positions).all() and sheet.positions[:, 1].min() < -0.05


def test_the_corner_scene_continued_stays_solvable(tmp_path: Path) -> None:
    """Found by the soak: the corner scene (scale 0.5, 294 steps) continued
    from its checkpoint failed §10's KKT check at step 558, Clarabel's
    complementarity 1.6e-8 against 1e-8 (its gap tolerance was met in the
    scaled QP, whose multipliers come back ×1/scale ≈ 1.7e3). Both gap
    tolerances are now in the caller's units; the run goes on."""
    out = cr.scenes.run("eol_corner", out_dir=tmp_path, scale=0.5, checkpoint=True)
    sim = cr.eol.Simulation.load(out / "checkpoint.npz")
    assert sim.step_count == 294
    while sim.step_count < 700:
        sim.step()
    assert np.isfinite(sim.objects[0].positions).all()


def test_e8_four_turned_boxes_hold_the_sheet_with_friction() -> None:
    """E8 with μ = 0.8: EOL vertices on the turned boxes' edges around the
    gap, and the sheet comes to rest (kinetic energy < 1e-6 J within
    2 s: 1.2 s here) without falling into the gap (lowest point above
    −0.1 m; its centre of mass is 5 mm below the tops, where it sags into
    the gap, not above them as the spec words it for its unstated
    spacing), and no bending artefact away from the features (every
    hinge with no EOL vertex bends less than 30°)."""
    sim, cloth = eol_scenes.four_turned_boxes(0.8)
    for _ in range(240):
        sim.step()
    x = cloth.positions
    assert np.all(np.isfinite(x))
    assert sim.kinetic_energy() < 1e-6, sim.kinetic_energy()
    assert cloth.is_eol.sum() >= 20, int(cloth.is_eol.sum())
    com = float(np.average(x[:, 1], weights=cloth.masses))
    assert x[:, 1].min() > -0.1 and com > -0.01, (x[:, 1].min(), com)
    away = ~cloth.is_eol[cloth.hinges].any(axis=1)
    assert np.abs(cloth.hinge_angles[away]).max() < np.radians(30.0)


@pytest.mark.parametrize("resolution", [24, 38])
def test_e8_at_finer_resolutions_rests_without_churn(resolution: int) -> None:
    """E8 with μ = 0.8 on a 24 × 24 sheet (1,152 faces) and at the bench
    row's 38 × 38 (2,888): the sheet comes to rest (kinetic energy < 1e-6 J
    within 1.5 s; measured 3e-19 and 9e-18 J) with no EOL vertex made or
    released in the last 0.1 s, sagging into the gap without crumpling
    (lowest point above −6 cm, measured −4.8 and −4.9 cm; hinges away from
    the EOL vertices under 45°, measured 37° and 34°: the static Lagrangian
    sheet's are 30° and 42°, the sheet's own sag where the gaps cross). [D]
    A vertex made EOL at a crossing within τ of it takes the crossing's
    material point, not only its world place (spec §4.4;
    ``remesh::slide_material``), and test 1 takes a crossing only where the
    cloth touches the edge (within δ/5 of it, ``remesh::crossing``).
    Before, at 38 × 38 ten vertices a step were snapped up to 3.4 mm
    sideways or 1 mm down onto the edges, sprang off and were caught
    again: the sheet never rested (1.3e-5 J at 1.5 s) and crumpled where
    the gaps cross (hinges of 93°, lowest point −8.4 cm)."""
    sim, cloth = eol_scenes.four_turned_boxes(0.8, resolution=resolution)
    churn = 0
    for k in range(300):
        sim.step()
        if k >= 280:
            st = sim.stats()
            churn += st["eol_created"] + st["eol_released"]
    x = cloth.positions
    assert np.isfinite(x).all() and x[:, 1].min() > -0.06, x[:, 1].min()
    assert sim.kinetic_energy() < 1e-6, sim.kinetic_energy()
    assert churn == 0 and cloth.is_eol.sum() >= 40, (churn, int(cloth.is_eol.sum()))
    away = ~cloth.is_eol[cloth.hinges].any(axis=1)
    assert np.abs(cloth.hinge_angles[away]).max() < np.radians(45.0), np.degrees(np.abs(cloth.hinge_angles[away]).max())


def test_the_fast_qp_path_holds_the_e8_sheet_as_it_lands() -> None:
    """The FRICTION bench row's landing (E8, 38 × 38, μ = 0.8): on the step
    the sheet lands, 980 of its 1,236 contact rows are wrong in the first
    pass (the warm start's guess from the falling sheet). Counted as
    contested, they kept the dense oracle out (it takes at most 256), and
    the passes (the block update's, then Murty's) wandered on 10-50 rows
    for their whole budget (112 passes) and the step went to Clarabel (a
    second, against 20 ms for a step on the fast path). The first pass's
    misses are not contested: the step ends on the fast path (17 passes),
    KKT-valid, in one step."""
    sim, _ = eol_scenes.four_turned_boxes(0.8, resolution=38)
    rows, passes = 0, 0
    for _ in range(10):
        sim.step()
        st = sim.stats()
        assert not st["qp_clarabel"], f"t = {sim.time:.3f}: the active set gave up"
        assert st["kkt_equality"] <= 1e-9 and st["kkt_inequality"] <= 1e-9 and st["kkt_dual"] <= 1e-6, st
        assert st["substeps"] == 1, st["substeps"]
        rows = max(rows, int(st["inequality_rows"]))
        passes = max(passes, int(st["qp_iterations"]))
    assert rows > 1000, rows  # it landed
    assert passes <= 40, passes  # not the wandering of before


def test_e8_four_turned_boxes_let_the_frictionless_sheet_fall() -> None:
    """E8 with μ = 0: the sheet slides off the corners into the gap and
    falls: after it lands its centre of mass (mass-weighted) only goes
    down, step after step, and ends well below the box tops, its EOL
    vertices all released."""
    sim, cloth = eol_scenes.four_turned_boxes(0.0)
    com = []
    for _ in range(300):
        sim.step()
        com.append(float(np.average(cloth.positions[:, 1], weights=cloth.masses)))
    landed = int(np.argmax(np.asarray(com) < 0.0))
    assert np.all(np.diff(com[landed:]) <= 0.0), np.diff(com[landed:]).max()
    assert com[-1] < -0.5 and not cloth.is_eol.any(), (com[-1], int(cloth.is_eol.sum()))


@pytest.mark.parametrize(
    ("res", "center", "angles", "half", "mu", "nail", "mode"),
    [
        # Many rows change state at once as the sheet lands on three faces
        # and the nail: the block update wandered (five steps to Clarabel).
        (12, (0.119, 0.05, -0.149), (-0.373, -0.385, -0.180), (0.169, 0.301, 0.135), 1.0, True, "eol"),
        # A coarse sheet whose active rows are nearly dependent at some
        # steps: plain refinement shrank the error 2% a step (five steps to
        # Clarabel). A coincidence of this configuration: with its numbers
        # rounded to four decimals no step is that close to dependent.
        (6, (0.1345, 0.05, -0.0393), (0.1218, -0.56557, -0.42249), (0.37846, 0.12113, 0.13893), 0.3, False, "eol"),
        # The static Lagrangian baseline, frictionless (`benches/
        # eol_drop_sweep.py` seed 26): about 160 of 270 rows on, strongly
        # coupled through the stiff membrane; the block update and then
        # Murty's single-row passes wandered for 100 passes and more on
        # four steps, which went to Clarabel, until the oracle settled the
        # contested rows (`qp::settle_contested`).
        (16, (0.01629953, 0.05, 0.00197055), (-0.51887069, 0.25542984, 0.37573824),
         (0.26450101, 0.29029264, 0.15075997), 0.0, False, "lag_static"),
    ],
    ids=["many_flips", "near_dependent_rows", "lagrangian_coupled_rows"],
)
def test_the_fast_qp_path_holds_sheets_dropped_on_tilted_boxes(
    res: int, center: tuple[float, float, float], angles: tuple[float, float, float],
    half: tuple[float, float, float], mu: float, nail: bool, mode: str,
) -> None:
    """Issue 16's fast path where it used to give up: a 0.6 m sheet dropped
    onto the top corner of a box tilted about all three axes, 0.6 s (three
    of a randomized sweep of such drops). With the block update's
    safeguard (Júdice and Pires: one row a pass while the count of wrong
    rows does not fall), GMRES after the plain refinement and the dense
    oracle on the contested rows, every step ends on the fast path,
    KKT-valid and equal to Clarabel's answer to 1e-6; all three scenes had
    steps go to Clarabel before."""
    sheet = cr.geometry.grid_mesh(size=(0.6, 0.6), resolution=(res, res), center=center, normal="y")
    sim = cr.eol.Simulation(dt=5e-3, verify_qp=True, mode=mode)
    cloth = sim.add_cloth(sheet, "eol_sheet")
    a, b, c = angles  # rad about x, then y, then z
    rx = np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]])
    ry = np.array([[np.cos(b), 0, np.sin(b)], [0, 1, 0], [-np.sin(b), 0, np.cos(b)]])
    rz = np.array([[np.cos(c), -np.sin(c), 0], [np.sin(c), np.cos(c), 0], [0, 0, 1]])
    rot = rz @ ry @ rx
    he = np.array(half)
    top = (np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)]) * he @ rot.T)[:, 1].max()
    sim.add_collider(cr.colliders.Box(center=(0.0, 0.045 - top, 0.0), half_extents=tuple(he), rotation=rot,
                                      mode="slip", friction=mu))
    if nail:
        sim.add_point((0.2, 0.03, -0.2), normal=(0, 1, 0))
    worst, eol = 0.0, 0
    y0 = cloth.positions[:, 1].copy()
    for _ in range(120):
        sim.step()
        st = sim.stats()
        assert not st["qp_clarabel"], f"t = {sim.time:.3f}: the active set gave up"
        assert st["kkt_equality"] <= 1e-9 and st["kkt_inequality"] <= 1e-9
        worst = max(worst, st["qp_gap"])
        eol = max(eol, int(st["eol_vertices"]))
    assert np.isfinite(cloth.positions).all()
    assert eol > 5 if mode == "eol" else eol == 0, eol
    assert worst <= 1e-6, worst
    assert sim.colliders[0].signed_distance(cloth.positions).min() >= -2 * 5e-3
    assert cloth.positions[:, 1].min() < y0.min() - 0.05  # it draped
