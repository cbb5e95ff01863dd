//! The stress pre-pass of spec §3.3: Kirchhoff stress of volumetric particles and element forces of cloth and strand elements gathered per vertex. GPU twin: `gpu/shaders/stress.wgsl`.

use super::*;

impl<T: Real> Solver<T> {
    /// Step 2: stress pre-pass at `t^n` (spec §3.3).
    pub(super) fn stress(&mut self, model: &Model<T>, state: &State<T>, eulerian: bool) {
        let (vol, vert, elem) = (model.vol.clone(), model.vert.clone(), model.elem.clone());
        // (i) τ_p = V⁰ P Fᵀ
        self.stress[vol.clone()]
            .par_iter_mut()
            .enumerate()
            .for_each(|(i, s)| {
                let p = vol.start + i;
                let mat = &model.volume_materials[model.vol_material[i] as usize];
                *s = volume_kirchhoff(mat, &state.f[i]) * model.volume[p];
            });
        self.stress[vert.clone()]
            .par_iter_mut()
            .for_each(|s| *s = Mat3::zero());
        // (iii) P̃ on the element frame, S_p from the normal columns, corner forces from the tangent ones.
        let stress_elem = &mut self.stress[elem.clone()];
        stress_elem
            .par_iter_mut()
            .zip(self.elem_forces.par_iter_mut())
            .enumerate()
            .for_each(|(e, (s, fe))| {
                let el = &model.elements[e];
                let vol_p = model.volume[elem.start + e];
                let xs = |k: usize| state.x[vert.start + el.vertices[k] as usize];
                let ft = element_ft(el, xs(0), xs(1), xs(2), &state.d[e], &state.tangents[e], eulerian);
                let mat = &model.codim_materials[el.material as usize];
                *s = Mat3::zero();
                *fe = [Vec3::zero(); 3];
                let Some(p) = codim_piola(mat, &ft) else { return };
                if eulerian {
                    // ablation (spec E6 a): the whole Kirchhoff stress acts through ∇w,
                    // the mesh carries no force
                    *s = p * ft.transpose() * vol_p;
                    return;
                }
                let [a, b, c] = el.dm_inv;
                if el.dim == 2 {
                    // G = V P̃[:, 0:2] Dm⁻ᵀ with Dm⁻¹ = [[a, b], [0, c]]:
                    // G₀ = V (a P₀ + b P₁), G₁ = V c P₁ (= ∂Φ/∂x₁, ∂Φ/∂x₂)
                    let (p0, p1) = (p.col(0), p.col(1));
                    let g0 = (p0 * a + p1 * b) * vol_p;
                    let g1 = p1 * (c * vol_p);
                    *fe = [g0 + g1, -g0, -g1];
                    *s = Mat3::outer(p.col(2), state.d[e][0]) * vol_p;
                } else {
                    let g0 = p.col(0) * (vol_p * a);
                    *fe = [g0, -g0, Vec3::zero()];
                    *s =
                        (Mat3::outer(p.col(1), state.d[e][0]) + Mat3::outer(p.col(2), state.d[e][1])) * vol_p;
                }
            });
        // (ii) gather corner forces onto vertices, in element order (deterministic).
        let ef = &self.elem_forces;
        self.force[vert.clone()]
            .par_iter_mut()
            .enumerate()
            .for_each(|(v, f)| {
                let mut acc = Vec3::zero();
                for &(e, c) in &model.vertex_elems
                    [model.vertex_offsets[v] as usize..model.vertex_offsets[v + 1] as usize]
                {
                    acc += ef[e as usize][c as usize];
                }
                *f = acc;
            });
        self.force[vol].par_iter_mut().for_each(|f| *f = Vec3::zero());
        self.force[elem].par_iter_mut().for_each(|f| *f = Vec3::zero());
    }
}
