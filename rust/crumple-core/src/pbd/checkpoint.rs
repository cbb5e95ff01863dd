//! The shape-matching checkpoint layout: particles, clusters (CSR and
//! plastic state), the skinned surfaces, time and step, as named arrays
//! ([`crate::checkpoint`]). Sizes come from the arrays themselves, since
//! re-sampling changes how many particles and clusters a body has; the
//! reverse map is rebuilt, everything else is restored bit for bit.

use super::sim::Simulation;
use super::state::{Clusters, Particles, Skin, State, Surface};
use crate::Result;
use crate::checkpoint::{Arrays, Rows};
use crate::invalid;
use crate::math::{Mat3, Quat, Vec3};

/// A skin binding: four particles, four weights, four offsets (1 + 1 + 3 per slot).
impl Rows for Skin {
    const SHAPE: &'static [usize] = &[20];
    fn write(&self, out: &mut Vec<f64>) {
        for a in 0..4 {
            out.push(f64::from(self.particle[a]));
            out.push(f64::from(self.weight[a]));
            self.offset[a].write(out);
        }
    }
    fn read(r: &[f64]) -> core::result::Result<Self, String> {
        let mut s = Skin::default();
        for a in 0..4 {
            let b = 5 * a;
            s.particle[a] = u32::read(&r[b..b + 1])?;
            s.weight[a] = r[b + 1] as f32;
            s.offset[a] = Vec3::read(&r[b + 2..b + 5])?;
        }
        Ok(s)
    }
}

fn rows_len(a: &Arrays, name: &str) -> Result<usize> {
    match a.get(name).and_then(|x| x.shape.first().copied()) {
        Some(n) => Ok(n),
        None => invalid!("checkpoint lacks the array {name:?}"),
    }
}

impl Simulation {
    /// The whole mutable state as named arrays (see the module docs).
    pub fn checkpoint(&self) -> Arrays {
        let st = &self.state;
        let p = &st.particles;
        let c = &st.clusters;
        let mut a = Arrays::new();
        a.put_rows("x", &p.x);
        a.put_rows("v", &p.v);
        a.put_rows("m", &p.m);
        a.put_rows("w", &p.w);
        a.put_rows("body", &p.body);
        a.put_rows("component", &p.component);
        a.put_rows("orientation", &p.q);
        a.put_rows("flags", &p.flags);
        a.put_rows("target", &p.target);
        a.put_rows("id", &p.id);
        a.put_u64("next_id", u64::from(p.next_id));
        a.put_rows("cluster_offset", &c.offset);
        a.put_rows("cluster_member", &c.member);
        a.put_rows("cluster_rest", &c.rest);
        a.put_rows("cluster_fp", &c.fp);
        a.put_rows("cluster_yield", &c.yield_strain);
        a.put_rows("cluster_n0", &c.n0);
        a.put_rows("cluster_quat", &c.quat);
        a.put_rows("cluster_body", &c.body);
        a.put_rows("cluster_component", &c.component);
        a.put_rows("cluster_qsum", &c.qsum);
        a.put_rows("cluster_mass", &c.mass);
        a.put_rows("cluster_degenerate", &c.degenerate);
        for (b, s) in st.surfaces.iter().enumerate() {
            a.put_rows(&format!("surface{b}_y"), &s.y);
            a.put_rows(&format!("surface{b}_faces"), &s.faces);
            a.put_rows(&format!("surface{b}_normals"), &s.normals);
            a.put_rows(&format!("surface{b}_skin"), &s.skin);
            a.put_f64(&format!("surface{b}_volume_target"), s.volume_target);
        }
        a.put_f64("time", st.time);
        a.put_u64("step", st.step);
        a
    }

    /// Restores a [`checkpoint`](Self::checkpoint) of a simulation with the
    /// same bodies; everything is read and checked before anything changes.
    pub fn restore(&mut self, a: &Arrays) -> Result<()> {
        // On the GPU: the next step uploads the restored state.
        self.state_mut()?;
        let n = rows_len(a, "x")?;
        let particles = Particles {
            x: a.rows("x", n)?,
            v: a.rows("v", n)?,
            m: a.rows("m", n)?,
            w: a.rows("w", n)?,
            body: a.rows("body", n)?,
            component: a.rows("component", n)?,
            q: a.rows::<Quat<f32>>("orientation", n)?,
            flags: a.rows("flags", n)?,
            target: a.rows("target", n)?,
            id: a.rows("id", n)?,
            next_id: match u32::try_from(a.u64("next_id")?) {
                Ok(k) => k,
                Err(_) => return invalid!("the checkpoint's next_id does not fit 32 bits"),
            },
        };
        let nc = rows_len(a, "cluster_n0")?;
        let ne = rows_len(a, "cluster_member")?;
        let clusters = Clusters {
            offset: a.rows(
                "cluster_offset",
                if nc == 0 {
                    rows_len(a, "cluster_offset")?
                } else {
                    nc + 1
                },
            )?,
            member: a.rows("cluster_member", ne)?,
            rest: a.rows("cluster_rest", ne)?,
            fp: a.rows::<Mat3<f32>>("cluster_fp", nc)?,
            yield_strain: a.rows("cluster_yield", nc)?,
            n0: a.rows("cluster_n0", nc)?,
            quat: a.rows("cluster_quat", nc)?,
            body: a.rows("cluster_body", nc)?,
            component: a.rows("cluster_component", nc)?,
            qsum: a.rows("cluster_qsum", nc)?,
            mass: a.rows("cluster_mass", nc)?,
            degenerate: a.rows("cluster_degenerate", nc)?,
        };
        let nb = self.model.bodies.len();
        if particles
            .body
            .iter()
            .chain(&clusters.body)
            .any(|&b| b as usize >= nb)
        {
            return invalid!(
                "the checkpoint has bodies this simulation does not: save and load with the same bodies"
            );
        }
        if clusters.member.iter().any(|&i| i as usize >= n)
            || clusters.offset.windows(2).any(|w| w[0] > w[1])
            || clusters.offset.last().is_some_and(|&e| e as usize != ne)
        {
            return invalid!("the checkpoint's clusters do not index its particles consistently");
        }
        let mut surfaces = Vec::with_capacity(nb);
        for b in 0..nb {
            let nv = rows_len(a, &format!("surface{b}_y"))?;
            let nf = rows_len(a, &format!("surface{b}_faces"))?;
            let s = Surface {
                y: a.rows(&format!("surface{b}_y"), nv)?,
                faces: a.rows(&format!("surface{b}_faces"), nf)?,
                normals: a.rows(&format!("surface{b}_normals"), nv)?,
                skin: a.rows(&format!("surface{b}_skin"), nv)?,
                volume_target: a.f64(&format!("surface{b}_volume_target"))?,
                // Recomputed by the next tracking pass (surface level 2).
                vcomp: Vec::new(),
                nopair: Vec::new(),
            };
            if s.faces.iter().flatten().any(|&i| i as usize >= nv)
                || s.skin.iter().flat_map(|k| k.particle).any(|i| i as usize >= n)
            {
                return invalid!(
                    "the checkpoint's surface {b} indexes vertices or particles it does not have"
                );
            }
            surfaces.push(s);
        }
        let time = a.f64("time")?;
        let step = a.u64("step")?;
        let mut state = State {
            particles,
            clusters,
            memberships: Default::default(),
            surfaces,
            time,
            step,
        };
        state.memberships.rebuild(n, &state.clusters);
        self.state = state;
        Ok(())
    }
}
