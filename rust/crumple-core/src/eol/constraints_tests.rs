//! Spec eol_cloth §10 test 12 (strict convexity on the feasible face) and
//! test 19 (constraint geometry).

use nalgebra::{DMatrix, SymmetricEigen};

use super::*;
use crate::eol::system::{Mesh, assemble, test_params};
use crate::geometry::grid_mesh;

const RES: usize = 6;

/// A 1 m sheet in material space whose row v = 0.5 lies on a box edge along
/// world x: the part v < 0.5 on the top face (z = 0, y < 0), the rest
/// hanging down the side face (y = 0, z < 0); `folded = false` keeps it
/// flat on the top plane. The row on the edge is EOL.
fn fold(folded: bool) -> (Mesh, Vec<usize>) {
    let m = grid_mesh((1.0, 1.0), (RES, RES), Vec3::new(0.5, 0.5, 0.0), 2).unwrap();
    let u: Vec<Mat2d> = m.vertices().iter().map(|v| [v.x, v.y]).collect();
    let x = u
        .iter()
        .map(|p| {
            if p[1] <= 0.5 || !folded {
                Vec3::new(p[0], p[1] - 0.5, 0.0)
            } else {
                Vec3::new(p[0], 0.0, 0.5 - p[1])
            }
        })
        .collect();
    let line: Vec<usize> = (0..u.len()).filter(|&i| (u[i][1] - 0.5).abs() < 1e-12).collect();
    let eol = (0..u.len())
        .map(|i| line.contains(&i) && u[i][0] > 1e-9 && u[i][0] < 1.0 - 1e-9)
        .collect();
    let mesh = Mesh {
        x,
        u,
        faces: m.faces().to_vec(),
        hinges: m.topology().hinges().to_vec(),
        eol,
    };
    let line = line.into_iter().filter(|&i| mesh.eol[i]).collect();
    (mesh, line)
}

/// λ_min of M̃ restricted to the null space of `rows` (dense, small).
fn min_eig_on(lhs: &DMatrix<f64>, rows: &DMatrix<f64>) -> f64 {
    let n = lhs.ncols();
    // Null space of the rows: eigenvectors of RᵀR with zero eigenvalue.
    let rtr = rows.transpose() * rows;
    let e = SymmetricEigen::new(rtr);
    let cols: Vec<_> = (0..n)
        .filter(|&k| e.eigenvalues[k].abs() < 1e-10)
        .map(|k| e.eigenvectors.column(k).into_owned())
        .collect();
    let z = DMatrix::from_columns(&cols);
    let r = z.transpose() * lhs * &z;
    SymmetricEigen::new(r).eigenvalues.min()
}

fn dense(m: &Csc) -> DMatrix<f64> {
    let d = m.to_dense();
    DMatrix::from_fn(m.rows, m.cols, |r, c| d[r][c])
}

/// Test 12: with the edge, flat-edge, corner and flat-corner rows active,
/// M̃ is positive definite on what they leave free; without the Eulerian
/// rows it is not (the fold-tangent null direction of §3.3.3).
#[test]
fn t12_strict_convexity_on_the_active_face() {
    let x_axis = Vec3::new(1.0, 0.0, 0.0);
    let (top, side) = (Vec3::new(0.0, 0.0, 1.0), Vec3::new(0.0, 1.0, 0.0));
    for (name, folded, corner, flat) in [
        ("edge", true, false, false),
        ("flat edge", false, false, true),
        ("corner", true, true, false),
        ("flat corner", false, true, true),
    ] {
        let (mesh, line) = fold(folded);
        let s = assemble(&mesh, &test_params(9.8)).unwrap();
        let n = s.dofs.len();
        let lhs = dense(&s.mass.add_scaled(&s.stiffness, -25e-6));
        let build = |eulerian: bool| {
            let mut rows = Rows::default();
            for &i in &line {
                let feature = if corner {
                    Feature::Corner {
                        normals: [top, side, x_axis],
                        obstacle: 0,
                    }
                } else {
                    Feature::Edge {
                        normals: [top, side],
                        tangent: x_axis,
                        obstacle: 0,
                    }
                };
                let along = if eulerian { [1.0, 0.0] } else { [0.0, 0.0] };
                let site = Site {
                    feature,
                    flat,
                    along,
                    vertex_normal: top,
                    v_o: Vec3::zero(),
                };
                rows.eol_vertex(&s.dofs, i, &site);
            }
            let (a_eq, _, a_in, _) = rows.build(n);
            // Every row active: stack equalities and inequalities.
            let (e, i) = (dense(&a_eq), dense(&a_in));
            let mut all = DMatrix::zeros(e.nrows() + i.nrows(), n);
            all.rows_mut(0, e.nrows()).copy_from(&e);
            all.rows_mut(e.nrows(), i.nrows()).copy_from(&i);
            all
        };
        let lam = min_eig_on(&lhs, &build(true));
        assert!(lam > 1e-9, "{name}: λ_min = {lam:e}");
        if !corner {
            let lam0 = min_eig_on(&lhs, &build(false));
            assert!(
                lam0 < 1e-12 * lam.max(1.0),
                "{name}: without t̄ᵀẊ = 0, λ_min = {lam0:e}"
            );
        }
    }
}

/// Test 19: corner rows are the 3 face normals, edge rows the 2, and t̄ of
/// a straight conformal line is parallel to it.
#[test]
fn t19_constraint_geometry() {
    let (mesh, line) = fold(true);
    let s = assemble(&mesh, &test_params(9.8)).unwrap();
    let n = s.dofs.len();
    let normals = [
        Vec3::new(0.0, 0.0, 1.0),
        Vec3::new(0.0, 1.0, 0.0),
        Vec3::new(1.0, 0.0, 0.0),
    ];
    let i = line[1];
    let mut rows = Rows::default();
    let corner = Site {
        feature: Feature::Corner { normals, obstacle: 0 },
        flat: false,
        along: [0.0; 2],
        vertex_normal: normals[0],
        v_o: Vec3::zero(),
    };
    rows.eol_vertex(&s.dofs, i, &corner);
    let (a_eq, _, a_in, _) = rows.build(n);
    assert_eq!((a_eq.rows, a_in.rows), (0, 3));
    let d = dense(&a_in);
    for (k, nk) in normals.iter().enumerate() {
        for c in 0..3 {
            assert_eq!(d[(k, 3 * i + c)], nk[c]);
        }
    }
    let mut rows = Rows::default();
    let edge = Feature::Edge {
        normals: [normals[0], normals[1]],
        tangent: normals[2],
        obstacle: 0,
    };
    rows.eol_vertex(
        &s.dofs,
        i,
        &Site {
            feature: edge,
            along: [1.0, 0.0],
            ..corner
        },
    );
    let (a_eq, _, a_in, _) = rows.build(n);
    assert_eq!((a_eq.rows, a_in.rows), (1, 2));
    // The two inequalities are the two face normals on ẋ_i alone; the
    // equality is t̄ᵀẊ_i (here `along`) on Ẋ_i alone.
    let (d, e) = (dense(&a_in), dense(&a_eq));
    let ui = s.dofs.u(i).unwrap();
    for k in 0..2 {
        let row: Vec<f64> = (0..3).map(|c| d[(k, 3 * i + c)]).collect();
        assert_eq!(row, vec![normals[k].x, normals[k].y, normals[k].z], "row {k}");
        let elsewhere = (0..n)
            .filter(|&c| c / 3 != i || c >= 3 * mesh.x.len())
            .map(|c| d[(k, c)].abs());
        assert_eq!(
            elsewhere.fold(0.0, f64::max),
            0.0,
            "row {k} reaches other unknowns"
        );
    }
    assert_eq!((e[(0, ui)], e[(0, ui + 1)]), (1.0, 0.0));
    assert_eq!(
        (0..n)
            .filter(|&c| c != ui)
            .map(|c| e[(0, c)].abs())
            .fold(0.0, f64::max),
        0.0
    );
    let t = line_direction(mesh.u[line[0]], mesh.u[line[1]], mesh.u[line[2]]);
    // The line runs along +u in material space; t̄ from prev → next is ∓ that.
    assert!(t[1].abs() <= 1e-12 && (t[0].abs() - 1.0).abs() <= 1e-12, "{t:?}");
    // And along a straight line in any direction, unevenly spaced.
    for k in 0..12 {
        let a = 0.37 + 0.5 * k as f64;
        let dir = [a.cos(), a.sin()];
        let at = |s: f64| [0.2 + s * dir[0], -0.1 + s * dir[1]];
        let t = line_direction(at(-0.031), at(0.0), at(0.047));
        let sin = t[0] * dir[1] - t[1] * dir[0];
        assert!(sin.abs() <= 1e-12, "{a}: |sin| {sin:e}");
    }
}

/// [D] The one inequality of a flat or softly bent edge vertex is along its
/// vertex normal clamped into the cone of the box's two face normals: kept
/// inside the cone, turned outward, clamped to a face when it leans past
/// it (lift-off never into a face, and never blocked), the bisector when
/// the normal has no direction across the edge.
#[test]
fn a_soft_edge_vertex_lifts_off_only_inside_the_faces_cone() {
    let n = [Vec3::new(0.0, 1.0, 0.0), Vec3::new(-1.0, 0.0, 0.0)];
    let t = Vec3::new(0.0, 0.0, 1.0);
    let inside = Vec3::new(-0.3, 1.0, 0.2).normalize_or_zero();
    let across = Vec3::new(-0.3, 1.0, 0.0).normalize_or_zero();
    assert!((cone_normal(inside, n, t) - across).norm() < 1e-12);
    assert!((cone_normal(-inside, n, t) - across).norm() < 1e-12);
    let past = Vec3::new(0.3, 1.0, 0.0).normalize_or_zero();
    assert!((cone_normal(past, n, t) - n[0]).norm() < 1e-12);
    let below = Vec3::new(-1.0, -0.2, 0.0).normalize_or_zero();
    assert!((cone_normal(below, n, t) - n[1]).norm() < 1e-12);
    assert!((cone_normal(t, n, t) - (n[0] + n[1]).normalize_or_zero()).norm() < 1e-12);
}
