//! G2P of spec §3.7: velocities, APIC affine matrices and velocity gradients gathered from the grid. GPU twin: `gpu/shaders/g2p.wgsl`.

use super::*;

impl<T: Real> Solver<T> {
    /// Step 6: G2P with RPIC-style damping of the symmetric part of C (spec
    /// §3.7, paper Eq. 2) and the velocity gradient ∇v̂_p (types i and iii
    /// only: mesh vertices carry no deformation).
    ///
    /// With `MLS` the velocity gradient is the undamped APIC matrix `C̃`
    /// (spec §9 A15 option), and the kernel-gradient sum is skipped.
    pub(super) fn g2p<const K: usize, const MLS: bool>(
        &mut self,
        model: &Model<T>,
        state: &mut State<T>,
        frame: &GridFrame<T>,
        d_inv: T,
        make: impl Fn(Vec3<T>, T) -> Stencil<T, K> + Sync,
    ) {
        let grid = &self.grid;
        let scale = d_inv * frame.dx; // (x_i − x_p) = h·offset, C̃ = B 𝔇⁻¹
        let x = &state.x;
        let vert = model.vert.clone();
        state
            .v
            .par_iter_mut()
            .zip(state.c.par_iter_mut())
            .zip(self.grad_v.par_iter_mut())
            .enumerate()
            .for_each(|(p, ((vp, cp), gp))| {
                let nbh = &grid.neighbours[grid.particle_block[p] as usize];
                let st = make(frame.grid_units(x[p]), frame.inv_dx);
                let ax = AxisTables::new(&st);
                let want_grad = !MLS && !vert.contains(&p);
                let mut v = Vec3::zero();
                // columns of B = Σ w v̂ offᵀ and of ∇v = Σ v̂ ∇wᵀ. The weights
                // factor per axis (w = wa·wb·wc, off = (offa, offb, offc)),
                // so the sums are nested: the innermost loop gathers only
                // Σ_c wc v̂, Σ_c wc offc v̂ (and Σ_c dwc v̂), and the outer
                // axes are applied once per row instead of once per node. The
                // GPU's g2p.wgsl nests its sums the same way, in this order.
                let (mut b0, mut b1, mut b2) = (Vec3::zero(), Vec3::zero(), Vec3::zero());
                let (mut g0, mut g1, mut g2) = (Vec3::zero(), Vec3::zero(), Vec3::zero());
                for a in 0..K {
                    let (wa, dwa) = (st.w[0][a], st.dw[0][a]);
                    // Σ_b wb s, Σ_b wb offb s, Σ_b wb sc, Σ_b dwb s, Σ_b wb sd
                    let (mut sa, mut sa_ob, mut sa_c) = (Vec3::zero(), Vec3::zero(), Vec3::zero());
                    let (mut sa_db, mut sa_dc) = (Vec3::zero(), Vec3::zero());
                    for bb in 0..K {
                        let (wb, dwb) = (st.w[1][bb], st.dw[1][bb]);
                        let row = ax.blk[0][a] * 4 + ax.blk[1][bb] * 2;
                        let lrow = ax.loc[0][a] * 16 + ax.loc[1][bb] * 4;
                        // Σ_c wc v̂, Σ_c wc offc v̂, Σ_c dwc v̂
                        let (mut s, mut sc, mut sd) = (Vec3::zero(), Vec3::zero(), Vec3::zero());
                        for c in 0..K {
                            let blk = nbh[row + ax.blk[2][c]] as usize;
                            let vi = grid.nodes[blk * BLOCK_NODES + lrow + ax.loc[2][c]].mv;
                            s += vi * st.w[2][c];
                            sc += vi * ax.w_off[c];
                            if want_grad {
                                sd += vi * st.dw[2][c];
                            }
                        }
                        sa += s * wb;
                        sa_ob += s * (wb * ax.off[1][bb]);
                        sa_c += sc * wb;
                        if want_grad {
                            sa_db += s * dwb;
                            sa_dc += sd * wb;
                        }
                    }
                    v += sa * wa;
                    b0 += sa * (wa * ax.off[0][a]);
                    b1 += sa_ob * wa;
                    b2 += sa_c * wa;
                    if want_grad {
                        g0 += sa * dwa;
                        g1 += sa_db * wa;
                        g2 += sa_dc * wa;
                    }
                }
                let ct = Mat3::from_cols(b0, b1, b2) * scale;
                let nu = model.damping[p];
                let skew = (ct - ct.transpose()) * T::HALF;
                let sym = ct.symmetric_part();
                *vp = v;
                *cp = skew + sym * (T::ONE - nu);
                *gp = if MLS { ct } else { Mat3::from_cols(g0, g1, g2) };
            });
    }
}
