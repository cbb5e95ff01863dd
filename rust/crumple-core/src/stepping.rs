//! Fixed-step time splitting shared by the solvers with a constant step
//! (cloth, shape matching): how `advance(duration)` cuts the interval so it
//! lands exactly on its end and takes the same steps as repeated `step()`.

/// The next step from `now` towards `end` with step `dt` (s), or `None` when
/// the end is reached. A remainder below 1e-6 dt joins the step before it
/// (a vanishing step would divide by ~0 in a velocity update); one below
/// 1e-9 dt is rounding of the summed time. A step within rounding of `dt`
/// is exactly `dt`, so advancing by a multiple of `dt` matches `step()`.
pub(crate) fn next_fixed_step(now: f64, end: f64, dt: f64) -> Option<f64> {
    let (tiny, merge) = (1e-9 * dt, 1e-6 * dt);
    let remaining = end - now;
    if remaining <= tiny {
        return None;
    }
    let h = if remaining - dt <= merge { remaining } else { dt };
    Some(if (h - dt).abs() <= tiny { dt } else { h })
}

#[cfg(test)]
mod tests {
    use super::next_fixed_step;

    #[test]
    fn lands_on_the_end_with_whole_steps() {
        let dt = 0.01;
        let mut t = 0.0;
        let mut steps = Vec::new();
        while let Some(h) = next_fixed_step(t, 0.035, dt) {
            steps.push(h);
            t += h;
        }
        assert_eq!(steps.len(), 4);
        assert!(steps[..3].iter().all(|h| *h == dt));
        assert!((steps[3] - 0.005).abs() < 1e-15);
        // A remainder of 1e-8 dt joins the last step; exact multiples take whole steps.
        assert_eq!(
            next_fixed_step(0.0, dt * (1.0 + 1e-8), dt),
            Some(dt * (1.0 + 1e-8))
        );
        assert_eq!(next_fixed_step(0.0, 0.0, dt), None);
        assert_eq!(next_fixed_step(0.0, dt * (1.0 + 1e-12), dt), Some(dt));
    }
}
