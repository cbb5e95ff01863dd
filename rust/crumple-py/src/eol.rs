//! Bindings of `crumple_core::eol`: Eulerian-on-Lagrangian cloth over
//! sharp box edges, wires and points.
//!
//! The cloth crosses as world positions, material coordinates and faces;
//! its material as the cloth module's material dict (the same membrane and
//! hinge models). Box colliders are the shared toolkit's; EOL turns each
//! into its sharp edges and faces before a step. Wires and points have no
//! inside, so no other solver could use them: they are EOL's own
//! obstacles, added here.

use crate::collide::{PyCollider, collider_index};
use crate::convert::{
    arrays_from_py, arrays_to_py, from_dict, points_to_py, rows_to_py, to_points, to_triples, v3,
};
use crate::errors::{IntoPy, SignalCheck, invalid};
use crumple_core::cloth::material::{Material, Wrinkles};
use crumple_core::cloth::model::ElementParams;
use crumple_core::collide as c;
use crumple_core::eol::obstacle::{PointObstacle, Wire};
use crumple_core::eol::{BoxObstacle, ClothParams, Conformal, Pin, QpMethod, Sizing, Stepper};
use crumple_core::math::{Mat3, Vec3};
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

type T3 = (f64, f64, f64);

/// An EOL cloth simulation (spec `eol_cloth.md`).
#[pyclass(module = "crumple._core", name = "EolSimulation")]
pub struct PyEolSimulation {
    s: Stepper,
    colliders: Vec<c::Collider>,
}

/// The EOL obstacle of a collider: a box in any orientation, static,
/// moving and turning at a constant linear and angular velocity, along
/// keyframes (aimed step by step, [`keyframe_aim`]), or moved by a
/// callback's pose and velocities each frame.
fn box_of(col: &c::Collider) -> PyResult<BoxObstacle> {
    let c::Shape::Box(b) = col.shape() else {
        return Err(invalid(format!(
            "crumple.eol takes Box colliders (their edges and corners are the sharp features); got a {}",
            col.shape().name()
        )));
    };
    // The collider's boundary mode says how it rubs (the shared toolkit's
    // vocabulary): "slip" frictionless, "separate" Coulomb with its
    // `friction`; "sticky" (glued) is not an EOL contact.
    let friction = match col.mode() {
        c::BoundaryMode::Slip => 0.0,
        c::BoundaryMode::Separate => col.friction(),
        c::BoundaryMode::Sticky => {
            return Err(invalid(
                "crumple.eol: a sticky box is not an EOL contact; use mode=\"separate\" (Coulomb friction with its \
                 friction coefficient) or \"slip\" (frictionless)",
            ));
        }
    };
    Ok(BoxObstacle {
        friction,
        rotation: col.rotation(),
        center: col.translation(),
        half: b.half_extents(),
        velocity: if matches!(col.motion(), c::Motion::Static) {
            Vec3::zero()
        } else {
            col.linear_velocity()
        },
        angular_velocity: if matches!(col.motion(), c::Motion::Static) {
            Vec3::zero()
        } else {
            col.angular_velocity()
        },
    })
}

/// A unit normal from `n`, checked: finite, non-zero and (for a wire)
/// perpendicular to its tangent `t`.
fn unit_normal(n: T3, t: Option<Vec3<f64>>, what: &str) -> PyResult<Vec3<f64>> {
    let n = v3(n);
    let len = n.norm();
    if !(len.is_finite() && len > 0.0) {
        return Err(invalid(format!(
            "the {what}'s normal must be a finite non-zero 3-vector; got {n:?}"
        )));
    }
    let n = n * (1.0 / len);
    if let Some(t) = t
        && n.dot(t).abs() > 1e-6
    {
        return Err(invalid(format!(
            "the {what}'s normal must be perpendicular to it (normal·tangent = {:.3e}); give the side the cloth \
             rests on, e.g. (0, 1, 0) for a horizontal wire",
            n.dot(t)
        )));
    }
    Ok(n)
}

/// A Coulomb coefficient, checked.
fn friction_of(mu: f64) -> PyResult<f64> {
    if mu.is_finite() && mu >= 0.0 {
        Ok(mu)
    } else {
        Err(invalid(format!("friction must be a finite number ≥ 0; got {mu}")))
    }
}

/// A wire from `a` to `b` m, resting side `normal`, velocity m/s, Coulomb
/// `friction`, checked.
fn wire_of(a: T3, b: T3, normal: T3, velocity: T3, friction: f64) -> PyResult<Wire> {
    let (a, b) = (finite3(a, "the wire's start")?, finite3(b, "the wire's end")?);
    let len = (b - a).norm();
    if len.is_nan() || len <= 1e-9 {
        return Err(invalid("the wire's ends must differ (it needs a length)"));
    }
    Ok(Wire {
        ends: [a, b],
        normal: unit_normal(normal, Some((b - a) * (1.0 / len)), "wire")?,
        velocity: finite3(velocity, "the wire's velocity")?,
        friction: friction_of(friction)?,
    })
}

/// A point obstacle, checked.
fn point_of(position: T3, normal: T3, velocity: T3, friction: f64) -> PyResult<PointObstacle> {
    Ok(PointObstacle {
        position: finite3(position, "the point's position")?,
        normal: unit_normal(normal, None, "point")?,
        velocity: finite3(velocity, "the point's velocity")?,
        friction: friction_of(friction)?,
    })
}

/// `(size_min, size_max, aspect_min, refine_angle, refine_velocity)`, checked.
fn sizing_of(t: (f64, f64, f64, f64, f64)) -> PyResult<Sizing> {
    let (size_min, size_max, aspect_min, refine_angle, refine_velocity) = t;
    let p = Sizing {
        size_min,
        size_max,
        aspect_min,
        refine_angle,
        refine_velocity,
    };
    p.validate().py_err()?;
    Ok(p)
}

/// Obstacle `i` of a list, or a typed error naming what there is.
fn obstacle_at<'a, T>(list: &'a mut [T], i: usize, what: &str, from: &str) -> PyResult<&'a mut T> {
    let n = list.len();
    list.get_mut(i)
        .ok_or_else(|| invalid(format!("no {what} {i}: there are {n} (indices from {from})")))
}

fn finite3(v: T3, name: &str) -> PyResult<Vec3<f64>> {
    let v = v3(v);
    if v.is_finite() {
        Ok(v)
    } else {
        Err(invalid(format!("{name} must be finite; got {v:?}")))
    }
}

fn params_of(material: &Bound<'_, PyDict>, gravity: T3) -> PyResult<ClothParams> {
    let m: Material = from_dict(material, "cloth material")?;
    m.validate().py_err()?;
    Ok(ClothParams {
        density: m.density,
        membrane: m.membrane,
        bending: m.kappa_b(),
        gravity: v3(gravity),
    })
}

fn uv_rows(u: &PyReadonlyArray2<'_, f64>) -> PyResult<Vec<[f64; 2]>> {
    if u.ndim() != 2 || u.shape()[1] != 2 {
        return Err(invalid(format!(
            "material coordinates must have shape (N, 2); got {:?}",
            u.shape()
        )));
    }
    Ok(u.as_array().rows().into_iter().map(|r| [r[0], r[1]]).collect())
}

/// Before each step from `t` of `h` s: every keyframed box is aimed at its
/// keyframed pose at `t + h` (its velocity changes at the keys, so one
/// velocity per `advance` would leave the path; spec §4.2's
/// finite-difference velocity between the two poses keeps the box on it,
/// and its EOL vertices with it). Boxes with other motions keep theirs.
fn keyframe_aim(colliders: &[c::Collider]) -> impl FnMut(f64, f64, &mut [BoxObstacle]) + Send + use<> {
    let keyed: Vec<(usize, c::Collider)> = colliders
        .iter()
        .enumerate()
        .filter(|(_, col)| matches!(col.motion(), c::Motion::Keyframes { .. }))
        .map(|(k, col)| (k, col.clone()))
        .collect();
    move |t, h, boxes| {
        for (k, col) in &keyed {
            if let Some(b) = boxes.get_mut(*k) {
                let (center, rotation) = col.pose_at(t + h);
                b.aim(center, rotation, h);
            }
        }
    }
}

/// The largest difference between a box's orientation in the collider and
/// in the stepper that is still rounding (the collider integrates a
/// constant angular velocity in one exponential from its start, the
/// stepper step by step).
const TURN_ROUNDING: f64 = 1e-9;

impl PyEolSimulation {
    /// Boxes from the colliders, and the start checks: no vertex inside a
    /// box or on one of its edges (spec §10: a vertex that starts on a
    /// feature has no defined material flow; the remesher makes EOL
    /// vertices itself when the cloth reaches the edge).
    fn sync_boxes(&mut self) -> PyResult<()> {
        let boxes = self.colliders.iter().map(box_of).collect::<PyResult<Vec<_>>>()?;
        if self.s.step_count == 0 {
            for (k, b) in boxes.iter().enumerate() {
                self.check_clear_of(b, k, true)?;
            }
        }
        // A box turned since the last step by more than rounding (a new
        // pose from set_collider or a callback): the vertices on its
        // features are no longer on them, so they are released. Otherwise
        // the features are re-taken from the collider's pose: a box the
        // stepper turned at its angular velocity arrives here with the
        // collider's pose for the same time, which differs from the
        // stepper's by rounding, and after a load the stepper has no boxes
        // yet, so a run and its reloaded copy both go on from the
        // collider's pose.
        let mut follow = Vec::new();
        for (k, b) in boxes.iter().enumerate() {
            match self.s.boxes.get(k).map(|old| old.rotation) {
                Some(old) if (b.rotation - old).max_abs() > TURN_ROUNDING => self.s.release_box_features(k),
                Some(old) => follow.push((k, b.rotation * old.transpose())),
                None => follow.push((k, Mat3::identity())),
            }
        }
        self.s.boxes = boxes;
        for (k, turn) in follow {
            self.s.follow_turned_box(k, &turn);
        }
        Ok(())
    }

    /// No cloth vertex inside box `b` (collider `k`), and at the start none
    /// on one of its edges either (spec §10: a vertex that starts on a
    /// feature has no defined material flow; the remesher makes EOL vertices
    /// itself when the cloth reaches the edge). A box added later is checked
    /// for the inside only (EOL vertices sit just inside their edges).
    fn check_clear_of(&self, b: &BoxObstacle, k: usize, start: bool) -> PyResult<()> {
        let thr = self.s.thr;
        for (i, &x) in self.s.mesh.x.iter().enumerate() {
            let sd = b.signed_distance(x);
            if sd < if start { 0.0 } else { -thr } && !self.s.mesh.eol[i] {
                return Err(invalid(format!(
                    "cloth vertex {i} is inside obstacle {k} (by {:.3e} m); place the box so the cloth is \
                     outside it (the cloth may touch a face)",
                    -sd
                )));
            }
            if start && b.edges().iter().any(|e| e.segment_distance(x) <= 0.1 * thr) {
                return Err(invalid(format!(
                    "cloth vertex {i} starts on an edge of obstacle {k} (within 0.1·collision_threshold = {} m); \
                     move the cloth off the edge: EOL vertices are made by the remesher when the cloth reaches it",
                    0.1 * thr
                )));
            }
        }
        Ok(())
    }

    /// No cloth vertex on wire `w` (within 0.1·thr).
    fn wire_clear(&self, w: &Wire) -> PyResult<()> {
        let thr = self.s.thr;
        if let Some(i) = self
            .s
            .mesh
            .x
            .iter()
            .position(|&x| w.segment_distance(x) <= 0.1 * thr)
        {
            return Err(invalid(format!(
                "cloth vertex {i} is on the wire (within 0.1·collision_threshold = {} m); move the cloth or the \
                 wire: EOL vertices are made by the remesher when the cloth reaches it",
                0.1 * thr
            )));
        }
        Ok(())
    }

    /// The colliders to the stepper's time after a step or a run (a box
    /// the stepper moved at its velocity is where its motion puts it;
    /// a callback's pose waits for the next frame's call).
    fn follow_colliders(&mut self) -> PyResult<()> {
        for c in &mut self.colliders {
            c.advance_to(self.s.time).py_err()?;
        }
        Ok(())
    }

    fn lumped_masses(&self) -> Vec<f64> {
        self.s.mesh.lumped_masses(self.s.params.density)
    }

    fn vertices(&self, idx: PyReadonlyArray1<'_, i64>) -> PyResult<Vec<usize>> {
        let n = self.s.mesh.x.len();
        idx.as_array()
            .iter()
            .map(|&i| {
                usize::try_from(i).ok().filter(|&i| i < n).ok_or_else(|| {
                    invalid(format!(
                        "vertex index {i} is out of range (the cloth has {n} now)"
                    ))
                })
            })
            .collect()
    }
}

#[pymethods]
impl PyEolSimulation {
    /// The cloth: world positions `(N, 3)` m, material coordinates `(N, 2)`
    /// m, faces `(F, 3)` counter-clockwise in material space, the cloth
    /// material dict, the step `dt` s, gravity m/s², the collision
    /// threshold `thr` m, the collapse length `tau` material m and whether
    /// the remesher runs (`remesh`; off = the Lagrangian baseline).
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(
        x: PyReadonlyArray2<'_, f64>,
        u: PyReadonlyArray2<'_, f64>,
        faces: PyReadonlyArray2<'_, i64>,
        material: &Bound<'_, PyDict>,
        dt: f64,
        gravity: T3,
        thr: f64,
        tau: f64,
        remesh: bool,
    ) -> PyResult<Self> {
        let params = params_of(material, gravity)?;
        let x = to_points(&x, "positions")?;
        let u = uv_rows(&u)?;
        let tri = to_triples(&faces, "faces")?;
        let n = x.len() as i64;
        let faces = tri
            .iter()
            .enumerate()
            .map(|(t, f)| {
                if f.iter().any(|&k| k < 0 || k >= n) {
                    Err(invalid(format!(
                        "face {t} has a vertex index out of range 0..{n}: {f:?}"
                    )))
                } else {
                    Ok(f.map(|k| k as u32))
                }
            })
            .collect::<PyResult<Vec<_>>>()?;
        for (name, v) in [("collision_threshold", thr), ("collapse_length", tau)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(invalid(format!("{name} must be > 0 m; got {v}")));
            }
        }
        let mut s = Stepper::new(x, u, faces, params, dt).py_err()?;
        s.thr = thr;
        s.tau = tau;
        s.remesh = remesh;
        Ok(Self {
            s,
            colliders: Vec::new(),
        })
    }

    /// Replaces the cloth material (the cloth module's material dict).
    fn set_material(&mut self, material: &Bound<'_, PyDict>) -> PyResult<()> {
        self.s.params = params_of(
            material,
            (
                self.s.params.gravity.x,
                self.s.params.gravity.y,
                self.s.params.gravity.z,
            ),
        )?;
        Ok(())
    }

    /// The mode (spec §12.1): "eol" (the method), "lag_static" (no
    /// remesher: the regular Lagrangian baseline), "lag_nonconformal" (the
    /// sizing remesher alone: set it with `set_sizing`), "lag_conformal_avg"
    /// or "lag_conformal_cone" (the contact-conforming remesher with the
    /// vertices it puts on features held Lagrangian, spec §6.4).
    fn set_mode(&mut self, mode: &str) -> PyResult<()> {
        let (remesh, conformal) = match mode {
            "eol" => (true, Conformal::Eol),
            "lag_static" | "lag_nonconformal" => (false, Conformal::Eol),
            "lag_conformal_avg" => (true, Conformal::LagrangianAveraged),
            "lag_conformal_cone" => (true, Conformal::LagrangianCone),
            _ => {
                return Err(invalid(format!(
                    "unknown mode {mode:?}; use \"eol\", \"lag_static\", \"lag_nonconformal\", \
                     \"lag_conformal_avg\" or \"lag_conformal_cone\""
                )));
            }
        };
        self.s.remesh = remesh;
        self.s.conformal = conformal;
        Ok(())
    }

    /// The velocity of new collision vertices (spec §5.7): "eq13" (as much
    /// of the world velocity into `Ẋ` as the feature allows) or
    /// "zero_eulerian" (`Ẋ = 0`).
    fn set_transfer(&mut self, transfer: &str) -> PyResult<()> {
        self.s.eq13 = match transfer {
            "eq13" => true,
            "zero_eulerian" => false,
            _ => {
                return Err(invalid(format!(
                    "unknown transfer {transfer:?}; use \"zero_eulerian\" or \"eq13\""
                )));
            }
        };
        Ok(())
    }

    /// The cloth module's persistent wrinkles on the hinges (beyond the
    /// paper), from the cloth material dict and the switches dict, or off
    /// (`None`). Every hinge starts fresh at its current angle. The tensile
    /// elements are not run on an EOL cloth: asking for them is an error.
    #[pyo3(signature = (material, wrinkles=None))]
    fn set_wrinkles(
        &mut self,
        material: &Bound<'_, PyDict>,
        wrinkles: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        let Some(w) = wrinkles else {
            self.s.set_wrinkles(None);
            return Ok(());
        };
        let m: Material = from_dict(material, "cloth material")?;
        m.validate().py_err()?;
        let w: Wrinkles = from_dict(w, "wrinkles")?;
        if w.tensile_friction || w.tensile_plasticity {
            return Err(invalid(
                "crumple.eol runs the hinge elements of Wrinkles only: set tensile_friction and \
                 tensile_plasticity to False",
            ));
        }
        self.s.set_wrinkles(Some(ElementParams::new(&m, &w)));
        Ok(())
    }

    /// Hold-time warp (spec §4.6): `per_step` s added to every hinge's
    /// clocks after each of the next `steps` steps. Needs the wrinkles.
    fn set_hold_warp(&mut self, per_step: f64, steps: u64) -> PyResult<()> {
        if !(per_step.is_finite() && per_step >= 0.0) {
            return Err(invalid(format!(
                "hold warp must be ≥ 0 s per step; got {per_step}"
            )));
        }
        let Some(w) = self.s.wrinkles.as_mut() else {
            return Err(invalid(
                "the hold warp acts on the wrinkle clocks: add the cloth with wrinkles=Wrinkles(...)",
            ));
        };
        w.warp_per_step = per_step;
        w.warp_steps = steps;
        Ok(())
    }

    /// Hinges `(H, 4)` int64: edge (x0, x1) and wing tips (x2, x3), the
    /// cloth module's order, in the vertex numbering now (the remesher
    /// changes it).
    fn hinges<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<i64>>> {
        let rows: Vec<[u32; 4]> = self.s.mesh.hinges.iter().map(|h| h.vertices).collect();
        rows_to_py(py, &rows)
    }

    /// Signed dihedral angle per hinge `(H,)`, rad, flat = 0.
    fn hinge_angles<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        let m = &self.s.mesh;
        let a: Vec<f64> = m.hinges.iter().map(|h| m.hinge_angle(h)).collect();
        PyArray1::from_vec(py, a)
    }

    /// Per hinge `(H, 3)`: plastic angle θ_p (rad), friction anchor θ_a
    /// (rad), dwell clock (s); `(0, 3)` without the wrinkles.
    fn hinge_states<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let flat: Vec<f64> = self
            .s
            .wrinkles
            .iter()
            .flat_map(|w| &w.hinges)
            .flat_map(|st| [st.plastic.theta_p, st.friction.anchor, st.friction.t_stick])
            .collect();
        let n = flat.len() / 3;
        PyArray1::from_vec(py, flat).reshape([n, 3])
    }

    /// Raises unless `set_sizing` would take this sizing (the checks of
    /// `Sizing::validate`, also for Python's `eol.Sizing`).
    #[staticmethod]
    fn check_sizing(sizing: (f64, f64, f64, f64, f64)) -> PyResult<()> {
        sizing_of(sizing).map(|_| ())
    }

    /// The sizing remesh after the contact-conforming pass (spec §5.6):
    /// `(size_min, size_max, aspect_min, refine_angle, refine_velocity)`
    /// (m, m, 1, rad, m/s), or None for none.
    fn set_sizing(&mut self, sizing: Option<(f64, f64, f64, f64, f64)>) -> PyResult<()> {
        self.s.sizing = sizing.map(sizing_of).transpose()?;
        Ok(())
    }

    /// How the QP is solved: "active_set" (the warm-started fast path,
    /// Clarabel when it misses) or "clarabel" (every step); `verify` also
    /// solves every QP with Clarabel and reports the gap (`qp_gap`).
    #[pyo3(signature = (method, verify=false))]
    fn set_qp(&mut self, method: &str, verify: bool) -> PyResult<()> {
        self.s.qp = match method {
            "active_set" => QpMethod::ActiveSet,
            "clarabel" => QpMethod::Clarabel,
            _ => {
                return Err(invalid(format!(
                    "unknown QP method {method:?}; use \"active_set\" or \"clarabel\""
                )));
            }
        };
        self.s.verify_qp = verify;
        Ok(())
    }

    /// One step of `dt` s (default the configured one).
    #[pyo3(signature = (dt=None))]
    fn step(&mut self, py: Python<'_>, dt: Option<f64>) -> PyResult<()> {
        self.sync_boxes()?;
        let h = dt.unwrap_or(self.s.h);
        if h.is_finite() && h > 0.0 {
            keyframe_aim(&self.colliders)(self.s.time, h, &mut self.s.boxes);
        }
        let s = &mut self.s;
        let r = py.detach(|| s.step_by(h));
        self.follow_colliders()?;
        r.py_err()?;
        Ok(())
    }

    /// Advances by `duration` s, landing on `time + duration` (GIL released;
    /// Ctrl-C stops it at a step boundary).
    fn advance(&mut self, py: Python<'_>, duration: f64) -> PyResult<u64> {
        self.sync_boxes()?;
        let aim = keyframe_aim(&self.colliders);
        let s = &mut self.s;
        let mut sig = SignalCheck::new();
        let r = py.detach(|| s.advance_moving(duration, || sig.stop(), aim));
        self.follow_colliders()?;
        sig.finish(r)
    }

    /// Raises unless `add_wire` would take these arguments (the checks
    /// that need no cloth).
    #[staticmethod]
    fn check_wire(a: T3, b: T3, normal: T3, velocity: T3, friction: f64) -> PyResult<()> {
        wire_of(a, b, normal, velocity, friction).map(|_| ())
    }

    /// Raises unless `add_point` would take these arguments (the checks
    /// that need no cloth).
    #[staticmethod]
    fn check_point(position: T3, normal: T3, velocity: T3, friction: f64) -> PyResult<()> {
        point_of(position, normal, velocity, friction).map(|_| ())
    }

    /// Adds a wire from `a` to `b` (m; spec §4.1: a segment with no
    /// thickness) that the cloth rests on from the side of `normal` (unit,
    /// perpendicular to it), moving at `velocity` m/s, with Coulomb
    /// `friction`. Returns its index.
    fn add_wire(&mut self, a: T3, b: T3, normal: T3, velocity: T3, friction: f64) -> PyResult<usize> {
        let w = wire_of(a, b, normal, velocity, friction)?;
        let thr = self.s.thr;
        if let Some(i) = self
            .s
            .mesh
            .x
            .iter()
            .position(|&x| w.segment_distance(x) <= 0.1 * thr)
        {
            return Err(invalid(format!(
                "cloth vertex {i} is on the wire (within 0.1·collision_threshold = {} m); move the cloth or the \
                 wire: EOL vertices are made by the remesher when the cloth reaches it",
                0.1 * thr
            )));
        }
        self.s.wires.push(w);
        Ok(self.s.wires.len() - 1)
    }

    /// Raises unless `add_wire` would take this segment now (the cloth
    /// check included); adds nothing.
    fn check_wire_now(&self, a: T3, b: T3, normal: T3, velocity: T3, friction: f64) -> PyResult<()> {
        let w = wire_of(a, b, normal, velocity, friction)?;
        self.wire_clear(&w)
    }

    /// Adds a point obstacle (a nail tip) at `position` m that the cloth
    /// rests on from the side of `normal`, moving at `velocity` m/s, with
    /// Coulomb `friction`. Returns its index.
    fn add_point(&mut self, position: T3, normal: T3, velocity: T3, friction: f64) -> PyResult<usize> {
        let p = point_of(position, normal, velocity, friction)?;
        let thr = self.s.thr;
        if let Some(i) = self
            .s
            .mesh
            .x
            .iter()
            .position(|&x| (x - p.position).norm() <= 0.1 * thr)
        {
            return Err(invalid(format!(
                "cloth vertex {i} is on the point (within 0.1·collision_threshold = {} m); move the cloth or the \
                 point",
                0.1 * thr
            )));
        }
        self.s.points.push(p);
        Ok(self.s.points.len() - 1)
    }

    /// Sets wire segment `i`'s velocity (m/s) from the next step on: a
    /// scripted wire starts, stops or turns back (its EOL vertices ride on
    /// it, spec §4.2, since every row reads the obstacle velocity).
    fn set_wire_velocity(&mut self, i: usize, velocity: T3) -> PyResult<()> {
        let w = obstacle_at(&mut self.s.wires, i, "wire segment", "add_wire")?;
        w.velocity = finite3(velocity, "the wire's velocity")?;
        Ok(())
    }

    /// Sets point obstacle `i`'s velocity (m/s) from the next step on.
    fn set_point_velocity(&mut self, i: usize, velocity: T3) -> PyResult<()> {
        let p = obstacle_at(&mut self.s.points, i, "point obstacle", "add_point")?;
        p.velocity = finite3(velocity, "the point's velocity")?;
        Ok(())
    }

    /// The wires now: ends `(K, 2, 3)` m as `(2K, 3)` rows, normals
    /// `(K, 3)`, velocities `(K, 3)` m/s.
    #[allow(clippy::type_complexity)]
    fn wires<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(
        Bound<'py, PyArray2<f64>>,
        Bound<'py, PyArray2<f64>>,
        Bound<'py, PyArray2<f64>>,
    )> {
        let w = &self.s.wires;
        let ends: Vec<Vec3<f64>> = w.iter().flat_map(|w| w.ends).collect();
        let n: Vec<Vec3<f64>> = w.iter().map(|w| w.normal).collect();
        let v: Vec<Vec3<f64>> = w.iter().map(|w| w.velocity).collect();
        Ok((
            points_to_py(py, &ends)?,
            points_to_py(py, &n)?,
            points_to_py(py, &v)?,
        ))
    }

    /// The points now: positions `(P, 3)` m, normals `(P, 3)`, velocities
    /// `(P, 3)` m/s.
    #[allow(clippy::type_complexity)]
    fn points<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(
        Bound<'py, PyArray2<f64>>,
        Bound<'py, PyArray2<f64>>,
        Bound<'py, PyArray2<f64>>,
    )> {
        let p = &self.s.points;
        let x: Vec<Vec3<f64>> = p.iter().map(|p| p.position).collect();
        let n: Vec<Vec3<f64>> = p.iter().map(|p| p.normal).collect();
        let v: Vec<Vec3<f64>> = p.iter().map(|p| p.velocity).collect();
        Ok((
            points_to_py(py, &x)?,
            points_to_py(py, &n)?,
            points_to_py(py, &v)?,
        ))
    }

    #[getter]
    fn time(&self) -> f64 {
        self.s.time
    }

    #[getter]
    fn step_count(&self) -> u64 {
        self.s.step_count
    }

    #[getter]
    fn dt(&self) -> f64 {
        self.s.h
    }

    /// Raises unless `collider` is an obstacle EOL takes (a box, static,
    /// moving, turning or keyframed, not sticky).
    #[staticmethod]
    fn check_collider(collider: &PyCollider) -> PyResult<()> {
        box_of(&collider.inner).map(|_| ())
    }

    fn add_collider(&mut self, collider: &PyCollider) -> PyResult<usize> {
        let b = box_of(&collider.inner)?;
        self.check_clear_of(&b, self.colliders.len(), self.s.step_count == 0)?;
        self.colliders.push(collider.inner.clone());
        Ok(self.colliders.len() - 1)
    }

    fn remove_collider(&mut self, index: usize) -> PyResult<()> {
        let i = collider_index(index, self.colliders.len())?;
        // The stepper's boxes as the colliders are now (after a load they
        // are only set at the next step), then its features go with it
        // (their vertices released), later boxes' indices shift down.
        self.s.boxes = self.colliders.iter().map(box_of).collect::<PyResult<Vec<_>>>()?;
        self.colliders.remove(i);
        self.s.remove_box(i);
        Ok(())
    }

    fn set_collider(&mut self, index: usize, collider: &PyCollider) -> PyResult<()> {
        box_of(&collider.inner)?;
        let i = collider_index(index, self.colliders.len())?;
        self.colliders[i] = collider.inner.clone();
        Ok(())
    }

    fn get_collider(&self, index: usize) -> PyResult<PyCollider> {
        let i = collider_index(index, self.colliders.len())?;
        Ok(PyCollider {
            inner: self.colliders[i].clone(),
        })
    }

    /// World positions, `(N, 3)` float64 m.
    fn positions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        points_to_py(py, &self.s.mesh.x)
    }

    /// World velocities ẋ, `(N, 3)` float64 m/s.
    fn velocities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        points_to_py(py, &self.s.xd)
    }

    /// Sets the world velocities from `(N, 3)` m/s (finite).
    fn set_velocities(&mut self, v: PyReadonlyArray2<'_, f64>) -> PyResult<()> {
        let v = to_points(&v, "velocities")?;
        if v.len() != self.s.xd.len() || v.iter().any(|x| !x.is_finite()) {
            return Err(invalid(format!(
                "velocities must be finite with shape ({}, 3)",
                self.s.xd.len()
            )));
        }
        self.s.xd = v;
        Ok(())
    }

    /// Material coordinates X, `(N, 2)` float64 m.
    fn material_coordinates<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let flat: Vec<f64> = self.s.mesh.u.iter().flatten().copied().collect();
        PyArray1::from_vec(py, flat).reshape([self.s.mesh.u.len(), 2])
    }

    /// Material velocities Ẋ, `(N, 2)` float64 m/s (zero off the features).
    fn material_velocities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let flat: Vec<f64> = self.s.ud.iter().flatten().copied().collect();
        PyArray1::from_vec(py, flat).reshape([self.s.ud.len(), 2])
    }

    /// Faces, `(F, 3)` int64.
    fn faces<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<i64>>> {
        rows_to_py(py, &self.s.mesh.faces)
    }

    /// Per vertex: EOL, `(N,)` bool.
    fn is_eol<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<bool>> {
        PyArray1::from_vec(py, self.s.mesh.eol.clone())
    }

    /// Per vertex: the kind of its feature (−1 none, 0 corner, 1 edge, 2
    /// wire, 3 point) and its obstacle's index among those of its kind
    /// (colliders for edges and corners, wires, points; −1 none), `(N,)`
    /// int64 each.
    fn features<'py>(&self, py: Python<'py>) -> (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>) {
        let kind: Vec<i64> = self
            .s
            .features
            .iter()
            .map(|f| f.map_or(-1, |f| f.kind()))
            .collect();
        let owner: Vec<i64> = self
            .s
            .features
            .iter()
            .map(|f| f.map_or(-1, |f| i64::from(f.obstacle())))
            .collect();
        (PyArray1::from_vec(py, kind), PyArray1::from_vec(py, owner))
    }

    /// Persistent vertex ids, `(N,)` uint32 (kept by a vertex through
    /// remeshing, never reused).
    fn vertex_ids<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        PyArray1::from_vec(py, self.s.ids.clone())
    }

    /// Per-vertex lumped mass (ρ times a third of the material area of the
    /// faces around it), `(N,)` float64 kg.
    fn masses<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(py, self.lumped_masses())
    }

    /// Pins the vertices `indices` (now's numbering) to `targets` `(K, 3)`
    /// m, moving on with `velocities` `(K, 3)` m/s. Replaces earlier pins
    /// of the same vertices.
    fn pin(
        &mut self,
        indices: PyReadonlyArray1<'_, i64>,
        targets: PyReadonlyArray2<'_, f64>,
        velocities: PyReadonlyArray2<'_, f64>,
    ) -> PyResult<()> {
        let idx = self.vertices(indices)?;
        let t = to_points(&targets, "targets")?;
        let v = to_points(&velocities, "velocities")?;
        if t.len() != idx.len() || v.len() != idx.len() {
            return Err(invalid(format!(
                "targets and velocities must have shape ({}, 3) like the indices",
                idx.len()
            )));
        }
        if t.iter().chain(&v).any(|p| !p.is_finite()) {
            return Err(invalid("pin targets and velocities must be finite"));
        }
        for (k, &i) in idx.iter().enumerate() {
            if self.s.mesh.eol[i] {
                return Err(invalid(format!(
                    "vertex {i} is on a feature (EOL) and cannot be pinned"
                )));
            }
            let id = self.s.ids[i];
            self.s.pins.retain(|p| p.id != id);
            self.s.pins.push(Pin {
                id,
                target: t[k],
                velocity: v[k],
            });
        }
        self.s.pins.sort_by_key(|p| p.id);
        Ok(())
    }

    /// Releases the pins of `indices` (None: every pin).
    #[pyo3(signature = (indices=None))]
    fn release(&mut self, indices: Option<PyReadonlyArray1<'_, i64>>) -> PyResult<()> {
        match indices {
            None => self.s.pins.clear(),
            Some(i) => {
                let ids: Vec<u32> = self.vertices(i)?.into_iter().map(|i| self.s.ids[i]).collect();
                self.s.pins.retain(|p| !ids.contains(&p.id));
            }
        }
        Ok(())
    }

    /// The pinned vertices now, `(K,)` int64 (the remesher never removes
    /// or converts a pinned vertex, so every pin is listed).
    fn pinned<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let v: Vec<i64> = self
            .s
            .pins
            .iter()
            .filter_map(|p| self.s.vertex_of(p.id))
            .map(|i| i as i64)
            .collect();
        PyArray1::from_vec(py, v)
    }

    /// Σ ½ m |ẋ|² over the vertices' world velocities with the lumped
    /// masses of `masses`, J.
    fn kinetic_energy(&self) -> f64 {
        let m = self.lumped_masses();
        self.s
            .xd
            .iter()
            .zip(&m)
            .map(|(v, &mi)| 0.5 * mi * v.norm_squared())
            .sum()
    }

    /// The last step: KKT residuals, solver passes (active-set passes, or
    /// Clarabel's iterations when it solved the step), the active set's
    /// numeric factorizations and structure analyses, row
    /// counts, contacts, remesh counts and its Table 1 timings (s).
    fn last_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = &self.s.last;
        let d = PyDict::new(py);
        d.set_item("kkt_stationarity", r.kkt.stationarity)?;
        d.set_item("kkt_equality", r.kkt.equality)?;
        d.set_item("kkt_inequality", r.kkt.inequality)?;
        d.set_item("kkt_complementarity", r.kkt.complementarity)?;
        d.set_item("kkt_dual", r.kkt.dual)?;
        d.set_item("qp_iterations", r.iterations)?;
        d.set_item("qp_factorizations", r.factorizations)?;
        d.set_item("qp_analyses", r.analyses)?;
        d.set_item("qp_clarabel", r.clarabel)?;
        d.set_item("qp_gap", r.qp_gap)?;
        d.set_item("qp_gap_raw", r.qp_gap_raw)?;
        d.set_item("substeps", r.substeps)?;
        d.set_item("equality_rows", r.rows.0)?;
        d.set_item("inequality_rows", r.rows.1)?;
        d.set_item("obstacle_contacts", r.contacts)?;
        d.set_item("eol_created", r.remesh.created)?;
        d.set_item("eol_released", r.remesh.released)?;
        d.set_item("collapsed_edges", r.remesh.collapsed)?;
        d.set_item("mended_triangles", r.remesh.mended)?;
        d.set_item("flipped_edges", r.remesh.flipped)?;
        d.set_item("split_edges", r.remesh.refined)?;
        d.set_item("short_kept", r.remesh.short_kept)?;
        d.set_item("sizing_split_edges", r.adapt.split)?;
        d.set_item("sizing_collapsed_edges", r.adapt.collapsed)?;
        d.set_item("sizing_flipped_edges", r.adapt.flipped)?;
        d.set_item("eol_vertices", self.s.mesh.eol.iter().filter(|e| **e).count())?;
        d.set_item("hinge_slips", r.wrinkle_events.0)?;
        d.set_item("hinge_yields", r.wrinkle_events.1)?;
        for (k, v) in [
            ("cd", r.timings.cd),
            ("rm", r.timings.rm),
            ("mf", r.timings.mf),
            ("vi", r.timings.vi),
        ] {
            d.set_item(format!("time_{k}"), v)?;
        }
        Ok(d)
    }

    /// Seconds per Table 1 bucket since the start: `cd`, `rm`, `mf`, `vi`.
    fn timings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let t = self.s.timings;
        let d = PyDict::new(py);
        for (k, v) in [("cd", t.cd), ("rm", t.rm), ("mf", t.mf), ("vi", t.vi)] {
            d.set_item(k, v)?;
        }
        Ok(d)
    }

    /// The state as named arrays (checkpoints).
    fn state_arrays<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        arrays_to_py(py, &self.s.checkpoint())
    }

    /// Restores the arrays written by `state_arrays`.
    fn set_state_arrays(&mut self, arrays: &Bound<'_, PyDict>) -> PyResult<()> {
        let a = arrays_from_py(arrays)?;
        self.s.restore(&a).py_err()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyEolSimulation>()?;
    Ok(())
}
