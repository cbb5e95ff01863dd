//! Pins (kinematic vertices, spec §9 A17) and scripted handles that move pinned vertices along a path.

use super::*;

impl<T: Real> Simulation<T> {
    /// Pins vertices `indices` (object-local) of a mesh or strand object at
    /// their current positions; returns how many pins exist.
    pub fn pin(&mut self, object: usize, indices: &[u32]) -> Result<usize> {
        self.sync_host()?; // pins hold the vertices' current positions
        let o = self.object(object)?.clone();
        if o.kind == ObjectKind::Volume {
            return invalid!(
                "only mesh and strand vertices can be pinned; object {object} is a particle volume"
            );
        }
        let n = o.points.len();
        if let Some(&i) = indices.iter().find(|&&i| i as usize >= n) {
            return invalid!("pin index {i} is out of range: object {object} has {n} vertices");
        }
        for &i in indices {
            let local = (o.points.start + i as usize) as u32;
            let x = self.state.x[self.model.vert.start + local as usize].cast();
            self.pins.retain(|p| p.vertex != local);
            self.pins.push(Pin {
                vertex: local,
                x0: x,
                v: Vec3::zero(),
                t0: self.state.time,
            });
        }
        Ok(self.pins.len())
    }

    /// Moves pinned vertices of `object`: `indices` (object-local, each
    /// already pinned) reach `positions` now and move on with `velocities`.
    pub fn set_pin_targets(
        &mut self,
        object: usize,
        indices: &[u32],
        positions: &[Vec3<f64>],
        velocities: &[Vec3<f64>],
    ) -> Result<()> {
        let o = self.object(object)?.clone();
        if positions.len() != indices.len() || velocities.len() != indices.len() {
            return invalid!("indices, positions and velocities must have the same length");
        }
        // Check everything first, so that an error leaves the pins untouched.
        let n = o.points.len();
        for (k, &i) in indices.iter().enumerate() {
            if i as usize >= n {
                return invalid!("pin index {i} is out of range: object {object} has {n} vertices");
            }
            let local = (o.points.start + i as usize) as u32;
            if !self.pins.iter().any(|p| p.vertex == local) {
                return invalid!("vertex {i} of object {object} is not pinned; call pin() first");
            }
            if !positions[k].is_finite() || !velocities[k].is_finite() {
                return invalid!("pin target {k} is not finite");
            }
        }
        for (k, &i) in indices.iter().enumerate() {
            let local = (o.points.start + i as usize) as u32;
            if let Some(pin) = self.pins.iter_mut().find(|p| p.vertex == local) {
                *pin = Pin {
                    vertex: local,
                    x0: positions[k],
                    v: velocities[k],
                    t0: self.state.time,
                };
            }
        }
        Ok(())
    }

    /// Removes all pins of `object` (its vertices move freely again).
    pub fn unpin(&mut self, object: usize) -> Result<()> {
        let o = self.object(object)?.clone();
        if o.kind == ObjectKind::Volume {
            return invalid!("object {object} is a particle volume: it has no pins");
        }
        self.pins.retain(|p| !(o.points.contains(&(p.vertex as usize))));
        Ok(())
    }

    /// Pins `indices` (object-local) of a mesh or strand object and moves
    /// them rigidly by `motion` about `pivot` (m) from now on: at time `t`
    /// vertex `k` is at `R(t − now)(X_k − pivot) + pivot + T(t − now)`.
    /// Returns the handle id.
    pub fn add_handle(
        &mut self,
        object: usize,
        indices: &[u32],
        pivot: Vec3<f64>,
        motion: Motion,
    ) -> Result<usize> {
        self.sync_host()?; // the reference positions are the current ones
        let o = self.object(object)?.clone();
        if o.kind == ObjectKind::Volume {
            return invalid!(
                "only mesh and strand vertices can be moved by a handle; object {object} is a particle volume"
            );
        }
        if let Some(&i) = indices.iter().find(|&&i| i as usize >= o.points.len()) {
            return invalid!(
                "handle vertex {i} is out of range: object {object} has {} vertices",
                o.points.len()
            );
        }
        let vertices: Vec<u32> = indices
            .iter()
            .map(|&i| (o.points.start + i as usize) as u32)
            .collect();
        let reference = vertices
            .iter()
            .map(|&v| self.state.x[self.model.vert.start + v as usize].cast())
            .collect();
        // Check the handle (its path) before pinning, so a bad path leaves
        // the pins as they were.
        let h = RigidHandle::new(vertices, reference, pivot, motion, self.state.time, true)?;
        self.pin(object, indices)?;
        self.handles.push(h);
        Ok(self.handles.len() - 1)
    }

    /// Restores a handle saved in a checkpoint: `reference` positions (those
    /// its vertices had when it was made), its creation time `start` and
    /// whether it still moves. The pins themselves come with the state.
    #[allow(clippy::too_many_arguments)]
    pub fn restore_handle(
        &mut self,
        object: usize,
        indices: &[u32],
        reference: Vec<Vec3<f64>>,
        pivot: Vec3<f64>,
        motion: Motion,
        start: f64,
        active: bool,
    ) -> Result<usize> {
        let o = self.object(object)?.clone();
        if let Some(&i) = indices.iter().find(|&&i| i as usize >= o.points.len()) {
            return invalid!(
                "handle vertex {i} is out of range: object {object} has {} vertices",
                o.points.len()
            );
        }
        let vertices = indices
            .iter()
            .map(|&i| (o.points.start + i as usize) as u32)
            .collect();
        let h = RigidHandle::new(vertices, reference, pivot, motion, start, active)?;
        self.handles.push(h);
        Ok(self.handles.len() - 1)
    }

    pub(super) fn handle_mut(&mut self, id: usize) -> Result<&mut RigidHandle> {
        let n = self.handles.len();
        match self.handles.get_mut(id) {
            Some(h) => Ok(h),
            None => invalid!("no handle {id}; {n} handles exist"),
        }
    }

    /// Releases handle `id`: its vertices are unpinned and move freely.
    pub fn release_handle(&mut self, id: usize) -> Result<()> {
        let h = self.handle_mut(id)?;
        h.active = false;
        let mut drop = h.vertices.clone();
        drop.sort_unstable();
        self.pins.retain(|p| drop.binary_search(&p.vertex).is_err());
        Ok(())
    }

    /// Stops handle `id` where it is now; its vertices stay pinned there.
    pub fn freeze_handle(&mut self, id: usize) -> Result<()> {
        let t = self.state.time;
        let h = self.handle_mut(id)?;
        let pose = if h.active { Some(h.pose(t)?) } else { None };
        h.active = false;
        let Some(pose) = pose else { return Ok(()) };
        let h = self.handles[id].clone();
        for (k, &v) in h.vertices.iter().enumerate() {
            if let Some(p) = self.pins.iter_mut().find(|p| p.vertex == v) {
                *p = Pin {
                    vertex: v,
                    x0: h.target(&pose, k).0,
                    v: Vec3::zero(),
                    t0: t,
                };
            }
        }
        Ok(())
    }

    /// Sets the pins of every moving handle to its path at `t` (position and
    /// velocity, so that `Pin::position` is exact at `t`). Handles are few
    /// and small next to the particles: a scan of the pins per handle vertex
    /// stays far below the step's cost.
    pub(super) fn update_handle_pins(&mut self, t: f64) -> Result<()> {
        for h in self.handles.iter().filter(|h| h.active) {
            let pose = h.pose(t)?;
            for (k, &v) in h.vertices.iter().enumerate() {
                if let Some(p) = self.pins.iter_mut().find(|p| p.vertex == v) {
                    let (x, vel) = h.target(&pose, k);
                    *p = Pin {
                        vertex: v,
                        x0: x,
                        v: vel,
                        t0: t,
                    };
                }
            }
        }
        Ok(())
    }

    /// Unpins `indices` (object-local vertices) of `object`; vertices that
    /// are not pinned are ignored.
    pub fn unpin_vertices(&mut self, object: usize, indices: &[u32]) -> Result<()> {
        let o = self.object(object)?.clone();
        if o.kind == ObjectKind::Volume {
            return invalid!("object {object} is a particle volume: it has no pins");
        }
        let n = o.points.len();
        if let Some(&i) = indices.iter().find(|&&i| i as usize >= n) {
            return invalid!("vertex {i} is out of range: object {object} has {n} vertices");
        }
        let mut drop = vec![false; n];
        for &i in indices {
            drop[i as usize] = true;
        }
        self.pins.retain(|p| {
            let v = p.vertex as usize;
            !(o.points.contains(&v) && drop[v - o.points.start])
        });
        Ok(())
    }
}
