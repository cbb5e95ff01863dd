//! What a user types for each MPM material (the fields of `crumple.mpm.*Material`
//! besides density, thickness and radius, which the object takes): Young's
//! modulus and Poisson ratio rather than Lamé parameters, friction angles in
//! degrees. Each spec lists its fields once ([`crate::params!`]) and turns
//! into the solver's material with the constructors of
//! [`super::constitutive`], which check the ranges.

use super::constitutive::{CurveParams, GooParams, SandParams, SurfaceParams, lame_parameters};
use super::material::{CodimMaterial, VolumeMaterial};
use crate::Result;
use crate::math::Real;

/// A fixed-corotated elastic solid (spec §4.6): E (Pa), ν.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ElasticSpec {
    /// Young's modulus E, Pa (≥ 0).
    pub youngs_modulus: f64,
    /// Poisson ratio ν in (−1, 0.5).
    pub poisson_ratio: f64,
}

/// Drucker–Prager sand with Klár's hardening (spec §5.4): φ_q = h0 + (h1 q − h3) e^(−h2 q) degrees.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SandSpec {
    /// Young's modulus E, Pa.
    pub youngs_modulus: f64,
    /// Poisson ratio ν.
    pub poisson_ratio: f64,
    /// h0, degrees.
    pub friction_angle: f64,
    /// h1, degrees per unit hardening.
    pub hardening_slope: f64,
    /// h2, per unit hardening.
    pub hardening_decay: f64,
    /// h3, degrees.
    pub initial_deficit: f64,
}

/// Viscoplastic goo (spec §4.6): von Mises yield stress (Pa) and viscosity (Pa·s).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GooSpec {
    /// Young's modulus E, Pa.
    pub youngs_modulus: f64,
    /// Poisson ratio ν.
    pub poisson_ratio: f64,
    /// τ_Y, Pa.
    pub yield_stress: f64,
    /// η, Pa·s (0: perfectly plastic).
    pub viscosity: f64,
}

/// Cloth (spec §4.3, Table 1): in-plane E, ν; normal stiffness k and shear γ of the normal
/// column (Pa); friction angle (degrees).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SurfaceSpec {
    /// Young's modulus E of the in-plane response, Pa.
    pub youngs_modulus: f64,
    /// Poisson ratio ν of the in-plane response.
    pub poisson_ratio: f64,
    /// k, Pa.
    pub normal_stiffness: f64,
    /// γ, Pa.
    pub shear_stiffness: f64,
    /// Φ, degrees.
    pub friction_angle: f64,
}

/// Yarn and hair (spec §4.4, Table 1): cross-section E, ν; fibre stretch k and shear γ (Pa);
/// friction angle Φ_F (degrees).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CurveSpec {
    /// Young's modulus E of the cross-section, Pa.
    pub youngs_modulus: f64,
    /// Poisson ratio ν of the cross-section.
    pub poisson_ratio: f64,
    /// k, Pa.
    pub stretch_stiffness: f64,
    /// γ, Pa.
    pub shear_stiffness: f64,
    /// Φ_F, degrees.
    pub friction_angle: f64,
}

crate::params!(ElasticSpec, base = ElasticSpec::default(), {
    "youngs_modulus": f64 = youngs_modulus,
    "poisson_ratio": f64 = poisson_ratio,
});
crate::params!(SandSpec, base = SandSpec::default(), {
    "youngs_modulus": f64 = youngs_modulus,
    "poisson_ratio": f64 = poisson_ratio,
    "friction_angle": f64 = friction_angle,
    "hardening_slope": f64 = hardening_slope,
    "hardening_decay": f64 = hardening_decay,
    "initial_deficit": f64 = initial_deficit,
});
crate::params!(GooSpec, base = GooSpec::default(), {
    "youngs_modulus": f64 = youngs_modulus,
    "poisson_ratio": f64 = poisson_ratio,
    "yield_stress": f64 = yield_stress,
    "viscosity": f64 = viscosity,
});
crate::params!(SurfaceSpec, base = SurfaceSpec::default(), {
    "youngs_modulus": f64 = youngs_modulus,
    "poisson_ratio": f64 = poisson_ratio,
    "normal_stiffness": f64 = normal_stiffness,
    "shear_stiffness": f64 = shear_stiffness,
    "friction_angle": f64 = friction_angle,
});
crate::params!(CurveSpec, base = CurveSpec::default(), {
    "youngs_modulus": f64 = youngs_modulus,
    "poisson_ratio": f64 = poisson_ratio,
    "stretch_stiffness": f64 = stretch_stiffness,
    "shear_stiffness": f64 = shear_stiffness,
    "friction_angle": f64 = friction_angle,
});

impl ElasticSpec {
    /// The solver material (Lamé μ, λ rounded once to `T`).
    pub fn material<T: Real>(&self) -> Result<VolumeMaterial<T>> {
        let (mu, lambda) = lame_parameters(self.youngs_modulus, self.poisson_ratio)?;
        Ok(VolumeMaterial::Elastic {
            mu: T::from_f64(mu),
            lambda: T::from_f64(lambda),
        })
    }
}

impl SandSpec {
    /// The solver material (computed in f64, then rounded to `T`).
    pub fn material<T: Real>(&self) -> Result<VolumeMaterial<T>> {
        let s = SandParams::<f64>::from_material(
            self.youngs_modulus,
            self.poisson_ratio,
            self.friction_angle,
            self.hardening_slope,
            self.hardening_decay,
            self.initial_deficit,
        )?;
        Ok(VolumeMaterial::Sand(s.cast()))
    }
}

impl GooSpec {
    /// The solver material (computed in f64, then rounded to `T`).
    pub fn material<T: Real>(&self) -> Result<VolumeMaterial<T>> {
        let g = GooParams::<f64>::from_material(
            self.youngs_modulus,
            self.poisson_ratio,
            self.yield_stress,
            self.viscosity,
        )?;
        Ok(VolumeMaterial::Goo(g.cast()))
    }
}

impl SurfaceSpec {
    /// The solver material (computed in f64, then rounded to `T`).
    pub fn material<T: Real>(&self) -> Result<CodimMaterial<T>> {
        let s = SurfaceParams::<f64>::from_material(
            self.youngs_modulus,
            self.poisson_ratio,
            self.shear_stiffness,
            self.normal_stiffness,
            self.friction_angle,
        )?;
        Ok(CodimMaterial::Surface(s.cast()))
    }
}

impl CurveSpec {
    /// The solver material (computed in f64, then rounded to `T`).
    pub fn material<T: Real>(&self) -> Result<CodimMaterial<T>> {
        let c = CurveParams::<f64>::from_material(
            self.youngs_modulus,
            self.poisson_ratio,
            self.shear_stiffness,
            self.stretch_stiffness,
            self.friction_angle,
        )?;
        Ok(CodimMaterial::Curve(c.cast()))
    }
}
