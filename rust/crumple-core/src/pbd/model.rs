//! What does not change while a shape-matching simulation steps: the step
//! settings and, per body, its material and the mass of its particles.

use super::material::Material;
use super::params::StepParams;

/// One body (an object added from a closed mesh).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Body {
    /// Its material.
    pub material: Material,
    /// Mass of each of its particles, kg (density · spacing³).
    pub particle_mass: f32,
    /// Its mass when added, kg (the target of the optional conservation fix-up).
    pub mass: f64,
}

/// Settings and bodies.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Model {
    /// Step settings.
    pub params: StepParams,
    /// The bodies, in the order added.
    pub bodies: Vec<Body>,
}
