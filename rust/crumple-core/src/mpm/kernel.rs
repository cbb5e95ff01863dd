//! B-spline interpolation kernels (spec `mpm_anisotropic.md` §3.1).
//!
//! A particle at grid-unit position `ξ = (x_p − origin)/h` interacts with `K` nodes per axis
//! (`K = 3` quadratic, `K = 4` cubic), starting at node index [`Stencil::base`]. The weight of the node
//! at `base + (a, b, c)` is the tensor product `w[0][a] · w[1][b] · w[2][c]` of per-axis B-spline
//! values, and its gradient with respect to `x_p` has the per-axis derivatives (already divided by
//! `h`) in one factor. Per-axis values are computed once per particle (3·K numbers each) so that the
//! 3-D loops of P2G/G2P only multiply.
//!
//! Everything here is `#[inline]`, allocation-free and generic over [`Real`], so the f32 solver, the
//! f64 tests and the WGSL port share one description. Positions are taken relative to the grid origin
//! (in grid units) so that f32 keeps its precision far from the world origin (spec §10.3).

use crate::math::{Real, Vec3};

/// Per-particle kernel data for one B-spline of `K` nodes per axis (spec §3.1).
///
/// `w[axis][k]` is the 1-D weight `N(r)` of node `base[axis] + k` along `axis`, and `dw[axis][k]` is
/// `N'(r)/h`, the derivative with respect to the particle coordinate `x_p` (with `r = (x_p − x_i)/h`).
/// `frac[axis] = ξ − base` is the particle's offset from the base node in grid units, so that
/// `(x_i − x_p)/h = (a, b, c) − frac` exactly as the kernel saw it (used by APIC, §3.4, §3.7).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stencil<T, const K: usize> {
    /// Lowest node index per axis (node `base + (a, b, c)`, `0 ≤ a, b, c < K`).
    pub base: [i32; 3],
    /// Particle position minus the base node, in grid units (`ξ − base`).
    pub frac: [T; 3],
    /// Per-axis weights `N(r)`, each row sums to 1.
    pub w: [[T; K]; 3],
    /// Per-axis derivatives `N'(r)/h` with respect to `x_p`, each row sums to 0.
    pub dw: [[T; K]; 3],
}

/// The quadratic B-spline stencil (3 nodes per axis, the spec's default, §3.1, §6.4).
pub type QuadraticStencil<T> = Stencil<T, 3>;
/// The cubic B-spline stencil (4 nodes per axis, §3.1).
pub type CubicStencil<T> = Stencil<T, 4>;

impl<T: Real, const K: usize> Stencil<T, K> {
    /// Number of nodes per axis (3 quadratic, 4 cubic).
    pub const NODES: usize = K;

    /// Weight `w_ip` of the node at `base + (a, b, c)` (spec §3.1: tensor product of 1-D splines).
    #[inline]
    pub fn weight(&self, a: usize, b: usize, c: usize) -> T {
        // Same association as `weight_and_gradient`, so both give bit-identical weights.
        self.w[0][a] * (self.w[1][b] * self.w[2][c])
    }

    /// Gradient `∇w_ip` with respect to `x_p` of the node at `base + (a, b, c)` (spec §3.1):
    /// `(N'(r1)N(r2)N(r3), N(r1)N'(r2)N(r3), N(r1)N(r2)N'(r3))/h`. With it `Σ_i x_i ∇w_ipᵀ = I`.
    #[inline]
    pub fn gradient(&self, a: usize, b: usize, c: usize) -> Vec3<T> {
        self.weight_and_gradient(a, b, c).1
    }

    /// Weight and gradient together (they share the per-axis products), see [`Self::weight`] and
    /// [`Self::gradient`].
    #[inline]
    pub fn weight_and_gradient(&self, a: usize, b: usize, c: usize) -> (T, Vec3<T>) {
        let (wa, wb, wc) = (self.w[0][a], self.w[1][b], self.w[2][c]);
        let wbc = wb * wc;
        (
            wa * wbc,
            Vec3::new(
                self.dw[0][a] * wbc,
                wa * self.dw[1][b] * wc,
                wa * wb * self.dw[2][c],
            ),
        )
    }

    /// Integer index of the node at offset `(a, b, c)`: `base + (a, b, c)`.
    #[inline]
    pub fn node(&self, a: usize, b: usize, c: usize) -> [i32; 3] {
        [
            self.base[0] + a as i32,
            self.base[1] + b as i32,
            self.base[2] + c as i32,
        ]
    }

    /// `(x_i − x_p)/h` for the node at offset `(a, b, c)`, in grid units (multiply by `h` for metres).
    /// This is the APIC lever arm of spec §3.4 (`C_p (x_i − x_p)`) and §3.7 (`B_p`), computed from the
    /// same fractional offset the weights used, so that `Σ w (x_i − x_p) = 0` holds to rounding.
    #[inline]
    pub fn offset(&self, a: usize, b: usize, c: usize) -> Vec3<T> {
        Vec3::new(
            T::from_f64(a as f64) - self.frac[0],
            T::from_f64(b as f64) - self.frac[1],
            T::from_f64(c as f64) - self.frac[2],
        )
    }
}

/// Lowest node index and fractional offset along one axis: `base = floor(ξ − shift)`, `f = ξ − base`.
/// `f` is formed from `ξ` itself (not from `ξ − shift`) so no rounding of the shift enters the weights.
#[inline]
fn split<T: Real>(xi: T, shift: T) -> (i32, T) {
    // floor by truncation and a correction for negatives: `floor` is a libm
    // call on baseline x86-64 (no SSE4.1 `roundss`), and this runs 3× per
    // particle per transfer. Exact for |ξ| < 2³¹.
    let y = (xi - shift).to_f64();
    let t = y as i32;
    let b = if (t as f64) > y { t - 1 } else { t };
    (b, xi - T::from_f64(b as f64))
}

impl<T: Real> Stencil<T, 3> {
    /// Quadratic B-spline weights for a particle at `xi = (x_p − origin)/h` (grid units); `inv_h = 1/h`
    /// scales the derivatives (spec §3.1).
    ///
    /// Per axis, `base = floor(ξ − 0.5)`, `f = ξ − base ∈ [0.5, 1.5)`:
    /// `w = [½(1.5−f)², 0.75−(f−1)², ½(f−0.5)²]`, `dw = [f−1.5, −2(f−1), f−0.5]/h`.
    #[inline]
    pub fn quadratic(xi: Vec3<T>, inv_h: T) -> Self {
        let (half, three_quarter, one_half) = (T::HALF, T::from_f64(0.75), T::from_f64(1.5));
        let mut s = Stencil {
            base: [0; 3],
            frac: [T::ZERO; 3],
            w: [[T::ZERO; 3]; 3],
            dw: [[T::ZERO; 3]; 3],
        };
        for axis in 0..3 {
            let (b, f) = split(xi[axis], half);
            s.base[axis] = b;
            s.frac[axis] = f;
            let (d0, d1, d2) = (one_half - f, f - T::ONE, f - half);
            s.w[axis] = [half * d0 * d0, three_quarter - d1 * d1, half * d2 * d2];
            s.dw[axis] = [-d0 * inv_h, -T::TWO * d1 * inv_h, d2 * inv_h];
        }
        s
    }

    /// `𝔇_p^{-1}` of APIC for the quadratic kernel: `4/h²` (spec §3.1, `(6−b)/h²` with `b = 2`).
    #[inline]
    pub fn apic_d_inv(inv_h: T) -> T {
        T::from_f64(4.0) * inv_h * inv_h
    }
}

impl<T: Real> Stencil<T, 4> {
    /// Cubic B-spline weights for a particle at `xi = (x_p − origin)/h` (grid units); `inv_h = 1/h`
    /// scales the derivatives (spec §3.1).
    ///
    /// Per axis, `base = floor(ξ) − 1`, `f = ξ − base ∈ [1, 2)`; node `k` is at `r = f − k`:
    /// `N(r) = ½|r|³ − r² + 2/3` (|r| < 1), `(2−|r|)³/6` (1 ≤ |r| < 2), and
    /// `N'(r) = 1.5 r|r| − 2r` (|r| < 1), `−½(2−|r|)² sign r` (1 ≤ |r| < 2). Which branch applies to
    /// which node is fixed by `f ∈ [1, 2)`, so no per-node branch is needed.
    #[inline]
    pub fn cubic(xi: Vec3<T>, inv_h: T) -> Self {
        let two_thirds = T::from_f64(2.0 / 3.0);
        let sixth = T::from_f64(1.0 / 6.0);
        let one_half = T::from_f64(1.5);
        let mut s = Stencil {
            base: [0; 3],
            frac: [T::ZERO; 3],
            w: [[T::ZERO; 4]; 3],
            dw: [[T::ZERO; 4]; 3],
        };
        for axis in 0..3 {
            let (b, f) = split(xi[axis], T::ONE);
            s.base[axis] = b;
            s.frac[axis] = f;
            // Node 0: r0 = f ∈ [1, 2), outer branch, r > 0.
            let o0 = T::TWO - f;
            // Node 1: r1 = f − 1 ∈ [0, 1), inner branch.
            let r1 = f - T::ONE;
            // Node 2: r2 = f − 2 ∈ [−1, 0), inner branch; t2 = |r2|.
            let t2 = T::TWO - f;
            // Node 3: r3 = f − 3 ∈ [−2, −1), outer branch, r < 0; 2 − |r3| = f − 1.
            let o3 = f - T::ONE;
            s.w[axis] = [
                sixth * o0 * o0 * o0,
                T::HALF * r1 * r1 * r1 - r1 * r1 + two_thirds,
                T::HALF * t2 * t2 * t2 - t2 * t2 + two_thirds,
                sixth * o3 * o3 * o3,
            ];
            s.dw[axis] = [
                -T::HALF * o0 * o0 * inv_h,
                (one_half * r1 * r1 - T::TWO * r1) * inv_h,
                // N'(r2) = 1.5 r2|r2| − 2 r2 = −1.5 t2² + 2 t2.
                (T::TWO * t2 - one_half * t2 * t2) * inv_h,
                T::HALF * o3 * o3 * inv_h,
            ];
        }
        s
    }

    /// `𝔇_p^{-1}` of APIC for the cubic kernel: `3/h²` (spec §3.1, `(6−b)/h²` with `b = 3`).
    #[inline]
    pub fn apic_d_inv(inv_h: T) -> T {
        T::from_f64(3.0) * inv_h * inv_h
    }
}

/// Runtime choice of B-spline degree (spec §2.5: `b ∈ {2 (default), 3}`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum KernelKind {
    /// Quadratic B-spline, 3 nodes per axis, `𝔇_p = h²/4 I` (the default, §6.4).
    #[default]
    Quadratic,
    /// Cubic B-spline, 4 nodes per axis, `𝔇_p = h²/3 I`.
    Cubic,
}

impl KernelKind {
    /// Nodes per axis: 3 (quadratic) or 4 (cubic) (spec §3.1, U1 "support").
    #[inline]
    pub fn nodes(self) -> usize {
        match self {
            KernelKind::Quadratic => 3,
            KernelKind::Cubic => 4,
        }
    }

    /// Polynomial degree `b` (spec §3.1).
    #[inline]
    pub fn degree(self) -> u32 {
        match self {
            KernelKind::Quadratic => 2,
            KernelKind::Cubic => 3,
        }
    }

    /// `𝔇_p^{-1} = (6 − b)/h²` (spec §3.1, §3.7: `C̃_p = B_p 𝔇_p^{-1}`).
    #[inline]
    pub fn apic_d_inv<T: Real>(self, inv_h: T) -> T {
        match self {
            KernelKind::Quadratic => QuadraticStencil::<T>::apic_d_inv(inv_h),
            KernelKind::Cubic => CubicStencil::<T>::apic_d_inv(inv_h),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{RngExt, SeedableRng};

    /// Checks every U1 property for one stencil of a particle at `xi` (grid units) with spacing `h`.
    fn check_u1<const K: usize>(s: &Stencil<f64, K>, xi: Vec3<f64>, h: f64, d_inv: f64) {
        let xp = xi * h;
        let (mut sw, mut sm, mut sg) = (0.0, Vec3::zero(), Vec3::zero());
        let mut xg = [[0.0; 3]; 3]; // Σ x_i ∇wᵀ
        let mut second = [[0.0; 3]; 3]; // Σ w (x_i − x_p)(x_i − x_p)ᵀ
        for a in 0..K {
            for b in 0..K {
                for c in 0..K {
                    let (w, g) = s.weight_and_gradient(a, b, c);
                    assert_eq!(w, s.weight(a, b, c));
                    assert_eq!(g, s.gradient(a, b, c));
                    assert!(w >= 0.0, "negative weight {w} at {xi:?}");
                    let n = s.node(a, b, c);
                    let xn = Vec3::new(n[0] as f64, n[1] as f64, n[2] as f64) * h;
                    let d = xn - xp;
                    // The lever arm from the stencil agrees with the node position.
                    assert!((s.offset(a, b, c) * h - d).abs().max_element() < 1e-12);
                    sw += w;
                    sm += d * w;
                    sg += g;
                    for i in 0..3 {
                        for j in 0..3 {
                            xg[i][j] += xn[i] * g[j];
                            second[i][j] += w * d[i] * d[j];
                        }
                    }
                }
            }
        }
        assert!((sw - 1.0).abs() < 1e-13, "Σw = {sw}");
        assert!(sm.abs().max_element() < 1e-13 * h, "Σw(x_i−x_p) = {sm:?}");
        assert!(sg.abs().max_element() < 1e-12 / h, "Σ∇w = {sg:?}");
        for i in 0..3 {
            for j in 0..3 {
                let id = if i == j { 1.0 } else { 0.0 };
                assert!((xg[i][j] - id).abs() < 1e-11, "Σ x_i ∇wᵀ = {xg:?}");
                let dp = if i == j { 1.0 / d_inv } else { 0.0 };
                assert!(
                    (second[i][j] - dp).abs() < 1e-13 * h * h,
                    "second moment {second:?}"
                );
            }
        }
    }

    /// Weight of the node with integer index `n` for a particle at `xi`, looked up in a stencil.
    fn weight_of<const K: usize>(s: &Stencil<f64, K>, n: [i32; 3]) -> f64 {
        let mut w = 1.0;
        for (axis, &ni) in n.iter().enumerate() {
            let k = ni - s.base[axis];
            if !(0..K as i32).contains(&k) {
                return 0.0;
            }
            w *= s.w[axis][k as usize];
        }
        w
    }

    /// `∇w` against central differences of `w` in `x_p` (step in metres), node by node.
    fn check_fd<const K: usize>(make: impl Fn(Vec3<f64>) -> Stencil<f64, K>, xi: Vec3<f64>, h: f64) {
        let s = make(xi);
        let step = 1e-6;
        for a in 0..K {
            for b in 0..K {
                for c in 0..K {
                    let n = s.node(a, b, c);
                    let g = s.gradient(a, b, c);
                    for axis in 0..3 {
                        let mut xp = xi;
                        xp[axis] += step / h;
                        let wp = weight_of(&make(xp), n);
                        xp[axis] -= 2.0 * step / h;
                        let wm = weight_of(&make(xp), n);
                        let fd = (wp - wm) / (2.0 * step);
                        assert!(
                            (fd - g[axis]).abs() < 1e-6 / h,
                            "node {n:?} axis {axis}: {fd} vs {}",
                            g[axis]
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn kernels_u1_random_positions() {
        let mut rng = StdRng::seed_from_u64(0x5eed_0001);
        for _ in 0..500 {
            let h = rng.random_range(0.01..2.0);
            let xi = Vec3::new(
                rng.random_range(-20.0..20.0),
                rng.random_range(-20.0..20.0),
                rng.random_range(-20.0..20.0),
            );
            let q = QuadraticStencil::quadratic(xi, 1.0 / h);
            check_u1(&q, xi, h, QuadraticStencil::<f64>::apic_d_inv(1.0 / h));
            let c = CubicStencil::cubic(xi, 1.0 / h);
            check_u1(&c, xi, h, CubicStencil::<f64>::apic_d_inv(1.0 / h));
        }
    }

    #[test]
    fn kernels_gradient_matches_central_differences() {
        let mut rng = StdRng::seed_from_u64(0x5eed_0002);
        for _ in 0..100 {
            let h = rng.random_range(0.05..1.0);
            // Stay 1e-4 cells away from kernel breakpoints so the difference stencil sees one branch.
            let mut xi = Vec3::zero();
            for axis in 0..3 {
                let mut v: f64 = rng.random_range(-5.0..5.0);
                while (v * 2.0 - (v * 2.0).round()).abs() < 1e-4 {
                    v += 1e-3;
                }
                xi[axis] = v;
            }
            check_fd(|x| QuadraticStencil::quadratic(x, 1.0 / h), xi, h);
            check_fd(|x| CubicStencil::cubic(x, 1.0 / h), xi, h);
        }
    }

    #[test]
    fn kernels_support_and_breakpoints() {
        // On a node (ξ integer) the quadratic kernel is centred: weights 1/8, 3/4, 1/8.
        let q = QuadraticStencil::quadratic(Vec3::new(3.0, -2.0, 0.0), 1.0);
        assert_eq!(q.base, [2, -3, -1]);
        assert_eq!(q.w[0], [0.125, 0.75, 0.125]);
        assert_eq!(q.dw[0], [-0.5, 0.0, 0.5]);
        // On a node the cubic kernel has weights 1/6, 2/3, 1/6, 0.
        let c = CubicStencil::cubic(Vec3::new(3.0, -2.0, 0.0), 1.0);
        assert_eq!(c.base, [2, -3, -1]);
        for (got, want) in c.w[1].iter().zip([1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0, 0.0]) {
            assert!((got - want).abs() < 1e-15, "{:?}", c.w[1]);
        }
        // Half-cell: quadratic base moves to the lower node, weights ½(1)²… = 0.5, 0.5, 0.
        let q = QuadraticStencil::quadratic(Vec3::new(0.5, 0.5, 0.5), 1.0);
        assert_eq!(q.base, [0, 0, 0]);
        assert_eq!(q.w[0], [0.5, 0.5, 0.0]);
        assert_eq!(KernelKind::default().nodes(), QuadraticStencil::<f64>::NODES);
        assert_eq!(KernelKind::Cubic.nodes(), CubicStencil::<f64>::NODES);
        assert_eq!(KernelKind::Quadratic.apic_d_inv(2.0f64), 16.0);
        assert_eq!(KernelKind::Cubic.apic_d_inv(2.0f64), 12.0);
        assert_eq!(
            (KernelKind::Quadratic.degree(), KernelKind::Cubic.degree()),
            (2, 3)
        );
    }

    #[test]
    fn kernels_f32_close_to_f64() {
        let mut rng = StdRng::seed_from_u64(0x5eed_0003);
        for _ in 0..200 {
            let xi = Vec3::new(
                rng.random_range(0.0..64.0),
                rng.random_range(0.0..64.0),
                rng.random_range(0.0..64.0),
            );
            let xi32 = xi.cast::<f32>();
            let xi = xi32.cast::<f64>();
            let (q64, q32) = (
                QuadraticStencil::quadratic(xi, 4.0),
                QuadraticStencil::quadratic(xi32, 4.0f32),
            );
            let (c64, c32) = (CubicStencil::cubic(xi, 4.0), CubicStencil::cubic(xi32, 4.0f32));
            assert_eq!(q64.base, q32.base);
            assert_eq!(c64.base, c32.base);
            let mut sum = 0.0f32;
            for a in 0..3 {
                for b in 0..3 {
                    for c in 0..3 {
                        sum += q32.weight(a, b, c);
                        assert!((q32.weight(a, b, c) as f64 - q64.weight(a, b, c)).abs() < 1e-6);
                        let d = q32.gradient(a, b, c).cast::<f64>() - q64.gradient(a, b, c);
                        assert!(d.abs().max_element() < 1e-5);
                    }
                }
            }
            assert!((sum - 1.0).abs() < 1e-6);
            for a in 0..4 {
                for b in 0..4 {
                    for c in 0..4 {
                        assert!((c32.weight(a, b, c) as f64 - c64.weight(a, b, c)).abs() < 1e-6);
                        let d = c32.gradient(a, b, c).cast::<f64>() - c64.gradient(a, b, c);
                        assert!(d.abs().max_element() < 1e-5);
                    }
                }
            }
        }
    }
}
