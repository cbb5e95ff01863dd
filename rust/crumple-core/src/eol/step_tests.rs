//! The EOL step on a strip hanging over a static box edge: spec eol_cloth
//! §10 test 18 (EOL vertices stay on the edge line), §10 test 10 every step,
//! test 14 (the material area is kept),
//! and the analytic cross-check E0 (a chain sliding off a frictionless
//! table: ℓ(t) = ℓ₀ cosh(√(g/L) t)).

use super::*;
use crate::cloth::membrane::MembraneStiffness;
use crate::eol::system::Mesh;
use crate::geometry::grid_mesh;

/// A strip 0.1 m × 1 m (material u × v) whose row v = `fold` lies on the
/// edge of a box along world x at y = z = 0: v < fold on the top face
/// (z = 0), the rest hanging down the side face (y = 0). The row on the
/// edge is EOL with the edge as its feature.
fn strip(fold: f64, rows: usize) -> Stepper {
    let m = grid_mesh((0.1, 1.0), (2, rows), Vec3::new(0.05, 0.5, 0.0), 2).unwrap();
    let u: Vec<Mat2d> = m.vertices().iter().map(|v| [v.x, v.y]).collect();
    let on_line = |p: &Mat2d| (p[1] - fold).abs() < 1e-9;
    let x = u
        .iter()
        .map(|p| {
            if on_line(p) {
                Vec3::new(p[0], 0.0, 0.0)
            } else if p[1] < fold {
                Vec3::new(p[0], p[1] - fold, 0.0)
            } else {
                Vec3::new(p[0], 0.0, fold - p[1])
            }
        })
        .collect::<Vec<_>>();
    let eol: Vec<bool> = u.iter().map(on_line).collect();
    assert_eq!(
        eol.iter().filter(|e| **e).count(),
        3,
        "the fold must be a mesh row"
    );
    let edge = Feature::Edge {
        normals: [Vec3::new(0.0, 0.0, 1.0), Vec3::new(0.0, 1.0, 0.0)],
        tangent: Vec3::new(1.0, 0.0, 0.0),
    };
    let n = x.len();
    Stepper {
        features: eol.iter().map(|e| e.then_some(edge)).collect(),
        mesh: Mesh {
            x,
            u,
            faces: m.faces().to_vec(),
            hinges: m.topology().hinges().to_vec(),
            eol,
        },
        xd: vec![Vec3::zero(); n],
        ud: vec![[0.0; 2]; n],
        params: ClothParams {
            density: 0.05,
            membrane: MembraneStiffness {
                k11: 2000.0,
                k22: 2000.0,
                k12: 0.0,
                k33: 500.0,
            },
            bending: 1e-7,
            gravity: Vec3::new(0.0, 0.0, -9.8),
        },
        h: 1e-3,
        boxes: vec![BoxObstacle {
            center: Vec3::new(0.05, -1.0, -1.0),
            half: Vec3::new(1.0, 1.0, 1.0),
        }],
        thr: 5e-3,
        pins: Vec::new(),
        time: 0.0,
    }
}

/// The material length hanging below the edge: 1 − v of the EOL row.
fn hanging(s: &Stepper) -> f64 {
    let eol: Vec<usize> = (0..s.mesh.x.len()).filter(|&i| s.mesh.eol[i]).collect();
    1.0 - eol.iter().map(|&i| s.mesh.u[i][1]).sum::<f64>() / eol.len() as f64
}

/// Tests 10 and 18 and E0: the strip slides off the table as a chain does,
/// its EOL vertices on the edge line, every QP's KKT residuals in bounds.
#[test]
fn e0_a_strip_slides_off_the_edge_like_a_chain() {
    let mut s = strip(0.7, 20);
    let l0 = hanging(&s);
    assert!((l0 - 0.3).abs() < 1e-9);
    let steps = 100;
    let mut worst_off = 0.0f64;
    for _ in 0..steps {
        let r = s.step().unwrap();
        assert!(r.kkt.ok(), "t = {}: {:?}", s.time, r.kkt);
        for i in (0..s.mesh.x.len()).filter(|&i| s.mesh.eol[i]) {
            let x = s.mesh.x[i];
            worst_off = worst_off.max(x.y.abs().max(x.z.abs()));
        }
    }
    assert!(
        worst_off <= 1e-9,
        "an EOL vertex left the edge line by {worst_off:e} m"
    );
    // Test 14: the material domain keeps its area (0.1 m²), every triangle
    // counter-clockwise with positive area, though the EOL row moved in it.
    let mut area = 0.0;
    for f in &s.mesh.faces {
        let [a, b, c] = f.map(|k| s.mesh.u[k as usize]);
        let signed = 0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1]));
        assert!(signed > 0.0, "a face turned over in material space");
        area += signed;
    }
    assert!((area - 0.1).abs() <= 1e-10 * 0.1, "material area {area}");
    let l = hanging(&s);
    let want = l0 * (9.8f64.sqrt() * s.time).cosh();
    eprintln!(
        "E0: hanging {l0} → {l:.6} m in {:.3} s, chain {want:.6} m",
        s.time
    );
    assert!(l > l0, "no material crossed the edge");
    let err = ((l - l0) - (want - l0)).abs() / (want - l0);
    assert!(
        err < 0.1,
        "slid {:.6} m, a chain {:.6} m ({:.1} % off)",
        l - l0,
        want - l0,
        100.0 * err
    );
    // The material crossed the edge while the EOL vertices' world positions
    // stayed on it: their material velocity carries the flow.
    let ud = (0..s.mesh.x.len())
        .filter(|&i| s.mesh.eol[i])
        .map(|i| s.ud[i][1])
        .fold(0.0, f64::min);
    assert!(ud < 0.0, "Ẋ_v of the EOL row: {ud}");
}
