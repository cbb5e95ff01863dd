//! The MPM checkpoint layout (spec mpm_anisotropic §2 state): particle
//! positions, velocities, affine matrices, volumetric deformation and
//! hardening, element directions and tangents, the pins, time and step, as
//! named arrays ([`crate::checkpoint`]). Values are written as f64 whatever
//! the precision (an f32 value round-trips exactly).

use super::Simulation;
use crate::Result;
use crate::checkpoint::{Arrays, Rows};
use crate::invalid;
use crate::math::{Mat3, Real, Vec3};
use crate::mpm::solver::Pin;

/// `[vertex, x0.xyz, v.xyz, t0]`; the vertex index is stored as a whole f64.
impl Rows for Pin {
    const SHAPE: &'static [usize] = &[8];
    fn write(&self, out: &mut Vec<f64>) {
        out.extend([
            f64::from(self.vertex),
            self.x0.x,
            self.x0.y,
            self.x0.z,
            self.v.x,
            self.v.y,
            self.v.z,
            self.t0,
        ]);
    }
    fn read(r: &[f64]) -> core::result::Result<Self, String> {
        if !(r[0] >= 0.0 && r[0].fract() == 0.0 && r[0] <= f64::from(u32::MAX)) {
            return Err(format!("pin vertex must be a vertex index, got {}", r[0]));
        }
        Ok(Pin {
            vertex: r[0] as u32,
            x0: Vec3::new(r[1], r[2], r[3]),
            v: Vec3::new(r[4], r[5], r[6]),
            t0: r[7],
        })
    }
}

impl<T: Real> Simulation<T> {
    /// The whole mutable state as named arrays: `x`, `v` (N, 3); `c` (N, 3, 3);
    /// `f` (Nv, 3, 3); `q` (Nv,); `d`, `tangents` (Ne, 2, 3); `pins` (P, 8);
    /// scalars `time`, `step`. Brings the host copy up to date first (GPU).
    pub fn checkpoint(&mut self) -> Result<Arrays> {
        self.sync_host()?;
        let st = &self.state;
        let mut a = Arrays::new();
        a.put_rows("x", &st.x);
        a.put_rows("v", &st.v);
        a.put_rows("c", &st.c);
        a.put_rows("f", &st.f);
        a.put_rows::<f64>("q", &st.q.iter().map(|q| q.to_f64()).collect::<Vec<_>>());
        a.put_rows("d", &st.d);
        a.put_rows("tangents", &st.tangents);
        a.put_rows("pins", &self.pins);
        a.put_f64("time", st.time);
        a.put_u64("step", st.step);
        Ok(a)
    }

    /// Restores a [`checkpoint`](Self::checkpoint) of a simulation built with
    /// the same objects. Everything is read and checked before anything
    /// changes; the device copy (GPU) is re-uploaded before the next step.
    pub fn restore(&mut self, a: &Arrays) -> Result<()> {
        let st = &self.state;
        let (n, nv, ne) = (st.x.len(), st.f.len(), st.d.len());
        let x = a.rows::<Vec3<T>>("x", n)?;
        let v = a.rows::<Vec3<T>>("v", n)?;
        let c = a.rows::<Mat3<T>>("c", n)?;
        let f = a.rows::<Mat3<T>>("f", nv)?;
        let q = a.rows::<f64>("q", nv)?;
        let d = a.rows::<[Vec3<T>; 2]>("d", ne)?;
        let tangents = a.rows::<[Vec3<T>; 2]>("tangents", st.tangents.len())?;
        let np = a.get("pins").and_then(|p| p.shape.first().copied()).unwrap_or(0);
        let pins = a.rows::<Pin>("pins", np)?;
        let time = a.f64("time")?;
        let step = a.u64("step")?;
        let nvert = self.model.vert.len();
        if let Some(p) = pins.iter().find(|p| p.vertex as usize >= nvert) {
            return invalid!(
                "checkpoint pin of vertex {} does not exist: the simulation has {nvert} mesh vertices \
                 (was the checkpoint saved from the same scene?)",
                p.vertex
            );
        }
        self.begin_host_edit()?;
        let st = &mut self.state;
        st.x = x;
        st.v = v;
        st.c = c;
        st.f = f;
        st.q = q.into_iter().map(T::from_f64).collect();
        st.d = d;
        st.tangents = tangents;
        st.time = time;
        st.step = step;
        self.pins = pins;
        Ok(())
    }
}
