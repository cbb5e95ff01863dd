//! The boundary response shared by every solver (MPM spec §3.6).

use crate::math::{Real, Vec3};
use crate::{Result, invalid};

/// How a velocity inside a collider is corrected (MPM spec §3.6, after
/// Stomakhin et al. 2013 and the Jiang et al. 2016 course notes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum BoundaryMode {
    /// The material moves with the collider: `v = v_co`. Pins cloth to a
    /// moving hand; no sliding and no separation.
    Sticky,
    /// Only the approaching normal part of the relative velocity is removed;
    /// tangential motion and separation are free (frictionless contact).
    Slip,
    /// Coulomb friction with coefficient μ while approaching; separation is
    /// free. The default: it is the physical one.
    #[default]
    Separate,
}

impl BoundaryMode {
    /// Parses `"sticky"`, `"slip"` or `"separate"` (the names the Python
    /// API uses), ignoring ASCII case.
    pub fn from_name(name: &str) -> Result<Self> {
        match name.to_ascii_lowercase().as_str() {
            "sticky" => Ok(BoundaryMode::Sticky),
            "slip" => Ok(BoundaryMode::Slip),
            "separate" => Ok(BoundaryMode::Separate),
            _ => invalid!("mode must be one of \"sticky\", \"slip\", \"separate\", got {name:?}"),
        }
    }
    /// The name [`from_name`](Self::from_name) accepts.
    pub fn name(self) -> &'static str {
        match self {
            BoundaryMode::Sticky => "sticky",
            BoundaryMode::Slip => "slip",
            BoundaryMode::Separate => "separate",
        }
    }
}

/// Corrects velocity `v` (m/s) of a point inside or on a collider whose
/// surface velocity there is `v_co` (m/s) and whose outward unit normal is
/// `n`, exactly as MPM spec §3.6 (grid-node collision objects):
///
/// ```text
/// v_rel = v − v_co ;  v_n = v_rel·n
/// sticky:    v_rel = 0
/// slip:      if v_n < 0: v_rel −= v_n n
/// separate:  if v_n < 0:  v_t = v_rel − v_n n
///                         if |v_t| ≤ −μ v_n: v_rel = 0
///                         else v_rel = v_t + μ v_n v_t/|v_t|
/// return v_rel + v_co
/// ```
///
/// `friction` is the dimensionless Coulomb coefficient μ ≥ 0 (used by
/// `Separate` only; negative values act as 0). `n` must be unit length (the
/// colliders' normals are). One function for all solvers so that MPM, cloth
/// and PBD treat contact identically; callers decide *where* to apply it
/// (`φ ≤ 0`).
#[inline]
pub fn boundary_response<T: Real>(
    v: Vec3<T>,
    v_co: Vec3<T>,
    n: Vec3<T>,
    mode: BoundaryMode,
    friction: T,
) -> Vec3<T> {
    let v_rel = v - v_co;
    let v_n = v_rel.dot(n);
    match mode {
        BoundaryMode::Sticky => v_co,
        BoundaryMode::Slip => {
            if v_n < T::ZERO {
                v_rel - n * v_n + v_co
            } else {
                v
            }
        }
        BoundaryMode::Separate => {
            if v_n < T::ZERO {
                let mu = friction.max(T::ZERO);
                let v_t = v_rel - n * v_n;
                let t = v_t.norm();
                if t <= -mu * v_n {
                    v_co
                } else {
                    v_t + v_t * (mu * v_n / t) + v_co
                }
            } else {
                v
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collide::test_util::Rng;

    fn random_case(rng: &mut Rng) -> (Vec3<f64>, Vec3<f64>, Vec3<f64>) {
        let v = rng.point(Vec3::splat(-2.0), Vec3::splat(2.0));
        let v_co = rng.point(Vec3::splat(-1.0), Vec3::splat(1.0));
        (v, v_co, rng.unit())
    }

    #[test]
    fn sticky_gives_collider_velocity() {
        let mut rng = Rng::new(10);
        for _ in 0..500 {
            let (v, v_co, n) = random_case(&mut rng);
            assert_eq!(boundary_response(v, v_co, n, BoundaryMode::Sticky, 0.3), v_co);
        }
    }

    #[test]
    fn slip_removes_only_approaching_normal_velocity() {
        let mut rng = Rng::new(11);
        let (mut approaching, mut separating) = (0, 0);
        for _ in 0..1000 {
            let (v, v_co, n) = random_case(&mut rng);
            let out = boundary_response(v, v_co, n, BoundaryMode::Slip, 0.7);
            let vn_in = (v - v_co).dot(n);
            let vn_out = (out - v_co).dot(n);
            assert!(vn_out >= -1e-12, "approaching normal velocity left: {vn_out}");
            if vn_in >= 0.0 {
                separating += 1;
                assert_eq!(out, v, "separating velocity changed");
            } else {
                approaching += 1;
                assert!(vn_out.abs() < 1e-12);
                // Tangential part unchanged.
                let t_in = (v - v_co) - n * vn_in;
                let t_out = (out - v_co) - n * vn_out;
                assert!((t_in - t_out).norm() < 1e-12);
            }
        }
        assert!(approaching > 300 && separating > 300);
    }

    #[test]
    fn separate_obeys_coulomb_cone() {
        let mut rng = Rng::new(12);
        let (mut stuck, mut sliding) = (0, 0);
        for _ in 0..2000 {
            let (v, v_co, n) = random_case(&mut rng);
            let mu = rng.uniform(0.0, 1.5);
            let out = boundary_response(v, v_co, n, BoundaryMode::Separate, mu);
            let rel = v - v_co;
            let vn = rel.dot(n);
            if vn >= 0.0 {
                assert_eq!(out, v, "separating velocity changed");
                continue;
            }
            let vt = rel - n * vn;
            let rel_out = out - v_co;
            let vn_out = rel_out.dot(n);
            let vt_out = rel_out - n * vn_out;
            assert!(vn_out.abs() < 1e-12, "normal velocity left: {vn_out}");
            let expect = (vt.norm() + mu * vn).max(0.0);
            assert!(
                (vt_out.norm() - expect).abs() < 1e-12,
                "|v_t'| = {} vs {expect}",
                vt_out.norm()
            );
            if expect > 0.0 {
                sliding += 1;
                // Friction acts against the sliding direction, never reverses it.
                assert!(vt_out.dot(vt) > 0.0);
                assert!(vt_out.cross(vt).norm() < 1e-10);
            } else {
                stuck += 1;
                assert!((out - v_co).norm() < 1e-12);
            }
        }
        assert!(stuck > 50 && sliding > 50, "{stuck} {sliding}");
    }

    #[test]
    fn separate_without_friction_is_slip_when_approaching() {
        let mut rng = Rng::new(13);
        for _ in 0..500 {
            let (v, v_co, n) = random_case(&mut rng);
            let a = boundary_response(v, v_co, n, BoundaryMode::Separate, 0.0);
            let b = boundary_response(v, v_co, n, BoundaryMode::Slip, 0.0);
            assert!((a - b).norm() < 1e-12);
        }
    }

    #[test]
    fn response_works_in_f32() {
        let v = Vec3::<f32>::new(1.0, -2.0, 0.0);
        let n = Vec3::<f32>::new(0.0, 1.0, 0.0);
        let out = boundary_response(v, Vec3::zero(), n, BoundaryMode::Separate, 0.25);
        assert!((out - Vec3::new(0.5, 0.0, 0.0)).norm() < 1e-6);
        let out = boundary_response(v, Vec3::zero(), n, BoundaryMode::Separate, 0.5);
        assert_eq!(out, Vec3::zero());
    }

    #[test]
    fn mode_names_round_trip() {
        for m in [BoundaryMode::Sticky, BoundaryMode::Slip, BoundaryMode::Separate] {
            assert_eq!(BoundaryMode::from_name(m.name()).unwrap(), m);
        }
        assert_eq!(BoundaryMode::from_name("SLIP").unwrap(), BoundaryMode::Slip);
        let e = BoundaryMode::from_name("bounce").unwrap_err().to_string();
        assert!(e.contains("bounce") && e.contains("separate"), "{e}");
    }
}
