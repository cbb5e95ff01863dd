//! Orthotropic StVK membrane on Green strain with a Gauss–Newton Jacobian, and
//! the tensile friction terms (spec `persistent_wrinkles.md` §5.1–5.3).
//!
//! Per triangle the deformation gradient is `F = [y1−y0, y2−y0]·Dm⁻¹ = [x_u | x_v]`
//! (3×2, warp along +u, weft along +v of the material frame) and the Green strain
//! `E = (E11, E22, E12)` uses the tensor shear `E12 = ½ x_u·x_v` (§5.1).
//!
//! Units: material coordinates and positions in m, strains dimensionless,
//! stiffnesses in N/m, energy densities in J/m², areas in m², `∂E/∂y` in 1/m,
//! forces in N, Jacobian blocks `∂f_a/∂y_b` in N/m.
//!
//! Both energies here are quadratic in the strain, `½ (E−E*)ᵀ C (E−E*)` with a symmetric
//! `C` that does not couple the normal components to shear, so both go through one
//! kernel (`add_quadratic`) that assembles `f = −Ā Σ σ_i ∇E_i` and
//! `J = −Ā [Σ C_ij ∇E_i ∇E_jᵀ + geometric terms]`.

use crate::invalid;
use crate::math::{Mat3, Vec3};

/// Smallest accepted rest area (m²) of a triangle; below it `Dm⁻¹` is meaningless.
const MIN_REST_AREA: f64 = 1e-14;

/// Rest data of one triangle from its 2-D material coordinates (§2.3):
/// `Dm = [u1−u0, u2−u0]` (columns), its inverse, and the rest area `½|det Dm|`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriangleRest {
    /// `Dm⁻¹`, row-major (`dm_inv[r][c]` = `d_rc` of §5.1), in 1/m.
    pub dm_inv: [[f64; 2]; 2],
    /// Rest area `Ā_t = ½|det Dm|`, in m².
    pub area: f64,
}

impl TriangleRest {
    /// Rest data from the material coordinates `u = [u0, u1, u2]` (m) of the triangle's
    /// corners. Either winding is accepted: the area is `½|det Dm|`, and the Green strain
    /// `FᵀF` does not depend on the sign of `det Dm`. Errors with
    /// `InvalidInput` when the rest area is non-finite or ≤ 1e-14 m² (collinear or
    /// coincident corners), since such a triangle has no inverse rest shape.
    pub fn from_uv(u: [[f64; 2]; 3]) -> crate::Result<Self> {
        let (a, c) = (u[1][0] - u[0][0], u[1][1] - u[0][1]); // column 0 = u1 − u0
        let (b, d) = (u[2][0] - u[0][0], u[2][1] - u[0][1]); // column 1 = u2 − u0
        let det = a * d - b * c;
        let area = 0.5 * det.abs();
        if !area.is_finite() {
            return invalid!(
                "triangle material coordinates {u:?} give a non-finite rest area; \
                 check the UVs for NaN or infinite values"
            );
        }
        if area <= MIN_REST_AREA {
            return invalid!(
                "triangle material coordinates {u:?} give a degenerate rest area {area:e} m² \
                 (must exceed {MIN_REST_AREA:e}); the corners are collinear or coincide in UV space"
            );
        }
        let inv = 1.0 / det;
        Ok(Self {
            dm_inv: [[d * inv, -b * inv], [-c * inv, a * inv]],
            area,
        })
    }
}

/// Green strain of a deformed triangle and the quantities its derivatives need (§5.1).
#[derive(Clone, Copy, Debug)]
pub struct Strain {
    /// `(E11, E22, E12)`: warp, weft and tensor shear Green strain (dimensionless).
    pub e: [f64; 3],
    /// `x_u = ∂y/∂u`, the first column of `F` (dimensionless).
    pub xu: Vec3<f64>,
    /// `x_v = ∂y/∂v`, the second column of `F` (dimensionless).
    pub xv: Vec3<f64>,
    /// `∂x_u/∂y_k = du_k I` (1/m): `du = (−d00−d10, d00, d10)`.
    pub du: [f64; 3],
    /// `∂x_v/∂y_k = dv_k I` (1/m): `dv = (−d01−d11, d01, d11)`.
    pub dv: [f64; 3],
}

/// Green strain of the triangle with rest data `rest` at world positions `y` (m), §5.1.
#[inline]
pub fn green_strain(rest: &TriangleRest, y: &[Vec3<f64>; 3]) -> Strain {
    let [[d00, d01], [d10, d11]] = rest.dm_inv;
    let e1 = y[1] - y[0];
    let e2 = y[2] - y[0];
    let xu = e1 * d00 + e2 * d10;
    let xv = e1 * d01 + e2 * d11;
    Strain {
        e: [
            0.5 * (xu.dot(xu) - 1.0),
            0.5 * (xv.dot(xv) - 1.0),
            0.5 * xu.dot(xv),
        ],
        xu,
        xv,
        du: [-d00 - d10, d00, d10],
        dv: [-d01 - d11, d01, d11],
    }
}

/// `∇E_i` with respect to the three vertices (1/m): `grad[i][k] = ∂E_i/∂y_k` with
/// `i`: 0 = E11, 1 = E22, 2 = E12 (§5.1: `∇E11 = [du_k x_u]`, `∇E22 = [dv_k x_v]`,
/// `∇E12 = ½[du_k x_v + dv_k x_u]`).
#[inline]
pub fn strain_gradients(s: &Strain) -> [[Vec3<f64>; 3]; 3] {
    let g = |k: usize| {
        [
            s.xu * s.du[k],
            s.xv * s.dv[k],
            (s.xv * s.du[k] + s.xu * s.dv[k]) * 0.5,
        ]
    };
    let (g0, g1, g2) = (g(0), g(1), g(2));
    [
        [g0[0], g1[0], g2[0]],
        [g0[1], g1[1], g2[1]],
        [g0[2], g1[2], g2[2]],
    ]
}

/// Orthotropic membrane stiffnesses (N/m): warp `k11`, weft `k22`, coupling `k12`
/// (called "Poisson's ratio" in the paper but used as a stiffness, §10 A9), shear `k33`.
/// The Jacobian is negative semidefinite when `k11, k22, k33 ≥ 0`, `k12 ≥ 0` and
/// `k12² ≤ k11 k22`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MembraneStiffness {
    /// Warp (u) stiffness, N/m.
    pub k11: f64,
    /// Weft (v) stiffness, N/m.
    pub k22: f64,
    /// Warp–weft coupling stiffness, N/m.
    pub k12: f64,
    /// Shear stiffness, N/m (enters as `K33 E12²`, the code convention).
    pub k33: f64,
}

/// Energy density `ψ(e) = ½K11 e0² + K12 e0 e1 + ½K22 e1² + K33 e2²` (J/m²) of the strain
/// `e = (E11, E22, E12)`; this is the reference code's convention (§5.1, §10 A9), which has
/// twice the paper's shear term.
#[inline]
pub fn membrane_energy_density(k: &MembraneStiffness, e: &[f64; 3]) -> f64 {
    0.5 * k.k11 * e[0] * e[0] + k.k12 * e[0] * e[1] + 0.5 * k.k22 * e[1] * e[1] + k.k33 * e[2] * e[2]
}

/// Adds the elastic membrane force `f = −Ā ∇ψ(e_el)` (N) and its Gauss–Newton Jacobian
/// `J = −Ā H` (N/m) into `force` and `jac` (`jac[a][b] = ∂f_a/∂y_b`), spec §5.1:
///
/// `H = K11 ∇E11∇E11ᵀ + K22 ∇E22∇E22ᵀ + K12(∇E11∇E22ᵀ + ∇E22∇E11ᵀ) + 2K33 ∇E12∇E12ᵀ
///    + (K11 e0⁺ + K12 e1⁺)(du duᵀ⊗I) + (K22 e1⁺ + K12 e0⁺)(dv dvᵀ⊗I)`, `e⁺ = max(e, 0)`.
///
/// The shear geometric term `2K33 e2 ∇²E12` is dropped and compressive strains are clamped
/// so that `J` is negative semidefinite (see [`MembraneStiffness`]); hence `J` is the exact
/// Jacobian only where `e0, e1 ≥ 0` and `e2 = 0`. `e_el` is the elastic strain (total minus
/// plastic strain, §5.2); the gradients `∇E_i` come from `s` (plastic strain is constant
/// within a step, so it does not change them).
#[inline]
pub fn add_membrane(
    rest: &TriangleRest,
    s: &Strain,
    k: &MembraneStiffness,
    e_el: &[f64; 3],
    force: &mut [Vec3<f64>; 3],
    jac: &mut [[Mat3<f64>; 3]; 3],
) {
    // ∂ψ/∂E (§5.1 ∇ψ): the stresses conjugate to E11, E22, E12.
    let sigma = [
        k.k11 * e_el[0] + k.k12 * e_el[1],
        k.k22 * e_el[1] + k.k12 * e_el[0],
        2.0 * k.k33 * e_el[2],
    ];
    let (p0, p1) = (e_el[0].max(0.0), e_el[1].max(0.0));
    let geo = [k.k11 * p0 + k.k12 * p1, k.k22 * p1 + k.k12 * p0];
    let c = Quadratic {
        c00: k.k11,
        c01: k.k12,
        c11: k.k22,
        c22: 2.0 * k.k33,
    };
    add_quadratic(rest.area, s, &c, &sigma, &geo, force, jac);
}

/// Adds the tensile friction force and Jacobian (§5.3) for the friction deviations
/// `delta = (Δ_11, Δ_22, Δ_12)` (strain, after this step's friction update §4.1) and the
/// friction stiffnesses `k_fric = (k_11, k_22, k_12)` (N/m), from the energy
/// `W = Ā[½k_11 Δ_11² + ½k_22 Δ_22² + k_12 Δ_12²]` with the anchors frozen:
///
/// `f −= Ā[k_11Δ_11 ∇E11 + k_22Δ_22 ∇E22 + 2k_12Δ_12 ∇E12]`,
/// `J −= Ā[k_11∇E11∇E11ᵀ + k_22∇E22∇E22ᵀ + 2k_12∇E12∇E12ᵀ
///        + max(k_11Δ_11, 0)(du duᵀ⊗I) + max(k_22Δ_22, 0)(dv dvᵀ⊗I)]`.
///
/// The `max(kΔ, 0)` clamp is the spec's [R] choice (the reference code does not clamp) and,
/// as for the membrane, the shear geometric term is dropped, so `J` is negative
/// semidefinite for `k ≥ 0` and exact only where `Δ_11, Δ_22 ≥ 0` and `Δ_12 = 0`.
#[inline]
pub fn add_tensile_friction(
    rest: &TriangleRest,
    s: &Strain,
    k_fric: &[f64; 3],
    delta: &[f64; 3],
    force: &mut [Vec3<f64>; 3],
    jac: &mut [[Mat3<f64>; 3]; 3],
) {
    let sigma = [
        k_fric[0] * delta[0],
        k_fric[1] * delta[1],
        2.0 * k_fric[2] * delta[2],
    ];
    let geo = [sigma[0].max(0.0), sigma[1].max(0.0)];
    let c = Quadratic {
        c00: k_fric[0],
        c01: 0.0,
        c11: k_fric[1],
        c22: 2.0 * k_fric[2],
    };
    add_quadratic(rest.area, s, &c, &sigma, &geo, force, jac);
}

/// The symmetric strain-space stiffness `C` (N/m) of a quadratic energy `½ Eᵀ C E`, with
/// no coupling between the normal components and shear: `[[c00, c01, 0], [c01, c11, 0],
/// [0, 0, c22]]`.
struct Quadratic {
    c00: f64,
    c01: f64,
    c11: f64,
    c22: f64,
}

/// Shared assembly for §5.1 and §5.3: with stresses `sigma = ∂ψ/∂E` (N/m) and clamped
/// geometric coefficients `geo` (N/m) for the `du duᵀ⊗I` and `dv dvᵀ⊗I` terms,
/// `f_a −= Ā Σ_i σ_i ∇_a E_i` and `J_ab −= Ā [Σ_ij C_ij ∇_a E_i ∇_b E_jᵀ + (geo0 du_a du_b +
/// geo1 dv_a dv_b) I]`. Only the blocks `a ≤ b` are computed; `J_ba = J_abᵀ` exactly.
#[inline]
fn add_quadratic(
    area: f64,
    s: &Strain,
    c: &Quadratic,
    sigma: &[f64; 3],
    geo: &[f64; 2],
    force: &mut [Vec3<f64>; 3],
    jac: &mut [[Mat3<f64>; 3]; 3],
) {
    let g = strain_gradients(s);
    for a in 0..3 {
        force[a] -= (g[0][a] * sigma[0] + g[1][a] * sigma[1] + g[2][a] * sigma[2]) * area;
    }
    // w[b][i] = Σ_j C_ij ∇_b E_j, scaled by −Ā, so that J_ab = Σ_i ∇_a E_i w[b][i]ᵀ + geometric.
    let w = |b: usize| {
        let (g0, g1, g2) = (g[0][b], g[1][b], g[2][b]);
        [
            (g0 * c.c00 + g1 * c.c01) * -area,
            (g0 * c.c01 + g1 * c.c11) * -area,
            g2 * (c.c22 * -area),
        ]
    };
    let ws = [w(0), w(1), w(2)];
    for a in 0..3 {
        for b in a..3 {
            let wb = &ws[b];
            let mut blk =
                Mat3::outer(g[0][a], wb[0]) + Mat3::outer(g[1][a], wb[1]) + Mat3::outer(g[2][a], wb[2]);
            let diag = -area * (geo[0] * s.du[a] * s.du[b] + geo[1] * s.dv[a] * s.dv[b]);
            for i in 0..3 {
                blk.m[i][i] += diag;
            }
            if a == b {
                // Symmetric in exact arithmetic; make it so bitwise, like the (a, b)/(b, a) pairs.
                jac[a][a] += blk.symmetric_part();
            } else {
                jac[a][b] += blk;
                jac[b][a] += blk.transpose();
            }
        }
    }
}

#[cfg(test)]
#[path = "membrane_tests.rs"]
mod tests;
