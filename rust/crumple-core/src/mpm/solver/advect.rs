//! Advection of spec §3.8–3.9: positions, kinematic pins, deformation gradients, normal columns and element enslaving. GPU twin: `gpu/shaders/advect.wgsl`.

use super::*;

impl<T: Real> Solver<T> {
    /// Steps 7–8 and pins: positions of types (i), (ii); kinematic pins;
    /// `F ← (I + Δt∇v)F` for type (i); normal columns `d ← (I + Δt∇v) d`
    /// and barycentre enslaving for type (iii) (spec §3.8, §3.9, A17).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn advect(
        &mut self,
        model: &Model<T>,
        state: &mut State<T>,
        pins: &[Pin],
        dt: f64,
        t_new: f64,
        enslave: bool,
        eulerian: bool,
    ) {
        let dt_t = T::from_f64(dt);
        let (vol, vert, elem) = (model.vol.clone(), model.vert.clone(), model.elem.clone());
        let upto = if enslave { vert.end } else { elem.end };
        state.x[..upto]
            .par_iter_mut()
            .zip(state.v[..upto].par_iter())
            .for_each(|(x, v)| *x += *v * dt_t);
        for pin in pins {
            let p = vert.start + pin.vertex as usize;
            state.x[p] = pin.position(t_new).cast();
            state.v[p] = pin.v.cast();
            state.c[p] = Mat3::zero();
        }
        let gv = &self.grad_v;
        state.f.par_iter_mut().enumerate().for_each(|(i, f)| {
            *f = (Mat3::identity() + gv[vol.start + i] * dt_t) * *f;
        });
        let (xs, ds, ts) = (&mut state.x, &mut state.d, &mut state.tangents);
        let (x_before, x_elem) = xs.split_at_mut(elem.start);
        let verts = &x_before[vert.clone()];
        x_elem
            .par_iter_mut()
            .zip(ds.par_iter_mut().zip(ts.par_iter_mut()))
            .enumerate()
            .for_each(|(e, (xe, (d, t)))| {
                let el = &model.elements[e];
                let g = Mat3::identity() + gv[elem.start + e] * dt_t;
                d[0] = g * d[0];
                if el.dim == 1 {
                    d[1] = g * d[1];
                }
                if eulerian {
                    t[0] = g * t[0];
                    if el.dim == 2 {
                        t[1] = g * t[1];
                    }
                }
                if !enslave {
                    return; // moved with its own velocity above
                }
                if el.dim == 1 {
                    *xe = (verts[el.vertices[0] as usize] + verts[el.vertices[1] as usize]) * T::HALF;
                } else {
                    let third = T::ONE / T::from_f64(3.0);
                    *xe = (verts[el.vertices[0] as usize]
                        + verts[el.vertices[1] as usize]
                        + verts[el.vertices[2] as usize])
                        * third;
                }
            });
    }
}
