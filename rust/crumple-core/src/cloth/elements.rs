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
use super::model::Model;
use super::state::State;
use super::wrinkle;
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
            let w = &gp.wrinkles;
            let (kappa_b, kappa_f) = (gp.kappa_b, gp.kappa_f);
            let xs = [
                x[hv[0] as usize],
                x[hv[1] as usize],
                x[hv[2] as usize],
                x[hv[3] as usize],
            ];
            let (theta, g) = hinge::dihedral_angle_and_gradient(&xs);
            let theta_bar = model.hinge_theta_bar[e];
            let s = model.hinge_s[e];
            let mut yielded = false;
            if w.bend_plasticity {
                yielded = wrinkle::plastic_update(pl, &gp.bend_plastic, theta - theta_bar, h);
            }
            let theta_p = if w.bend_plasticity { pl.theta_p } else { 0.0 };
            let mut moment = s * kappa_b * (theta - theta_bar - theta_p);
            let mut coef = s * kappa_b;
            let mut slipped = false;
            match w.bend_friction {
                BendFriction::Off => {}
                BendFriction::Dwell => {
                    let delta = wrinkle::friction_update(fr, &gp.bend_friction, theta, h);
                    // A slip resets the dwell clock (§4.1).
                    slipped = fr.t_stick == 0.0;
                    moment += s * kappa_f * delta;
                    if w.friction_slip_tangent || !slipped {
                        coef += s * kappa_f;
                    }
                }
                BendFriction::Dahl => {
                    let slope = wrinkle::dahl_update(dahl_sigma, &gp.dahl, theta - *angle);
                    moment += s * *dahl_sigma;
                    coef += s * slope.max(0.0);
                }
            }
            *angle = theta;
            *out = HingeOut { g, moment, coef };
            (slipped as usize, yielded as usize)
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
