//! Parameter structs as flat records of named values, each field named once.
//!
//! The Python API passes materials, switches and step settings as flat
//! dicts keyed by the Python names. Instead of a hand-written mapping per
//! struct in the binding (a field then had one name in Python, one in the
//! mapping and one in the core), each struct lists its fields once with
//! [`params!`](crate::params!): the key (the Python name), the kind of value
//! and the path of the field in the struct. From that one list the macro
//! makes both directions, [`Params::from_values`] and [`Params::values`],
//! and the binding converts any [`Params`] type with one generic function.
//! Enumerations cross as names through [`Named`] ([`named_enum!`](crate::named_enum!)).

use crate::error::{Error, Result};

/// One value of a parameter record.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A real number.
    F64(f64),
    /// Three reals: a vector or one value per membrane component (uu, vv, uv).
    Triple([f64; 3]),
    /// A switch.
    Bool(bool),
    /// A count.
    Int(u64),
    /// One of the names of a [`Named`] enumeration.
    Name(&'static str),
}

/// What kind of value a field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// [`Value::F64`]
    F64,
    /// [`Value::Triple`]
    Triple,
    /// [`Value::Bool`]
    Bool,
    /// [`Value::Int`]
    Int,
    /// [`Value::Name`], one of these.
    Name(&'static [&'static str]),
}

/// A struct that crosses the API as a record of named values.
pub trait Params: Sized {
    /// Every field: its key and kind, in declaration order.
    const FIELDS: &'static [(&'static str, Kind)];

    /// Builds the struct from `get(key, kind)`, asked once per field in
    /// [`FIELDS`](Self::FIELDS) order; a binding answers from a dict.
    fn from_values(get: &mut dyn FnMut(&'static str, Kind) -> Result<Value>) -> Result<Self>;

    /// Every field's key and value, in [`FIELDS`](Self::FIELDS) order.
    fn values(&self) -> Vec<(&'static str, Value)>;
}

/// An enumeration that crosses the API by name.
pub trait Named: Copy + Sized + 'static {
    /// Every name, in declaration order.
    const NAMES: &'static [&'static str];
    /// The variant called `name`.
    fn from_name(name: &str) -> Option<Self>;
    /// This variant's name.
    fn name(self) -> &'static str;
}

impl Value {
    fn wrong(&self, key: &str, what: &str) -> Error {
        Error::InvalidInput(format!("parameter {key:?} must be {what}, got {self:?}"))
    }

    /// The real number of field `key`.
    pub fn f64(&self, key: &str) -> Result<f64> {
        match *self {
            Value::F64(v) => Ok(v),
            Value::Int(v) => Ok(v as f64),
            _ => Err(self.wrong(key, "a number")),
        }
    }

    /// The three numbers of field `key`.
    pub fn triple(&self, key: &str) -> Result<[f64; 3]> {
        match *self {
            Value::Triple(v) => Ok(v),
            _ => Err(self.wrong(key, "three numbers")),
        }
    }

    /// The switch of field `key`.
    pub fn bool(&self, key: &str) -> Result<bool> {
        match *self {
            Value::Bool(v) => Ok(v),
            _ => Err(self.wrong(key, "True or False")),
        }
    }

    /// The count of field `key`, converted to the field's integer type.
    pub fn int<I: TryFrom<u64>>(&self, key: &str) -> Result<I> {
        match *self {
            Value::Int(v) => I::try_from(v).map_err(|_| self.wrong(key, "a smaller count")),
            _ => Err(self.wrong(key, "a whole number")),
        }
    }

    /// The variant of `N` named by field `key`.
    pub fn named<N: Named>(&self, key: &str) -> Result<N> {
        match self {
            Value::Name(s) => {
                N::from_name(s).ok_or_else(|| self.wrong(key, &format!("one of {:?}", N::NAMES)))
            }
            _ => Err(self.wrong(key, &format!("one of {:?}", N::NAMES))),
        }
    }
}

/// Implements [`Named`] for a fieldless enum: `named_enum!(Kernel { "quadratic" => Quadratic, ... })`.
#[macro_export]
macro_rules! named_enum {
    ($t:ty { $($name:literal => $v:ident),* $(,)? }) => {
        impl $crate::params::Named for $t {
            const NAMES: &'static [&'static str] = &[$($name),*];
            fn from_name(name: &str) -> Option<Self> {
                match name {
                    $($name => Some(Self::$v),)*
                    _ => None,
                }
            }
            fn name(self) -> &'static str {
                match self {
                    $(Self::$v => $name,)*
                }
            }
        }
    };
}

/// Implements [`Params`] for a struct from one list of fields:
///
/// ```text
/// params!(Material, base = Material::cotton(), {
///     "areal_density": f64 = density,          // a real field (any path: membrane.k11)
///     "gravity": vec3 = gravity,               // a Vec3<f64> field
///     "tensile_friction_stiffness": triple = tensile_friction_stiffness, // an [f64; 3]
///     "tensile_eps0": each = tensile_friction.eps0,  // eps0 of each of 3 structs
///     "self_collision": bool = self_collision,
///     "cg_max_iterations": int = cg_max_iterations,
///     "linear_solver": name<LinearSolver> = linear_solver,
/// });
/// ```
///
/// `base` is the value the fields are written into (every field is then
/// set, so it only needs to exist).
#[macro_export]
macro_rules! params {
    ($t:ty, base = $base:expr, { $($key:literal : $kind:ident $(<$nt:ty>)? = $f:ident $(. $g:ident)*),* $(,)? }) => {
        impl $crate::params::Params for $t {
            const FIELDS: &'static [(&'static str, $crate::params::Kind)] =
                &[$(($key, $crate::__param_kind!($kind $(<$nt>)?))),*];

            fn from_values(
                get: &mut dyn FnMut(&'static str, $crate::params::Kind) -> $crate::Result<$crate::params::Value>,
            ) -> $crate::Result<Self> {
                let mut out: $t = $base;
                $(
                    let v = get($key, $crate::__param_kind!($kind $(<$nt>)?))?;
                    $crate::__param_set!($kind $(<$nt>)?, out, v, $key, $f $(. $g)*);
                )*
                Ok(out)
            }

            fn values(&self) -> Vec<(&'static str, $crate::params::Value)> {
                vec![$(($key, $crate::__param_get!($kind, self, $f $(. $g)*))),*]
            }
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __param_kind {
    (f64) => {
        $crate::params::Kind::F64
    };
    (vec3) => {
        $crate::params::Kind::Triple
    };
    (triple) => {
        $crate::params::Kind::Triple
    };
    (each) => {
        $crate::params::Kind::Triple
    };
    (bool) => {
        $crate::params::Kind::Bool
    };
    (int) => {
        $crate::params::Kind::Int
    };
    (name<$nt:ty>) => {
        $crate::params::Kind::Name(<$nt as $crate::params::Named>::NAMES)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __param_set {
    (f64, $o:ident, $v:ident, $k:literal, $($p:tt)*) => { $o.$($p)* = $v.f64($k)?; };
    (vec3, $o:ident, $v:ident, $k:literal, $($p:tt)*) => {
        $o.$($p)* = $crate::math::Vec3::from_array($v.triple($k)?);
    };
    (triple, $o:ident, $v:ident, $k:literal, $($p:tt)*) => { $o.$($p)* = $v.triple($k)?; };
    (each, $o:ident, $v:ident, $k:literal, $f:ident . $($g:tt)*) => {
        let t = $v.triple($k)?;
        for (c, x) in t.into_iter().enumerate() {
            $o.$f[c].$($g)* = x;
        }
    };
    (bool, $o:ident, $v:ident, $k:literal, $($p:tt)*) => { $o.$($p)* = $v.bool($k)?; };
    (int, $o:ident, $v:ident, $k:literal, $($p:tt)*) => { $o.$($p)* = $v.int($k)?; };
    (name<$nt:ty>, $o:ident, $v:ident, $k:literal, $($p:tt)*) => { $o.$($p)* = $v.named::<$nt>($k)?; };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __param_get {
    (f64, $s:ident, $($p:tt)*) => { $crate::params::Value::F64($s.$($p)*) };
    (vec3, $s:ident, $($p:tt)*) => { $crate::params::Value::Triple($s.$($p)*.to_array()) };
    (triple, $s:ident, $($p:tt)*) => { $crate::params::Value::Triple($s.$($p)*) };
    (each, $s:ident, $f:ident . $($g:tt)*) => {
        $crate::params::Value::Triple(core::array::from_fn(|c| $s.$f[c].$($g)*))
    };
    (bool, $s:ident, $($p:tt)*) => { $crate::params::Value::Bool($s.$($p)*) };
    (int, $s:ident, $($p:tt)*) => { $crate::params::Value::Int($s.$($p)* as u64) };
    (name, $s:ident, $($p:tt)*) => { $crate::params::Value::Name($crate::params::Named::name($s.$($p)*)) };
}

#[cfg(test)]
#[path = "params_tests.rs"]
mod tests;
