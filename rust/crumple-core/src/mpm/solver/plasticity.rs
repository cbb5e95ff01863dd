//! Plasticity of spec §3.10 and §5: return maps of the volumetric materials and of cloth and strand elements. GPU twin: `gpu/shaders/plasticity.wgsl`.

use super::*;

impl<T: Real> Solver<T> {
    /// Step 9: return mapping (spec §3.10, §5) for elements and volumetric plasticity.
    ///
    /// `run_return_map = false` skips the element return maps (the
    /// "elasticity without return map" ablation of spec E6 c): normals keep
    /// their trial values.
    pub(super) fn plasticity(
        &mut self,
        model: &Model<T>,
        state: &mut State<T>,
        dt: T,
        run_return_map: bool,
        eulerian: bool,
    ) {
        let vert = model.vert.clone();
        let vol_mats = &model.volume_materials;
        state
            .f
            .par_iter_mut()
            .zip(state.q.par_iter_mut())
            .enumerate()
            .for_each(|(i, (f, q))| {
                let mat = &vol_mats[model.vol_material[i] as usize];
                let (nf, nq) = volume_plasticity(mat, f, *q, dt);
                *f = nf;
                *q = nq;
            });
        if !run_return_map {
            self.counters.element_steps += self.events.len() as u64;
            return;
        }
        let (x, tangents) = (&state.x, &state.tangents);
        state
            .d
            .par_iter_mut()
            .zip(self.events.par_iter_mut())
            .enumerate()
            .for_each(|(e, (d, ev))| {
                let el = &model.elements[e];
                let xs = |k: usize| x[vert.start + el.vertices[k] as usize];
                let ft = element_ft(el, xs(0), xs(1), xs(2), d, &tangents[e], eulerian);
                let (fnew, event) = codim_return_map(&model.codim_materials[el.material as usize], &ft);
                *ev = event as u8;
                if el.dim == 2 {
                    d[0] = fnew.col(2);
                } else {
                    d[0] = fnew.col(1);
                    d[1] = fnew.col(2);
                }
            });
        let mut counts = [0u64; 5];
        for &e in &self.events {
            counts[(e as usize).min(4)] += 1;
        }
        use crate::mpm::material::ReturnEvent as R;
        self.counters.slide += counts[R::Slide as usize];
        self.counters.tension += counts[R::Tension as usize];
        self.counters.inverted += counts[R::Inverted as usize];
        self.counters.degenerate += counts[R::Degenerate as usize];
        self.counters.element_steps += self.events.len() as u64;
    }
}
