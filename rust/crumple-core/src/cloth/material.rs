//! Cloth material parameters, the paper's presets, and the wrinkle-model
//! switches (spec §7, §10 A1, A2, A10, A12, A15).
//!
//! A [`Material`] is one row of the paper's Table 2 or 3 (plus the tensile
//! constants of §7.3, which the paper does not give): stiffnesses and the
//! constants of the friction and plasticity elements. [`Wrinkles`] says which
//! of those elements are on. Keeping the two apart lets one preset run with
//! the models on, off, or as the baselines of experiments E6 and E9.

use super::membrane::MembraneStiffness;
use super::wrinkle::{DahlParams, FrictionParams, PlasticClock, PlasticParams};
use crate::{Result, invalid};

/// Constants of one hardening-plasticity element (spec §4.2), without the
/// elastic modulus and the clock (those come from the material and from
/// [`Wrinkles`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlasticConstants {
    /// Initial yield strain `εY0` (radians of dihedral angle for hinges,
    /// Green strain for membrane components).
    pub eps_y0: f64,
    /// Initial hardening modulus `K_h0` (J for hinges, N/m for membrane).
    pub k_h0: f64,
    /// Fraction `g` by which the hardening modulus drops with plastic-flow time.
    pub g: f64,
    /// Hardening time constant `τ_p`, seconds.
    pub tau: f64,
}

impl PlasticConstants {
    /// The full parameter set for the kernel, with elastic modulus `k_elastic`.
    pub fn params(&self, k_elastic: f64, clock: PlasticClock) -> PlasticParams {
        PlasticParams {
            eps_y0: self.eps_y0,
            k_h0: self.k_h0,
            g: self.g,
            tau: self.tau,
            k_elastic,
            clock,
        }
    }
}

/// One cloth material: areal density, membrane and bending stiffness, and the
/// constants of the internal friction and plasticity elements.
///
/// Units follow spec §7.1: density kg/m², membrane stiffnesses N/m, bending
/// and bending-friction stiffness J (the tables' "3×K" columns), angles in
/// radians, times in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Material {
    /// Areal density ρ, kg/m².
    pub density: f64,
    /// Membrane stiffnesses (warp `k11`, weft `k22`, coupling `k12`, shear `k33`), N/m.
    pub membrane: MembraneStiffness,
    /// Bending stiffness `K̂_b` as listed in the tables ("3×K_b"), J.
    pub bending: f64,
    /// Bending scale `c_b` applied to `K̂_b` and `K̂_f` in the energy (spec §3.2,
    /// A1): 0.25 reproduces the paper's figures with its tables.
    pub bending_scale: f64,
    /// Bending-friction stiffness `K̂_f` ("3×K_Friction"), J.
    pub bend_friction_stiffness: f64,
    /// Bending-friction thresholds and dwell time (radians, seconds).
    pub bend_friction: FrictionParams,
    /// Bending plasticity constants.
    pub bend_plastic: PlasticConstants,
    /// Tensile friction stiffnesses for (uu, vv, uv), N/m (A10: named
    /// `k_fric_*` to avoid the clash with the membrane's K11..K33).
    pub tensile_friction_stiffness: [f64; 3],
    /// Tensile friction thresholds per component (Green strain, seconds).
    pub tensile_friction: [FrictionParams; 3],
    /// Tensile plasticity constants per component.
    pub tensile_plastic: [PlasticConstants; 3],
}

/// Names accepted by [`Material::preset`], with the table each comes from.
pub const PRESET_NAMES: [&str; 6] = [
    "cotton",
    "denim",
    "polyester",
    "trouser_cotton",
    "trouser_denim",
    "trouser_polyester",
];

impl Material {
    /// A material from one table row: `(ρ, 3K_b, K11, K22, K12, K33, 3K_f, ε0,
    /// ε∞, τ_f, K_h0, g, τ_p, εY0)`, with the tensile constants of §7.3.
    #[allow(clippy::too_many_arguments)]
    fn row(
        density: f64,
        bending: f64,
        k11: f64,
        k22: f64,
        k12: f64,
        k33: f64,
        k_fric: f64,
        eps0: f64,
        eps_inf: f64,
        tau_f: f64,
        k_h0: f64,
        g: f64,
        tau_p: f64,
        eps_y0: f64,
    ) -> Self {
        // §7.3: the reference code's tensile defaults (the paper gives none; A12).
        let tf = FrictionParams {
            eps0: 0.005,
            eps_inf: 0.05,
            tau: 30.0,
        };
        let tp = |k_h0: f64| PlasticConstants {
            eps_y0: 0.033,
            k_h0,
            g: 0.5,
            tau: 30.0,
        };
        Material {
            density,
            membrane: MembraneStiffness { k11, k22, k12, k33 },
            bending,
            bending_scale: 0.25,
            bend_friction_stiffness: k_fric,
            bend_friction: FrictionParams {
                eps0,
                eps_inf,
                tau: tau_f,
            },
            bend_plastic: PlasticConstants {
                eps_y0,
                k_h0,
                g,
                tau: tau_p,
            },
            tensile_friction_stiffness: [200.0, 200.0, 5.0],
            tensile_friction: [tf; 3],
            tensile_plastic: [tp(10.0), tp(10.0), tp(5.0)],
        }
    }

    /// A preset by name: `cotton`, `denim`, `polyester` (paper Table 2, the
    /// specimens) and `trouser_cotton`, `trouser_denim`, `trouser_polyester`
    /// (Table 3). Unknown names are an error that lists the known ones.
    pub fn preset(name: &str) -> Result<Self> {
        let m = match name {
            // Table 2 (specimens).
            "cotton" => Self::row(
                0.06, 5e-6, 50.0, 50.0, 0.2, 30.0, 1e-5, 0.1, 1.7, 30.0, 5e-6, 0.99, 30.0, 1.8,
            ),
            "denim" => Self::row(
                0.25, 1.2e-4, 100.0, 100.0, 0.2, 20.0, 5e-5, 0.1, 1.8, 30.0, 1.2e-4, 0.99, 30.0, 2.0,
            ),
            "polyester" => Self::row(
                0.18, 1.2e-4, 50.0, 50.0, 0.2, 30.0, 1e-7, 0.01, 0.1, 30.0, 1.2e-4, 0.99, 30.0, 3.0,
            ),
            // Table 3 (trousers), as published (A22).
            "trouser_cotton" => Self::row(
                0.1, 1e-6, 200.0, 200.0, 0.2, 20.0, 4e-6, 0.1, 1.2, 30.0, 1e-6, 0.99, 30.0, 1.5,
            ),
            "trouser_denim" => Self::row(
                0.2, 3e-5, 200.0, 200.0, 0.2, 150.0, 6e-5, 0.2, 1.2, 30.0, 3e-5, 0.99, 30.0, 1.2,
            ),
            "trouser_polyester" => Self::row(
                0.15, 1e-6, 100.0, 100.0, 0.2, 20.0, 7e-7, 0.1, 0.1, 30.0, 1e-6, 0.99, 30.0, 3.1,
            ),
            _ => {
                return invalid!(
                    "unknown cloth material preset {name:?}; known presets: {}",
                    PRESET_NAMES.join(", ")
                );
            }
        };
        Ok(m)
    }

    /// Checks every field: finite, densities and stiffnesses positive (the
    /// bending, friction and hardening stiffnesses may be 0), thresholds
    /// ordered. Messages name the field.
    pub fn validate(&self) -> Result<()> {
        use crate::validate::{non_negative, positive};
        let pos = |v: f64, what: &str| positive(format_args!("cloth material: {what}"), v).map(|_| ());
        let nonneg = |v: f64, what: &str| non_negative(format_args!("cloth material: {what}"), v).map(|_| ());
        pos(self.density, "areal_density (kg/m²)")?;
        let k = &self.membrane;
        pos(k.k11, "membrane k11 (N/m)")?;
        pos(k.k22, "membrane k22 (N/m)")?;
        pos(k.k33, "membrane k33 (N/m)")?;
        if !k.k12.is_finite() || k.k12 < 0.0 || k.k12 * k.k12 >= k.k11 * k.k22 {
            return invalid!(
                "cloth material: membrane k12 = {} must be ≥ 0 and satisfy k12² < k11·k22 so that the \
                 membrane energy is positive definite",
                k.k12
            );
        }
        nonneg(self.bending, "bending stiffness (J)")?;
        pos(self.bending_scale, "bending_scale")?;
        nonneg(self.bend_friction_stiffness, "bending friction stiffness (J)")?;
        self.bend_friction.validate("bending friction")?;
        self.bend_plastic
            .params(self.bending.max(f64::MIN_POSITIVE), PlasticClock::Alg2)
            .validate("bending plasticity")?;
        for c in 0..3 {
            let name = ["uu", "vv", "uv"][c];
            nonneg(
                self.tensile_friction_stiffness[c],
                &format!("tensile friction stiffness {name}"),
            )?;
            self.tensile_friction[c].validate(&format!("tensile friction {name}"))?;
            let ke = [k.k11, k.k22, k.k33][c];
            self.tensile_plastic[c]
                .params(ke, PlasticClock::Alg2)
                .validate(&format!("tensile plasticity {name}"))?;
        }
        Ok(())
    }

    /// `κ_b = c_b K̂_b`, the bending coefficient used in the energy (§3.2).
    pub fn kappa_b(&self) -> f64 {
        self.bending_scale * self.bending
    }

    /// `κ_f = c_b K̂_f`, the bending-friction coefficient used in the energy.
    pub fn kappa_f(&self) -> f64 {
        self.bending_scale * self.bend_friction_stiffness
    }

    /// Dahl baseline parameters for this material (App. A.1 [R]): σ_s = κ_f ε∞, ε_s = ε0.
    pub fn dahl(&self) -> DahlParams {
        DahlParams {
            sigma_s: self.kappa_f() * self.bend_friction.eps_inf,
            eps_s: self.bend_friction.eps0.max(1e-12),
        }
    }
}

/// Which bending-friction element runs on the hinges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BendFriction {
    /// No friction element.
    Off,
    /// The paper's stick–slip anchor with dwell (§4.1).
    #[default]
    Dwell,
    /// The Dahl baseline of experiment E9 (App. A.1).
    Dahl,
}

/// Switches of the wrinkle model (spec §4, §5.2–5.3): which internal elements
/// run, which plastic clock, and the slip tangent option.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wrinkles {
    /// Bending friction element on the hinges.
    pub bend_friction: BendFriction,
    /// Bending hardening plasticity on the hinges.
    pub bend_plasticity: bool,
    /// Friction on the three Green-strain components of each triangle.
    pub tensile_friction: bool,
    /// Plasticity on the three Green-strain components of each triangle.
    pub tensile_plasticity: bool,
    /// Plastic clock semantics (A2); `Alg2` reproduces the paper's figures.
    pub clock: PlasticClock,
    /// Keep `κ_f` in the Jacobian of slipping hinges (the paper's explicit
    /// slip, A15) when true; drop it when false.
    pub friction_slip_tangent: bool,
    /// The hold-time warp also advances the triangles' clocks (§4.6 [R]).
    pub warp_faces: bool,
    /// Time-independent baseline of E6 (A.2): hardening modulus held at `K_h0`
    /// (g = 0) for the bending plasticity.
    pub constant_hardening: bool,
}

impl Default for Wrinkles {
    /// Bending friction (dwell) and bending plasticity on, tensile models off:
    /// the reference configuration of the paper.
    fn default() -> Self {
        Wrinkles {
            bend_friction: BendFriction::Dwell,
            bend_plasticity: true,
            tensile_friction: false,
            tensile_plasticity: false,
            clock: PlasticClock::Alg2,
            friction_slip_tangent: true,
            warp_faces: false,
            constant_hardening: false,
        }
    }
}

impl Wrinkles {
    /// Every internal element off: plain elastic cloth (the `M_elastic` reference).
    pub fn off() -> Self {
        Wrinkles {
            bend_friction: BendFriction::Off,
            bend_plasticity: false,
            ..Self::default()
        }
    }

    /// True when any element with internal state is on.
    pub fn any(&self) -> bool {
        self.bend_friction != BendFriction::Off
            || self.bend_plasticity
            || self.tensile_friction
            || self.tensile_plasticity
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_follow_the_tables() {
        for name in PRESET_NAMES {
            let m = Material::preset(name).unwrap();
            m.validate().unwrap();
            // §7.2 observations: K_h0 = 3×K_b, g = 0.99, τ_f = τ_p = 30 s in every row.
            assert_eq!(m.bend_plastic.k_h0, m.bending, "{name}");
            assert_eq!(m.bend_plastic.g, 0.99);
            assert_eq!(m.bend_friction.tau, 30.0);
            assert_eq!(m.bend_plastic.tau, 30.0);
            assert!(
                m.bend_plastic.eps_y0 > m.bend_friction.eps0,
                "{name}: εY0 > ε0 (App. C)"
            );
        }
        let p = Material::preset("trouser_polyester").unwrap();
        assert_eq!(
            p.bend_friction.eps0, p.bend_friction.eps_inf,
            "no dwell for polyester trousers"
        );
        assert_eq!(Material::preset("polyester").unwrap().bend_plastic.eps_y0, 3.0);
        assert!((Material::preset("cotton").unwrap().kappa_b() - 1.25e-6).abs() < 1e-20);
    }

    #[test]
    fn unknown_preset_and_bad_values_are_errors() {
        let e = Material::preset("silk").unwrap_err().to_string();
        assert!(e.contains("silk") && e.contains("denim"), "{e}");
        let mut m = Material::preset("cotton").unwrap();
        m.density = -1.0;
        assert!(m.validate().unwrap_err().to_string().contains("density"));
        let mut m = Material::preset("cotton").unwrap();
        m.bending = -1e-6;
        assert!(m.validate().unwrap_err().to_string().contains("bending"));
        let mut m = Material::preset("cotton").unwrap();
        m.membrane.k12 = 60.0;
        assert!(m.validate().unwrap_err().to_string().contains("k12"));
    }
}

// The Python names of every field (`crumple.cloth.Material`, `Wrinkles`), listed once:
// the binding converts dicts with `crumple_core::params`.
crate::params!(Material, base = Material::preset("cotton")?, {
    "areal_density": f64 = density,
    "k11": f64 = membrane.k11,
    "k22": f64 = membrane.k22,
    "k12": f64 = membrane.k12,
    "k33": f64 = membrane.k33,
    "bending": f64 = bending,
    "bending_scale": f64 = bending_scale,
    "friction_stiffness": f64 = bend_friction_stiffness,
    "friction_eps0": f64 = bend_friction.eps0,
    "friction_eps_inf": f64 = bend_friction.eps_inf,
    "friction_tau": f64 = bend_friction.tau,
    "yield_angle": f64 = bend_plastic.eps_y0,
    "hardening": f64 = bend_plastic.k_h0,
    "hardening_drop": f64 = bend_plastic.g,
    "hardening_tau": f64 = bend_plastic.tau,
    "tensile_friction_stiffness": triple = tensile_friction_stiffness,
    "tensile_eps0": each = tensile_friction.eps0,
    "tensile_eps_inf": each = tensile_friction.eps_inf,
    "tensile_tau_f": each = tensile_friction.tau,
    "tensile_eps_y0": each = tensile_plastic.eps_y0,
    "tensile_k_h0": each = tensile_plastic.k_h0,
    "tensile_g": each = tensile_plastic.g,
    "tensile_tau_p": each = tensile_plastic.tau,
});

crate::named_enum!(BendFriction { "off" => Off, "dwell" => Dwell, "dahl" => Dahl });
crate::named_enum!(PlasticClock { "alg2" => Alg2, "eq14" => Eq14, "always" => AlwaysRunning });

crate::params!(Wrinkles, base = Wrinkles::default(), {
    "bend_friction": name<BendFriction> = bend_friction,
    "bend_plasticity": bool = bend_plasticity,
    "tensile_friction": bool = tensile_friction,
    "tensile_plasticity": bool = tensile_plasticity,
    "clock": name<PlasticClock> = clock,
    "friction_slip_tangent": bool = friction_slip_tangent,
    "warp_faces": bool = warp_faces,
    "constant_hardening": bool = constant_hardening,
});
