//! Triangle mesh generators: grid cloth, UV sphere, box, cylinder/tube, torus.
//!
//! All sizes are in meters. Every generator validates its parameters
//! (returning [`Error::InvalidInput`](crate::Error::InvalidInput) naming the
//! parameter and value) and passes its output through [`TriMesh`] validation,
//! so a generated mesh is held to the same standard as a user's.
//!
//! Quads are split with alternating diagonals (checkerboard by quad index):
//! a grid whose diagonals all run the same way is stiffer in bending and
//! shear along that diagonal, and cloth folds along it preferentially;
//! alternating them makes the triangulation symmetric under reflection.
//! Closed generators wind every face counter-clockwise seen from outside,
//! so normals point outward and [`TriMesh::signed_volume`] is positive.

use super::TriMesh;
use super::params::{budget, plane_basis};
use crate::math::Vec3;
use crate::validate::{at_least, direction, finite_vec, positive};
use crate::{Result, invalid};
use core::f64::consts::PI;
use std::collections::HashMap;

/// Appends the two triangles of quad `q`, whose corners are listed
/// counter-clockwise seen from the side the normals should face. `diag_02`
/// picks the diagonal `q0–q2`, else `q1–q3`; both keep the winding.
fn push_quad(faces: &mut Vec<[u32; 3]>, q: [u32; 4], diag_02: bool) {
    if diag_02 {
        faces.push([q[0], q[1], q[2]]);
        faces.push([q[0], q[2], q[3]]);
    } else {
        faces.push([q[0], q[1], q[3]]);
        faces.push([q[1], q[2], q[3]]);
    }
}

/// The two in-plane axes (ascending) for a plane normal to `axis`, and
/// whether counter-clockwise in those axes faces `-axis` (true only for y,
/// since x × z = −y).
fn plane_axes(axis: usize) -> (usize, usize, bool) {
    match axis {
        0 => (1, 2, false),
        1 => (0, 2, true),
        _ => (0, 1, false),
    }
}

/// A flat rectangular sheet of `resolution.0 × resolution.1` quads, each
/// split into two triangles.
///
/// - `size`: extent (m) along the two in-plane axes, in ascending axis
///   order: for `normal_axis = 1` (y normal, the default for cloth lying
///   flat) `size = (x extent, z extent)`; for 0 it is `(y, z)`, for 2 `(x, y)`.
/// - `resolution`: number of quads along each of those axes (≥ 1).
/// - `center`: the sheet's center (m).
/// - `normal_axis`: 0, 1 or 2; every face normal points along `+axis`.
///
/// Vertex `(i, j)` (i along the first in-plane axis, j along the second) has
/// index `j * (resolution.0 + 1) + i`. Quad `(i, j)` uses the diagonal from
/// `(i, j)` to `(i+1, j+1)` when `i + j` is even, the other one when odd (see
/// the module docs for why). `V − E + F = 1`.
pub fn grid_mesh(
    size: (f64, f64),
    resolution: (usize, usize),
    center: Vec3<f64>,
    normal_axis: usize,
) -> Result<TriMesh> {
    let s0 = positive("size[0]", size.0)?;
    let s1 = positive("size[1]", size.1)?;
    let n0 = at_least("resolution[0]", resolution.0, 1)?;
    let n1 = at_least("resolution[1]", resolution.1, 1)?;
    finite_vec("center", center)?;
    if normal_axis > 2 {
        return invalid!("normal_axis must be 0 (x), 1 (y) or 2 (z), got {normal_axis}");
    }
    budget("grid_mesh", &[n0.saturating_add(1), n1.saturating_add(1)])?;
    let (u, w, flip) = plane_axes(normal_axis);

    let mut vertices = Vec::with_capacity((n0 + 1) * (n1 + 1));
    for j in 0..=n1 {
        for i in 0..=n0 {
            let mut p = center;
            p[u] += s0 * (i as f64 / n0 as f64) - 0.5 * s0;
            p[w] += s1 * (j as f64 / n1 as f64) - 0.5 * s1;
            vertices.push(p);
        }
    }
    let id = |i: usize, j: usize| (j * (n0 + 1) + i) as u32;
    let mut faces = Vec::with_capacity(2 * n0 * n1);
    for j in 0..n1 {
        for i in 0..n0 {
            let q = [id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1)];
            let q = if flip { [q[0], q[3], q[2], q[1]] } else { q };
            push_quad(&mut faces, q, (i + j) % 2 == 0);
        }
    }
    TriMesh::from_u32_faces(vertices, faces)
}

/// A closed UV sphere with outward normals, poles on the y axis (y up).
///
/// - `radius` (m) > 0; vertices lie on the sphere, so the enclosed volume is
///   slightly below `4/3 π r³` (by O(1/n²)).
/// - `n_lat` ≥ 2: latitude bands from pole to pole.
/// - `n_lon` ≥ 3: segments around the axis.
///
/// Each pole is a single vertex (index 0 = north (+y), last = south), so the
/// mesh is manifold and closed (a sphere with duplicated pole vertices would
/// have degenerate faces). Rings `j = 1..n_lat` follow at index
/// `1 + (j − 1) n_lon + k`, at polar angle `π j / n_lat` and azimuth
/// `2π k / n_lon` measured from +x toward +z.
pub fn uv_sphere(center: Vec3<f64>, radius: f64, n_lat: usize, n_lon: usize) -> Result<TriMesh> {
    finite_vec("center", center)?;
    let r = positive("radius", radius)?;
    let n_lat = at_least("n_lat", n_lat, 2)?;
    let n_lon = at_least("n_lon", n_lon, 3)?;
    let rings = budget("uv_sphere", &[n_lat - 1, n_lon])?;

    let mut vertices = Vec::with_capacity(rings + 2);
    vertices.push(center + Vec3::new(0.0, r, 0.0));
    for j in 1..n_lat {
        let theta = PI * j as f64 / n_lat as f64;
        for k in 0..n_lon {
            let phi = 2.0 * PI * k as f64 / n_lon as f64;
            let d = Vec3::new(theta.sin() * phi.cos(), theta.cos(), theta.sin() * phi.sin());
            vertices.push(center + d * r);
        }
    }
    vertices.push(center - Vec3::new(0.0, r, 0.0));
    let north = 0u32;
    let south = (vertices.len() - 1) as u32;
    let ring = |j: usize, k: usize| (1 + (j - 1) * n_lon + k % n_lon) as u32;

    // Counter-clockwise seen from outside is counter-clockwise in (azimuth,
    // polar angle): d/dφ × d/dθ points outward for this parametrization.
    let mut faces = Vec::with_capacity(2 * n_lat * n_lon);
    for k in 0..n_lon {
        faces.push([north, ring(1, k + 1), ring(1, k)]);
    }
    for j in 1..n_lat - 1 {
        for k in 0..n_lon {
            let q = [ring(j, k), ring(j, k + 1), ring(j + 1, k + 1), ring(j + 1, k)];
            push_quad(&mut faces, q, (j + k) % 2 == 0);
        }
    }
    for k in 0..n_lon {
        faces.push([ring(n_lat - 1, k), ring(n_lat - 1, k + 1), south]);
    }
    TriMesh::from_u32_faces(vertices, faces)
}

/// A closed axis-aligned box with outward normals.
///
/// - `half_extents` (m): half the box size along x, y, z, each > 0.
/// - `subdivisions`: number of quads along x, y and z (each ≥ 1); every
///   side is a grid of those quads, and vertices on shared box edges are
///   shared, so the mesh is closed and manifold.
///
/// Vertex order: sides in the order −x, +x, −y, +y, −z, +z, each row by
/// row; a vertex already made by an earlier side is reused.
pub fn box_mesh(center: Vec3<f64>, half_extents: Vec3<f64>, subdivisions: [usize; 3]) -> Result<TriMesh> {
    finite_vec("center", center)?;
    let h = [
        positive("half_extents[0]", half_extents.x)?,
        positive("half_extents[1]", half_extents.y)?,
        positive("half_extents[2]", half_extents.z)?,
    ];
    let n = [
        at_least("subdivisions[0]", subdivisions[0], 1)?,
        at_least("subdivisions[1]", subdivisions[1], 1)?,
        at_least("subdivisions[2]", subdivisions[2], 1)?,
    ];
    // Bound the vertex count by the six sides' grids (shared edges counted twice).
    let [p0, p1, p2] = n.map(|x| x.saturating_add(1));
    let side_counts = [
        budget("box_mesh", &[p1, p2])?,
        budget("box_mesh", &[p0, p2])?,
        budget("box_mesh", &[p0, p1])?,
    ];
    budget("box_mesh", &[2 * side_counts.iter().sum::<usize>()])?;

    let mut vertices = Vec::new();
    let mut index: HashMap<[usize; 3], u32> = HashMap::new();
    let mut faces = Vec::new();
    let mut vertex = |lattice: [usize; 3], vertices: &mut Vec<Vec3<f64>>| {
        *index.entry(lattice).or_insert_with(|| {
            let mut p = center;
            for a in 0..3 {
                p[a] += h[a] * (2.0 * lattice[a] as f64 / n[a] as f64 - 1.0);
            }
            vertices.push(p);
            (vertices.len() - 1) as u32
        })
    };
    for axis in 0..3 {
        let (u, w, flip) = plane_axes(axis);
        for positive_side in [false, true] {
            // Counter-clockwise in (u, w) faces +axis (unless `flip`); the
            // −axis side needs the opposite winding.
            let reverse = flip == positive_side;
            let fixed = if positive_side { n[axis] } else { 0 };
            let mut ids = Vec::with_capacity((n[u] + 1) * (n[w] + 1));
            for j in 0..=n[w] {
                for i in 0..=n[u] {
                    let mut l = [0usize; 3];
                    l[axis] = fixed;
                    l[u] = i;
                    l[w] = j;
                    ids.push(vertex(l, &mut vertices));
                }
            }
            let id = |i: usize, j: usize| ids[j * (n[u] + 1) + i];
            for j in 0..n[w] {
                for i in 0..n[u] {
                    let q = [id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1)];
                    let q = if reverse { [q[0], q[3], q[2], q[1]] } else { q };
                    push_quad(&mut faces, q, (i + j) % 2 == 0);
                }
            }
        }
    }
    TriMesh::from_u32_faces(vertices, faces)
}

/// A cylinder around `axis_dir` through `center` (its midpoint), as an open
/// tube (`capped = false`) or closed with flat caps (`capped = true`).
///
/// - `radius`, `height` (m) > 0; the tube spans `±height/2` along the axis.
/// - `n_around` ≥ 3 segments around, `n_along` ≥ 1 segments along the axis.
///
/// Ring `j` (0 at `−height/2`) vertex `k` has index `j * n_around + k`; with
/// caps, the bottom then the top cap center follow, and each cap is a fan
/// (no extra rings: caps only need to close the volume). Normals point away
/// from the axis and, on caps, along ±axis. The tube alone has
/// `V − E + F = 0`; capped, 2.
pub fn cylinder_mesh(
    center: Vec3<f64>,
    axis_dir: Vec3<f64>,
    radius: f64,
    height: f64,
    n_around: usize,
    n_along: usize,
    capped: bool,
) -> Result<TriMesh> {
    finite_vec("center", center)?;
    let a = direction("axis_dir", axis_dir)?;
    let r = positive("radius", radius)?;
    let hgt = positive("height", height)?;
    let n_around = at_least("n_around", n_around, 3)?;
    let n_along = at_least("n_along", n_along, 1)?;
    budget("cylinder_mesh", &[n_along.saturating_add(1), n_around])?;
    let (e1, e2) = plane_basis(a);

    let mut vertices = Vec::with_capacity((n_along + 1) * n_around + 2);
    for j in 0..=n_along {
        let t = hgt * (j as f64 / n_along as f64) - 0.5 * hgt;
        for k in 0..n_around {
            let phi = 2.0 * PI * k as f64 / n_around as f64;
            vertices.push(center + (e1 * phi.cos() + e2 * phi.sin()) * r + a * t);
        }
    }
    let id = |j: usize, k: usize| (j * n_around + k % n_around) as u32;
    // With e1 × e2 = axis, d/dφ × d/dt points away from the axis, so
    // counter-clockwise in (φ, t) is outward.
    let mut faces = Vec::with_capacity(2 * n_around * (n_along + 1));
    for j in 0..n_along {
        for k in 0..n_around {
            push_quad(
                &mut faces,
                [id(j, k), id(j, k + 1), id(j + 1, k + 1), id(j + 1, k)],
                (j + k) % 2 == 0,
            );
        }
    }
    if capped {
        let bottom = vertices.len() as u32;
        vertices.push(center - a * (0.5 * hgt));
        let top = vertices.len() as u32;
        vertices.push(center + a * (0.5 * hgt));
        for k in 0..n_around {
            faces.push([bottom, id(0, k + 1), id(0, k)]);
            faces.push([top, id(n_along, k), id(n_along, k + 1)]);
        }
    }
    TriMesh::from_u32_faces(vertices, faces)
}

/// A closed torus around the y axis through `center`, outward normals.
///
/// - `major_radius` (m): distance from the center to the tube's centerline.
/// - `minor_radius` (m): tube radius, `0 < minor_radius < major_radius`
///   (otherwise the surface intersects itself).
/// - `n_major` ≥ 3 segments around the y axis, `n_minor` ≥ 3 around the tube.
///
/// Vertex `(i, j)` (i around y, j around the tube) has index
/// `i * n_minor + j`, at `((R + r cos v) cos u, r sin v, (R + r cos v) sin u)`
/// with `u = 2π i / n_major`, `v = 2π j / n_minor`. `V − E + F = 0`.
pub fn torus_mesh(
    center: Vec3<f64>,
    major_radius: f64,
    minor_radius: f64,
    n_major: usize,
    n_minor: usize,
) -> Result<TriMesh> {
    finite_vec("center", center)?;
    let big = positive("major_radius", major_radius)?;
    let small = positive("minor_radius", minor_radius)?;
    if small >= big {
        return invalid!(
            "minor_radius ({small}) must be smaller than major_radius ({big}), or the torus intersects itself"
        );
    }
    let n_major = at_least("n_major", n_major, 3)?;
    let n_minor = at_least("n_minor", n_minor, 3)?;
    budget("torus_mesh", &[n_major, n_minor])?;

    let mut vertices = Vec::with_capacity(n_major * n_minor);
    for i in 0..n_major {
        let u = 2.0 * PI * i as f64 / n_major as f64;
        for j in 0..n_minor {
            let v = 2.0 * PI * j as f64 / n_minor as f64;
            let rho = big + small * v.cos();
            vertices.push(center + Vec3::new(rho * u.cos(), small * v.sin(), rho * u.sin()));
        }
    }
    let id = |i: usize, j: usize| ((i % n_major) * n_minor + j % n_minor) as u32;
    // d/dv × d/du points away from the tube's centerline, so
    // counter-clockwise in (v, u) is outward.
    let mut faces = Vec::with_capacity(2 * n_major * n_minor);
    for i in 0..n_major {
        for j in 0..n_minor {
            push_quad(
                &mut faces,
                [id(i, j), id(i, j + 1), id(i + 1, j + 1), id(i + 1, j)],
                (i + j) % 2 == 0,
            );
        }
    }
    TriMesh::from_u32_faces(vertices, faces)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    fn c0() -> Vec3<f64> {
        Vec3::new(0.3, -0.2, 1.1)
    }

    /// Closed, manifold, oriented, and every face normal points away from
    /// `inside` (valid for star-shaped meshes around it).
    fn assert_closed_outward(m: &TriMesh, inside: impl Fn(Vec3<f64>) -> Vec3<f64>) {
        assert!(m.is_closed(), "not closed: {:?}", m.first_open_edge());
        m.check_orientation().unwrap();
        let normals = m.face_normals();
        for (f, t) in m.faces().iter().enumerate() {
            let centroid =
                (m.vertices()[t[0] as usize] + m.vertices()[t[1] as usize] + m.vertices()[t[2] as usize])
                    * (1.0 / 3.0);
            assert!(
                normals[f].dot(centroid - inside(centroid)) > 0.0,
                "face {f} points inward"
            );
        }
    }

    #[test]
    fn grid_counts_normals_and_diagonals() {
        for axis in 0..3 {
            let m = grid_mesh((2.0, 1.0), (4, 3), c0(), axis).unwrap();
            assert_eq!(m.num_vertices(), 5 * 4);
            assert_eq!(m.num_faces(), 2 * 4 * 3);
            assert_eq!(m.euler_characteristic(), 1);
            assert!(m.consistently_oriented() && !m.is_closed());
            for n in m.face_normals() {
                assert!((n - Vec3::unit(axis)).norm() < 1e-14, "axis {axis}: normal {n:?}");
            }
            let (lo, hi) = m.bounds();
            let (u, w, _) = plane_axes(axis);
            assert!((hi[u] - lo[u] - 2.0).abs() < 1e-14 && (hi[w] - lo[w] - 1.0).abs() < 1e-14);
            assert!((hi[axis] - lo[axis]).abs() == 0.0);
            assert!(((lo + hi) * 0.5 - c0()).norm() < 1e-14);
            let total: f64 = m.face_areas().iter().sum();
            assert!((total - 2.0).abs() < 1e-13);
        }
        // Diagonals alternate: quad (0,0) holds edge 0–(n0+2), quad (1,0) holds 2–(n0+2).
        let m = grid_mesh((1.0, 1.0), (2, 2), Vec3::zero(), 1).unwrap();
        let edges = m.topology().edges();
        assert!(edges.contains(&[0, 4]) && edges.contains(&[2, 4]));
        assert!(!edges.contains(&[1, 3]) && !edges.contains(&[1, 5]));
        // 6 + 6 axis-aligned edges and 4 diagonals; the 8 off the boundary are hinges.
        assert_eq!(m.num_edges(), 16);
        assert_eq!(m.topology().hinges().len(), 8);
    }

    #[test]
    fn hinges_of_generated_meshes_follow_the_convention() {
        let traverses = |t: [u32; 3], a: u32, b: u32| (0..3).any(|k| t[k] == a && t[(k + 1) % 3] == b);
        let meshes = [
            uv_sphere(c0(), 0.5, 6, 9).unwrap(),
            box_mesh(c0(), Vec3::splat(0.5), [2, 1, 3]).unwrap(),
            grid_mesh((1.0, 1.0), (3, 4), c0(), 1).unwrap(),
        ];
        for (i, m) in meshes.iter().enumerate() {
            let t = m.topology();
            assert_eq!(t.hinges().len(), m.num_edges() - t.num_boundary_edges());
            let mut signs = Vec::new();
            for h in t.hinges() {
                let [x0, x1, x2, x3] = h.vertices;
                let [f0, f1] = h.faces.map(|f| m.faces()[f as usize]);
                assert!(x0 < x1 && traverses(f0, x0, x1) && traverses(f1, x1, x0));
                assert!(f0.contains(&x2) && f1.contains(&x3) && x2 != x3);
                assert_eq!(t.edges()[h.edge as usize], [x0, x1]);
                let p = |v: u32| m.vertices()[v as usize];
                let n0 = (p(x1) - p(x0)).cross(p(x2) - p(x0));
                let n1 = (p(x0) - p(x1)).cross(p(x3) - p(x1));
                signs.push(n0.cross(n1).dot(p(x1) - p(x0)));
            }
            if i < 2 {
                // Convex with outward normals: with the §2.1 order every bent
                // hinge has (n0 × n1)·(x1 − x0) > 0 (hinges inside a planar
                // quad or box side are flat, so zero is allowed).
                let bent = |sign: f64| signs.iter().filter(|&&s| s * sign > 1e-12).count();
                assert!(bent(-1.0) == 0 && bent(1.0) > 0, "{signs:?}");
            } else {
                // Flat: no hinge bends.
                assert!(signs.iter().all(|&s| s.abs() < 1e-12), "{signs:?}");
            }
        }
    }

    #[test]
    fn grid_rejects_bad_parameters() {
        let z = Vec3::zero();
        for (r, name) in [
            (grid_mesh((0.0, 1.0), (2, 2), z, 1), "size[0]"),
            (grid_mesh((1.0, f64::NAN), (2, 2), z, 1), "size[1]"),
            (grid_mesh((1.0, 1.0), (0, 2), z, 1), "resolution[0]"),
            (grid_mesh((1.0, 1.0), (2, 2), z, 3), "normal_axis"),
            (
                grid_mesh((1.0, 1.0), (2, 2), Vec3::new(f64::INFINITY, 0.0, 0.0), 1),
                "center",
            ),
            (grid_mesh((1.0, 1.0), (1 << 20, 1 << 20), z, 1), "grid_mesh"),
        ] {
            match r {
                Err(Error::InvalidInput(m)) => assert!(m.contains(name), "{m}"),
                other => panic!("expected InvalidInput for {name}, got {other:?}"),
            }
        }
    }

    #[test]
    fn sphere_is_closed_outward_with_converging_volume() {
        let r = 0.7;
        let mut prev_err = f64::INFINITY;
        for n in [8usize, 16, 32] {
            let m = uv_sphere(c0(), r, n, 2 * n).unwrap();
            assert_eq!(m.num_vertices(), (n - 1) * 2 * n + 2);
            assert_eq!(m.euler_characteristic(), 2);
            assert_closed_outward(&m, |_| c0());
            for p in m.vertices() {
                assert!(((*p - c0()).norm() - r).abs() < 1e-14);
            }
            let exact = 4.0 / 3.0 * PI * r * r * r;
            let err = (exact - m.signed_volume()) / exact;
            assert!(err > 0.0, "inscribed polyhedron must be smaller: {err}");
            assert!(
                err < 2.0 * PI * PI / (n * n) as f64,
                "n = {n}: relative volume error {err}"
            );
            assert!(
                err < 0.35 * prev_err,
                "O(1/n²) convergence: {err} after {prev_err}"
            );
            prev_err = err;
        }
        assert!(uv_sphere(c0(), r, 2, 3).is_ok());
        assert!(matches!(uv_sphere(c0(), r, 1, 8), Err(Error::InvalidInput(m)) if m.contains("n_lat")));
        assert!(matches!(uv_sphere(c0(), r, 4, 2), Err(Error::InvalidInput(m)) if m.contains("n_lon")));
        assert!(matches!(uv_sphere(c0(), -1.0, 4, 8), Err(Error::InvalidInput(m)) if m.contains("radius")));
    }

    #[test]
    fn box_is_closed_outward_with_exact_volume() {
        let h = Vec3::new(0.5, 0.25, 1.0);
        for sub in [[1, 1, 1], [2, 3, 4]] {
            let m = box_mesh(c0(), h, sub).unwrap();
            let [a, b, c] = sub;
            let expected_v = (a + 1) * (b + 1) * (c + 1) - (a - 1) * (b - 1) * (c - 1);
            assert_eq!(m.num_vertices(), expected_v);
            assert_eq!(m.num_faces(), 4 * (a * b + b * c + a * c));
            assert_eq!(m.euler_characteristic(), 2);
            assert_closed_outward(&m, |_| c0());
            let exact = 8.0 * h.x * h.y * h.z;
            assert!(
                (m.signed_volume() - exact).abs() < 1e-13,
                "{} vs {exact}",
                m.signed_volume()
            );
            assert_eq!(m.bounds(), (c0() - h, c0() + h));
        }
        assert!(matches!(
            box_mesh(c0(), Vec3::new(1.0, 0.0, 1.0), [1, 1, 1]),
            Err(Error::InvalidInput(m)) if m.contains("half_extents[1]")
        ));
        assert!(matches!(
            box_mesh(c0(), h, [1, 1, 0]),
            Err(Error::InvalidInput(m)) if m.contains("subdivisions[2]")
        ));
    }

    #[test]
    fn cylinder_capped_and_tube() {
        let axis = Vec3::new(1.0, 2.0, 0.5);
        let a = axis.normalize_or_zero();
        let (r, hgt, n) = (0.3, 1.5, 24);
        // Nearest point on the axis: outward means away from it.
        let on_axis = |p: Vec3<f64>| c0() + a * (p - c0()).dot(a);

        let m = cylinder_mesh(c0(), axis, r, hgt, n, 5, true).unwrap();
        assert_eq!(m.euler_characteristic(), 2);
        assert!(m.is_closed());
        m.check_orientation().unwrap();
        // The inscribed prism's volume is known exactly.
        let prism = 0.5 * n as f64 * r * r * (2.0 * PI / n as f64).sin() * hgt;
        assert!(
            (m.signed_volume() - prism).abs() < 1e-12,
            "{} vs {prism}",
            m.signed_volume()
        );

        let tube = cylinder_mesh(c0(), axis, r, hgt, n, 5, false).unwrap();
        assert_eq!(tube.euler_characteristic(), 0);
        assert!(!tube.is_closed() && tube.consistently_oriented());
        assert_eq!(tube.topology().num_boundary_edges(), 2 * n);
        let normals = tube.face_normals();
        for (f, t) in tube.faces().iter().enumerate() {
            let p = tube.vertices()[t[0] as usize];
            assert!(
                normals[f].dot(p - on_axis(p)) > 0.0,
                "tube face {f} points inward"
            );
            assert!(normals[f].dot(a).abs() < 1e-12);
        }
        for p in tube.vertices() {
            assert!(((*p - on_axis(*p)).norm() - r).abs() < 1e-14);
            assert!((*p - c0()).dot(a).abs() <= 0.5 * hgt + 1e-14);
        }
        assert!(matches!(
            cylinder_mesh(c0(), Vec3::zero(), r, hgt, n, 5, true),
            Err(Error::InvalidInput(m)) if m.contains("axis_dir")
        ));
        assert!(matches!(
            cylinder_mesh(c0(), axis, r, hgt, 2, 5, true),
            Err(Error::InvalidInput(m)) if m.contains("n_around")
        ));
        assert!(matches!(
            cylinder_mesh(c0(), axis, r, 0.0, 8, 5, true),
            Err(Error::InvalidInput(m)) if m.contains("height")
        ));
    }

    #[test]
    fn torus_is_closed_outward_with_converging_volume() {
        let (big, small) = (1.0, 0.3);
        let tube_center = |p: Vec3<f64>| {
            let d = Vec3::new(p.x - c0().x, 0.0, p.z - c0().z).normalize_or_zero();
            c0() + d * big
        };
        let mut prev_err = f64::INFINITY;
        for n in [8usize, 16, 32] {
            let m = torus_mesh(c0(), big, small, 2 * n, n).unwrap();
            assert_eq!(m.num_vertices(), 2 * n * n);
            assert_eq!(m.euler_characteristic(), 0);
            assert_closed_outward(&m, tube_center);
            let exact = 2.0 * PI * PI * big * small * small;
            let err = ((exact - m.signed_volume()) / exact).abs();
            assert!(m.signed_volume() > 0.0);
            assert!(
                err < 2.0 * PI * PI / (n * n) as f64,
                "n = {n}: relative volume error {err}"
            );
            assert!(
                err < 0.35 * prev_err,
                "O(1/n²) convergence: {err} after {prev_err}"
            );
            prev_err = err;
        }
        assert!(matches!(
            torus_mesh(c0(), 0.3, 0.3, 8, 8),
            Err(Error::InvalidInput(m)) if m.contains("minor_radius")
        ));
        assert!(matches!(
            torus_mesh(c0(), 1.0, 0.3, 8, 2),
            Err(Error::InvalidInput(m)) if m.contains("n_minor")
        ));
    }
}
