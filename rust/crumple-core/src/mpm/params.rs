//! Solver parameters (spec §2.5, §3.2, §6.4): plain values with defaults.

use crate::error::Result;
use crate::invalid;
use crate::math::Vec3;

use super::grid::{BLOCK, MAX_NODES_PER_AXIS};

/// Interpolation kernel (spec §3.1). Quadratic is the paper's and our default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Kernel {
    /// Quadratic B-spline, 3 nodes per axis.
    #[default]
    Quadratic,
    /// Cubic B-spline, 4 nodes per axis (smoother, 2.4× the grid work).
    Cubic,
}

/// How stress reaches the grid and how the velocity gradient is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Transfer {
    /// The paper's discretisation (spec §3.4, §3.7): forces through the
    /// kernel gradient `∇w`, velocity gradient `Σ v̂ ∇wᵀ`.
    #[default]
    Apic,
    /// MLS-MPM (Hu et al. 2018): `∇w ≈ 𝔇⁻¹ w (x_i − x_p)` for forces and the
    /// APIC matrix `C̃` as velocity gradient (spec §3.4 option, §9 A15). One
    /// fused affine scatter; cheaper, and what MLS-MPM peers compute.
    MlsMpm,
}

/// What to do with a particle that leaves the simulation domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OutOfDomain {
    /// Stop with an error naming the particle (default: leaving the box is a setup mistake).
    #[default]
    Error,
    /// Clamp the particle back inside and zero its outward velocity (a sticky wall far away).
    Clamp,
    /// Delete volumetric particles (sand, goo, solids) that leave; mesh
    /// vertices and elements cannot be deleted and still raise the error.
    Remove,
}

/// Parameters of one MPM simulation. Lengths in metres, times in seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct SolverParams {
    /// Lower corner of the domain, m.
    pub lower: Vec3<f64>,
    /// Upper corner of the domain, m.
    pub upper: Vec3<f64>,
    /// Grid spacing h, m.
    pub dx: f64,
    /// Gravity, m/s² (default (0, −9.81, 0): y up, spec §6.4).
    pub gravity: Vec3<f64>,
    /// Courant number: no particle moves more than `cfl·h` per step (spec §3.2: 0.3).
    pub cfl: f64,
    /// Largest allowed step, s (the "Δt" column of the paper's Table 2).
    pub dt_max: f64,
    /// Interpolation kernel.
    pub kernel: Kernel,
    /// Nodes within this many cells of the domain boundary get a slip wall
    /// (spec §6.4: 3-node padding). Particles must stay inside the padded box.
    pub boundary_padding: usize,
    /// Policy for particles leaving the padded domain.
    pub out_of_domain: OutOfDomain,
    /// Force and velocity-gradient discretisation.
    pub transfer: Transfer,
    /// Run the cloth/strand return maps (spec §5). Off only for the
    /// "elasticity without plasticity" ablation (spec E6 c): surfaces then
    /// resist sliding and separation elastically.
    pub codim_return_map: bool,
    /// Move element particles to their vertices' barycentre after each step
    /// (spec §3.8: the paper's enslaving, which keeps elements on the mesh).
    /// Off only for tests: then element particles move with their own
    /// velocity and angular momentum is conserved exactly (spec E10).
    pub enslave_elements: bool,
    /// Advect the in-manifold (tangent) columns of F̃ with the grid like the
    /// normal ones, instead of taking them from the mesh: the "all columns
    /// Eulerian" ablation of spec E6 (a) (paper Fig. 10), which has no mesh
    /// forces and shows numerical fracture. Set before adding objects. The
    /// Python API also switches `enslave_elements` off with it, so the
    /// ablation is the paper's meshless MPM (no mesh operation at all).
    pub eulerian_tangents: bool,
}

impl Default for SolverParams {
    fn default() -> Self {
        Self {
            lower: Vec3::zero(),
            upper: Vec3::splat(1.0),
            dx: 1.0 / 64.0,
            gravity: Vec3::new(0.0, -9.81, 0.0),
            cfl: 0.3,
            dt_max: 1e-3,
            kernel: Kernel::Quadratic,
            boundary_padding: 3,
            out_of_domain: OutOfDomain::Error,
            transfer: Transfer::Apic,
            codim_return_map: true,
            enslave_elements: true,
            eulerian_tangents: false,
        }
    }
}

impl SolverParams {
    /// Checks every field; the message names the field and how to fix it.
    pub fn validate(&self) -> Result<()> {
        if !(self.dx.is_finite() && self.dx > 0.0) {
            return invalid!(
                "dx must be a finite number > 0 (the grid spacing in metres); got {}",
                self.dx
            );
        }
        if !(self.lower.is_finite() && self.upper.is_finite()) {
            return invalid!("lower and upper must be finite");
        }
        for a in 0..3 {
            if self.upper[a] <= self.lower[a] {
                return invalid!(
                    "upper must exceed lower on every axis; axis {a} has lower {} and upper {}",
                    self.lower[a],
                    self.upper[a]
                );
            }
            let nodes = ((self.upper[a] - self.lower[a]) / self.dx).ceil() as usize + 1;
            if nodes + BLOCK > MAX_NODES_PER_AXIS {
                return invalid!(
                    "the domain is {nodes} nodes long on axis {a}; at most {} fit. Use a larger dx or a smaller domain",
                    MAX_NODES_PER_AXIS - BLOCK
                );
            }
            if nodes < 2 * self.boundary_padding + 3 {
                return invalid!(
                    "the domain is only {nodes} nodes long on axis {a}; it needs at least {} (2 × padding + 3). Use a smaller dx",
                    2 * self.boundary_padding + 3
                );
            }
        }
        if !self.gravity.is_finite() {
            return invalid!("gravity must be finite");
        }
        if !(self.cfl > 0.0 && self.cfl <= 1.0) {
            return invalid!("cfl must be in (0, 1]; got {}", self.cfl);
        }
        if !(self.dt_max.is_finite() && self.dt_max > 0.0) {
            return invalid!("dt_max must be > 0; got {}", self.dt_max);
        }
        if self.boundary_padding < 2 {
            return invalid!(
                "boundary_padding must be at least 2 cells (the kernel reaches 2 nodes); got {}",
                self.boundary_padding
            );
        }
        Ok(())
    }

    /// Number of grid nodes per axis.
    pub fn nodes_per_axis(&self) -> [usize; 3] {
        let n = |a: usize| ((self.upper[a] - self.lower[a]) / self.dx).ceil() as usize + 1;
        [n(0), n(1), n(2)]
    }
}

crate::named_enum!(Kernel { "quadratic" => Quadratic, "cubic" => Cubic });
crate::named_enum!(Transfer { "apic" => Apic, "mls" => MlsMpm });
crate::named_enum!(OutOfDomain { "error" => Error, "clamp" => Clamp, "remove" => Remove });

// The Python names of the solver settings (`crumple.mpm.Simulation(...)`), listed once.
// `enslave_elements` is not among them: the Python API derives it from `eulerian_tangents`.
crate::params!(SolverParams, base = SolverParams::default(), {
    "lower": vec3 = lower,
    "upper": vec3 = upper,
    "dx": f64 = dx,
    "gravity": vec3 = gravity,
    "cfl": f64 = cfl,
    "dt_max": f64 = dt_max,
    "kernel": name<Kernel> = kernel,
    "boundary_padding": int = boundary_padding,
    "out_of_domain": name<OutOfDomain> = out_of_domain,
    "transfer": name<Transfer> = transfer,
    "return_map": bool = codim_return_map,
    "eulerian_tangents": bool = eulerian_tangents,
});
