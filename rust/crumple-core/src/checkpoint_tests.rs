//! Tests of `checkpoint.rs`.

use super::*;

#[test]
fn rows_round_trip_with_shapes() {
    let mut a = Arrays::new();
    let v = vec![Vec3::new(1.0f32, -2.5, 3.25), Vec3::new(0.1, 0.2, 0.3)];
    let m = vec![Mat3::<f64>::from_rows_array([
        [1.0, 2.0, 3.0],
        [4.0, 5.0, 6.0],
        [7.0, 8.0, 9.5],
    ])];
    let pairs = vec![[Vec3::new(1.0f64, 0.0, 0.0), Vec3::new(0.0, 1.0, 0.0)]; 4];
    a.put_rows("v", &v);
    a.put_rows("m", &m);
    a.put_rows("pairs", &pairs);
    a.put_rows::<f64>("empty", &[]);
    a.put_f64("time", 0.125);
    a.put_u64("step", 7);
    assert_eq!(a.get("v").unwrap().shape, [2, 3]);
    assert_eq!(a.get("m").unwrap().shape, [1, 3, 3]);
    assert_eq!(a.get("pairs").unwrap().shape, [4, 2, 3]);
    assert_eq!(a.get("empty").unwrap().shape, [0]);
    assert_eq!(a.rows::<Vec3<f32>>("v", 2).unwrap(), v);
    assert_eq!(a.rows::<Mat3<f64>>("m", 1).unwrap(), m);
    assert_eq!(a.rows::<[Vec3<f64>; 2]>("pairs", 4).unwrap(), pairs);
    assert!(a.rows::<f64>("empty", 0).unwrap().is_empty());
    assert_eq!(a.f64("time").unwrap(), 0.125);
    assert_eq!(a.u64("step").unwrap(), 7);
    let names: Vec<&str> = a.iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["v", "m", "pairs", "empty", "time", "step"]);
}

#[test]
fn bad_arrays_are_named_in_the_error() {
    let mut a = Arrays::new();
    a.put_rows("x", &[Vec3::new(0.0f64, 0.0, 0.0); 3]);
    a.put_rows("bad", &[Vec3::new(0.0f64, f64::NAN, 0.0)]);
    a.put_f64("half", 2.5);
    let msg = |e: Error| e.to_string();
    assert!(
        msg(a.rows::<Vec3<f64>>("x", 4).unwrap_err()).contains("\"x\" has shape [3, 3], expected [4, 3]")
    );
    assert!(msg(a.rows::<f64>("x", 3).unwrap_err()).contains("expected [3]"));
    assert!(msg(a.rows::<Vec3<f64>>("missing", 1).unwrap_err()).contains("lacks the array \"missing\""));
    assert!(msg(a.rows::<Vec3<f64>>("bad", 1).unwrap_err()).contains("non-finite value at flat index 1"));
    assert!(msg(a.u64("half").unwrap_err()).contains("whole number"));
    assert!(msg(a.f64("x").unwrap_err()).contains("must be a scalar"));
    // A float holding a whole number is a valid counter (older files).
    a.put_f64("count", 12.0);
    assert_eq!(a.u64("count").unwrap(), 12);
    // Data inconsistent with its shape is refused rather than read past.
    a.insert(
        "short",
        Array {
            shape: vec![2, 3],
            data: Data::F64(vec![0.0; 5]),
        },
    );
    assert!(msg(a.rows::<Vec3<f64>>("short", 2).unwrap_err()).contains("holds 5 values"));
}

#[test]
fn insert_replaces_by_name() {
    let mut a = Arrays::new();
    a.put_f64("t", 1.0);
    a.put_f64("t", 2.0);
    assert_eq!(a.iter().count(), 1);
    assert_eq!(a.f64("t").unwrap(), 2.0);
}
