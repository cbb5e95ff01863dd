//! Obstacles and their sharp features (spec eol_cloth §4.1–4.2): boxes
//! (axis-aligned; their 12 edges), wires (a segment with no thickness) and
//! points (nails). Each moves rigidly with a constant velocity over a step
//! (translation only: the exact finite-difference obstacle velocity of §4.2
//! for a translating body is that velocity, so EOL vertices on a moving
//! feature stay on it exactly).

use super::constraints::Feature;
use crate::math::Vec3;

/// A static axis-aligned box obstacle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoxObstacle {
    /// Centre, m.
    pub center: Vec3<f64>,
    /// Half extents, m.
    pub half: Vec3<f64>,
    /// Velocity over the coming step, m/s (zero when static).
    pub velocity: Vec3<f64>,
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

fn unit(k: usize, s: f64) -> Vec3<f64> {
    let mut v = Vec3::zero();
    v[k] = s;
    v
}

impl BoxObstacle {
    /// Signed distance (spec §4.2), m: negative inside.
    pub fn signed_distance(&self, x: Vec3<f64>) -> f64 {
        let p = x - self.center;
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
        let p = x - self.center;
        let mut out = None;
        for k in 0..3 {
            let gap = p[k].abs() - self.half[k];
            if gap > 0.0 {
                if out.is_some() {
                    return None;
                }
                out = Some((unit(k, if p[k] >= 0.0 { 1.0 } else { -1.0 }), gap));
            }
        }
        out
    }

    /// For a point inside, the outward normal of the nearest face and its
    /// depth (m), spec §4.3 test 3.
    pub fn nearest_face(&self, x: Vec3<f64>) -> Option<(Vec3<f64>, f64)> {
        let p = x - self.center;
        let mut best: Option<(Vec3<f64>, f64)> = None;
        for k in 0..3 {
            let depth = self.half[k] - p[k].abs();
            if depth < 0.0 {
                return None;
            }
            if best.is_none_or(|(_, d)| depth < d) {
                best = Some((unit(k, if p[k] >= 0.0 { 1.0 } else { -1.0 }), depth));
            }
        }
        best
    }

    /// The 12 edges, in a fixed order (axis of the edge, then the signs of
    /// the two other axes).
    pub fn edges(&self) -> Vec<BoxEdge> {
        let mut out = Vec::with_capacity(12);
        for a in 0..3 {
            let (b, c) = ((a + 1) % 3, (a + 2) % 3);
            for sb in [-1.0, 1.0] {
                for sc in [-1.0, 1.0] {
                    let mid = self.center + unit(b, sb * self.half[b]) + unit(c, sc * self.half[c]);
                    let t = unit(a, 1.0);
                    out.push(BoxEdge {
                        ends: [mid - t * self.half[a], mid + t * self.half[a]],
                        normals: [unit(b, sb), unit(c, sc)],
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
