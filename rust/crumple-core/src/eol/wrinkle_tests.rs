//! The cloth module's wrinkles on an EOL cloth: off, they are the elastic
//! model bit for bit; the crease line's state survives the sizing remesh's
//! splits and nothing else takes it; a sheet held over a box edge keeps a
//! sharper crease after the box is gone when it was held longer; the state
//! comes back from a checkpoint and is the same for any thread count.

use super::*;
use crate::cloth::material::{Material, Wrinkles as Switches};
use crate::eol::element::Mat2d;
use crate::eol::obstacle::BoxObstacle;
use crate::eol::sizing::Sizing;
use crate::eol::step::Stepper;
use crate::geometry::grid_mesh;
use crate::math::Vec3;

/// Cotton (the cloth module's Table 2 row: κ_f = 2 κ_b, friction threshold
/// 0.1 rad growing to 1.7 rad with dwell, τ_f = 30 s) with switches `w`.
fn cotton(w: Switches) -> ElementParams {
    ElementParams::new(&Material::preset("cotton").unwrap(), &w)
}

/// The drape test's sheet (0.5 m, `res`² quads) lying over the top edge
/// of a box, half of it beyond; bending from `p`'s κ_b.
fn drape(res: usize, p: &ElementParams) -> Stepper {
    let m = grid_mesh((0.5, 0.5), (res, res), Vec3::new(0.0, 0.0, 0.001), 2).unwrap();
    let u: Vec<Mat2d> = m.vertices().iter().map(|v| [v.x, v.y]).collect();
    let mut params = crate::eol::system::test_params(9.8);
    params.bending = p.kappa_b;
    let mut s = Stepper::new(m.vertices().to_vec(), u, m.faces().to_vec(), params, 2e-3).unwrap();
    s.boxes = vec![BoxObstacle::new(
        Vec3::new(-0.5, 0.0, -0.5),
        Vec3::new(0.5, 1.0, 0.5),
    )];
    s.tau = 0.005;
    s
}

/// [`drape`] with the wrinkle model `p` on, after `steps` steps.
fn wrinkled(res: usize, p: &ElementParams, steps: usize) -> Stepper {
    let mut s = drape(res, p);
    s.set_wrinkles(Some(*p));
    for _ in 0..steps {
        s.step().unwrap();
    }
    s
}

fn bits(s: &Stepper) -> Vec<[u64; 3]> {
    crate::test_util::bits(&s.mesh.x)
}

/// With every element off the wrinkle path gives the plain elastic
/// model's bits (moment `s κ_b θ`, coefficient `s κ_b`), EOL vertices and
/// remeshing included.
#[test]
fn wrinkles_off_are_the_elastic_model_bit_for_bit() {
    let p = cotton(Switches::off());
    let mut a = drape(8, &p);
    let mut b = drape(8, &p);
    b.set_wrinkles(Some(p));
    for _ in 0..60 {
        a.step().unwrap();
        b.step().unwrap();
    }
    assert!(a.mesh.eol.iter().any(|e| *e), "the sheet never reached the edge");
    assert_eq!(bits(&a), bits(&b));
    // And the states followed the hinges through the remesher.
    assert_eq!(b.wrinkles.as_ref().unwrap().hinges.len(), b.mesh.hinges.len());
}

/// The hinges on a crease line (θ_p = 1 rad set there, 0 elsewhere) keep
/// their state through the sizing remesh's splits: every hinge whose edge
/// lies on the line has θ_p = 1, every other hinge 0.
#[test]
fn the_crease_state_follows_its_edges_through_the_sizing_remesh() {
    let (res, fold) = (4, 0.125);
    let m = grid_mesh((0.5, 0.5), (res, res), Vec3::new(0.25, 0.25, 0.0), 2).unwrap();
    let u: Vec<Mat2d> = m.vertices().iter().map(|v| [v.x, v.y]).collect();
    let x = u
        .iter()
        .map(|p| {
            if p[1] > fold {
                Vec3::new(p[0], fold, fold - p[1])
            } else {
                Vec3::new(p[0], p[1], 0.0)
            }
        })
        .collect();
    let mut s = Stepper::new(x, u, m.faces().to_vec(), crate::eol::system::strip_params(), 1e-3).unwrap();
    s.set_wrinkles(Some(cotton(Switches::default())));
    let on_line = |s: &Stepper, h: &crate::geometry::Hinge| {
        h.vertices[..2]
            .iter()
            .all(|&v| (s.mesh.u[v as usize][1] - fold).abs() < 1e-12)
    };
    let w = s.wrinkles.as_mut().unwrap();
    let mut marked = 0;
    for (st, h) in w.hinges.iter_mut().zip(&s.mesh.hinges) {
        if h.vertices[..2]
            .iter()
            .all(|&v| (s.mesh.u[v as usize][1] - fold).abs() < 1e-12)
        {
            st.plastic.theta_p = 1.0;
            marked += 1;
        }
    }
    assert_eq!(marked, res, "the fold must be a mesh line");
    let saved = s.wrinkles.as_ref().unwrap().save(&s.mesh, &s.ids);
    let h0 = s.mesh.hinges.len();
    let pinned = vec![false; s.mesh.x.len()];
    let mut c = s.cloth(&pinned);
    let r = c.adapt(&Sizing::default());
    c.finish().unwrap();
    assert!(r.split > 0, "{r:?}");
    let (mesh, ids) = (s.mesh.clone(), s.ids.clone());
    s.wrinkles.as_mut().unwrap().carry(&saved, &mesh, &ids);
    let w = s.wrinkles.as_ref().unwrap();
    let mut on = 0;
    for (st, h) in w.hinges.iter().zip(&s.mesh.hinges) {
        let want = if on_line(&s, h) { 1.0 } else { 0.0 };
        on += usize::from(want == 1.0);
        assert_eq!(st.plastic.theta_p, want, "hinge {h:?}");
    }
    println!(
        "crease: {h0} → {} hinges, {r:?}, {on} on the crease line",
        s.mesh.hinges.len()
    );
    assert!(on > marked, "the crease edges were not split ({on} on the line)");
}

/// The signed angles (rad) of the hinges whose edges join two of `line`'s
/// vertex ids.
fn line_angles(s: &Stepper, line: &[u32]) -> Vec<f64> {
    s.mesh
        .hinges
        .iter()
        .filter(|h| {
            h.vertices[..2]
                .iter()
                .all(|&v| line.binary_search(&s.ids[v as usize]).is_ok())
        })
        .map(|h| s.mesh.hinge_angle(h))
        .collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// Issue 16 (beyond the paper): a denim sheet held over a box edge, then
/// let go: the box is removed and gravity turned off, so only the cloth's
/// own moments unfold the crease, and the crease line's angle swings about
/// the angle the cloth keeps (measured as its mean over the last second of
/// two). That angle is larger after a long hold (200 s of dwell by the
/// hold-time warp, spec §4.6) than after a short one; the elastic sheet's
/// swings about flat.
#[test]
fn a_crease_held_longer_stays_sharper() {
    let run = |w: Switches, warp: f64| {
        let p = ElementParams::new(&Material::preset("denim").unwrap(), &w);
        let mut s = drape(8, &p);
        s.set_wrinkles(Some(p));
        for k in 0..120 {
            if k == 100 {
                // The fold has formed: the hold's last 20 steps are warped.
                s.wrinkles.as_mut().unwrap().warp_per_step = warp;
                s.wrinkles.as_mut().unwrap().warp_steps = 20;
            }
            s.step().unwrap();
        }
        let line: Vec<u32> = (0..s.mesh.x.len())
            .filter(|&i| s.mesh.eol[i])
            .map(|i| s.ids[i])
            .collect();
        let held = mean(&line_angles(&s, &line));
        s.remove_box(0);
        s.params.gravity = Vec3::zero();
        s.h = 5e-3;
        let mut late = Vec::new();
        for k in 0..400 {
            s.step().unwrap();
            if k >= 200 {
                late.push(mean(&line_angles(&s, &line)));
            }
        }
        assert!(s.mesh.x.iter().all(|x| x.is_finite()));
        (
            held,
            mean(&late),
            late.iter().fold(f64::INFINITY, |a, &b| a.min(b)),
        )
    };
    let (eh, elastic, emin) = run(Switches::off(), 0.0);
    let (sh, short, smin) = run(Switches::default(), 0.0);
    let (lh, long, lmin) = run(Switches::default(), 10.0);
    println!(
        "crease line (mean θ, rad): held {eh:.3}/{sh:.3}/{lh:.3}; after release, mean (least) over the \
         last second: elastic {elastic:.3} ({emin:.3}), short hold {short:.3} ({smin:.3}), long hold \
         {long:.3} ({lmin:.3})"
    );
    assert!(
        sh.abs() > 0.5 && lh.abs() > 0.5,
        "the sheet did not fold over the edge"
    );
    // Measured: held -1.28 rad; about -0.109 (long), -0.001 (short), 0.004
    // (elastic). The short hold's threshold (0.1 rad, κ_f = 0.42 κ_b) keeps
    // about 0.04 rad at rest, inside this measure's swing: only the long
    // hold is asked to keep a crease, and the elastic sheet to lose it.
    assert!(elastic.abs() < 0.03, "the elastic sheet kept {elastic} rad");
    assert!(long.abs() > 0.05, "the long hold kept only {long} rad");
    assert!(long.abs() > 3.0 * short.abs(), "long {long} vs short {short}");
}

/// A checkpoint keeps the hinges' wrinkle state: a run restored mid-way
/// ends on the same bits as one that went straight through.
#[test]
fn a_checkpoint_keeps_the_wrinkle_state() {
    let p = cotton(Switches::default());
    let mut a = wrinkled(6, &p, 40);
    let cp = a.checkpoint();
    let mut b = wrinkled(6, &p, 0);
    b.restore(&cp).unwrap();
    assert_eq!(a.wrinkles, b.wrinkles);
    for _ in 0..20 {
        a.step().unwrap();
        b.step().unwrap();
    }
    assert_eq!(bits(&a), bits(&b));
    assert!(
        a.wrinkles
            .as_ref()
            .unwrap()
            .hinges
            .iter()
            .any(|h| h.friction.t_stick > 0.0)
    );
}

#[test]
fn wrinkled_steps_are_the_same_for_any_thread_count() {
    crate::test_util::same_across_threads(|| {
        let s = wrinkled(6, &cotton(Switches::default()), 40);
        let w = s.wrinkles.as_ref().unwrap();
        let st: Vec<u64> = w
            .hinges
            .iter()
            .flat_map(|h| [h.plastic.theta_p.to_bits(), h.friction.anchor.to_bits()])
            .collect();
        (bits(&s), st)
    });
}

/// Through the whole step with the sizing remesh on (both remeshers
/// change the hinges every step): a sheet of cotton with a low yield angle
/// (0.3 rad) folded over a box edge yields at the fold, and the hinges that
/// carry a plastic angle stay there (a state carried to the wrong hinge
/// would put plastic angles away from the crease).
#[test]
fn plastic_angles_stay_at_the_fold_through_the_step_with_sizing() {
    let mut mat = Material::preset("cotton").unwrap();
    mat.bend_plastic.eps_y0 = 0.3;
    let p = ElementParams::new(&mat, &Switches::default());
    let mut s = drape(8, &p);
    s.sizing = Some(Sizing {
        size_min: 0.03,
        size_max: 0.08,
        ..Sizing::default()
    });
    s.set_wrinkles(Some(p));
    let mut changed = 0;
    for _ in 0..120 {
        let r = s.step().unwrap();
        changed += usize::from(r.adapt != Default::default() || r.remesh != Default::default());
        let w = s.wrinkles.as_ref().unwrap();
        assert_eq!(w.hinges.len(), s.mesh.hinges.len());
    }
    let eol: Vec<Vec3<f64>> = (0..s.mesh.x.len())
        .filter(|&i| s.mesh.eol[i])
        .map(|i| s.mesh.x[i])
        .collect();
    assert!(!eol.is_empty(), "the sheet is not on the edge");
    let w = s.wrinkles.as_ref().unwrap();
    let (mut yielded, mut at_crease) = (0, 0);
    for (st, h) in w.hinges.iter().zip(&s.mesh.hinges) {
        let tp = st.plastic.theta_p;
        if tp.abs() <= 0.05 {
            continue;
        }
        yielded += 1;
        let mid = (s.mesh.x[h.vertices[0] as usize] + s.mesh.x[h.vertices[1] as usize]) * 0.5;
        let d = eol
            .iter()
            .map(|e| (*e - mid).norm())
            .fold(f64::INFINITY, f64::min);
        let theta = s.mesh.hinge_angle(h);
        at_crease += usize::from(d < 0.05);
        // At the crease, or bent past the yield angle where it is (the
        // hanging end flaps): and bent the way it yielded.
        assert!(
            (d < 0.05 || theta.abs() >= 0.3) && tp.signum() == theta.signum(),
            "θ_p {tp} on a hinge {d} m from the crease at θ {theta}"
        );
    }
    println!(
        "sized fold: {changed} of 120 steps remeshed, {} hinges, {yielded} with |θ_p| > 0.05 rad, {at_crease} at the crease",
        s.mesh.hinges.len()
    );
    assert!(changed > 10, "the remeshers hardly ran ({changed} steps)");
    assert!(
        at_crease >= 8,
        "the crease did not keep its plastic angles ({at_crease})"
    );
}

/// A checkpoint's wrinkle states are refused, the stepper unchanged, for a
/// cloth without wrinkles and when a clock is negative or a state not
/// finite; the same checkpoint without the fault restores.
#[test]
fn a_checkpoint_with_bad_wrinkle_states_is_refused() {
    let p = cotton(Switches::default());
    let a = wrinkled(6, &p, 10);
    let good = a.checkpoint();
    let mut plain = drape(6, &p);
    assert!(plain.restore(&good).is_err());
    assert_eq!((plain.step_count, plain.wrinkles.is_none()), (0, true));
    let mut b = wrinkled(6, &p, 0);
    let before = b.wrinkles.clone();
    for fault in [-1.0, f64::NAN] {
        let mut w = a.wrinkles.clone().unwrap();
        w.hinges[0].friction.t_stick = fault;
        let mut bad = a.clone();
        bad.wrinkles = Some(w);
        assert!(b.restore(&bad.checkpoint()).is_err(), "t_stick {fault} accepted");
        assert_eq!(b.wrinkles, before);
    }
    b.restore(&good).unwrap();
    assert_eq!(b.wrinkles, a.wrinkles);
}
