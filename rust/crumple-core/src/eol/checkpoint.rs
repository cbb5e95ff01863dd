//! Checkpoints of an EOL stepper: the mesh as it is now (the remesher
//! changes it), every per-vertex state array, the features of EOL vertices,
//! the persistent ids, the pins with their moving targets, the QP's warm
//! start, the clocks, and the wires and points where they are now (they
//! belong to the stepper). Boxes and settings are the caller's (the Python
//! layer saves its colliders and options).

use super::constraints::Feature;
use super::obstacle::{PointObstacle, Wire};
use super::step::{Pin, Snapshot, Stepper};
use super::system::Mesh;
use super::wrinkle::{HingeState, Wrinkles};
use crate::checkpoint::Arrays;
use crate::cloth::wrinkle::{FrictionState, PlasticState};
use crate::geometry::MeshTopology;
use crate::math::Vec3;
use crate::{Error, Result};

/// A feature as 11 numbers: 1 + [`Feature::kind`] (0: none), up to three
/// unit vectors and the obstacle's number.
fn encode(f: &Option<Feature>) -> [f64; 11] {
    let mut r = [0.0; 11];
    if let Some(f) = f {
        r[10] = f64::from(f.obstacle());
    }
    let mut put = |k: f64, vs: &[Vec3<f64>]| {
        r[0] = k;
        for (j, v) in vs.iter().enumerate() {
            r[1 + 3 * j..4 + 3 * j].copy_from_slice(&[v.x, v.y, v.z]);
        }
    };
    match *f {
        None => {}
        Some(f @ Feature::Corner { normals, .. }) => put(1.0 + f.kind() as f64, &normals),
        Some(f @ Feature::Edge { normals, tangent, .. }) => {
            put(1.0 + f.kind() as f64, &[normals[0], normals[1], tangent])
        }
        Some(f @ Feature::Wire { normal, tangent, .. }) => put(1.0 + f.kind() as f64, &[normal, tangent]),
        Some(f @ Feature::Point { normal, .. }) => put(1.0 + f.kind() as f64, &[normal]),
    }
    r
}

fn decode(r: &[f64; 11]) -> Result<Option<Feature>> {
    let obstacle = whole(r[10], "feature obstacle")?;
    let v = |j: usize| Vec3::new(r[1 + 3 * j], r[2 + 3 * j], r[3 + 3 * j]);
    let k = r[0];
    if k.fract() != 0.0 || !(0.0..=4.0).contains(&k) {
        return Err(Error::InvalidInput(format!(
            "checkpoint: unknown EOL feature kind {k}"
        )));
    }
    Ok(match k as i64 - 1 {
        -1 => None,
        0 => Some(Feature::Corner {
            normals: [v(0), v(1), v(2)],
            obstacle,
        }),
        1 => Some(Feature::Edge {
            normals: [v(0), v(1)],
            tangent: v(2),
            obstacle,
        }),
        2 => Some(Feature::Wire {
            normal: v(0),
            tangent: v(1),
            obstacle,
        }),
        _ => Some(Feature::Point {
            normal: v(0),
            obstacle,
        }),
    })
}

/// A whole number in `0..=u32::MAX` read from a float, or an error.
fn whole(x: f64, what: &str) -> Result<u32> {
    if x.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&x) {
        Ok(x as u32)
    } else {
        Err(Error::InvalidInput(format!(
            "checkpoint: {what} {x} is not a whole number in range"
        )))
    }
}

impl Stepper {
    /// The state as named arrays.
    pub fn checkpoint(&self) -> Arrays {
        let mut a = Arrays::new();
        a.put_rows("x", &self.mesh.x);
        a.put_rows("u", &self.mesh.u);
        a.put_rows("faces", &self.mesh.faces);
        a.put_rows("eol", &self.mesh.eol);
        a.put_rows("xd", &self.xd);
        a.put_rows("ud", &self.ud);
        let f: Vec<[f64; 11]> = self.features.iter().map(encode).collect();
        a.put_rows("features", &f);
        let wires: Vec<[f64; 13]> = self
            .wires
            .iter()
            .map(|w| {
                let [p, q] = w.ends;
                let (n, v) = (w.normal, w.velocity);
                [
                    p.x, p.y, p.z, q.x, q.y, q.z, n.x, n.y, n.z, v.x, v.y, v.z, w.friction,
                ]
            })
            .collect();
        a.put_rows("wires", &wires);
        let points: Vec<[f64; 10]> = self
            .points
            .iter()
            .map(|p| {
                let (x, n, v) = (p.position, p.normal, p.velocity);
                [x.x, x.y, x.z, n.x, n.y, n.z, v.x, v.y, v.z, p.friction]
            })
            .collect();
        a.put_rows("points", &points);
        a.put_rows("ids", &self.ids);
        a.put_u64("next_id", u64::from(self.next_id));
        let pin_ids: Vec<u32> = self.pins.iter().map(|p| p.id).collect();
        let targets: Vec<Vec3<f64>> = self.pins.iter().map(|p| p.target).collect();
        let velocities: Vec<Vec3<f64>> = self.pins.iter().map(|p| p.velocity).collect();
        a.put_rows("pin_ids", &pin_ids);
        a.put_rows("pin_targets", &targets);
        a.put_rows("pin_velocities", &velocities);
        // The warm start of the next QP, so a restored run takes the same path.
        let act: Vec<[f64; 2]> = self
            .active
            .iter()
            .map(|&(v, k)| [f64::from(v), f64::from(k)])
            .collect();
        a.put_rows("active_rows", &act);
        // And how its passes read their solves (a restored run must too).
        a.put_u64("qp_exact_solves", u64::from(self.qp_exact_solves));
        a.put_u64("step", self.step_count);
        a.put_f64("time", self.time);
        // The wrinkle model's per-hinge state (the cloth module's names and
        // layouts), in the order the faces' topology gives the hinges.
        if let Some(w) = &self.wrinkles {
            let rows = |f: fn(&HingeState) -> f64| w.hinges.iter().map(f).collect::<Vec<f64>>();
            let plastic: Vec<PlasticState> = w.hinges.iter().map(|h| h.plastic).collect();
            let friction: Vec<FrictionState> = w.hinges.iter().map(|h| h.friction).collect();
            a.put_rows("hinge_plastic", &plastic);
            a.put_rows("hinge_friction", &friction);
            a.put_rows("hinge_dahl", &rows(|h| h.dahl));
            a.put_rows("hinge_angle", &rows(|h| h.angle));
            a.put_f64("warp_per_step", w.warp_per_step);
            a.put_u64("warp_steps_left", w.warp_steps);
        }
        a
    }

    /// Restores what [`Self::checkpoint`] wrote. Errors on missing or
    /// inconsistent arrays; the stepper is then unchanged.
    pub fn restore(&mut self, a: &Arrays) -> Result<()> {
        let n = a
            .get("x")
            .and_then(|x| x.shape.first().copied())
            .ok_or_else(|| Error::InvalidInput("checkpoint: no EOL positions 'x'".into()))?;
        let nf = a
            .get("faces")
            .and_then(|x| x.shape.first().copied())
            .ok_or_else(|| Error::InvalidInput("checkpoint: no EOL faces".into()))?;
        let x: Vec<Vec3<f64>> = a.rows("x", n)?;
        let faces: Vec<[u32; 3]> = a.rows("faces", nf)?;
        if faces.iter().flatten().any(|&k| k as usize >= n) {
            return Err(Error::InvalidInput(
                "checkpoint: a face index is out of range".into(),
            ));
        }
        let topo = MeshTopology::build(n, &faces)?;
        let features = a
            .rows::<[f64; 11]>("features", n)?
            .iter()
            .map(decode)
            .collect::<Result<Vec<_>>>()?;
        let mesh = Mesh {
            x,
            u: a.rows("u", n)?,
            hinges: topo.hinges().to_vec(),
            faces,
            eol: a.rows("eol", n)?,
        };
        let ids: Vec<u32> = a.rows("ids", n)?;
        // Ids grow by one per new vertex: leave them room.
        let next_id = u32::try_from(a.u64("next_id")?)
            .ok()
            .filter(|&k| k < u32::MAX / 2)
            .ok_or_else(|| Error::InvalidInput("checkpoint: next_id out of range".into()))?;
        if ids.windows(2).any(|w| w[0] >= w[1]) || ids.last().is_some_and(|&l| l >= next_id) {
            return Err(Error::InvalidInput(
                "checkpoint: vertex ids are not increasing".into(),
            ));
        }
        if mesh.eol.iter().zip(&features).any(|(e, f)| *e != f.is_some()) {
            return Err(Error::InvalidInput(
                "checkpoint: EOL flags and features disagree".into(),
            ));
        }
        let (xd, ud) = (a.rows("xd", n)?, a.rows("ud", n)?);
        let (step, time) = (a.u64("step")?, a.f64("time")?);
        let np = a
            .get("pin_ids")
            .and_then(|x| x.shape.first().copied())
            .unwrap_or(0);
        let pins: Vec<Pin> = a
            .rows::<u32>("pin_ids", np)?
            .into_iter()
            .zip(a.rows::<Vec3<f64>>("pin_targets", np)?)
            .zip(a.rows::<Vec3<f64>>("pin_velocities", np)?)
            .map(|((id, target), velocity)| Pin { id, target, velocity })
            .collect();
        let na = a
            .get("active_rows")
            .and_then(|x| x.shape.first().copied())
            .unwrap_or(0);
        let active = a
            .rows::<[f64; 2]>("active_rows", na)?
            .into_iter()
            .map(|[v, k]| Ok((whole(v, "active row vertex")?, whole(k, "active row ordinal")?)))
            .collect::<Result<_>>()?;
        // Absent in checkpoints written before it was saved: 0, as a new run
        // (at most the 20 a switch sets).
        let qp_exact_solves = match a.get("qp_exact_solves") {
            Some(_) => a.u64("qp_exact_solves")?.min(20) as u32,
            None => 0,
        };
        let rows_of = |name: &str| a.get(name).and_then(|x| x.shape.first().copied()).unwrap_or(0);
        let v = |r: &[f64], k: usize| Vec3::new(r[k], r[k + 1], r[k + 2]);
        let wires: Vec<Wire> = a
            .rows::<[f64; 13]>("wires", rows_of("wires"))?
            .iter()
            .map(|r| Wire {
                ends: [v(r, 0), v(r, 3)],
                normal: v(r, 6),
                velocity: v(r, 9),
                friction: r[12],
            })
            .collect();
        let points: Vec<PointObstacle> = a
            .rows::<[f64; 10]>("points", rows_of("points"))?
            .iter()
            .map(|r| PointObstacle {
                position: v(r, 0),
                normal: v(r, 3),
                velocity: v(r, 6),
                friction: r[9],
            })
            .collect();
        let bad_mu = |mu: f64| !(mu.is_finite() && mu >= 0.0);
        if wires
            .iter()
            .flat_map(|w| [w.ends[0], w.ends[1], w.normal, w.velocity])
            .chain(points.iter().flat_map(|p| [p.position, p.normal, p.velocity]))
            .any(|x| !x.is_finite())
            || wires.iter().any(|w| bad_mu(w.friction))
            || points.iter().any(|p| bad_mu(p.friction))
        {
            return Err(Error::InvalidInput(
                "checkpoint: a wire or point is not finite (or has a negative friction)".into(),
            ));
        }
        // Wrinkles are the caller's setting: with them on, the states come
        // from the checkpoint when it has them (fresh otherwise).
        let wrinkles = match &self.wrinkles {
            None if a.get("hinge_plastic").is_some() => {
                return Err(Error::InvalidInput(
                    "checkpoint: it has wrinkle states but this cloth runs without wrinkles".into(),
                ));
            }
            None => None,
            Some(w) => {
                let mut fresh = Wrinkles::new(w.params, &mesh);
                if a.get("hinge_plastic").is_some() {
                    let nh = mesh.hinges.len();
                    let plastic = a.rows::<PlasticState>("hinge_plastic", nh)?;
                    let friction = a.rows::<FrictionState>("hinge_friction", nh)?;
                    let dahl = a.rows::<f64>("hinge_dahl", nh)?;
                    let angle = a.rows::<f64>("hinge_angle", nh)?;
                    for (k, h) in fresh.hinges.iter_mut().enumerate() {
                        let (p, f) = (plastic[k], friction[k]);
                        let values = [p.theta_p, p.eps_hp, p.eps_y, p.t_plastic, f.anchor, f.t_stick];
                        if values.iter().chain([&dahl[k], &angle[k]]).any(|v| !v.is_finite())
                            || p.eps_hp < 0.0
                            || p.eps_y < 0.0
                            || p.t_plastic < 0.0
                            || f.t_stick < 0.0
                        {
                            return Err(Error::InvalidInput(format!(
                                "checkpoint: the wrinkle state of hinge {k} is not finite (or a clock or \
                                 yield strain is negative)"
                            )));
                        }
                        *h = HingeState {
                            plastic: plastic[k],
                            friction: friction[k],
                            dahl: dahl[k],
                            angle: angle[k],
                        };
                    }
                    let per_step = a.f64("warp_per_step")?;
                    if !(per_step.is_finite() && per_step >= 0.0) {
                        return Err(Error::InvalidInput(format!(
                            "checkpoint: warp_per_step must be ≥ 0 s; got {per_step}"
                        )));
                    }
                    fresh.warp_per_step = per_step;
                    fresh.warp_steps = a.u64("warp_steps_left")?;
                }
                Some(fresh)
            }
        };
        self.restore_snapshot(Snapshot {
            wrinkles,
            mesh,
            xd,
            ud,
            features,
            ids,
            next_id,
            time,
            pins,
            active,
            qp_exact_solves,
            // Boxes are the caller's (the Python layer sets them from its
            // colliders).
            obstacles: (self.boxes.clone(), wires, points),
        });
        self.step_count = step;
        Ok(())
    }
}
