//! Read-outs of the whole simulation: momentum, energies, mass, counters.

use super::*;

impl<T: Real> Simulation<T> {
    /// Volumetric particles deleted on leaving the domain so far.
    pub fn removed_particles(&self) -> u64 {
        self.removed
    }

    /// Event counters of the return maps (spec §5.5).
    pub fn counters(&self) -> Counters {
        self.solver.counters
    }

    /// Total linear momentum `Σ m v`, kg·m/s (ordered sums). Reads the host
    /// copy: on the GPU backend call [`Simulation::sync_host`] first (as
    /// every reader of `state` must; the Python bindings do).
    pub fn total_momentum(&self) -> Vec3<f64> {
        let n = self.model.num_particles();
        let (m, v) = (&self.model.mass, &self.state.v);
        let s = |a: usize| crate::parallel::ordered_sum(n, |i| m[i].to_f64() * v[i][a].to_f64());
        Vec3::new(s(0), s(1), s(2))
    }

    /// Kinetic energy `Σ ½ m |v|²`, J (host copy, see [`Simulation::total_momentum`]).
    pub fn kinetic_energy(&self) -> f64 {
        let (m, v) = (&self.model.mass, &self.state.v);
        crate::parallel::ordered_sum(self.model.num_particles(), |i| {
            0.5 * m[i].to_f64() * v[i].norm_squared().to_f64()
        })
    }

    /// Total elastic potential `Φ = Σ_(i) V⁰ ψ(F^E) + Σ_(iii) V⁰ ψ(F̃)`, J: the
    /// potential whose negative gradient with respect to the grid node
    /// positions is the elastic grid force (spec §3.3). Element energies use
    /// the same F̃ as the stress stage (the mesh's tangent columns, or the
    /// advected ones in the `eulerian_tangents` ablation) and the element
    /// particle's volume, so the `energy_weight` option is included. Mesh
    /// vertices carry none. A degenerate element (spec §5.5) is counted here
    /// although the solver applies no force for it. Ordered sums: independent
    /// of the thread count.
    /// Host copy, see [`Simulation::total_momentum`].
    pub fn elastic_energy(&self) -> f64 {
        let m = &self.model;
        let (vol, vert, elem) = (m.vol.clone(), m.vert.clone(), m.elem.clone());
        let eulerian = self.params.eulerian_tangents;
        let st = &self.state;
        let volume = crate::parallel::ordered_sum(vol.len(), |i| {
            let mat = &m.volume_materials[m.vol_material[i] as usize];
            (volume_energy(mat, &st.f[i]) * m.volume[vol.start + i]).to_f64()
        });
        let codim = crate::parallel::ordered_sum(m.elements.len(), |e| {
            let el = &m.elements[e];
            let xs = |k: usize| st.x[vert.start + el.vertices[k] as usize];
            let ft = element_ft(el, xs(0), xs(1), xs(2), &st.d[e], &st.tangents[e], eulerian);
            (codim_energy(&m.codim_materials[el.material as usize], &ft) * m.volume[elem.start + e]).to_f64()
        });
        volume + codim
    }

    /// Total mass of particles, kg.
    pub fn total_mass(&self) -> f64 {
        self.model.total_mass()
    }

    /// `R̃` of every element (for tests and diagnostics): the QR factor of F̃ (spec §4.1).
    pub fn element_r(&self) -> Vec<Mat3<T>> {
        let vs = self.model.vert.start;
        self.model
            .elements
            .iter()
            .enumerate()
            .map(|(e, el)| {
                let x = |k: usize| self.state.x[vs + el.vertices[k] as usize];
                qr3(&crate::mpm::solver::element_f(
                    el,
                    x(0),
                    x(1),
                    x(2),
                    &self.state.d[e],
                ))
                .r
            })
            .collect()
    }
}
