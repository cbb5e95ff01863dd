//! Plasticity inside shape matching (spec shape_matching §4; Choi's
//! multiplicative model as the paper adapts it): once per step, on the final
//! positions, each cluster compares its optimal elastic stretch with its
//! yield and hands a share of the volume-preserving part to its plastic
//! matrix F_P, with the paper's per-step clamp; work hardening raises the
//! yield. The end-of-step fit is also the snapshot cluster re-sampling
//! interpolates from (spec §4.1, §6.1).

use rayon::prelude::*;

use super::params::RotationFit;
use super::shape_match::{
    ClusterScratch, aqq, aqq_eigenvalues, degenerate_from, elastic_stretch, fit_sums, rotation_source,
};
use super::state::{Clusters, Particles};
use crate::math::{Mat3, Vec3, extract_rotation, sym_eigen3};

/// The per-step clamp of F_P's change (spec §4.4: entries of diag d in [0.8, 1.2]).
pub const STEP_CLAMP: (f32, f32) = (0.8, 1.2);

/// Below this principal stretch a cluster is inverted or collapsed and skips
/// plasticity this step (spec §4.3).
pub const MIN_STRETCH: f32 = 1e-4;

/// A cluster whose rest shape is thinner than this many spacings (RMS
/// extent along A_qq's weakest axis, `√(λ_min(A_qq) / Σμ)`) skips
/// plasticity: it is about one particle layer thick, so its strain across
/// the layer compares sub-spacing motions with a near-zero extent. Same-body
/// particles do not collide (spec §1.4), so gravity presses such a layer
/// flat, that strain stays above any yield, the volume-preserving flow turns
/// it into growth along the layer, and re-sampling (which replaces the
/// clusters that pass the F_P cap) never stops it: a two-layer dough sheet
/// went from 512 to 12K particles in 2 s. Not in the paper or the spec
/// (whose degeneracy bound, λ_min < 1e-6 λ_max, is for exactly flat
/// clusters); a layer is RMS 0, two layers are RMS r/2, so a quarter
/// spacing stops only one-layer clusters.
pub const THIN_EXTENT: f32 = 0.25;

/// Whether a rest shape with second moment `aqq` and weight `mass` is too
/// thin for plasticity at particle spacing `r` (see [`THIN_EXTENT`]).
pub fn is_thin(aqq: &Mat3<f32>, mass: f32, r: f32) -> bool {
    thin_from(sym_eigen3(aqq).eigenvalues, mass, r)
}

/// [`is_thin`] from A_qq's eigenvalues `e`. Non-finite moments or weights
/// count as thin (no flow).
#[allow(clippy::neg_cmp_op_on_partial_ord)]
fn thin_from(e: Vec3<f32>, mass: f32, r: f32) -> bool {
    let t = THIN_EXTENT * r;
    !(e.is_finite() && e.min_element() >= t * t * mass)
}

/// The plastic parameters of one cluster (its body's material).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlasticParams {
    /// Flow rate ν.
    pub flow_rate: f32,
    /// Hardening κ, 1/s.
    pub hardening: f32,
    /// ‖F_P‖_F cap, applied when `capped` (re-sampling off, spec §4.8).
    pub cap: f32,
    /// Whether the cap rejects updates.
    pub capped: bool,
}

/// What one cluster's plastic update did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlasticStep {
    /// New F_P.
    pub fp: Mat3<f32>,
    /// New yield.
    pub yield_strain: f32,
    /// Flow fraction γ (0: no flow).
    pub gamma: f32,
    /// ‖ε‖ = max |ln λ| of the elastic stretch.
    pub strain: f32,
    /// The update was rejected by the cap.
    pub capped: bool,
}

/// Spec §4.2–4.5 for one cluster: elastic stretch `s` (symmetric), current
/// `fp` and yield, step `dt`. Skips (returns F_P unchanged, γ = 0) for an
/// inverted or collapsed stretch, below yield, or when the cap rejects.
// NaN must take the refusing branch of every `!(a > b)` below.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
pub fn plastic_update(
    s: &Mat3<f32>,
    fp: &Mat3<f32>,
    yield_strain: f32,
    p: &PlasticParams,
    dt: f32,
) -> PlasticStep {
    let unchanged = |strain: f32, capped: bool| PlasticStep {
        fp: *fp,
        yield_strain,
        gamma: 0.0,
        strain,
        capped,
    };
    if !s.is_finite() {
        return unchanged(0.0, false);
    }
    let eig = sym_eigen3(s);
    let lam = eig.eigenvalues;
    if !(lam.min_element() > MIN_STRETCH) {
        return unchanged(0.0, false);
    }
    let strain = lam.x.ln().abs().max(lam.y.ln().abs()).max(lam.z.ln().abs());
    if !(strain > yield_strain) {
        return unchanged(strain, false);
    }
    let gamma = (p.flow_rate * (strain - yield_strain) / strain).min(1.0);
    if !(gamma > 0.0) {
        return unchanged(strain, false);
    }
    // |Λ| read as the determinant (spec §13 item 5).
    let j_cbrt = (lam.x * lam.y * lam.z).ln() * (1.0 / 3.0);
    let d = Vec3::new(
        ((lam.x.ln() - j_cbrt) * gamma)
            .exp()
            .clamp(STEP_CLAMP.0, STEP_CLAMP.1),
        ((lam.y.ln() - j_cbrt) * gamma)
            .exp()
            .clamp(STEP_CLAMP.0, STEP_CLAMP.1),
        ((lam.z.ln() - j_cbrt) * gamma)
            .exp()
            .clamp(STEP_CLAMP.0, STEP_CLAMP.1),
    );
    let v = eig.eigenvectors;
    let new_fp = v * Mat3::from_diagonal(d) * v.transpose() * *fp;
    if p.capped && !(new_fp.norm() <= p.cap) {
        return unchanged(strain, true);
    }
    PlasticStep {
        fp: new_fp,
        // Hardening as an increment (spec §4.5, §13 item 4).
        yield_strain: yield_strain + p.hardening * strain * dt,
        gamma,
        strain,
        capped: false,
    }
}

/// The end-of-step state of every cluster that re-sampling reads (spec §6.1).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// Centre of mass c, m.
    pub c: Vec<Vec3<f32>>,
    /// Elastic map `A_pq A_qq⁻¹` with the updated F_P (R when degenerate).
    pub a: Vec<Mat3<f32>>,
    /// Yield after the update.
    pub yield_strain: Vec<f32>,
    /// Body of each cluster (the interpolation uses only the same body's).
    pub body: Vec<u32>,
}

/// Counters of one end-of-step pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlasticCounts {
    /// Clusters whose F_P changed.
    pub flowed: u32,
    /// Updates rejected by the cap.
    pub capped: u32,
    /// Degenerate clusters (no plasticity).
    pub degenerate: u32,
}

/// Spec §1.3 step 9 / §9 step 8 for every cluster: fit (c, A_pq, A_qq, R
/// with `rotation_iterations` warm-started Müller steps), elastic stretch,
/// plastic update, hardening, degeneracy flag and snapshot. The sums are
/// the solver loop's ([`fit_sums`] over `scratch`, prepared for these
/// clusters and memberships: crate-private, as only the solver holds one).
#[allow(clippy::too_many_arguments)]
pub(crate) fn end_of_step(
    particles: &Particles,
    clusters: &mut Clusters,
    scratch: &ClusterScratch,
    plastic: &[PlasticParams],
    fit: RotationFit,
    rotation_iterations: u32,
    dt: f32,
    spacing: f32,
    snapshot: &mut Snapshot,
) -> PlasticCounts {
    let n = clusters.len();
    snapshot.c.resize(n, Vec3::zero());
    snapshot.a.resize(n, Mat3::identity());
    snapshot.yield_strain.resize(n, 0.0);
    snapshot.body.clone_from(&clusters.body);
    let Clusters {
        offset,
        member,
        fp,
        yield_strain,
        quat,
        qsum,
        degenerate,
        ..
    } = clusters;
    let x = &particles.x;
    let (flowed, capped, deg_count) = fp
        .par_iter_mut()
        .zip(yield_strain.par_iter_mut())
        .zip(quat.par_iter_mut())
        .zip(degenerate.par_iter_mut())
        .zip(snapshot.c.par_iter_mut())
        .zip(snapshot.a.par_iter_mut())
        .zip(snapshot.yield_strain.par_iter_mut())
        .enumerate()
        .map(|(c, ((((((fp, ys), q), deg), sc), sa), sy))| {
            let range = offset[c] as usize..offset[c + 1] as usize;
            let count = range.len();
            let (centre, b) = fit_sums(
                x,
                &member[range.clone()],
                &scratch.weighted[range],
                scratch.sums[c],
            );
            let apq = b * fp.transpose();
            let a_qq = aqq(fp, &qsum[c]);
            let eig = aqq_eigenvalues(count, &a_qq);
            *deg = degenerate_from(eig);
            let src = rotation_source(fit, &apq, &a_qq, *deg);
            extract_rotation(&src, q, rotation_iterations);
            let r = q.to_mat3();
            let mut flowed = 0;
            let mut capped = 0;
            // An infinite yield never flows: skip the two eigen-solves (same result).
            let thin = eig.is_none_or(|e| thin_from(e, scratch.sums[c].0 as f32, spacing));
            if !*deg && ys.is_finite() && !thin {
                let s = elastic_stretch(&r, &apq, &a_qq);
                let step = plastic_update(&s, fp, *ys, &plastic[c], dt);
                flowed = u32::from(step.gamma > 0.0);
                capped = u32::from(step.capped);
                *fp = step.fp;
                *ys = step.yield_strain;
            }
            // Snapshot with the updated F_P: A_snap = B Qsum⁻¹ F_P⁻¹ (spec §4.1).
            *sc = centre.cast::<f32>();
            *sa = match (
                *deg,
                qsum[c].try_inverse(f32::MIN_POSITIVE),
                fp.try_inverse(f32::MIN_POSITIVE),
            ) {
                (false, Some(qi), Some(fi)) => b * qi * fi,
                _ => r,
            };
            *sy = *ys;
            (flowed, capped, u32::from(*deg))
        })
        // Integer sums: the same for any grouping, so for any thread count.
        .reduce(|| (0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2));
    PlasticCounts {
        flowed,
        capped,
        degenerate: deg_count,
    }
}

#[cfg(test)]
#[path = "plasticity_tests.rs"]
mod tests;
