//! Packed materials and the per-particle constitutive math of the GPU backend.
//!
//! The constitutive WGSL library ([`super::stages::constitutive_wgsl`]: `shaders/constitutive/*.wgsl`
//! and `shaders/material.wgsl`, one file per CPU file, on the math library of `gpu/shaders/math/`)
//! is concatenated in front of the kernels that evaluate stresses and return maps. It is the twin of
//! the f32 CPU path ([`crate::math::svd3`], [`crate::math::qr3`], [`crate::math::polar_rotation`]
//! and [`crate::mpm::material`]): same algorithms, branches, sweep limits, tolerances and operation
//! order, so both agree to f32 rounding (the tests compare them). Its public functions:
//!
//! ```text
//! fn volume_kirchhoff(m: PackedMaterial, F: mat3x3<f32>) -> mat3x3<f32>
//! fn volume_plasticity(m: PackedMaterial, F: mat3x3<f32>, q: f32, dt: f32) -> VolumePlastic // { F, q }
//! fn codim_piola(m: PackedMaterial, F: mat3x3<f32>) -> CodimPiola                           // { P, ok }
//! fn codim_return_map(m: PackedMaterial, F: mat3x3<f32>) -> CodimReturn                     // { F, event }
//! fn svd3(a: mat3x3<f32>) -> Svd3                                                           // { U, sigma, V }
//! fn qr3(a: mat3x3<f32>) -> Qr3                                                             // { Q, R }
//! ```
//!
//! A material is one `PackedMaterial` record of [`MATERIAL_RECORD_LEN`] f32 (64 bytes), built by
//! [`pack_volume_material`] or [`pack_codim_material`]; the layout is documented in the shader and
//! on the packers. Derived constants the CPU computes inside the per-particle functions (the
//! Drucker–Prager factors, the goo yield strain) are computed here with the same f32 expression,
//! so the GPU reads bit-identical values.

use crate::mpm::constitutive::default_degenerate_eps;
use crate::mpm::material::{CodimMaterial, VolumeMaterial};

/// f32 values per packed material record (`PackedMaterial { v: array<vec4<f32>, 4> }`).
pub const MATERIAL_RECORD_LEN: usize = 16;

/// `kind` (slot 0) of a fixed-corotated elastic volume record (`CM_VOLUME_ELASTIC`).
pub const VOLUME_KIND_ELASTIC: u32 = 0;
/// `kind` of a Drucker–Prager sand volume record (`CM_VOLUME_SAND`).
pub const VOLUME_KIND_SAND: u32 = 1;
/// `kind` of a viscoplastic goo volume record (`CM_VOLUME_GOO`).
pub const VOLUME_KIND_GOO: u32 = 2;
/// `kind` of a surface (cloth) codim record (`CM_CODIM_SURFACE`).
pub const CODIM_KIND_SURFACE: u32 = 0;
/// `kind` of a curve (yarn, hair) codim record (`CM_CODIM_CURVE`).
pub const CODIM_KIND_CURVE: u32 = 1;

/// The record of a volumetric material (spec §4.6, §5.4) for `volume_kirchhoff` and
/// `volume_plasticity`:
///
/// | slots | Elastic | Sand | Goo |
/// |---|---|---|---|
/// | 0–3 | kind, μ, λ, 0 | kind, μ, λ, 0 | kind, μ, λ, 0 |
/// | 4–7 | 0 | h0, h1, h2, h3 | τ_Y, η, e_Y, 0 |
/// | 8–11 | 0 | (3λ+2μ)/(2μ), no_flow, 0, 0 | 0 |
/// | 12–15 | 0 | 0 | 0 |
///
/// `(3λ+2μ)/(2μ)` is the factor of `sand_return_map`'s δγ and `e_Y = sqrt(2/3) τ_Y/(2μ)` the yield
/// strain of `goo_return_map`, both evaluated with the CPU's f32 expression. `no_flow = 1` when the
/// sand factor is not finite (μ = 0): the CPU's δγ is then −∞ or NaN, never positive, so the
/// particle stays in the elastic case (the record holds no non-finite value, which WGSL may
/// assume away). `e_Y` is 0 when not finite (μ = 0, where the goo return map exits first).
pub fn pack_volume_material(m: &VolumeMaterial<f32>) -> [f32; MATERIAL_RECORD_LEN] {
    let mut r = [0.0f32; MATERIAL_RECORD_LEN];
    match m {
        VolumeMaterial::Elastic { mu, lambda } => {
            r[0] = VOLUME_KIND_ELASTIC as f32;
            r[1] = *mu;
            r[2] = *lambda;
        }
        VolumeMaterial::Sand(s) => {
            r[0] = VOLUME_KIND_SAND as f32;
            r[1] = s.mu;
            r[2] = s.lambda;
            r[4..8].copy_from_slice(&[s.h0, s.h1, s.h2, s.h3]);
            // `sand_return_map`: `(T::from_f64(3.0) * λ + T::TWO * μ) / (T::TWO * μ)`.
            let coef = (3.0f32 * s.lambda + 2.0f32 * s.mu) / (2.0f32 * s.mu);
            if coef.is_finite() {
                r[8] = coef;
            } else {
                r[9] = 1.0;
            }
        }
        VolumeMaterial::Goo(g) => {
            r[0] = VOLUME_KIND_GOO as f32;
            r[1] = g.mu;
            r[2] = g.lambda;
            r[4] = g.yield_stress;
            r[5] = g.viscosity;
            // `goo_return_map`: `T::from_f64(sqrt(2/3)) * τ_Y / (T::TWO * μ)`.
            let e_yield = ((2.0f64 / 3.0).sqrt() as f32) * g.yield_stress / (2.0f32 * g.mu);
            r[6] = if e_yield.is_finite() { e_yield } else { 0.0 };
        }
    }
    r
}

/// The record of a codimensional material (spec §4.3, §4.4, §5.1, §5.2) for `codim_piola` and
/// `codim_return_map`:
///
/// | slots | Surface | Curve |
/// |---|---|---|
/// | 0–3 | kind, μ, λ, γ | kind, μ, λ, γ |
/// | 4–7 | k, c_F, 0, 0 | k, α, β, (λ+μ)/μ |
/// | 8–11 | eps, 0, 0, 0 | eps, 0, 0, 0 |
/// | 12–15 | 0 | 0 |
///
/// `eps` is [`default_degenerate_eps::<f32>()`](default_degenerate_eps) (the threshold
/// `codim_piola` and `codim_return_map` use); `(λ+μ)/μ` is the factor of `curve_project_r`'s δγ in
/// the CPU's f32 expression, 0 when μ ≤ 0 (the CPU only evaluates it for μ > 0).
pub fn pack_codim_material(m: &CodimMaterial<f32>) -> [f32; MATERIAL_RECORD_LEN] {
    let mut r = [0.0f32; MATERIAL_RECORD_LEN];
    match m {
        CodimMaterial::Surface(s) => {
            r[0] = CODIM_KIND_SURFACE as f32;
            r[1..6].copy_from_slice(&[s.mu, s.lambda, s.gamma, s.k, s.c_f]);
        }
        CodimMaterial::Curve(c) => {
            r[0] = CODIM_KIND_CURVE as f32;
            r[1..7].copy_from_slice(&[c.mu, c.lambda, c.gamma, c.k, c.alpha, c.beta]);
            // `curve_project_r`: `(λ + μ) / μ`, only reached when μ > 0.
            let coef = (c.lambda + c.mu) / c.mu;
            r[7] = if c.mu > 0.0 && coef.is_finite() { coef } else { 0.0 };
        }
    }
    r[8] = default_degenerate_eps::<f32>();
    r
}

#[cfg(test)]
#[path = "materials_tests.rs"]
mod tests;
