//! What does not change while the cloth steps: topology, rest data, masses,
//! the sparsity pattern of the system matrix and the gather lists that make
//! force and matrix assembly deterministic (spec §2, §11).

use super::hinge;
use super::material::{Material, Wrinkles};
use super::membrane::{MembraneStiffness, TriangleRest};
pub use super::pattern::{Pattern, nested_dissection};
use super::wrinkle::{DahlParams, FrictionParams, PlasticClock, PlasticParams, PlasticState};
use crate::geometry::TriMesh;
use crate::math::{Vec3, sym_eigen3};
use crate::{Result, invalid};

/// Where the in-plane material axes (warp `u`, weft `v`) of each triangle come
/// from (spec §2.3, A11).
#[derive(Clone, Debug, PartialEq)]
pub enum MaterialFrame {
    /// Per-corner UV coordinates in meters, `uv[face][corner] = [u, v]`.
    Uv(Vec<[[f64; 2]; 3]>),
    /// Warp along this world direction projected into each triangle's plane
    /// (weft = normal × warp). For a flat panel these are global axes.
    Direction(Vec3<f64>),
    /// Like `Direction`, with the rest mesh's principal axis (largest extent).
    Principal,
}

/// Mesh-derived data and the assembly plan of the implicit solve.
#[derive(Clone, Debug)]
pub struct Model {
    /// Triangles (consistently oriented).
    pub faces: Vec<[u32; 3]>,
    /// Unique undirected edges, as in [`crate::geometry::MeshTopology::edges`].
    pub edges: Vec<[u32; 2]>,
    /// Hinges `[x0, x1, x2, x3]` in the order of spec §2.1.
    pub hinges: Vec<[u32; 4]>,
    /// Shape factor `s = l̄²/Ā` per hinge.
    pub hinge_s: Vec<f64>,
    /// Rest edge length `l̄` per hinge, meters (metric weights, §8).
    pub hinge_rest_length: Vec<f64>,
    /// Elastic rest angle `θ̄` per hinge (0 unless `init_rest_from_mesh`), rad.
    pub hinge_theta_bar: Vec<f64>,
    /// Per-triangle rest data.
    pub tri_rest: Vec<TriangleRest>,
    /// Lumped vertex mass, kg.
    pub mass: Vec<f64>,
    /// Vertex area (a third of each incident triangle), m².
    pub vertex_area: Vec<f64>,
    /// Rest positions, meters.
    pub rest_positions: Vec<Vec3<f64>>,
    /// The garments, in the order added: material, switches, element
    /// constants and the index ranges they own.
    pub garments: Vec<GarmentInfo>,
    /// Garment of each triangle (index into `garments`).
    pub face_garment: Vec<u32>,
    /// Garment of each hinge (a hinge never spans two garments: they share
    /// no edge).
    pub hinge_garment: Vec<u32>,
    /// Block sparsity pattern of the system matrix and its assembly lists.
    pub pattern: Pattern,
}

/// Unit principal axis of a point set (largest variance).
fn principal_axis(p: &[Vec3<f64>]) -> Vec3<f64> {
    let n = p.len().max(1) as f64;
    let c = p.iter().fold(Vec3::zero(), |a, &b| a + b) * (1.0 / n);
    let mut cov = crate::math::Mat3::zero();
    for &q in p {
        cov += crate::math::Mat3::outer(q - c, q - c);
    }
    // Eigenvalues ascending: the last column is the largest-extent axis.
    let axis = sym_eigen3(&cov).eigenvectors.col(2);
    axis.try_normalize(1e-300).unwrap_or(Vec3::new(1.0, 0.0, 0.0))
}

/// One garment of a model: a mesh with its material, wrinkle switches and
/// warp/weft frame. Garments share no vertex; the solver treats their union
/// as one system (one solve, one self-collision set), so several garments
/// in one simulation collide with each other.
#[derive(Clone, Debug)]
pub struct Garment {
    /// Rest shape and topology.
    pub mesh: TriMesh,
    /// Its material.
    pub material: Material,
    /// Its wrinkle-model switches.
    pub wrinkles: Wrinkles,
    /// Where its warp/weft axes come from.
    pub frame: MaterialFrame,
    /// The mesh's dihedral angles are the rest angles (default flat).
    pub init_rest_from_mesh: bool,
}

/// The constants the element stages read for one garment, derived once from
/// its material and switches (so the step does not recompute them per
/// element, and per-element lookups are one index).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ElementParams {
    /// The garment's switches.
    pub wrinkles: Wrinkles,
    /// Membrane stiffness (N/m).
    pub membrane: MembraneStiffness,
    /// Tensile friction stiffness per strain component (N/m).
    pub tensile_friction_stiffness: [f64; 3],
    /// Tensile friction thresholds and times.
    pub tensile_friction: [FrictionParams; 3],
    /// Tensile plasticity per component, with the garment's clock.
    pub tensile_plastic: [PlasticParams; 3],
    /// Bending stiffness κ_b (J).
    pub kappa_b: f64,
    /// Bending friction stiffness κ_f (J).
    pub kappa_f: f64,
    /// Hinge plasticity with the garment's clock (g = 0 for the constant-
    /// hardening baseline of E6, A.2).
    pub bend_plastic: PlasticParams,
    /// Hinge friction thresholds and times.
    pub bend_friction: FrictionParams,
    /// Dahl baseline (E9).
    pub dahl: DahlParams,
    /// Initial hinge plastic state (Alg. 2 clock, as the state starts).
    pub hinge_plastic0: PlasticState,
    /// Initial tensile plastic state per component.
    pub tri_plastic0: [PlasticState; 3],
}

impl ElementParams {
    /// The constants of `mat` under the switches `w` (also what an EOL
    /// cloth's wrinkles run on, `crate::eol::wrinkle`).
    pub fn new(mat: &Material, w: &Wrinkles) -> Self {
        let k = mat.membrane;
        let mut bend_plastic = mat
            .bend_plastic
            .params(mat.bending.max(f64::MIN_POSITIVE), w.clock);
        if w.constant_hardening {
            // Baseline of E6 (A.2): time-independent linear hardening.
            bend_plastic.g = 0.0;
        }
        ElementParams {
            wrinkles: *w,
            membrane: k,
            tensile_friction_stiffness: mat.tensile_friction_stiffness,
            tensile_friction: mat.tensile_friction,
            tensile_plastic: core::array::from_fn(|c| {
                mat.tensile_plastic[c].params([k.k11, k.k22, k.k33][c], w.clock)
            }),
            kappa_b: mat.kappa_b(),
            kappa_f: mat.kappa_f(),
            bend_plastic,
            bend_friction: mat.bend_friction,
            dahl: mat.dahl(),
            hinge_plastic0: PlasticState::new(
                &mat.bend_plastic
                    .params(mat.bending.max(f64::MIN_POSITIVE), PlasticClock::Alg2),
            ),
            tri_plastic0: core::array::from_fn(|c| {
                PlasticState::new(
                    &mat.tensile_plastic[c].params([k.k11, k.k22, k.k33][c], PlasticClock::Alg2),
                )
            }),
        }
    }
}

/// A garment's place in the model: its material and switches, derived
/// element constants, and the ranges of vertices, faces and hinges it owns.
#[derive(Clone, Debug)]
pub struct GarmentInfo {
    /// The material.
    pub material: Material,
    /// The switches.
    pub wrinkles: Wrinkles,
    /// Derived element constants.
    pub params: ElementParams,
    /// Its vertices in the model's numbering.
    pub vertices: core::ops::Range<usize>,
    /// Its triangles.
    pub faces: core::ops::Range<usize>,
    /// Its hinges.
    pub hinges: core::ops::Range<usize>,
}

/// The per-garment pieces of a model, in the garment's own numbering.
struct Part {
    x: Vec<Vec3<f64>>,
    faces: Vec<[u32; 3]>,
    edges: Vec<[u32; 2]>,
    hinges: Vec<[u32; 4]>,
    hinge_s: Vec<f64>,
    hinge_rest_length: Vec<f64>,
    hinge_theta_bar: Vec<f64>,
    tri_rest: Vec<TriangleRest>,
    mass: Vec<f64>,
    vertex_area: Vec<f64>,
}

impl Part {
    /// Rest data of one garment (spec §2.3 [R]: rest shape = its mesh).
    fn build(g: &Garment) -> Result<Self> {
        let (mesh, material, frame) = (&g.mesh, &g.material, &g.frame);
        material.validate()?;
        mesh.check_orientation()?;
        let x = mesh.vertices().to_vec();
        let faces = mesh.faces().to_vec();
        let topo = mesh.topology();
        let n = x.len();
        // Per-triangle material coordinates (A11).
        let tri_rest: Vec<TriangleRest> = match frame {
            MaterialFrame::Uv(uv) => {
                if uv.len() != faces.len() {
                    return invalid!(
                        "uv has {} faces but the mesh has {}; pass one [u, v] per face corner, shape (F, 3, 2)",
                        uv.len(),
                        faces.len()
                    );
                }
                uv.iter()
                    .enumerate()
                    .map(|(t, u)| {
                        TriangleRest::from_uv(*u)
                            .map_err(|e| crate::Error::InvalidInput(format!("uv of face {t}: {e}")))
                    })
                    .collect::<Result<_>>()?
            }
            MaterialFrame::Direction(_) | MaterialFrame::Principal => {
                let d0 = match frame {
                    MaterialFrame::Direction(d) => match d.try_normalize(1e-12) {
                        Some(d) if d.is_finite() => d,
                        _ => return invalid!("warp direction must be a finite non-zero vector, got {d:?}"),
                    },
                    _ => principal_axis(&x),
                };
                let alt = d0.any_orthogonal();
                faces
                    .iter()
                    .enumerate()
                    .map(|(t, f)| {
                        let (p0, p1, p2) = (x[f[0] as usize], x[f[1] as usize], x[f[2] as usize]);
                        let nrm = (p1 - p0).cross(p2 - p0).normalize_or_zero();
                        // Project the warp direction into the plane; if the
                        // triangle is (nearly) perpendicular to it, fall back
                        // to a fixed orthogonal direction.
                        let mut u = d0 - nrm * nrm.dot(d0);
                        if u.norm() < 0.1 {
                            u = alt - nrm * nrm.dot(alt);
                        }
                        let u = u.normalize_or_zero();
                        let v = nrm.cross(u);
                        let uv = [
                            [0.0, 0.0],
                            [(p1 - p0).dot(u), (p1 - p0).dot(v)],
                            [(p2 - p0).dot(u), (p2 - p0).dot(v)],
                        ];
                        TriangleRest::from_uv(uv)
                            .map_err(|e| crate::Error::InvalidInput(format!("face {t}: {e}")))
                    })
                    .collect::<Result<_>>()?
            }
        };

        let mut mass = vec![0.0; n];
        let mut vertex_area = vec![0.0; n];
        for (f, r) in faces.iter().zip(&tri_rest) {
            for &v in f {
                mass[v as usize] += material.density * r.area / 3.0;
                vertex_area[v as usize] += r.area / 3.0;
            }
        }

        let mut hinges = Vec::with_capacity(topo.hinges().len());
        let mut hinge_s = Vec::with_capacity(topo.hinges().len());
        let mut hinge_rest_length = Vec::with_capacity(topo.hinges().len());
        let mut hinge_theta_bar = Vec::with_capacity(topo.hinges().len());
        for h in topo.hinges() {
            let v = h.vertices;
            let l = match frame {
                // §2.4: rest length from material coordinates, averaged over
                // the two faces' copies (UV seams).
                MaterialFrame::Uv(uv) => {
                    let len_in = |face: u32| -> f64 {
                        let f = faces[face as usize];
                        let a = f.iter().position(|&q| q == v[0]).unwrap_or(0);
                        let b = f.iter().position(|&q| q == v[1]).unwrap_or(0);
                        let (ua, ub) = (uv[face as usize][a], uv[face as usize][b]);
                        ((ua[0] - ub[0]).powi(2) + (ua[1] - ub[1]).powi(2)).sqrt()
                    };
                    0.5 * (len_in(h.faces[0]) + len_in(h.faces[1]))
                }
                _ => (x[v[1] as usize] - x[v[0] as usize]).norm(),
            };
            let s = hinge::shape_factor(
                l,
                tri_rest[h.faces[0] as usize].area,
                tri_rest[h.faces[1] as usize].area,
            );
            let xs = [
                x[v[0] as usize],
                x[v[1] as usize],
                x[v[2] as usize],
                x[v[3] as usize],
            ];
            hinges.push(v);
            hinge_s.push(s);
            hinge_rest_length.push(l);
            hinge_theta_bar.push(if g.init_rest_from_mesh {
                hinge::dihedral_angle(&xs)
            } else {
                0.0
            });
        }
        Ok(Part {
            x,
            faces,
            edges: topo.edges().to_vec(),
            hinges,
            hinge_s,
            hinge_rest_length,
            hinge_theta_bar,
            tri_rest,
            mass,
            vertex_area,
        })
    }
}

impl Model {
    /// Builds the model of one `mesh` (rest shape = the mesh's positions,
    /// spec §2.3 [R]) with `material`, `wrinkles` and the warp/weft `frame`.
    ///
    /// Errors: a mesh that is not consistently oriented (the dihedral sign
    /// convention needs it, §2.1), a material that fails validation, UVs of
    /// the wrong length or with degenerate triangles.
    pub fn new(
        mesh: &TriMesh,
        material: Material,
        wrinkles: Wrinkles,
        frame: &MaterialFrame,
        init_rest_from_mesh: bool,
    ) -> Result<Self> {
        Self::from_garments(&[Garment {
            mesh: mesh.clone(),
            material,
            wrinkles,
            frame: frame.clone(),
            init_rest_from_mesh,
        }])
    }

    /// Builds the model of several garments: each garment's rest data is
    /// built on its own mesh (its principal axis, its orientation check),
    /// then the garments are numbered one after the other (vertices, faces,
    /// edges, hinges) and one system pattern covers them all.
    pub fn from_garments(garments: &[Garment]) -> Result<Self> {
        if garments.is_empty() {
            return invalid!("a cloth model needs at least one garment");
        }
        let mut m = Model {
            faces: Vec::new(),
            edges: Vec::new(),
            hinges: Vec::new(),
            hinge_s: Vec::new(),
            hinge_rest_length: Vec::new(),
            hinge_theta_bar: Vec::new(),
            tri_rest: Vec::new(),
            mass: Vec::new(),
            vertex_area: Vec::new(),
            rest_positions: Vec::new(),
            garments: Vec::with_capacity(garments.len()),
            face_garment: Vec::new(),
            hinge_garment: Vec::new(),
            pattern: Pattern::build(0, &[], &[]),
        };
        for (gi, g) in garments.iter().enumerate() {
            let p = Part::build(g).map_err(|e| match e {
                crate::Error::InvalidInput(msg) if garments.len() > 1 => {
                    crate::Error::InvalidInput(format!("garment {gi}: {msg}"))
                }
                e => e,
            })?;
            let (v0, f0, h0) = (m.rest_positions.len(), m.faces.len(), m.hinges.len());
            let off = v0 as u32;
            m.faces.extend(p.faces.iter().map(|f| f.map(|v| v + off)));
            m.edges.extend(p.edges.iter().map(|e| e.map(|v| v + off)));
            m.hinges.extend(p.hinges.iter().map(|h| h.map(|v| v + off)));
            m.hinge_s.extend(p.hinge_s);
            m.hinge_rest_length.extend(p.hinge_rest_length);
            m.hinge_theta_bar.extend(p.hinge_theta_bar);
            m.tri_rest.extend(p.tri_rest);
            m.mass.extend(p.mass);
            m.vertex_area.extend(p.vertex_area);
            m.rest_positions.extend(p.x);
            m.face_garment.resize(m.faces.len(), gi as u32);
            m.hinge_garment.resize(m.hinges.len(), gi as u32);
            m.garments.push(GarmentInfo {
                material: g.material,
                wrinkles: g.wrinkles,
                params: ElementParams::new(&g.material, &g.wrinkles),
                vertices: v0..m.rest_positions.len(),
                faces: f0..m.faces.len(),
                hinges: h0..m.hinges.len(),
            });
        }
        m.pattern = Pattern::build(m.rest_positions.len(), &m.faces, &m.hinges);
        Ok(m)
    }

    /// Number of vertices.
    pub fn num_vertices(&self) -> usize {
        self.mass.len()
    }
}
