//! Per-particle material dispatch: the solver's view of the constitutive
//! models in [`super::constitutive`] (one pure function per material).

use crate::math::{Mat3, Real};

use super::constitutive::{
    CurveParams, GooParams, SandParams, SurfaceParams, corotated_energy, corotated_piola, curve_energy,
    curve_piola, curve_return_map, default_degenerate_eps, goo_return_map, hencky_energy, hencky_piola,
    sand_return_map, surface_energy, surface_piola, surface_return_map,
};

pub use super::constitutive::ReturnEvent;

/// Material of a type (i) particle (spec §4.6).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum VolumeMaterial<T> {
    /// Fixed-corotated elastic solid (Lamé μ, λ in Pa).
    Elastic { mu: T, lambda: T },
    /// Drucker–Prager sand with hardening (Klár et al. 2016, spec §5.4).
    Sand(SandParams<T>),
    /// Viscoplastic goo (our choice, spec §4.6).
    Goo(GooParams<T>),
}

/// Material of a type (iii) element (spec §4.3, §4.4).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CodimMaterial<T> {
    /// Cloth: anisotropic QR energy of a surface.
    Surface(SurfaceParams<T>),
    /// Hair, yarn, fibre: QR energy of a curve.
    Curve(CurveParams<T>),
}

/// `P Fᵀ` (per unit rest volume) of a volumetric particle (spec §3.3 part 1).
#[inline]
pub fn volume_kirchhoff<T: Real>(mat: &VolumeMaterial<T>, f: &Mat3<T>) -> Mat3<T> {
    let p = match mat {
        VolumeMaterial::Elastic { mu, lambda } => corotated_piola(f, *mu, *lambda),
        VolumeMaterial::Sand(s) => hencky_piola(f, s.mu, s.lambda),
        VolumeMaterial::Goo(g) => hencky_piola(f, g.mu, g.lambda),
    };
    p * f.transpose()
}

/// Elastic energy density `ψ(F^E)` (J/m³) of a volumetric particle: the
/// potential whose `P` [`volume_kirchhoff`] uses (spec §3.3 part 1).
#[inline]
pub fn volume_energy<T: Real>(mat: &VolumeMaterial<T>, f: &Mat3<T>) -> T {
    match mat {
        VolumeMaterial::Elastic { mu, lambda } => corotated_energy(f, *mu, *lambda),
        VolumeMaterial::Sand(s) => hencky_energy(f, s.mu, s.lambda),
        VolumeMaterial::Goo(g) => hencky_energy(f, g.mu, g.lambda),
    }
}

/// Plastic projection of a volumetric particle: returns the new `F^E` and
/// hardening state `q` (spec §5.4 for sand; goo relaxes over `dt`).
#[inline]
pub fn volume_plasticity<T: Real>(mat: &VolumeMaterial<T>, f: &Mat3<T>, q: T, dt: T) -> (Mat3<T>, T) {
    match mat {
        VolumeMaterial::Elastic { .. } => (*f, q),
        VolumeMaterial::Sand(s) => {
            let (nf, nq, _) = sand_return_map(s, f, q);
            (nf, nq)
        }
        VolumeMaterial::Goo(g) => (goo_return_map(g, f, dt), q),
    }
}

/// First Piola–Kirchhoff stress `P̃` of an element in its rest frame, or
/// `None` for a degenerate element (spec §4.2, §5.5).
#[inline]
pub fn codim_piola<T: Real>(mat: &CodimMaterial<T>, f: &Mat3<T>) -> Option<Mat3<T>> {
    match mat {
        CodimMaterial::Surface(s) => surface_piola(s, f, default_degenerate_eps()),
        CodimMaterial::Curve(c) => curve_piola(c, f, default_degenerate_eps()),
    }
}

/// Elastic energy density `ψ(F̃) = ψ̂(R̃)` (J/m³) of an element in its rest
/// frame: the potential of [`codim_piola`] (spec §4.3, §4.4).
#[inline]
pub fn codim_energy<T: Real>(mat: &CodimMaterial<T>, f: &Mat3<T>) -> T {
    match mat {
        CodimMaterial::Surface(s) => surface_energy(s, f),
        CodimMaterial::Curve(c) => curve_energy(c, f),
    }
}

/// The return map of an element (spec §5.1, §5.2): the projected `F̃`.
#[inline]
pub fn codim_return_map<T: Real>(mat: &CodimMaterial<T>, f: &Mat3<T>) -> (Mat3<T>, ReturnEvent) {
    match mat {
        CodimMaterial::Surface(s) => surface_return_map(s, f, default_degenerate_eps(), false),
        CodimMaterial::Curve(c) => curve_return_map(c, f, default_degenerate_eps()),
    }
}
