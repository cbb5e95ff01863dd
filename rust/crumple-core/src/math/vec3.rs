//! 3-vectors.

use super::Real;
use core::ops::{Add, AddAssign, Index, IndexMut, Mul, MulAssign, Neg, Sub, SubAssign};

/// A 3-vector. `#[repr(C)]` so a `&[Vec3<f32>]` can be viewed as `&[f32]`
/// (3 per point) when crossing to numpy or the GPU.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Vec3<T> {
    pub x: T,
    pub y: T,
    pub z: T,
}

// SAFETY: `#[repr(C)]` of three f32 (no padding, every bit pattern valid):
// what `bytemuck::Pod` requires. The shape-matching loop reads positions
// through an `&[f32]` view (`pbd/sm_kernels.rs`).
unsafe impl bytemuck::Zeroable for Vec3<f32> {}
// SAFETY: as above.
unsafe impl bytemuck::Pod for Vec3<f32> {}

impl<T: Real> Vec3<T> {
    #[inline]
    pub const fn new(x: T, y: T, z: T) -> Self {
        Self { x, y, z }
    }
    #[inline]
    pub fn zero() -> Self {
        Self::new(T::ZERO, T::ZERO, T::ZERO)
    }
    #[inline]
    pub fn splat(v: T) -> Self {
        Self::new(v, v, v)
    }
    /// Unit vector along axis `i` (0, 1, 2).
    #[inline]
    pub fn unit(i: usize) -> Self {
        let mut v = Self::zero();
        v[i] = T::ONE;
        v
    }
    #[inline]
    pub fn from_array(a: [T; 3]) -> Self {
        Self::new(a[0], a[1], a[2])
    }
    #[inline]
    pub fn to_array(self) -> [T; 3] {
        [self.x, self.y, self.z]
    }
    #[inline]
    pub fn dot(self, o: Self) -> T {
        self.x * o.x + self.y * o.y + self.z * o.z
    }
    #[inline]
    pub fn cross(self, o: Self) -> Self {
        Self::new(
            self.y * o.z - self.z * o.y,
            self.z * o.x - self.x * o.z,
            self.x * o.y - self.y * o.x,
        )
    }
    #[inline]
    pub fn norm_squared(self) -> T {
        self.dot(self)
    }
    #[inline]
    pub fn norm(self) -> T {
        self.norm_squared().sqrt()
    }
    /// `self / |self|`, or `None` when the length is below `eps`.
    #[inline]
    pub fn try_normalize(self, eps: T) -> Option<Self> {
        let n = self.norm();
        if n > eps { Some(self * (T::ONE / n)) } else { None }
    }
    /// `self / |self|`; zero stays zero.
    #[inline]
    pub fn normalize_or_zero(self) -> Self {
        self.try_normalize(T::ZERO).unwrap_or_else(Self::zero)
    }
    #[inline]
    pub fn component_mul(self, o: Self) -> Self {
        Self::new(self.x * o.x, self.y * o.y, self.z * o.z)
    }
    #[inline]
    pub fn component_min(self, o: Self) -> Self {
        Self::new(self.x.min(o.x), self.y.min(o.y), self.z.min(o.z))
    }
    #[inline]
    pub fn component_max(self, o: Self) -> Self {
        Self::new(self.x.max(o.x), self.y.max(o.y), self.z.max(o.z))
    }
    #[inline]
    pub fn abs(self) -> Self {
        Self::new(self.x.abs(), self.y.abs(), self.z.abs())
    }
    #[inline]
    pub fn max_element(self) -> T {
        self.x.max(self.y).max(self.z)
    }
    #[inline]
    pub fn min_element(self) -> T {
        self.x.min(self.y).min(self.z)
    }
    #[inline]
    pub fn is_finite(self) -> bool {
        self.x.is_finite() && self.y.is_finite() && self.z.is_finite()
    }
    /// Converts between `f32` and `f64`.
    #[inline]
    pub fn cast<U: Real>(self) -> Vec3<U> {
        Vec3::new(
            U::from_f64(self.x.to_f64()),
            U::from_f64(self.y.to_f64()),
            U::from_f64(self.z.to_f64()),
        )
    }
    /// Any unit vector orthogonal to `self` (which must be non-zero).
    pub fn any_orthogonal(self) -> Self {
        let a = self.abs();
        let other = if a.x <= a.y && a.x <= a.z {
            Self::unit(0)
        } else if a.y <= a.z {
            Self::unit(1)
        } else {
            Self::unit(2)
        };
        self.cross(other).normalize_or_zero()
    }
}

impl<T> Index<usize> for Vec3<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        match i {
            0 => &self.x,
            1 => &self.y,
            2 => &self.z,
            _ => panic!("Vec3 index {i} out of range"),
        }
    }
}
impl<T> IndexMut<usize> for Vec3<T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        match i {
            0 => &mut self.x,
            1 => &mut self.y,
            2 => &mut self.z,
            _ => panic!("Vec3 index {i} out of range"),
        }
    }
}

impl<T: Real> Add for Vec3<T> {
    type Output = Self;
    #[inline]
    fn add(self, o: Self) -> Self {
        Self::new(self.x + o.x, self.y + o.y, self.z + o.z)
    }
}
impl<T: Real> Sub for Vec3<T> {
    type Output = Self;
    #[inline]
    fn sub(self, o: Self) -> Self {
        Self::new(self.x - o.x, self.y - o.y, self.z - o.z)
    }
}
impl<T: Real> Neg for Vec3<T> {
    type Output = Self;
    #[inline]
    fn neg(self) -> Self {
        Self::new(-self.x, -self.y, -self.z)
    }
}
impl<T: Real> Mul<T> for Vec3<T> {
    type Output = Self;
    #[inline]
    fn mul(self, s: T) -> Self {
        Self::new(self.x * s, self.y * s, self.z * s)
    }
}
impl Mul<Vec3<f32>> for f32 {
    type Output = Vec3<f32>;
    #[inline]
    fn mul(self, v: Vec3<f32>) -> Vec3<f32> {
        v * self
    }
}
impl Mul<Vec3<f64>> for f64 {
    type Output = Vec3<f64>;
    #[inline]
    fn mul(self, v: Vec3<f64>) -> Vec3<f64> {
        v * self
    }
}
impl<T: Real> AddAssign for Vec3<T> {
    #[inline]
    fn add_assign(&mut self, o: Self) {
        *self = *self + o;
    }
}
impl<T: Real> SubAssign for Vec3<T> {
    #[inline]
    fn sub_assign(&mut self, o: Self) {
        *self = *self - o;
    }
}
impl<T: Real> MulAssign<T> for Vec3<T> {
    #[inline]
    fn mul_assign(&mut self, s: T) {
        *self = *self * s;
    }
}
