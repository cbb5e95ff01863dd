//! Rigid impact zones (Provot 1997; Bridson, Fedkiw, Anderson 2002 §7.4;
//! Harmon et al. 2008 §3): vertices of unresolved collisions are merged into
//! zones, and each zone moves rigidly from its start positions with the
//! mass-weighted linear and angular velocity of its members.
//!
//! Why a zone can never collide with itself again: its members move by
//! `x(t) = c + t v + ((1 − t) I + t R) (x0 − c)`, an affine map of the start
//! configuration at every `t`. For a rotation angle below π the linear part
//! `(1 − t) I + t R` is invertible for all `t ∈ [0, 1]` (its eigenvalues are
//! `1` and `1 − t + t e^{±iθ}`), and an invertible affine map cannot make
//! disjoint primitives touch. So pairs inside one zone are skipped, every
//! detected collision merges at least two zones, and the loop ends after at
//! most `n − 1` merges; in the worst case one zone holds everything and the
//! whole cloth moves rigidly, which is crossing-free because the start is.

use crate::math::{Mat3, Vec3, sym_eigen3};

/// Largest rotation a zone makes in one step. Any angle below π keeps the
/// guarantee above; clamping at π/2 only matters for zones spinning faster
/// than a quarter turn per step (it then loses some angular momentum).
const MAX_ANGLE: f64 = core::f64::consts::FRAC_PI_2;

/// Union–find over vertices with each set also kept as a circular list, so a
/// zone's members can be walked without scanning all vertices.
#[derive(Default)]
pub(super) struct Zones {
    parent: Vec<u32>,
    size: Vec<u32>,
    next: Vec<u32>,
    /// Roots of the zones changed by the current round of merges.
    touched: Vec<u32>,
    touched_mark: Vec<bool>,
    /// `zone_of[v]`: the root of `v`'s zone, valid after [`Zones::flatten`].
    pub(super) zone_of: Vec<u32>,
}

impl Zones {
    /// Every vertex alone in its zone.
    pub(super) fn reset(&mut self, n: usize) {
        self.parent.clear();
        self.parent.extend(0..n as u32);
        self.size.clear();
        self.size.resize(n, 1);
        self.next.clear();
        self.next.extend(0..n as u32);
        self.touched.clear();
        self.touched_mark.clear();
        self.touched_mark.resize(n, false);
        self.zone_of.clear();
        self.zone_of.extend(0..n as u32);
    }

    fn find(&mut self, mut v: u32) -> u32 {
        while self.parent[v as usize] != v {
            let g = self.parent[self.parent[v as usize] as usize];
            self.parent[v as usize] = g;
            v = g;
        }
        v
    }

    /// Merges the zones of `a` and `b` (union by size, ties to the smaller
    /// root index, so the result depends only on the merge sequence).
    pub(super) fn union(&mut self, a: u32, b: u32) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            self.touch(ra);
            return;
        }
        let (big, small) = match self.size[ra as usize].cmp(&self.size[rb as usize]) {
            core::cmp::Ordering::Greater => (ra, rb),
            core::cmp::Ordering::Less => (rb, ra),
            core::cmp::Ordering::Equal => (ra.min(rb), ra.max(rb)),
        };
        self.parent[small as usize] = big;
        self.size[big as usize] += self.size[small as usize];
        // Splicing two disjoint cycles: swap their successors.
        self.next.swap(big as usize, small as usize);
        self.touch(big);
    }

    fn touch(&mut self, r: u32) {
        if !self.touched_mark[r as usize] {
            self.touched_mark[r as usize] = true;
            self.touched.push(r);
        }
    }

    /// Refreshes `zone_of` after a round of merges.
    pub(super) fn flatten(&mut self) {
        for v in 0..self.parent.len() as u32 {
            let r = self.find(v);
            self.zone_of[v as usize] = r;
        }
    }

    /// Moves every zone changed since the last call rigidly (see the module
    /// docs), calling `moved(v)` for each of its members.
    pub(super) fn rigidify<F: FnMut(u32)>(
        &mut self,
        x0: &[Vec3<f64>],
        x1: &mut [Vec3<f64>],
        inv_mass: &[f64],
        mut moved: F,
    ) {
        let mut touched = std::mem::take(&mut self.touched);
        // Roots may have been absorbed by later merges in the same round.
        for r in touched.iter_mut() {
            self.touched_mark[*r as usize] = false;
            *r = self.find(*r);
        }
        touched.sort_unstable();
        touched.dedup();
        for &r in &touched {
            self.rigid_motion(r, x0, x1, inv_mass);
            let mut v = r;
            loop {
                moved(v);
                v = self.next[v as usize];
                if v == r {
                    break;
                }
            }
        }
        touched.clear();
        self.touched = touched;
    }

    fn rigid_motion(&self, root: u32, x0: &[Vec3<f64>], x1: &mut [Vec3<f64>], inv_mass: &[f64]) {
        let members = || {
            let next = &self.next;
            let mut v = root;
            let mut done = false;
            core::iter::from_fn(move || {
                if done {
                    return None;
                }
                let cur = v;
                v = next[v as usize];
                done = v == root;
                Some(cur as usize)
            })
        };
        // A zone holding a fixed vertex (infinite mass) cannot move at all.
        if members().any(|i| inv_mass[i] == 0.0) {
            for i in members() {
                x1[i] = x0[i];
            }
            return;
        }
        let mut mass = 0.0;
        let mut com = Vec3::zero();
        let mut vel = Vec3::zero();
        for i in members() {
            let m = 1.0 / inv_mass[i];
            mass += m;
            com += x0[i] * m;
            vel += (x1[i] - x0[i]) * m;
        }
        com *= 1.0 / mass;
        vel *= 1.0 / mass;
        // Angular momentum and inertia about the centre of mass, with the
        // step displacement as the velocity (the step length cancels).
        let mut ang = Vec3::zero();
        let mut inertia = Mat3::zero();
        for i in members() {
            let m = 1.0 / inv_mass[i];
            let r = x0[i] - com;
            ang += r.cross(x1[i] - x0[i] - vel) * m;
            inertia += (Mat3::identity() * r.norm_squared() - Mat3::outer(r, r)) * m;
        }
        let omega = pseudo_solve(&inertia, ang);
        let angle = omega.norm();
        let rot = if angle > 0.0 && angle.is_finite() {
            Mat3::from_axis_angle(omega * (1.0 / angle), angle.min(MAX_ANGLE))
        } else {
            Mat3::identity()
        };
        for i in members() {
            x1[i] = com + vel + rot * (x0[i] - com);
        }
    }

    /// Number of zones with at least two vertices, and the largest size.
    pub(super) fn summary(&self) -> (usize, usize) {
        let mut count = 0;
        let mut largest = 0;
        for (v, &p) in self.parent.iter().enumerate() {
            if p as usize == v && self.size[v] > 1 {
                count += 1;
                largest = largest.max(self.size[v] as usize);
            }
        }
        (count, largest)
    }
}

/// `I⁺ L`: the inertia tensor is singular for collinear zones (two vertices,
/// or an edge), whose spin about their own axis is undefined; that component
/// is dropped.
fn pseudo_solve(inertia: &Mat3<f64>, l: Vec3<f64>) -> Vec3<f64> {
    let e = sym_eigen3(inertia);
    let top = e.eigenvalues.z.abs();
    let mut w = Vec3::zero();
    for k in 0..3 {
        let lam = e.eigenvalues[k];
        if lam > 1e-12 * top && lam > 0.0 {
            let q = e.eigenvectors.col(k);
            w += q * (q.dot(l) / lam);
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rigid_zone_conserves_momentum_and_shape() {
        let x0 = vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.0, 1.0, 0.2),
            Vec3::new(0.3, 0.2, 1.0),
        ];
        let d = [
            Vec3::new(0.01, 0.0, 0.02),
            Vec3::new(-0.02, 0.01, 0.0),
            Vec3::new(0.0, 0.03, -0.01),
            Vec3::new(0.01, -0.01, 0.01),
        ];
        let inv_mass = [1.0, 0.5, 2.0, 1.0];
        let mut x1: Vec<_> = x0.iter().zip(d).map(|(a, b)| *a + b).collect();
        let lin =
            |x1: &[Vec3<f64>]| (0..4).fold(Vec3::zero(), |s, i| s + (x1[i] - x0[i]) * (1.0 / inv_mass[i]));
        let p_before = lin(&x1);
        let mut z = Zones::default();
        z.reset(4);
        z.union(0, 1);
        z.union(2, 3);
        z.union(1, 3);
        let mut moved = Vec::new();
        z.rigidify(&x0, &mut x1, &inv_mass, |v| moved.push(v));
        moved.sort_unstable();
        assert_eq!(moved, vec![0, 1, 2, 3]);
        assert!((lin(&x1) - p_before).norm() < 1e-15);
        for i in 0..4 {
            for j in 0..4 {
                let (a, b) = ((x0[i] - x0[j]).norm(), (x1[i] - x1[j]).norm());
                assert!((a - b).abs() < 1e-14, "{i} {j}");
            }
        }
        assert_eq!(z.summary(), (1, 4));
        // A fixed member pins the zone.
        let fixed = [1.0, 0.0, 1.0, 1.0];
        z.union(0, 2);
        z.rigidify(&x0, &mut x1, &fixed, |_| {});
        assert_eq!(x1, x0);
    }
}
