//! One EOL time step on a mesh whose EOL vertices are already on their
//! features (spec eol_cloth §7 steps 6 and 8–11): constraint rows (EOL
//! rows §6.1–6.3 or the conformal Lagrangian rows of §6.4, Lagrangian
//! contacts with box faces, wires and points §6.4, scripted vertices §6.5),
//! the matrix fill, the QP, the update `x += h ẋ`, `X += h Ẋ` and the
//! obstacles' motion. With `remesh` on, the contact-conforming pass of
//! `remesh` runs first (steps 2–3), then with `sizing` the sizing remesh of
//! `sizing` (step 4); the full cleanup loop is not written yet.

use super::constraints::{Feature, Rows, Site, line_direction, material_direction};
use super::element::{Mat2d, deformation_gradient, signed_area};
use super::obstacle::{BoxObstacle, PointObstacle, Wire, turned_among};
use super::qp::{Kkt, KktWorkspace, Qp, kkt, polish, solve_active_set, solve_clarabel};
use super::remesh::{
    Cloth, Obstacles, RemeshReport, near_face, outside_box, point_over_face, release_vertex, vertex_grad,
};
use super::sizing::{AdaptReport, Sizing};
use super::sparse::Csc;
use super::system::{AssemblyCache, ClothParams, EdgeCounts, Mesh, assemble_with};
use super::wrinkle::Wrinkles;
use crate::cloth::model::ElementParams;
use crate::math::{Mat3, Vec3};
use crate::{Error, Result};

/// What one step did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepReport {
    /// KKT residuals of the accepted QP solution.
    pub kkt: Kkt,
    /// Solver passes: the active set's, or Clarabel's interior-point
    /// iterations when it solved the step.
    pub iterations: u32,
    /// Numeric KKT factorizations of the active-set path (its later
    /// passes re-solve against the first one's factor, bordered).
    pub factorizations: u32,
    /// Analyses of the KKT structure (fill-reducing ordering and symbolic
    /// factorization) of the active-set path, as `factorizations` counts
    /// (0 with the Clarabel QP; a split step's discarded attempt not
    /// counted): 0 on a step whose mesh and rows keep the last one.
    pub analyses: u32,
    /// Equality and inequality rows.
    pub rows: (usize, usize),
    /// Lagrangian vertex–face contacts.
    pub contacts: usize,
    /// What the remesher did before the step (all zero when it is off).
    pub remesh: RemeshReport,
    /// What the sizing remesh did (spec §5.6; all zero when it is off).
    pub adapt: AdaptReport,
    /// Seconds in the paper's Table 1 buckets.
    pub timings: Timings,
    /// The QP went to Clarabel (the active-set path missed or is off).
    pub clarabel: bool,
    /// With [`Stepper::verify_qp`]: the largest difference between the
    /// active-set and Clarabel solutions, relative to the largest |q̇| (0
    /// otherwise): both end on the exact KKT point of one active set, so
    /// this is 0 when Clarabel's active set is the fast path's.
    pub qp_gap: f64,
    /// The same against Clarabel's interior-point solution before the
    /// polish (its own accuracy at tolerance 1e-9).
    pub qp_gap_raw: f64,
    /// Sub-steps taken (1, or more when the step had to split itself).
    pub substeps: u32,
    /// Hinge friction slips and plastic yields (the wrinkle model; 0
    /// without it), summed over the sub-steps.
    pub wrinkle_events: (usize, usize),
}

/// How the step's QP is solved (spec §12.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QpMethod {
    /// The warm-started active-set path, with Clarabel when it misses.
    #[default]
    ActiveSet,
    /// Clarabel (interior point) and the active-set polish, every step.
    Clarabel,
}

/// How the vertices the remesher puts on a feature move (spec §12.1's
/// modes that run the contact-conforming remesher).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Conformal {
    /// EOL: material slides through them (the method).
    #[default]
    Eol,
    /// "lag_conformal_avg": held Lagrangian, one averaged normal row.
    LagrangianAveraged,
    /// "lag_conformal_cone": held Lagrangian, a row per face normal.
    LagrangianCone,
}

/// A scripted vertex (spec §6.5): it is at `target` now and moves on with
/// `velocity`; each step gives it the velocity that lands it on the moved
/// target exactly (a velocity-level equality row of the QP).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pin {
    /// The vertex's persistent id (see [`Stepper::ids`]).
    pub id: u32,
    /// Where it is held now, m.
    pub target: Vec3<f64>,
    /// The target's velocity, m/s.
    pub velocity: Vec3<f64>,
}

/// Seconds per step phase in the paper's Table 1 buckets (spec §8.2):
/// collision detection (CD: the contact set and the EOL vertices'
/// neighbourhoods), remeshing (RM: the contact-conforming pass, which does
/// its own edge–edge tests), matrix fill (MF: M, K, f, the constraint rows,
/// the QP's matrices) and velocity integration (VI: the QP, its polish and
/// KKT check, the update).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timings {
    /// Collision detection, s.
    pub cd: f64,
    /// Remeshing, s.
    pub rm: f64,
    /// Matrix fill, s.
    pub mf: f64,
    /// Velocity integration (the QP), s.
    pub vi: f64,
}

impl Timings {
    /// The sum, s.
    pub fn total(&self) -> f64 {
        self.cd + self.rm + self.mf + self.vi
    }

    fn add(&mut self, o: &Timings) {
        self.cd += o.cd;
        self.rm += o.rm;
        self.mf += o.mf;
        self.vi += o.vi;
    }
}

/// An EOL cloth with its obstacles (boxes, wires, points; static, moving or
/// turning boxes), its remeshers and its QP.
#[derive(Clone, Debug)]
pub struct Stepper {
    /// The mesh (world and material positions, EOL flags).
    pub mesh: Mesh,
    /// World velocities ẋ, m/s.
    pub xd: Vec<Vec3<f64>>,
    /// Material velocities Ẋ (zero for Lagrangian vertices), m/s.
    pub ud: Vec<Mat2d>,
    /// The feature of each EOL vertex.
    pub features: Vec<Option<Feature>>,
    /// Cloth material.
    pub params: ClothParams,
    /// Time step h, s.
    pub h: f64,
    /// Box obstacles (their edges are features, their faces contacts).
    pub boxes: Vec<BoxObstacle>,
    /// Wire obstacles.
    pub wires: Vec<Wire>,
    /// Point obstacles.
    pub points: Vec<PointObstacle>,
    /// Collision threshold thr, m (spec §8.1: 5e-3).
    pub thr: f64,
    /// Scripted vertices (spec §6.5).
    pub pins: Vec<Pin>,
    /// Persistent vertex ids: the remesher adds and removes vertices, an id
    /// stays with its vertex (new vertices take fresh ones).
    pub ids: Vec<u32>,
    /// The next unused id.
    pub next_id: u32,
    /// Steps taken.
    pub step_count: u64,
    /// Seconds per Table 1 bucket since the start.
    pub timings: Timings,
    /// What the last step did (every step, whether taken one by one or by
    /// [`Self::advance_moving`]); the default before the first.
    pub last: StepReport,
    /// How the QP is solved.
    pub qp: QpMethod,
    /// Also solve every QP with Clarabel and report the gap (tests).
    pub verify_qp: bool,
    /// The QP's KKT factorization cache (a copy starts empty).
    pub kkt_ws: KktWorkspace,
    /// How many more QPs read their active-set passes refined only (see
    /// [`solve_active_set`]): state, not cache (saved, copied, restored
    /// with a failed step).
    pub qp_exact_solves: u32,
    /// Vertex ids held Lagrangian for the step being retried (see
    /// `split_step`), and those the failed attempt named.
    quarantine: (Vec<u32>, Vec<u32>),
    /// The last step's active inequality rows, keyed by (vertex id, row
    /// ordinal at that vertex): the next step's warm start.
    pub active: std::collections::BTreeSet<(u32, u32)>,
    /// Simulated time, s.
    pub time: f64,
    /// Run the contact-conforming remesher before each step (spec §7
    /// steps 2–3): EOL vertices are made where cloth edges cross box edges
    /// and released where the cloth lifts off.
    pub remesh: bool,
    /// Collapse length τ_nc of the remesher, material m (spec §5.3: 1 % of
    /// the cloth's size).
    pub tau: f64,
    /// EOL, or one of the conformal Lagrangian baselines.
    pub conformal: Conformal,
    /// [D] Without `sizing`, the remesher splits edges longer than this
    /// (material m) at their middle; `Stepper::new` sets 1.5 × the longest
    /// edge of the cloth as given, `f64::INFINITY` turns it off. Material
    /// that flows through an EOL line has its vertices collapsed into the
    /// line (spec §5.3 step 1), and the edges it leaves on the far side
    /// grow with the flow; the paper's ARCSim pass (§5.6, here `sizing`)
    /// splits them, and this keeps the given resolution when it is off.
    pub refine_length: f64,
    /// The ARCSim-style sizing remesh after the contact-conforming pass
    /// (spec §5.6), or none (the mesh changes only at features).
    pub sizing: Option<Sizing>,
    /// Velocity of new collision vertices by spec §5.7 Eq. 13 (true) or
    /// the `zero_eulerian` option (false, the default: `Ẋ = 0`). A vertex
    /// a repair joins to a line (§5.3) keeps `Ẋ = 0` either way.
    pub eq13: bool,
    /// The matrix patterns kept between steps (a copy starts empty).
    pub assembly: AssemblyCache,
    /// The cloth module's persistent wrinkles on the hinges (beyond the
    /// paper; none: elastic bending, the paper's model). Set it with
    /// [`Self::set_wrinkles`] so its states match the hinges.
    pub wrinkles: Option<Wrinkles>,
    /// Each hinge's moment and coefficient of the step (kept to reuse).
    bend: Vec<(f64, f64)>,
}

/// Per vertex of `ids` (ascending: see [`Stepper::vertex_of`]), whether a
/// pin holds it.
fn pinned_by_id(ids: &[u32], pins: &[Pin]) -> Vec<bool> {
    let mut p = vec![false; ids.len()];
    for pin in pins {
        if let Ok(i) = ids.binary_search(&pin.id) {
            p[i] = true;
        }
    }
    p
}

/// β of the push-out term of wire and point contacts (spec §6.4 [D]): the
/// fraction of a penetration taken back per step.
const PUSH_OUT: f64 = 0.2;

/// A straight line a Lagrangian cloth edge must pass over (spec §4.3 test
/// 1): a wire or a box edge, at the start of the step.
struct Ridge {
    /// Its start, m; the unit tangent from there, `normal × tangent` and
    /// the length, m.
    start: Vec3<f64>,
    tangent: Vec3<f64>,
    across: Vec3<f64>,
    length: f64,
    /// The side the cloth stays on (a wire's support normal; a box edge's
    /// `normalize(n1 + n2)`, spec §4.2).
    normal: Vec3<f64>,
    friction: f64,
    /// How far under the line a crossing still gets a row, m.
    under: f64,
    of: RidgeOf,
}

/// Whose line a [`Ridge`] is: a wire (with its velocity) or box `k`.
#[derive(Clone, Copy)]
enum RidgeOf {
    Wire(Vec3<f64>),
    Box(usize),
}

/// Per inequality row: its (first) vertex, the row's world normal and the
/// obstacle's velocity, its μ, and for a row over several vertices their
/// weights (friction shares the row's impulse by them).
type RowContact = (u32, Option<(Vec3<f64>, Vec3<f64>)>, f64, Vec<(u32, f64)>);

/// How many times a failing step may halve itself (down to h/8).
const MAX_SPLITS: u32 = 3;

/// The state a failed step goes back to.
#[derive(Clone)]
pub(super) struct Snapshot {
    pub(super) mesh: Mesh,
    pub(super) xd: Vec<Vec3<f64>>,
    pub(super) ud: Vec<Mat2d>,
    pub(super) features: Vec<Option<Feature>>,
    pub(super) ids: Vec<u32>,
    pub(super) next_id: u32,
    pub(super) time: f64,
    pub(super) pins: Vec<Pin>,
    pub(super) active: std::collections::BTreeSet<(u32, u32)>,
    pub(super) qp_exact_solves: u32,
    /// The obstacles (they move with the steps).
    pub(super) obstacles: (Vec<BoxObstacle>, Vec<Wire>, Vec<PointObstacle>),
    /// The hinges' wrinkle states (they change with the step and the mesh).
    pub(super) wrinkles: Option<Wrinkles>,
}

impl StepReport {
    /// Two consecutive sub-steps as one: the last one's solver state, the
    /// sums of counts and times, the worst of the gaps.
    fn then(&self, b: &StepReport) -> StepReport {
        let r = &self.remesh;
        StepReport {
            kkt: b.kkt,
            iterations: self.iterations + b.iterations,
            factorizations: self.factorizations + b.factorizations,
            analyses: self.analyses + b.analyses,
            rows: b.rows,
            contacts: b.contacts,
            remesh: RemeshReport {
                created: r.created + b.remesh.created,
                released: r.released + b.remesh.released,
                collapsed: r.collapsed + b.remesh.collapsed,
                mended: r.mended + b.remesh.mended,
                flipped: r.flipped + b.remesh.flipped,
                refined: r.refined + b.remesh.refined,
                // The last sub-step's mesh is the one left.
                short_kept: b.remesh.short_kept,
            },
            adapt: {
                let mut a = self.adapt;
                a += b.adapt;
                a
            },
            timings: {
                let mut t = self.timings;
                t.add(&b.timings);
                t
            },
            clarabel: self.clarabel || b.clarabel,
            qp_gap: self.qp_gap.max(b.qp_gap),
            qp_gap_raw: self.qp_gap_raw.max(b.qp_gap_raw),
            substeps: self.substeps + b.substeps,
            wrinkle_events: (
                self.wrinkle_events.0 + b.wrinkle_events.0,
                self.wrinkle_events.1 + b.wrinkle_events.1,
            ),
        }
    }
}

/// Spec §6.3: the largest angle between the normals of the faces around a
/// vertex is below this (rad) for a "flat" edge vertex … [D] The spec's 0.1
/// is raised to 0.5: a vertex bent less than that, moved across the edge
/// in the cloth's plane with `Ẋ` following, barely deforms the cloth (a
/// near-null direction of `M̃` that the face rows leave open on the
/// lift-off side): the QP sent such vertices off the edge sideways at m/s
/// and the remesher caught them again every few steps, so a sheet on two
/// boxes with μ = 1.5 never rested. The flat rows (with the vertex normal
/// clamped into the faces' cone, `constraints::cone_normal`) close it.
pub(crate) const FLAT_EDGE: f64 = 0.5;
/// … and this for a corner or point vertex.
const FLAT_CORNER: f64 = 0.5;

/// Per vertex: the unit normals of its faces, its neighbours, and the
/// material normal b̄ of a border edge at it (None inside).
type Neighbourhood = (Vec<Vec<Vec3<f64>>>, Vec<Vec<u32>>, Vec<Option<Mat2d>>);

impl Stepper {
    /// Per vertex: incident faces' unit normals, and the border edges
    /// (`edges`: the mesh's [`Mesh::edge_face_counts`]).
    fn neighbourhood(&self, edges: &EdgeCounts) -> Neighbourhood {
        let m = &self.mesh;
        let nv = m.x.len();
        let mut normals = vec![Vec::new(); nv];
        let mut nbrs: Vec<Vec<u32>> = vec![Vec::new(); nv];
        for f in &m.faces {
            let [a, b, c] = f.map(|v| m.x[v as usize]);
            let n = (b - a).cross(c - a).normalize_or_zero();
            for k in 0..3 {
                let (i, j) = (f[k], f[(k + 1) % 3]);
                normals[i as usize].push(n);
                nbrs[i as usize].push(j);
                nbrs[j as usize].push(i);
            }
        }
        // Border normal b̄ in material space: perp of a border edge (spec §6.1).
        let mut border = vec![None; nv];
        for ((i, j), c) in edges.iter() {
            if c == 1 {
                let (a, b) = (m.u[i as usize], m.u[j as usize]);
                let d = [b[0] - a[0], b[1] - a[1]];
                let l = d[0].hypot(d[1]);
                if l > 0.0 {
                    let perp = [-d[1] / l, d[0] / l];
                    border[i as usize].get_or_insert(perp);
                    border[j as usize].get_or_insert(perp);
                }
            }
        }
        for v in &mut nbrs {
            v.sort_unstable();
            v.dedup();
        }
        (normals, nbrs, border)
    }

    /// A fresh stepper: the cloth at rest with world positions `x` (m),
    /// material coordinates `u` (m) and `faces` counter-clockwise in
    /// material space; no obstacles, no pins, every vertex Lagrangian.
    /// Errors when the material triangles are not all positively oriented
    /// and non-degenerate, or the sizes disagree.
    pub fn new(
        x: Vec<Vec3<f64>>,
        u: Vec<Mat2d>,
        faces: Vec<[u32; 3]>,
        params: ClothParams,
        h: f64,
    ) -> Result<Self> {
        let n = x.len();
        if u.len() != n {
            return Err(Error::InvalidInput(format!(
                "{} material coordinates for {n} vertices",
                u.len()
            )));
        }
        if !(h.is_finite() && h > 0.0) {
            return Err(Error::InvalidInput(format!(
                "the time step must be > 0 s; got {h}"
            )));
        }
        if u.iter().any(|p| !(p[0].is_finite() && p[1].is_finite())) {
            return Err(Error::InvalidInput("material coordinates must be finite".into()));
        }
        let mesh = crate::geometry::TriMesh::from_u32_faces(x, faces)?;
        // The tolerance of "degenerate" from the sheet's extent (not its
        // distance from the origin).
        let extent = (0..2)
            .map(|k| {
                let (lo, hi) = u.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| {
                    (l.min(p[k]), h.max(p[k]))
                });
                hi - lo
            })
            .fold(0.0f64, f64::max)
            .max(f64::MIN_POSITIVE);
        for (t, f) in mesh.faces().iter().enumerate() {
            let signed = 2.0 * signed_area(&f.map(|k| u[k as usize]));
            if signed.is_nan() || signed <= 1e-12 * extent * extent {
                return Err(Error::InvalidInput(format!(
                    "face {t} is {} in material space (signed area {:e} m²): faces must run \
                     counter-clockwise in the material coordinates; flip the faces or mirror the \
                     coordinates",
                    if signed < 0.0 { "clockwise" } else { "degenerate" },
                    0.5 * signed
                )));
            }
        }
        let longest = mesh
            .faces()
            .iter()
            .flat_map(|f| (0..3).map(move |k| (f[k] as usize, f[(k + 1) % 3] as usize)))
            .map(|(a, b)| (u[a][0] - u[b][0]).hypot(u[a][1] - u[b][1]))
            .fold(0.0f64, f64::max);
        Ok(Self {
            mesh: Mesh {
                x: mesh.vertices().to_vec(),
                u,
                faces: mesh.faces().to_vec(),
                hinges: mesh.topology().hinges().to_vec(),
                eol: vec![false; n],
            },
            xd: vec![Vec3::zero(); n],
            ud: vec![[0.0; 2]; n],
            features: vec![None; n],
            params,
            h,
            boxes: Vec::new(),
            wires: Vec::new(),
            points: Vec::new(),
            thr: 5e-3,
            pins: Vec::new(),
            ids: (0..n as u32).collect(),
            next_id: n as u32,
            step_count: 0,
            timings: Timings::default(),
            last: StepReport::default(),
            qp: QpMethod::default(),
            verify_qp: false,
            kkt_ws: KktWorkspace::default(),
            qp_exact_solves: 0,
            quarantine: Default::default(),
            active: Default::default(),
            time: 0.0,
            remesh: true,
            tau: 0.01,
            conformal: Conformal::Eol,
            refine_length: 1.5 * longest,
            sizing: None,
            eq13: false,
            assembly: AssemblyCache::default(),
            wrinkles: None,
            bend: Vec::new(),
        })
    }

    /// The remesher's view of this stepper's cloth (tests: the remesh
    /// passes called one by one), no vertex held, with `pinned` flags.
    #[cfg(test)]
    pub(crate) fn cloth<'a>(&'a mut self, pinned: &'a [bool]) -> Cloth<'a> {
        Cloth {
            mesh: &mut self.mesh,
            xd: &mut self.xd,
            ud: &mut self.ud,
            features: &mut self.features,
            ids: &mut self.ids,
            next_id: &mut self.next_id,
            pinned,
            held: &[],
            eq13: self.eq13,
            eulerian: self.conformal == Conformal::Eol,
            cleanup_flips: self.sizing.is_none(),
            refine_length: if self.sizing.is_none() {
                self.refine_length
            } else {
                f64::INFINITY
            },
        }
    }

    /// Per vertex: scripted now.
    fn pinned_flags(&self) -> Vec<bool> {
        pinned_by_id(&self.ids, &self.pins)
    }

    /// The vertex with persistent id `id` now, if it is still there.
    pub fn vertex_of(&self, id: u32) -> Option<usize> {
        // Ids only grow along the arrays (new vertices are appended,
        // compaction keeps the order), so they are sorted.
        self.ids.binary_search(&id).ok()
    }

    /// Steps by `h`. Errors ([`Error::Solver`]) when the QP fails or its
    /// solution fails the KKT check, and ([`Error::Diverged`]) when the
    /// state would stop being finite; the state (mesh included) is then as
    /// it was before the step.
    pub fn step(&mut self) -> Result<StepReport> {
        self.step_by(self.h)
    }

    /// [`Self::step`] with the step `h` (s) instead of the configured one.
    pub fn step_by(&mut self, h: f64) -> Result<StepReport> {
        if !(h.is_finite() && h > 0.0) {
            return Err(Error::InvalidInput(format!(
                "the time step must be > 0 s; got {h}"
            )));
        }
        // `split_step` leaves the state as it found it when it fails. It
        // runs on one of rayon's workers, so that its parallel loops fork
        // and join inside the pool rather than each being injected from
        // the caller's thread (which sleeps until a woken worker is done);
        // the same loops and chunks, so the same bits.
        let this = &mut *self;
        match rayon::scope(|_| this.split_step(h, 0)) {
            Ok(r) => {
                self.step_count += 1;
                self.timings.add(&r.timings);
                self.last = r;
                if let Some(w) = self.wrinkles.as_mut() {
                    w.warp_once();
                }
                Ok(r)
            }
            Err(e) => Err(match e {
                Error::Diverged { what, .. } => Error::Diverged {
                    step: self.step_count,
                    time: self.time,
                    what,
                },
                e => e,
            }),
        }
    }

    /// What a failed step restores (the remesher changes the mesh before
    /// the QP can fail; a split step has moved time, pins and the warm
    /// start).
    fn snapshot(&self) -> Snapshot {
        Snapshot {
            mesh: self.mesh.clone(),
            xd: self.xd.clone(),
            ud: self.ud.clone(),
            features: self.features.clone(),
            ids: self.ids.clone(),
            next_id: self.next_id,
            time: self.time,
            pins: self.pins.clone(),
            active: self.active.clone(),
            qp_exact_solves: self.qp_exact_solves,
            obstacles: (self.boxes.clone(), self.wires.clone(), self.points.clone()),
            wrinkles: self.wrinkles.clone(),
        }
    }

    pub(super) fn restore_snapshot(&mut self, s: Snapshot) {
        self.mesh = s.mesh;
        self.xd = s.xd;
        self.ud = s.ud;
        self.features = s.features;
        self.ids = s.ids;
        self.next_id = s.next_id;
        self.time = s.time;
        self.pins = s.pins;
        self.active = s.active;
        self.qp_exact_solves = s.qp_exact_solves;
        (self.boxes, self.wires, self.points) = s.obstacles;
        self.wrinkles = s.wrinkles;
    }

    /// Runs the cloth module's persistent wrinkles with the constants
    /// `params` on the hinges (every hinge fresh at its current angle), or
    /// turns them off (`None`: elastic bending). One bending stiffness:
    /// `params.bending` becomes the wrinkle material's κ_b.
    pub fn set_wrinkles(&mut self, params: Option<ElementParams>) {
        if let Some(p) = &params {
            self.params.bending = p.kappa_b;
        }
        self.wrinkles = params.map(|p| Wrinkles::new(p, &self.mesh));
    }

    /// Removes box `k` (its index in [`Self::boxes`]): the EOL vertices on
    /// its edges and corners are released (world velocity kept, spec §5.5)
    /// and those on later boxes renumbered. Out of range: nothing.
    pub fn remove_box(&mut self, k: usize) {
        if k >= self.boxes.len() {
            return;
        }
        self.boxes.remove(k);
        self.renumber_box_features(k, true);
    }

    /// Releases the EOL vertices on box `k`'s edges and corners (world
    /// velocity kept, spec §5.5), e.g. when the box was turned: their
    /// features hold its old normals; the remesher makes new ones.
    pub fn release_box_features(&mut self, k: usize) {
        self.renumber_box_features(k, false);
    }

    /// Releases the vertices on box `k`; with `removed`, those on later
    /// boxes shift down by one.
    fn renumber_box_features(&mut self, k: usize, removed: bool) {
        for i in 0..self.mesh.x.len() {
            let on_box = matches!(
                self.features[i],
                Some(Feature::Edge { .. } | Feature::Corner { .. })
            );
            let Some(o) = self.features[i].filter(|_| on_box).map(|f| f.obstacle() as usize) else {
                continue;
            };
            if o == k {
                release_vertex(&mut self.mesh, &mut self.xd, &mut self.ud, &mut self.features, i);
            } else if removed
                && o > k
                && let Some(Feature::Edge { obstacle, .. } | Feature::Corner { obstacle, .. }) =
                    self.features[i].as_mut()
            {
                *obstacle -= 1;
            }
        }
        self.active.clear();
    }

    /// After box `k` turned by `turn`: the EOL vertices on its edges and
    /// corners get the features they are on now (their normals and
    /// tangents turned; compared exactly against the box's own features
    /// elsewhere, so taken from the box). A vertex whose feature matches
    /// none of the box's (it was re-posed, not turned by `turn`) is
    /// released (world velocity kept, spec §5.5).
    pub fn follow_turned_box(&mut self, k: usize, turn: &Mat3<f64>) {
        let Some(b) = self.boxes.get(k).copied() else {
            return;
        };
        let (edges, corners) = (b.edges(), b.corners());
        for i in 0..self.features.len() {
            let Some(f) = self.features[i] else {
                continue;
            };
            if !matches!(f, Feature::Edge { .. } | Feature::Corner { .. }) || f.obstacle() as usize != k {
                continue;
            }
            match turned_among(&f, turn, &edges, &corners, k as u32) {
                Some(g) => self.features[i] = Some(g),
                None => {
                    release_vertex(&mut self.mesh, &mut self.xd, &mut self.ud, &mut self.features, i);
                    self.active.clear();
                }
            }
        }
    }

    /// The obstacles as the remesher sees them.
    pub fn obstacles(&self) -> Obstacles<'_> {
        Obstacles {
            boxes: &self.boxes,
            wires: &self.wires,
            points: &self.points,
        }
    }

    /// One step of `h`, or, when it fails with a solver error (a face
    /// that would turn over in material space because an EOL vertex
    /// outran the remesher, or a QP that failed), two of `h/2` from the
    /// same state, down to `h/8` ([D]: the paper's advice is "reduce h";
    /// the remesher's look-ahead then sees the flow in smaller pieces).
    /// Reports add up; `substeps` counts them.
    fn split_step(&mut self, h: f64, depth: u32) -> Result<StepReport> {
        let saved = self.snapshot();
        // A face that would turn over names its EOL vertices: the step is
        // retried (up to 3 times) with them released and held Lagrangian
        // for this step ([D]: the cleanup loop of spec §5.3 is not complete,
        // so a vertex the remesher cannot mend in time gives up its Eulerian
        // freedom for a step instead of stopping the run; the next step's
        // detection makes it EOL again if it is still on the edge).
        let mut tries = 0;
        let out = loop {
            self.quarantine.1.clear();
            match self.step_inner(h) {
                Err(Error::Solver(_))
                    if tries < 3
                        && self
                            .quarantine
                            .1
                            .iter()
                            .any(|id| self.quarantine.0.binary_search(id).is_err()) =>
                {
                    let named = std::mem::take(&mut self.quarantine.1);
                    self.restore_snapshot(saved.clone());
                    self.quarantine.0.extend(named.iter().copied());
                    for id in named {
                        if let Some(i) = self.vertex_of(id) {
                            release_vertex(&mut self.mesh, &mut self.xd, &mut self.ud, &mut self.features, i);
                        }
                    }
                    self.quarantine.0.sort_unstable();
                    self.quarantine.0.dedup();
                    tries += 1;
                }
                r => break r,
            }
        };
        self.quarantine.0.clear();
        // On failure the state goes back to what this call found (the one
        // snapshot of the step; `step_by` takes none of its own).
        match out {
            Ok(r) => Ok(r),
            Err(Error::Solver(_)) if depth < MAX_SPLITS => {
                self.restore_snapshot(saved.clone());
                let halves = self
                    .split_step(0.5 * h, depth + 1)
                    .and_then(|a| self.split_step(0.5 * h, depth + 1).map(|b| a.then(&b)));
                if halves.is_err() {
                    self.restore_snapshot(saved);
                }
                halves
            }
            Err(e) => {
                self.restore_snapshot(saved);
                Err(e)
            }
        }
    }

    /// Steps until `time + duration` (s), the last step shortened to land
    /// there; `stop` is asked before each step and ends the run early (the
    /// state is whole). Returns the steps taken and whether it stopped.
    pub fn advance_with(&mut self, duration: f64, stop: impl FnMut() -> bool) -> Result<(u64, bool)> {
        self.advance_moving(duration, stop, |_, _, _| {})
    }

    /// [`Self::advance_with`], with `aim(t, h, boxes)` called before each
    /// step from `t` of `h` s to set the boxes' velocities for it (e.g.
    /// [`BoxObstacle::aim`] at a keyframed box's pose at `t + h`).
    pub fn advance_moving(
        &mut self,
        duration: f64,
        mut stop: impl FnMut() -> bool,
        mut aim: impl FnMut(f64, f64, &mut [BoxObstacle]),
    ) -> Result<(u64, bool)> {
        if !(duration.is_finite() && duration >= 0.0) {
            return Err(Error::InvalidInput(format!(
                "advance: duration must be a finite number of seconds ≥ 0, got {duration}"
            )));
        }
        let end = self.time + duration;
        let mut steps = 0;
        while let Some(h) = crate::stepping::next_fixed_step(self.time, end, self.h) {
            if stop() {
                return Ok((steps, true));
            }
            aim(self.time, h, &mut self.boxes);
            self.step_by(h)?;
            steps += 1;
        }
        self.time = end;
        Ok((steps, false))
    }

    /// Lagrangian contacts (spec §6.4), rows on vertices that are not EOL
    /// and not scripted; `v_o` is the obstacle's velocity. Returns the
    /// count.
    ///
    /// - Test 3, vertex ↔ box face: a vertex inside a box (nearest face
    ///   within 5·thr) gets `n_fᵀẋ ≥ n_fᵀv_o`. [D] A vertex outside a face
    ///   but within this step's reach of it (over the face, within thr +
    ///   2|ẋ|h) gets the speculative row `n_fᵀẋ ≥ n_fᵀv_o − d/h`: the step
    ///   may close the gap d and not more, so a fast hanging part swinging
    ///   into a side face stops on it instead of a step's travel inside
    ///   (E1 proxy (b): no deeper than 2·thr). Reach is measured relative
    ///   to the obstacle's velocity, here and below.
    /// - Test 1, wire or box edge ↔ cloth edge: [`Self::edge_crossings`]
    ///   (for wires with the spec's push-out term, β = 0.2, [D]: a
    ///   Lagrangian fold over a wire rests on sloped edges, and as the
    ///   cloth shifts sideways the crossing point slides down them, so
    ///   without it the penetration grows step by step until the cloth
    ///   drops through).
    /// - Test 2, point or box corner ↔ cloth face: every face with the point under it
    ///   (barycentrics down to −0.1, clamped: a tip on a vertex or an edge
    ///   of the tented cloth misses each face's plan by a little; one face
    ///   only would let its neighbour pass the tip as the cloth slides),
    ///   within reach (or poked through by up to 5·thr), gets
    ///   `Σ b_k n_tᵀẋ_k ≥ n_tᵀv_o − d/h` (β = 0.2 where d < 0, as for
    ///   wires); not for a
    ///   point or corner that already has its EOL vertex.
    ///
    /// In "eol" mode the remesher turns edges and faces in contact with a
    /// wire or a point into EOL vertices first, so the last two catch a
    /// cloth on its way in; in the Lagrangian baseline they are the
    /// contact.
    /// `turns`: each box's turn over the step (None: it does not turn);
    /// `edges`: the cloth's edges (the step's [`Mesh::edge_face_counts`]).
    fn lagrangian_contacts(
        &self,
        dofs: &super::system::Dofs,
        rows: &mut Rows,
        h: f64,
        turns: &[Option<Mat3<f64>>],
        edges: &EdgeCounts,
    ) -> usize {
        let mut contacts = 0;
        let pinned = self.pinned_flags();
        let m = &self.mesh;
        let free = |i: usize| !m.eol[i] && !pinned[i];
        // A turning box's face rows take the face's normal at the end of
        // the step: with `v_o` the finite-difference velocity,
        // `n'ᵀ(x + hẋ − E'x) ≥ −gap` keeps the vertex outside the turned face
        // exactly (the start normal would let a vertex sliding along the
        // face drift in by h²|ω||ẋ_t| per step, as for EOL vertices).
        for (i, &x) in m.x.iter().enumerate() {
            if !free(i) {
                continue;
            }
            for (b, turn) in self.boxes.iter().zip(turns) {
                let v_o = turn.as_ref().map_or(b.velocity, |r| b.velocity_turning(x, h, r));
                let turned = |n: Vec3<f64>| turn.map_or(n, |r| r * n);
                // The reach of this step: relative to the obstacle, which moves too.
                let reach = self.thr + 2.0 * (self.xd[i] - v_o).norm() * h;
                let r0 = rows.inequality_count();
                if let Some((nf, depth)) = b.nearest_face(x) {
                    if depth <= 5.0 * self.thr {
                        rows.vertex(dofs, i, true, turned(nf), v_o);
                        contacts += 1;
                    }
                } else if let Some((nf, gap)) = b.face_above(x)
                    && gap <= reach
                {
                    rows.vertex_ahead(dofs, i, turned(nf), v_o, gap / h);
                    contacts += 1;
                }
                rows.set_friction_from(r0, b.friction);
            }
        }
        contacts += self.edge_crossings(dofs, rows, h, turns, edges, &free);
        // A bound on the face test below for every face of free vertices:
        // their box, their largest speed and widest face. A tip outside
        // that box grown by the largest reach and slack is near none of
        // them (each face's grown box lies inside it; |ẋ − v_p| ≤ |ẋ| +
        // |v_p|, kept a bound against rounding by 1e-9), so most box
        // corners skip the scan of every face with its three speeds (a
        // tenth of the four-box friction scene's step). Only at speeds
        // past 1e154 m/s, where a face's squared speed overflows and its
        // reach turns infinite, could it skip a face that tests near.
        // (Not built when there is no tip: the wire scenes.)
        let tips = self.obstacles().point_features(h);
        let (mut lo, mut hi, mut speed, mut widest) = (
            Vec3::splat(f64::INFINITY),
            Vec3::splat(f64::NEG_INFINITY),
            0.0f64,
            0.0f64,
        );
        if !tips.is_empty() {
            for (i, &x) in m.x.iter().enumerate() {
                if free(i) {
                    (lo, hi) = (lo.component_min(x), hi.component_max(x));
                    speed = speed.max(self.xd[i].norm());
                }
            }
            for f in m.faces.iter().filter(|f| f.iter().all(|&v| free(v as usize))) {
                let x = f.map(|v| m.x[v as usize]);
                let w = (x[0].component_max(x[1]).component_max(x[2])
                    - x[0].component_min(x[1]).component_min(x[2]))
                .max_element();
                widest = widest.max(w);
            }
        }
        for (p, feature) in tips {
            let p = &p;
            let reach = self.thr + 2.0 * (speed + p.velocity.norm()) * (1.0 + 1e-9) * h;
            let grow = reach.max(5.0 * self.thr) + 2.0 * 0.1 * widest + 1e-9;
            if outside_box(p.position, lo, hi, grow) {
                continue;
            }
            if self.features.contains(&Some(feature)) {
                continue;
            }
            for f in &m.faces {
                if !f.iter().all(|&v| free(v as usize)) {
                    continue;
                }
                let rel = f
                    .iter()
                    .map(|&v| (self.xd[v as usize] - p.velocity).norm())
                    .fold(0.0, f64::max);
                let reach = self.thr + 2.0 * rel * h;
                let x = f.map(|v| m.x[v as usize]);
                if !near_face(p.position, x, reach.max(5.0 * self.thr), 0.1) {
                    continue;
                }
                let Some((height, bary, nt)) = point_over_face(p, x, 0.1) else {
                    continue;
                };
                if (-reach..=5.0 * self.thr).contains(&height) {
                    let vs = [0, 1, 2].map(|j| (f[j] as usize, bary[j]));
                    let gap = -height;
                    let r0 = rows.inequality_count();
                    rows.weighted(
                        dofs,
                        &vs,
                        nt,
                        p.velocity,
                        nt.dot(p.velocity) - if gap > 0.0 { gap } else { PUSH_OUT * gap } / h,
                    );
                    rows.set_friction_from(r0, p.friction);
                    contacts += 1;
                }
            }
        }
        contacts
    }

    /// Test 1 of [`Self::lagrangian_contacts`]: rows on the Lagrangian
    /// cloth edges that cross over a wire or a box edge (spec §4.3 test 1,
    /// §6.4 "box edge ↔ Lagrangian edge"). An edge that straddles the
    /// plane of the line and its normal n (a wire's support normal, a box
    /// edge's `normalize(n1 + n2)`, at the start of the step), with the
    /// crossing point c within reach over the line (the speculative form)
    /// or at most `under` under it (thr for a wire: a wire has no inside,
    /// and an edge further under it is another part of the cloth passing
    /// by; 5·thr for a box edge, as for a corner in test 2), gets
    /// `Σ w_k nᵀẋ_k ≥ nᵀv_o − d/h` with d = nᵀ(c − p) its height over the
    /// line's point p (β = 0.2 where d < 0). A crossing under a box edge
    /// counts only inside the box (a thin box's far side is not under the
    /// edge), and a turning box's row takes n turned to the step's end, as
    /// its face rows do, with d measured at the start. [D] n for a box edge
    /// is the edge normal, not the spec's edge–edge normal
    /// `normalize(t_e × (b − a))`: with that one the rows pushed the
    /// border of the E1 pull exactly onto the box edge, where its vertices'
    /// face rows (the nearest face of a vertex on both) held them, and the
    /// border never came over.
    /// A crossing at a vertex is that vertex's row along n, once per vertex
    /// and line with the largest right-hand side: the edges around it would
    /// give the same row several times over, and dependent active rows
    /// leave the QP's multipliers undetermined.
    ///
    /// [D] A box edge with an EOL vertex on it or at one of its corners has
    /// no such rows: around the ends of an EOL line the faces fan over the
    /// edge from the line's last vertex, so their cloth edges cross under
    /// it by the mesh's own shape, and rows there lift the cloth off the
    /// box or fight the EOL rows (with them, in the first form of these
    /// rows, an EOL vertex on a keyframed turning box's edge ended 0.79 mm
    /// from it, where δ = 0.5 mm). Re-measured with the rows as they are
    /// now, held edges included: that test passes, and the deepest face
    /// point of `eol_tilting_box`'s sheet goes 4.4 mm into the box against
    /// 3.9 mm without (1.7 against 2.1 mm for the box tilted about its
    /// long axis), so the rule stays: no clear gain either way. A face
    /// whose vertices are all outside a box enters it through an edge or a
    /// corner; through an edge, its intersection with the edge's plane
    /// dips under the edge, and that segment ends on two of its cloth
    /// edges, one of them under the edge: its row keeps the face out while
    /// the crossing is within `under` (a corner through a face is test 2's).
    /// `edges`: the cloth's edges (the step's [`Mesh::edge_face_counts`]).
    fn edge_crossings(
        &self,
        dofs: &super::system::Dofs,
        rows: &mut Rows,
        h: f64,
        turns: &[Option<Mat3<f64>>],
        edges: &EdgeCounts,
        free: &dyn Fn(usize) -> bool,
    ) -> usize {
        let m = &self.mesh;
        // Each box's edges, and whether an EOL vertex holds each of them.
        let box_edges: Vec<Vec<super::obstacle::BoxEdge>> = self.boxes.iter().map(|b| b.edges()).collect();
        let mut held: Vec<Vec<bool>> = box_edges.iter().map(|e| vec![false; e.len()]).collect();
        for f in self.features.iter().flatten() {
            let (normals, obstacle) = match f {
                Feature::Edge {
                    normals, obstacle, ..
                } => (&normals[..], *obstacle),
                Feature::Corner { normals, obstacle } => (&normals[..], *obstacle),
                _ => continue,
            };
            let among = |n: Vec3<f64>| normals.iter().any(|m| m.dot(n) > 1.0 - 1e-9);
            if let (Some(es), Some(hs)) = (box_edges.get(obstacle as usize), held.get_mut(obstacle as usize))
            {
                for (e, held) in es.iter().zip(hs.iter_mut()) {
                    *held |= e.normals.iter().all(|&n| among(n));
                }
            }
        }
        let ridges: Vec<Ridge> = self
            .wires
            .iter()
            .map(|w| Ridge {
                start: w.ends[0],
                tangent: w.tangent(),
                across: w.normal.cross(w.tangent()),
                length: (w.ends[1] - w.ends[0]).norm(),
                normal: w.normal,
                friction: w.friction,
                under: self.thr,
                of: RidgeOf::Wire(w.velocity),
            })
            .chain(self.boxes.iter().enumerate().flat_map(|(k, b)| {
                box_edges[k]
                    .iter()
                    .zip(&held[k])
                    .filter(|&(_, &held)| !held)
                    .map(move |(e, _)| Ridge {
                        start: e.ends[0],
                        tangent: e.tangent,
                        across: e.normal().cross(e.tangent),
                        length: (e.ends[1] - e.ends[0]).norm(),
                        normal: e.normal(),
                        friction: b.friction,
                        under: 5.0 * self.thr,
                        of: RidgeOf::Box(k),
                    })
            }))
            .collect();
        if ridges.is_empty() {
            return 0;
        }
        let mut contacts = 0;
        let mut at_vertex = std::collections::BTreeMap::new();
        for &(a, b) in edges.keys() {
            let (a, b) = (a as usize, b as usize);
            if !(free(a) && free(b)) {
                continue;
            }
            let (xa, xb) = (m.x[a], m.x[b]);
            for (k, r) in ridges.iter().enumerate() {
                let (sa, sb) = (r.across.dot(xa - r.start), r.across.dot(xb - r.start));
                if (sa > 0.0) == (sb > 0.0) || sa == sb {
                    continue;
                }
                // Where the edge crosses the plane, and the line's point under it.
                let s = sa / (sa - sb);
                let c = xa + (xb - xa) * s;
                let along = (c - r.start).dot(r.tangent);
                if !(0.0..=r.length).contains(&along) {
                    continue;
                }
                let height = r.normal.dot(c - r.start);
                let (v_o, turn) = match r.of {
                    RidgeOf::Wire(v) => (v, None),
                    RidgeOf::Box(j) => {
                        let bx = &self.boxes[j];
                        if height < 0.0 && bx.signed_distance(c) >= 0.0 {
                            continue;
                        }
                        let v = turns[j]
                            .as_ref()
                            .map_or(bx.velocity, |q| bx.velocity_turning(c, h, q));
                        (v, turns[j].as_ref())
                    }
                };
                let rel = (self.xd[a] - v_o).norm().max((self.xd[b] - v_o).norm());
                let reach = self.thr + 2.0 * rel * h;
                if !(-r.under..=reach).contains(&height) {
                    continue;
                }
                let end = if s <= 1e-9 {
                    Some(a)
                } else if s >= 1.0 - 1e-9 {
                    Some(b)
                } else {
                    None
                };
                let n = turn.map_or(r.normal, |q| *q * r.normal);
                let b_row = n.dot(v_o) - if height > 0.0 { height } else { PUSH_OUT * height } / h;
                match end {
                    Some(v) => {
                        let e = at_vertex.entry((v, k)).or_insert((f64::NEG_INFINITY, v_o, n));
                        if b_row > e.0 {
                            *e = (b_row, v_o, n);
                        }
                    }
                    None => {
                        let r0 = rows.inequality_count();
                        rows.weighted(dofs, &[(a, 1.0 - s), (b, s)], n, v_o, b_row);
                        rows.set_friction_from(r0, r.friction);
                        contacts += 1;
                    }
                }
            }
        }
        for ((v, k), (b_row, v_o, n)) in at_vertex {
            // A row on one vertex (the rows inside an edge share their
            // impulse between its two vertices).
            let r0 = rows.inequality_count();
            rows.vertex_ahead(dofs, v, n, v_o, n.dot(v_o) - b_row);
            rows.set_friction_from(r0, ridges[k].friction);
            contacts += 1;
        }
        contacts
    }

    /// Friction after the QP and before the position update (spec §6.7,
    /// Bridson et al. 2002 style). Per vertex in contact: the normal
    /// impulse `J = Σ μ_k n_k` of its rows (the QP's multipliers are
    /// impulses: its variables are velocities, its matrix a mass), the
    /// normal velocity change `Δv_n = |J|/m_i` (lumped mass), the world
    /// velocity relative to the obstacle `w = ẋ − F Ẋ − v_o` and its part
    /// `w_t` tangent to `J`, and `φ = max(0, 1 − μ Δv_n/‖w_t‖)`, applied to
    /// the tangential part of `ẋ − v_o` (Lagrangian vertex), to `Ẋ` (corner
    /// or point: their tangential motion is all Eulerian), or to `Ẋ` and
    /// the feature-tangent part of `ẋ − v_o` (edge or wire); a vertex a
    /// conformal Lagrangian baseline holds on a feature (Ẋ = 0) is
    /// Lagrangian here. A row over several vertices (a Lagrangian wire
    /// crossing inside an edge, a tip inside a face) gives each vertex its
    /// weight's share of the row's impulse, as the row's Jacobian does.
    fn apply_friction(&self, rows: &[RowContact], mu: &[f64], xd: &mut [Vec3<f64>], ud: &mut [Mat2d]) {
        let m = &self.mesh;
        let mass = m.lumped_masses(self.params.density);
        // Per vertex: the impulse, the obstacle's velocity and μ (of its
        // first row; a vertex touches one obstacle at a time in practice).
        type Impulse = (Vec3<f64>, Vec3<f64>, f64);
        let mut imp: Vec<Option<Impulse>> = vec![None; m.x.len()];
        for ((i, w, coef, spread), &mk) in rows.iter().zip(mu) {
            let (Some((n, v_o)), coef) = (*w, *coef) else {
                continue;
            };
            if mk > 0.0 && coef > 0.0 {
                if spread.is_empty() {
                    let e = imp[*i as usize].get_or_insert((Vec3::zero(), v_o, coef));
                    e.0 += n * mk;
                }
                for &(v, wk) in spread {
                    let e = imp[v as usize].get_or_insert((Vec3::zero(), v_o, coef));
                    e.0 += n * (mk * wk);
                }
            }
        }
        for (i, e) in imp.iter().enumerate() {
            let Some((j, v_o, coef)) = *e else {
                continue;
            };
            let jn = j.norm();
            if jn <= 0.0 || mass[i] <= 0.0 {
                continue;
            }
            let n = j * (1.0 / jn);
            let eul = if m.eol[i] {
                vertex_grad(m, i).map_or(Vec3::zero(), |g| g.apply(ud[i]))
            } else {
                Vec3::zero()
            };
            let w = xd[i] - eul - v_o;
            let wt = w - n * w.dot(n);
            let wtn = wt.norm();
            if wtn <= 0.0 {
                continue;
            }
            let phi = (1.0 - coef * (jn / mass[i]) / wtn).max(0.0);
            let eulerian = m.eol[i] && self.conformal == Conformal::Eol;
            match self.features[i].filter(|_| eulerian) {
                None => {
                    let r = xd[i] - v_o;
                    let rn = n * r.dot(n);
                    xd[i] = v_o + rn + (r - rn) * phi;
                }
                Some(Feature::Corner { .. } | Feature::Point { .. }) => {
                    ud[i] = [ud[i][0] * phi, ud[i][1] * phi];
                }
                Some(Feature::Edge { tangent, .. } | Feature::Wire { tangent, .. }) => {
                    ud[i] = [ud[i][0] * phi, ud[i][1] * phi];
                    xd[i] -= tangent * ((1.0 - phi) * tangent.dot(xd[i] - v_o));
                }
            }
        }
    }

    fn step_inner(&mut self, h: f64) -> Result<StepReport> {
        // A public field: checked here (NaN sizes would reach a clamp).
        if let Some(sizing) = &self.sizing {
            sizing.validate()?;
        }
        let mut timings = Timings::default();
        let clock = std::time::Instant::now();
        // Scripted vertices: their velocity is given (spec §6.5), so they
        // get no contact rows (which could contradict it) and the remesher
        // leaves them alone.
        let pinned_before = self.pinned_flags();
        let mut adapt = AdaptReport::default();
        let remeshing = self.remesh || self.sizing.is_some();
        // The hinges before the remesher changes them (their states follow
        // their edges, `super::wrinkle`).
        let saved = self
            .wrinkles
            .as_ref()
            .filter(|_| remeshing)
            .map(|w| w.save(&self.mesh, &self.ids));
        let remesh = if remeshing {
            let pinned = pinned_before;
            let obstacles = Obstacles {
                boxes: &self.boxes,
                wires: &self.wires,
                points: &self.points,
            };
            let mut cloth = Cloth {
                mesh: &mut self.mesh,
                xd: &mut self.xd,
                ud: &mut self.ud,
                features: &mut self.features,
                ids: &mut self.ids,
                next_id: &mut self.next_id,
                pinned: &pinned,
                held: &self.quarantine.0,
                eq13: self.eq13,
                eulerian: self.conformal == Conformal::Eol,
                cleanup_flips: self.sizing.is_none(),
                refine_length: if self.sizing.is_none() {
                    self.refine_length
                } else {
                    f64::INFINITY
                },
            };
            let report = if self.remesh {
                cloth.remesh(&obstacles, self.thr, self.tau, h)?
            } else {
                RemeshReport::default()
            };
            if let Some(sizing) = &self.sizing {
                // The contact pass may have compacted the vertices: the
                // scripted flags again, by id.
                let flags = pinned_by_id(cloth.ids, &self.pins);
                cloth.pinned = &flags;
                adapt = cloth.adapt(sizing);
                if adapt != AdaptReport::default() {
                    cloth.finish()?;
                }
            }
            report
        } else {
            RemeshReport::default()
        };
        if let (Some(w), Some(saved)) = (self.wrinkles.as_mut(), saved.as_ref()) {
            w.carry(saved, &self.mesh, &self.ids);
        }
        timings.rm = clock.elapsed().as_secs_f64();
        // The unknowns' layout (spec §3.6: ẋ of every vertex, then Ẋ of the
        // EOL vertices); the assembly below builds the same from the mesh.
        let dofs = &super::system::Dofs::new(&self.mesh.eol);
        let n = dofs.len();
        // Collision detection, the rows and then the QP's structure
        // analysis (its ordering and symbolic factorization: the patterns of
        // M̃ and the rows are known before the values) run on one thread
        // while the forces are assembled on the other; the mesh is fixed
        // after the remesher, and neither reads what the other writes. When
        // the mesh changed, M̃'s pattern is built first, beside CD and the
        // rows (see below). The caches each side writes are taken out of
        // the stepper for the while. The solve checks the structure again
        // and analyses it itself if it differs. The assembly's side then
        // builds the QP terms (M̃ = M − h²K and q). CD is its own part's
        // time; MF the rest of the overlapped stretch (the patterns, the
        // analysis and the QP terms included).
        let clock = std::time::Instant::now();
        let mut wrinkle_events = (0, 0);
        let bend = match self.wrinkles.as_mut() {
            Some(w) if w.hinges.len() == self.mesh.hinges.len() => {
                wrinkle_events = w.update(&self.mesh, h, &mut self.bend);
                Some(self.bend.as_slice())
            }
            Some(_) => {
                return Err(Error::InvalidInput(
                    "the wrinkle states do not match the hinges; call set_wrinkles again".into(),
                ));
            }
            None => None,
        };
        let mut assembly = std::mem::take(&mut self.assembly);
        let mut ws = std::mem::take(&mut self.kkt_ws);
        let analysed_before = ws.analyses;
        // The unknowns' groups for the QP's fill-reducing ordering.
        ws.group_unknowns(dofs.groups());
        let this = &*self;
        let analysed = this.qp == QpMethod::ActiveSet;
        // Collision detection and the rows.
        let cd_rows = || -> Result<_> {
            let clock = std::time::Instant::now();
            // The cloth's edges, once for the step: border normals and the
            // crossings of wires and box edges (the mesh is fixed from here on).
            let edges = this.mesh.edge_face_counts();
            let (normals, nbrs, border) = this.neighbourhood(&edges);
            let mut rows = Rows::default();
            for &i in &dofs.eol {
                let i = i as usize;
                let Some(feature) = this.features.get(i).copied().flatten() else {
                    return Err(Error::InvalidInput(format!("EOL vertex {i} has no feature")));
                };
                let ns = &normals[i];
                let spread = ns
                    .iter()
                    .flat_map(|a| ns.iter().map(move |b| a.dot(*b).clamp(-1.0, 1.0).acos()))
                    .fold(0.0, f64::max);
                let corner = matches!(feature, Feature::Corner { .. } | Feature::Point { .. });
                let flat = spread < if corner { FLAT_CORNER } else { FLAT_EDGE };
                let vn = ns.iter().fold(Vec3::zero(), |a, b| a + *b).normalize_or_zero();
                // t̄ from the conformal neighbours (EOL, same feature), ordered along
                // the feature's tangent; b̄ at the border.
                let along = match border[i] {
                    Some(b) => b,
                    None => {
                        let tangent = match feature {
                            Feature::Edge { tangent, .. } | Feature::Wire { tangent, .. } => tangent,
                            _ => Vec3::zero(),
                        };
                        let mut line: Vec<u32> = nbrs[i]
                            .iter()
                            .copied()
                            .filter(|&j| {
                                this.mesh.eol[j as usize] && this.features[j as usize] == Some(feature)
                            })
                            .collect();
                        line.sort_by(|&a, &b| {
                            let (pa, pb) = (
                                this.mesh.x[a as usize].dot(tangent),
                                this.mesh.x[b as usize].dot(tangent),
                            );
                            pa.total_cmp(&pb).then(a.cmp(&b))
                        });
                        let u = |j: u32| this.mesh.u[j as usize];
                        match line.as_slice() {
                            [p, .., q] => line_direction(u(*p), this.mesh.u[i], u(*q)),
                            [p] => line_direction(u(*p), this.mesh.u[i], this.mesh.u[i]),
                            // No conformal neighbour (spec §6.1 [D]): the edge's
                            // material direction (FᵀF)⁻¹Fᵀ t_e, F of a face at i.
                            [] => this
                                .mesh
                                .faces
                                .iter()
                                .find(|f| f.contains(&(i as u32)))
                                .and_then(|f| {
                                    let x = f.map(|k| this.mesh.x[k as usize]);
                                    let u = f.map(|k| this.mesh.u[k as usize]);
                                    deformation_gradient(&x, &u)
                                })
                                .and_then(|(g, _)| material_direction(&g, tangent))
                                .unwrap_or([0.0, 0.0]),
                        }
                    }
                };
                let site = Site {
                    feature,
                    flat,
                    along,
                    vertex_normal: vn,
                    v_o: this.obstacles().velocity_of(&feature, this.mesh.x[i], h),
                };
                let r0 = rows.inequality_count();
                match this.conformal {
                    Conformal::Eol => rows.eol_vertex(dofs, i, &site),
                    Conformal::LagrangianAveraged => rows.conformal_vertex(dofs, i, &site, false),
                    Conformal::LagrangianCone => rows.conformal_vertex(dofs, i, &site, true),
                }
                rows.set_friction_from(r0, this.obstacles().friction_of(&feature));
            }
            // Each box's turn over this step (its pose stays put until the step's end).
            let turns: Vec<Option<Mat3<f64>>> =
                this.boxes.iter().map(|b| b.turns().then(|| b.turn(h))).collect();
            let contacts = this.lagrangian_contacts(dofs, &mut rows, h, &turns, &edges);
            let cd_time = clock.elapsed().as_secs_f64();
            for pin in &this.pins {
                let Some(i) = this.vertex_of(pin.id) else {
                    continue;
                };
                let v = (pin.target + pin.velocity * h - this.mesh.x[i]) * (1.0 / h);
                for k in 0..3 {
                    let mut e = Vec3::zero();
                    e[k] = 1.0;
                    rows.vertex(dofs, i, false, e, v);
                }
            }
            let keys: Vec<(u32, u32)> = {
                let mut seen = std::collections::BTreeMap::new();
                rows.inequality_vertices()
                    .iter()
                    .map(|&v| {
                        let c = seen.entry(v).or_insert(0u32);
                        *c += 1;
                        (this.ids[v as usize], *c - 1)
                    })
                    .collect()
            };
            let spread = rows.take_spread();
            let rows_info: Vec<RowContact> = rows
                .inequality_vertices()
                .iter()
                .zip(rows.inequality_normals())
                .zip(rows.inequality_friction())
                .zip(spread)
                .map(|(((&v, &n), &mu), spread)| (v, n, mu, spread))
                .collect();
            let (a_eq, b_eq, a_in, b_in) = rows.build(n);
            Ok((a_eq, b_eq, a_in, b_in, keys, rows_info, contacts, turns, cd_time))
        };
        // The QP's structure analysis from M̃'s pattern and the rows (a
        // failed one is tried again by the solve).
        let analyse =
            |ws: &mut KktWorkspace, p_upper: &Csc, a_eq: &Csc, b_eq: &[f64], a_in: &Csc, b_in: &[f64]| {
                let q = vec![0.0; n];
                let _ = ws.analyse(&Qp {
                    p_upper,
                    q: &q,
                    a_eq,
                    b_eq,
                    a_in,
                    b_in,
                });
            };
        // The generalized velocities of the step's start, and the assembly
        // followed by the QP's M̃ = M − h²K and q = −f̃ (the QP terms), so
        // that they run in the assembly's arm: on a step whose rows changed
        // the other arm's structure analysis is the longer one (about 2 ms
        // longer on the edge rows), and the terms (0.3-0.7 ms) fit beside it.
        let mut qd = vec![0.0; n];
        for i in 0..this.mesh.x.len() {
            for k in 0..3 {
                qd[3 * i + k] = this.xd[i][k];
            }
            if let Some(u) = dofs.u(i) {
                qd[u] = this.ud[i][0];
                qd[u + 1] = this.ud[i][1];
            }
        }
        let assemble = |assembly: &mut AssemblyCache| {
            assemble_with(&this.mesh, &this.params, assembly, bend)
                .map(|sys| sys.qp_terms_with(h, &qd, assembly))
        };
        let (sys, cd) = if !analysed || assembly.is_for(&this.mesh) {
            // The mesh of the last step: M̃'s pattern is kept, and the
            // assembly and the QP terms run beside the collision detection,
            // the rows and the analysis.
            let p_upper = analysed.then(|| assembly.lhs_pattern());
            rayon::join(
                || assemble(&mut assembly),
                || {
                    let cd = cd_rows();
                    if let (Some(p), Ok(c)) = (&p_upper, &cd) {
                        analyse(&mut ws, p, &c.0, &c.1, &c.2, &c.3);
                    }
                    cd
                },
            )
        } else {
            // A new mesh (remeshed): its patterns beside the collision
            // detection and the rows, then the assembly beside the
            // analysis (on the FRICTION row the patterns take about as
            // long as CD and the rows, the analysis a little less than
            // the assembly).
            let ((), cd) = rayon::join(|| assembly.prepare(&this.mesh), cd_rows);
            let p_upper = assembly.lhs_pattern();
            let (sys, ()) = rayon::join(
                || assemble(&mut assembly),
                || {
                    if let Ok(c) = &cd {
                        analyse(&mut ws, &p_upper, &c.0, &c.1, &c.2, &c.3);
                    }
                },
            );
            (sys, cd)
        };
        let overlapped = clock.elapsed().as_secs_f64();
        self.assembly = assembly;
        self.kkt_ws = ws;
        let (a_eq, b_eq, a_in, b_in, keys, rows_info, contacts, turns, cd_time) = cd?;
        timings.cd = cd_time;
        let (lhs, q) = sys?;
        timings.mf += (overlapped - cd_time).max(0.0);
        let clock = std::time::Instant::now();
        let qp = Qp {
            p_upper: &lhs,
            q: &q,
            a_eq: &a_eq,
            b_eq: &b_eq,
            a_in: &a_in,
            b_in: &b_in,
        };
        let ws = &mut self.kkt_ws;
        let by_clarabel = |ws: &mut KktWorkspace| -> Result<_> {
            let ip = solve_clarabel(&qp, 1e-9)?;
            let raw = ip.v.clone();
            Ok((polish(&qp, &ip, ws).unwrap_or(ip), raw))
        };
        let factored = ws.factorizations;
        let fast = match self.qp {
            QpMethod::ActiveSet => {
                let guess = keys.iter().map(|k| self.active.contains(k)).collect();
                solve_active_set(&qp, guess, 12, ws, &mut self.qp_exact_solves)
            }
            QpMethod::Clarabel => None,
        };
        let clarabel = fast.is_none();
        let factorizations = (ws.factorizations - factored) as u32;
        let analyses = ws.analyses.saturating_sub(analysed_before) as u32;
        let (mut qp_gap, mut qp_gap_raw) = (0.0, 0.0);
        let (sol, check) = match fast {
            Some((s, check)) => {
                if self.verify_qp {
                    let (r, raw) = by_clarabel(ws)?;
                    let big = r.v.iter().fold(1e-12f64, |a, x| a.max(x.abs()));
                    let gap =
                        |w: &[f64]| s.v.iter().zip(w).fold(0.0f64, |a, (p, q)| a.max((p - q).abs())) / big;
                    qp_gap = gap(&r.v);
                    qp_gap_raw = gap(&raw);
                }
                (s, check)
            }
            None => {
                let s = by_clarabel(ws)?.0;
                let check = kkt(&qp, &s);
                (s, check)
            }
        };
        if !check.ok() {
            return Err(Error::Solver(format!(
                "the step's QP solution fails its KKT check (spec eol_cloth §10 test 10): {check:?}; \
                 use a smaller time step"
            )));
        }
        let mut report = StepReport {
            kkt: check,
            iterations: sol.iterations,
            factorizations,
            analyses,
            rows: (a_eq.rows, a_in.rows),
            contacts,
            remesh,
            adapt,
            timings,
            clarabel,
            qp_gap,
            qp_gap_raw,
            substeps: 1,
            wrinkle_events,
        };
        let v = &sol.v;
        let mut xd = self.xd.clone();
        let mut ud = self.ud.clone();
        for i in 0..self.mesh.x.len() {
            xd[i] = Vec3::new(v[3 * i], v[3 * i + 1], v[3 * i + 2]);
            if let Some(u) = dofs.u(i) {
                ud[i] = [v[u], v[u + 1]];
            }
        }
        if rows_info.iter().any(|r| r.2 > 0.0) {
            self.apply_friction(&rows_info, &sol.mu, &mut xd, &mut ud);
        }
        // Step 11: x += h ẋ for every vertex, X += h Ẋ for EOL vertices.
        let mut u_new = self.mesh.u.clone();
        for i in 0..self.mesh.x.len() {
            if dofs.u(i).is_some() {
                u_new[i] = [u_new[i][0] + h * ud[i][0], u_new[i][1] + h * ud[i][1]];
            }
        }
        // Refuse an update that folds a face over in material space (the
        // state stays as it was).
        for (t, f) in self.mesh.faces.iter().enumerate() {
            let signed = 2.0 * signed_area(&f.map(|k| u_new[k as usize]));
            if signed.is_nan() || signed <= 2e-14 {
                self.quarantine.1 = f
                    .iter()
                    .filter(|&&k| self.mesh.eol[k as usize])
                    .map(|&k| self.ids[k as usize])
                    .collect();
                return Err(Error::Solver(format!(
                    "face {t} would turn over or vanish in material space: an EOL vertex slid past a \
                     neighbour the remesher had not collapsed; use a smaller time step"
                )));
            }
        }
        if let Some(i) = (0..xd.len()).find(|&i| {
            let x = self.mesh.x[i] + xd[i] * h;
            !(x.is_finite() && xd[i].norm() < 1e6)
        }) {
            return Err(Error::Diverged {
                step: 0,
                time: 0.0,
                what: format!("vertex {i}'s velocity became {:?} m/s", xd[i]),
            });
        }
        // On a turning box an EOL vertex's motion relative to the box,
        // `h(ẋ − v_o)`, is turned with it: `x ← E'x + ΔR·h(ẋ − v_o)` with
        // `E'x = x + h v_o` (v_o the finite-difference velocity, §4.2). Its
        // rows bound that relative motion along the box's normals at the
        // start of the step, so turned it keeps the same relation to the
        // turned normals, and a vertex sliding along an edge stays on the
        // turned edge exactly ([D]: `x + hẋ` would leave it by
        // h²|ẋ_t|·|ω| per step, which builds up; the difference is second
        // order in h).
        for (i, (x, v)) in self.mesh.x.iter_mut().zip(&xd).enumerate() {
            let on_turning = self.features[i]
                .filter(|_| self.mesh.eol[i])
                .filter(|f| matches!(f, Feature::Edge { .. } | Feature::Corner { .. }))
                .and_then(|f| Some((f.obstacle() as usize, turns.get(f.obstacle() as usize).copied()??)));
            match on_turning {
                Some((k, turn)) => {
                    let v_o = self.boxes[k].velocity_turning(*x, h, &turn);
                    *x += v_o * h + turn * ((*v - v_o) * h);
                }
                None => *x += *v * h,
            }
        }
        self.xd = xd;
        self.ud = ud;
        self.mesh.u = u_new;
        for pin in &mut self.pins {
            pin.target += pin.velocity * h;
        }
        // The obstacles move on (§4.2: boxes translate and turn, wires and
        // points translate); the features on a turned box are its turned
        // edges and corners.
        for b in &mut self.boxes {
            b.advance(h);
        }
        for (k, turn) in turns.iter().enumerate() {
            if let Some(turn) = turn {
                self.follow_turned_box(k, turn);
            }
        }
        for w in &mut self.wires {
            w.ends = w.ends.map(|e| e + w.velocity * h);
        }
        for p in &mut self.points {
            p.position += p.velocity * h;
        }
        self.active = keys
            .iter()
            .zip(&sol.mu)
            .filter(|(_, m)| **m > 0.0)
            .map(|(k, _)| *k)
            .collect();
        self.time += h;
        report.timings.vi = clock.elapsed().as_secs_f64();
        Ok(report)
    }
}

#[cfg(test)]
#[path = "step_tests.rs"]
mod tests;
