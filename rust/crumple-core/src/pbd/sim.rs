//! The convenience `Simulation` of the shape-matching method: bodies from
//! closed meshes (spec shape_matching §2.4), colliders, kinematic pins,
//! stepping with rollback of a diverged step, exact `advance`, and read-outs.

use super::clusters::{NewCluster, initial_clusters, push_cluster, refresh_all};
use super::grid::Grid;
use super::material::Material;
use super::model::{Body, Model};
use super::params::StepParams;
use super::skin;
use super::solver::{Solver, StepStats};
use super::state::{State, Surface, flag};
use crate::collide::Collider;
use crate::error::{Error, Result};
use crate::geometry::{MeshInside, Region, TriMesh, sample_lattice, split_long_edges};
use crate::invalid;
use crate::math::{Quat, Vec3};

/// A shape-matching simulation.
///
/// On the GPU backend ([`Simulation::use_gpu`]) the state lives on the
/// device between steps: call [`Simulation::sync`] before reading `state`
/// after stepping (the Python binding does after every `step`/`advance`),
/// and the mutators here bring it back themselves.
#[derive(Debug)]
pub struct Simulation {
    /// Settings and bodies.
    pub model: Model,
    /// The state.
    pub state: State,
    /// Kinematic colliders (advanced to the end of each step before it runs).
    pub colliders: Vec<Collider>,
    solver: Solver,
    backup: Rollback,
    last: StepStats,
    gpu: Option<Box<super::gpu::GpuSolver>>,
}

impl Simulation {
    /// An empty simulation with these settings.
    pub fn new(params: StepParams) -> Result<Self> {
        params.validate()?;
        Ok(Self {
            model: Model {
                params,
                bodies: Vec::new(),
            },
            state: State::default(),
            colliders: Vec::new(),
            solver: Solver::default(),
            backup: Rollback::default(),
            last: StepStats::default(),
            gpu: None,
        })
    }

    /// Runs the following steps on the GPU of `ctx` (spec §14), or back on
    /// the CPU with `None` (the state is read back first).
    pub fn use_gpu(&mut self, ctx: Option<&std::sync::Arc<crate::gpu::GpuContext>>) -> Result<()> {
        self.sync()?;
        self.gpu = match ctx {
            Some(c) => Some(Box::new(super::gpu::GpuSolver::new(c)?)),
            None => None,
        };
        Ok(())
    }

    /// The GPU adapter's name, or `None` on the CPU backend.
    pub fn gpu_adapter(&self) -> Option<&str> {
        self.gpu.as_ref().map(|g| g.adapter_name())
    }

    /// Brings `state` up to date with the device (a no-op on the CPU or
    /// when nothing ran since the last sync).
    pub fn sync(&mut self) -> Result<()> {
        if let Some(g) = &mut self.gpu {
            g.sync(&mut self.state, &self.model)?;
        }
        Ok(())
    }

    /// The state for changing it from the host: synced, and uploaded again
    /// before the next GPU step.
    pub fn state_mut(&mut self) -> Result<&mut State> {
        self.sync()?;
        if let Some(g) = &mut self.gpu {
            g.host_changed();
        }
        Ok(&mut self.state)
    }

    /// Replaces the settings (checked first).
    pub fn set_params(&mut self, params: StepParams) -> Result<()> {
        params.validate()?;
        self.state_mut()?;
        self.model.params = params;
        Ok(())
    }

    /// Adds a body: the closed mesh's inside sampled on a lattice of the
    /// spacing (spec §2.4 step 2), clusters made (step 4), the mesh bound to
    /// the particles as its surface (step 5). Returns the body index.
    ///
    /// Errors: an open or non-manifold mesh ([`Error::Mesh`]), a body that
    /// holds no lattice point (spacing larger than the body), a bad material.
    pub fn add_body(&mut self, mesh: &TriMesh, material: Material, velocity: Vec3<f64>) -> Result<usize> {
        self.add_body_with(mesh, material, velocity, None, None)
    }

    /// [`Self::add_body`] with the particles (m) and/or the clusters (lists
    /// of indices into the particles) given instead of made: for a lattice
    /// and cluster layout of one's own (a benchmark scene, a dataset's
    /// fixed sampling). Given particles need not lie on the spacing's
    /// lattice, but the spacing stays their contact distance and the unit of
    /// re-sampling. Given clusters are used as they are (no creation rounds).
    ///
    /// Errors as [`Self::add_body`], and: non-finite or fewer than 4
    /// particles, a cluster with an index out of range, a repeated member or
    /// fewer than 2 members, or a particle in no cluster.
    pub fn add_body_with(
        &mut self,
        mesh: &TriMesh,
        material: Material,
        velocity: Vec3<f64>,
        particles: Option<&[Vec3<f64>]>,
        clusters: Option<&[Vec<u32>]>,
    ) -> Result<usize> {
        self.state_mut()?;
        material.validate()?;
        crate::validate::finite_vec("velocity", velocity)?;
        let inside = MeshInside::new(mesh)?;
        let r = self.model.params.spacing;
        // Spec §2.4 step 1: a surface fine enough to follow the particles
        // (refined before anything is added, so an error leaves no trace).
        let max_edge = self.model.params.max_edge;
        let refined;
        let surface_mesh = if max_edge.is_finite() {
            refined = split_long_edges(mesh, max_edge * r)?;
            &refined
        } else {
            mesh
        };
        let points = match particles {
            Some(p) => {
                crate::validate::all_finite("particles", p)?;
                p.to_vec()
            }
            None => sample_lattice(&Region::Mesh(&inside), r)?,
        };
        if points.len() < 4 {
            let (lo, hi) = mesh.bounds();
            return invalid!(
                "the body holds {} lattice points at spacing {r} m (its box is {:.3e} × {:.3e} × {:.3e} m); \
                 use a spacing several times smaller than the body",
                points.len(),
                hi.x - lo.x,
                hi.y - lo.y,
                hi.z - lo.z
            );
        }
        if let Some(cl) = clusters {
            check_clusters(cl, points.len())?;
        }
        let b = self.model.bodies.len() as u32;
        let m = (material.density * r * r * r) as f32;
        let v = velocity.cast::<f32>();
        let first = self.state.particles.len();
        for p in &points {
            self.state
                .particles
                .push(p.cast::<f32>(), v, m, b, 0, Quat::identity(), 0);
        }
        let p = self.model.params;
        let rf = r as f32;
        let yield_strain = material.yield_strain as f32;
        match clusters {
            Some(cl) => {
                let pt = &self.state.particles;
                for members in cl {
                    let global: Vec<u32> = members.iter().map(|&k| k + first as u32).collect();
                    // Rest positions are the members' offsets from their mass
                    // centre; the refresh below centres them with the weights.
                    let c = global.iter().fold(Vec3::zero(), |a, &i| a + pt.x[i as usize])
                        * (1.0 / global.len() as f32);
                    let rest = global.iter().map(|&i| pt.x[i as usize] - c).collect();
                    push_cluster(
                        &mut self.state.clusters,
                        pt,
                        NewCluster {
                            members: global,
                            rest,
                            yield_strain,
                            body: b,
                            component: 0,
                        },
                        p.rotation_iterations[2],
                    );
                }
                refresh_all(
                    &mut self.state.clusters,
                    &self.state.particles,
                    &mut self.state.memberships,
                    p.weights,
                );
            }
            None => initial_clusters(
                &mut self.state.particles,
                &mut self.state.clusters,
                &mut self.state.memberships,
                p.min_clusters,
                (p.cluster_spacing * r) as f32,
                (p.cluster_radius * r) as f32,
                p.seed,
                p.weights,
                p.rotation_iterations[2],
                first,
                |_| yield_strain,
            ),
        }
        let mut surface = Surface {
            y: surface_mesh.vertices().iter().map(|v| v.cast::<f32>()).collect(),
            faces: surface_mesh.faces().to_vec(),
            volume_target: inside.volume(),
            ..Surface::default()
        };
        skin::bind_all(&mut surface, &self.state.particles, b, rf, &mut Grid::default());
        skin::normals(&mut surface);
        self.state.surfaces.push(surface);
        self.model.bodies.push(Body {
            material,
            particle_mass: m,
            mass: f64::from(m) * (self.state.particles.len() - first) as f64,
        });
        Ok(b as usize)
    }

    /// Global indices of body `b`'s particles, ascending.
    pub fn body_particles(&self, b: usize) -> Vec<usize> {
        (0..self.state.particles.len())
            .filter(|&i| self.state.particles.body[i] as usize == b)
            .collect()
    }

    /// Body `b`'s pinned particles in its numbering now, ascending.
    /// Re-sampling renumbers particles but never deletes or reorders pinned
    /// ones (seeded particles are appended and dynamic), so this list
    /// addresses the same particles in the same order from step to step.
    pub fn pinned(&self, b: usize) -> Vec<u32> {
        let pt = &self.state.particles;
        self.body_particles(b)
            .into_iter()
            .enumerate()
            .filter(|(_, i)| pt.flags[*i] & flag::KINEMATIC != 0)
            .map(|(k, _)| k as u32)
            .collect()
    }

    fn check_body(&self, b: usize) -> Result<()> {
        if b >= self.model.bodies.len() {
            return invalid!("no body {b}; {} bodies exist", self.model.bodies.len());
        }
        Ok(())
    }

    /// Makes body `b`'s particles `local` (indices in the body's numbering,
    /// see [`Self::body_particles`]) kinematic, holding at `targets` (m; their
    /// current positions when `None`). Kinematic particles are never deleted
    /// by re-sampling.
    pub fn pin(&mut self, b: usize, local: &[u32], targets: Option<&[Vec3<f64>]>) -> Result<()> {
        self.check_body(b)?;
        self.state_mut()?;
        let ids = self.body_particles(b);
        if let Some(t) = targets {
            if t.len() != local.len() {
                return invalid!("pin: {} targets for {} particles", t.len(), local.len());
            }
            crate::validate::all_finite("pin targets", t)?;
        }
        for &k in local {
            if k as usize >= ids.len() {
                return invalid!(
                    "particle index {k} is out of range: the body has {} particles",
                    ids.len()
                );
            }
        }
        let pt = &mut self.state.particles;
        for (n, &k) in local.iter().enumerate() {
            let i = ids[k as usize];
            pt.flags[i] |= flag::KINEMATIC;
            pt.w[i] = 0.0;
            pt.target[i] = targets.map_or(pt.x[i], |t| t[n].cast::<f32>());
        }
        Ok(())
    }

    /// Moves pinned particles' targets (positions at the end of the next step).
    pub fn set_pin_targets(&mut self, b: usize, local: &[u32], targets: &[Vec3<f64>]) -> Result<()> {
        self.check_body(b)?;
        if targets.len() != local.len() {
            return invalid!(
                "set_pin_targets: {} targets for {} particles",
                targets.len(),
                local.len()
            );
        }
        crate::validate::all_finite("pin targets", targets)?;
        let ids = self.body_particles(b);
        for &k in local {
            let Some(&i) = ids.get(k as usize) else {
                return invalid!(
                    "particle index {k} is out of range: the body has {} particles",
                    ids.len()
                );
            };
            if self.state.particles.flags[i] & flag::KINEMATIC == 0 {
                return invalid!("particle {k} of body {b} is not pinned; pin it first");
            }
        }
        // Only the targets change, and the device never changes them (nor
        // the flags and bodies read above): no read-back, and the next GPU
        // step uploads the targets alone.
        for (n, &k) in local.iter().enumerate() {
            self.state.particles.target[ids[k as usize]] = targets[n].cast::<f32>();
        }
        if let Some(g) = &mut self.gpu {
            g.targets_changed();
        }
        Ok(())
    }

    /// Makes pinned particles of body `b` dynamic again (all of them when `local` is `None`).
    pub fn release(&mut self, b: usize, local: Option<&[u32]>) -> Result<()> {
        self.check_body(b)?;
        self.state_mut()?;
        let ids = self.body_particles(b);
        let chosen: Vec<usize> = match local {
            None => ids,
            Some(l) => {
                let mut v = Vec::with_capacity(l.len());
                for &k in l {
                    let Some(&i) = ids.get(k as usize) else {
                        return invalid!(
                            "particle index {k} is out of range: the body has {} particles",
                            ids.len()
                        );
                    };
                    v.push(i);
                }
                v
            }
        };
        let pt = &mut self.state.particles;
        for i in chosen {
            if pt.flags[i] & flag::KINEMATIC != 0 {
                pt.flags[i] &= !flag::KINEMATIC;
                pt.w[i] = 1.0 / pt.m[i];
            }
        }
        Ok(())
    }

    /// The user cut of spec §7 (surface level 2): body `b`'s surface loses
    /// every triangle crossing the plane through `point` (m) with normal
    /// `normal`, each side's hole is capped, and the particles on the
    /// normal's side are told apart from the others, so the next re-sampling
    /// pass removes the clusters spanning the cut and the two pieces move
    /// apart as separate components. Returns the surface's components.
    ///
    /// Errors: surface level below 2, a non-finite point or a zero normal.
    pub fn cut(&mut self, b: usize, point: Vec3<f64>, normal: Vec3<f64>) -> Result<u32> {
        self.check_body(b)?;
        if self.model.params.surface_level < 2 {
            return invalid!(
                "cut needs surface_level=2 (components); this simulation has surface_level={}",
                self.model.params.surface_level
            );
        }
        let p = crate::validate::finite_vec("cut point", point)?.cast::<f32>();
        let n = crate::validate::direction("cut normal", normal)?.cast::<f32>();
        let state = self.state_mut()?;
        let pt = &mut state.particles;
        let above = |x: Vec3<f32>| (x - p).dot(n) >= 0.0;
        let s = &mut state.surfaces[b];
        // Vertices bound across the plane rebind on their own side (spec §8.3).
        for (y, k) in s.y.iter().zip(s.skin.iter_mut()) {
            let side = above(*y);
            if (0..4).any(|a| {
                k.weight[a] > 0.0
                    && (k.particle[a] as usize) < pt.len()
                    && above(pt.x[k.particle[a] as usize]) != side
            }) {
                *k = Default::default();
            }
        }
        let stats = super::topology::cut(s, p, n);
        skin::normals(s);
        // The two sides' particles carry different labels from now on (the
        // high bit flipped), which the next labelling pass does not bridge.
        for i in 0..pt.len() {
            if pt.body[i] as usize == b && above(pt.x[i]) {
                pt.component[i] ^= 0x8000_0000;
            }
        }
        Ok(stats.components)
    }

    /// One step of `dt` (s; default the configured one). On divergence the
    /// state and colliders are put back to the start of the step and
    /// [`Error::Diverged`] says which step and time.
    pub fn step_dt(&mut self, dt: Option<f64>) -> Result<StepStats> {
        let dt = dt.unwrap_or(self.model.params.dt);
        if !(dt.is_finite() && dt > 0.0) {
            return invalid!("dt must be a positive number of seconds, got {dt}");
        }
        let on_gpu = self.gpu.is_some();
        // The device keeps its own start-of-step copy (`gpu/backend.rs`).
        if !on_gpu {
            self.backup.save(&self.state);
        }
        // On failure the colliders go back to their poses at the start of
        // the step: a pure function of time (scripted ones keep theirs), so
        // nothing needs copying every step.
        let t0 = self.state.time;
        let t1 = t0 + dt;
        let times0 = self.solver.times;
        for c in &mut self.colliders {
            c.advance_to(t1)?;
        }
        let result = match &mut self.gpu {
            Some(g) => g.step(
                &mut self.state,
                &self.model,
                &self.colliders,
                dt,
                &mut self.solver,
            ),
            // The whole step on one of rayon's workers: its ~17 parallel
            // loops then fork and join inside the pool instead of each
            // being injected from the caller's thread, which sleeps until
            // a woken worker finishes it (the SM-block's 13.8K-particle
            // step spent ~15 % of its time in those wake-ups). Same loops,
            // same chunks: the same bits. The step's serial code then runs
            // on a worker's stack (rayon's default, 2 MiB): nothing in it
            // recurses deeper than a few levels.
            None => {
                let (solver, state) = (&mut self.solver, &mut self.state);
                let (model, colliders) = (&self.model, &self.colliders);
                rayon::scope(|_| solver.step(state, model, colliders, dt))
            }
        };
        match result {
            Ok(mut s) => {
                s.times = self.solver.times.since(&times0);
                self.last = s;
                Ok(s)
            }
            Err(Error::Diverged { what, .. }) => {
                let (step, time) = (self.state.step, self.state.time);
                if !on_gpu {
                    self.backup.restore(&mut self.state);
                }
                self.colliders_to(t0)?;
                Err(Error::Diverged { step, time, what })
            }
            Err(e) => {
                if !on_gpu {
                    self.backup.restore(&mut self.state);
                }
                self.colliders_to(t0)?;
                Err(e)
            }
        }
    }

    fn colliders_to(&mut self, t: f64) -> Result<()> {
        for c in &mut self.colliders {
            c.advance_to(t)?;
        }
        Ok(())
    }

    /// Advances by `duration` s in steps of the configured `dt`, the last one
    /// shortened to land exactly on `time + duration` (a remainder below
    /// 1e-6 dt joins the step before it); `stop()` is asked before every
    /// step. Returns the steps taken and whether `stop()` ended it early.
    pub fn advance_with(&mut self, duration: f64, mut stop: impl FnMut() -> bool) -> Result<(u64, bool)> {
        if !(duration.is_finite() && duration >= 0.0) {
            return invalid!("advance: duration must be a finite number of seconds ≥ 0, got {duration}");
        }
        let dt = self.model.params.dt;
        let end = self.state.time + duration;
        let mut steps = 0;
        while let Some(h) = crate::stepping::next_fixed_step(self.state.time, end, dt) {
            if stop() {
                return Ok((steps, true));
            }
            self.step_dt(Some(h))?;
            steps += 1;
        }
        self.state.time = end;
        Ok((steps, false))
    }

    /// Seconds per re-sampling phase since the start.
    pub fn resample_times(&self) -> super::resample::ResampleTimes {
        self.solver.resample_times()
    }

    /// The end-of-step snapshot of the last step (spec §6.1).
    #[cfg(test)]
    pub(crate) fn snapshot(&self) -> &super::plasticity::Snapshot {
        &self.solver.snapshot
    }

    /// The last step's counters.
    pub fn last_stats(&self) -> StepStats {
        self.last
    }

    /// Stage timings since the start.
    pub fn stage_times(&self) -> super::solver::StageTimes {
        self.solver.times
    }

    /// Number of clusters of body `b`.
    pub fn num_clusters(&self, b: usize) -> usize {
        self.state
            .clusters
            .body
            .iter()
            .filter(|&&x| x as usize == b)
            .count()
    }

    /// Σ ½ m |v|², J.
    pub fn kinetic_energy(&self) -> f64 {
        let p = &self.state.particles;
        (0..p.len())
            .map(|i| 0.5 * f64::from(p.m[i]) * f64::from(p.v[i].norm_squared()))
            .sum()
    }

    /// Σ m v, kg·m/s (summed in index order).
    pub fn total_momentum(&self) -> Vec3<f64> {
        let p = &self.state.particles;
        let mut s = Vec3::zero();
        for i in 0..p.len() {
            s += p.v[i].cast::<f64>() * f64::from(p.m[i]);
        }
        s
    }
}

/// Given clusters must index `n` particles, each at most once per cluster,
/// with at least 2 members, and cover every particle.
fn check_clusters(clusters: &[Vec<u32>], n: usize) -> Result<()> {
    if clusters.is_empty() {
        return invalid!("clusters: give at least one cluster (or None to have them made)");
    }
    let mut covered = vec![false; n];
    let mut seen = vec![usize::MAX; n];
    for (c, members) in clusters.iter().enumerate() {
        if members.len() < 2 {
            return invalid!(
                "cluster {c} has {} members; a cluster needs at least 2 (4 to hold a shape)",
                members.len()
            );
        }
        for &k in members {
            let Some(s) = seen.get_mut(k as usize) else {
                return invalid!("cluster {c} names particle {k}, but the body has {n} particles");
            };
            if *s == c {
                return invalid!("cluster {c} names particle {k} twice");
            }
            *s = c;
            covered[k as usize] = true;
        }
    }
    if let Some(k) = covered.iter().position(|c| !c) {
        return invalid!("particle {k} is in no cluster; every particle needs one (it would fall freely)");
    }
    Ok(())
}

/// What a failed step must put back. The solver checks for divergence right
/// after the PBD loop (spec §9 step 7), before plasticity, skinning and
/// re-sampling touch anything, and nothing after that check can fail; up to
/// it only positions, velocities and the clusters' warm-started rotations
/// change. So those three are saved (not the whole state: a copy of every
/// cluster's rest shape each step would cost more than the step's own
/// goal pass at 10⁵ memberships).
#[derive(Clone, Debug, Default)]
struct Rollback {
    x: Vec<Vec3<f32>>,
    v: Vec<Vec3<f32>>,
    quat: Vec<Quat<f32>>,
}

impl Rollback {
    fn save(&mut self, s: &State) {
        self.x.clone_from(&s.particles.x);
        self.v.clone_from(&s.particles.v);
        self.quat.clone_from(&s.clusters.quat);
    }

    fn restore(&self, s: &mut State) {
        s.particles.x.clone_from(&self.x);
        s.particles.v.clone_from(&self.v);
        s.clusters.quat.clone_from(&self.quat);
    }
}
