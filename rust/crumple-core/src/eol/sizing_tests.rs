//! The sizing remesh (spec eol_cloth §5.6): a coarse flat sheet is refined
//! to `size_max`, a fine one coarsened, a crease refined to `size_min`, a
//! conformal edge split into an EOL vertex on its feature; the material
//! area is kept, every face stays positive, the mesh stays a manifold.

use super::*;
use crate::eol::constraints::Feature;
use crate::eol::obstacle::BoxObstacle;
use crate::eol::step::Stepper;
use crate::geometry::grid_mesh;

/// A 0.5 m sheet with `res`² quads, world = material (z = 0), or folded
/// 90° about the line u₁ = `fold` (the part beyond it turned to −z).
fn sheet(res: usize, fold: Option<f64>) -> Stepper {
    let m = grid_mesh((0.5, 0.5), (res, res), Vec3::new(0.25, 0.25, 0.0), 2).unwrap();
    let u: Vec<Mat2d> = m.vertices().iter().map(|v| [v.x, v.y]).collect();
    let x = u
        .iter()
        .map(|p| match fold {
            Some(f) if p[1] > f => Vec3::new(p[0], f, f - p[1]),
            _ => Vec3::new(p[0], p[1], 0.0),
        })
        .collect();
    let mut s = Stepper::new(x, u, m.faces().to_vec(), crate::eol::system::strip_params(), 1e-3).unwrap();
    s.remesh = false;
    s
}

fn adapt(s: &mut Stepper, p: &Sizing) -> AdaptReport {
    let pinned = vec![false; s.mesh.x.len()];
    let mut c = s.cloth(&pinned);
    let r = c.adapt(p);
    c.finish().expect("the remeshed cloth is a manifold");
    r
}

fn edges(s: &Stepper) -> Vec<(u32, u32)> {
    s.mesh.edge_face_counts().keys().copied().collect()
}

fn material_length(s: &Stepper, (a, b): (u32, u32)) -> f64 {
    let (p, q) = (s.mesh.u[a as usize], s.mesh.u[b as usize]);
    (q[0] - p[0]).hypot(q[1] - p[1])
}

/// Total material area; panics on a face that is not positive.
fn area(s: &Stepper) -> f64 {
    s.mesh
        .faces
        .iter()
        .map(|f| {
            let a = signed_area(&f.map(|k| s.mesh.u[k as usize]));
            assert!(a > 0.0, "face {f:?} has material area {a}");
            a
        })
        .sum()
}

#[test]
fn the_tensor_max_holds_each_term_along_the_principal_axes() {
    let (lo, hi, v) = eig(&[3.0, 0.0, 1.0]);
    assert!((lo - 1.0).abs() < 1e-12 && (hi - 3.0).abs() < 1e-12 && (v[0].abs() - 1.0).abs() < 1e-12);
    // Two rank-one terms along x and y: the max holds both.
    let m = tensor_max(&[[4.0, 0.0, 0.0], [0.0, 0.0, 9.0]]);
    assert!((m[0] - 4.0).abs() < 1e-12 && m[1].abs() < 1e-12 && (m[2] - 9.0).abs() < 1e-12);
    // One term: itself.
    let t = [2.0, 0.5, 1.0];
    let m = tensor_max(&[t]);
    for k in 0..3 {
        assert!((m[k] - t[k]).abs() < 1e-12, "{m:?}");
    }
}

#[test]
fn a_coarse_flat_sheet_is_refined_to_size_max() {
    let mut s = sheet(4, None);
    let p = Sizing::default();
    let faces0 = s.mesh.faces.len();
    let r = adapt(&mut s, &p);
    assert!(r.split > 0, "{r:?}");
    let longest = edges(&s)
        .into_iter()
        .map(|e| material_length(&s, e))
        .fold(0.0, f64::max);
    println!(
        "coarse flat: {faces0} → {} faces, {r:?}, longest edge {longest:.4} m",
        s.mesh.faces.len()
    );
    // At rest and flat every term is 0: the metric is 1/size_max², s ≤ 1 ⇔ ℓ ≤ size_max.
    assert!(longest <= p.size_max + 1e-12, "longest edge {longest}");
    assert!((area(&s) - 0.25).abs() < 1e-12);
    // New vertices lie in the sheet where world = material.
    for (x, u) in s.mesh.x.iter().zip(&s.mesh.u) {
        assert!((x.x - u[0]).abs() < 1e-12 && (x.y - u[1]).abs() < 1e-12 && x.z == 0.0);
    }
    assert_eq!(s.xd.len(), s.mesh.x.len());
    assert_eq!(s.ids.len(), s.mesh.x.len());
}

#[test]
fn a_fine_flat_sheet_is_coarsened_and_stays_within_the_sizing() {
    let mut s = sheet(40, None); // edges 0.0125 m < size_min
    let p = Sizing::default();
    let (faces0, verts0) = (s.mesh.faces.len(), s.mesh.x.len());
    let r = adapt(&mut s, &p);
    println!(
        "fine flat: {faces0} → {} faces, {verts0} → {} vertices, {r:?}",
        s.mesh.faces.len(),
        s.mesh.x.len()
    );
    assert!(r.collapsed > 0 && s.mesh.faces.len() < faces0 * 2 / 3, "{r:?}");
    assert!((area(&s) - 0.25).abs() < 1e-12);
    let longest = edges(&s)
        .into_iter()
        .map(|e| material_length(&s, e))
        .fold(0.0, f64::max);
    assert!(longest <= p.size_max + 1e-12, "longest edge {longest}");
    // The border stays where it was: every border vertex is on the square's outline.
    let (border, _) = {
        let pinned = vec![false; s.mesh.x.len()];
        s.cloth(&pinned).border_vertices()
    };
    for (k, u) in s.mesh.u.iter().enumerate() {
        if border[k] {
            let on = [u[0], u[1], 0.5 - u[0], 0.5 - u[1]]
                .iter()
                .any(|d| d.abs() < 1e-12);
            assert!(on, "border vertex {k} at {u:?}");
        }
    }
}

#[test]
fn a_crease_is_refined_to_size_min_and_the_flat_parts_stay_coarse() {
    // Edges 0.025 m, folded 90° at u₁ = 0.25. The bend sits on one line of
    // edges, so each pass refines the faces touching it (their curvature
    // θℓ/2A grows as they shrink): three passes, as over three steps.
    let mut s = sheet(20, Some(0.25));
    let p = Sizing::default();
    let mut r = AdaptReport::default();
    for _ in 0..3 {
        r += adapt(&mut s, &p);
    }
    // The first ring off the crease, and the edges away from it.
    let off: f64 = s
        .mesh
        .u
        .iter()
        .map(|u| (u[1] - 0.25).abs())
        .filter(|&d| d > 1e-9)
        .fold(1.0, f64::min);
    let far: Vec<f64> = edges(&s)
        .into_iter()
        .filter(|e| {
            [e.0, e.1]
                .iter()
                .all(|&k| (s.mesh.u[k as usize][1] - 0.25).abs() > 0.1)
        })
        .map(|e| material_length(&s, e))
        .collect();
    let far_mean = far.iter().sum::<f64>() / far.len() as f64;
    println!("crease: {r:?}; first ring {off:.4} m off the crease; mean edge beyond 10 cm {far_mean:.4} m");
    assert!(
        off <= 1.05 * p.size_min,
        "the crease was not refined: first ring {off} m away"
    );
    assert!(off >= 0.25 * p.size_min, "refined far below size_min: {off} m");
    assert!(
        far_mean > 1.2 * p.size_min,
        "the flat parts were refined too: {far_mean} m"
    );
    assert!((area(&s) - 0.25).abs() < 1e-12);
}

#[test]
fn a_conformal_edge_splits_into_an_eol_vertex_on_its_feature() {
    // The sheet folded over a box edge along world x at y = 0.25, z = 0:
    // the row u₁ = 0.25 (every 0.125 m, longer than size_max) is EOL on it.
    let mut s = sheet(4, Some(0.25));
    let edge = Feature::Edge {
        normals: [Vec3::new(0.0, 0.0, 1.0), Vec3::new(0.0, 1.0, 0.0)],
        tangent: Vec3::new(1.0, 0.0, 0.0),
        obstacle: 0,
    };
    s.boxes = vec![BoxObstacle::new(
        Vec3::new(0.25, 0.0, -0.5),
        Vec3::new(1.0, 0.25, 0.5),
    )];
    let on: Vec<bool> = s.mesh.u.iter().map(|u| (u[1] - 0.25).abs() < 1e-12).collect();
    s.features = on.iter().map(|&e| e.then_some(edge)).collect();
    s.mesh.eol = on;
    for (i, e) in s.mesh.eol.iter().enumerate() {
        if *e {
            s.ud[i] = [0.0, 0.1 * s.mesh.u[i][0]];
            s.xd[i] = Vec3::new(0.2 * s.mesh.u[i][0], 0.0, 0.0);
        }
    }
    let n0 = s.mesh.eol.iter().filter(|e| **e).count();
    adapt(&mut s, &Sizing::default());
    let eol: Vec<usize> = (0..s.mesh.x.len()).filter(|&i| s.mesh.eol[i]).collect();
    println!("conformal: {n0} → {} EOL vertices", eol.len());
    assert!(
        eol.len() >= 4 * n0,
        "the EOL line was not refined: {} vertices",
        eol.len()
    );
    for &i in &eol {
        assert_eq!(s.features[i], Some(edge));
        let (x, u) = (s.mesh.x[i], s.mesh.u[i]);
        assert!(
            x.y == 0.25 && x.z == 0.0 && (u[1] - 0.25).abs() < 1e-12,
            "vertex {i} at {x:?} {u:?}"
        );
        // ẋ and Ẋ interpolated along the line (linear in u₀ there).
        assert!(
            (s.ud[i][1] - 0.1 * u[0]).abs() < 1e-12,
            "Ẋ {:?} at u {u:?}",
            s.ud[i]
        );
        assert!(
            (s.xd[i] - Vec3::new(0.2 * u[0], 0.0, 0.0)).norm() < 1e-12,
            "ẋ {:?} at u {u:?}",
            s.xd[i]
        );
    }
    // Conformal edges never flip: consecutive EOL vertices along the line stay joined.
    let mut line: Vec<(f64, u32)> = eol.iter().map(|&i| (s.mesh.u[i][0], i as u32)).collect();
    line.sort_by(|a, b| a.0.total_cmp(&b.0));
    let es = s.mesh.edge_face_counts();
    for w in line.windows(2) {
        let (a, b) = (w[0].1, w[1].1);
        assert!(
            es.contains_key(&(a.min(b), a.max(b))),
            "no edge between EOL vertices {a} and {b}"
        );
    }
}

/// Spec §5.7 and §10 test 16: a Lagrangian vertex split next to an EOL
/// vertex takes the world velocity `ẋ − F Ẋ` of the face it is made in. The
/// sheet folded 90° at a line of EOL vertices whose `Ẋ` crosses the line:
/// the two sides' F map it to different world directions, so a world
/// velocity `w₀` of the whole sheet means `ẋ = w₀ + F_top Ẋ` seen from
/// the top. Every vertex made on the top side gets exactly `w₀`.
#[test]
fn a_split_next_to_an_eol_vertex_keeps_the_world_velocity_of_its_face() {
    let mut s = sheet(4, Some(0.25));
    let on: Vec<bool> = s.mesh.u.iter().map(|u| (u[1] - 0.25).abs() < 1e-12).collect();
    let edge = Feature::Edge {
        normals: [Vec3::new(0.0, 0.0, 1.0), Vec3::new(0.0, 1.0, 0.0)],
        tangent: Vec3::new(1.0, 0.0, 0.0),
        obstacle: 0,
    };
    s.features = on.iter().map(|&e| e.then_some(edge)).collect();
    s.mesh.eol = on;
    let w0 = Vec3::new(0.3, -0.2, 0.1);
    // Ẋ across the line (material +u₁): on the flat top F maps it to +y.
    for i in 0..s.mesh.x.len() {
        if s.mesh.eol[i] {
            s.ud[i] = [0.0, 0.05];
            s.xd[i] = w0 + Vec3::new(0.0, 0.05, 0.0);
        } else {
            s.xd[i] = w0;
        }
    }
    // The side's faces first: the first face around an EOL vertex is then
    // on the other side of the fold from the top (a wrong F would show).
    s.mesh.faces.reverse();
    let n0 = s.mesh.x.len();
    adapt(&mut s, &Sizing::default());
    let mut top = 0;
    for i in n0..s.mesh.x.len() {
        let u = s.mesh.u[i];
        if !s.mesh.eol[i] && u[1] < 0.25 - 1e-9 {
            assert!(
                (s.xd[i] - w0).norm() < 1e-12,
                "vertex {i} at {u:?}: ẋ {:?}",
                s.xd[i]
            );
            top += 1;
        }
    }
    assert!(top > 50, "only {top} new vertices on the top side");
}

/// Pinned (scripted) vertices are never collapsed away by the sizing
/// remesh: a fine sheet coarsened over three steps keeps its five pins.
/// A bad sizing set directly on the stepper is an error, not a panic.
#[test]
fn the_sizing_remesh_keeps_pinned_vertices() {
    use crate::eol::step::Pin;
    let mut s = sheet(40, None);
    s.params.gravity = Vec3::zero();
    s.sizing = Some(Sizing::default());
    s.remesh = true;
    let ids: Vec<u32> = vec![420, 700, 861, 1000, 1260];
    for &id in &ids {
        let i = s.vertex_of(id).unwrap();
        s.pins.push(Pin {
            id,
            target: s.mesh.x[i],
            velocity: Vec3::zero(),
        });
    }
    let faces0 = s.mesh.faces.len();
    for _ in 0..3 {
        s.step().unwrap();
    }
    assert!(
        s.mesh.faces.len() < faces0 * 2 / 3,
        "not coarsened: {} faces",
        s.mesh.faces.len()
    );
    for &id in &ids {
        assert!(s.vertex_of(id).is_some(), "pinned vertex {id} was collapsed away");
    }
    s.sizing = Some(Sizing {
        size_min: f64::NAN,
        ..Sizing::default()
    });
    assert!(matches!(s.step(), Err(crate::Error::InvalidInput(_))));
}

/// The counting-sort edge table is the one a comparison sort of the face
/// edges gives: the same edges in the same order, each with its faces in
/// index order, a border edge with one face; on a sheet whose faces and
/// vertices are shuffled (so the buckets are filled out of order), with a
/// fin (three faces on an edge: its first and last are kept), and on the
/// same sheet after a sizing remesh (vertices of every valence).
#[test]
fn the_edge_table_is_the_sorted_face_edges() {
    fn sorted(faces: &[[u32; 3]]) -> Vec<((u32, u32), [u32; 2])> {
        let mut all: Vec<((u32, u32), u32)> = Vec::new();
        for (fi, f) in faces.iter().enumerate() {
            for k in 0..3 {
                let (a, b) = (f[k], f[(k + 1) % 3]);
                all.push(((a.min(b), a.max(b)), fi as u32));
            }
        }
        all.sort();
        let mut out: Vec<((u32, u32), [u32; 2])> = Vec::new();
        for (e, fi) in all {
            match out.last_mut() {
                Some((last, fs)) if *last == e => fs[1] = fi,
                _ => out.push((e, [fi, u32::MAX])),
            }
        }
        out
    }
    let mut s = sheet(7, Some(0.2));
    let n = s.mesh.x.len() as u32;
    // A fixed shuffle: vertex k → (k·37 + 11) mod n (37 is prime to n = 64),
    // faces in reverse, each rotated by its index.
    assert_eq!(n, 64);
    let shuffled: Vec<[u32; 3]> = s
        .mesh
        .faces
        .iter()
        .rev()
        .enumerate()
        .map(|(i, f)| {
            let g = f.map(|k| (k * 37 + 11) % n);
            [g[i % 3], g[(i + 1) % 3], g[(i + 2) % 3]]
        })
        .collect();
    // A fin: a third face on an interior edge (the table keeps the edge's
    // first and last face, as the sort did).
    let mut fin = s.mesh.faces.clone();
    let (p, q) = (fin[20][0], fin[20][1]);
    fin.push([q, p, n]);
    let t = edge_table(&fin);
    let e = find_edge(&t, p, q).unwrap();
    assert!(t[e].1[0] < 20 && t[e].1[1] == fin.len() as u32 - 1, "{:?}", t[e]);
    assert_eq!(s.mesh.edge_face_counts().get(&(p.min(q), p.max(q))), Some(&2));
    for faces in [s.mesh.faces.clone(), shuffled, fin] {
        let t = edge_table(&faces);
        assert_eq!(t, sorted(&faces));
        assert!(
            t.iter().any(|(_, f)| f[1] == u32::MAX),
            "the border has one-face edges"
        );
        assert!(t.iter().any(|(_, f)| f[1] != u32::MAX));
    }
    let r = adapt(
        &mut s,
        &Sizing {
            size_min: 0.02,
            size_max: 0.05,
            ..Sizing::default()
        },
    );
    assert!(r.split > 0 && r.collapsed + r.flipped > 0, "{r:?}");
    assert_eq!(edge_table(&s.mesh.faces), sorted(&s.mesh.faces));
    assert_eq!(edge_table(&[]), Vec::new());
}
