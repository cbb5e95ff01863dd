//! Tests of `params.rs`: one field list gives both directions.

use super::*;
use crate::math::Vec3;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Fast,
    Exact,
}
crate::named_enum!(Mode { "fast" => Fast, "exact" => Exact });

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Pair {
    a: f64,
    b: f64,
}

#[derive(Clone, Debug, PartialEq)]
struct Toy {
    density: f64,
    inner: Pair,
    gravity: Vec3<f64>,
    k: [f64; 3],
    each: [Pair; 3],
    on: bool,
    n: usize,
    mode: Mode,
}

fn base() -> Toy {
    Toy {
        density: 0.0,
        inner: Pair::default(),
        gravity: Vec3::zero(),
        k: [0.0; 3],
        each: [Pair::default(); 3],
        on: false,
        n: 0,
        mode: Mode::Fast,
    }
}

crate::params!(Toy, base = base(), {
    "areal_density": f64 = density,
    "inner_b": f64 = inner.b,
    "gravity": vec3 = gravity,
    "k": triple = k,
    "each_a": each = each.a,
    "on": bool = on,
    "n": int = n,
    "mode": name<Mode> = mode,
});

fn sample() -> Toy {
    Toy {
        density: 0.06,
        inner: Pair { a: 0.0, b: 2.5 },
        gravity: Vec3::new(0.0, -9.81, 0.0),
        k: [1.0, 2.0, 3.0],
        each: [
            Pair { a: 4.0, b: 0.0 },
            Pair { a: 5.0, b: 0.0 },
            Pair { a: 6.0, b: 0.0 },
        ],
        on: true,
        n: 7,
        mode: Mode::Exact,
    }
}

#[test]
fn values_round_trip_through_the_field_list() {
    let t = sample();
    let vals = t.values();
    let keys: Vec<&str> = vals.iter().map(|(k, _)| *k).collect();
    let field_keys: Vec<&str> = Toy::FIELDS.iter().map(|(k, _)| *k).collect();
    assert_eq!(keys, field_keys);
    assert_eq!(Toy::FIELDS[7].1, Kind::Name(&["fast", "exact"]));
    assert_eq!(vals[4].1, Value::Triple([4.0, 5.0, 6.0]));
    let mut it = vals.into_iter();
    let back = Toy::from_values(&mut |key, _| {
        let (k, v) = it.next().unwrap();
        assert_eq!(k, key);
        Ok(v)
    })
    .unwrap();
    assert_eq!(back, t);
}

#[test]
fn wrong_kinds_name_the_key() {
    let err = Toy::from_values(&mut |key, kind| {
        Ok(match (key, kind) {
            ("mode", _) => Value::Name("sloppy"),
            (_, Kind::F64) => Value::F64(1.0),
            (_, Kind::Triple) => Value::Triple([0.0; 3]),
            (_, Kind::Bool) => Value::Bool(false),
            (_, Kind::Int) => Value::Int(1),
            (_, Kind::Name(n)) => Value::Name(n[0]),
        })
    })
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("\"mode\"") && err.contains("[\"fast\", \"exact\"]"),
        "{err}"
    );
    let err = Toy::from_values(&mut |key, _| {
        Ok(if key == "on" {
            Value::F64(1.0)
        } else {
            Value::Int(3)
        })
    })
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("\"gravity\"") && err.contains("three numbers"),
        "{err}"
    );
    assert_eq!(Mode::from_name("exact"), Some(Mode::Exact));
    assert_eq!(Mode::Fast.name(), "fast");
}
