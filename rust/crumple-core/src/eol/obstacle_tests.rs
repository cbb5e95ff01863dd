//! Wires and points (spec eol_cloth §4.1, §4.3 tests 2, 4, 5, §6.1 rows):
//! the E0 wire variant (a chain over a frictionless peg), a sheet dropped
//! on a nail (E3: the point-EOL vertex stays at the tip while material
//! slides through it), the Lagrangian baselines' contact rows, and moving
//! obstacles (E5: EOL rows with the obstacle's velocity).

use super::*;
use crate::eol::element::{Mat2d, signed_area};
use crate::eol::step::Stepper;
use crate::eol::system::test_params;
use crate::geometry::grid_mesh;

/// A strip 0.1 m × 1 m (material u × v) hung over a wire along world x
/// at the origin (normal +z): the row v = `fold` where the remesher snaps
/// new EOL vertices (0.1·thr under the wire, spec §4.4), the
/// part v < fold hanging on the −y side, the rest on the +y side, each at
/// `tilt` rad from the vertical. The remesher finds the crossing.
fn hung_strip(fold: f64, tilt: f64, rows: usize) -> Stepper {
    let m = grid_mesh((0.1, 1.0), (2, rows), Vec3::new(0.05, 0.5, 0.0), 2).unwrap();
    let u: Vec<Mat2d> = m.vertices().iter().map(|v| [v.x, v.y]).collect();
    let (s, c) = tilt.sin_cos();
    let x = u
        .iter()
        .map(|p| {
            let d = p[1] - fold;
            let top = Vec3::new(p[0], 0.0, -5e-4);
            if d.abs() < 1e-9 {
                top
            } else if d < 0.0 {
                top + Vec3::new(0.0, d * s, d * c)
            } else {
                top + Vec3::new(0.0, d * s, -d * c)
            }
        })
        .collect();
    let params = crate::eol::system::strip_params();
    let mut st = Stepper::new(x, u, m.faces().to_vec(), params, 1e-3).unwrap();
    st.wires = vec![Wire {
        ends: [Vec3::new(-1.0, 0.0, 0.0), Vec3::new(1.0, 0.0, 0.0)],
        normal: Vec3::new(0.0, 0.0, 1.0),
        velocity: Vec3::zero(),
        friction: 0.0,
    }];
    st.tau = 0.005;
    st
}

/// The material length on the v < fold side: mean v of the EOL vertices.
fn short_side(s: &Stepper) -> f64 {
    let eol: Vec<usize> = (0..s.mesh.x.len()).filter(|&i| s.mesh.eol[i]).collect();
    assert!(!eol.is_empty(), "no EOL vertex on the wire");
    eol.iter().map(|&i| s.mesh.u[i][1]).sum::<f64>() / eol.len() as f64
}

/// How far EOL vertex `x` is across wire `w` (along n×t: the equality
/// row holds it at 0) and under it (along −n: the inequality row lets it
/// lift off, not sink below its snapped δ = 0.1·thr), m.
fn off_wire(w: &Wire, x: Vec3<f64>, thr: f64) -> (f64, f64) {
    let r = x - w.ends[0];
    let across = w.normal.cross(w.tangent());
    (across.dot(r).abs(), (-w.normal.dot(r) - 0.1 * thr).max(0.0))
}

/// E0 (wire variant) and §4.3 test 5: the remesher puts the fold row on
/// the wire (kind 2); it stays on the wire (across it to 1e-9 m, under it
/// no deeper than its snapped δ, E2's first proxy), material crosses it in
/// every step (E2: no stall) and the strip runs over the wire like a chain over a frictionless peg:
/// with x = ℓ₁ − L/2, ẍ = (2 g cos α / L) x, x(t) = x₀ cosh(√(2g cos α/L) t).
#[test]
fn e0_wire_a_strip_runs_over_a_wire_like_a_chain_over_a_peg() {
    let tilt = 5f64.to_radians();
    let mut s = hung_strip(0.4, tilt, 20);
    let r = s.step().unwrap();
    assert_eq!(r.remesh.created, 3, "{:?}", r.remesh);
    assert!(s.features.iter().flatten().all(|f| f.kind() == 2));
    let x0 = (1.0 - 0.4) - 0.5;
    let (mut across, mut under) = (0.0f64, 0.0f64);
    let mut last = short_side(&s);
    while s.time < 0.2 - 1e-12 {
        let r = s.step().unwrap();
        assert!(r.kkt.ok(), "t = {}: {:?}", s.time, r.kkt);
        // E2: the throughput over the wire never stalls: material crosses
        // to the long side in every step.
        let now = short_side(&s);
        assert!(
            now < last,
            "t = {}: no material crossed the wire ({last} → {now})",
            s.time
        );
        last = now;
        assert_eq!(
            s.mesh.eol.iter().filter(|e| **e).count(),
            3,
            "an EOL vertex was lost"
        );
        for i in (0..s.mesh.x.len()).filter(|&i| s.mesh.eol[i]) {
            let (a, u) = off_wire(&s.wires[0], s.mesh.x[i], s.thr);
            (across, under) = (across.max(a), under.max(u));
        }
    }
    assert!(
        across <= 1e-9 && under <= 1e-8,
        "an EOL vertex left the wire: across {across:e} m, under {under:e} m"
    );
    let l1 = 1.0 - short_side(&s);
    let k = (2.0 * 9.8 * tilt.cos()).sqrt();
    let want = x0 * (k * s.time).cosh();
    eprintln!(
        "E0 wire: x {x0} → {:.5} m in {:.3} s, chain over a peg {want:.5}",
        l1 - 0.5,
        s.time
    );
    let err = ((l1 - 0.5 - x0) - (want - x0)).abs() / (want - x0);
    assert!(
        err < 0.05,
        "ran {:.5} m, a chain {:.5} m ({:.1} %)",
        l1 - 0.5 - x0,
        want - x0,
        100.0 * err
    );
    let mut area = 0.0;
    for f in &s.mesh.faces {
        let a = signed_area(&f.map(|k| s.mesh.u[k as usize]));
        assert!(a > 0.0);
        area += a;
    }
    assert!((area - 0.1).abs() <= 1e-10 * 0.1, "material area {area}");
}

/// A 0.5 m sheet 1 mm over a nail at the origin (normal +z), moving at
/// `vx` m/s along x.
fn sheet_over_nail(vx: f64) -> Stepper {
    sheet_over_nail_at(Vec3::new(0.013, 0.021, 1e-3), vx)
}

/// [`sheet_over_nail`] with the sheet's centre at `center`.
fn sheet_over_nail_at(center: Vec3<f64>, vx: f64) -> Stepper {
    let m = grid_mesh((0.5, 0.5), (12, 12), center, 2).unwrap();
    let u: Vec<Mat2d> = m.vertices().iter().map(|v| [v.x, v.y]).collect();
    let mut s = Stepper::new(
        m.vertices().to_vec(),
        u,
        m.faces().to_vec(),
        test_params(9.8),
        2e-3,
    )
    .unwrap();
    s.points = vec![PointObstacle {
        position: Vec3::zero(),
        normal: Vec3::new(0.0, 0.0, 1.0),
        velocity: Vec3::zero(),
        friction: 0.0,
    }];
    s.xd = vec![Vec3::new(vx, 0.0, 0.0); s.mesh.x.len()];
    s.tau = 0.005;
    s
}

/// One contact-conforming pass of `s` against its own points (no vertex
/// scripted; thr 5 mm, τ 5 mm, h 2 ms).
fn remesh_on_its_nail(s: &mut Stepper) -> crate::eol::remesh::RemeshReport {
    let points = s.points.clone();
    let pinned = vec![false; s.mesh.x.len()];
    let obstacles = crate::eol::remesh::Obstacles {
        boxes: &[],
        wires: &[],
        points: &points,
    };
    s.cloth(&pinned).remesh(&obstacles, 5e-3, 0.005, 2e-3).unwrap()
}

/// E3 and §4.3 tests 2 and 4: a sheet dropped on a nail gets one EOL
/// vertex of kind 3 (point) where it lands; the vertex stays at the tip
/// (the tangential equality rows, residual ≤ 1e-9 m per step against its
/// snapped position 0.1·thr under the tip) while the sheet, moving
/// sideways, slides over it: the vertex's material coordinate moves.
#[test]
fn e3_a_sheet_dropped_on_a_nail_slides_over_its_tip() {
    let mut s = sheet_over_nail(0.2);
    let mut first: Option<(u32, Mat2d)> = None;
    let mut worst = 0.0f64;
    for _ in 0..150 {
        let r = s.step().unwrap();
        assert!(r.kkt.ok(), "t = {}: {:?}", s.time, r.kkt);
        let on: Vec<usize> = (0..s.mesh.x.len()).filter(|&i| s.mesh.eol[i]).collect();
        assert!(on.len() <= 1, "{} EOL vertices for one nail", on.len());
        if let Some(&i) = on.first() {
            assert_eq!(s.features[i].map(|f| f.kind()), Some(3));
            let tip = Vec3::new(0.0, 0.0, -0.1 * s.thr);
            let d = s.mesh.x[i] - tip;
            worst = worst.max(d.x.abs().max(d.y.abs()));
            assert!(d.z > -1e-9, "the vertex went under the tip by {:e}", -d.z);
            first.get_or_insert((s.ids[i], s.mesh.u[i]));
        }
    }
    let (id, u0) = first.expect("the sheet never reached the nail");
    let i = s.vertex_of(id).expect("the nail's vertex was released");
    assert!(
        worst <= 1e-9,
        "the point vertex drifted off the tip by {worst:e} m"
    );
    let moved = (s.mesh.u[i][0] - u0[0]).hypot(s.mesh.u[i][1] - u0[1]);
    let low = s.mesh.x.iter().map(|x| x.z).fold(f64::INFINITY, f64::min);
    eprintln!("E3: material slid {moved:.4} m through the tip; lowest point {low:.3} m");
    assert!(moved > 0.01, "material slid only {moved:e} m over the nail");
    assert!(low < -0.05, "the sheet did not drape ({low} m)");
}

/// The Lagrangian baseline (no remesher) holds the sheet on the nail with
/// the face row of §6.4 test 2: it drapes, nothing goes under the tip by
/// more than 2·thr, and no vertex is EOL.
#[test]
fn lagrangian_nail_and_wire_contacts_hold_the_cloth() {
    let mut s = sheet_over_nail(0.0);
    s.remesh = false;
    for _ in 0..100 {
        let r = s.step().unwrap();
        assert!(r.kkt.ok());
    }
    assert!(s.mesh.eol.iter().all(|e| !e));
    let z = z_over(&s);
    let low = s.mesh.x.iter().map(|x| x.z).fold(f64::INFINITY, f64::min);
    eprintln!("Lagrangian nail: cloth at {z:e} m over the tip, lowest point {low:.3} m");
    assert!(low < -0.05, "the sheet did not drape ({low} m)");
    assert!(
        z.abs() <= 2.0 * s.thr,
        "the cloth is {z} m off the tip (negative: poked through)"
    );

    let mut s = hung_strip(0.5, 5f64.to_radians(), 20);
    s.remesh = false;
    for _ in 0..100 {
        assert!(s.step().unwrap().kkt.ok());
    }
    let top = s.mesh.x.iter().map(|x| x.z).fold(f64::NEG_INFINITY, f64::max);
    assert!(
        top > -2.0 * s.thr,
        "the strip fell through the wire (top at {top} m)"
    );
}

/// E5 with a moving wire: a wire rising at 0.5 m/s into a sheet lifts it;
/// its EOL vertices ride on it (across it to 1e-9 m, never under it deeper
/// than δ: the rows' moving right-hand side) and move up at least at the
/// wire's speed (inequality residual ≥ −1e-9).
#[test]
fn a_rising_wire_lifts_the_cloth_with_its_eol_vertices_on_it() {
    let m = grid_mesh((0.4, 0.4), (10, 10), Vec3::new(0.0, 0.0, 0.0), 2).unwrap();
    let u: Vec<Mat2d> = m.vertices().iter().map(|v| [v.x, v.y]).collect();
    let mut s = Stepper::new(
        m.vertices().to_vec(),
        u,
        m.faces().to_vec(),
        test_params(9.8),
        1e-3,
    )
    .unwrap();
    s.wires = vec![Wire {
        ends: [Vec3::new(-1.0, 0.013, -0.01), Vec3::new(1.0, 0.013, -0.01)],
        normal: Vec3::new(0.0, 0.0, 1.0),
        velocity: Vec3::new(0.0, 0.0, 0.5),
        friction: 0.0,
    }];
    s.tau = 0.004;
    let (mut across, mut under) = (0.0f64, 0.0f64);
    let mut seen = false;
    for _ in 0..150 {
        let r = s.step().unwrap();
        assert!(r.kkt.ok(), "t = {}: {:?}", s.time, r.kkt);
        for i in (0..s.mesh.x.len()).filter(|&i| s.mesh.eol[i]) {
            seen = true;
            let (a, u) = off_wire(&s.wires[0], s.mesh.x[i], s.thr);
            (across, under) = (across.max(a), under.max(u));
            assert!(
                s.xd[i].z >= 0.5 - 1e-9,
                "an EOL vertex fell behind the wire: {:?}",
                s.xd[i]
            );
        }
    }
    assert!(seen, "the wire never reached the cloth");
    assert!(
        across <= 1e-9 && under <= 1e-8,
        "an EOL vertex left the wire: across {across:e} m, under {under:e} m"
    );
    let wire_z = s.wires[0].ends[0].z;
    assert!((wire_z - (-0.01 + 0.5 * s.time)).abs() < 1e-12);
    let top = s.mesh.x.iter().map(|x| x.z).fold(f64::NEG_INFINITY, f64::max);
    assert!(
        top > wire_z - 1e-3 && top > 0.05,
        "the cloth was not lifted (top {top}, wire {wire_z})"
    );
}

/// The cloth's height right over the nail at the origin (the face whose
/// plan view holds the tip, interpolated), m.
fn z_over(s: &Stepper) -> f64 {
    s.mesh
        .faces
        .iter()
        .find_map(|f| {
            let [a, b, c] = f.map(|k| s.mesh.x[k as usize]);
            let cross = |p: Vec3<f64>, q: Vec3<f64>| p.x * q.y - p.y * q.x;
            let area = cross(b - a, c - a);
            let o = Vec3::zero();
            let w = [
                cross(b - o, c - o) / area,
                cross(c - o, a - o) / area,
                cross(a - o, b - o) / area,
            ];
            w.iter()
                .all(|&k| k >= 0.0)
                .then(|| w[0] * a.z + w[1] * b.z + w[2] * c.z)
        })
        .expect("no face over the nail")
}

/// A turned box (spec §4.2, in its own frame): its corners are R·(±s) + c,
/// its edges' normals the turned face normals, and the signed distance,
/// nearest face and face-above read-outs agree with the axis-aligned box
/// seen in its own frame.
#[test]
fn a_turned_box_answers_in_its_own_frame() {
    let r = crate::math::Mat3::from_axis_angle(Vec3::new(0.3, 1.0, -0.2).normalize_or_zero(), 0.7);
    let (c, half) = (Vec3::new(0.1, -0.4, 0.25), Vec3::new(0.3, 0.2, 0.5));
    let b = BoxObstacle {
        rotation: r,
        ..BoxObstacle::new(c, half)
    };
    let flat = BoxObstacle::new(Vec3::zero(), half);
    let world = |p: Vec3<f64>| c + r * p;
    for p in [
        Vec3::new(0.1, 0.05, -0.2),
        Vec3::new(0.5, 0.0, 0.1),
        Vec3::new(0.0, 0.3, 0.0),
        Vec3::new(0.4, 0.3, 0.7),
    ] {
        assert!((b.signed_distance(world(p)) - flat.signed_distance(p)).abs() < 1e-12);
        let (nb, nf) = (b.nearest_face(world(p)), flat.nearest_face(p));
        assert_eq!(nb.is_some(), nf.is_some());
        if let (Some((n1, d1)), Some((n2, d2))) = (nb, nf) {
            assert!((n1 - r * n2).norm() < 1e-12 && (d1 - d2).abs() < 1e-12);
        }
        let (ab, af) = (b.face_above(world(p)), flat.face_above(p));
        assert_eq!(ab.is_some(), af.is_some());
        if let (Some((n1, g1)), Some((n2, g2))) = (ab, af) {
            assert!((n1 - r * n2).norm() < 1e-12 && (g1 - g2).abs() < 1e-12);
        }
    }
    for (k, corner) in b.corners().iter().enumerate() {
        let local = flat.corners()[k];
        assert!((corner.position - world(local.position)).norm() < 1e-12);
        assert!(b.signed_distance(corner.position).abs() < 1e-12);
        for (n, m) in corner.normals.iter().zip(local.normals) {
            assert!((*n - r * m).norm() < 1e-12);
        }
    }
    for (e, f) in b.edges().iter().zip(flat.edges()) {
        assert!((e.ends[0] - world(f.ends[0])).norm() < 1e-12 && (e.tangent - r * f.tangent).norm() < 1e-12);
        assert!((e.ends[1] - world(f.ends[1])).norm() < 1e-12);
        assert!((e.normals[0] - r * f.normals[0]).norm() < 1e-12);
        assert!((e.normals[1] - r * f.normals[1]).norm() < 1e-12);
        let mid = (e.ends[0] + e.ends[1]) * 0.5;
        assert!(b.signed_distance(mid).abs() < 1e-12);
    }
}

/// Spec §5.7 Eq. 13 in the remesher: a sheet 1 mm through a nail tip,
/// moving sideways at 0.2 m/s and down at 0.1 m/s, gets its point vertex
/// with `Ẋ ≠ 0` and `ẋ − F Ẋ` the world velocity (the sheet's, exactly);
/// `ẋ` is what is left, normal to the flat sheet. With the option off the
/// same vertex has `Ẋ = 0`.
#[test]
fn eq13_splits_the_velocity_of_a_new_point_vertex() {
    for eq13 in [false, true] {
        let mut s = sheet_over_nail(0.2);
        for x in &mut s.mesh.x {
            x.z -= 2e-3; // 1 mm through the tip
        }
        let w0 = Vec3::new(0.2, 0.0, -0.1);
        s.xd = vec![w0; s.mesh.x.len()];
        s.eq13 = eq13;
        let r = remesh_on_its_nail(&mut s);
        assert_eq!(r.created, 1, "{r:?}");
        let v = (0..s.mesh.x.len()).find(|&i| s.mesh.eol[i]).unwrap();
        let ud = s.ud[v];
        if !eq13 {
            assert_eq!(ud, [0.0, 0.0]);
            assert!((s.xd[v] - w0).norm() < 1e-12);
            continue;
        }
        assert!(ud[0].hypot(ud[1]) > 0.1, "Ẋ {ud:?}");
        // World = material on this flat sheet: F is the identity on (x, y).
        let f = Vec3::new(ud[0], ud[1], 0.0);
        assert!((s.xd[v] - f - w0).norm() < 1e-12, "ẋ {:?} Ẋ {ud:?}", s.xd[v]);
        assert!((s.xd[v] - Vec3::new(0.0, 0.0, -0.1)).norm() < 1e-12);
    }
}

/// Spec §10 test 16 in a field that is not linear: every vertex of the
/// sheet moves at its own velocity (0.2 m/s sideways and 0.1 m/s down onto
/// the tip, each plus a random part of up to 0.05 m/s per axis; a face
/// lifting off the tip gets no vertex); the new point vertex's world
/// velocity `ẋ − F Ẋ` is the old face's barycentric interpolation of its
/// corners' velocities at the vertex's material point, to 1e-12, with
/// either transfer (`zero_eulerian` or Eq. 13), and every vertex that was
/// there before keeps its velocity.
#[test]
fn a_new_vertex_takes_the_interpolated_world_velocity_of_any_field() {
    for eq13 in [false, true] {
        let mut s = sheet_over_nail(0.0);
        for x in &mut s.mesh.x {
            x.z -= 2e-3;
        }
        let mut g = crate::test_util::Rng::new(16);
        s.xd = (0..s.mesh.x.len())
            .map(|_| Vec3::new(0.2, 0.0, -0.1) + g.vec(0.05))
            .collect();
        s.eq13 = eq13;
        let (faces, u, xd, ids) = (
            s.mesh.faces.clone(),
            s.mesh.u.clone(),
            s.xd.clone(),
            s.ids.clone(),
        );
        let r = remesh_on_its_nail(&mut s);
        assert_eq!(r.created, 1, "{r:?}");
        let v = (0..s.mesh.x.len()).find(|&i| s.mesh.eol[i]).unwrap();
        let p = s.mesh.u[v];
        // The old face holding p, and p's barycentrics in it.
        let (face, w) = faces
            .iter()
            .find_map(|f| {
                let w = crate::eol::element::barycentric(&f.map(|k| u[k as usize]), p)?;
                w.iter().all(|&x| x >= -1e-12).then_some((*f, w))
            })
            .unwrap();
        let want = crate::eol::element::world_point(&face.map(|k| xd[k as usize]), w);
        // F is the identity on (x, y) on this flat sheet.
        let world = s.xd[v] - Vec3::new(s.ud[v][0], s.ud[v][1], 0.0);
        assert!(
            (world - want).norm() < 1e-12,
            "eq13 {eq13}: {world:?} vs {want:?}"
        );
        assert_eq!(s.ud[v] == [0.0, 0.0], !eq13, "Ẋ {:?}", s.ud[v]);
        for (i, id) in s.ids.iter().enumerate() {
            if let Some(k) = ids.iter().position(|j| j == id) {
                assert_eq!(s.xd[i], xd[k], "vertex {id} changed its velocity");
            }
        }
    }
}

/// A turning box (spec §4.2): `x + h v_obs(x)` is where the box's motion
/// takes `x` (its centre moved by `h v`, the offset turned by `exp(h[ω])`)
/// for points anywhere, `advance` moves it there (and `aim` at a pose
/// lands it there), and every edge and corner feature of the box before
/// the step maps to the turned box's own feature, the same edge or corner
/// (for any order of its normals).
#[test]
fn a_turning_box_moves_points_and_features_with_it() {
    let r = crate::math::Mat3::from_axis_angle(Vec3::new(0.3, 1.0, -0.2).normalize_or_zero(), 0.7);
    let mut b = BoxObstacle {
        rotation: r,
        velocity: Vec3::new(0.2, -0.1, 0.05),
        angular_velocity: Vec3::new(0.4, -1.3, 0.9),
        ..BoxObstacle::new(Vec3::new(0.1, -0.4, 0.25), Vec3::new(0.3, 0.2, 0.5))
    };
    let h = 0.01;
    let before = b;
    let turn = b.turn(h);
    let local = [
        Vec3::new(0.3, 0.2, -0.5),
        Vec3::new(-0.1, 0.05, 0.2),
        Vec3::new(2.0, -1.0, 0.5),
    ];
    b.advance(h);
    for p in local {
        let x = before.center + before.rotation * p;
        let moved = b.center + b.rotation * p;
        let err = (x + before.velocity_at(x, h) * h - moved).norm();
        assert!(err < 1e-14, "a point of the box moved {err:e} m off it");
    }
    assert!((b.rotation - turn * before.rotation).max_abs() < 1e-15);
    // Without a turn the velocity is the box's, exactly.
    let still = BoxObstacle {
        angular_velocity: Vec3::zero(),
        ..before
    };
    assert_eq!(still.velocity_at(Vec3::new(3.0, 1.0, -2.0), h), still.velocity);
    for (e0, e1) in before.edges().iter().zip(b.edges()) {
        let mut f = e0.feature(2);
        if let Feature::Edge { normals, .. } = &mut f {
            normals.swap(0, 1);
        }
        assert_eq!(b.turned_feature(&f, &turn, 2), Some(e1.feature(2)));
    }
    for (c0, c1) in before.corners().iter().zip(b.corners()) {
        assert_eq!(b.turned_feature(&c0.feature(1), &turn, 1), Some(c1.feature(1)));
    }
    // Aimed at a pose, a step lands on it (a keyframed box's path).
    let (c1, r1) = (
        Vec3::new(0.3, 0.1, -0.2),
        crate::math::Mat3::from_axis_angle(Vec3::new(1.0, 0.2, 0.0).normalize_or_zero(), 0.05) * b.rotation,
    );
    let mut aimed = b;
    aimed.aim(c1, r1, h);
    aimed.advance(h);
    assert!((aimed.center - c1).norm() < 1e-15 && (aimed.rotation - r1).max_abs() < 1e-14);
    // Aimed where it is (to rounding), it rests.
    aimed.aim(c1 + Vec3::new(1e-17, 0.0, 0.0), r1, h);
    assert!(aimed.velocity == Vec3::zero() && !aimed.turns());
    // A box re-posed by 0.01 rad, not turned by `turn`: no feature matches.
    let nudged = BoxObstacle {
        rotation: crate::math::Mat3::from_axis_angle(Vec3::new(0.0, 1.0, 0.0), 0.01) * b.rotation,
        ..b
    };
    let f = before.edges()[3].feature(2);
    assert_eq!(nudged.turned_feature(&f, &turn, 2), None);
    assert_eq!(
        nudged.turned_feature(&before.corners()[5].feature(2), &turn, 2),
        None
    );
    let w = Wire {
        ends: [Vec3::zero(), Vec3::new(1.0, 0.0, 0.0)],
        normal: Vec3::new(0.0, 1.0, 0.0),
        velocity: Vec3::zero(),
        friction: 0.0,
    };
    assert_eq!(b.turned_feature(&w.feature(0), &turn, 0), None);
}

/// Spec §5.2 step 3: a nail under the sheet within `b_r = 2.5 τ` of the
/// cloth's border (6 mm in from it, with τ = 5 mm: b_r = 12.5 mm) gets no
/// EOL vertex (§5.4 would revert it: a point vertex that near the border
/// has almost no material on one side); 16 mm in, it gets one. The border
/// vertices themselves are farther than τ from the nail, so the old rule
/// (no border vertex made EOL) did not refuse it.
#[test]
fn no_point_vertex_is_made_within_the_border_range() {
    for (inset, made) in [(0.006, 0), (0.016, 1)] {
        let mut s = sheet_over_nail_at(Vec3::new(0.25 - inset, 0.021, -1e-3), 0.0);
        let r = remesh_on_its_nail(&mut s);
        assert_eq!(r.created, made, "inset {inset}: {r:?}");
        assert_eq!(s.mesh.eol.iter().filter(|&&e| e).count(), made);
    }
}
