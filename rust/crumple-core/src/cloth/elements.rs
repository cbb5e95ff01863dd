//! Steps 5, 6 and 8 of spec §6.1: the element kernels at `x_n`. Each
//! triangle gets its Green strain, tensile plasticity and friction (§5) and
//! its membrane force and Gauss–Newton Jacobian; each hinge its dihedral
//! angle, plasticity then friction (§4.3; or the Dahl baseline, A.1) and its
//! bending moment; then the hold-time warp advances the clocks (§4.6). Every
//! element writes only its own slot, in parallel; the per-garment constants
//! come from the model (`ElementParams`).

use rayon::prelude::*;

use super::hinge;
use super::material::BendFriction;
use super::membrane::{self, Strain};
use super::model::{ElementParams, Model};
use super::state::State;
use super::wrinkle::{self, FrictionState, PlasticState};
use crate::math::{Mat3, Vec3};

/// Contribution of one hinge to the step: gradient, moment, GN coefficient.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct HingeOut {
    pub(super) g: [Vec3<f64>; 4],
    pub(super) moment: f64,
    pub(super) coef: f64,
}

/// Contribution of one triangle: forces and GN Jacobian blocks (∂f_a/∂x_b).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct TriOut {
    pub(super) f: [Vec3<f64>; 3],
    pub(super) jac: [[Mat3<f64>; 3]; 3],
}

/// Runs the element kernels of one step of length `h` (with hold warp
/// `warp` s) into `tri_out` and `hinge_out`, updating the internal
/// variables in `state`. Returns the hinges that slipped and yielded.
pub(super) fn element_forces(
    model: &Model,
    state: &mut State,
    h: f64,
    warp: f64,
    tri_out: &mut [TriOut],
    hinge_out: &mut [HingeOut],
) -> (usize, usize) {
    // Element constants of the garment each element belongs to.
    let garment = |g: u32| &model.garments[g as usize].params;
    // ---- 5. membrane (parallel over triangles) ----
    let x = &state.x;
    tri_out
        .par_iter_mut()
        .zip(state.tri_plastic.par_iter_mut())
        .zip(state.tri_friction.par_iter_mut())
        .enumerate()
        .for_each(|(t, ((out, tp), tf))| {
            let f = model.faces[t];
            let gp = garment(model.face_garment[t]);
            let w = &gp.wrinkles;
            let y = [x[f[0] as usize], x[f[1] as usize], x[f[2] as usize]];
            let rest = &model.tri_rest[t];
            let s: Strain = membrane::green_strain(rest, &y);
            let mut e_el = s.e;
            if w.tensile_plasticity {
                for c in 0..3 {
                    wrinkle::plastic_update(&mut tp[c], &gp.tensile_plastic[c], s.e[c], h);
                    e_el[c] -= tp[c].theta_p;
                }
            }
            *out = TriOut::default();
            membrane::add_membrane(rest, &s, &gp.membrane, &e_el, &mut out.f, &mut out.jac);
            if w.tensile_friction {
                let mut delta = [0.0; 3];
                for c in 0..3 {
                    delta[c] = wrinkle::friction_update(&mut tf[c], &gp.tensile_friction[c], s.e[c], h);
                }
                membrane::add_tensile_friction(
                    rest,
                    &s,
                    &gp.tensile_friction_stiffness,
                    &delta,
                    &mut out.f,
                    &mut out.jac,
                );
            }
        });

    // ---- 6. bending (parallel over hinges) ----
    let (slips, yields) = hinge_out
        .par_iter_mut()
        .zip(state.hinge_plastic.par_iter_mut())
        .zip(state.hinge_friction.par_iter_mut())
        .zip(state.hinge_dahl.par_iter_mut())
        .zip(state.hinge_angle.par_iter_mut())
        .enumerate()
        .map(|(e, ((((out, pl), fr), dahl_sigma), angle))| {
            let hv = model.hinges[e];
            let gp = garment(model.hinge_garment[e]);
            let xs = [
                x[hv[0] as usize],
                x[hv[1] as usize],
                x[hv[2] as usize],
                x[hv[3] as usize],
            ];
            let (theta, g) = hinge::dihedral_angle_and_gradient(&xs);
            let r = hinge_response(
                gp,
                HingeVars {
                    plastic: pl,
                    friction: fr,
                    dahl: dahl_sigma,
                    angle,
                },
                theta,
                model.hinge_theta_bar[e],
                model.hinge_s[e],
                h,
            );
            *out = HingeOut {
                g,
                moment: r.moment,
                coef: r.coef,
            };
            (r.slipped as usize, r.yielded as usize)
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));

    // ---- 8. hold-time warp (§4.6): all hinges, optionally all triangles ----
    if warp > 0.0 {
        state
            .hinge_friction
            .par_iter_mut()
            .zip(state.hinge_plastic.par_iter_mut())
            .for_each(|(f, pl)| wrinkle::warp_clocks(f, pl, warp));
        // Triangle clocks only for garments whose switches ask for it.
        state
            .tri_friction
            .par_iter_mut()
            .zip(state.tri_plastic.par_iter_mut())
            .zip(model.face_garment.par_iter())
            .filter(|(_, g)| garment(**g).wrinkles.warp_faces)
            .for_each(|((f, pl), _)| {
                for c in 0..3 {
                    wrinkle::warp_clocks(&mut f[c], &mut pl[c], warp);
                }
            });
    }
    (slips, yields)
}

/// One hinge's internal variables (spec §2.3), borrowed from wherever the
/// caller keeps them (the cloth's arrays, or an EOL cloth's per-hinge state
/// that the remesher carries).
pub(crate) struct HingeVars<'a> {
    pub(crate) plastic: &'a mut PlasticState,
    pub(crate) friction: &'a mut FrictionState,
    /// Dahl moment (baseline E9).
    pub(crate) dahl: &'a mut f64,
    /// Dihedral angle at the start of the last step, rad.
    pub(crate) angle: &'a mut f64,
}

/// What one hinge's update gives: the bending moment `∂W/∂θ` (J), the
/// Gauss–Newton coefficient (J/rad), and whether it slipped and yielded.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HingeResponse {
    pub(crate) moment: f64,
    pub(crate) coef: f64,
    pub(crate) slipped: bool,
    pub(crate) yielded: bool,
}

/// Spec §4.3 for one hinge at dihedral angle `theta` (rest `theta_bar`,
/// shape factor `s`), step `h`: plasticity, then friction (or the Dahl
/// baseline), then the moment `s κ_b (θ − θ̄ − θ_p) + s κ_f δ`. The one
/// kernel of the cloth module's step and of `crate::eol`'s wrinkles.
#[inline]
pub(crate) fn hinge_response(
    gp: &ElementParams,
    v: HingeVars<'_>,
    theta: f64,
    theta_bar: f64,
    s: f64,
    h: f64,
) -> HingeResponse {
    let w = &gp.wrinkles;
    let (kappa_b, kappa_f) = (gp.kappa_b, gp.kappa_f);
    let mut yielded = false;
    if w.bend_plasticity {
        yielded = wrinkle::plastic_update(v.plastic, &gp.bend_plastic, theta - theta_bar, h);
    }
    let theta_p = if w.bend_plasticity { v.plastic.theta_p } else { 0.0 };
    let mut moment = s * kappa_b * (theta - theta_bar - theta_p);
    let mut coef = s * kappa_b;
    let mut slipped = false;
    match w.bend_friction {
        BendFriction::Off => {}
        BendFriction::Dwell => {
            let delta = wrinkle::friction_update(v.friction, &gp.bend_friction, theta, h);
            // A slip resets the dwell clock (§4.1).
            slipped = v.friction.t_stick == 0.0;
            moment += s * kappa_f * delta;
            if w.friction_slip_tangent || !slipped {
                coef += s * kappa_f;
            }
        }
        BendFriction::Dahl => {
            let slope = wrinkle::dahl_update(v.dahl, &gp.dahl, theta - *v.angle);
            moment += s * *v.dahl;
            coef += s * slope.max(0.0);
        }
    }
    *v.angle = theta;
    HingeResponse {
        moment,
        coef,
        slipped,
        yielded,
    }
}
