//! Adding objects (volumes, cloth, strands) and colliders, with the checks on what is added (inside the domain, valid materials and damping).

use super::*;

impl<T: Real> Simulation<T> {
    pub(super) fn check_inside(&self, what: &str, pts: &[Vec3<f64>]) -> Result<()> {
        let p = &self.params;
        let margin = p.dx * (p.boundary_padding as f64);
        for (i, x) in pts.iter().enumerate() {
            if !x.is_finite() {
                return invalid!("{what}: point {i} is not finite");
            }
            for a in 0..3 {
                if x[a] < p.lower[a] + margin || x[a] > p.upper[a] - margin {
                    return invalid!(
                        "{what}: point {i} at ({:.4}, {:.4}, {:.4}) m lies outside the simulation domain \
                         {:?} to {:?} less its {}-cell wall padding ({margin:.4} m); move the object or \
                         enlarge the domain",
                        x.x,
                        x.y,
                        x.z,
                        p.lower.to_array(),
                        p.upper.to_array(),
                        p.boundary_padding
                    );
                }
            }
        }
        Ok(())
    }

    /// The checks every `add_*` shares: density, a size (volume or thickness),
    /// velocity, damping, and that the points lie inside the padded domain.
    pub(super) fn check_object(
        &self,
        what: &str,
        points: &[Vec3<f64>],
        density: f64,
        size: (&str, f64),
        velocity: Vec3<f64>,
        damping: f64,
    ) -> Result<()> {
        crate::validate::positive("density", density)?;
        crate::validate::positive(size.0, size.1)?;
        if !velocity.is_finite() {
            return invalid!("velocity must be finite");
        }
        Self::check_damping(damping)?;
        self.check_inside(what, points)
    }

    pub(super) fn check_damping(damping: f64) -> Result<()> {
        if !(0.0..=1.0).contains(&damping) {
            return invalid!("damping must be in [0, 1] (0 = APIC, 1 = RPIC); got {damping}");
        }
        Ok(())
    }

    /// Adds volumetric particles (type i) at `points` with rest volume
    /// `particle_volume` (m³) each, density `density` (kg/m³) and initial
    /// `velocity`. Returns the object index.
    pub fn add_volume(
        &mut self,
        points: &[Vec3<f64>],
        material: VolumeMaterial<T>,
        density: f64,
        particle_volume: f64,
        velocity: Vec3<f64>,
        damping: f64,
    ) -> Result<usize> {
        self.begin_host_edit()?;
        if points.is_empty() {
            return invalid!("points is empty; give at least one particle");
        }
        self.check_object(
            "points",
            points,
            density,
            ("particle_volume", particle_volume),
            velocity,
            damping,
        )?;
        let n = points.len();
        let mat_id = self.push_volume_material(material)?;
        let m = &mut self.model;
        let s = &mut self.state;
        let at = m.vol.end;
        let local = m.vol.len();
        let mass = T::from_f64(density * particle_volume);
        splice(&mut m.mass, at, std::iter::repeat_n(mass, n));
        splice(
            &mut m.volume,
            at,
            std::iter::repeat_n(T::from_f64(particle_volume), n),
        );
        splice(&mut m.damping, at, std::iter::repeat_n(T::from_f64(damping), n));
        splice(&mut s.x, at, points.iter().map(|p| p.cast()));
        splice(&mut s.v, at, std::iter::repeat_n(velocity.cast(), n));
        splice(&mut s.c, at, std::iter::repeat_n(Mat3::zero(), n));
        m.vol_material.extend(std::iter::repeat_n(mat_id, n));
        s.f.extend(std::iter::repeat_n(Mat3::identity(), n));
        s.q.extend(std::iter::repeat_n(T::ZERO, n));
        m.vol.end += n;
        m.vert = m.vert.start + n..m.vert.end + n;
        m.elem = m.elem.start + n..m.elem.end + n;
        self.objects.push(Object {
            kind: ObjectKind::Volume,
            points: local..local + n,
            elements: 0..0,
        });
        Ok(self.objects.len() - 1)
    }

    pub(super) fn push_volume_material(&mut self, mat: VolumeMaterial<T>) -> Result<u16> {
        let id = self.model.volume_materials.len();
        if id >= u16::MAX as usize {
            return invalid!("too many materials (at most {})", u16::MAX);
        }
        self.model.volume_materials.push(mat);
        Ok(id as u16)
    }

    /// Appends Lagrangian vertices and elements (spec §2.6). `elements` hold
    /// object-local vertex indices; `dims` is 2 for triangles, 1 for segments.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn add_codim(
        &mut self,
        kind: ObjectKind,
        verts: &[Vec3<f64>],
        elems: &[[u32; 3]],
        dim: u8,
        material: CodimMaterial<T>,
        density: f64,
        thickness: f64,
        velocity: Vec3<f64>,
        damping: f64,
        weight: EnergyWeight,
    ) -> Result<usize> {
        self.begin_host_edit()?;
        self.check_object(
            "mesh vertices",
            verts,
            density,
            ("thickness", thickness),
            velocity,
            damping,
        )?;
        let mat_id = self.model.codim_materials.len() as u16;
        if mat_id == u16::MAX {
            return invalid!("too many materials (at most {})", u16::MAX);
        }
        let nv = verts.len();
        let ne = elems.len();
        // Per-element rest data and volume split (spec §2.6): V_e = A τ (surfaces)
        // or L π r² (curves), V_e/(m+2) to the element particle and to each vertex.
        let mut vert_volume = vec![0.0f64; nv];
        let mut new_elems = Vec::with_capacity(ne);
        let mut elem_volume = Vec::with_capacity(ne);
        let mut elem_energy = Vec::with_capacity(ne);
        let mut normals = Vec::with_capacity(ne);
        let mut centres = Vec::with_capacity(ne);
        let vbase = self.model.vert.len() as u32;
        for (ei, e) in elems.iter().enumerate() {
            let x0 = verts[e[0] as usize];
            let x1 = verts[e[1] as usize];
            let e1 = x1 - x0;
            let (ve, dm_inv, d, centre) = if dim == 2 {
                let x2 = verts[e[2] as usize];
                let e2 = x2 - x0;
                let l1 = e1.norm();
                let nrm = e1.cross(e2);
                let area2 = nrm.norm();
                if l1 <= 0.0 || area2 <= 1e-14 * l1 * l1 {
                    return Err(Error::Mesh(crate::geometry::MeshError::Other(format!(
                        "triangle {ei} is degenerate (zero area); remove it"
                    ))));
                }
                // Dm = [[|E1|, e1·E2], [0, |E1×E2|/|E1|]] (spec §2.3)
                let (a, b, c) = (l1, e1.dot(e2) / l1, area2 / l1);
                let inv = [1.0 / a, -b / (a * c), 1.0 / c];
                let ve = 0.5 * area2 * thickness;
                (
                    ve,
                    inv,
                    [nrm * (1.0 / area2), Vec3::zero()],
                    (x0 + x1 + x2) * (1.0 / 3.0),
                )
            } else {
                let l = e1.norm();
                if l <= 0.0 {
                    return invalid!("strand segment {ei} has zero length");
                }
                let t = e1 * (1.0 / l);
                let n2 = t.any_orthogonal();
                let n3 = t.cross(n2);
                let ve = l * std::f64::consts::PI * thickness * thickness;
                (ve, [1.0 / l, 0.0, 0.0], [n2, n3], (x0 + x1) * 0.5)
            };
            let share = ve / (dim as f64 + 2.0);
            for c in 0..=dim as usize {
                vert_volume[e[c] as usize] += share;
            }
            elem_volume.push(share);
            elem_energy.push(match weight {
                EnergyWeight::Split => share,
                EnergyWeight::Full => ve,
            });
            normals.push([d[0].cast(), d[1].cast()]);
            centres.push(centre);
            let vs = [
                e[0] + vbase,
                e[1] + vbase,
                if dim == 2 { e[2] + vbase } else { e[1] + vbase },
            ];
            new_elems.push(Element {
                vertices: vs,
                dim,
                material: mat_id,
                dm_inv: dm_inv.map(T::from_f64),
            });
        }
        if let Some(i) = vert_volume.iter().position(|&v| v <= 0.0) {
            return invalid!("vertex {i} belongs to no element; remove unused vertices");
        }
        // Everything is valid: only now change the model (a failed add leaves no trace).
        self.model.codim_materials.push(material);
        let m = &mut self.model;
        let s = &mut self.state;
        // vertices at the end of the vertex range
        let at = m.vert.end;
        let vel: Vec3<T> = velocity.cast();
        splice(
            &mut m.mass,
            at,
            vert_volume.iter().map(|&v| T::from_f64(v * density)),
        );
        splice(&mut m.volume, at, vert_volume.iter().map(|&v| T::from_f64(v)));
        splice(&mut m.damping, at, std::iter::repeat_n(T::from_f64(damping), nv));
        splice(&mut s.x, at, verts.iter().map(|p| p.cast()));
        splice(&mut s.v, at, std::iter::repeat_n(vel, nv));
        splice(&mut s.c, at, std::iter::repeat_n(Mat3::zero(), nv));
        let vlocal = m.vert.len();
        m.vert.end += nv;
        m.elem = m.elem.start + nv..m.elem.end + nv;
        // elements at the end of everything
        let elocal = m.elem.len();
        m.mass
            .extend(elem_volume.iter().map(|&v| T::from_f64(v * density)));
        m.volume.extend(elem_energy.iter().map(|&v| T::from_f64(v)));
        m.damping.extend(std::iter::repeat_n(T::from_f64(damping), ne));
        s.x.extend(centres.iter().map(|p| p.cast()));
        s.v.extend(std::iter::repeat_n(vel, ne));
        s.c.extend(std::iter::repeat_n(Mat3::zero(), ne));
        s.d.extend(normals);
        // rest in-manifold columns Ds Dm⁻¹ (only the eulerian_tangents ablation reads them)
        s.tangents.extend(new_elems.iter().map(|el| {
            let x = |k: usize| verts[(el.vertices[k] - vbase) as usize].cast::<T>();
            let f = crate::mpm::solver::element_f(el, x(0), x(1), x(2), &[Vec3::zero(); 2]);
            [f.col(0), f.col(1)]
        }));
        m.elements.extend(new_elems);
        m.elem.end += ne;
        m.rebuild_vertex_lists();
        self.objects.push(Object {
            kind,
            points: vlocal..vlocal + nv,
            elements: elocal..elocal + ne,
        });
        Ok(self.objects.len() - 1)
    }

    /// Adds a cloth (triangle mesh) with thickness `τ_h` (m, spec §2.6).
    #[allow(clippy::too_many_arguments)]
    pub fn add_surface(
        &mut self,
        mesh: &TriMesh,
        material: CodimMaterial<T>,
        density: f64,
        thickness: f64,
        velocity: Vec3<f64>,
        damping: f64,
        weight: EnergyWeight,
    ) -> Result<usize> {
        if !matches!(material, CodimMaterial::Surface(_)) {
            return invalid!("a triangle mesh needs a cloth (surface) material");
        }
        self.add_codim(
            ObjectKind::Surface,
            mesh.vertices(),
            mesh.faces(),
            2,
            material,
            density,
            thickness,
            velocity,
            damping,
            weight,
        )
    }

    /// Adds strands (hair, yarn) with cross-section radius `r_h` (m, spec §2.6).
    #[allow(clippy::too_many_arguments)]
    pub fn add_curves(
        &mut self,
        curves: &Curves,
        material: CodimMaterial<T>,
        density: f64,
        radius: f64,
        velocity: Vec3<f64>,
        damping: f64,
        weight: EnergyWeight,
    ) -> Result<usize> {
        if !matches!(material, CodimMaterial::Curve(_)) {
            return invalid!("strands need a curve material");
        }
        let segs: Vec<[u32; 3]> = curves.segments().iter().map(|s| [s[0], s[1], s[1]]).collect();
        self.add_codim(
            ObjectKind::Curves,
            curves.points(),
            &segs,
            1,
            material,
            density,
            radius,
            velocity,
            damping,
            weight,
        )
    }

    /// Adds a collider (moved to the simulation's current time).
    pub fn add_collider(&mut self, mut c: Collider) -> Result<usize> {
        c.advance_to(self.state.time)?;
        self.colliders.push(c);
        Ok(self.colliders.len() - 1)
    }

    /// Removes collider `i` (later ones shift down).
    pub fn remove_collider(&mut self, i: usize) -> Result<Collider> {
        if i >= self.colliders.len() {
            return invalid!("no collider {i}; {} colliders exist", self.colliders.len());
        }
        Ok(self.colliders.remove(i))
    }

    pub(super) fn object(&self, object: usize) -> Result<&Object> {
        self.objects.get(object).ok_or_else(|| {
            Error::InvalidInput(format!(
                "no object {object}; this simulation has {} objects",
                self.objects.len()
            ))
        })
    }

    /// Global particle range of an object's points (particles or vertices).
    pub fn object_range(&self, object: usize) -> Result<Range<usize>> {
        let o = self.object(object)?;
        let start = match o.kind {
            ObjectKind::Volume => self.model.vol.start,
            _ => self.model.vert.start,
        };
        Ok(start + o.points.start..start + o.points.end)
    }
}
