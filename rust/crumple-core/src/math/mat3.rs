//! 3×3 matrices.

use super::{Real, Vec3};
use core::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// A 3×3 matrix stored row-major: `m[row][col]`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Mat3<T> {
    pub m: [[T; 3]; 3],
}

impl<T: Real> Mat3<T> {
    #[inline]
    pub const fn from_rows_array(m: [[T; 3]; 3]) -> Self {
        Self { m }
    }
    #[inline]
    pub fn zero() -> Self {
        Self { m: [[T::ZERO; 3]; 3] }
    }
    #[inline]
    pub fn identity() -> Self {
        Self::from_diagonal(Vec3::splat(T::ONE))
    }
    #[inline]
    pub fn from_diagonal(d: Vec3<T>) -> Self {
        let mut r = Self::zero();
        r.m[0][0] = d.x;
        r.m[1][1] = d.y;
        r.m[2][2] = d.z;
        r
    }
    #[inline]
    pub fn from_rows(r0: Vec3<T>, r1: Vec3<T>, r2: Vec3<T>) -> Self {
        Self {
            m: [r0.to_array(), r1.to_array(), r2.to_array()],
        }
    }
    #[inline]
    pub fn from_cols(c0: Vec3<T>, c1: Vec3<T>, c2: Vec3<T>) -> Self {
        Self::from_rows(c0, c1, c2).transpose()
    }
    /// The outer product `a bᵀ`.
    #[inline]
    pub fn outer(a: Vec3<T>, b: Vec3<T>) -> Self {
        Self::from_rows(b * a.x, b * a.y, b * a.z)
    }
    /// The cross-product matrix `[a]×` with `[a]× b = a × b`.
    #[inline]
    pub fn skew(a: Vec3<T>) -> Self {
        let z = T::ZERO;
        Self {
            m: [[z, -a.z, a.y], [a.z, z, -a.x], [-a.y, a.x, z]],
        }
    }
    /// Rotation by `angle` radians about the unit vector `axis` (Rodrigues).
    pub fn from_axis_angle(axis: Vec3<T>, angle: T) -> Self {
        let k = Self::skew(axis);
        Self::identity() + k * angle.sin() + (k * k) * (T::ONE - angle.cos())
    }
    #[inline]
    pub fn row(&self, i: usize) -> Vec3<T> {
        Vec3::from_array(self.m[i])
    }
    #[inline]
    pub fn col(&self, j: usize) -> Vec3<T> {
        Vec3::new(self.m[0][j], self.m[1][j], self.m[2][j])
    }
    #[inline]
    pub fn set_col(&mut self, j: usize, c: Vec3<T>) {
        self.m[0][j] = c.x;
        self.m[1][j] = c.y;
        self.m[2][j] = c.z;
    }
    #[inline]
    pub fn diagonal(&self) -> Vec3<T> {
        Vec3::new(self.m[0][0], self.m[1][1], self.m[2][2])
    }
    #[inline]
    pub fn transpose(&self) -> Self {
        let m = &self.m;
        Self {
            m: [
                [m[0][0], m[1][0], m[2][0]],
                [m[0][1], m[1][1], m[2][1]],
                [m[0][2], m[1][2], m[2][2]],
            ],
        }
    }
    #[inline]
    pub fn trace(&self) -> T {
        self.m[0][0] + self.m[1][1] + self.m[2][2]
    }
    #[inline]
    pub fn determinant(&self) -> T {
        self.col(0).dot(self.col(1).cross(self.col(2)))
    }
    /// Cofactor matrix: `cof(A) = det(A) A^{-T}` for invertible `A`, defined for all `A`.
    pub fn cofactor(&self) -> Self {
        let (c0, c1, c2) = (self.col(0), self.col(1), self.col(2));
        Self::from_cols(c1.cross(c2), c2.cross(c0), c0.cross(c1))
    }
    /// The inverse, or `None` when `|det| ≤ eps`.
    pub fn try_inverse(&self, eps: T) -> Option<Self> {
        let det = self.determinant();
        if det.abs() <= eps || !det.is_finite() {
            return None;
        }
        Some(self.cofactor().transpose() * (T::ONE / det))
    }
    /// Frobenius inner product `A : B = Σ a_ij b_ij`.
    #[inline]
    pub fn ddot(&self, o: &Self) -> T {
        let mut s = T::ZERO;
        for i in 0..3 {
            for j in 0..3 {
                s += self.m[i][j] * o.m[i][j];
            }
        }
        s
    }
    #[inline]
    pub fn norm_squared(&self) -> T {
        self.ddot(self)
    }
    /// Frobenius norm.
    #[inline]
    pub fn norm(&self) -> T {
        self.norm_squared().sqrt()
    }
    #[inline]
    pub fn is_finite(&self) -> bool {
        self.m.iter().all(|r| r.iter().all(|v| v.is_finite()))
    }
    #[inline]
    pub fn max_abs(&self) -> T {
        let mut s = T::ZERO;
        for r in &self.m {
            for v in r {
                s = s.max(v.abs());
            }
        }
        s
    }
    /// Converts between `f32` and `f64`.
    #[inline]
    pub fn cast<U: Real>(&self) -> Mat3<U> {
        Mat3::from_rows(self.row(0).cast(), self.row(1).cast(), self.row(2).cast())
    }
    /// `(A + Aᵀ) / 2`.
    #[inline]
    pub fn symmetric_part(&self) -> Self {
        (*self + self.transpose()) * T::HALF
    }
}

impl<T: Real> Add for Mat3<T> {
    type Output = Self;
    #[inline]
    fn add(self, o: Self) -> Self {
        Self::from_rows(
            self.row(0) + o.row(0),
            self.row(1) + o.row(1),
            self.row(2) + o.row(2),
        )
    }
}
impl<T: Real> Sub for Mat3<T> {
    type Output = Self;
    #[inline]
    fn sub(self, o: Self) -> Self {
        Self::from_rows(
            self.row(0) - o.row(0),
            self.row(1) - o.row(1),
            self.row(2) - o.row(2),
        )
    }
}
impl<T: Real> Neg for Mat3<T> {
    type Output = Self;
    #[inline]
    fn neg(self) -> Self {
        self * (-T::ONE)
    }
}
impl<T: Real> Mul<T> for Mat3<T> {
    type Output = Self;
    #[inline]
    fn mul(self, s: T) -> Self {
        Self::from_rows(self.row(0) * s, self.row(1) * s, self.row(2) * s)
    }
}
impl<T: Real> Mul<Vec3<T>> for Mat3<T> {
    type Output = Vec3<T>;
    #[inline]
    fn mul(self, v: Vec3<T>) -> Vec3<T> {
        Vec3::new(self.row(0).dot(v), self.row(1).dot(v), self.row(2).dot(v))
    }
}
impl<T: Real> Mul for Mat3<T> {
    type Output = Self;
    #[inline]
    fn mul(self, o: Self) -> Self {
        let mut r = Self::zero();
        for i in 0..3 {
            for j in 0..3 {
                r.m[i][j] = self.m[i][0] * o.m[0][j] + self.m[i][1] * o.m[1][j] + self.m[i][2] * o.m[2][j];
            }
        }
        r
    }
}
impl<T: Real> AddAssign for Mat3<T> {
    #[inline]
    fn add_assign(&mut self, o: Self) {
        *self = *self + o;
    }
}
impl<T: Real> SubAssign for Mat3<T> {
    #[inline]
    fn sub_assign(&mut self, o: Self) {
        *self = *self - o;
    }
}
impl<T: Real> MulAssign<T> for Mat3<T> {
    #[inline]
    fn mul_assign(&mut self, s: T) {
        *self = *self * s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_and_cofactor_agree() {
        let a = Mat3::<f64>::from_rows_array([[2.0, 1.0, 0.5], [0.3, 3.0, -1.0], [1.0, 0.0, 4.0]]);
        let inv = a.try_inverse(1e-12).unwrap();
        let e = (a * inv - Mat3::identity()).max_abs();
        assert!(e < 1e-12, "A A^-1 - I = {e}");
        assert!(Mat3::<f64>::zero().try_inverse(1e-12).is_none());
    }

    #[test]
    fn axis_angle_is_rotation() {
        let r = Mat3::<f64>::from_axis_angle(Vec3::new(1.0, 2.0, 2.0) * (1.0 / 3.0), 0.7);
        assert!((r.determinant() - 1.0).abs() < 1e-12);
        assert!((r.transpose() * r - Mat3::identity()).max_abs() < 1e-12);
    }
}
