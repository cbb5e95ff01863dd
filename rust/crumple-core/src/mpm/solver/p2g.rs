//! P2G of spec §3.4: mass, momentum and force scattered to the grid with a coloured, thread-count independent order. GPU twin: `gpu/shaders/p2g.wgsl`.

use super::*;

impl<T: Real> Solver<T> {
    /// Step 3: APIC P2G with fused forces (spec §3.4, fused form):
    /// `m_i += w m`, `p_i += w m (v + C (x_i − x_p)) − Δt s_p ∇w + Δt w f_q`.
    ///
    /// The affine term is built up axis by axis (`C (x_i − x_p)` is a sum of
    /// C's columns times the per-axis offsets), so the innermost loop does
    /// one multiply-add per column instead of a matrix–vector product.
    ///
    /// With `MLS` the force uses `∇w ≈ 𝔇⁻¹ w (x_i − x_p)` (Hu et al. 2018), so
    /// stress and APIC fold into one affine matrix `A = m C − Δt 𝔇⁻¹ s_p` and
    /// a node receives `w (m v + Δt f_q + A (x_i − x_p))`.
    pub(super) fn p2g<const K: usize, const MLS: bool>(
        &mut self,
        model: &Model<T>,
        state: &State<T>,
        frame: &GridFrame<T>,
        dt: T,
        d_inv: T,
        make: impl Fn(Vec3<T>, T) -> Stencil<T, K> + Sync,
    ) {
        let grid = &mut self.grid;
        let ptr = NodesPtr(grid.nodes.as_mut_ptr());
        let (order, offsets, neighbours) = (&grid.order, &grid.particle_offsets, &grid.neighbours);
        let (stress, force) = (&self.stress, &self.force);
        let vert = model.vert.clone();
        for colour in &grid.colours {
            colour.par_iter().for_each(|&b| {
                let b = b as usize;
                let nbh = &neighbours[b];
                let nodes = ptr;
                for &p in &order[offsets[b] as usize..offsets[b + 1] as usize] {
                    let p = p as usize;
                    let no_stress = vert.contains(&p);
                    let st = make(frame.grid_units(state.x[p]), frame.inv_dx);
                    let ax = AxisTables::new(&st);
                    let m = model.mass[p];
                    let s_dt = stress[p] * dt;
                    // lever arms are in grid units: (x_i − x_p) = h · off
                    let mc = if MLS {
                        (state.c[p] * m - s_dt * d_inv) * frame.dx
                    } else {
                        state.c[p] * (m * frame.dx)
                    };
                    let (mc0, mc1, mc2) = (mc.col(0), mc.col(1), mc.col(2));
                    let (s0, s1, s2) = (s_dt.col(0), s_dt.col(1), s_dt.col(2));
                    let base_u = state.v[p] * m + force[p] * dt;
                    for a in 0..K {
                        let (wa, dwa) = (st.w[0][a], st.dw[0][a]);
                        let ua = base_u + mc0 * ax.off[0][a];
                        for bb in 0..K {
                            let (wb, dwb) = (st.w[1][bb], st.dw[1][bb]);
                            let uab = ua + mc1 * ax.off[1][bb];
                            let (wab, dwa_b, wa_dwb) = (wa * wb, dwa * wb, wa * dwb);
                            let row = ax.blk[0][a] * 4 + ax.blk[1][bb] * 2;
                            let lrow = ax.loc[0][a] * 16 + ax.loc[1][bb] * 4;
                            for c in 0..K {
                                let (wc, dwc) = (st.w[2][c], st.dw[2][c]);
                                let w = wab * wc;
                                let u = uab + mc2 * ax.off[2][c];
                                // mesh vertices carry no stress (spec §3.3): skip the ∇w term
                                let dmv = if MLS || no_stress {
                                    u * w
                                } else {
                                    u * w - (s0 * (dwa_b * wc) + s1 * (wa_dwb * wc) + s2 * (wab * dwc))
                                };
                                let blk = nbh[row + ax.blk[2][c]];
                                debug_assert!(blk != NO_BLOCK);
                                let idx = blk as usize * BLOCK_NODES + lrow + ax.loc[2][c];
                                // SAFETY: idx lies in block b + {0,1}³; blocks of one colour
                                // are ≥ 2 apart, so no other task of this colour writes it
                                // (NodesPtr contract), and colours run one after another.
                                let node = unsafe { &mut *nodes.0.add(idx) };
                                node.mass += w * m;
                                node.mv += dmv;
                            }
                        }
                    }
                }
            });
        }
    }
}
