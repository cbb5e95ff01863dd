//! Test helpers: a small deterministic RNG, finite-difference checks and
//! simple closed triangle meshes (icosphere, UV sphere, box), built here so
//! the collide tests do not depend on `geometry/`'s mesh generators.

use super::Sdf;
use crate::math::Vec3;

pub(crate) use crate::test_util::Rng;

/// Central-difference gradient of `f` at `p` with step `h`.
pub(crate) fn fd_gradient(f: impl Fn(Vec3<f64>) -> f64, p: Vec3<f64>, h: f64) -> Vec3<f64> {
    let mut g = Vec3::zero();
    for i in 0..3 {
        let e = Vec3::unit(i) * h;
        g[i] = (f(p + e) - f(p - e)) / (2.0 * h);
    }
    g
}

/// Every `(point, distance)` case: `sdf.distance(point)` within 1e-14 m.
pub(crate) fn check_distances(sdf: &impl Sdf, cases: &[(Vec3<f64>, f64)]) {
    for &(p, d) in cases {
        let got = sdf.distance(p);
        assert!((got - d).abs() < 1e-14, "{p:?}: {got} vs {d}");
    }
}

/// Checks `normal` against central differences of `distance` at `points`
/// and that it is unit length. Points where the finite-difference gradient
/// is not unit length straddle a kink of the SDF (medial surface, sphere
/// center) and are skipped; at most `max_skipped` may be.
pub(crate) fn check_normals(sdf: &impl Sdf, points: &[Vec3<f64>], tol: f64, max_skipped: usize) {
    let mut skipped = 0;
    for &p in points {
        let n = sdf.normal(p);
        assert!((n.norm() - 1.0).abs() < 1e-12, "normal at {p:?} not unit: {n:?}");
        let (d2, n2) = sdf.distance_and_normal(p);
        assert_eq!(d2, sdf.distance(p));
        assert!((n2 - n).norm() < 1e-12);
        let g = fd_gradient(|q| sdf.distance(q), p, 1e-6);
        if (g.norm() - 1.0).abs() > 1e-4 {
            skipped += 1;
            continue;
        }
        assert!(
            (g - n).norm() < tol,
            "normal at {p:?}: analytic {n:?}, finite difference {g:?}"
        );
    }
    assert!(
        skipped <= max_skipped,
        "{skipped} of {} points skipped as kinks",
        points.len()
    );
}

/// An indexed triangle mesh, counter-clockwise seen from outside.
pub(crate) struct TestMesh {
    pub(crate) vertices: Vec<Vec3<f64>>,
    pub(crate) faces: Vec<[u32; 3]>,
}

/// Icosahedron subdivided `levels` times, projected on a sphere of `radius`
/// centered at `center`: 20·4^levels triangles.
pub(crate) fn icosphere(center: Vec3<f64>, radius: f64, levels: u32) -> TestMesh {
    let t = (1.0 + 5.0_f64.sqrt()) / 2.0;
    let mut v: Vec<Vec3<f64>> = [
        (-1.0, t, 0.0),
        (1.0, t, 0.0),
        (-1.0, -t, 0.0),
        (1.0, -t, 0.0),
        (0.0, -1.0, t),
        (0.0, 1.0, t),
        (0.0, -1.0, -t),
        (0.0, 1.0, -t),
        (t, 0.0, -1.0),
        (t, 0.0, 1.0),
        (-t, 0.0, -1.0),
        (-t, 0.0, 1.0),
    ]
    .iter()
    .map(|&(x, y, z)| Vec3::new(x, y, z).normalize_or_zero())
    .collect();
    let mut f: Vec<[u32; 3]> = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    for _ in 0..levels {
        let mut mid = std::collections::HashMap::new();
        let mut midpoint = |a: u32, b: u32, v: &mut Vec<Vec3<f64>>| -> u32 {
            let key = (a.min(b), a.max(b));
            *mid.entry(key).or_insert_with(|| {
                v.push((v[a as usize] + v[b as usize]).normalize_or_zero());
                (v.len() - 1) as u32
            })
        };
        let mut nf = Vec::with_capacity(f.len() * 4);
        for &[a, b, c] in &f {
            let ab = midpoint(a, b, &mut v);
            let bc = midpoint(b, c, &mut v);
            let ca = midpoint(c, a, &mut v);
            nf.extend_from_slice(&[[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]);
        }
        f = nf;
    }
    TestMesh {
        vertices: v.into_iter().map(|p| center + p * radius).collect(),
        faces: f,
    }
}

/// Latitude–longitude sphere: `slices` around y, `stacks` from pole to pole.
pub(crate) fn uv_sphere(center: Vec3<f64>, radius: f64, slices: u32, stacks: u32) -> TestMesh {
    let mut v = vec![Vec3::new(0.0, 1.0, 0.0)];
    for i in 1..stacks {
        let theta = std::f64::consts::PI * i as f64 / stacks as f64;
        for j in 0..slices {
            let phi = 2.0 * std::f64::consts::PI * j as f64 / slices as f64;
            v.push(Vec3::new(
                theta.sin() * phi.cos(),
                theta.cos(),
                -theta.sin() * phi.sin(),
            ));
        }
    }
    v.push(Vec3::new(0.0, -1.0, 0.0));
    let south = (v.len() - 1) as u32;
    let ring = |i: u32, j: u32| 1 + (i - 1) * slices + (j % slices);
    let mut f = Vec::new();
    for j in 0..slices {
        f.push([0, ring(1, j), ring(1, j + 1)]);
        f.push([south, ring(stacks - 1, j + 1), ring(stacks - 1, j)]);
    }
    for i in 1..stacks - 1 {
        for j in 0..slices {
            let (a, b, c, d) = (ring(i, j), ring(i, j + 1), ring(i + 1, j), ring(i + 1, j + 1));
            f.push([a, c, d]);
            f.push([a, d, b]);
        }
    }
    TestMesh {
        vertices: v.into_iter().map(|p| center + p * radius).collect(),
        faces: f,
    }
}

/// 12-triangle box with the given center and half extents.
pub(crate) fn box_mesh(center: Vec3<f64>, half: Vec3<f64>) -> TestMesh {
    let mut v = Vec::new();
    for i in 0..8 {
        let s = |bit: usize| if i & (1 << bit) != 0 { 1.0 } else { -1.0 };
        v.push(center + Vec3::new(s(0) * half.x, s(1) * half.y, s(2) * half.z));
    }
    // Vertex i has x = bit 0, y = bit 1, z = bit 2.
    let faces = vec![
        [0, 4, 6],
        [0, 6, 2], // -x
        [1, 3, 7],
        [1, 7, 5], // +x
        [0, 1, 5],
        [0, 5, 4], // -y
        [2, 6, 7],
        [2, 7, 3], // +y
        [0, 2, 3],
        [0, 3, 1], // -z
        [4, 5, 7],
        [4, 7, 6], // +z
    ];
    TestMesh { vertices: v, faces }
}

/// Torus around the y axis: `major` radius of the tube center line, `minor`
/// tube radius, `n_major × n_minor` quads split in two. Not convex: its
/// hole exercises the sign of concave regions.
pub(crate) fn torus(major: f64, minor: f64, n_major: u32, n_minor: u32) -> TestMesh {
    let tau = std::f64::consts::TAU;
    let mut v = Vec::new();
    for i in 0..n_major {
        let u = tau * i as f64 / n_major as f64;
        for j in 0..n_minor {
            let w = tau * j as f64 / n_minor as f64;
            let rho = major + minor * w.cos();
            v.push(Vec3::new(rho * u.cos(), minor * w.sin(), -rho * u.sin()));
        }
    }
    let id = |i: u32, j: u32| (i % n_major) * n_minor + (j % n_minor);
    let mut f = Vec::new();
    for i in 0..n_major {
        for j in 0..n_minor {
            let (a, b, c, d) = (id(i, j), id(i + 1, j), id(i, j + 1), id(i + 1, j + 1));
            f.push([a, b, d]);
            f.push([a, d, c]);
        }
    }
    TestMesh {
        vertices: v,
        faces: f,
    }
}

/// Generalized winding number of a closed mesh at `p` (1 inside, 0
/// outside), by summing signed solid angles (Van Oosterom & Strackee).
pub(crate) fn winding_number(m: &TestMesh, p: Vec3<f64>) -> f64 {
    let mut total = 0.0;
    for f in &m.faces {
        let a = m.vertices[f[0] as usize] - p;
        let b = m.vertices[f[1] as usize] - p;
        let c = m.vertices[f[2] as usize] - p;
        let (la, lb, lc) = (a.norm(), b.norm(), c.norm());
        let num = a.dot(b.cross(c));
        let den = la * lb * lc + a.dot(b) * lc + b.dot(c) * la + c.dot(a) * lb;
        total += 2.0 * num.atan2(den);
    }
    total / (4.0 * std::f64::consts::PI)
}

/// Signed volume of a closed mesh (positive when faces are outward).
pub(crate) fn signed_volume(m: &TestMesh) -> f64 {
    m.faces
        .iter()
        .map(|f| {
            let (a, b, c) = (
                m.vertices[f[0] as usize],
                m.vertices[f[1] as usize],
                m.vertices[f[2] as usize],
            );
            a.dot(b.cross(c)) / 6.0
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_meshes_are_closed_and_outward() {
        let pi = std::f64::consts::PI;
        let ico = icosphere(Vec3::zero(), 1.0, 2);
        assert_eq!(ico.faces.len(), 320);
        let vi = signed_volume(&ico);
        assert!(vi > 0.9 * 4.0 / 3.0 * pi && vi < 4.0 / 3.0 * pi, "{vi}");
        let uv = uv_sphere(Vec3::zero(), 1.0, 32, 16);
        let vu = signed_volume(&uv);
        assert!(vu > 0.9 * 4.0 / 3.0 * pi && vu < 4.0 / 3.0 * pi, "{vu}");
        let b = box_mesh(Vec3::new(1.0, 2.0, 3.0), Vec3::new(0.5, 1.0, 1.5));
        assert!((signed_volume(&b) - 6.0).abs() < 1e-12);
        let t = torus(0.5, 0.2, 32, 16);
        let vt = signed_volume(&t);
        let exact = 2.0 * pi * pi * 0.5 * 0.2 * 0.2;
        assert!(vt > 0.95 * exact && vt < exact, "{vt} vs {exact}");
        assert!((winding_number(&t, Vec3::new(0.5, 0.0, 0.0)) - 1.0).abs() < 1e-9);
        assert!(winding_number(&t, Vec3::zero()).abs() < 1e-9);
    }
}
