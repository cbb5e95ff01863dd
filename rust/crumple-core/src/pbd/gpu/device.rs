//! The device copy of a shape-matching state: one buffer per array the
//! shaders read (named as they declare them), the upload from and download
//! to the host [`State`], and the per-step collider records.

use std::sync::Arc;

use crate::collide::{Collider, Shape};
use crate::error::{Error, Result};
use crate::gpu::colliders::{COLLIDER_WORDS, collider_sdf_words, collider_sdf_words_len, pack_collider};
use crate::gpu::{GpuBuffer, GpuContext};
use crate::math::{Mat3, Quat, Vec3};
use crate::pbd::model::Model;
use crate::pbd::shape_match::ClusterScratch;
use crate::pbd::state::State;

use super::{CL_STRIDE, FIT_STRIDE, stat};

type V4 = [f32; 4];

fn v4(v: Vec3<f32>, w: f32) -> V4 {
    [v.x, v.y, v.z, w]
}

fn q4(q: Quat<f32>) -> V4 {
    [q.w, q.x, q.y, q.z]
}

fn rows(m: &Mat3<f32>, w: [f32; 3]) -> [V4; 3] {
    [
        [m.m[0][0], m.m[0][1], m.m[0][2], w[0]],
        [m.m[1][0], m.m[1][1], m.m[1][2], w[1]],
        [m.m[2][0], m.m[2][1], m.m[2][2], w[2]],
    ]
}

/// `data` packed into `pack` (reused, so uploads do not allocate once warm) and uploaded to `buf`.
fn put4(buf: &mut GpuBuffer<V4>, pack: &mut Vec<V4>, data: impl Iterator<Item = V4>) -> Result<()> {
    pack.clear();
    pack.extend(data);
    buf.upload(pack)
}

fn from_rows(r: &[V4]) -> Mat3<f32> {
    Mat3::from_rows_array([
        [r[0][0], r[0][1], r[0][2]],
        [r[1][0], r[1][1], r[1][2]],
        [r[2][0], r[2][1], r[2][2]],
    ])
}

/// Device arrays of one simulation.
pub(super) struct Device {
    pub(super) ctx: Arc<GpuContext>,
    pub(super) x: GpuBuffer<V4>,
    pub(super) v: GpuBuffer<V4>,
    pub(super) xs: GpuBuffer<V4>,
    pub(super) xs_b: GpuBuffer<V4>,
    pub(super) target: GpuBuffer<V4>,
    pub(super) body: GpuBuffer<u32>,
    pub(super) keys: GpuBuffer<u32>,
    pub(super) vals: GpuBuffer<u32>,
    pub(super) neighbors: GpuBuffer<u32>,
    pub(super) ncount: GpuBuffer<u32>,
    pub(super) wmask: GpuBuffer<u32>,
    pub(super) cl_offset: GpuBuffer<u32>,
    pub(super) member: GpuBuffer<u32>,
    pub(super) rest_mu: GpuBuffer<V4>,
    pub(super) clusters: GpuBuffer<V4>,
    pub(super) quat: GpuBuffer<V4>,
    pub(super) fit: GpuBuffer<V4>,
    pub(super) m_offset: GpuBuffer<u32>,
    pub(super) m_rest: GpuBuffer<V4>,
    pub(super) m_cluster: GpuBuffer<u32>,
    pub(super) pq: GpuBuffer<V4>,
    pub(super) colliders: GpuBuffer<f32>,
    pub(super) collider_sdf: GpuBuffer<f32>,
    pub(super) stats: GpuBuffer<u32>,
    /// Where each step copies `stats` for the host to map (made once).
    pub(super) stats_read: wgpu::Buffer,
    pub(super) params: wgpu::Buffer,
    /// Start-of-step copies of what a diverged step changed: x, v, the
    /// cluster rotations, the cluster records (F_P, yield), the orientations.
    pub(super) backup: [GpuBuffer<V4>; 5],
    /// Mesh colliders' identities when their distance grids were uploaded.
    sdf_ids: Vec<usize>,
    /// Reused host scratch of the per-step collider records.
    recs: Vec<f32>,
    /// Reused host scratch of the vec4 arrays an upload packs.
    pack: Vec<V4>,
    /// Reused host scratch of the memberships' clusters in particle order.
    m_cluster_ids: Vec<u32>,
    /// The CPU loop's per-membership weights and particle-ordered copies.
    scratch: ClusterScratch,
    /// Any buffer was reallocated since the bind groups were made.
    pub(super) rebind: bool,
}

impl Device {
    pub(super) fn new(ctx: &Arc<GpuContext>) -> Result<Self> {
        let z4 = |label: &str| GpuBuffer::<V4>::zeroed(ctx, 0, label);
        let zu = |label: &str| GpuBuffer::<u32>::zeroed(ctx, 0, label);
        let params = ctx.capture("allocating the shape-matching parameters", || {
            ctx.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some("pbd params"),
                size: std::mem::size_of::<super::GpuParams>() as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })?;
        let stats_read = ctx.capture("allocating the shape-matching stats read-back", || {
            ctx.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some("pbd stats read-back"),
                size: (stat::WORDS * 4) as u64,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            x: z4("pbd x")?,
            v: z4("pbd v")?,
            xs: z4("pbd xs")?,
            xs_b: z4("pbd xs_b")?,
            target: z4("pbd target")?,
            body: zu("pbd body")?,
            keys: zu("pbd keys")?,
            vals: zu("pbd vals")?,
            neighbors: zu("pbd neighbors")?,
            ncount: zu("pbd ncount")?,
            wmask: zu("pbd wmask")?,
            cl_offset: zu("pbd cl_offset")?,
            member: zu("pbd member")?,
            rest_mu: z4("pbd rest_mu")?,
            clusters: z4("pbd clusters")?,
            quat: z4("pbd quat")?,
            fit: z4("pbd fit")?,
            m_offset: zu("pbd m_offset")?,
            m_rest: z4("pbd m_rest")?,
            m_cluster: zu("pbd m_cluster")?,
            pq: z4("pbd pq")?,
            colliders: GpuBuffer::zeroed(ctx, 0, "pbd colliders")?,
            collider_sdf: GpuBuffer::zeroed(ctx, 1, "pbd collider_sdf")?,
            stats: GpuBuffer::zeroed(ctx, stat::WORDS, "pbd stats")?,
            stats_read,
            params,
            backup: [
                z4("pbd backup x")?,
                z4("pbd backup v")?,
                z4("pbd backup quat")?,
                z4("pbd backup clusters")?,
                z4("pbd backup pq")?,
            ],
            sdf_ids: Vec::new(),
            recs: Vec::new(),
            pack: Vec::new(),
            m_cluster_ids: Vec::new(),
            scratch: ClusterScratch::default(),
            rebind: true,
        })
    }

    /// Each buffer's (allocation, bound length): bind groups bind the
    /// length, so they are remade only when this changes.
    fn layout(&self) -> Vec<(usize, usize)> {
        let v4s = [
            &self.x,
            &self.v,
            &self.xs,
            &self.xs_b,
            &self.target,
            &self.rest_mu,
            &self.clusters,
            &self.quat,
            &self.fit,
            &self.m_rest,
            &self.pq,
        ];
        let u32s = [
            &self.body,
            &self.keys,
            &self.vals,
            &self.neighbors,
            &self.ncount,
            &self.wmask,
            &self.cl_offset,
            &self.member,
            &self.m_offset,
            &self.m_cluster,
        ];
        v4s.iter()
            .map(|b| (b.capacity(), b.len()))
            .chain(u32s.iter().map(|b| (b.capacity(), b.len())))
            .chain(self.backup.iter().map(|b| (b.capacity(), b.len())))
            .collect()
    }

    /// Uploads everything the step reads from `state` and `model` (after
    /// the host changed either). The weights, Σμ, Σμq and the particle-
    /// ordered memberships are the CPU loop's own ([`ClusterScratch::prepare`]).
    pub(super) fn upload(&mut self, model: &Model, state: &State) -> Result<()> {
        let pt = &state.particles;
        let cl = &state.clusters;
        let mb = &state.memberships;
        let n = pt.len();
        let nc = cl.len();
        let cap = model.params.max_neighbors as usize;
        let lim = self.ctx.max_binding_elements(4);
        if (n * cap) as u64 > lim {
            return Err(Error::Backend(format!(
                "{n} particles × {cap} neighbour slots exceed what '{}' binds at once ({lim}); lower \
                 max_neighbors or use backend=\"cpu\"",
                self.ctx.adapter_info().name
            )));
        }
        let before = self.layout();
        let pack = &mut self.pack;
        put4(&mut self.x, pack, (0..n).map(|i| v4(pt.x[i], pt.w[i])))?;
        put4(&mut self.v, pack, pt.v.iter().map(|&v| v4(v, 0.0)))?;
        put4(&mut self.target, pack, pt.target.iter().map(|&t| v4(t, 0.0)))?;
        put4(&mut self.pq, pack, pt.q.iter().map(|&q| q4(q)))?;
        self.body.upload(&pt.body)?;
        for b in [&mut self.xs, &mut self.xs_b] {
            b.resize_uninit(n)?;
        }
        for b in [&mut self.keys, &mut self.vals, &mut self.ncount, &mut self.wmask] {
            b.resize_uninit(n)?;
        }
        self.neighbors.resize_uninit(n * cap)?;
        let sc = &mut self.scratch;
        sc.prepare(pt, cl, mb, model.params.weights);
        // Clusters: F_P (+ yield, degenerate), Qsum, (Σμq, Σμ), material.
        put4(
            &mut self.clusters,
            pack,
            (0..nc).flat_map(|c| {
                let m = &model.bodies[cl.body[c] as usize].material;
                let (mass, sq) = sc.sums[c];
                let deg = f32::from(u8::from(cl.degenerate[c]));
                rows(&cl.fp[c], [cl.yield_strain[c], deg, 0.0])
                    .into_iter()
                    .chain(rows(&cl.qsum[c], [0.0; 3]))
                    .chain([
                        v4(sq.cast::<f32>(), mass as f32),
                        [
                            m.stiffness as f32,
                            m.flow_rate as f32,
                            m.hardening as f32,
                            m.plastic_cap as f32,
                        ],
                    ])
            }),
        )?;
        self.cl_offset.upload(&cl.offset)?;
        self.member.upload(&cl.member)?;
        put4(
            &mut self.rest_mu,
            pack,
            cl.rest.iter().zip(&sc.mu).map(|(&q, &w)| v4(q, w)),
        )?;
        put4(&mut self.quat, pack, cl.quat.iter().map(|&q| q4(q)))?;
        self.fit.resize_uninit(nc * FIT_STRIDE)?;
        self.m_offset.upload(&mb.offset)?;
        put4(
            &mut self.m_rest,
            pack,
            sc.goal.iter().map(|g| [g.q[0], g.q[1], g.q[2], 0.0]),
        )?;
        self.m_cluster_ids.clear();
        self.m_cluster_ids.extend(sc.goal.iter().map(|g| g.cluster));
        self.m_cluster.upload(&self.m_cluster_ids)?;
        let lens = [n, n, nc, nc * CL_STRIDE, n];
        for (b, len) in self.backup.iter_mut().zip(lens) {
            b.resize_uninit(len)?;
        }
        if self.layout() != before {
            self.rebind = true;
        }
        Ok(())
    }

    /// Uploads the kinematic targets alone (pins moved; nothing else changed).
    pub(super) fn upload_targets(&mut self, state: &State) -> Result<()> {
        let pt = &state.particles;
        put4(
            &mut self.target,
            &mut self.pack,
            pt.target.iter().map(|&t| v4(t, 0.0)),
        )
    }

    /// Reads back what the PBD loop changes: positions, velocities and the
    /// clusters' rotations (spec §1.3; the end of the step ran elsewhere).
    pub(super) fn download_loop(&self, state: &mut State) -> Result<()> {
        let pt = &mut state.particles;
        let (x, v) = (self.x.read()?, self.v.read()?);
        for i in 0..pt.len() {
            pt.x[i] = Vec3::new(x[i][0], x[i][1], x[i][2]);
            pt.v[i] = Vec3::new(v[i][0], v[i][1], v[i][2]);
        }
        for (q, d) in state.clusters.quat.iter_mut().zip(self.quat.read()?) {
            *q = Quat::new(d[0], d[1], d[2], d[3]);
        }
        Ok(())
    }

    /// Reads the whole step's results back into `state`: [`Self::download_loop`]
    /// plus the particles' orientations and the clusters' F_P, yields and
    /// degeneracy (the device's end of step).
    pub(super) fn download(&self, state: &mut State) -> Result<()> {
        self.download_loop(state)?;
        for (q, d) in state.particles.q.iter_mut().zip(self.pq.read()?) {
            *q = Quat::new(d[0], d[1], d[2], d[3]);
        }
        let cl = &mut state.clusters;
        let rec = self.clusters.read()?;
        for c in 0..cl.len() {
            let r = &rec[c * CL_STRIDE..c * CL_STRIDE + 3];
            cl.fp[c] = from_rows(r);
            cl.yield_strain[c] = r[0][3];
            cl.degenerate[c] = r[1][3] != 0.0;
        }
        Ok(())
    }

    /// Packs the colliders at their current pose (every step: they move),
    /// uploading mesh distance grids only when the set of meshes changed.
    pub(super) fn upload_colliders(&mut self, colliders: &[Collider]) -> Result<()> {
        if colliders.len() > 32 {
            return Err(Error::InvalidInput(format!(
                "the GPU shape-matching backend handles at most 32 colliders (one bit each per \
                 particle), got {}; merge colliders or use backend=\"cpu\"",
                colliders.len()
            )));
        }
        let ids: Vec<usize> = colliders
            .iter()
            .map(|c| match c.shape() {
                Shape::Mesh(m) => Arc::as_ptr(m) as usize,
                _ => 0,
            })
            .collect();
        let mut recs = std::mem::take(&mut self.recs);
        recs.clear();
        let mut off = 0usize;
        for c in colliders {
            let o = u32::try_from(off).map_err(|_| {
                Error::Backend("the mesh colliders' distance grids hold more than 2³² values".to_owned())
            })?;
            recs.extend_from_slice(&pack_collider(c, o)?);
            off += collider_sdf_words_len(c);
        }
        if recs.is_empty() {
            recs.resize(COLLIDER_WORDS, 0.0);
        }
        let before = (self.colliders.capacity(), self.colliders.len());
        let r = self.colliders.upload(&recs);
        self.recs = recs;
        r?;
        if (self.colliders.capacity(), self.colliders.len()) != before {
            self.rebind = true;
        }
        if ids != self.sdf_ids {
            let mut all: Vec<f32> = colliders.iter().flat_map(collider_sdf_words).collect();
            if all.is_empty() {
                all.push(0.0);
            }
            self.collider_sdf.upload(&all)?;
            self.sdf_ids = ids;
            self.rebind = true;
        }
        Ok(())
    }

    /// The buffer bound to the shader variable `name`.
    pub(super) fn resource(&self, name: &str) -> Result<wgpu::BindingResource<'_>> {
        Ok(match name {
            "params" => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &self.params,
                offset: 0,
                size: None,
            }),
            "x" => self.x.binding(),
            "v" => self.v.binding(),
            "xs" => self.xs.binding(),
            "xs_b" => self.xs_b.binding(),
            "target_x" => self.target.binding(),
            "body" => self.body.binding(),
            "keys" => self.keys.binding(),
            "vals" => self.vals.binding(),
            "neighbors" => self.neighbors.binding(),
            "ncount" => self.ncount.binding(),
            "wmask" => self.wmask.binding(),
            "cl_offset" => self.cl_offset.binding(),
            "member" => self.member.binding(),
            "rest_mu" => self.rest_mu.binding(),
            "clusters" => self.clusters.binding(),
            "quat" => self.quat.binding(),
            "fit" => self.fit.binding(),
            "m_offset" => self.m_offset.binding(),
            "m_rest" => self.m_rest.binding(),
            "m_cluster" => self.m_cluster.binding(),
            "pq" => self.pq.binding(),
            "colliders" => self.colliders.binding(),
            "collider_sdf" => self.collider_sdf.binding(),
            "stats" => self.stats.binding(),
            other => {
                return Err(Error::Backend(format!(
                    "internal: a shape-matching stage declares the resource '{other}', which the \
                     backend does not have"
                )));
            }
        })
    }

    /// The state buffers a diverged step restores, in the order of `backup`.
    pub(super) fn state_buffers(&self) -> [&GpuBuffer<V4>; 5] {
        [&self.x, &self.v, &self.quat, &self.clusters, &self.pq]
    }
}
