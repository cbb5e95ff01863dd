//! Shared helpers of the constitutive-model tests: seeded random matrices and finite differences.

use crate::math::{Mat3, Real, Vec3};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// A seeded generator, so every failure reproduces.
pub(crate) fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// A standard normal sample (Box–Muller; `rand_distr` is not a dependency).
pub(crate) fn normal(rng: &mut StdRng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// A uniformly distributed unit vector.
pub(crate) fn unit_vector(rng: &mut StdRng) -> Vec3<f64> {
    loop {
        let v = Vec3::new(normal(rng), normal(rng), normal(rng));
        if v.norm() > 1e-3 {
            return v * (1.0 / v.norm());
        }
    }
}

/// A random rotation (random axis, angle in (−π, π)).
pub(crate) fn rotation(rng: &mut StdRng) -> Mat3<f64> {
    let axis = unit_vector(rng);
    Mat3::from_axis_angle(axis, rng.random_range(-3.1..3.1))
}

/// `I + scale·N(0,1)` with `det > 0` (spec §8 U4 samples).
pub(crate) fn near_identity(rng: &mut StdRng, scale: f64) -> Mat3<f64> {
    loop {
        let mut f = Mat3::identity();
        for i in 0..3 {
            for j in 0..3 {
                f.m[i][j] += scale * normal(rng);
            }
        }
        if f.determinant() > 0.05 {
            return f;
        }
    }
}

/// Central-difference gradient of `psi` at `f` with step `h` (all nine entries).
pub(crate) fn fd_gradient(psi: impl Fn(&Mat3<f64>) -> f64, f: &Mat3<f64>, h: f64) -> Mat3<f64> {
    let mut g = Mat3::zero();
    for i in 0..3 {
        for j in 0..3 {
            let mut fp = *f;
            fp.m[i][j] += h;
            let mut fm = *f;
            fm.m[i][j] -= h;
            g.m[i][j] = (psi(&fp) - psi(&fm)) / (2.0 * h);
        }
    }
    g
}

/// `max|a − b| / max(max|b|, floor)`.
pub(crate) fn rel_err(a: &Mat3<f64>, b: &Mat3<f64>, floor: f64) -> f64 {
    (*a - *b).max_abs() / b.max_abs().max(floor)
}

/// `diag(W2, 1)`: an in-plane rotation by `angle` (surface material symmetry, spec §8 U4).
pub(crate) fn rot_in_plane(angle: f64) -> Mat3<f64> {
    Mat3::from_axis_angle(Vec3::new(0.0, 0.0, 1.0), angle)
}

/// `diag(1, W2)`: a rotation about the fibre by `angle` (curve material symmetry, spec §8 U4).
pub(crate) fn rot_about_fibre(angle: f64) -> Mat3<f64> {
    Mat3::from_axis_angle(Vec3::new(1.0, 0.0, 0.0), angle)
}

/// Converts an f64 matrix to `T` and back, so an f32 computation is compared on its own input.
pub(crate) fn round_to<T: Real>(m: &Mat3<f64>) -> Mat3<f64> {
    m.cast::<T>().cast::<f64>()
}
