//! Element kinematics of EOL cloth (spec eol_cloth §3.1–3.4): the
//! deformation gradient from world and material coordinates, the material
//! point's velocity through the Jacobian `J = [αI βI γI −αF −βF −γF]`
//! (paper Eq. 2/4), and the node-pair blocks `J_iᵀ k J_j` that give the
//! generalized mass (Eq. 5–8, `k = c_ij I`) and the mapped stiffness
//! (Eq. 9–10, `k = K_ij`) in one form.
//!
//! Per node the generalized velocity is `(ẋ, Ẋ) ∈ R⁵` (the material
//! velocity `Ẋ` only for EOL nodes); a node's map is `J_node = [I, −F_e]`
//! with the element's `F_e` (a face's own `F_t`, a hinge's mean of its two
//! faces, spec §3.2).

use crate::math::{Mat3, Vec3};

/// Material coordinates of a point, m (the flat rest configuration).
pub type Mat2d = [f64; 2];

/// A 3×2 deformation gradient `F = ∂x/∂X`, stored as its two columns.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Grad(pub [Vec3<f64>; 2]);

impl Grad {
    /// `F u` (m/s for a material velocity `u`).
    #[inline]
    pub fn apply(&self, u: Mat2d) -> Vec3<f64> {
        self.0[0] * u[0] + self.0[1] * u[1]
    }

    /// `Fᵀ w`.
    #[inline]
    pub fn apply_t(&self, w: Vec3<f64>) -> Mat2d {
        [self.0[0].dot(w), self.0[1].dot(w)]
    }

    /// `FᵀF` (2×2, row-major).
    #[inline]
    pub fn ftf(&self) -> [[f64; 2]; 2] {
        let (a, b) = (self.0[0], self.0[1]);
        [[a.dot(a), a.dot(b)], [b.dot(a), b.dot(b)]]
    }

    /// `½(F_0 + F_1)`, the hinge's F (spec §3.2).
    #[inline]
    pub fn mean(a: &Grad, b: &Grad) -> Grad {
        Grad([(a.0[0] + b.0[0]) * 0.5, (a.0[1] + b.0[1]) * 0.5])
    }
}

/// The signed material area of the triangle with corners `u` (m²):
/// positive when they run counter-clockwise.
#[inline]
pub fn signed_area(u: &[Mat2d; 3]) -> f64 {
    0.5 * ((u[1][0] - u[0][0]) * (u[2][1] - u[0][1]) - (u[2][0] - u[0][0]) * (u[1][1] - u[0][1]))
}

/// `D_X⁻¹` (row-major) and the material area `|det D_X|/2` of a triangle
/// with material corners `u`, or `None` when it is degenerate (area
/// ≤ 1e-14 m² or not finite).
#[inline]
pub fn material_inverse(u: &[Mat2d; 3]) -> Option<([[f64; 2]; 2], f64)> {
    let (a, c) = (u[1][0] - u[0][0], u[1][1] - u[0][1]);
    let (b, d) = (u[2][0] - u[0][0], u[2][1] - u[0][1]);
    let det = a * d - b * c;
    let area = 0.5 * det.abs();
    if !(area.is_finite() && area > 1e-14) {
        return None;
    }
    let inv = 1.0 / det;
    Some(([[d * inv, -b * inv], [-c * inv, a * inv]], area))
}

/// `F = D_x D_X⁻¹` and the material area of the triangle with world
/// corners `x` and material corners `u` (spec §3.1), `None` if degenerate.
#[inline]
pub fn deformation_gradient(x: &[Vec3<f64>; 3], u: &[Mat2d; 3]) -> Option<(Grad, f64)> {
    let (inv, area) = material_inverse(u)?;
    let (e1, e2) = (x[1] - x[0], x[2] - x[0]);
    Some((
        Grad([e1 * inv[0][0] + e2 * inv[1][0], e1 * inv[0][1] + e2 * inv[1][1]]),
        area,
    ))
}

/// Barycentric coordinates `(α, β, γ)` of the material point `p` in the
/// triangle with material corners `u` (spec §3.1), `None` if degenerate.
#[inline]
pub fn barycentric(u: &[Mat2d; 3], p: Mat2d) -> Option<[f64; 3]> {
    let (inv, _) = material_inverse(u)?;
    let d = [p[0] - u[0][0], p[1] - u[0][1]];
    let beta = inv[0][0] * d[0] + inv[0][1] * d[1];
    let gamma = inv[1][0] * d[0] + inv[1][1] * d[1];
    Some([1.0 - beta - gamma, beta, gamma])
}

/// World position of the material point with barycentrics `w` (Eq. 1).
#[inline]
pub fn world_point(x: &[Vec3<f64>; 3], w: [f64; 3]) -> Vec3<f64> {
    x[0] * w[0] + x[1] * w[1] + x[2] * w[2]
}

/// `J q̇`: the world velocity of the material point with barycentrics `w`
/// in a triangle with gradient `f`, node velocities `xd` and material
/// velocities `ud` (zero for Lagrangian nodes), paper Eq. 2:
/// `Σ w_k ẋ_k − F Σ w_k Ẋ_k`.
#[inline]
pub fn material_velocity(w: [f64; 3], f: &Grad, xd: &[Vec3<f64>; 3], ud: &[Mat2d; 3]) -> Vec3<f64> {
    let u = [
        w[0] * ud[0][0] + w[1] * ud[1][0] + w[2] * ud[2][0],
        w[0] * ud[0][1] + w[1] * ud[1][1] + w[2] * ud[2][1],
    ];
    world_point(xd, w) - f.apply(u)
}

/// A 5×5 node-pair block in the order `(ẋ, Ẋ)`, row-major.
pub type Block5 = [[f64; 5]; 5];

/// `J_iᵀ k J_j` with `J_i = [I, −F_i]`, `J_j = [I, −F_j]`: the generalized
/// block of a 3×3 world block `k` between nodes i and j (spec §3.3.2 with
/// `k = c_ij I`, §3.4 with `k = K_ij`). Rows and columns 3..5 belong to the
/// material velocities and are dropped for Lagrangian nodes.
#[inline]
pub fn pair_block(k: &Mat3<f64>, fi: &Grad, fj: &Grad) -> Block5 {
    let mut b = [[0.0; 5]; 5];
    for (row, k_row) in b.iter_mut().zip(&k.m) {
        row[..3].copy_from_slice(k_row);
    }
    // k F_j (3×2) and F_iᵀ k (2×3).
    let kf: [Vec3<f64>; 2] = [*k * fj.0[0], *k * fj.0[1]];
    let kt = k.transpose();
    let fk: [Vec3<f64>; 2] = [kt * fi.0[0], kt * fi.0[1]];
    for r in 0..3 {
        for a in 0..2 {
            b[r][3 + a] = -kf[a][r];
            b[3 + a][r] = -fk[a][r];
        }
    }
    for a in 0..2 {
        for c in 0..2 {
            b[3 + a][3 + c] = fi.0[a].dot(kf[c]);
        }
    }
    b
}

/// `J_iᵀ f = (f, −F_iᵀ f)`: a node's world force mapped to its generalized
/// force (spec §3.4).
#[inline]
pub fn map_force(f: Vec3<f64>, fi: &Grad) -> [f64; 5] {
    let t = fi.apply_t(f);
    [f.x, f.y, f.z, -t[0], -t[1]]
}

/// The consistent-mass weights `C = [[2,1,1],[1,2,1],[1,1,2]]` over 12
/// (spec §3.3.1): the element mass block between nodes i and j is
/// `ρA·MASS_WEIGHTS[i][j]·[[I, −F],[−Fᵀ, FᵀF]]`.
pub const MASS_WEIGHTS: [[f64; 3]; 3] = [
    [2.0 / 12.0, 1.0 / 12.0, 1.0 / 12.0],
    [1.0 / 12.0, 2.0 / 12.0, 1.0 / 12.0],
    [1.0 / 12.0, 1.0 / 12.0, 2.0 / 12.0],
];

#[cfg(test)]
#[path = "element_tests.rs"]
mod tests;
