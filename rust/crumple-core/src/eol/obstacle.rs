//! Obstacles and their sharp features (spec eol_cloth §4.1–4.2): boxes
//! (any orientation; their 12 edges and 8 corners), wires (a segment with
//! no thickness) and points (nails). Each moves rigidly over a step: wires
//! and points translate at a constant velocity, boxes also turn about
//! their centre at a constant angular velocity (spec §2.5's constant
//! twist). The obstacle velocity at a point is the exact finite difference
//! of §4.2, `v_obs(x) = (E(t+h)E(t)⁻¹x − x)/h`, which for a translating
//! body is its velocity, so EOL vertices on a translating feature stay on
//! it exactly; on a turning box the stepper maps their relative motion
//! into the turned frame (`step`), so they stay on it too.

use super::constraints::Feature;
use crate::collide::rotation;
use crate::math::{Mat3, Vec3};
use crate::validate::orthonormalize;

/// A box obstacle (spec §4.2): centre, half extents along its own axes,
/// its orientation (local → world), the velocity of its centre and its
/// angular velocity about the centre.
///
/// [D] The spec's twist is a body twist `E(t+h) = E(t)·exp(h[ξ])`; here
/// both parts are in the world frame (the centre moves on a straight line
/// while the box spins about it), the shared collider vocabulary's
/// `Motion::Constant`; the two agree when either part is zero.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoxObstacle {
    /// Centre, m.
    pub center: Vec3<f64>,
    /// Half extents, m.
    pub half: Vec3<f64>,
    /// Velocity over the coming step, m/s (zero when static).
    pub velocity: Vec3<f64>,
    /// Orientation, local → world (a proper rotation).
    pub rotation: Mat3<f64>,
    /// Angular velocity about its centre over the coming step, rad/s,
    /// world frame (zero when it does not turn).
    pub angular_velocity: Vec3<f64>,
    /// Coulomb friction coefficient μ of its faces, edges and corners.
    pub friction: f64,
}

/// A box corner (spec §4.1: an EOL feature like a point, with the three
/// face normals for its rows).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoxCorner {
    /// Where it is, m.
    pub position: Vec3<f64>,
    /// The outward normals of its three faces.
    pub normals: [Vec3<f64>; 3],
}

impl BoxCorner {
    /// `normalize(n1 + n2 + n3)` (spec §4.2).
    pub fn normal(&self) -> Vec3<f64> {
        (self.normals[0] + self.normals[1] + self.normals[2]).normalize_or_zero()
    }

    /// The EOL feature of a vertex on this corner of box `obstacle`.
    pub fn feature(&self, obstacle: u32) -> Feature {
        Feature::Corner {
            normals: self.normals,
            obstacle,
        }
    }
}

/// A wire (spec §4.1: a segment, "edge-like"): the cloth rests on it from
/// the side `normal` points to and bends and slides over it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wire {
    /// Start and end, m.
    pub ends: [Vec3<f64>; 2],
    /// Unit support normal, perpendicular to the wire (the side the cloth
    /// lies on; it may lift off that way).
    pub normal: Vec3<f64>,
    /// Velocity over the coming step, m/s.
    pub velocity: Vec3<f64>,
    /// Coulomb friction coefficient μ.
    pub friction: f64,
}

/// A point obstacle (a nail tip, spec §4.1: "corner-like"): the cloth rests
/// on it from the side `normal` points to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointObstacle {
    /// Where it is, m.
    pub position: Vec3<f64>,
    /// Unit normal (the side the cloth lies on).
    pub normal: Vec3<f64>,
    /// Velocity over the coming step, m/s.
    pub velocity: Vec3<f64>,
    /// Coulomb friction coefficient μ.
    pub friction: f64,
}

impl Wire {
    /// Unit tangent from `ends[0]` to `ends[1]`.
    pub fn tangent(&self) -> Vec3<f64> {
        (self.ends[1] - self.ends[0]).normalize_or_zero()
    }

    /// The EOL feature of a vertex on wire number `obstacle`.
    pub fn feature(&self, obstacle: u32) -> Feature {
        Feature::Wire {
            normal: self.normal,
            tangent: self.tangent(),
            obstacle,
        }
    }

    /// Distance of `x` from the segment, m.
    pub fn segment_distance(&self, x: Vec3<f64>) -> f64 {
        let t = self.tangent();
        let d = x - self.ends[0];
        let s = d.dot(t).clamp(0.0, (self.ends[1] - self.ends[0]).norm());
        (d - t * s).norm()
    }

    /// Distance of `x` from the wire's line, m.
    pub fn line_distance(&self, x: Vec3<f64>) -> f64 {
        let t = self.tangent();
        let d = x - self.ends[0];
        (d - t * d.dot(t)).norm()
    }
}

/// One sharp edge of a box: its end points, face normals and tangent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoxEdge {
    /// Start and end, m.
    pub ends: [Vec3<f64>; 2],
    /// The outward normals of its two faces.
    pub normals: [Vec3<f64>; 2],
    /// Unit tangent, from `ends[0]` to `ends[1]`.
    pub tangent: Vec3<f64>,
}

impl BoxEdge {
    /// The EOL feature of a vertex on this edge of box number `obstacle`.
    pub fn feature(&self, obstacle: u32) -> Feature {
        Feature::Edge {
            normals: self.normals,
            tangent: self.tangent,
            obstacle,
        }
    }

    /// `normalize(n1 + n2)`, the edge normal (spec §4.2).
    pub fn normal(&self) -> Vec3<f64> {
        (self.normals[0] + self.normals[1]).normalize_or_zero()
    }

    /// Distance of `x` from the edge (the segment between its ends), m.
    pub fn segment_distance(&self, x: Vec3<f64>) -> f64 {
        let d = x - self.ends[0];
        let t = d
            .dot(self.tangent)
            .clamp(0.0, (self.ends[1] - self.ends[0]).norm());
        (d - self.tangent * t).norm()
    }

    /// Distance of `x` from the edge's line, m.
    pub fn line_distance(&self, x: Vec3<f64>) -> f64 {
        let d = x - self.ends[0];
        (d - self.tangent * d.dot(self.tangent)).norm()
    }
}

/// [`BoxObstacle::turned_feature`] against a box's edges and corners listed
/// once by the caller (a loop over EOL vertices lists them once per box).
pub(crate) fn turned_among(
    feature: &Feature,
    turn: &Mat3<f64>,
    edges: &[BoxEdge],
    corners: &[BoxCorner],
    obstacle: u32,
) -> Option<Feature> {
    // The worst of the turned normals' best matches: 1 for the same
    // feature, at most cos 90° + 1e-6-ish rounding for any other.
    let fit = |a: &[Vec3<f64>], b: &[Vec3<f64>]| {
        a.iter()
            .map(|p| b.iter().map(|q| (*turn * *p).dot(*q)).fold(f64::MIN, f64::max))
            .fold(f64::MAX, f64::min)
    };
    let (found, fit) = match feature {
        Feature::Edge { normals, .. } => edges
            .iter()
            .map(|e| (e.feature(obstacle), fit(normals, &e.normals)))
            .max_by(|a, b| a.1.total_cmp(&b.1))?,
        Feature::Corner { normals, .. } => corners
            .iter()
            .map(|c| (c.feature(obstacle), fit(normals, &c.normals)))
            .max_by(|a, b| a.1.total_cmp(&b.1))?,
        Feature::Wire { .. } | Feature::Point { .. } => return None,
    };
    (fit >= 1.0 - 1e-6).then_some(found)
}

fn unit(k: usize, s: f64) -> Vec3<f64> {
    let mut v = Vec3::zero();
    v[k] = s;
    v
}

impl BoxObstacle {
    /// An axis-aligned static frictionless box.
    pub fn new(center: Vec3<f64>, half: Vec3<f64>) -> Self {
        Self {
            center,
            half,
            velocity: Vec3::zero(),
            rotation: Mat3::identity(),
            angular_velocity: Vec3::zero(),
            friction: 0.0,
        }
    }

    /// Whether it turns (a non-zero angular velocity).
    pub fn turns(&self) -> bool {
        self.angular_velocity != Vec3::zero()
    }

    /// Its rotation over a step of `h` s, `exp(h[ω])` (world frame).
    pub fn turn(&self, h: f64) -> Mat3<f64> {
        rotation::exp(self.angular_velocity * h)
    }

    /// The obstacle velocity at world point `x` over a step of `h` s (spec
    /// §4.2's finite difference `(E(t+h)E(t)⁻¹x − x)/h`), m/s: `x + h v_obs`
    /// is where the box's motion takes `x`. Exactly `velocity` when it
    /// does not turn.
    pub fn velocity_at(&self, x: Vec3<f64>, h: f64) -> Vec3<f64> {
        if !self.turns() {
            return self.velocity;
        }
        self.velocity_turning(x, h, &self.turn(h))
    }

    /// [`Self::velocity_at`] for a box that turns, with its step's turn
    /// `turn = self.turn(h)` already at hand (loops over vertices compute it
    /// once).
    pub fn velocity_turning(&self, x: Vec3<f64>, h: f64, turn: &Mat3<f64>) -> Vec3<f64> {
        let r = x - self.center;
        self.velocity + (*turn * r - r) * (1.0 / h)
    }

    /// Moves it over a step of `h` s: the centre at its velocity, the
    /// orientation turned by `exp(h[ω])` (re-orthonormalised, so rounding
    /// does not build up over many steps).
    pub fn advance(&mut self, h: f64) {
        if self.turns() {
            self.rotation = orthonormalize(self.turn(h) * self.rotation);
        }
        self.center += self.velocity * h;
    }

    /// Sets its velocity and angular velocity for the coming step of `h` s
    /// so that [`Self::advance`] lands it at centre `center` and
    /// orientation `rotation` (spec §4.2's finite-difference obstacle
    /// velocity between two poses): how a keyframed box, whose velocity
    /// changes at its keys, moves step by step exactly along its path
    /// (a step over a key takes the mean twist of the two segments).
    /// A pose it already has to rounding (a box at rest on its last key)
    /// gives zero velocities, not rounding-sized ones.
    pub fn aim(&mut self, center: Vec3<f64>, rotation: Mat3<f64>, h: f64) {
        let (dc, turn) = (
            center - self.center,
            rotation::log(rotation * self.rotation.transpose()),
        );
        let scale = 1.0 + self.center.norm() + self.half.norm();
        let rounding = |d: f64| d <= 1e-12 * scale;
        self.velocity = if rounding(dc.norm()) {
            Vec3::zero()
        } else {
            dc * (1.0 / h)
        };
        self.angular_velocity = if turn.norm() <= 1e-12 {
            Vec3::zero()
        } else {
            turn * (1.0 / h)
        };
    }

    /// The edge or corner feature of this box (number `obstacle`) that
    /// `feature`, one of its features before it turned by `turn`, has
    /// become: the one whose face normals best match the turned normals,
    /// in any order (the normals of a box's edges and corners are distinct
    /// axis directions). None when no feature's normals match the turned
    /// ones to 1e-6 (the box was re-posed, not turned by `turn`: its
    /// vertices are off their features) and for a wire or point feature.
    pub fn turned_feature(&self, feature: &Feature, turn: &Mat3<f64>, obstacle: u32) -> Option<Feature> {
        turned_among(feature, turn, &self.edges(), &self.corners(), obstacle)
    }

    /// `x` in the box's frame (origin at its centre).
    fn local(&self, x: Vec3<f64>) -> Vec3<f64> {
        self.rotation.transpose() * (x - self.center)
    }

    /// Local axis `k` with sign `s`, in the world.
    fn axis(&self, k: usize, s: f64) -> Vec3<f64> {
        self.rotation * unit(k, s)
    }

    /// Signed distance (spec §4.2), m: negative inside.
    pub fn signed_distance(&self, x: Vec3<f64>) -> f64 {
        let p = self.local(x);
        let q = Vec3::new(
            p.x.abs() - self.half.x,
            p.y.abs() - self.half.y,
            p.z.abs() - self.half.z,
        );
        let out = Vec3::new(q.x.max(0.0), q.y.max(0.0), q.z.max(0.0)).norm();
        out + q.x.max(q.y).max(q.z).min(0.0)
    }

    /// For a point outside the box over exactly one face (beyond it along
    /// one axis, within its extent along the other two), that face's
    /// outward normal and the gap to its plane (m). Points beyond an edge or
    /// a corner give None (the edges are the remesher's).
    pub fn face_above(&self, x: Vec3<f64>) -> Option<(Vec3<f64>, f64)> {
        let p = self.local(x);
        let mut out = None;
        for k in 0..3 {
            let gap = p[k].abs() - self.half[k];
            if gap > 0.0 {
                if out.is_some() {
                    return None;
                }
                out = Some((self.axis(k, if p[k] >= 0.0 { 1.0 } else { -1.0 }), gap));
            }
        }
        out
    }

    /// For a point inside, the outward normal of the nearest face and its
    /// depth (m), spec §4.3 test 3.
    pub fn nearest_face(&self, x: Vec3<f64>) -> Option<(Vec3<f64>, f64)> {
        let p = self.local(x);
        let mut best: Option<(Vec3<f64>, f64)> = None;
        for k in 0..3 {
            let depth = self.half[k] - p[k].abs();
            if depth < 0.0 {
                return None;
            }
            if best.is_none_or(|(_, d)| depth < d) {
                best = Some((self.axis(k, if p[k] >= 0.0 { 1.0 } else { -1.0 }), depth));
            }
        }
        best
    }

    /// The 8 corners, in a fixed order (signs of x, y, z).
    pub fn corners(&self) -> [BoxCorner; 8] {
        std::array::from_fn(|k| {
            let s = [k & 1, (k >> 1) & 1, (k >> 2) & 1].map(|b| if b == 1 { 1.0 } else { -1.0 });
            let local = Vec3::new(s[0] * self.half.x, s[1] * self.half.y, s[2] * self.half.z);
            BoxCorner {
                position: self.center + self.rotation * local,
                normals: [self.axis(0, s[0]), self.axis(1, s[1]), self.axis(2, s[2])],
            }
        })
    }

    /// The 12 edges, in a fixed order (axis of the edge, then the signs of
    /// the two other axes).
    pub fn edges(&self) -> Vec<BoxEdge> {
        let mut out = Vec::with_capacity(12);
        for a in 0..3 {
            let (b, c) = ((a + 1) % 3, (a + 2) % 3);
            for sb in [-1.0, 1.0] {
                for sc in [-1.0, 1.0] {
                    let mid = self.center
                        + self.rotation * (unit(b, sb * self.half[b]) + unit(c, sc * self.half[c]));
                    let t = self.axis(a, 1.0);
                    out.push(BoxEdge {
                        ends: [mid - t * self.half[a], mid + t * self.half[a]],
                        normals: [self.axis(b, sb), self.axis(c, sc)],
                        tangent: t,
                    });
                }
            }
        }
        out
    }
}

#[cfg(test)]
#[path = "obstacle_tests.rs"]
mod tests;
