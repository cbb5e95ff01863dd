//! Grid update of spec §3.5 with the boundary response of §3.6 (walls and colliders). GPU twin: `gpu/shaders/grid_update.wgsl`.

use super::*;

impl<T: Real> Solver<T> {
    /// Steps 4–5: grid velocities with gravity (spec §3.5), then domain walls
    /// and colliders (§3.6), node by node.
    pub(super) fn grid_update(
        &mut self,
        params: &SolverParams,
        frame: &GridFrame<T>,
        dt: T,
        colliders: &[Collider],
    ) {
        let g: Vec3<T> = params.gravity.cast();
        let pad = params.boundary_padding as u32;
        let nmax = frame.nodes.map(|n| n as u32 - 1 - pad);
        let lower = params.lower;
        let dx = params.dx;
        let keys = &self.grid.block_keys;
        let nodes = &mut self.grid.nodes;
        // A collider can only touch a block whose centre is within reach: the
        // colliders' signed distances are 1-Lipschitz (√3 for the trilinear
        // mesh grid), so a centre farther than √3 × the block's half diagonal
        // (1.5√3 h) from the surface rules out every node of the block.
        let reach = 4.5 * dx * 1.001;
        let cull = colliders.len() <= 64;
        nodes
            .par_chunks_mut(BLOCK_NODES)
            .enumerate()
            .for_each(|(b, blk)| {
                let mut near: u64 = u64::MAX;
                if cull && !colliders.is_empty() {
                    let [bx, by, bz] = crate::mpm::grid::key_coords(keys[b]);
                    let centre = lower
                        + Vec3::new(
                            bx as f64 * 4.0 + 1.5,
                            by as f64 * 4.0 + 1.5,
                            bz as f64 * 4.0 + 1.5,
                        ) * dx;
                    near = 0;
                    for (i, c) in colliders.iter().enumerate() {
                        if c.phi(centre) <= reach {
                            near |= 1 << i;
                        }
                    }
                }
                for (l, node) in blk.iter_mut().enumerate() {
                    // An empty node, or one whose mass is subnormal: a particle
                    // sitting within rounding of a kernel's outer zero gives
                    // it w·m ≈ 1e-43 kg in f32, and 1/m would overflow to inf
                    // (a NaN velocity in G2P). Such a node carries nothing.
                    if node.mass < T::MIN_POSITIVE {
                        node.mv = Vec3::zero();
                        continue;
                    }
                    let mut v = node.mv * (T::ONE / node.mass) + g * dt;
                    let ijk = grid_coords(keys, b, l);
                    // Domain walls: slip (remove the outward normal component).
                    for a in 0..3 {
                        if (ijk[a] < pad && v[a] < T::ZERO) || (ijk[a] > nmax[a] && v[a] > T::ZERO) {
                            v[a] = T::ZERO;
                        }
                    }
                    if near != 0 && !colliders.is_empty() {
                        let xw = lower + Vec3::new(ijk[0] as f64, ijk[1] as f64, ijk[2] as f64) * dx;
                        for (i, c) in colliders.iter().enumerate() {
                            if cull && near & (1 << i) == 0 {
                                continue;
                            }
                            if let Some(ct) = c.query(xw) {
                                let vd: Vec3<f64> = v.cast();
                                let out =
                                    boundary_response(vd, ct.velocity, ct.normal, c.mode(), c.friction());
                                v = out.cast();
                            }
                        }
                    }
                    node.mv = v;
                }
            });
    }
}
