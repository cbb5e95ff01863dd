//! Stage 1 of spec §3 (§10.2): block keys of every particle, the sparse grid and the domain check. GPU twin: `gpu/shaders/bin.wgsl` and `grid_build.wgsl`.

use super::*;

impl<T: Real> Solver<T> {
    /// Step 1: block keys of every particle and the sparse grid (spec §10.2).
    /// Also the domain check: a particle outside the padded box is an error
    /// (or is clamped back, if asked).
    pub(super) fn bin(
        &mut self,
        state: &mut State<T>,
        params: &SolverParams,
        frame: &GridFrame<T>,
    ) -> Result<()> {
        let n = state.x.len();
        self.keys.resize(n, 0);
        let bounds = ParticleBounds::<T>::new(params);
        let lo = bounds.lo;
        let lo_clamp = T::from_f64(LOWER_CLAMP_XI);
        let hi = |a: usize| bounds.hi[a];
        let kernel_shift = match params.kernel {
            Kernel::Quadratic => T::HALF,
            Kernel::Cubic => T::ONE,
        };
        let clamp = params.out_of_domain == OutOfDomain::Clamp;
        let bad = self
            .keys
            .par_iter_mut()
            .zip(state.x.par_iter_mut().zip(state.v.par_iter_mut()))
            .enumerate()
            .map(|(p, (key, (x, v)))| {
                let mut xi = frame.grid_units(*x);
                let mut outside = !xi.is_finite();
                for a in 0..3 {
                    if !(xi[a] >= lo && xi[a] <= hi(a)) {
                        outside = true;
                        if clamp && xi[a].is_finite() {
                            xi[a] = xi[a].clamp_to(lo_clamp, hi(a));
                            if (xi[a] == lo_clamp && v[a] < T::ZERO) || (xi[a] == hi(a) && v[a] > T::ZERO) {
                                v[a] = T::ZERO;
                            }
                        }
                    }
                }
                if outside && clamp && xi.is_finite() {
                    *x = frame.lower + xi * frame.dx;
                    // the key from the stored position, as P2G and G2P will see it
                    xi = frame.grid_units(*x);
                    outside = false;
                }
                let b = |a: usize| (((xi[a] - kernel_shift).floor().to_f64().max(0.0)) as u32) >> 2;
                *key = block_key([b(0), b(1), b(2)]);
                if outside { p } else { usize::MAX }
            })
            .min()
            .unwrap_or(usize::MAX);
        if bad != usize::MAX {
            return Err(domain_error(state, params, bad));
        }
        self.grid.rebuild(&self.keys);
        Ok(())
    }
}
