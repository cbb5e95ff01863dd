//! Discrete-shell hinge: signed dihedral angle, its exact gradient, and the
//! Gauss–Newton bending force/Jacobian (spec `persistent_wrinkles.md` §3).
//!
//! A hinge is an interior edge `(x0, x1)` with its two wing vertices: face 0
//! is `(x0, x1, x2)` and face 1 is `(x1, x0, x3)` as cyclic orders (§2.1), so a
//! consistently oriented flat pair has `θ = 0` (§3.1).
//!
//! Units: positions in m, angles in rad, `∂θ/∂x` in rad/m, stiffnesses κ in J
//! (N·m), moments `s κ (θ − θ_rest)` in J/rad, forces in N, Jacobian blocks in N/m.
//!
//! Degenerate hinges (a zero-length edge, or a wing whose face normal cannot
//! be normalised because the wing tip lies on the edge line) have no defined
//! bend angle: every function here then treats the hinge as flat with zero
//! gradient, so it exerts no force, and never panics or returns NaN.

use crate::math::{Mat3, Vec3};

/// The wing-height guard of §3.3/§10 A7 as a fraction of the edge length:
/// `h ← max(h, 1e-3·|e|)` (ARCSim's guard). The reference code's `max(h, |e|)`
/// under-scales forces on short wings and breaks torque balance, so it is not used.
const HEIGHT_GUARD: f64 = 1e-3;

/// Relative size below which the edge is taken as zero-length (`|e| ≤ 1e-12 · L`,
/// `L` the longest of the edge and the two wings from `x0`).
const EDGE_EPS: f64 = 1e-12;

/// Relative size below which a face normal is not normalisable: the wing is
/// collinear with the edge to within `|e × w| ≤ 1e-14 |e| |w|` (angle ≈ 1e-14 rad).
const NORMAL_EPS: f64 = 1e-14;

/// Geometry shared by the angle and the gradient: the edge `e = x1 − x0`, the
/// two unnormalised face normals `c0 = e × (x2 − x0)`, `c1 = (x0 − x1) × (x3 − x1)`
/// (`|c_i| = |e| h_i`), the wings from `x0`, and the squared lengths.
struct HingeFrame {
    e: Vec3<f64>,
    e2: f64,
    w0: Vec3<f64>,
    w1: Vec3<f64>,
    c0: Vec3<f64>,
    c1: Vec3<f64>,
    c0_len: f64,
    c1_len: f64,
}

impl HingeFrame {
    /// `None` for a degenerate hinge (see the module docs).
    #[inline]
    fn new(x: &[Vec3<f64>; 4]) -> Option<Self> {
        let e = x[1] - x[0];
        let w0 = x[2] - x[0];
        let w1 = x[3] - x[0];
        let e2 = e.norm_squared();
        let e_len = e2.sqrt();
        let w0_len = w0.norm();
        let w1_len = w1.norm();
        let l = e_len.max(w0_len).max(w1_len);
        // e2 must also stay a normal number: t_i = e·w_i / e2 below divides by it. Written as
        // "valid" tests so that NaN coordinates also end up degenerate.
        let edge_ok = e2 > f64::MIN_POSITIVE && e_len > EDGE_EPS * l;
        if !edge_ok {
            return None;
        }
        // §3.1 face normals (unnormalised). Face 1 winds x1 → x0 → x3, so its normal is
        // (x0 − x1) × (x3 − x1) = (−e) × (w1 − e) = w1 × e (the e × e part vanishes); the short
        // form is the same vector with less rounding.
        let c0 = e.cross(w0);
        let c1 = w1.cross(e);
        let c0_len = c0.norm();
        let c1_len = c1.norm();
        let normals_ok = c0_len > NORMAL_EPS * e_len * w0_len && c1_len > NORMAL_EPS * e_len * w1_len;
        if !normals_ok {
            return None;
        }
        Some(Self {
            e,
            e2,
            w0,
            w1,
            c0,
            c1,
            c0_len,
            c1_len,
        })
    }

    /// §3.1: `θ = atan2(ê'·(n0 × n1), n0·n1)` with `ê' = −e/|e|`. The common positive
    /// factor `1/(|c0||c1|)` of both atan2 arguments is left out (atan2 is scale-free),
    /// and `ê'` is replaced by `−e` for the same reason.
    #[inline]
    fn angle(&self) -> f64 {
        let sin_part = -self.e.dot(self.c0.cross(self.c1));
        let cos_part = self.c0.dot(self.c1) * self.e2.sqrt();
        sin_part.atan2(cos_part)
    }
}

/// Signed dihedral (bend) angle of the hinge `(x0, x1, x2, x3)` in rad, in `(−π, π]`,
/// flat = 0 (spec §3.1; face 0 = `(x0, x1, x2)`, face 1 = `(x1, x0, x3)`). Rotating a wing
/// toward the side its face normal points to gives a positive angle. Returns 0 for a
/// degenerate hinge (zero-length edge or a wing collinear with the edge).
#[inline]
pub fn dihedral_angle(x: &[Vec3<f64>; 4]) -> f64 {
    HingeFrame::new(x).map_or(0.0, |f| f.angle())
}

/// Angle (rad) and its exact gradient `g_k = ∂θ/∂x_k` (rad/m, order x0..x3) by the
/// Bridson/Tamstorf–Grinspun form of spec §3.3, with the wing heights guarded as
/// `h_i ← max(h_i, 1e-3·|e|)` (§10 A7, *not* the reference code's `max(h, |e|)`).
///
/// The gradient satisfies `Σ_k g_k = 0` always and `Σ_k x_k × g_k = 0` whenever the guard
/// is inactive (both wings taller than `1e-3|e|`); when it is active the force on that
/// wing is capped and the torque balance holds only approximately. A degenerate hinge
/// (see [`dihedral_angle`]) returns `(0, [0; 4])`.
#[inline]
pub fn dihedral_angle_and_gradient(x: &[Vec3<f64>; 4]) -> (f64, [Vec3<f64>; 4]) {
    angle_and_gradient_guarded(x, HEIGHT_GUARD)
}

/// [`dihedral_angle_and_gradient`] with the height guard `max(h, rel_guard·|e|)` as a
/// parameter, so the tests can show what the reference code's `rel_guard = 1` does.
#[inline]
fn angle_and_gradient_guarded(x: &[Vec3<f64>; 4], rel_guard: f64) -> (f64, [Vec3<f64>; 4]) {
    let Some(f) = HingeFrame::new(x) else {
        return (0.0, [Vec3::zero(); 4]);
    };
    let theta = f.angle();
    let e_len = f.e2.sqrt();
    let inv_e2 = 1.0 / f.e2;
    // §3.3: projections of the wing tips on the edge, as fractions of e.
    let t0 = f.e.dot(f.w0) * inv_e2;
    let t1 = f.e.dot(f.w1) * inv_e2;
    // Wing heights from the face areas (|c_i| = |e| h_i): the same as |w_i − t_i e| but
    // without the cancellation of the subtraction. Guarded per §3.3/A7.
    let guard = rel_guard * e_len;
    let h0 = (f.c0_len / e_len).max(guard);
    let h1 = (f.c1_len / e_len).max(guard);
    // n_i / h_i, with the unit normals n_i = c_i/|c_i| (face 1 in its own winding).
    let a0 = f.c0 * (1.0 / (f.c0_len * h0));
    let a1 = f.c1 * (1.0 / (f.c1_len * h1));
    let g = [a0 * (t0 - 1.0) + a1 * (t1 - 1.0), a0 * (-t0) + a1 * (-t1), a0, a1];
    (theta, g)
}

/// Hinge shape factor `s = l̄² / (Ā0 + Ā1)` (dimensionless; spec §2.4), from the rest edge
/// length `rest_length` (m) and the rest areas of the two faces (m²). Returns 0 (no
/// bending) when the summed area is not positive and finite; rest data is validated
/// upstream ([`super::membrane::TriangleRest::from_uv`] rejects degenerate triangles).
#[inline]
pub fn shape_factor(rest_length: f64, area0: f64, area1: f64) -> f64 {
    let a = area0 + area1;
    if a > 0.0 && a.is_finite() {
        rest_length * rest_length / a
    } else {
        0.0
    }
}

/// Hinge forces `f_k = −moment · g_k` (N) from the angle gradient `grad` (rad/m) and
/// `moment = s[κ_b(θ − θ_rest) + κ_f Δ]` (J/rad), spec §3.4; Δ is the friction deviation
/// after this step's friction update (§4.1). The moment is the derivative of the energy
/// with respect to θ, so these are `−∇W`.
#[inline]
pub fn hinge_forces(grad: &[Vec3<f64>; 4], moment: f64) -> [Vec3<f64>; 4] {
    let m = -moment;
    [grad[0] * m, grad[1] * m, grad[2] * m, grad[3] * m]
}

/// Gauss–Newton Jacobian block `(a, b)` of the hinge (N/m):
/// `∂f_a/∂x_b ≈ −coef · g_a g_bᵀ` with `coef = s(κ_b + κ_f) ≥ 0` (J/rad²), spec §3.4.
/// The `(θ − θ_rest)∂²θ/∂x²` and `Δ ∂²θ/∂x²` terms are dropped on purpose (keeps the
/// 12×12 element matrix rank 1 and negative semidefinite). `a, b ∈ 0..4`.
#[inline]
pub fn hinge_jacobian_block(grad: &[Vec3<f64>; 4], coef: f64, a: usize, b: usize) -> Mat3<f64> {
    // Scale after the outer product: g_a,i·g_b,j is commutative bitwise, so block (b, a) is
    // exactly the transpose of block (a, b).
    Mat3::outer(grad[a], grad[b]) * (-coef)
}

/// Hinge energy `½ κ s (θ(x) − θ0)²` (J) for stiffness `kappa` (J), shape factor `s` and
/// rest angle `theta0` (rad), spec §3.2 (W_b with θ0 = θ̄ + θ_p, or W_f with θ0 = θ_a).
/// For tests and diagnostics.
#[inline]
pub fn hinge_energy(x: &[Vec3<f64>; 4], s: f64, kappa: f64, theta0: f64) -> f64 {
    let d = dihedral_angle(x) - theta0;
    0.5 * kappa * s * d * d
}

#[cfg(test)]
#[path = "hinge_tests.rs"]
mod tests;
