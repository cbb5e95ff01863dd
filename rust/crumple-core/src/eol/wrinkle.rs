//! The cloth module's persistent wrinkles on an EOL cloth (issue 16, beyond
//! the paper): each hinge runs the cloth module's hinge kernel
//! (`cloth::elements::hinge_response`: hardening plasticity, friction with
//! dwell or the Dahl baseline; spec `persistent_wrinkles.md` §4.3) at the
//! start-of-step configuration, and its moment and Gauss–Newton coefficient
//! replace the elastic `κ s θ` in the generalized force and stiffness (they
//! map through `J = [I, −F]` like every hinge, `system::assemble_with`).
//! The tensile elements are not run here (an EOL cloth's faces are
//! remeshed every step; their state would need a per-face transfer).
//!
//! The remesher changes the hinges. Their state is carried by the edge:
//! - a hinge whose edge joins the same two vertices (persistent ids) as
//!   before keeps its state;
//! - a hinge whose edge lies on an old hinge's edge in material space (a
//!   piece of a split edge, found before the EOL vertices move: the split
//!   vertex's material coordinate is interpolated on the edge) takes that
//!   hinge's state, so a crease along an edge survives its splits;
//! - any other hinge is new: no plastic angle, its friction anchored at its
//!   current angle (no stored moment).
//!
//! A limit: on a line of EOL vertices the state stays with the line's
//! edges while the material slides through it (the edges are Eulerian).

use rayon::prelude::*;

use super::system::{Mesh, shape_factor};
use crate::cloth::elements::{HingeVars, hinge_response};
use crate::cloth::model::ElementParams;
use crate::cloth::wrinkle::{FrictionState, PlasticState, warp_clocks};

/// One hinge's internal variables (the cloth module's, spec §2.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HingeState {
    /// Plastic angle, hardening and clock.
    pub plastic: PlasticState,
    /// Friction anchor and stick clock.
    pub friction: FrictionState,
    /// Dahl moment (baseline E9), J per unit shape factor.
    pub dahl: f64,
    /// Dihedral angle at the start of the last step, rad.
    pub angle: f64,
}

impl HingeState {
    /// A hinge that starts at angle `theta` (rad) with no stored moment:
    /// virgin plasticity, friction anchored at `theta`.
    pub fn fresh(p: &ElementParams, theta: f64) -> Self {
        Self {
            plastic: p.hinge_plastic0,
            friction: FrictionState {
                anchor: theta,
                t_stick: 0.0,
            },
            dahl: 0.0,
            angle: theta,
        }
    }
}

/// The wrinkle model of an EOL cloth: its constants, each hinge's state
/// (in the order of `Mesh::hinges`), and the hold-time warp schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct Wrinkles {
    /// The cloth module's element constants (material and switches).
    pub params: ElementParams,
    /// Per hinge of the mesh.
    pub hinges: Vec<HingeState>,
    /// Hold-time warp (spec §4.6): seconds added to every hinge's clocks
    /// after each of the next `warp_steps` steps.
    pub warp_per_step: f64,
    /// Steps the warp still applies to.
    pub warp_steps: u64,
}

/// The hinges as they were before a remesh: per hinge its edge's vertex ids
/// (smaller first, sorted), its edge in material space and its state.
pub struct Saved {
    keyed: Vec<((u32, u32), usize)>,
    edges: Vec<[[f64; 2]; 2]>,
    states: Vec<HingeState>,
}

/// The edge key of hinge `h`: its two vertices' persistent ids, smaller first.
fn key(ids: &[u32], h: &crate::geometry::Hinge) -> (u32, u32) {
    let (a, b) = (ids[h.vertices[0] as usize], ids[h.vertices[1] as usize]);
    (a.min(b), a.max(b))
}

/// True when material points `p` and `q` both lie on segment `e` (within a
/// relative 1e-9: a split vertex's coordinate is the interpolation on it).
fn on_segment(e: &[[f64; 2]; 2], p: [f64; 2], q: [f64; 2]) -> bool {
    let d = [e[1][0] - e[0][0], e[1][1] - e[0][1]];
    let l2 = d[0] * d[0] + d[1] * d[1];
    if l2 <= 0.0 {
        return false;
    }
    let tol = 1e-9;
    let inside = |r: [f64; 2]| {
        let w = [r[0] - e[0][0], r[1] - e[0][1]];
        let t = (w[0] * d[0] + w[1] * d[1]) / l2;
        let off = (w[0] * d[1] - w[1] * d[0]).abs() / l2.sqrt();
        (-tol..=1.0 + tol).contains(&t) && off <= tol * l2.sqrt()
    };
    inside(p) && inside(q)
}

impl Wrinkles {
    /// The model on `mesh` with constants `params`: every hinge fresh at its
    /// current angle.
    pub fn new(params: ElementParams, mesh: &Mesh) -> Self {
        let hinges = mesh
            .hinges
            .iter()
            .map(|h| HingeState::fresh(&params, mesh.hinge_angle(h)))
            .collect();
        Self {
            params,
            hinges,
            warp_per_step: 0.0,
            warp_steps: 0,
        }
    }

    /// What [`Self::carry`] needs, taken before the remesher runs.
    pub fn save(&self, mesh: &Mesh, ids: &[u32]) -> Saved {
        let mut keyed: Vec<((u32, u32), usize)> = mesh
            .hinges
            .iter()
            .enumerate()
            .map(|(e, h)| (key(ids, h), e))
            .collect();
        keyed.sort_unstable();
        Saved {
            keyed,
            edges: mesh
                .hinges
                .iter()
                .map(|h| [mesh.u[h.vertices[0] as usize], mesh.u[h.vertices[1] as usize]])
                .collect(),
            states: self.hinges.clone(),
        }
    }

    /// The states for the hinges of the remeshed `mesh` (persistent `ids`),
    /// by the rules of the module's documentation.
    pub fn carry(&mut self, saved: &Saved, mesh: &Mesh, ids: &[u32]) {
        let p = self.params;
        self.hinges = mesh
            .hinges
            .par_iter()
            .map(|h| {
                let k = key(ids, h);
                if let Ok(j) = saved.keyed.binary_search_by(|probe| probe.0.cmp(&k)) {
                    return saved.states[saved.keyed[j].1];
                }
                let (a, b) = (mesh.u[h.vertices[0] as usize], mesh.u[h.vertices[1] as usize]);
                // The lowest-numbered old hinge the edge lies on (the same
                // answer for any thread count).
                match saved.edges.iter().position(|e| on_segment(e, a, b)) {
                    Some(j) => saved.states[j],
                    None => HingeState::fresh(&p, mesh.hinge_angle(h)),
                }
            })
            .collect();
    }

    /// Runs every hinge's update for a step of `h` s at the configuration of
    /// `mesh` (the start of the step) into `out` (moment J, Gauss–Newton
    /// coefficient J/rad per hinge). Returns the slip and yield events.
    /// The hold-time warp is [`Self::warp_once`], once per whole step.
    pub fn update(&mut self, mesh: &Mesh, h: f64, out: &mut Vec<(f64, f64)>) -> (usize, usize) {
        let p = self.params;
        out.resize(mesh.hinges.len(), (0.0, 0.0));
        let (slips, yields) = out
            .par_iter_mut()
            .zip(self.hinges.par_iter_mut())
            .zip(mesh.hinges.par_iter())
            .map(|((o, st), hg)| {
                let theta = mesh.hinge_angle(hg);
                // The rest shape is flat in material space (θ̄ = 0).
                let r = hinge_response(
                    &p,
                    HingeVars {
                        plastic: &mut st.plastic,
                        friction: &mut st.friction,
                        dahl: &mut st.dahl,
                        angle: &mut st.angle,
                    },
                    theta,
                    0.0,
                    shape_factor(mesh, hg),
                    h,
                );
                *o = (r.moment, r.coef);
                (r.slipped as usize, r.yielded as usize)
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        (slips, yields)
    }

    /// One step of the hold-time warp schedule (spec §4.6): after a whole
    /// step (however many sub-steps it split into), every hinge's clocks
    /// advance by `warp_per_step` while `warp_steps` lasts.
    pub fn warp_once(&mut self) {
        if self.warp_steps > 0 {
            self.warp_steps -= 1;
            let w = self.warp_per_step;
            self.hinges
                .par_iter_mut()
                .for_each(|st| warp_clocks(&mut st.friction, &mut st.plastic, w));
        }
    }
}

#[cfg(test)]
#[path = "wrinkle_tests.rs"]
mod tests;
