//! Steps 2, 3, 4 and 7 of spec §6.1: the per-vertex terms of the step.
//! Gravity and the handle springs (A19); the cubic obstacle penalty of §6.3
//! with Coulomb friction as implicit tangential damping and an inelastic
//! approach; and cloth–cloth repulsion between the proximity pairs found at
//! `x_n`, lumped onto the diagonal blocks so the matrix pattern stays fixed.

use rayon::prelude::*;

use super::model::Model;
use super::params::StepParams;
use super::selfcollide::ProximityPair;
use super::state::{Pins, State};
use crate::collide::{BoundaryMode, Collider};
use crate::math::{Mat3, Vec3};

/// Gravity, handle springs and obstacle contact per vertex into `force`
/// (N), `k_diag` (stiffness, N/m) and `d_diag` (damping, kg/s), in
/// parallel; returns the vertices touching an obstacle's repulsion layer.
#[allow(clippy::too_many_arguments)]
pub(super) fn vertex_terms(
    model: &Model,
    state: &State,
    pins: &Pins,
    colliders: &[Collider],
    p: &StepParams,
    force: &mut [Vec3<f64>],
    k_diag: &mut [Mat3<f64>],
    d_diag: &mut [Mat3<f64>],
) -> usize {
    let h = p.dt;
    let cp = p.contact;
    force
        .par_iter_mut()
        .zip(k_diag.par_iter_mut())
        .zip(d_diag.par_iter_mut())
        .enumerate()
        .map(|(i, ((f, kd), dd))| {
            let xi = state.x[i];
            let mut fi = p.gravity * model.mass[i];
            let mut ki = Mat3::zero();
            let mut di = Mat3::zero();
            if let Some(&kh) = pins.stiffness.get(i)
                && kh > 0.0
            {
                // Spec §6.1 step 4 (A19): f = −k_h (x − x_h), J = −k_h I.
                fi -= (xi - pins.target[i]) * kh;
                ki += Mat3::identity() * kh;
            }
            let mut touching = 0usize;
            for c in colliders {
                // Cubic penalty of §6.3 between a vertex and an obstacle
                // surface: gap c = φ − d_rep, q = max(−c, 0),
                // E = k_c A q³/(6 d_rep).
                let Some(ct) = c.query_within(xi, cp.repulsion_distance) else {
                    continue;
                };
                let q = cp.repulsion_distance - ct.phi;
                if q <= 0.0 {
                    continue;
                }
                touching = 1;
                let a = model.vertex_area[i];
                let kc = cp.repulsion_stiffness * a;
                let fn_mag = kc * q * q / (2.0 * cp.repulsion_distance);
                fi += ct.normal * fn_mag;
                ki += Mat3::outer(ct.normal, ct.normal) * (kc * q / cp.repulsion_distance);
                // Coulomb friction as implicit tangential damping, capped so
                // that it at most stops the relative slide in one step.
                let mu = match c.mode() {
                    BoundaryMode::Sticky => f64::INFINITY,
                    BoundaryMode::Slip => 0.0,
                    BoundaryMode::Separate => c.friction(),
                };
                let nn = Mat3::outer(ct.normal, ct.normal);
                let proj = Mat3::identity() - nn;
                let vrel = state.v[i] - ct.velocity;
                let vn = vrel.dot(ct.normal);
                if vn < 0.0 {
                    // Inelastic approach inside the repulsion layer (as the
                    // repulsion impulses of Bridson et al. 2002, which the
                    // paper cites for contact): implicit normal damping that
                    // removes the approach speed within the step. Without
                    // it the cubic penalty is a lossless spring and cloth
                    // bounces off obstacles like a ball.
                    let cn = model.mass[i] / h;
                    fi -= ct.normal * (cn * vn);
                    di += nn * cn;
                }
                let vt = proj * vrel;
                let vtn = vt.norm();
                if mu > 0.0 && vtn > 0.0 {
                    let cap = model.mass[i] / h;
                    let cf = (mu * fn_mag / vtn).min(cap);
                    fi -= vt * cf;
                    di += proj * cf;
                }
            }
            *f = fi;
            *kd = ki;
            *dd = di;
            touching
        })
        .sum::<usize>()
}

/// Adds the cloth–cloth repulsion of the proximity `pairs` (with friction
/// and an inelastic approach) to `force`, `k_diag` and `d_diag`.
#[allow(clippy::too_many_arguments)]
pub(super) fn self_contact(
    pairs: &[ProximityPair],
    state: &State,
    inv_mass: &[f64],
    p: &StepParams,
    force: &mut [Vec3<f64>],
    k_diag: &mut [Mat3<f64>],
    d_diag: &mut [Mat3<f64>],
) {
    let (h, cp) = (p.dt, p.contact);
    // Cloth–cloth repulsion (§6.3), lumped onto the diagonal blocks of the
    // four vertices so the matrix pattern stays fixed (the force is exact;
    // only its Jacobian is approximated, which keeps A SPD). Sequential:
    // pairs are few and this keeps the sum order fixed.
    for pr in pairs {
        let q = cp.repulsion_distance - pr.distance;
        if q <= 0.0 {
            continue;
        }
        let kc = cp.repulsion_stiffness * pr.area;
        let fn_mag = kc * q * q / (2.0 * cp.repulsion_distance);
        let stiff = kc * q / cp.repulsion_distance;
        let nn = Mat3::outer(pr.normal, pr.normal);
        let proj = Mat3::identity() - nn;
        let mut vrel = Vec3::zero();
        let mut wm = 0.0;
        for (&vi, &wk) in pr.vertices.iter().zip(&pr.weights) {
            vrel += state.v[vi as usize] * wk;
            wm += wk * wk * inv_mass[vi as usize];
        }
        let vt = proj * vrel;
        let vtn = vt.norm();
        let cf = if vtn > 0.0 && wm > 0.0 {
            (cp.self_friction * fn_mag / vtn).min(1.0 / (h * wm))
        } else {
            0.0
        };
        // Inelastic approach, as for obstacles: the relative normal
        // speed of the pair is removed within the step.
        let vn = vrel.dot(pr.normal);
        let cn = if vn < 0.0 && wm > 0.0 { 1.0 / (h * wm) } else { 0.0 };
        for (&vi, &wk) in pr.vertices.iter().zip(&pr.weights) {
            let i = vi as usize;
            force[i] += pr.normal * (fn_mag * wk - cn * vn * wk) - vt * (cf * wk);
            k_diag[i] += nn * (stiff * wk * wk);
            d_diag[i] += proj * (cf * wk * wk) + nn * (cn * wk * wk);
        }
    }
}
