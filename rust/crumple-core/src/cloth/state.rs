//! What changes while the cloth steps (spec §2.2–2.5): positions,
//! velocities and the internal variables of every hinge and triangle, and
//! the handle springs that pull on vertices.

use super::model::Model;
use super::wrinkle::{FrictionState, PlasticState};
use crate::math::Vec3;

/// Handle springs per vertex (spec §6.1 step 4): stiffness 0 = free.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pins {
    /// Spring stiffness per vertex, N/m (0 for free vertices).
    pub stiffness: Vec<f64>,
    /// Target position per vertex at the end of the step, m.
    pub target: Vec<Vec3<f64>>,
}

/// Everything that changes while stepping (structure of arrays).
#[derive(Debug, PartialEq)]
pub struct State {
    /// Positions, m.
    pub x: Vec<Vec3<f64>>,
    /// Velocities, m/s.
    pub v: Vec<Vec3<f64>>,
    /// Dihedral angle per hinge at the start of the last step, rad.
    pub hinge_angle: Vec<f64>,
    /// Bending friction state (anchor angle, stick clock).
    pub hinge_friction: Vec<FrictionState>,
    /// Bending plasticity state (plastic angle, hardening, clock).
    pub hinge_plastic: Vec<PlasticState>,
    /// Dahl friction moment per hinge (baseline E9), angle-stiffness units.
    pub hinge_dahl: Vec<f64>,
    /// Tensile friction state per triangle and component (uu, vv, uv).
    pub tri_friction: Vec<[FrictionState; 3]>,
    /// Tensile plasticity state per triangle and component.
    pub tri_plastic: Vec<[PlasticState; 3]>,
    /// Simulated time, s.
    pub time: f64,
    /// Steps taken.
    pub step: u64,
}

/// `clone_from` copies field by field into the existing buffers (the derived
/// one would allocate anew): the step's rollback copy relies on it to stay
/// allocation-free.
impl Clone for State {
    fn clone(&self) -> Self {
        Self {
            x: self.x.clone(),
            v: self.v.clone(),
            hinge_angle: self.hinge_angle.clone(),
            hinge_friction: self.hinge_friction.clone(),
            hinge_plastic: self.hinge_plastic.clone(),
            hinge_dahl: self.hinge_dahl.clone(),
            tri_friction: self.tri_friction.clone(),
            tri_plastic: self.tri_plastic.clone(),
            time: self.time,
            step: self.step,
        }
    }

    fn clone_from(&mut self, src: &Self) {
        self.x.clone_from(&src.x);
        self.v.clone_from(&src.v);
        self.hinge_angle.clone_from(&src.hinge_angle);
        self.hinge_friction.clone_from(&src.hinge_friction);
        self.hinge_plastic.clone_from(&src.hinge_plastic);
        self.hinge_dahl.clone_from(&src.hinge_dahl);
        self.tri_friction.clone_from(&src.tri_friction);
        self.tri_plastic.clone_from(&src.tri_plastic);
        self.time = src.time;
        self.step = src.step;
    }
}

impl State {
    /// Rest state of `model` at positions `x` (often the rest positions) and
    /// velocities `v`.
    pub fn new(model: &Model, x: Vec<Vec3<f64>>, v: Vec<Vec3<f64>>) -> Self {
        let nh = model.hinges.len();
        let nt = model.faces.len();
        let hinge_friction = model
            .hinge_theta_bar
            .iter()
            .map(|&t| FrictionState {
                anchor: t,
                t_stick: 0.0,
            })
            .collect();
        let params = |g: u32| &model.garments[g as usize].params;
        let hinge_plastic = model
            .hinge_garment
            .iter()
            .map(|&g| params(g).hinge_plastic0)
            .collect();
        let tri_plastic = model
            .face_garment
            .iter()
            .map(|&g| params(g).tri_plastic0)
            .collect();
        State {
            x,
            v,
            hinge_angle: model.hinge_theta_bar.clone(),
            hinge_friction,
            hinge_plastic,
            hinge_dahl: vec![0.0; nh],
            tri_friction: vec![[FrictionState::default(); 3]; nt],
            tri_plastic,
            time: 0.0,
            step: 0,
        }
    }
}
