//! The material of a shape-matching body (spec shape_matching §4.6, §10.2):
//! cluster stiffness, plastic yield, flow rate, hardening, the F_P cap of
//! the no-re-sampling baseline, volume correction and density. Presets are
//! the paper's scenes (Figs. 1–8).

use crate::validate::{finite, in_unit, non_negative, positive};
use crate::{Result, invalid};

/// A shape-matching material.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Material {
    /// Cluster stiffness K in [0, 1]: the fraction of the distance to the goal
    /// removed per solver iteration (1 = rigid-like).
    pub stiffness: f64,
    /// Initial plastic yield ε_γ (log strain, ≥ 0; `f64::INFINITY` = purely
    /// elastic): deformation below it is recovered.
    pub yield_strain: f64,
    /// Plastic flow rate ν in [0, 1]: the share of the strain above yield that
    /// becomes permanent in one step.
    pub flow_rate: f64,
    /// Work hardening κ ≥ 0, 1/s: the yield grows by κ‖ε‖dt in every step
    /// with plastic flow.
    pub hardening: f64,
    /// ‖F_P‖_F cap of the no-re-sampling baseline (spec §4.8), > √3; an F_P
    /// update beyond it is rejected when re-sampling is off.
    pub plastic_cap: f64,
    /// Volume correction of the surface mesh (spec §8.5), as the paper uses
    /// for the bunny, taffy and dough.
    pub volume_correction: bool,
    /// Density, kg/m³: a particle's mass is `density · spacing³`.
    pub density: f64,
}

impl Default for Material {
    fn default() -> Self {
        Self::preset("armadillo").expect("a built-in preset")
    }
}

/// The presets' names, in the paper's order.
pub const PRESET_NAMES: [&str; 8] = [
    "armadillo",
    "armadillo_drop",
    "bunny",
    "cow",
    "taffy",
    "dough",
    "dough_hands",
    "elastic",
];

impl Material {
    fn row(stiffness: f64, yield_strain: f64, flow_rate: f64, volume_correction: bool) -> Self {
        Self {
            stiffness,
            yield_strain,
            flow_rate,
            hardening: 0.0,
            plastic_cap: 2.0,
            volume_correction,
            density: 1000.0,
        }
    }

    /// The material of a paper scene (spec §10.2): `armadillo` (Fig. 1, shot:
    /// K 0.1, ε_γ 0.1, ν 0.9), `armadillo_drop` (Figs. 2–3: K 0.9, ε_γ 1e-4,
    /// ν 0.9), `bunny` (Fig. 4: as armadillo, volume correction), `cow`
    /// (Fig. 5, cut: K 0.5, ε_γ 1e-4, ν 0.99), `taffy` (Fig. 6: K 0.99,
    /// ε_γ 1e-4, ν 0.99, volume correction), `dough` (Fig. 7: K 0.1, ε_γ 0.1,
    /// ν 0.9, volume correction), `dough_hands` (Fig. 8: dough with K 0.5),
    /// and `elastic` (K 0.5, no plasticity). Hardening is 0 in every paper scene.
    pub fn preset(name: &str) -> Result<Self> {
        Ok(match name {
            "armadillo" => Self::row(0.1, 0.1, 0.9, false),
            "armadillo_drop" => Self::row(0.9, 1e-4, 0.9, false),
            "bunny" => Self::row(0.1, 0.1, 0.9, true),
            "cow" => Self::row(0.5, 1e-4, 0.99, false),
            "taffy" => Self::row(0.99, 1e-4, 0.99, true),
            "dough" => Self::row(0.1, 0.1, 0.9, true),
            "dough_hands" => Self::row(0.5, 0.1, 0.9, true),
            "elastic" => Self::row(0.5, f64::INFINITY, 0.0, false),
            _ => {
                return invalid!(
                    "unknown shape-matching material preset {name:?}; known presets: {}",
                    PRESET_NAMES.join(", ")
                );
            }
        })
    }

    /// Checks every field (messages use the Python names).
    // NaN must take the refusing branch of every `!(a > b)` below.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    pub fn validate(&self) -> Result<()> {
        in_unit("Material.shape_stiffness K", self.stiffness)?;
        if !(self.yield_strain >= 0.0) {
            return invalid!(
                "Material.yield_strain must be ≥ 0 (log strain; inf = elastic), got {}",
                self.yield_strain
            );
        }
        in_unit("Material.flow_rate ν", self.flow_rate)?;
        non_negative("Material.hardening_rate κ (1/s)", self.hardening)?;
        finite("Material.plastic_cap", self.plastic_cap)?;
        if !(self.plastic_cap > 3f64.sqrt()) {
            return invalid!(
                "Material.plastic_cap must exceed √3 = ‖I‖_F (the paper's cap is 2.0), got {}",
                self.plastic_cap
            );
        }
        positive("Material.density (kg/m³)", self.density)?;
        Ok(())
    }
}

// The Python names of the fields (`crumple.pbd.Material`), listed once.
crate::params!(Material, base = Material::default(), {
    "shape_stiffness": f64 = stiffness,
    "yield_strain": f64 = yield_strain,
    "flow_rate": f64 = flow_rate,
    "hardening_rate": f64 = hardening,
    "plastic_cap": f64 = plastic_cap,
    "volume_correction": bool = volume_correction,
    "density": f64 = density,
});
