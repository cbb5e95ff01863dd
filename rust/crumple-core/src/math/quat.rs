//! Unit quaternions `(w, x, y, z)` and the iterative rotation extraction of
//! Müller, Bender, Chentanez, Macklin 2016 ("A robust method to extract the
//! rotational part of deformations"), which the shape-matching solver uses
//! warm-started from each cluster's previous rotation (spec shape_matching
//! §3.3). Plain arithmetic only (no SVD, no closed-form roots), so the WGSL
//! twin can follow it operation for operation.

use super::{Mat3, Real, Vec3};

/// A quaternion `w + x i + y j + z k`; rotations are unit quaternions, and
/// `q` and `−q` are the same rotation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quat<T> {
    /// Scalar part.
    pub w: T,
    /// Vector part, i.
    pub x: T,
    /// Vector part, j.
    pub y: T,
    /// Vector part, k.
    pub z: T,
}

impl<T: Real> Default for Quat<T> {
    fn default() -> Self {
        Self::identity()
    }
}

impl<T: Real> Quat<T> {
    /// `(w, x, y, z)`.
    #[inline]
    pub const fn new(w: T, x: T, y: T, z: T) -> Self {
        Self { w, x, y, z }
    }

    /// The identity rotation.
    #[inline]
    pub fn identity() -> Self {
        Self::new(T::ONE, T::ZERO, T::ZERO, T::ZERO)
    }

    /// Rotation by `angle` (rad) about the unit vector `axis`.
    #[inline]
    pub fn from_axis_angle(axis: Vec3<T>, angle: T) -> Self {
        let h = angle * T::HALF;
        let s = h.sin();
        Self::new(h.cos(), axis.x * s, axis.y * s, axis.z * s)
    }

    /// Four-component dot product (the cosine of half the angle between two
    /// unit quaternions, up to sign).
    #[inline]
    pub fn dot(self, o: Self) -> T {
        self.w * o.w + self.x * o.x + self.y * o.y + self.z * o.z
    }

    /// Euclidean length.
    #[inline]
    pub fn norm(self) -> T {
        self.dot(self).sqrt()
    }

    /// `self · s`.
    #[inline]
    pub fn scale(self, s: T) -> Self {
        Self::new(self.w * s, self.x * s, self.y * s, self.z * s)
    }

    /// `self / |self|`, or the identity when the length is not positive and finite.
    #[inline]
    pub fn normalize(self) -> Self {
        let n = self.norm();
        if n > T::ZERO && n.is_finite() {
            self.scale(T::ONE / n)
        } else {
            Self::identity()
        }
    }

    /// The rotation matrix of a unit quaternion.
    #[inline]
    pub fn to_mat3(self) -> Mat3<T> {
        let (w, x, y, z) = (self.w, self.x, self.y, self.z);
        let two = T::TWO;
        Mat3::from_rows_array([
            [
                T::ONE - two * (y * y + z * z),
                two * (x * y - w * z),
                two * (x * z + w * y),
            ],
            [
                two * (x * y + w * z),
                T::ONE - two * (x * x + z * z),
                two * (y * z - w * x),
            ],
            [
                two * (x * z - w * y),
                two * (y * z + w * x),
                T::ONE - two * (x * x + y * y),
            ],
        ])
    }

    /// Every component finite.
    #[inline]
    pub fn is_finite(self) -> bool {
        self.w.is_finite() && self.x.is_finite() && self.y.is_finite() && self.z.is_finite()
    }
}

/// Hamilton product `self · o` (apply `o` first, then `self`).
impl<T: Real> core::ops::Mul for Quat<T> {
    type Output = Self;
    #[inline]
    fn mul(self, o: Self) -> Self {
        Self::new(
            self.w * o.w - self.x * o.x - self.y * o.y - self.z * o.z,
            self.w * o.x + self.x * o.w + self.y * o.z - self.z * o.y,
            self.w * o.y - self.x * o.z + self.y * o.w + self.z * o.x,
            self.w * o.z + self.x * o.y - self.y * o.x + self.z * o.w,
        )
    }
}

/// Component-wise sum (for averaging sign-aligned quaternions).
impl<T: Real> core::ops::Add for Quat<T> {
    type Output = Self;
    #[inline]
    fn add(self, o: Self) -> Self {
        Self::new(self.w + o.w, self.x + o.x, self.y + o.y, self.z + o.z)
    }
}

/// Rotations below this angle (rad) end the iteration of [`extract_rotation`]:
/// in f32 an update of 1e-6 rad is below the rounding of the quaternion itself.
pub const EXTRACT_ROTATION_TOL: f64 = 1e-6;

/// Added to the denominator of [`extract_rotation`]'s step (a zero `a` leaves q).
pub const EXTRACT_ROTATION_GUARD: f64 = 1e-9;

/// Müller et al. 2016: improves the rotation `q` towards the rotational
/// polar factor of `a` by at most `max_iter` steps
/// `ω = Σ_k r_k × a_k / (|Σ_k r_k · a_k| + 1e-9)`, `q ← exp(ω) q` (r_k, a_k
/// the columns of R(q) and `a`), stopping once |ω| < [`EXTRACT_ROTATION_TOL`].
/// `q` stays a proper rotation for any `a` (inverted, singular, zero), which
/// is why shape matching uses it instead of an SVD (spec shape_matching §3.3).
/// A zero `a` leaves `q` unchanged. Returns the iterations taken.
pub fn extract_rotation<T: Real>(a: &Mat3<T>, q: &mut Quat<T>, max_iter: u32) -> u32 {
    let tol = T::from_f64(EXTRACT_ROTATION_TOL);
    let guard = T::from_f64(EXTRACT_ROTATION_GUARD);
    for it in 0..max_iter {
        let r = q.to_mat3();
        let (r0, r1, r2) = (r.col(0), r.col(1), r.col(2));
        let (a0, a1, a2) = (a.col(0), a.col(1), a.col(2));
        let num = r0.cross(a0) + r1.cross(a1) + r2.cross(a2);
        let den = (r0.dot(a0) + r1.dot(a1) + r2.dot(a2)).abs() + guard;
        let omega = num * (T::ONE / den);
        let angle = omega.norm();
        // Converged, or a non-finite input (a NaN angle is not ≥ tol): keep q.
        let moving = angle >= tol;
        if !moving {
            return it;
        }
        *q = (Quat::from_axis_angle(omega * (T::ONE / angle), angle) * *q).normalize();
    }
    max_iter
}

#[cfg(test)]
#[path = "quat_tests.rs"]
mod tests;
