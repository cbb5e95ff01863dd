//! Recorded dispatches and the 2-D grid that lifts the 65535-workgroup limit.

/// One compute dispatch, prepared once and recorded into a pass (possibly
/// several times: a radix sort replays its histogram scan every pass).
pub(crate) struct Dispatch {
    pub(crate) pipeline: wgpu::ComputePipeline,
    pub(crate) bind_group: wgpu::BindGroup,
    pub(crate) groups: (u32, u32),
}

impl Dispatch {
    pub(crate) fn record(&self, pass: &mut wgpu::ComputePass<'_>) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.dispatch_workgroups(self.groups.0, self.groups.1, 1);
    }
}

/// Workgroup counts for `groups` one-dimensional workgroups when one grid
/// dimension holds at most `max_per_dim` (65535 by default): `(x, y)` with
/// `x * y >= groups`. Shaders recover the linear index as
/// `id.x + id.y * num_workgroups.x` and skip indices `>= groups`, so at most
/// one row of workgroups idles.
pub(crate) fn dispatch_2d(groups: u32, max_per_dim: u32) -> (u32, u32) {
    let max_per_dim = max_per_dim.max(1);
    if groups <= max_per_dim {
        (groups.max(1), 1)
    } else {
        let y = groups.div_ceil(max_per_dim);
        (groups.div_ceil(y), y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatch_2d_covers_every_group_with_one_partial_row() {
        for max in [1u32, 3, 7, 65535] {
            for groups in [1u32, 2, 3, 7, 8, 100, 65535, 65536, 1 << 20] {
                let (x, y) = dispatch_2d(groups, max);
                assert!(x >= 1 && x <= max, "x = {x} for {groups} groups, max {max}");
                assert!(u64::from(x) * u64::from(y) >= u64::from(groups));
                assert!(u64::from(x) * u64::from(y - 1) < u64::from(groups));
            }
        }
    }
}
