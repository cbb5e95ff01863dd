//! Surfaces (cloth, m = 2): the QR-based anisotropic energy of spec `mpm_anisotropic.md` §4.3 with the
//! stress of §4.2, and the Coulomb return map of §5.1.
//!
//! Input is always the element's `F̃` in its orthonormal rest frame (§2.3): columns 1–2 are the
//! mesh-derived tangents `Ds Dm⁻¹`, column 3 is the advected normal `d_3`. `F̃ = Q R̃` with
//! `Q ∈ SO(3)` and signed `r33` ([`qr3`], §4.1). The energy only sees `R̃`:
//!
//! ```text
//! ψ̂ = h(R_in) + (γ/2)(r13² + r23²) + f(r33)
//! h = μ‖R_in − U_in‖² + (λ/2)(r11 r22 − 1)²      (2-D fixed corotated, U_in = polar rotation)
//! f = (k/3)(1 − r33)³ for r33 ≤ 1, else 0          (compression-only normal stiffness)
//! ```

use super::{ReturnEvent, friction_angle_radians, lame_parameters, piola_from_a, qr_unusable};
use crate::Result;
use crate::math::{Mat3, Qr3, Real, Vec3, qr3};

/// Material parameters of a surface (spec §4.3, §5.1, Table 1 of §6.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfaceParams<T> {
    /// In-plane shear modulus `μ` of the 2-D corotated energy `h` (from `E`, `ν`, §2.5).
    pub mu: T,
    /// In-plane Lamé `λ` of `h` (3-D formula, §9 A11).
    pub lambda: T,
    /// Shear stiffness `γ` of the normal (sliding resistance, §4.3).
    pub gamma: T,
    /// Normal compression (contact) stiffness `k` (§4.3, §9 A12).
    pub k: T,
    /// Friction coefficient `c_F = tan Φ_F` (§5.1).
    pub c_f: T,
}

impl<T: Real> SurfaceParams<T> {
    /// Parameters from user values (spec §2.5, §6.1): Young's modulus `E` and Poisson ratio `ν` of the
    /// in-plane energy, normal shear stiffness `γ`, normal compression stiffness `k`, and the friction
    /// angle `Φ_F` in degrees (`c_F = tan Φ_F`).
    ///
    /// Errors ([`Error::InvalidInput`](crate::Error::InvalidInput), naming the parameter): a negative
    /// or non-finite `youngs_modulus`, `gamma` or `k`; `poisson_ratio` outside `(−1, 0.5)`;
    /// `friction_angle` outside `[0, 90)`.
    pub fn from_material(
        youngs_modulus: f64,
        poisson_ratio: f64,
        gamma: f64,
        k: f64,
        friction_angle_deg: f64,
    ) -> Result<Self> {
        let (mu, lambda) = lame_parameters(youngs_modulus, poisson_ratio)?;
        super::check_non_negative("gamma (shear stiffness of the normal)", gamma)?;
        super::check_non_negative("k (normal compression stiffness)", k)?;
        let phi = friction_angle_radians(friction_angle_deg)?;
        Ok(Self {
            mu: T::from_f64(mu),
            lambda: T::from_f64(lambda),
            gamma: T::from_f64(gamma),
            k: T::from_f64(k),
            c_f: T::from_f64(phi.tan()),
        })
    }
}

/// `(cos θ, sin θ)` of the polar rotation `U_in = rot(θ)` of `R_in = [[r11, r12], [0, r22]]`,
/// `θ = atan2(−r12, r11 + r22)` (spec §4.3, Appendix A.1).
#[inline]
fn in_plane_rotation<T: Real>(r: &Mat3<T>) -> (T, T) {
    // (cos θ, sin θ) of θ = atan2(−r12, r11 + r22) without trigonometry: the
    // normalised vector itself (a hot path: once per element per step).
    let (x, y) = (r.m[0][0] + r.m[1][1], -r.m[0][1]);
    let n = x.hypot(y);
    if n > T::ZERO {
        (x / n, y / n)
    } else {
        (T::ONE, T::ZERO)
    }
}

/// Normal energy `f(r33) = (k/3)(1 − r33)³` for `r33 ≤ 1`, else 0, and `f'(r33) = −k(1 − r33)²`
/// (spec §4.3: compression only, C² at `r33 = 1`).
#[inline]
fn normal_energy<T: Real>(k: T, r33: T) -> (T, T) {
    if r33 <= T::ONE {
        let d = T::ONE - r33;
        (k * d * d * d / T::from_f64(3.0), -k * d * d)
    } else {
        (T::ZERO, T::ZERO)
    }
}

/// `ψ̂(R̃)` of spec §4.3 on the upper-triangular factor (entries below the diagonal are ignored).
#[inline]
pub fn surface_energy_r<T: Real>(p: &SurfaceParams<T>, r: &Mat3<T>) -> T {
    let (r11, r12, r13) = (r.m[0][0], r.m[0][1], r.m[0][2]);
    let (r22, r23, r33) = (r.m[1][1], r.m[1][2], r.m[2][2]);
    let (c, s) = in_plane_rotation(r);
    // ‖R_in − U_in‖² with U_in = [[c, −s], [s, c]] and R_in's (1, 0) entry 0.
    let dist2 = (r11 - c) * (r11 - c) + (r12 + s) * (r12 + s) + s * s + (r22 - c) * (r22 - c);
    let j1 = r11 * r22 - T::ONE;
    let h = p.mu * dist2 + T::HALF * p.lambda * j1 * j1;
    h + T::HALF * p.gamma * (r13 * r13 + r23 * r23) + normal_energy(p.k, r33).0
}

/// `ψ(F̃) = ψ̂(R̃)` with `F̃ = Q R̃` (spec §4.3). Defined for every `F̃` (no division).
#[inline]
pub fn surface_energy<T: Real>(p: &SurfaceParams<T>, f: &Mat3<T>) -> T {
    surface_energy_r(p, &qr3(f).r)
}

/// The symmetric matrix `A = sym_up((∂ψ̂/∂R̃) R̃ᵀ)` in closed form (spec §4.3, "Explicit A"):
///
/// ```text
/// τ_in       = 2μ (R_in − U_in) R_inᵀ + λ (J_in − 1) J_in I₂
/// A[0:2,0:2] = τ_in + γ s sᵀ,   A[0:2,2] = γ r33 s,   A[2,2] = f'(r33) r33,   s = (r13, r23)
/// ```
///
/// `A / J` is the Cauchy stress in the `Q` basis (§4.2).
#[inline]
pub fn surface_a<T: Real>(p: &SurfaceParams<T>, r: &Mat3<T>) -> Mat3<T> {
    let (r11, r12, r13) = (r.m[0][0], r.m[0][1], r.m[0][2]);
    let (r22, r23, r33) = (r.m[1][1], r.m[1][2], r.m[2][2]);
    let (c, s) = in_plane_rotation(r);
    let two_mu = T::TWO * p.mu;
    let jin = r11 * r22;
    let vol = p.lambda * (jin - T::ONE) * jin;
    // (R_in − U_in) R_inᵀ; only its upper triangle is used (it is symmetric up to rounding because
    // U_in is the polar rotation, and sym_up of the exact K is what the stress needs).
    let t00 = two_mu * ((r11 - c) * r11 + (r12 + s) * r12) + vol;
    let t01 = two_mu * (r12 + s) * r22;
    let t11 = two_mu * (r22 - c) * r22 + vol;
    let g = p.gamma;
    let (a02, a12) = (g * r33 * r13, g * r33 * r23);
    let a22 = normal_energy(p.k, r33).1 * r33;
    let (a00, a01, a11) = (t00 + g * r13 * r13, t01 + g * r13 * r23, t11 + g * r23 * r23);
    Mat3::from_rows_array([[a00, a01, a02], [a01, a11, a12], [a02, a12, a22]])
}

/// First Piola–Kirchhoff stress `P̃ = ∂ψ/∂F̃ = Q A R̃^{-T}` from a precomputed QR (spec §4.2, §4.3),
/// or `None` for a degenerate element (`r11` or `r22 < eps`, or non-finite `R̃`; §4.1, §5.5: the
/// solver then skips its stress this step). See [`default_degenerate_eps`](super::default_degenerate_eps).
///
/// Computed by back-substitution with the last row of `R̃⁻¹A` set analytically to
/// `(γ r13, γ r23, f'(r33))`, so `P̃` stays finite and continuous as `r33 → 0` and through inversion.
#[inline]
pub fn surface_piola_qr<T: Real>(p: &SurfaceParams<T>, qr: &Qr3<T>, eps: T) -> Option<Mat3<T>> {
    if qr_unusable(qr, eps) {
        return None;
    }
    let r = &qr.r;
    let a = surface_a(p, r);
    let g3 = [
        p.gamma * r.m[0][2],
        p.gamma * r.m[1][2],
        normal_energy(p.k, r.m[2][2]).1,
    ];
    Some(piola_from_a(qr, &a, g3))
}

/// [`surface_piola_qr`] on `qr3(f)`: `P̃(F̃)` or `None` for a degenerate element (spec §4.2, §4.3).
#[inline]
pub fn surface_piola<T: Real>(p: &SurfaceParams<T>, f: &Mat3<T>, eps: T) -> Option<Mat3<T>> {
    surface_piola_qr(p, &qr3(f), eps)
}

/// Yield function `y_S(R̃) = γ sqrt(r13² + r23²) − c_F k (1 − r33)²` (spec §5.1; the common factor
/// `1/(r11 r22)` of `f_f` and `f_n` cancels). For `r33 > 1` the normal force is 0, so `y_S = γ|s|`.
#[inline]
pub fn surface_yield<T: Real>(p: &SurfaceParams<T>, r: &Mat3<T>) -> T {
    let fn_ = -normal_energy(p.k, r.m[2][2]).1;
    p.gamma * r.m[0][2].hypot(r.m[1][2]) - p.c_f * fn_
}

/// The projection of spec §5.1 on `R̂` itself: returns the projected `R` (only `r13`, `r23`, `r33`
/// may change) and what happened.
///
/// * `r̂33 > 1` (separation): `r13 = r23 = 0`, `r33 = 1`, zero traction ([`ReturnEvent::Tension`]).
/// * `r̂33 < 0` (normal inverted, "red" case): `r13 = r23 = 0`, `r33` kept (clamped to `≥ −1` when
///   `clamp_inverted`) so elasticity pushes it back ([`ReturnEvent::Inverted`], §9 A13).
/// * otherwise (compression), if `γ|ŝ| > c_F k(1 − r̂33)²`: scale `(r13, r23)` by
///   `c_F k(1 − r̂33)²/(γ|ŝ|) ∈ [0, 1)` ([`ReturnEvent::Slide`], lands on `y_S = 0`, §9 A4); else
///   unchanged ([`ReturnEvent::Elastic`]). With `γ = 0` the shear carries no stress and is left as is
///   (no 0/0); with `c_F = 0` any shear is removed.
#[inline]
pub fn surface_project_r<T: Real>(
    p: &SurfaceParams<T>,
    r_hat: &Mat3<T>,
    clamp_inverted: bool,
) -> (Mat3<T>, ReturnEvent) {
    let mut r = *r_hat;
    let r33 = r_hat.m[2][2];
    if r33 > T::ONE {
        r.m[0][2] = T::ZERO;
        r.m[1][2] = T::ZERO;
        r.m[2][2] = T::ONE;
        return (r, ReturnEvent::Tension);
    }
    if r33 < T::ZERO {
        r.m[0][2] = T::ZERO;
        r.m[1][2] = T::ZERO;
        if clamp_inverted {
            r.m[2][2] = r33.max(-T::ONE);
        }
        return (r, ReturnEvent::Inverted);
    }
    if p.gamma == T::ZERO {
        return (r, ReturnEvent::Elastic);
    }
    let ff = p.gamma * r_hat.m[0][2].hypot(r_hat.m[1][2]);
    let d = T::ONE - r33;
    let limit = p.c_f * p.k * d * d;
    // `ff > limit ≥ 0` implies `ff > 0`, so the scale is a finite number in [0, 1).
    if ff > limit {
        let s = limit / ff;
        r.m[0][2] = s * r_hat.m[0][2];
        r.m[1][2] = s * r_hat.m[1][2];
        return (r, ReturnEvent::Slide);
    }
    (r, ReturnEvent::Elastic)
}

/// Surface return map (spec §5.1, §3.10): `(Q, R̂) = QR(F̃_trial)`, project `R̂ → R`
/// ([`surface_project_r`]), and return `F̃_new = Q R` with the event.
///
/// The tangent columns of the result are copied from `f_trial` (bit for bit: `Q R` reproduces them
/// only to rounding, and they belong to the mesh, §3.9); only the normal column `Q R[:, 2]` is new.
/// `Elastic` and `Degenerate` (`r11` or `r22 < eps`, or non-finite input, §5.5) return `f_trial`
/// unchanged. `clamp_inverted` optionally clamps `r33 ≥ −1` in the inverted case.
pub fn surface_return_map<T: Real>(
    p: &SurfaceParams<T>,
    f_trial: &Mat3<T>,
    eps: T,
    clamp_inverted: bool,
) -> (Mat3<T>, ReturnEvent) {
    let qr = qr3(f_trial);
    if qr_unusable(&qr, eps) || !f_trial.is_finite() {
        return (*f_trial, ReturnEvent::Degenerate);
    }
    let (r, event) = surface_project_r(p, &qr.r, clamp_inverted);
    if event == ReturnEvent::Elastic {
        return (*f_trial, event);
    }
    let mut out = *f_trial;
    out.set_col(2, qr.q * Vec3::new(r.m[0][2], r.m[1][2], r.m[2][2]));
    (out, event)
}

super::impl_params_cast!(SurfaceParams {
    mu,
    lambda,
    gamma,
    k,
    c_f
});

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::super::{default_degenerate_eps, kirchhoff, sym_up};
    use super::*;

    fn params() -> SurfaceParams<f64> {
        // Knit-like stiff contact with friction so every term of ψ̂ is active.
        SurfaceParams::from_material(400.0, 0.3, 500.0, 2000.0, 30.0).unwrap()
    }

    const EPS: f64 = 1e-10;

    #[test]
    fn surface_params_validation() {
        let p = params();
        assert!((p.mu - 153.846_153_846).abs() < 1e-6);
        assert!((p.c_f - 30f64.to_radians().tan()).abs() < 1e-15);
        let bad = [
            (
                SurfaceParams::<f64>::from_material(-1.0, 0.3, 0.0, 1.0, 0.0),
                "youngs_modulus",
            ),
            (
                SurfaceParams::<f64>::from_material(1.0, 0.5, 0.0, 1.0, 0.0),
                "poisson_ratio",
            ),
            (
                SurfaceParams::<f64>::from_material(1.0, -1.0, 0.0, 1.0, 0.0),
                "poisson_ratio",
            ),
            (
                SurfaceParams::<f64>::from_material(1.0, 0.3, -2.0, 1.0, 0.0),
                "gamma",
            ),
            (
                SurfaceParams::<f64>::from_material(1.0, 0.3, 0.0, f64::NAN, 0.0),
                "k (normal",
            ),
            (
                SurfaceParams::<f64>::from_material(1.0, 0.3, 0.0, 1.0, 90.0),
                "friction_angle",
            ),
            (
                SurfaceParams::<f64>::from_material(1.0, 0.3, 0.0, 1.0, -5.0),
                "friction_angle",
            ),
        ];
        for (r, name) in bad {
            let msg = r.unwrap_err().to_string();
            assert!(msg.contains(name), "{msg} should name {name}");
        }
        let p32 = p.cast::<f32>();
        assert_eq!(p32.k, 2000.0f32);
    }

    #[test]
    fn surface_zero_energy_and_stress_at_rotations() {
        let p = params();
        assert_eq!(surface_energy(&p, &Mat3::identity()), 0.0);
        assert_eq!(surface_piola(&p, &Mat3::identity(), EPS).unwrap(), Mat3::zero());
        let mut g = rng(11);
        for _ in 0..200 {
            let w = rotation(&mut g);
            let qr = qr3(&w);
            // U3: R̃ = I for F̃ ∈ SO(3) (the rest frame of §2.3).
            assert!((qr.r - Mat3::identity()).max_abs() < 1e-14, "{:?}", qr.r);
            assert!(surface_energy(&p, &w).abs() < 1e-24);
            let pk = surface_piola(&p, &w, EPS).unwrap();
            assert!(pk.max_abs() < 1e-11, "P̃ at rotation: {pk:?}");
        }
    }

    #[test]
    fn surface_invariances_and_nonnegativity() {
        let p = params();
        let mut g = rng(12);
        for _ in 0..500 {
            let f = near_identity(&mut g, 0.3);
            let psi = surface_energy(&p, &f);
            assert!(psi >= 0.0);
            let pk = surface_piola(&p, &f, EPS).unwrap();
            let w = rotation(&mut g);
            // Frame indifference: ψ(WF) = ψ(F), P(WF) = W P(F).
            assert!((surface_energy(&p, &(w * f)) - psi).abs() <= 1e-12 * psi.max(1.0));
            let pw = surface_piola(&p, &(w * f), EPS).unwrap();
            assert!(rel_err(&pw, &(w * pk), 1.0) < 1e-11);
            // Material symmetry: in-plane rotation of the rest frame, ψ(F diag(W2,1)) = ψ(F) and
            // P(F M) = P(F) M.
            let m = rot_in_plane(g.random_range(-3.0..3.0));
            assert!((surface_energy(&p, &(f * m)) - psi).abs() <= 1e-12 * psi.max(1.0));
            let pm = surface_piola(&p, &(f * m), EPS).unwrap();
            assert!(rel_err(&pm, &(pk * m), 1.0) < 1e-11);
        }
    }

    use rand::RngExt;

    #[test]
    fn surface_piola_matches_finite_differences() {
        let p = params();
        let mut g = rng(13);
        let (mut above, mut below) = (0, 0);
        let mut n = 0;
        while n < 400 {
            let f = near_identity(&mut g, 0.3);
            let r = qr3(&f).r;
            if r.m[0][0] < 0.2 || r.m[1][1] < 0.2 {
                continue; // ill-conditioned for a 1e-6 difference step; the formula is tested elsewhere
            }
            n += 1;
            if r.m[2][2] > 1.0 {
                above += 1;
            } else {
                below += 1;
            }
            let pk = surface_piola(&p, &f, EPS).unwrap();
            let fd = fd_gradient(|x| surface_energy(&p, x), &f, 1e-6);
            let e = rel_err(&pk, &fd, 1.0);
            assert!(e < 1e-6, "rel err {e}: F = {f:?}\nP = {pk:?}\nFD = {fd:?}");
        }
        assert!(
            above > 50 && below > 50,
            "r33 sides: {above} above 1, {below} below"
        );
    }

    /// `∂ψ̂/∂R̃` by central differences on the six upper entries.
    fn numeric_dpsi_dr(psi: impl Fn(&Mat3<f64>) -> f64, r: &Mat3<f64>) -> Mat3<f64> {
        let mut gr = Mat3::zero();
        for i in 0..3 {
            for j in i..3 {
                let (mut rp, mut rm) = (*r, *r);
                rp.m[i][j] += 1e-6;
                rm.m[i][j] -= 1e-6;
                gr.m[i][j] = (psi(&rp) - psi(&rm)) / 2e-6;
            }
        }
        gr
    }

    #[test]
    fn surface_closed_form_a_matches_numeric() {
        let p = params();
        let mut g = rng(14);
        for _ in 0..300 {
            let f = near_identity(&mut g, 0.3);
            let r = qr3(&f).r;
            if r.m[0][0] < 0.2 || r.m[1][1] < 0.2 {
                continue;
            }
            let k = numeric_dpsi_dr(|x| surface_energy_r(&p, x), &r) * r.transpose();
            let a = surface_a(&p, &r);
            assert!(
                rel_err(&a, &sym_up(&k), 1.0) < 1e-7,
                "A = {a:?}\nnumeric = {:?}",
                sym_up(&k)
            );
            assert_eq!(a, a.transpose());
        }
    }

    #[test]
    fn surface_kirchhoff_symmetric_and_traction() {
        let p = params();
        let mut g = rng(15);
        for _ in 0..300 {
            let f = near_identity(&mut g, 0.3);
            let qr = qr3(&f);
            let pk = surface_piola(&p, &f, EPS).unwrap();
            let tau = kirchhoff(&pk, &f);
            assert!(
                (tau - tau.transpose()).max_abs() <= 1e-12 * tau.max_abs().max(1.0),
                "{tau:?}"
            );
            // τ = Q A Qᵀ (§4.2).
            let qaq = qr.q * surface_a(&p, &qr.r) * qr.q.transpose();
            assert!(rel_err(&tau, &qaq, 1.0) < 1e-11);
            // Traction on the plane with normal q3, in the Q basis: (γ r13, γ r23, f'(r33))/(r11 r22).
            let r = &qr.r.m;
            let j = f.determinant();
            let t = qr.q.transpose() * ((tau * (1.0 / j)) * qr.q.col(2));
            let fp = normal_energy(p.k, r[2][2]).1;
            let want = Vec3::new(p.gamma * r[0][2], p.gamma * r[1][2], fp) * (1.0 / (r[0][0] * r[1][1]));
            assert!((t - want).abs().max_element() <= 1e-10 * want.abs().max_element().max(1.0));
            // Compression pushes back: the normal traction is ≤ 0 (spec §9 A3; exactly 0 in tension,
            // where the computed one is rounding noise).
            assert!(want.z <= 0.0 && t.z <= 1e-10 * want.abs().max_element().max(1.0));
        }
    }

    #[test]
    fn surface_piola_finite_through_flat_and_inverted_normal() {
        let p = params();
        let c1 = Vec3::new(1.1, 0.1, 0.0);
        let c2 = Vec3::new(-0.2, 0.9, 0.05);
        let at = |z: f64| {
            let f = Mat3::from_cols(c1, c2, Vec3::new(0.3, -0.2, z));
            surface_piola(&p, &f, EPS).unwrap()
        };
        let p0 = at(0.0);
        assert!(p0.is_finite());
        // Continuous through r33 = 0 (the inverted side included).
        assert!((at(1e-9) - p0).max_abs() < 1e-5 && (at(-1e-9) - p0).max_abs() < 1e-5);
        assert!(at(-0.5).is_finite());
        // Degenerate tangents: no stress.
        let flat = Mat3::from_cols(c1, c1 * 2.0, Vec3::new(0.0, 0.0, 1.0));
        assert!(surface_piola(&p, &flat, EPS).is_none());
        assert!(surface_piola(&p, &Mat3::zero(), EPS).is_none());
        let mut nan = Mat3::identity();
        nan.m[2][2] = f64::NAN;
        assert!(surface_piola(&p, &nan, EPS).is_none());
    }

    /// `F̃ = W R` for an upper-triangular `R` built from its entries.
    fn f_from_r(w: &Mat3<f64>, r: [f64; 6]) -> Mat3<f64> {
        let r = Mat3::from_rows_array([[r[0], r[1], r[2]], [0.0, r[3], r[4]], [0.0, 0.0, r[5]]]);
        *w * r
    }

    #[test]
    fn surface_return_map_cases() {
        let p = params();
        let mut g = rng(16);
        let w = rotation(&mut g);
        // Inside the cone: bitwise unchanged.
        let f = f_from_r(&w, [1.05, 0.1, 0.01, 0.95, -0.02, 0.8]);
        assert!(surface_yield(&p, &qr3(&f).r) < 0.0);
        assert_eq!(surface_return_map(&p, &f, EPS, false), (f, ReturnEvent::Elastic));

        // Tension: shear and normal stretch forgotten, zero traction.
        let f = f_from_r(&w, [1.05, 0.1, 0.3, 0.95, -0.2, 1.4]);
        let (fnew, ev) = surface_return_map(&p, &f, EPS, false);
        assert_eq!(ev, ReturnEvent::Tension);
        let (rp, _) = surface_project_r(&p, &qr3(&f).r, false);
        assert_eq!((rp.m[0][2], rp.m[1][2], rp.m[2][2]), (0.0, 0.0, 1.0));
        let a = surface_a(&p, &rp);
        assert_eq!(
            (a.m[0][2], a.m[1][2], a.m[2][2]),
            (0.0, 0.0, 0.0),
            "traction must be exactly 0"
        );
        let r2 = qr3(&fnew).r;
        assert!(r2.m[0][2].abs() < 1e-15 && r2.m[1][2].abs() < 1e-15 && (r2.m[2][2] - 1.0).abs() < 1e-15);

        // Inverted ("red"): shear zeroed, r33 kept or clamped at −1.
        let f = f_from_r(&w, [1.0, 0.0, 0.3, 1.0, 0.2, -1.7]);
        let (fnew, ev) = surface_return_map(&p, &f, EPS, false);
        assert_eq!(ev, ReturnEvent::Inverted);
        let r2 = qr3(&fnew).r;
        assert!(r2.m[0][2].abs() < 1e-14 && r2.m[1][2].abs() < 1e-14 && (r2.m[2][2] + 1.7).abs() < 1e-14);
        let (fnew, _) = surface_return_map(&p, &f, EPS, true);
        assert!((qr3(&fnew).r.m[2][2] + 1.0).abs() < 1e-14);

        // Degenerate: untouched.
        let c = Vec3::new(0.3, 0.4, 0.5);
        let f = Mat3::from_cols(c, c * 2.0, Vec3::new(1.0, 5.0, 0.0));
        assert_eq!(
            surface_return_map(&p, &f, EPS, false),
            (f, ReturnEvent::Degenerate)
        );
        let mut nan = Mat3::identity();
        nan.m[0][2] = f64::NAN;
        assert_eq!(
            surface_return_map(&p, &nan, EPS, false).1,
            ReturnEvent::Degenerate
        );
    }

    #[test]
    fn surface_return_map_sliding_properties() {
        let p = params();
        let mut g = rng(17);
        let mut slides = 0;
        for _ in 0..1000 {
            let f = near_identity(&mut g, 0.3);
            let qr = qr3(&f);
            let (fnew, ev) = surface_return_map(&p, &f, EPS, false);
            // Tangent columns untouched (bitwise; the spec asks 1e-15).
            assert_eq!((fnew.col(0), fnew.col(1)), (f.col(0), f.col(1)));
            let (rp, ev2) = surface_project_r(&p, &qr.r, false);
            assert_eq!(ev, ev2);
            let qrp = qr.q * rp;
            // Q R reproduces them to the spec's 1e-15 (measured: 4.4e-16 at most)
            assert!((qrp.col(0) - f.col(0)).abs().max_element() < 1e-15);
            assert!((qrp.col(1) - f.col(1)).abs().max_element() < 1e-15);
            // Idempotent.
            let (again, _) = surface_return_map(&p, &fnew, EPS, false);
            assert!((again - fnew).max_abs() < 1e-14, "{again:?} vs {fnew:?}");
            // Never outside the cone afterwards (tension and inversion leave zero shear).
            assert!(surface_yield(&p, &rp) <= 1e-12 * p.gamma);
            if ev == ReturnEvent::Slide {
                slides += 1;
                let r = &qr.r.m;
                // Only r13, r23 change, the ratio r13 : r23 is preserved, y_S = 0.
                for (i, j) in [(0, 0), (0, 1), (1, 1), (2, 2)] {
                    assert_eq!(rp.m[i][j], r[i][j]);
                }
                assert!((rp.m[0][2] * r[1][2] - rp.m[1][2] * r[0][2]).abs() < 1e-15);
                assert!(rp.m[0][2] * r[0][2] >= 0.0 && rp.m[1][2] * r[1][2] >= 0.0);
                let y = surface_yield(&p, &rp);
                assert!(y.abs() < 1e-12 * p.gamma, "y_S = {y}");
                // The recomputed factorisation of the result agrees with the projection.
                let r2 = qr3(&fnew).r;
                assert!((r2 - rp).max_abs() < 1e-14);
            }
        }
        assert!(slides > 100, "only {slides} sliding samples");
    }

    #[test]
    fn surface_return_map_guards() {
        let mut g = rng(18);
        let w = rotation(&mut g);
        let f = f_from_r(&w, [1.0, 0.1, 0.3, 0.9, -0.4, 0.7]);
        // c_F = 0: all shear removed in compression.
        let p0 = SurfaceParams::from_material(400.0, 0.3, 500.0, 2000.0, 0.0).unwrap();
        let (fnew, ev) = surface_return_map(&p0, &f, EPS, false);
        assert_eq!(ev, ReturnEvent::Slide);
        let r2 = qr3(&fnew).r;
        assert!(r2.m[0][2].abs() < 1e-15 && r2.m[1][2].abs() < 1e-15);
        assert!((r2.m[2][2] - 0.7).abs() < 1e-15);
        // γ = 0: no-op in compression, no division by zero; even with c_F = 0 and k = 0.
        for (k, phi) in [(2000.0, 30.0), (0.0, 0.0)] {
            let pg = SurfaceParams::from_material(400.0, 0.3, 0.0, k, phi).unwrap();
            assert_eq!(surface_return_map(&pg, &f, EPS, false), (f, ReturnEvent::Elastic));
        }
        // r̂33 = 1 exactly: f_n = 0, any shear is removed.
        let p = params();
        let r = Mat3::from_rows_array([[1.0, 0.0, 0.2], [0.0, 1.0, 0.1], [0.0, 0.0, 1.0]]);
        let (rp, ev) = surface_project_r(&p, &r, false);
        assert_eq!(ev, ReturnEvent::Slide);
        assert_eq!((rp.m[0][2], rp.m[1][2], rp.m[2][2]), (0.0, 0.0, 1.0));
        // No shear at all: elastic even with c_F = 0.
        let r = Mat3::from_rows_array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.5]]);
        assert_eq!(surface_project_r(&p0, &r, false), (r, ReturnEvent::Elastic));
    }

    #[test]
    fn surface_f32_smoke() {
        let p = params();
        let p32 = p.cast::<f32>();
        let mut g = rng(19);
        for _ in 0..200 {
            let f = round_to::<f32>(&near_identity(&mut g, 0.3));
            let eps32 = default_degenerate_eps::<f32>();
            let (Some(a), Some(b)) = (surface_piola(&p, &f, EPS), surface_piola(&p32, &f.cast(), eps32))
            else {
                continue;
            };
            assert!(b.is_finite());
            assert!(rel_err(&b.cast(), &a, 1.0) < 1e-4, "{b:?} vs {a:?}");
            let e64 = surface_energy(&p, &f);
            let e32 = surface_energy(&p32, &f.cast()) as f64;
            assert!((e32 - e64).abs() <= 1e-4 * e64.max(1.0));
            let (m64, ev64) = surface_return_map(&p, &f, EPS, true);
            let (m32, _) = surface_return_map(&p32, &f.cast(), eps32, true);
            assert!(m32.is_finite());
            if ev64 != ReturnEvent::Elastic {
                assert!(rel_err(&m32.cast(), &m64, 1.0) < 1e-4);
            }
        }
    }
}
