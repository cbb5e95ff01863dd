//! Spec eol_cloth §10 tests 5, 10, 11 and 13 on small meshes, and the
//! assembly's independence of the thread count (test 20).

use nalgebra::{DMatrix, DVector};

use super::*;
use crate::eol::qp::{Qp, kkt, solve_clarabel};
use crate::geometry::grid_mesh;
use crate::test_util::Rng;

/// The tests' cloth with a bending stiffness that matters (1e-3 J).
fn params(gravity: f64) -> ClothParams {
    ClothParams {
        bending: 1e-3,
        ..test_params(gravity)
    }
}

/// A `res × res` sheet of 1 m in material space (x, y), its world
/// positions perturbed by `amp` m (stretched, bent), EOL flags from `eol`.
fn sheet(res: usize, amp: f64, seed: u64, eol: impl Fn(usize) -> bool) -> Mesh {
    let m = grid_mesh((1.0, 1.0), (res, res), Vec3::zero(), 2).unwrap();
    let mut g = Rng::new(seed);
    let u: Vec<Mat2d> = m.vertices().iter().map(|v| [v.x, v.y]).collect();
    let x: Vec<Vec3<f64>> = m.vertices().iter().map(|v| *v * 1.05 + g.vec(amp)).collect();
    Mesh {
        eol: (0..x.len()).map(eol).collect(),
        x,
        u,
        faces: m.faces().to_vec(),
        hinges: m.topology().hinges().to_vec(),
    }
}

fn dense(m: &Csc) -> DMatrix<f64> {
    let d = m.to_dense();
    DMatrix::from_fn(m.rows, m.cols, |r, c| d[r][c])
}

fn no_rows(n: usize) -> Csc {
    Csc::zeros(0, n)
}

/// Test 5 (first half): without EOL vertices M is the consistent mass
/// Σ ρA/12·C⊗I and f, K are the cloth kernels' own; with EOL vertices whose
/// material velocity an equality pins to 0 one implicit step gives the
/// Lagrangian step's world velocities.
#[test]
fn t5_lagrangian_limit() {
    let p = params(9.8);
    let lag = sheet(4, 0.03, 5, |_| false);
    let s = assemble(&lag, &p).unwrap();
    let n = s.dofs.len();
    assert_eq!(n, 3 * lag.x.len());
    let total: f64 = s.mass.nzval.iter().sum();
    // Σ of all entries of C⊗I ρA/12 over the faces is 3ρA per face (each of
    // the 3 diagonals of I sums C's 9 entries, 12/12).
    assert!((total - 3.0 * p.density * 1.0).abs() < 1e-12, "{total}");
    // Entry by entry: M = Σ_faces ρA/12 (1 + δ_ab) I₃ on the blocks of the
    // face's vertices a, b (consistent mass), written out here apart from
    // the element code.
    let mut want = DMatrix::<f64>::zeros(n, n);
    for f in &lag.faces {
        let [a, b, c] = f.map(|k| lag.u[k as usize]);
        let area = 0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])).abs();
        for (i, &vi) in f.iter().enumerate() {
            for (j, &vj) in f.iter().enumerate() {
                let m = p.density * area / 12.0 * if i == j { 2.0 } else { 1.0 };
                for d in 0..3 {
                    want[(3 * vi as usize + d, 3 * vj as usize + d)] += m;
                }
            }
        }
    }
    let got = dense(&s.mass);
    let worst = (0..n)
        .flat_map(|r| (r..n).map(move |c| (r, c)))
        .map(|(r, c)| (got[(r, c)] - want[(r, c)]).abs())
        .fold(0.0, f64::max);
    assert!(worst <= 1e-15, "M differs from the consistent mass by {worst:e}");
    let h = 5e-3;
    let mut g = Rng::new(55);
    let qd: Vec<f64> = (0..n).map(|_| 0.1 * g.sym()).collect();
    let (lhs, q) = s.qp_terms(h, &qd);
    let (eq, ineq) = (no_rows(n), no_rows(n));
    let qp = Qp {
        p_upper: &lhs,
        q: &q,
        a_eq: &eq,
        b_eq: &[],
        a_in: &ineq,
        b_in: &[],
    };
    let lag_v = solve_clarabel(&qp, 1e-10).unwrap().v;
    // The same sheet with every third vertex EOL, Ẋ = 0 imposed.
    let eolm = Mesh {
        eol: (0..lag.x.len()).map(|i| i % 3 == 0).collect(),
        ..lag.clone()
    };
    let se = assemble(&eolm, &p).unwrap();
    let ne = se.dofs.len();
    let mut qd_e = qd.clone();
    qd_e.resize(ne, 0.0);
    let (lhs_e, q_e) = se.qp_terms(h, &qd_e);
    let mut t: Vec<(u32, u32, f64)> = (0..ne - n).map(|k| (k as u32, (n + k) as u32, 1.0)).collect();
    let a_eq = Csc::from_triplets(ne - n, ne, &mut t);
    let b_eq = vec![0.0; ne - n];
    let ineq_e = no_rows(ne);
    let qp_e = Qp {
        p_upper: &lhs_e,
        q: &q_e,
        a_eq: &a_eq,
        b_eq: &b_eq,
        a_in: &ineq_e,
        b_in: &[],
    };
    let sol = solve_clarabel(&qp_e, 1e-10).unwrap();
    let k = kkt(&qp_e, &sol);
    assert!(k.ok(), "{k:?}");
    let diff = (0..n).map(|r| (sol.v[r] - lag_v[r]).abs()).fold(0.0, f64::max);
    let scale = lag_v.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    assert!(
        diff < 1e-8 * scale.max(1.0),
        "EOL with Ẋ = 0 differs from the Lagrangian step by {diff:e}"
    );
}

/// Test 5 (second half) over a trajectory: 20 implicit steps of the
/// Lagrangian sheet and of the same sheet with every third vertex EOL and
/// its Ẋ held at 0 by an equality row (each step re-assembled at the new
/// positions, `x += h ẋ`) are at the same positions to 1e-10 m after
/// every step.
#[test]
fn t5_eol_with_pinned_material_velocity_follows_the_lagrangian_trajectory() {
    let p = params(9.8);
    let h = 5e-3;
    let step = |mesh: &Mesh, qd: &[f64]| {
        let s = assemble(mesh, &p).unwrap();
        let (n, nx) = (s.dofs.len(), 3 * mesh.x.len());
        let (lhs, q) = s.qp_terms(h, qd);
        let mut t: Vec<(u32, u32, f64)> = (0..n - nx).map(|k| (k as u32, (nx + k) as u32, 1.0)).collect();
        let a_eq = Csc::from_triplets(n - nx, n, &mut t);
        let (b_eq, ineq) = (vec![0.0; n - nx], no_rows(n));
        let qp = Qp {
            p_upper: &lhs,
            q: &q,
            a_eq: &a_eq,
            b_eq: &b_eq,
            a_in: &ineq,
            b_in: &[],
        };
        let sol = solve_clarabel(&qp, 1e-12).unwrap();
        assert!(kkt(&qp, &sol).ok());
        sol.v
    };
    let mut lag = sheet(4, 0.03, 5, |_| false);
    let mut eol = Mesh {
        eol: (0..lag.x.len()).map(|i| i % 3 == 0).collect(),
        ..lag.clone()
    };
    let start = lag.x.clone();
    let (mut qd, mut qd_e) = (vec![0.0; 3 * lag.x.len()], Vec::new());
    let mut diff = 0.0f64;
    for _ in 0..20 {
        qd_e.resize(3 * eol.x.len() + eol.eol.iter().filter(|e| **e).count() * 2, 0.0);
        qd = step(&lag, &qd);
        qd_e = step(&eol, &qd_e);
        for (m, v) in [(&mut lag, &qd), (&mut eol, &qd_e)] {
            for (i, x) in m.x.iter_mut().enumerate() {
                *x += Vec3::new(v[3 * i], v[3 * i + 1], v[3 * i + 2]) * h;
            }
        }
        diff = lag
            .x
            .iter()
            .zip(&eol.x)
            .map(|(a, b)| (*a - *b).norm())
            .fold(diff, f64::max);
    }
    let moved = lag
        .x
        .iter()
        .zip(&start)
        .map(|(a, b)| (*a - *b).norm())
        .fold(0.0, f64::max);
    eprintln!("t5: moved {moved:e} m in 20 steps, trajectories {diff:e} m apart");
    assert!(moved > 1e-3, "the sheet did not move: {moved:e}");
    assert!(diff <= 1e-10, "the trajectories part by {diff:e} m");
}

/// Test 11: with no constraints the QP's solution is the linear solve of
/// M̃ q̇ = f̃ (a Lagrangian sheet: M̃ is positive definite).
#[test]
fn t11_unconstrained_qp_is_the_linear_solve() {
    let mesh = sheet(5, 0.05, 11, |_| false);
    let s = assemble(&mesh, &params(9.8)).unwrap();
    let n = s.dofs.len();
    let mut g = Rng::new(111);
    let qd: Vec<f64> = (0..n).map(|_| 0.2 * g.sym()).collect();
    let (lhs, q) = s.qp_terms(5e-3, &qd);
    let (eq, ineq) = (no_rows(n), no_rows(n));
    let qp = Qp {
        p_upper: &lhs,
        q: &q,
        a_eq: &eq,
        b_eq: &[],
        a_in: &ineq,
        b_in: &[],
    };
    let v = solve_clarabel(&qp, 1e-10).unwrap().v;
    let full = dense(&s.mass.add_scaled(&s.stiffness, -25e-6));
    let rhs: Vec<f64> = q.iter().map(|v| -v).collect();
    let want = full.lu().solve(&DVector::from_vec(rhs)).unwrap();
    let diff = v
        .iter()
        .zip(want.iter())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(diff < 1e-8 * want.amax().max(1.0), "{diff:e}");
}

/// Test 10: a QP with Eulerian equalities (t̄ᵀẊ = 0) and contact
/// inequalities (nᵀẋ ≥ b, some active) solves with KKT residuals inside
/// the spec's bounds, and the active rows hold.
#[test]
fn t10_kkt_of_a_constrained_step() {
    let mesh = sheet(6, 0.02, 10, |i| i % 7 == 3);
    let s = assemble(&mesh, &params(9.8)).unwrap();
    let n = s.dofs.len();
    let mut g = Rng::new(100);
    let qd: Vec<f64> = (0..n).map(|_| 0.1 * g.sym()).collect();
    let (lhs, q) = s.qp_terms(5e-3, &qd);
    // Eulerian rows on every EOL vertex, contact rows pushing up on a band.
    let mut te = Vec::new();
    for (k, &i) in s.dofs.eol.iter().enumerate() {
        let u = s.dofs.u(i as usize).unwrap() as u32;
        let (a, b) = (g.sym(), g.sym());
        te.push((k as u32, u, a));
        te.push((k as u32, u + 1, b));
    }
    let me = s.dofs.eol.len();
    let a_eq = Csc::from_triplets(me, n, &mut te);
    let b_eq = vec![0.0; me];
    let band: Vec<usize> = (0..mesh.x.len()).filter(|&i| mesh.u[i][1] < -0.3).collect();
    let mut ti = Vec::new();
    for (k, &i) in band.iter().enumerate() {
        ti.push((k as u32, (3 * i + 2) as u32, 1.0));
    }
    let a_in = Csc::from_triplets(band.len(), n, &mut ti);
    let b_in = vec![0.05; band.len()];
    let qp = Qp {
        p_upper: &lhs,
        q: &q,
        a_eq: &a_eq,
        b_eq: &b_eq,
        a_in: &a_in,
        b_in: &b_in,
    };
    let sol = solve_clarabel(&qp, 1e-9).unwrap();
    let k = kkt(&qp, &sol);
    assert!(k.ok(), "{k:?}");
    // Gravity pulls down: the rows hold the band up, so some are active.
    let active = sol.mu.iter().filter(|&&m| m > 1e-6).count();
    assert!(active > 0, "no contact row was active: {:?}", sol.mu);
    assert!(band.iter().all(|&i| sol.v[3 * i + 2] >= 0.05 - 1e-9));
    // μ ≥ 0 is part of the check: the same point with one active
    // multiplier's sign turned fails it on `dual` alone.
    assert_eq!(k.dual, 0.0);
    let mut flipped = sol.clone();
    let at = (0..sol.mu.len())
        .max_by(|&a, &b| sol.mu[a].total_cmp(&sol.mu[b]))
        .unwrap();
    flipped.mu[at] = -flipped.mu[at];
    let kf = kkt(&qp, &flipped);
    assert!(kf.dual > 1e-6 && !kf.ok(), "{kf:?}");
}

/// Test 13: with no gravity and no constraints a rigid translation's
/// momentum (`q̇_Tᵀ M q̇` with `q̇_T = (ẋ_i = u, Ẋ = 0)`) is kept by one
/// implicit step (frozen M), on a Lagrangian sheet and on one with every
/// fourth vertex EOL (random Ẋ in the start velocity).
#[test]
fn t13_momentum_of_one_step() {
    for every in [0, 4] {
        momentum_of_one_step(sheet(5, 0.05, 13, |i| every > 0 && i % every == 1));
    }
}

fn momentum_of_one_step(mesh: Mesh) {
    let p = ClothParams {
        gravity: Vec3::zero(),
        ..params(0.0)
    };
    let s = assemble(&mesh, &p).unwrap();
    let n = s.dofs.len();
    let mut g = Rng::new(130);
    let qd: Vec<f64> = (0..n).map(|_| 0.3 * g.sym()).collect();
    let (lhs, q) = s.qp_terms(5e-3, &qd);
    let (eq, ineq) = (no_rows(n), no_rows(n));
    let qp = Qp {
        p_upper: &lhs,
        q: &q,
        a_eq: &eq,
        b_eq: &[],
        a_in: &ineq,
        b_in: &[],
    };
    let v = solve_clarabel(&qp, 1e-11).unwrap().v;
    let (mv0, mv1) = (s.mass.mul(&qd), s.mass.mul(&v));
    for axis in 0..3 {
        let p0: f64 = (0..mesh.x.len()).map(|i| mv0[3 * i + axis]).sum();
        let p1: f64 = (0..mesh.x.len()).map(|i| mv1[3 * i + axis]).sum();
        assert!((p0 - p1).abs() < 1e-10, "axis {axis}: {p0} → {p1}");
        assert!(p0.abs() > 1e-4, "axis {axis}: no momentum to keep");
    }
}

/// Test 20 (assembly): the matrices and forces do not depend on the
/// thread count.
#[test]
fn assembly_is_the_same_for_any_thread_count() {
    let mesh = sheet(8, 0.05, 20, |i| i % 5 == 1);
    let p = params(9.8);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
    crate::test_util::same_across_threads(|| {
        let s = assemble(&mesh, &p).unwrap();
        (
            s.mass.colptr.clone(),
            s.stiffness.rowval.clone(),
            bits(&s.mass.nzval),
            bits(&s.stiffness.nzval),
            bits(&s.force),
        )
    });
}

/// The kept patterns: one cache carried through a mesh that moves, gains
/// and loses EOL vertices and loses a face gives, at every call, the same
/// matrices bit for bit as a fresh assembly (and the same `M − h²K`).
#[test]
fn a_kept_pattern_gives_the_fresh_assembly() {
    let p = params(9.8);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
    let same =
        |a: &Csc, b: &Csc| a.colptr == b.colptr && a.rowval == b.rowval && bits(&a.nzval) == bits(&b.nzval);
    let mut cache = AssemblyCache::default();
    let base = sheet(6, 0.05, 3, |i| i % 7 == 2);
    let moved = Mesh {
        x: base
            .x
            .iter()
            .map(|x| *x * 0.97 + Vec3::new(0.01, 0.0, 0.02))
            .collect(),
        ..base.clone()
    };
    let more_eol = Mesh {
        eol: (0..base.x.len()).map(|i| i % 5 == 1).collect(),
        ..moved.clone()
    };
    let mut fewer_faces = more_eol.clone();
    fewer_faces.faces.pop();
    fewer_faces.hinges.retain(|h| {
        (h.faces[0] as usize) < fewer_faces.faces.len() && (h.faces[1] as usize) < fewer_faces.faces.len()
    });
    let qd: Vec<f64> = (0..4000).map(|k| ((k * 37 % 11) as f64 - 5.0) * 0.01).collect();
    for (k, mesh) in [&base, &moved, &more_eol, &more_eol, &fewer_faces, &base]
        .into_iter()
        .enumerate()
    {
        // The stepper prepares the patterns ahead of the assembly when the
        // mesh changed; the assembly prepares them itself otherwise.
        if k % 2 == 0 {
            cache.prepare(mesh);
            assert!(cache.is_for(mesh), "call {k}");
        }
        let kept = assemble_with(mesh, &p, &mut cache, None).unwrap();
        assert!(cache.is_for(mesh), "call {k}");
        let fresh = assemble(mesh, &p).unwrap();
        assert!(
            same(&kept.mass, &fresh.mass) && same(&kept.stiffness, &fresh.stiffness),
            "call {k}"
        );
        assert_eq!(bits(&kept.force), bits(&fresh.force), "call {k}");
        let n = kept.dofs.len();
        let (lk, qk) = kept.qp_terms_with(0.01, &qd[..n], &mut cache);
        let (lf, qf) = fresh.qp_terms(0.01, &qd[..n]);
        assert!(same(&lk, &lf), "call {k}: M - h²K");
        assert_eq!(bits(&qk), bits(&qf), "call {k}");
        // Gathered entry by entry, the bits of the triplet scatter (0, then
        // M's entry, then −h²K's): M's and K's upper entries as triplets.
        let mut coords = Vec::new();
        let (mu, ku) = (
            upper_entries(&kept.mass, Some(&mut coords)),
            upper_entries(&kept.stiffness, Some(&mut coords)),
        );
        let (mut want, map) = Csc::pattern(n, n, &coords);
        let s = -0.01 * 0.01;
        let values = mu.iter().map(|&i| kept.mass.nzval[i as usize]);
        let values = values.chain(ku.iter().map(|&i| s * kept.stiffness.nzval[i as usize]));
        Csc::scatter(&mut want.nzval, &map, values);
        assert!(same(&lk, &want), "call {k}: M - h²K as the scatter sums it");
        // The pattern the stepper hands the QP's structure analysis before
        // the values exist is this one (else the solve analyses again).
        let early = cache.lhs_pattern();
        assert_eq!(
            (&early.colptr, &early.rowval),
            (&lk.colptr, &lk.rowval),
            "call {k}: lhs_pattern"
        );
        // And what the kept lhs equals: the upper triangle of M − h²K.
        let want = kept.mass.add_scaled(&kept.stiffness, -0.01 * 0.01).upper();
        assert_eq!(lk.colptr, want.colptr, "call {k}");
        assert_eq!(lk.rowval, want.rowval, "call {k}");
        for (a, b) in lk.nzval.iter().zip(&want.nzval) {
            assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "call {k}: {a} vs {b}");
        }
    }
    // A copy of a cache that holds patterns starts empty and assembles the same.
    let mut copy = cache.clone();
    let again = assemble_with(&base, &p, &mut copy, None).unwrap();
    let fresh = assemble(&base, &p).unwrap();
    assert!(same(&again.mass, &fresh.mass) && same(&again.stiffness, &fresh.stiffness));
    let n = again.dofs.len();
    assert!(same(
        &again.qp_terms_with(0.01, &qd[..n], &mut copy).0,
        &fresh.qp_terms(0.01, &qd[..n]).0
    ));
}

/// The block-structured pattern is the counting sort's: for meshes with
/// and without EOL vertices, faces alone (M) and faces then hinges (K),
/// `block_pattern` gives the arrays and the per-coordinate map that
/// `Csc::pattern` gives for the coordinates `emit_coords` lists.
#[test]
fn the_block_pattern_is_the_sorted_one() {
    for (k, mesh) in [
        sheet(6, 0.05, 3, |_| false),
        sheet(6, 0.05, 3, |i| i % 7 == 2),
        sheet(5, 0.05, 2, |i| i % 3 != 0),
    ]
    .iter()
    .enumerate()
    {
        let dofs = Dofs::new(&mesh.eol);
        let n = dofs.len();
        let hinges: Vec<[u32; 4]> = mesh.hinges.iter().map(|h| h.vertices).collect();
        let mut coords = Vec::new();
        for f in &mesh.faces {
            for &i in f {
                for &j in f {
                    emit_coords(&dofs, i as usize, j as usize, &mut coords);
                }
            }
        }
        let sorted_m = Csc::pattern(n, n, &coords);
        for h in &hinges {
            for &i in h {
                for &j in h {
                    emit_coords(&dofs, i as usize, j as usize, &mut coords);
                }
            }
        }
        let sorted_k = Csc::pattern(n, n, &coords);
        assert!(!hinges.is_empty() && !dofs.eol.is_empty() || k == 0);
        assert_eq!(block_pattern(&dofs, &mesh.faces, &[]), sorted_m, "mesh {k}: M");
        assert_eq!(
            block_pattern(&dofs, &mesh.faces, &hinges),
            sorted_k,
            "mesh {k}: K"
        );
    }
}

/// `upper_within` gives the pattern and map `Csc::pattern` gives for the
/// upper entries of M then K (M's pattern inside K's), and None when M has
/// an entry K lacks.
#[test]
fn the_upper_pattern_of_m_within_k_is_the_sorted_one() {
    let p = params(9.8);
    for mesh in [sheet(6, 0.05, 3, |_| false), sheet(5, 0.05, 2, |i| i % 3 != 0)] {
        let s = assemble(&mesh, &p).unwrap();
        let mut coords = Vec::new();
        upper_entries(&s.mass, Some(&mut coords));
        upper_entries(&s.stiffness, Some(&mut coords));
        let n = s.mass.rows;
        assert_eq!(
            upper_within(&s.mass, &s.stiffness),
            Some(Csc::pattern(n, n, &coords))
        );
        // K's pattern is not inside M's (the hinges).
        assert_eq!(upper_within(&s.stiffness, &s.mass), None);
    }
}

/// The same on a mesh made to be awkward: a face with a repeated vertex,
/// an EOL vertex in no element, a hinge whose outer pair shares no face,
/// and EOL vertices out of order in the faces.
#[test]
fn the_block_pattern_is_the_sorted_one_on_an_odd_mesh() {
    let eol = [false, true, false, true, false, true, true];
    let dofs = Dofs::new(&eol);
    let faces = [[0u32, 1, 2], [3, 2, 1], [4, 4, 5], [5, 3, 1]];
    let hinges = [[1u32, 2, 0, 3], [0, 5, 2, 4]];
    let n = dofs.len();
    let mut coords = Vec::new();
    for f in &faces {
        for &i in f {
            for &j in f {
                emit_coords(&dofs, i as usize, j as usize, &mut coords);
            }
        }
    }
    assert_eq!(block_pattern(&dofs, &faces, &[]), Csc::pattern(n, n, &coords));
    for h in &hinges {
        for &i in h {
            for &j in h {
                emit_coords(&dofs, i as usize, j as usize, &mut coords);
            }
        }
    }
    assert_eq!(block_pattern(&dofs, &faces, &hinges), Csc::pattern(n, n, &coords));
}

/// The edge counts from the counting sort are an ordered map's: every
/// edge once, in order, with its face count, on a grid (border edges 1,
/// interior 2), with faces out of order and a fin (an edge with three
/// faces: the remeshers check manifoldness with these counts).
#[test]
fn the_edge_counts_are_those_of_an_ordered_map() {
    let g = grid_mesh((1.0, 1.0), (4, 3), Vec3::zero(), 2).unwrap();
    let n = g.vertices().len() as u32;
    let mut faces: Vec<[u32; 3]> = g.faces().iter().rev().map(|f| [f[2], f[0], f[1]]).collect();
    let (a, b) = (faces[3][0], faces[3][1]);
    faces.push([b, a, n]); // the fin, on a new vertex
    let mesh = Mesh {
        x: vec![Vec3::zero(); n as usize + 1],
        u: vec![[0.0, 0.0]; n as usize + 1],
        faces: faces.clone(),
        hinges: Vec::new(),
        eol: vec![false; n as usize + 1],
    };
    let mut map = std::collections::BTreeMap::new();
    for f in &faces {
        for k in 0..3 {
            let (p, q) = (f[k], f[(k + 1) % 3]);
            *map.entry((p.min(q), p.max(q))).or_insert(0u32) += 1;
        }
    }
    let counts = mesh.edge_face_counts();
    assert_eq!(
        counts.iter().collect::<Vec<_>>(),
        map.into_iter().collect::<Vec<_>>()
    );
    assert_eq!(counts.get(&(a.min(b), a.max(b))), Some(&3));
    assert!(counts.iter().any(|(_, c)| c == 1) && counts.iter().any(|(_, c)| c == 2));
}
