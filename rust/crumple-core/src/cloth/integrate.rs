//! Steps 11–14 of spec §6.1: `v += Δv`, `x += h v`; projection out of the
//! obstacles to the contact thickness with the shared boundary response
//! (§6.3 [R]); the self-collision fail-safe (continuous collision, impact
//! zones) with `v += (x_corrected − x_candidate)/h`; the clock; and the
//! divergence check.

use rayon::prelude::*;

use super::params::StepParams;
use super::selfcollide::SelfCollision;
use super::state::State;
use crate::collide::{Collider, boundary_response};
use crate::math::Vec3;
use crate::{Error, Result};

/// Integrates `state` by `dv` over the step (`p.dt`), projects out of the
/// `colliders`, runs the self-collision fail-safe when `self_collision` is
/// given (with `x_prev`, `cand` and `inv_mass` as scratch and masses), and
/// checks the result. Returns the collisions and impact zones resolved.
#[allow(clippy::too_many_arguments)]
pub(super) fn integrate(
    state: &mut State,
    dv: &[f64],
    colliders: &[Collider],
    p: &StepParams,
    self_collision: Option<&mut SelfCollision>,
    x_prev: &mut [Vec3<f64>],
    cand: &mut [Vec3<f64>],
    inv_mass: &[f64],
) -> Result<(usize, usize)> {
    let (h, cp) = (p.dt, p.contact);
    let mut resolved = (0, 0);
    x_prev.copy_from_slice(&state.x);
    state
        .x
        .par_iter_mut()
        .zip(state.v.par_iter_mut())
        .enumerate()
        .for_each(|(i, (x, v))| {
            *v += Vec3::new(dv[3 * i], dv[3 * i + 1], dv[3 * i + 2]);
            *x += *v * h;
            for c in colliders {
                // Post-step projection to the thickness layer (§6.3 [R]):
                // push out along the normal, then the shared boundary
                // response removes the approaching normal velocity.
                if let Some(ct) = c.query_within(*x, cp.thickness)
                    && ct.phi < cp.thickness
                {
                    *x += ct.normal * (cp.thickness - ct.phi);
                    *v = boundary_response(*v, ct.velocity, ct.normal, c.mode(), c.friction());
                }
            }
        });
    if let Some(sc) = self_collision {
        cand.copy_from_slice(&state.x);
        let rs = sc.resolve(x_prev, &mut state.x, inv_mass, cp.thickness)?;
        resolved = (rs.collisions, rs.zones);
        // v += (x_corrected − x_candidate)/h (spec §6.1 step 12).
        let cand = &*cand;
        state.v.par_iter_mut().enumerate().for_each(|(i, v)| {
            *v += (state.x[i] - cand[i]) * (1.0 / h);
        });
    }
    state.time += h;
    state.step += 1;
    check_finite(state, h)?;
    Ok(resolved)
}

/// Largest speed accepted before a step is declared diverged, m/s. Cloth in
/// these scenes moves at most a few m/s; 1e3 means the solve blew up.
const MAX_SPEED: f64 = 1e3;

fn check_finite(state: &State, h: f64) -> Result<()> {
    let bad = state
        .x
        .par_iter()
        .zip(state.v.par_iter())
        .position_first(|(x, v)| {
            !x.is_finite() || !v.is_finite() || v.norm_squared() > MAX_SPEED * MAX_SPEED
        });
    if let Some(i) = bad {
        return Err(Error::Diverged {
            step: state.step,
            time: state.time,
            what: format!(
                "vertex {i} has position {:?} and velocity {:?} (limit {MAX_SPEED} m/s); reduce dt \
                 (now {h} s), lower the stiffnesses, or check pins and colliders that fight each other",
                state.x[i], state.v[i]
            ),
        });
    }
    Ok(())
}
