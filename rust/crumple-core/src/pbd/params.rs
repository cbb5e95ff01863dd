//! Step settings of the shape-matching solver (spec shape_matching §1.3,
//! §10.1): the PBD loop, contacts and friction, the cluster geometry and the
//! re-sampling switches. The paper gives none of the loop's values; the
//! defaults are the spec's [R] choices. Distances are multiples of the
//! particle spacing `r`, so a scene can be rescaled by changing `spacing`.

use crate::math::Vec3;
use crate::validate::{finite_vec, non_negative, positive};
use crate::{Result, invalid};

/// Mass weights μ of the cluster sums (spec §3.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Weights {
    /// μ = m_i / n_i: every shape-matching pass conserves linear momentum
    /// exactly under Jacobi averaging (the default, [R]).
    #[default]
    Split,
    /// μ = m_i: the paper as written.
    Particle,
}

/// Which matrix a cluster's rotation is extracted from (spec §3.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RotationFit {
    /// The polar factor of A_pq (Müller et al. 2005): torque-free, no inverse
    /// in the solver loop (the default, [R]).
    #[default]
    Rigid,
    /// The polar factor of A_pq A_qq⁻¹ (the paper's text); degenerate
    /// clusters fall back to `Rigid`.
    Linear,
}

/// Step settings; every field has its unit and the spec's default.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepParams {
    /// Time step, s (1/60).
    pub dt: f64,
    /// Sub-steps per step (1): the PBD loop runs with dt/substeps; re-sampling once per step.
    pub substeps: u32,
    /// Solver iterations per (sub)step (4).
    pub iterations: u32,
    /// Over-relaxation ω of the Jacobi averages (1.0).
    pub sor: f64,
    /// Gravity, m/s² ((0, −9.81, 0)).
    pub gravity: Vec3<f64>,
    /// Particle spacing r, m (0.1): lattice spacing, contact distance between
    /// bodies, and the unit of every distance below.
    pub spacing: f64,
    /// Velocity damping: fraction of the velocity removed per second (0).
    pub damping: f64,
    /// Largest particle speed, m/s (∞).
    pub max_speed: f64,
    /// Particle–world contact offset d_pw, in r (0.5).
    pub world_distance: f64,
    /// Contact search margin δ_m, in r (0.5).
    pub contact_margin: f64,
    /// Static/kinetic particle–particle friction (0.3 / 0.2).
    pub particle_static_friction: f64,
    /// Kinetic particle–particle friction.
    pub particle_kinetic_friction: f64,
    /// Static over kinetic friction against colliders (1.2 = the spec's
    /// 0.6/0.5): a collider's `friction` is the kinetic coefficient.
    pub static_friction_ratio: f64,
    /// Most stored contact neighbours per particle (64).
    pub max_neighbors: u32,
    /// Cluster weights (split).
    pub weights: Weights,
    /// Rotation fit (rigid).
    pub rotation_fit: RotationFit,
    /// Müller iterations per solver iteration (3), at the end of the step (20)
    /// and for a new cluster (30).
    pub rotation_iterations: [u32; 3],
    /// Particle and cluster re-sampling (spec §5–§6); off = the §4.8 baseline
    /// with each material's `plastic_cap`.
    pub resampling: bool,
    /// Cluster-seed spacing r^G, in r (3).
    pub cluster_spacing: f64,
    /// Cluster radius r^C, in r (4).
    pub cluster_radius: f64,
    /// M_min: fewest clusters per particle before a new cluster is made (3).
    pub min_clusters: u32,
    /// M_max: a cluster whose every member is in more than this many others is redundant (10).
    pub max_clusters: u32,
    /// Deletion distance η, in spacings (0.1, the paper's): the lower index
    /// of a same-component pair closer than η r dies (spec §5.1 a). At most 1.
    pub deletion_distance: f64,
    /// Seeding exclusion, in spacings (1, the paper's): a candidate must be
    /// farther than this from every particle (spec §5.2 i). In [1, 2): the
    /// candidates lie in the shell r..2r around their source.
    ///
    /// With the paper's pair (0.1, 1) a body pulled along one axis doubles
    /// its particle density: a stretched cell's centre clears r before its
    /// sides have thinned, and the sideways spacing, which the pull shrinks
    /// to r/√stretch, never reaches 0.1 r (measured 2.12× at a 5× pull of
    /// the 40r × 4r × 4r taffy bar, spec X7). (0.5, 1.35) keeps it within
    /// 1.19× there and 1.10× on a bar twice as thick; `pbd_taffy` uses it.
    pub seed_distance: f64,
    /// Seed of the counter-based random numbers of re-sampling.
    pub seed: u64,
    /// Rescale masses and shift velocities after re-sampling so each body's
    /// mass and linear momentum are unchanged (spec §5.3; off = the paper).
    pub conserve_mass_momentum: bool,
    /// Surface tracking level (spec §8.6): 0 = fixed connectivity (the
    /// default), 1 = the mesh is improved every step without topology
    /// change (edges split above MaxE, collapsed below MaxE/10, flipped to
    /// raise the minimum angle; `pbd::remesh`), 2 = level 1, and the
    /// surface tears where no particle supports it and can be cut, its
    /// pieces become components that clusters never span (spec §7). Levels
    /// 1 and 2 need re-sampling (which rebinds the new vertices).
    pub surface_level: u32,
    /// Longest surface edge, in spacings (spec §2.4 step 1, MaxE): `add_body`
    /// splits longer edges of the input mesh at their midpoints, so the
    /// skinned surface has vertices wherever the body can bend or stretch
    /// (a coarse mesh would stay a rigid shell around the particles, and
    /// those that leave it are deleted by §5.1 b); surface levels 1 and 2
    /// keep every edge at most this long. `inf` keeps the input (level 0
    /// only).
    /// Default 2: a vertex every two spacings follows clusters three apart,
    /// and a lattice-fine mesh (diagonals √2 r) is left as it is.
    pub max_edge: f64,
}

impl Default for StepParams {
    fn default() -> Self {
        Self {
            dt: 1.0 / 60.0,
            substeps: 1,
            iterations: 4,
            sor: 1.0,
            gravity: Vec3::new(0.0, -9.81, 0.0),
            spacing: 0.1,
            damping: 0.0,
            max_speed: f64::INFINITY,
            world_distance: 0.5,
            contact_margin: 0.5,
            particle_static_friction: 0.3,
            particle_kinetic_friction: 0.2,
            static_friction_ratio: 1.2,
            max_neighbors: 64,
            weights: Weights::Split,
            rotation_fit: RotationFit::Rigid,
            rotation_iterations: [3, 20, 30],
            resampling: true,
            cluster_spacing: 3.0,
            cluster_radius: 4.0,
            min_clusters: 3,
            max_clusters: 10,
            deletion_distance: 0.1,
            seed_distance: 1.0,
            seed: 0x5eed_c1a5_7e25,
            conserve_mass_momentum: false,
            surface_level: 0,
            max_edge: 2.0,
        }
    }
}

impl StepParams {
    /// Checks every field; messages use the Python names.
    // NaN must take the refusing branch of every `!(a > b)` below.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    pub fn validate(&self) -> Result<()> {
        positive("dt (s)", self.dt)?;
        if self.surface_level > 2 {
            return invalid!(
                "surface_level must be 0 (fixed connectivity), 1 (remeshing without topology change) or 2 \
                 (remeshing, tearing, cuts, components); got {}",
                self.surface_level
            );
        }
        if self.surface_level >= 1 && !self.max_edge.is_finite() {
            return invalid!(
                "surface_level={} keeps every surface edge at most max_edge spacings long: give a finite \
                 max_edge (2 is the default), not {}",
                self.surface_level,
                self.max_edge
            );
        }
        if self.surface_level >= 1 && !self.resampling {
            return invalid!(
                "surface_level={} needs resampling=True: re-sampling binds the new surface vertices \
                 (and keeps the components at level 2)",
                self.surface_level
            );
        }
        if self.substeps == 0 || self.iterations == 0 {
            return invalid!("substeps and iterations must be ≥ 1");
        }
        if !(self.sor.is_finite() && self.sor > 0.0 && self.sor < 2.0) {
            return invalid!("sor (over-relaxation) must be in (0, 2), got {}", self.sor);
        }
        finite_vec("gravity", self.gravity)?;
        positive("spacing (m)", self.spacing)?;
        if !(self.max_edge > 0.0) {
            return invalid!(
                "max_edge must be > 0 spacings (inf keeps the input mesh), got {}",
                self.max_edge
            );
        }
        non_negative("damping (1/s)", self.damping)?;
        if !(self.max_speed > 0.0) {
            return invalid!("max_speed must be > 0 m/s (inf for none), got {}", self.max_speed);
        }
        non_negative("world_distance (in spacings)", self.world_distance)?;
        non_negative("contact_margin (in spacings)", self.contact_margin)?;
        non_negative("particle_kinetic_friction", self.particle_kinetic_friction)?;
        if !(self.particle_static_friction >= self.particle_kinetic_friction) {
            return invalid!(
                "particle_static_friction ({}) must be ≥ particle_kinetic_friction ({})",
                self.particle_static_friction,
                self.particle_kinetic_friction
            );
        }
        if !(self.static_friction_ratio >= 1.0 && self.static_friction_ratio.is_finite()) {
            return invalid!(
                "static_friction_ratio must be ≥ 1, got {}",
                self.static_friction_ratio
            );
        }
        if self.max_neighbors == 0 {
            return invalid!("max_neighbors must be ≥ 1");
        }
        if !(self.cluster_radius > 1.0 && self.cluster_radius.is_finite()) {
            return invalid!(
                "cluster_radius must exceed 1 spacing, got {}",
                self.cluster_radius
            );
        }
        positive("cluster_spacing (in spacings)", self.cluster_spacing)?;
        if self.min_clusters == 0 || self.max_clusters < self.min_clusters {
            return invalid!(
                "need 1 ≤ min_clusters ≤ max_clusters, got {} and {}",
                self.min_clusters,
                self.max_clusters
            );
        }
        if !(self.deletion_distance >= 0.0 && self.deletion_distance <= 1.0) {
            return invalid!(
                "deletion_distance must lie in [0, 1] spacings, got {}",
                self.deletion_distance
            );
        }
        if !(self.seed_distance >= 1.0 && self.seed_distance < 2.0) {
            return invalid!(
                "seed_distance must lie in [1, 2) spacings (candidates are drawn 1 to 2 spacings from their source), got {}",
                self.seed_distance
            );
        }
        if !(self.deletion_distance < self.seed_distance) {
            return invalid!(
                "deletion_distance ({}) must be below seed_distance ({}), or seeded particles would be deleted at once",
                self.deletion_distance,
                self.seed_distance
            );
        }
        Ok(())
    }

    /// Particle–particle contact distance d_pp, m (= r).
    pub fn particle_distance(&self) -> f64 {
        self.spacing
    }
}

crate::named_enum!(Weights { "split" => Split, "particle" => Particle });
crate::named_enum!(RotationFit { "rigid" => Rigid, "linear" => Linear });

// The Python names of the settings (`crumple.pbd.Simulation(...)`), listed once.
crate::params!(StepParams, base = StepParams::default(), {
    "dt": f64 = dt,
    "substeps": int = substeps,
    "iterations": int = iterations,
    "sor": f64 = sor,
    "gravity": vec3 = gravity,
    "spacing": f64 = spacing,
    "damping": f64 = damping,
    "max_speed": f64 = max_speed,
    "world_distance": f64 = world_distance,
    "contact_margin": f64 = contact_margin,
    "particle_static_friction": f64 = particle_static_friction,
    "particle_kinetic_friction": f64 = particle_kinetic_friction,
    "static_friction_ratio": f64 = static_friction_ratio,
    "max_neighbors": int = max_neighbors,
    "weights": name<Weights> = weights,
    "rotation_fit": name<RotationFit> = rotation_fit,
    "resampling": bool = resampling,
    "cluster_spacing": f64 = cluster_spacing,
    "cluster_radius": f64 = cluster_radius,
    "min_clusters": int = min_clusters,
    "max_clusters": int = max_clusters,
    "deletion_distance": f64 = deletion_distance,
    "seed_distance": f64 = seed_distance,
    "seed": int = seed,
    "conserve_mass_momentum": bool = conserve_mass_momentum,
    "surface_level": int = surface_level,
    "max_edge": f64 = max_edge,
});
