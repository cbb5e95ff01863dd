//! The cloth checkpoint layout (spec persistent_wrinkles §2.2–2.5 state):
//! positions, velocities, every hinge's and triangle's internal variables,
//! the pins, the hold warp and the linear solver's warm start, as named
//! arrays ([`crate::checkpoint`]). The lagged factor is not saved (see
//! [`Simulation::invalidate_solver_cache`]).

use super::sim::Simulation;
use super::solver::Pins;
use super::wrinkle::{FrictionState, PlasticState};
use crate::Result;
use crate::checkpoint::{Arrays, Rows};
use crate::math::Vec3;

/// `[θ_p, ε_hp, ε_Y, dir, t_plastic]`; `dir` is stored as −1.0, 0.0 or 1.0.
impl Rows for PlasticState {
    const SHAPE: &'static [usize] = &[5];
    fn write(&self, out: &mut Vec<f64>) {
        out.extend([
            self.theta_p,
            self.eps_hp,
            self.eps_y,
            f64::from(self.dir),
            self.t_plastic,
        ]);
    }
    fn read(r: &[f64]) -> core::result::Result<Self, String> {
        let dir = [-1i8, 0, 1]
            .into_iter()
            .find(|&d| f64::from(d) == r[3])
            .ok_or_else(|| format!("plastic direction must be -1, 0 or 1, got {}", r[3]))?;
        Ok(Self {
            theta_p: r[0],
            eps_hp: r[1],
            eps_y: r[2],
            dir,
            t_plastic: r[4],
        })
    }
}

/// `[anchor, t_stick]`.
impl Rows for FrictionState {
    const SHAPE: &'static [usize] = &[2];
    fn write(&self, out: &mut Vec<f64>) {
        out.extend([self.anchor, self.t_stick]);
    }
    fn read(r: &[f64]) -> core::result::Result<Self, String> {
        Ok(Self {
            anchor: r[0],
            t_stick: r[1],
        })
    }
}

/// The three membrane components (uu, vv, uv) of a row type of `$w`
/// columns side by side, written once for both state types.
macro_rules! three_components {
    ($t:ty, $w:expr) => {
        impl Rows for [$t; 3] {
            const SHAPE: &'static [usize] = &[3 * $w];
            fn write(&self, out: &mut Vec<f64>) {
                self.iter().for_each(|r| r.write(out));
            }
            fn read(r: &[f64]) -> core::result::Result<Self, String> {
                Ok([
                    <$t>::read(&r[..$w])?,
                    <$t>::read(&r[$w..2 * $w])?,
                    <$t>::read(&r[2 * $w..])?,
                ])
            }
        }
    };
}
three_components!(PlasticState, 5);
three_components!(FrictionState, 2);

impl Simulation {
    /// The whole mutable state as named arrays: `x`, `v`, `pin_target` (N, 3);
    /// `hinge_angle`, `hinge_dahl` (H,); `hinge_plastic` (H, 5);
    /// `hinge_friction` (H, 2); `tri_plastic` (F, 15); `tri_friction` (F, 6);
    /// `pin_stiffness` (N,); `warm_start` (3N,); scalars `time`, `step`,
    /// `warp_per_step`, `warp_steps_left`.
    pub fn checkpoint(&self) -> Arrays {
        let st = self.state();
        let mut a = Arrays::new();
        a.put_rows("x", &st.x);
        a.put_rows("v", &st.v);
        a.put_rows("hinge_angle", &st.hinge_angle);
        a.put_rows("hinge_plastic", &st.hinge_plastic);
        a.put_rows("hinge_friction", &st.hinge_friction);
        a.put_rows("hinge_dahl", &st.hinge_dahl);
        a.put_rows("tri_plastic", &st.tri_plastic);
        a.put_rows("tri_friction", &st.tri_friction);
        a.put_f64("time", st.time);
        a.put_u64("step", st.step);
        a.put_rows("pin_stiffness", &self.pins().stiffness);
        a.put_rows("pin_target", &self.pins().target);
        let (per_step, left) = self.hold_warp();
        a.put_f64("warp_per_step", per_step);
        a.put_u64("warp_steps_left", left);
        a.put_rows("warm_start", self.warm_start());
        a
    }

    /// Restores a [`checkpoint`](Self::checkpoint) of a simulation built with
    /// the same garments. Everything is read and checked before anything
    /// changes, so a refused checkpoint leaves the simulation as it was.
    pub fn restore(&mut self, a: &Arrays) -> Result<()> {
        let m = self.model();
        let (n, nh, nt) = (m.num_vertices(), m.hinges.len(), m.faces.len());
        let x = a.rows::<Vec3<f64>>("x", n)?;
        let v = a.rows::<Vec3<f64>>("v", n)?;
        let hinge_angle = a.rows::<f64>("hinge_angle", nh)?;
        let hinge_plastic = a.rows::<PlasticState>("hinge_plastic", nh)?;
        let hinge_friction = a.rows::<FrictionState>("hinge_friction", nh)?;
        let hinge_dahl = a.rows::<f64>("hinge_dahl", nh)?;
        let tri_plastic = a.rows::<[PlasticState; 3]>("tri_plastic", nt)?;
        let tri_friction = a.rows::<[FrictionState; 3]>("tri_friction", nt)?;
        let time = a.f64("time")?;
        let step = a.u64("step")?;
        let pins = Pins {
            stiffness: a.rows::<f64>("pin_stiffness", n)?,
            target: a.rows::<Vec3<f64>>("pin_target", n)?,
        };
        let per_step = a.f64("warp_per_step")?;
        let left = a.u64("warp_steps_left")?;
        let warm = a.rows::<f64>("warm_start", 3 * n)?;
        if pins.stiffness.iter().any(|k| *k < 0.0) {
            return crate::invalid!("checkpoint array \"pin_stiffness\" has a negative stiffness");
        }
        if per_step < 0.0 {
            return crate::invalid!("checkpoint value \"warp_per_step\" must be ≥ 0, got {per_step}");
        }
        // Everything is valid: commit (these setters cannot fail on checked input).
        self.set_pins(pins)?;
        self.set_hold_warp(per_step, left)?;
        self.set_warm_start(&warm)?;
        let st = self.state_mut();
        st.x = x;
        st.v = v;
        st.hinge_angle = hinge_angle;
        st.hinge_plastic = hinge_plastic;
        st.hinge_friction = hinge_friction;
        st.hinge_dahl = hinge_dahl;
        st.tri_plastic = tri_plastic;
        st.tri_friction = tri_friction;
        st.time = time;
        st.step = step;
        Ok(())
    }
}
