//! Tests of the self-collision module: proximity pairs against hand-made
//! configurations and brute force, CCD and impact zones on crossing
//! configurations, and determinism across thread counts.

use super::*;
use crate::geometry::{SplitMix64, TriMesh, grid_mesh};

fn v(x: f64, y: f64, z: f64) -> Vec3<f64> {
    Vec3::new(x, y, z)
}

/// A mesh as positions, faces and unique edges.
struct Mesh {
    x: Vec<Vec3<f64>>,
    faces: Vec<[u32; 3]>,
    edges: Vec<[u32; 2]>,
}

impl Mesh {
    fn from_parts(x: Vec<Vec3<f64>>, faces: Vec<[u32; 3]>) -> Mesh {
        let m = TriMesh::from_u32_faces(x, faces).unwrap();
        Mesh {
            x: m.vertices().to_vec(),
            faces: m.faces().to_vec(),
            edges: m.topology().edges().to_vec(),
        }
    }

    /// A `res × res` grid of side `size` in the plane `z = z`, centred at
    /// `(cx, cy)`.
    fn grid(size: f64, res: usize, cx: f64, cy: f64, z: f64) -> Mesh {
        let m = grid_mesh((size, size), (res, res), v(cx, cy, z), 2).unwrap();
        Mesh::from_parts(m.vertices().to_vec(), m.faces().to_vec())
    }

    /// Two meshes as one.
    fn join(a: &Mesh, b: &Mesh) -> Mesh {
        let off = a.x.len() as u32;
        let x = a.x.iter().chain(&b.x).copied().collect();
        let faces = a
            .faces
            .iter()
            .copied()
            .chain(b.faces.iter().map(|f| f.map(|i| i + off)))
            .collect();
        Mesh::from_parts(x, faces)
    }

    fn collider(&self) -> SelfCollision {
        SelfCollision::new(self.x.len(), &self.faces, &self.edges)
    }
}

fn gap(p: &ProximityPair, x: &[Vec3<f64>]) -> f64 {
    (0..4)
        .map(|k| p.weights[k] * p.normal.dot(x[p.vertices[k] as usize]))
        .sum()
}

fn check_pair_invariants(pairs: &[ProximityPair], x: &[Vec3<f64>], d: f64) {
    for p in pairs {
        let s: f64 = p.weights.iter().sum();
        assert!(s.abs() < 1e-14, "{p:?}");
        assert!((p.normal.norm() - 1.0).abs() < 1e-12);
        assert!(p.distance >= 0.0 && p.distance < d);
        assert!((gap(p, x) - p.distance).abs() < 1e-12, "{p:?}: gap {}", gap(p, x));
        let vs = p.vertices;
        for i in 0..4 {
            for j in i + 1..4 {
                assert_ne!(vs[i], vs[j], "adjacent pair reported: {p:?}");
            }
        }
        assert!(p.area >= 0.0 && p.area.is_finite());
    }
}

#[test]
fn vertex_face_proximity_known_distance() {
    // Triangle in z = 0 and two free vertices, one above and one below.
    let x = vec![
        v(0.0, 0.0, 0.0),
        v(1.0, 0.0, 0.0),
        v(0.0, 1.0, 0.0),
        v(0.2, 0.3, 0.05),
        v(0.6, 0.1, -0.08),
        v(0.2, 0.3, 0.5),
        v(1.2, 1.2, 0.01),
    ];
    let faces = [[0, 1, 2]];
    let edges = [[0, 1], [1, 2], [0, 2]];
    let mut sc = SelfCollision::new(x.len(), &faces, &edges);
    let mut out = Vec::new();
    sc.proximity(&x, 0.1, &mut out);
    assert_eq!(out.len(), 2, "{out:?}");
    check_pair_invariants(&out, &x, 0.1);
    let (a, b) = (&out[0], &out[1]);
    assert_eq!((a.kind, a.vertices), (PairKind::VertexFace, [3, 0, 1, 2]));
    assert!((a.distance - 0.05).abs() < 1e-15);
    let want = [1.0, -0.5, -0.2, -0.3];
    for (w, want) in a.weights.iter().zip(want) {
        assert!((w - want).abs() < 1e-14, "{:?}", a.weights);
    }
    assert!((a.normal - v(0.0, 0.0, 1.0)).norm() < 1e-15);
    // Below the face: the normal points down, toward the vertex.
    assert_eq!(b.vertices, [4, 0, 1, 2]);
    assert!((b.distance - 0.08).abs() < 1e-15);
    assert!((b.normal - v(0.0, 0.0, -1.0)).norm() < 1e-15);
    // Area weight: min(vertex area, face area); free vertices own nothing.
    assert_eq!(a.area, 0.0);
    // Vertex 6 is close to the plane but projects outside the face.
    assert!(out.iter().all(|p| p.vertices[0] != 6));
}

#[test]
fn edge_edge_proximity_known_distance() {
    // Two free edges crossing at a right angle, 0.1 apart.
    let x = vec![
        v(-1.0, 0.3, 0.1),
        v(3.0, 0.3, 0.1),
        v(0.0, -1.0, 0.0),
        v(0.0, 1.0, 0.0),
    ];
    let edges = [[0, 1], [2, 3]];
    let mut sc = SelfCollision::new(4, &[], &edges);
    let mut out = Vec::new();
    sc.proximity(&x, 0.2, &mut out);
    assert_eq!(out.len(), 1);
    check_pair_invariants(&out, &x, 0.2);
    let p = &out[0];
    assert_eq!((p.kind, p.vertices), (PairKind::EdgeEdge, [0, 1, 2, 3]));
    assert!((p.distance - 0.1).abs() < 1e-14);
    let want = [0.75, 0.25, -0.35, -0.65];
    for (w, want) in p.weights.iter().zip(want) {
        assert!((w - want).abs() < 1e-14, "{:?}", p.weights);
    }
    assert!((p.normal - v(0.0, 0.0, 1.0)).norm() < 1e-14);
    sc.proximity(&x, 0.05, &mut out);
    assert!(out.is_empty());
    // Closest points of the lines outside a segment: no pair.
    let far = vec![v(0.5, 0.3, 0.1), v(3.0, 0.3, 0.1), x[2], x[3]];
    sc.proximity(&far, 0.2, &mut out);
    assert!(out.is_empty());
}

#[test]
fn edge_edge_proximity_respects_wedges() {
    // Lower tent: ridge (0,1) along x at z = 0, its faces hang down.
    // Upper tent: ridge (4,5) along y at z = 0.1; its faces rise (`up`) or
    // hang down over the lower ridge (`!up`).
    for up in [true, false] {
        let s = if up { 1.0 } else { -1.0 };
        let x = vec![
            v(-1.0, 0.0, 0.0),
            v(1.0, 0.0, 0.0),
            v(0.0, -1.0, -0.5),
            v(0.0, 1.0, -0.5),
            v(0.0, -1.0, 0.1),
            v(0.0, 1.0, 0.1),
            v(-1.0, 0.0, 0.1 + 0.5 * s),
            v(1.0, 0.0, 0.1 + 0.5 * s),
        ];
        let m = Mesh::from_parts(x, vec![[0, 1, 3], [1, 0, 2], [4, 5, 6], [5, 4, 7]]);
        let mut sc = m.collider();
        let mut out = Vec::new();
        sc.proximity(&m.x, 0.2, &mut out);
        check_pair_invariants(&out, &m.x, 0.2);
        let ridge = out
            .iter()
            .find(|p| p.kind == PairKind::EdgeEdge && p.vertices == [0, 1, 4, 5]);
        if up {
            let p = ridge.expect("ridge pair");
            assert!((p.distance - 0.1).abs() < 1e-14);
            assert!((p.normal - v(0.0, 0.0, -1.0)).norm() < 1e-14, "{p:?}");
        } else {
            // The upper faces lie on the lower ridge's side: the closest
            // point is not in the upper ridge's wedge.
            assert!(ridge.is_none(), "{out:?}");
        }
    }
}

#[test]
fn proximity_excludes_own_neighbours_of_flat_and_curved_sheets() {
    // A flat sheet and a gently curved one produce no pairs even with `d`
    // four edge lengths wide.
    for curve in [0.0, 4.0] {
        let mut m = Mesh::grid(1.0, 20, 0.0, 0.0, 0.0);
        for p in m.x.iter_mut() {
            p.z = curve * 0.1 * (p.x * p.x + 0.5 * p.y * p.y);
        }
        let mut sc = m.collider();
        let mut out = Vec::new();
        sc.proximity(&m.x, 0.2, &mut out);
        assert!(
            out.is_empty(),
            "curve {curve}: {} pairs, e.g. {:?}",
            out.len(),
            out.first()
        );
    }
}

#[test]
fn pairs_sharing_a_vertex_are_excluded() {
    // Two triangles sharing only vertex 0, folded to lie 1 mm apart: pairs
    // across the fold are reported (vertex 1 over the upper face), none
    // with a vertex on both sides (edges through vertex 0).
    let x = vec![
        v(0.0, 0.0, 0.0),
        v(1.0, 0.0, 0.0),
        v(0.0, 1.0, 0.0),
        v(1.2, -0.1, 0.001),
        v(-0.1, 1.2, 0.001),
    ];
    let m = Mesh::from_parts(x, vec![[0, 1, 2], [0, 3, 4]]);
    let mut sc = m.collider();
    let mut out = Vec::new();
    sc.proximity(&m.x, 0.01, &mut out);
    check_pair_invariants(&out, &m.x, 0.01);
    assert!(out.iter().any(|p| p.vertices == [1, 0, 3, 4]), "{out:?}");
    assert!(
        out.iter()
            .all(|p| p.kind == PairKind::VertexFace || !p.vertices.contains(&0))
    );
}

#[test]
fn ccd_degenerate_motions() {
    let tol = 1e-9;
    // Parallel edges passing through each other: the coplanarity cubic is
    // zero for all t; the closest-approach candidate finds the contact.
    let hit = ccd::edge_edge(
        v(0.0, 0.0, 0.1),
        v(1.0, 0.0, 0.1),
        v(0.2, 0.0, 0.0),
        v(1.2, 0.0, 0.0),
        v(0.0, 0.0, -0.1),
        v(1.0, 0.0, -0.1),
        v(0.2, 0.0, 0.0),
        v(1.2, 0.0, 0.0),
        tol,
    )
    .expect("parallel crossing");
    assert!((hit.t - 0.5).abs() < 1e-12);
    assert!(hit.normal.z > 0.99, "{hit:?}");
    // A vertex sliding through a triangle within its plane.
    let (a, b, c) = (v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(0.0, 1.0, 0.0));
    let hit = ccd::vertex_face(v(-0.5, 0.2, 0.0), a, b, c, v(1.5, 0.2, 0.0), a, b, c, tol);
    assert!(hit.is_some());
    // Ending exactly on the face, and grazing it (a double root).
    assert!(ccd::vertex_face(v(0.2, 0.2, 0.1), a, b, c, v(0.2, 0.2, 0.0), a, b, c, tol).is_some());
    let graze = |h: f64| {
        // The triangle tilts down and back up while the vertex stays put:
        // its plane passes the vertex at height h above the face centre.
        let up = v(0.0, 0.0, 2.0 * h);
        ccd::vertex_face(
            v(0.2, 0.2, h),
            a,
            b,
            c,
            v(0.2, 0.2, h),
            a + up,
            b + up,
            c + up,
            tol,
        )
    };
    assert!(graze(0.05).is_some());
    // A vertex passing beside the triangle is not a collision.
    assert!(ccd::vertex_face(v(1.2, 1.2, 0.1), a, b, c, v(1.2, 1.2, -0.1), a, b, c, tol).is_none());
    // Weights and normal of an ordinary hit.
    let hit = ccd::vertex_face(v(0.2, 0.3, 0.1), a, b, c, v(0.2, 0.3, -0.1), a, b, c, tol).unwrap();
    assert!((hit.t - 0.5).abs() < 1e-12);
    let want = [1.0, -0.5, -0.2, -0.3];
    for (w, want) in hit.weights.iter().zip(want) {
        assert!((w - want).abs() < 1e-12, "{hit:?}");
    }
    assert_eq!(hit.normal, v(0.0, 0.0, 1.0));
}

/// All pairs by the documented rules, without any broad phase.
fn brute_proximity(m: &Mesh, x: &[Vec3<f64>], d: f64) -> Vec<(PairKind, [u32; 4])> {
    let sc = m.collider();
    let mut out = Vec::new();
    for p in 0..x.len() as u32 {
        for f in &m.faces {
            if f.contains(&p) {
                continue;
            }
            if vf_proximity(
                x[p as usize],
                x[f[0] as usize],
                x[f[1] as usize],
                x[f[2] as usize],
                d,
            )
            .is_some()
            {
                out.push((PairKind::VertexFace, [p, f[0], f[1], f[2]]));
            }
        }
    }
    for e in 0..m.edges.len() {
        for g in e + 1..m.edges.len() {
            if sc.topo.edges_share(e, g) {
                continue;
            }
            let [a, b] = m.edges[e].map(|i| x[i as usize]);
            let [c, dd] = m.edges[g].map(|i| x[i as usize]);
            if let Some(near) = ee_proximity(a, b, c, dd, d)
                && in_wedge(&sc.topo, x, e, near.normal)
                && in_wedge(&sc.topo, x, g, -near.normal)
            {
                let [a0, a1] = m.edges[e];
                let [b0, b1] = m.edges[g];
                out.push((PairKind::EdgeEdge, [a0, a1, b0, b1]));
            }
        }
    }
    out.sort_by_key(|p| (p.0 == PairKind::EdgeEdge, p.1));
    out
}

/// A crumpled sheet: random jitter steps, each resolved.
fn crumpled(res: usize, steps: usize, seed: u64) -> (Mesh, Vec<Vec3<f64>>) {
    let m = Mesh::grid(1.0, res, 0.0, 0.0, 0.0);
    let h = 1.0 / res as f64;
    let mut sc = m.collider();
    let inv_mass = vec![1.0; m.x.len()];
    let mut rng = SplitMix64::new(seed);
    let mut x0 = m.x.clone();
    for _ in 0..steps {
        let mut x1: Vec<_> = x0
            .iter()
            .map(|p| *p + v(rng.next_f64() - 0.5, rng.next_f64() - 0.5, rng.next_f64() - 0.5) * h)
            .collect();
        sc.resolve(&x0, &mut x1, &inv_mass, 0.01 * h).unwrap();
        x0 = x1;
    }
    (m, x0)
}

#[test]
fn proximity_matches_brute_force_on_crumpled_sheet() {
    let (m, x) = crumpled(14, 40, 5);
    let h = 1.0 / 14.0;
    let mut sc = m.collider();
    let mut out = Vec::new();
    for d in [0.3 * h, h, 3.0 * h] {
        sc.proximity(&x, d, &mut out);
        check_pair_invariants(&out, &x, d);
        let got: Vec<_> = out.iter().map(|p| (p.kind, p.vertices)).collect();
        let want = brute_proximity(&m, &x, d);
        assert_eq!(got, want, "d = {d}");
        assert!(!want.is_empty());
    }
}

/// Crossings along `x0 → x1` by testing every non-adjacent pair (no broad
/// phase) with a contact tolerance far below the one `resolve` uses.
fn brute_crossings(m: &Mesh, x0: &[Vec3<f64>], x1: &[Vec3<f64>]) -> usize {
    let tol = 1e-10;
    let sweep = |vs: &[u32]| {
        vs.iter()
            .fold(Aabb::empty(), |b, &i| b.grow(x0[i as usize]).grow(x1[i as usize]))
            .padded(tol)
    };
    let vboxes: Vec<Aabb> = (0..x0.len() as u32).map(|i| sweep(&[i])).collect();
    let fboxes: Vec<Aabb> = m.faces.iter().map(|f| sweep(f)).collect();
    let eboxes: Vec<Aabb> = m.edges.iter().map(|e| sweep(e)).collect();
    let mut count = 0;
    for p in 0..x0.len() {
        for (fi, f) in m.faces.iter().enumerate() {
            if f.contains(&(p as u32)) || !vboxes[p].overlaps(&fboxes[fi]) {
                continue;
            }
            let [a, b, c] = f.map(|i| i as usize);
            let hit = ccd::vertex_face(x0[p], x0[a], x0[b], x0[c], x1[p], x1[a], x1[b], x1[c], tol);
            count += hit.is_some() as usize;
        }
    }
    for e in 0..m.edges.len() {
        for g in e + 1..m.edges.len() {
            let [a, b] = m.edges[e].map(|i| i as usize);
            let [c, d] = m.edges[g].map(|i| i as usize);
            if a == c || a == d || b == c || b == d || !eboxes[e].overlaps(&eboxes[g]) {
                continue;
            }
            let hit = ccd::edge_edge(x0[a], x0[b], x0[c], x0[d], x1[a], x1[b], x1[c], x1[d], tol);
            count += hit.is_some() as usize;
        }
    }
    count
}

#[test]
fn vertex_through_triangle_is_stopped() {
    let faces = [[0, 1, 2]];
    let edges = [[0, 1], [1, 2], [0, 2]];
    let x0 = vec![
        v(0.0, 0.0, 0.0),
        v(1.0, 0.0, 0.0),
        v(0.0, 1.0, 0.0),
        v(0.2, 0.3, 0.1),
    ];
    let mut x1 = x0.clone();
    x1[3] = v(0.25, 0.3, -0.1);
    let m = Mesh {
        x: x0.clone(),
        faces: faces.to_vec(),
        edges: edges.to_vec(),
    };
    assert_eq!(brute_crossings(&m, &x0, &x1), 1);
    // Free triangle, and a fixed one (the vertex alone must give way).
    for fixed in [false, true] {
        let inv_mass = if fixed {
            vec![0.0, 0.0, 0.0, 1.0]
        } else {
            vec![1.0; 4]
        };
        let mut y = x1.clone();
        let mut sc = SelfCollision::new(4, &faces, &edges);
        let stats = sc.resolve(&x0, &mut y, &inv_mass, 0.01).unwrap();
        assert_eq!(stats.collisions, 1);
        assert_eq!(brute_crossings(&m, &x0, &y), 0);
        let n = (y[1] - y[0]).cross(y[2] - y[0]).normalize_or_zero();
        let h = n.dot(y[3] - y[0]);
        assert!(h >= 0.01 - 1e-12, "vertex ends {h} above the face");
        // Momentum is conserved by the projection.
        let p0: Vec3<f64> = (0..4).map(|i| x1[i] - x0[i]).fold(Vec3::zero(), |a, b| a + b);
        let p1: Vec3<f64> = (0..4).map(|i| y[i] - x0[i]).fold(Vec3::zero(), |a, b| a + b);
        if !fixed {
            assert!((p0 - p1).norm() < 1e-15);
        } else {
            assert_eq!(&y[..3], &x0[..3]);
        }
    }
}

#[test]
fn crossing_edges_are_stopped() {
    let edges = [[0, 1], [2, 3]];
    let x0 = vec![
        v(-1.0, 0.1, 0.1),
        v(1.0, 0.2, 0.1),
        v(0.0, -1.0, 0.0),
        v(0.1, 1.0, 0.0),
    ];
    let mut x1 = x0.clone();
    x1[0].z = -0.2;
    x1[1].z = -0.1;
    x1[2].z = 0.05;
    let m = Mesh {
        x: x0.clone(),
        faces: vec![],
        edges: edges.to_vec(),
    };
    assert_eq!(brute_crossings(&m, &x0, &x1), 1);
    let mut sc = SelfCollision::new(4, &[], &edges);
    let stats = sc.resolve(&x0, &mut x1, &[1.0; 4], 1e-3).unwrap();
    assert_eq!(stats.collisions, 1);
    assert_eq!(brute_crossings(&m, &x0, &x1), 0);
    // Edge (0,1) still passes above edge (2,3) where they cross in plan.
    let (s, t) = geom::closest_on_segments(x1[0], x1[1], x1[2], x1[3]);
    let d = (x1[0] + (x1[1] - x1[0]) * s) - (x1[2] + (x1[3] - x1[2]) * t);
    assert!(d.z > 0.0, "{d:?}");
}

/// A 20×20 sheet 0.6 m wide, tilted, falling partly through a 1 m sheet in
/// one step.
fn falling_sheets() -> (Mesh, Vec<Vec3<f64>>) {
    let bottom = Mesh::grid(1.0, 20, 0.0, 0.0, 0.0);
    let mut top = Mesh::grid(0.6, 20, 0.013, 0.007, 0.032);
    // A slight tilt and twist so nothing is exactly aligned.
    for p in top.x.iter_mut() {
        let (x, y) = (p.x, p.y);
        p.x = x * 0.999 - y * 0.04;
        p.y = y * 0.999 + x * 0.04;
        p.z += 0.1 * x;
    }
    let m = Mesh::join(&bottom, &top);
    let nb = bottom.x.len();
    let x1 =
        m.x.iter()
            .enumerate()
            .map(|(i, p)| {
                if i >= nb {
                    *p + v(0.003, -0.002, -0.035)
                } else {
                    *p
                }
            })
            .collect();
    (m, x1)
}

#[test]
fn sheet_falling_through_sheet_is_stopped() {
    let (m, x1) = falling_sheets();
    let x0 = m.x.clone();
    assert_eq!(count_triangle_intersections(&x0, &m.faces), 0);
    assert!(count_triangle_intersections(&x1, &m.faces) > 0);
    assert!(brute_crossings(&m, &x0, &x1) > 0);
    let mut sc = m.collider();
    let mut y = x1.clone();
    let stats = sc.resolve(&x0, &mut y, &vec![1.0; x0.len()], 0.002).unwrap();
    assert!(stats.collisions > 0);
    assert_eq!(sc.count_intersections(&y), 0);
    assert_eq!(count_triangle_intersections(&y, &m.faces), 0);
    assert_eq!(brute_crossings(&m, &x0, &y), 0, "{stats:?}");
}

#[test]
fn impact_zones_alone_stop_the_falling_sheet() {
    let (m, x1) = falling_sheets();
    let x0 = m.x.clone();
    let inv_mass: Vec<f64> = (0..x0.len()).map(|i| 0.5 + (i % 4) as f64).collect();
    let mut sc = m.collider();
    sc.projection_rounds = 0;
    let mut y = x1.clone();
    let stats = sc.resolve(&x0, &mut y, &inv_mass, 0.002).unwrap();
    assert!(
        stats.collisions > 0 && stats.zones > 0 && stats.largest_zone > 4,
        "{stats:?}"
    );
    assert_eq!(sc.count_intersections(&y), 0);
    assert_eq!(brute_crossings(&m, &x0, &y), 0);
    // Zones keep the linear momentum of their members; the rest is untouched.
    let momentum =
        |x: &[Vec3<f64>]| (0..x.len()).fold(Vec3::zero(), |s, i| s + (x[i] - x0[i]) * (1.0 / inv_mass[i]));
    assert!(
        (momentum(&y) - momentum(&x1)).norm() < 1e-12,
        "{:?}",
        momentum(&y) - momentum(&x1)
    );
}

#[test]
fn fixed_vertices_do_not_move() {
    let (m, x1) = falling_sheets();
    let x0 = m.x.clone();
    let nb = 21 * 21;
    // The whole bottom sheet is pinned, plus one vertex of the top sheet.
    let mut inv_mass = vec![1.0; x0.len()];
    inv_mass[..nb].iter_mut().for_each(|w| *w = 0.0);
    inv_mass[nb + 7] = 0.0;
    let mut y = x1.clone();
    y[nb + 7] = x0[nb + 7];
    let mut sc = m.collider();
    sc.resolve(&x0, &mut y, &inv_mass, 0.002).unwrap();
    for i in 0..x0.len() {
        if inv_mass[i] == 0.0 {
            assert_eq!(y[i], x0[i], "fixed vertex {i} moved");
        }
    }
    assert_eq!(sc.count_intersections(&y), 0);
    assert_eq!(brute_crossings(&m, &x0, &y), 0);
}

#[test]
fn crumpling_stress_keeps_the_sheet_intersection_free() {
    let res = 16;
    let m = Mesh::grid(1.0, res, 0.0, 0.0, 0.0);
    let h = 1.0 / res as f64;
    let mut sc = m.collider();
    let inv_mass: Vec<f64> = (0..m.x.len()).map(|i| 1.0 + (i % 3) as f64).collect();
    let mut rng = SplitMix64::new(11);
    let mut x0 = m.x.clone();
    let (mut collisions, mut zone_steps) = (0, 0);
    for step in 0..150 {
        let mut x1: Vec<_> = x0
            .iter()
            .map(|p| *p + v(rng.next_f64() - 0.5, rng.next_f64() - 0.5, rng.next_f64() - 0.5) * h)
            .collect();
        let stats = sc.resolve(&x0, &mut x1, &inv_mass, 0.02 * h).unwrap();
        collisions += stats.collisions;
        zone_steps += (stats.zones > 0) as usize;
        assert_eq!(sc.count_intersections(&x1), 0, "step {step}: {stats:?}");
        if step % 25 == 0 {
            assert_eq!(brute_crossings(&m, &x0, &x1), 0, "step {step}");
        }
        x0 = x1;
    }
    assert!(collisions > 100, "{collisions}");
    assert!(zone_steps > 0);
}

#[test]
fn intersection_count_basics() {
    // Two triangles piercing each other.
    let x = vec![
        v(0.0, 0.0, 0.0),
        v(1.0, 0.0, 0.0),
        v(0.0, 1.0, 0.0),
        v(0.2, 0.2, -0.5),
        v(0.3, 0.2, 0.5),
        v(0.25, 0.9, 0.0),
    ];
    assert_eq!(count_triangle_intersections(&x, &[[0, 1, 2], [3, 4, 5]]), 1);
    // Moved apart: none.
    let apart: Vec<_> = x
        .iter()
        .enumerate()
        .map(|(i, p)| if i >= 3 { *p + v(2.0, 0.0, 0.0) } else { *p })
        .collect();
    assert_eq!(count_triangle_intersections(&apart, &[[0, 1, 2], [3, 4, 5]]), 0);
    let g = Mesh::grid(1.0, 12, 0.0, 0.0, 0.0);
    assert_eq!(count_triangle_intersections(&g.x, &g.faces), 0);
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let (m, x) = crumpled(12, 20, 3);
    let (_, x1) = falling_sheets();
    let (m2, _) = falling_sheets();
    let a = crate::test_util::same_across_threads(|| {
        let mut sc = m.collider();
        let mut out = Vec::new();
        sc.proximity(&x, 0.2, &mut out);
        let prox: Vec<_> = out
            .iter()
            .map(|p| {
                (
                    p.vertices,
                    p.weights.map(f64::to_bits),
                    p.normal.to_array().map(f64::to_bits),
                    p.distance.to_bits(),
                    p.area.to_bits(),
                )
            })
            .collect();
        let mut sc2 = m2.collider();
        let mut y = x1.clone();
        let stats = sc2.resolve(&m2.x, &mut y, &vec![1.0; m2.x.len()], 0.002).unwrap();
        let y: Vec<_> = y.iter().map(|p| p.to_array().map(f64::to_bits)).collect();
        (prox, y, format!("{stats:?}"), sc.count_intersections(&x))
    });
    assert!(!a.0.is_empty());
}

/// Timing on the spec's container-scene scale (`cargo test --release --
/// --ignored --nocapture selfcollide::tests::timing`): a 141×141 sheet
/// (19,881 vertices, 39,200 triangles, 2.5 mm spacing) pleated into a stack
/// of tilted, rippled layers 4 mm apart, proximity at `2 d_rep = 1 cm`, then a resolve with
/// small motions (few collisions) at `d_col = 1 mm`.
#[test]
#[ignore]
fn timing_20k() {
    let res = 140;
    let h = 0.0025;
    let size = h * res as f64;
    let flat = Mesh::grid(size, res, 0.0, 0.0, 0.0);
    // Pleat along x: straight runs of `run` metres joined by half-turns of
    // radius `gap/2`, so consecutive layers are `gap` apart.
    let (run, gap) = (0.05, 0.004);
    let turn = core::f64::consts::PI * gap * 0.5;
    let period = run + turn;
    let pleat = |u: f64| {
        let k = (u / period).floor();
        let r = u - k * period;
        let dir = if k as i64 % 2 == 0 { 1.0 } else { -1.0 };
        let x_start = if dir > 0.0 { 0.0 } else { run };
        let z = k * gap;
        if r < run {
            (x_start + dir * r, z)
        } else {
            let a = (r - run) / (gap * 0.5);
            let cx = if dir > 0.0 { run } else { 0.0 };
            (cx + dir * (gap * 0.5) * a.sin(), z + gap * 0.5 * (1.0 - a.cos()))
        }
    };
    // Ripples of 0.3 mm (so no edge is exactly flat) and a tilt (so faces
    // are not axis-aligned, as in a crumpled sheet).
    let rot = crate::math::Mat3::from_axis_angle(v(1.0, 2.0, 3.0).normalize_or_zero(), 0.6);
    let x0: Vec<_> = flat
        .x
        .iter()
        .map(|p| {
            let (px, pz) = pleat(p.x + 0.5 * size);
            let ripple = 3e-4
                * (p.x * 2.0 * core::f64::consts::PI / 0.013).sin()
                * (p.y * 2.0 * core::f64::consts::PI / 0.017).sin();
            rot * v(px, p.y, pz + ripple)
        })
        .collect();
    assert_eq!(count_triangle_intersections(&x0, &flat.faces), 0);
    let mut rng = SplitMix64::new(1);
    let inv_mass = vec![1.0; x0.len()];
    // Gravity-like drift plus noise: 0.5 mm and 0.1 mm per step.
    let motion: Vec<_> = (0..x0.len())
        .map(|_| {
            v(rng.next_f64() - 0.5, rng.next_f64() - 0.5, rng.next_f64() - 0.5) * 2e-4 + v(0.0, 0.0, -5e-4)
        })
        .collect();
    let x1: Vec<_> = x0.iter().zip(&motion).map(|(a, b)| *a + *b).collect();
    // CPU time of all threads of the process (Linux), which the load of
    // other processes on a shared machine does not inflate the way it
    // inflates wall time.
    let cpu_ms = || -> f64 {
        let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
            return f64::NAN;
        };
        dir.filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
            .filter_map(|s| s.split_whitespace().next()?.parse::<f64>().ok())
            .sum::<f64>()
            * 1e-6
    };
    // Best of 5 (wall ms, CPU ms).
    let best = |f: &mut dyn FnMut()| {
        (0..5)
            .map(|_| {
                let (t, c) = (std::time::Instant::now(), cpu_ms());
                f();
                (t.elapsed().as_secs_f64() * 1e3, cpu_ms() - c)
            })
            .fold((f64::INFINITY, f64::INFINITY), |a, b| {
                (a.0.min(b.0), a.1.min(b.1))
            })
    };
    for threads in [2, 1] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut sc = flat.collider();
            let mut out = Vec::new();
            let t = std::time::Instant::now();
            sc.proximity(&x0, 0.01, &mut out);
            let first = t.elapsed().as_secs_f64() * 1e3;
            for d in [0.01, 0.005] {
                let (ms, cpu) = best(&mut || sc.proximity(&x0, d, &mut out));
                println!(
                    "{threads} threads: proximity(d = {d}) {ms:.1} ms (CPU {cpu:.1} ms), {} pairs",
                    out.len()
                );
            }
            let mut stats = ResolveStats::default();
            let (ms, cpu) = best(&mut || {
                let mut y = x1.clone();
                stats = sc.resolve(&x0, &mut y, &inv_mass, 0.001).unwrap();
            });
            println!("{threads} threads: resolve {ms:.1} ms (CPU {cpu:.1} ms), {stats:?}");
            println!("{threads} threads: first proximity call (builds the hierarchies) {first:.1} ms");
            let (ms, cpu) = best(&mut || {
                sc.count_intersections(&x0);
            });
            println!("{threads} threads: count_intersections {ms:.1} ms (CPU {cpu:.1} ms)");
        });
    }
}
