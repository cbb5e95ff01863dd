//! Step 9 of spec §6.1: element forces gathered per vertex and the system
//! `A = M + h(h+γ)K + hD` assembled block row by block row, both from the
//! model's fixed gather lists (spec §11.1–2: the same sums in the same
//! order for any thread count), and `b = h f − h(h+γ)K v_n`.

use rayon::prelude::*;

use super::elements::{HingeOut, TriOut};
use super::linear_solve::LinearSystem;
use super::model::Model;
use super::state::State;
use crate::math::{Mat3, Vec3};
use crate::parallel::for_each_segment_mut;

/// Adds each vertex's share of the element forces to `force`.
pub(super) fn gather_element_forces(
    model: &Model,
    tri_out: &[TriOut],
    hinge_out: &[HingeOut],
    force: &mut [Vec3<f64>],
) {
    // Element forces gathered per vertex in a fixed order (spec §11.1).
    let pat = &model.pattern;
    force.par_iter_mut().enumerate().for_each(|(i, f)| {
        for &code in &pat.inc[pat.inc_ptr[i] as usize..pat.inc_ptr[i + 1] as usize] {
            let c = (code & 3) as usize;
            let e = (code >> 3) as usize;
            if code & 4 == 0 {
                *f += tri_out[e].f[c];
            } else {
                *f -= hinge_out[e].g[c] * hinge_out[e].moment;
            }
        }
    });
}

/// Writes `A` and `b` of a step of length `h` with Rayleigh damping
/// `damping` (s) into `sys`, from the element outputs, the per-vertex
/// stiffness `k_diag` and damping `d_diag` and the total forces `force`.
#[allow(clippy::too_many_arguments)]
pub(super) fn system(
    model: &Model,
    state: &State,
    h: f64,
    damping: f64,
    tri_out: &[TriOut],
    hinge_out: &[HingeOut],
    k_diag: &[Mat3<f64>],
    d_diag: &[Mat3<f64>],
    force: &[Vec3<f64>],
    sys: &mut LinearSystem,
) {
    let pat = &model.pattern;
    // ---- 9. assemble A = M + h(h+γ)K + hD, block rows in parallel ----
    let hk = h * (h + damping);
    for_each_segment_mut(&mut sys.values, &sys.row_off, &|i, seg: &mut [f64]| {
        let (lo, hi) = (pat.row_ptr[i], pat.row_ptr[i + 1]);
        let nb = hi - lo;
        for kb in lo..hi {
            let mut kblk = Mat3::zero();
            for &code in &pat.src[pat.src_ptr[kb] as usize..pat.src_ptr[kb + 1] as usize] {
                let slot = (code & 15) as usize;
                let e = (code >> 5) as usize;
                if code & 16 == 0 {
                    kblk -= tri_out[e].jac[slot / 3][slot % 3];
                } else {
                    let ho = &hinge_out[e];
                    kblk += Mat3::outer(ho.g[slot / 4], ho.g[slot % 4]) * ho.coef;
                }
            }
            let mut a = kblk * hk;
            if kb == pat.diag[i] {
                a += k_diag[i] * hk + d_diag[i] * h + Mat3::identity() * model.mass[i];
            }
            let q = kb - lo;
            for r in 0..3 {
                let base = 3 * r * nb + 3 * q;
                seg[base..base + 3].copy_from_slice(&a.m[r]);
            }
        }
    });
    // b = h f − h(h+γ)K v_n = h f − (A − M − hD) v_n  (spec §6.1 step 9).
    for (d, v) in sys.vflat.chunks_exact_mut(3).zip(&state.v) {
        d.copy_from_slice(&v.to_array());
    }
    let mut tmp = std::mem::take(&mut sys.tmp);
    sys.mul(&sys.vflat, &mut tmp);
    sys.rhs.par_chunks_mut(3).enumerate().for_each(|(i, b)| {
        let v = state.v[i];
        let mv = v * model.mass[i] + d_diag[i] * v * h;
        let av = Vec3::new(tmp[3 * i], tmp[3 * i + 1], tmp[3 * i + 2]);
        let r = force[i] * h - (av - mv);
        b.copy_from_slice(&r.to_array());
    });
    sys.tmp = tmp;
}
