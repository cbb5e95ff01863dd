//! Tests of `plasticity.rs`: the spec's L1–L4 (shape_matching §4.7, §12).

use super::*;

fn params(flow_rate: f32, hardening: f32) -> PlasticParams {
    PlasticParams {
        flow_rate,
        hardening,
        cap: 2.0,
        capped: false,
    }
}

fn uniaxial() -> Mat3<f32> {
    let a = 1.5f32;
    Mat3::from_diagonal(Vec3::new(a, 1.0 / a.sqrt(), 1.0 / a.sqrt()))
}

/// L1: the four worked examples of spec §4.7.
#[test]
fn l1_worked_examples() {
    let s = uniaxial();
    let cases: [(f32, f32, f32, [f32; 3]); 3] = [
        (0.1, 0.9, 0.678033, [1.2, 0.871570, 0.871570]),
        (1e-4, 0.9, 0.899778, [1.2, 0.833256, 0.833256]),
        (0.01, 0.1, 0.097534, [1.040339, 0.980421, 0.980421]),
    ];
    for (ey, nu, gamma, diag) in cases {
        let st = plastic_update(&s, &Mat3::identity(), ey, &params(nu, 0.0), 1.0 / 60.0);
        assert!((st.strain - 0.405465).abs() < 2e-6, "‖ε‖ {}", st.strain);
        assert!((st.gamma - gamma).abs() < 2e-6, "γ {} vs {gamma}", st.gamma);
        for (k, want) in diag.iter().enumerate() {
            assert!(
                (st.fp.m[k][k] - want).abs() < 2e-5,
                "F_P[{k}] {} vs {want}",
                st.fp.m[k][k]
            );
        }
        assert!(st.fp.m[0][1].abs() < 1e-6 && st.fp.m[1][2].abs() < 1e-6);
    }
    let st = plastic_update(&s, &Mat3::identity(), 0.5, &params(0.9, 0.0), 1.0 / 60.0);
    assert_eq!((st.gamma, st.fp), (0.0, Mat3::identity()));
}

/// L2: below yield F_P stays bit-identical; a pure rotation has ‖ε‖ = 0.
#[test]
fn l2_below_yield_and_rotation_change_nothing() {
    let fp = Mat3::from_rows_array([[1.1, 0.05, 0.0], [0.02, 0.95, 0.0], [0.0, 0.01, 1.0]]);
    let s = Mat3::from_diagonal(Vec3::new(1.05, 0.98, 1.0));
    let st = plastic_update(&s, &fp, 0.2, &params(0.9, 1.0), 0.01);
    assert_eq!(st.fp, fp);
    assert_eq!(st.yield_strain, 0.2);
    let st = plastic_update(&Mat3::identity(), &fp, 0.0, &params(0.9, 1.0), 0.01);
    assert_eq!((st.strain, st.fp), (0.0, fp));
}

/// L3: before the clamp the update preserves volume; after it det F_P changes
/// by a factor within [0.8³, 1.2³]; the cap rejects an update past it.
#[test]
fn l3_volume_and_clamp() {
    let s = Mat3::from_diagonal(Vec3::new(1.05, 1.0 / 1.05f32.sqrt(), 1.0 / 1.05f32.sqrt()));
    let st = plastic_update(&s, &Mat3::identity(), 0.0, &params(1.0, 0.0), 0.01);
    assert!(
        (st.fp.determinant() - 1.0).abs() < 1e-5,
        "no clamp: det {}",
        st.fp.determinant()
    );
    let big = Mat3::from_diagonal(Vec3::new(3.0, 0.4, 0.9));
    let st = plastic_update(&big, &Mat3::identity(), 0.0, &params(1.0, 0.0), 0.01);
    let det = st.fp.determinant();
    assert!(
        (0.8f32.powi(3) - 1e-5..=1.2f32.powi(3) + 1e-5).contains(&det),
        "det {det}"
    );
    let mut p = params(1.0, 0.0);
    p.capped = true;
    p.cap = 1.68; // the clamped update has ‖F_P‖_F = 1.688
    let st = plastic_update(&big, &Mat3::identity(), 0.0, &p, 0.01);
    assert!(st.capped && st.fp == Mat3::identity());
}

/// L4: the yield grows by exactly κ‖ε‖dt only in steps with flow.
#[test]
fn l4_hardening_increment() {
    let s = uniaxial();
    let st = plastic_update(&s, &Mat3::identity(), 0.1, &params(0.9, 5.0), 0.02);
    assert!((st.yield_strain - (0.1 + 5.0 * st.strain * 0.02)).abs() < 1e-7);
    let st = plastic_update(&s, &Mat3::identity(), 0.5, &params(0.9, 5.0), 0.02);
    assert_eq!(st.yield_strain, 0.5);
    // Inverted or collapsed stretches skip plasticity.
    let inv = Mat3::from_diagonal(Vec3::new(1.5, 1.0, -0.5));
    assert_eq!(
        plastic_update(&inv, &Mat3::identity(), 0.0, &params(0.9, 0.0), 0.01).gamma,
        0.0
    );
}

/// THIN_EXTENT: lattices of unit-weight particles at spacing r; one layer
/// (RMS 0 across it, and slightly rough) is too thin for plasticity, two
/// layers (RMS r/2) and a block are not, in any orientation.
#[test]
fn only_one_layer_is_thin() {
    let r = 0.1f32;
    let moment = |layers: u32, rough: f32| {
        let mut pts = Vec::new();
        for i in 0..8u32 {
            for k in 0..8u32 {
                for j in 0..layers {
                    // A little off the plane (an alternating offset), as a settled layer is.
                    let y = j as f32 * r + if (i + k) % 2 == 0 { rough } else { -rough };
                    pts.push(Vec3::new(i as f32 * r, y, k as f32 * r));
                }
            }
        }
        let n = pts.len() as f32;
        let c = pts.iter().fold(Vec3::zero(), |a, &p| a + p) * (1.0 / n);
        let rot = Mat3::from_axis_angle(Vec3::new(1.0, 2.0, 3.0).normalize_or_zero(), 0.7);
        let aqq = pts.iter().fold(Mat3::zero(), |a, &p| {
            let q = rot * (p - c);
            a + Mat3::outer(q, q)
        });
        (aqq, n)
    };
    let (one, n1) = moment(1, 0.01 * r);
    assert!(is_thin(&one, n1, r));
    let (two, n2) = moment(2, 0.0);
    assert!(!is_thin(&two, n2, r));
    let (four, n4) = moment(4, 0.0);
    assert!(!is_thin(&four, n4, r));
    // The same shapes in metres scale with r.
    assert!(is_thin(&(one * 100.0), n1, 10.0 * r));
    assert!(!is_thin(&(two * 100.0), n2, 10.0 * r));
}
