//! Small fixed-size linear algebra for f32 and f64.
//!
//! MPM and PBD state is f32 (the GPU has no f64 to rely on); implicit cloth and
//! EOL use f64. The same generic code serves both through [`Real`], so the f32
//! CPU path and the WGSL kernels can share one description of the math.
//!
//! Storage is row-major (`m[row][col]`), plain `Copy` values, no heap.
//!
//! Decompositions (bounded loops, no allocation, so each has a WGSL twin in spirit):
//! [`svd3`] (signed SVD, `U, V ∈ SO(3)`), [`polar3`], [`qr3`] (proper-rotation `Q`, signed `r33`,
//! spec `mpm_anisotropic.md` §4.1), [`sym_eigen3`], and the 2×2 closed forms of that spec's
//! Appendix A: [`polar2_angle`], [`svd2_signed`], [`qr2`].

#[cfg(test)]
mod decomp_tests;
mod eigen;
mod mat2;
mod mat3;
mod polar;
mod qr;
mod quat;
mod svd;
mod vec3;

pub use eigen::{SymEigen3, sym_eigen3};
pub use mat2::{Mat2, Svd2, mat2_mul, polar2_angle, qr2, rot2, svd2_signed};
pub use mat3::Mat3;
pub use polar::polar_rotation;
pub use qr::{Qr3, qr3};
pub use quat::{EXTRACT_ROTATION_GUARD, EXTRACT_ROTATION_TOL, Quat, extract_rotation};
pub use svd::{Svd3, polar3, svd3};
pub use vec3::Vec3;

/// What the WGSL twins of these files read through the generated prelude
/// (`gpu/wgsl.rs`): the same constants and tolerance expressions the CPU uses.
pub(crate) mod wgsl_shared {
    pub(crate) use super::eigen::{MAX_SWEEPS, jacobi_big};
    pub(crate) use super::polar::{MAX_ITERS as POLAR_MAX_ITERS, det_floor as polar_det_floor};
    pub(crate) use super::polar::{minus_third as polar_minus_third, tolerance as polar_tolerance};
    pub(crate) use super::qr::REORTH_PASSES;
    pub(crate) use super::svd::svd_tolerances;
}

use core::fmt::Debug;
use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// A floating-point scalar: `f32` or `f64`.
pub trait Real:
    Copy
    + Clone
    + Debug
    + Default
    + PartialEq
    + PartialOrd
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
{
    const ZERO: Self;
    const ONE: Self;
    const TWO: Self;
    const HALF: Self;
    /// Machine epsilon of the type.
    const EPSILON: Self;
    /// Smallest positive normal value (below it lie the subnormals).
    const MIN_POSITIVE: Self;
    const PI: Self;
    /// Not-a-number, returned where a decomposition is asked about a non-finite matrix.
    const NAN: Self;

    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    fn sqrt(self) -> Self;
    fn abs(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn atan2(self, other: Self) -> Self;
    fn ln(self) -> Self;
    fn exp(self) -> Self;
    fn hypot(self, other: Self) -> Self;
    fn max(self, other: Self) -> Self;
    fn min(self, other: Self) -> Self;
    fn is_finite(self) -> bool;
    fn signum(self) -> Self;
    fn powi(self, n: i32) -> Self;
    fn floor(self) -> Self;
    fn acos(self) -> Self;

    /// `self` clamped to `[lo, hi]`.
    #[inline]
    fn clamp_to(self, lo: Self, hi: Self) -> Self {
        self.max(lo).min(hi)
    }
}

macro_rules! impl_real {
    ($t:ty) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const TWO: Self = 2.0;
            const HALF: Self = 0.5;
            const EPSILON: Self = <$t>::EPSILON;
            const MIN_POSITIVE: Self = <$t>::MIN_POSITIVE;
            const PI: Self = core::f64::consts::PI as $t;
            const NAN: Self = <$t>::NAN;

            #[inline]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline]
            fn sin(self) -> Self {
                <$t>::sin(self)
            }
            #[inline]
            fn cos(self) -> Self {
                <$t>::cos(self)
            }
            #[inline]
            fn atan2(self, other: Self) -> Self {
                <$t>::atan2(self, other)
            }
            #[inline]
            fn ln(self) -> Self {
                <$t>::ln(self)
            }
            #[inline]
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            #[inline]
            fn hypot(self, other: Self) -> Self {
                <$t>::hypot(self, other)
            }
            #[inline]
            fn max(self, other: Self) -> Self {
                <$t>::max(self, other)
            }
            #[inline]
            fn min(self, other: Self) -> Self {
                <$t>::min(self, other)
            }
            #[inline]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline]
            fn signum(self) -> Self {
                <$t>::signum(self)
            }
            #[inline]
            fn powi(self, n: i32) -> Self {
                <$t>::powi(self, n)
            }
            #[inline]
            fn floor(self) -> Self {
                <$t>::floor(self)
            }
            #[inline]
            fn acos(self) -> Self {
                <$t>::acos(self)
            }
        }
    };
}
impl_real!(f32);
impl_real!(f64);
