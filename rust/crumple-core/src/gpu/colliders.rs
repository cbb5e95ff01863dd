//! Packed colliders for GPU solvers: the records that the collide WGSL
//! library (`shaders/collide/*.wgsl`, [`super::wgsl::COLLIDE_WGSL`]) reads,
//! and the mesh distance grids they point into.
//!
//! [`pack_collider`] writes a [`Collider`]'s *current* state (pose and rigid
//! velocity as of its last [`Collider::advance_to`] or
//! [`Collider::set_pose`]), so callers repack every step after moving the
//! colliders; it is 32 floats and costs nothing. [`collider_sdf_words`] gives
//! a mesh collider's node values once; the caller concatenates those of all
//! colliders into the `collider_sdf` array and passes each collider its
//! offset in that array.
//!
//! The WGSL function `collider_response(c, x, v)` of the library is
//! `Collider::query` followed by `boundary_response` in f32: the step the
//! CPU MPM `grid_update` applies per grid node and collider, in collider
//! order. The record layout is documented in `shaders/collide/collider.wgsl`;
//! the kind and mode codes reach it through the generated prelude
//! ([`wgsl_constants`]).

use crate::collide::{BoundaryMode, Collider, Shape};
use crate::{Error, Result};

/// Floats per packed collider (`array<vec4<f32>, 8>` in the shader).
pub const COLLIDER_WORDS: usize = 32;

/// Shape kinds, as stored in word 3 (`v[0].w`).
const KIND_PLANE: u32 = 0;
const KIND_SPHERE: u32 = 1;
const KIND_BOX: u32 = 2;
const KIND_CAPSULE: u32 = 3;
const KIND_CYLINDER: u32 = 4;
const KIND_MESH: u32 = 5;

/// The mesh offset is stored as two exactly representable f32 values,
/// `offset / 2¹⁶` and `offset % 2¹⁶`, so every u32 offset round-trips.
const OFFSET_SPLIT: u32 = 1 << 16;
/// Largest integer every smaller one of which f32 holds exactly (2²⁴).
const F32_EXACT_INT: usize = 1 << 24;

/// Boundary modes, as stored in word 7 (`v[1].w`).
const fn mode_code(mode: BoundaryMode) -> u32 {
    match mode {
        BoundaryMode::Sticky => 0,
        BoundaryMode::Slip => 1,
        BoundaryMode::Separate => 2,
    }
}

/// The record codes, by their WGSL names (the generated prelude, `wgsl.rs`,
/// writes them; the shader only names them).
pub(crate) const WGSL_CODES: [(&str, u32); 9] = [
    ("CO_KIND_PLANE", KIND_PLANE),
    ("CO_KIND_SPHERE", KIND_SPHERE),
    ("CO_KIND_BOX", KIND_BOX),
    ("CO_KIND_CAPSULE", KIND_CAPSULE),
    ("CO_KIND_CYLINDER", KIND_CYLINDER),
    ("CO_KIND_MESH", KIND_MESH),
    ("CO_MODE_STICKY", mode_code(BoundaryMode::Sticky)),
    ("CO_MODE_SLIP", mode_code(BoundaryMode::Slip)),
    ("CO_MODE_SEPARATE", mode_code(BoundaryMode::Separate)),
];

/// Fills a record, converting each value to f32 and refusing values f32
/// cannot hold (overflow to ±∞, or a positive size that underflows to 0).
struct Record<'a> {
    words: [f32; COLLIDER_WORDS],
    shape: &'a str,
}

impl Record<'_> {
    fn out_of_range(&self, what: std::fmt::Arguments<'_>, value: f64) -> Error {
        Error::Backend(format!(
            "{} collider: {what} = {value:e} is outside the f32 range of the GPU backend (±{:e}); \
             rescale the scene or use backend=\"cpu\"",
            self.shape,
            f32::MAX
        ))
    }

    // Names are `format_args!`, formatted only on error: packing runs every
    // step and must not allocate.
    fn put(&mut self, at: usize, what: std::fmt::Arguments<'_>, value: f64) -> Result<()> {
        let x = value as f32;
        if !x.is_finite() {
            return Err(self.out_of_range(what, value));
        }
        self.words[at] = x;
        Ok(())
    }

    fn put_vec(&mut self, at: usize, what: &str, v: crate::math::Vec3<f64>) -> Result<()> {
        for (a, axis) in ["x", "y", "z"].iter().enumerate() {
            self.put(at + a, format_args!("{what}.{axis}"), v[a])?;
        }
        Ok(())
    }

    /// A size that must stay positive in f32 (radius, half extent, dx).
    fn put_size(&mut self, at: usize, what: &str, value: f64) -> Result<()> {
        self.put(at, format_args!("{what}"), value)?;
        if value > 0.0 && self.words[at] <= 0.0 {
            return Err(Error::Backend(format!(
                "{} collider: {what} = {value:e} m underflows to 0 in the f32 GPU backend; \
                 rescale the scene or use backend=\"cpu\"",
                self.shape
            )));
        }
        Ok(())
    }
}

/// The GPU record of `c`'s current state: kind, pose (translation and the
/// rotation's columns), linear and angular velocity (for the surface
/// velocity `v + ω × (x − translation)`), shape parameters, boundary mode
/// and friction; for a mesh collider also its grid geometry and
/// `sdf_offset`, the index of its first node value in the shared
/// `collider_sdf` array (ignored for analytic shapes). Call it again after
/// every `advance_to`/`set_pose`: the record does not follow the motion.
///
/// Every motion packs (the record holds the evaluated pose, not the
/// motion). Errors with [`Error::Backend`] when a value does not fit in
/// f32 (|x| > 3.4e38, or a positive size below 1e-45), or when a mesh grid
/// does not fit the record's integer fields (more than 2²⁴ nodes along an
/// axis, or `sdf_offset` + node count beyond the u32 range).
pub fn pack_collider(c: &Collider, sdf_offset: u32) -> Result<[f32; COLLIDER_WORDS]> {
    let shape = c.shape();
    let mut r = Record {
        words: [0.0; COLLIDER_WORDS],
        shape: shape.name(),
    };
    r.put_vec(0, "translation", c.translation())?;
    let rot = c.rotation();
    for (j, name) in ["rotation column 0", "rotation column 1", "rotation column 2"]
        .iter()
        .enumerate()
    {
        r.put_vec(4 + 4 * j, name, rot.col(j))?;
    }
    r.words[7] = mode_code(c.mode()) as f32;
    r.put(11, format_args!("friction"), c.friction())?;
    r.put_vec(16, "linear_velocity", c.linear_velocity())?;
    r.put_vec(20, "angular_velocity", c.angular_velocity())?;
    let kind = match shape {
        Shape::Plane(p) => {
            r.put_vec(24, "plane point", p.point())?;
            r.put_vec(28, "plane normal", p.unit_normal())?;
            KIND_PLANE
        }
        Shape::Sphere(s) => {
            r.put_size(24, "sphere radius", s.radius())?;
            KIND_SPHERE
        }
        Shape::Box(b) => {
            let h = b.half_extents();
            r.put_size(24, "box half_extents.x", h.x)?;
            r.put_size(25, "box half_extents.y", h.y)?;
            r.put_size(26, "box half_extents.z", h.z)?;
            KIND_BOX
        }
        Shape::Capsule(cap) => {
            r.put_size(24, "capsule half_height", cap.half_height())?;
            r.put_size(25, "capsule radius", cap.radius())?;
            KIND_CAPSULE
        }
        Shape::Cylinder(cyl) => {
            r.put_size(24, "cylinder radius", cyl.radius())?;
            r.put_size(25, "cylinder half_height", cyl.half_height())?;
            KIND_CYLINDER
        }
        Shape::Mesh(m) => {
            let res = m.resolution();
            if let Some(a) = (0..3).find(|&a| res[a] > F32_EXACT_INT) {
                return Err(Error::Backend(format!(
                    "mesh collider: {} grid nodes along axis {a} exceed the GPU record's limit of \
                     {F32_EXACT_INT}; increase dx or use backend=\"cpu\"",
                    res[a]
                )));
            }
            let nodes = m.values().len() as u64;
            if u64::from(sdf_offset) + nodes > u64::from(u32::MAX) + 1 {
                return Err(Error::Backend(format!(
                    "mesh collider: node values at offset {sdf_offset} + {nodes} nodes run past the \
                     u32 index range of the GPU collider_sdf array; use coarser mesh grids or \
                     backend=\"cpu\""
                )));
            }
            r.put_vec(24, "mesh grid lower", m.lower())?;
            r.put_size(27, "mesh grid dx", m.dx())?;
            for (a, &n) in res.iter().enumerate() {
                r.words[28 + a] = n as f32;
            }
            r.words[19] = (sdf_offset / OFFSET_SPLIT) as f32;
            r.words[23] = (sdf_offset % OFFSET_SPLIT) as f32;
            // The shader recomputes the far corner, lower + (n − 1)·dx.
            let upper = m.upper();
            if let Some(a) = (0..3).find(|&a| !(upper[a] as f32).is_finite()) {
                return Err(r.out_of_range(format_args!("mesh grid upper corner[{a}]"), upper[a]));
            }
            KIND_MESH
        }
    };
    r.words[3] = kind as f32;
    Ok(r.words)
}

/// The node values (meters, x fastest) of a mesh collider's distance grid
/// as f32, to be placed in the shared `collider_sdf` array at the offset
/// passed to [`pack_collider`]; empty for analytic shapes. Values beyond the
/// f32 range are clamped to ±`f32::MAX` (sign kept).
pub fn collider_sdf_words(c: &Collider) -> Vec<f32> {
    match c.shape() {
        Shape::Mesh(m) => m
            .values()
            .iter()
            .map(|&v| v.clamp(-f64::from(f32::MAX), f64::from(f32::MAX)) as f32)
            .collect(),
        _ => Vec::new(),
    }
}

/// `collider_sdf_words(c).len()` without building the values.
pub fn collider_sdf_words_len(c: &Collider) -> usize {
    match c.shape() {
        Shape::Mesh(m) => m.values().len(),
        _ => 0,
    }
}

#[cfg(test)]
#[path = "colliders_tests.rs"]
mod tests;
