//! Checkpoint layouts: every solver's state as named arrays, written and
//! read back in one place per solver.
//!
//! A checkpoint is a list of named arrays ([`Arrays`]), each with a shape
//! and f64 (or, for counters, u64) values, so a binding can turn it into
//! whatever container it likes (the Python side writes `.npz`) without
//! knowing any field. A row type says once how it flattens
//! ([`Rows::SHAPE`], [`Rows::write`]) and how it is read back
//! ([`Rows::read`], which checks what the type requires), so the column
//! layout of, say, a plastic hinge lives next to its inverse.
//!
//! Reading is strict: a missing array, a wrong shape, a non-finite value or
//! a value the row type refuses is an [`Error::InvalidInput`] naming the
//! array, and nothing is changed (solvers decode everything before they
//! write any state).

use crate::error::{Error, Result};
use crate::math::{Mat3, Real, Vec3};

/// The values of one array.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    /// Floating-point values (positions, angles, times...).
    F64(Vec<f64>),
    /// Counters (step counts).
    U64(Vec<u64>),
}

/// One named array: `shape` (empty for a scalar) and row-major values.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    /// Extent of each axis; `[]` is a scalar.
    pub shape: Vec<usize>,
    /// `shape.iter().product()` values, row-major.
    pub data: Data,
}

/// A checkpoint: arrays by name, in the order they were written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Arrays {
    items: Vec<(String, Array)>,
}

/// A value type stored as one row of `SHAPE` f64 values.
pub trait Rows: Sized {
    /// Shape of one row (`[]` for a scalar row, `[3]` for a vector, ...).
    const SHAPE: &'static [usize];
    /// Appends the row's values, row-major.
    fn write(&self, out: &mut Vec<f64>);
    /// Reads one row of `SHAPE.iter().product()` finite values; `Err` says
    /// what the row type refuses (for example a direction that is not −1, 0
    /// or 1).
    fn read(row: &[f64]) -> core::result::Result<Self, String>;
}

impl Arrays {
    /// An empty checkpoint.
    pub fn new() -> Self {
        Self::default()
    }

    /// Inserts (or replaces) `name`.
    pub fn insert(&mut self, name: &str, array: Array) {
        match self.items.iter_mut().find(|(n, _)| n == name) {
            Some((_, a)) => *a = array,
            None => self.items.push((name.to_owned(), array)),
        }
    }

    /// The array called `name`.
    pub fn get(&self, name: &str) -> Option<&Array> {
        self.items.iter().find(|(n, _)| n == name).map(|(_, a)| a)
    }

    /// Every array in writing order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Array)> {
        self.items.iter().map(|(n, a)| (n.as_str(), a))
    }

    /// Writes `rows` as an array of shape `[rows.len(), R::SHAPE...]`.
    pub fn put_rows<R: Rows>(&mut self, name: &str, rows: &[R]) {
        let width: usize = R::SHAPE.iter().product();
        let mut data = Vec::with_capacity(rows.len() * width);
        for r in rows {
            r.write(&mut data);
        }
        let mut shape = vec![rows.len()];
        shape.extend_from_slice(R::SHAPE);
        self.insert(
            name,
            Array {
                shape,
                data: Data::F64(data),
            },
        );
    }

    /// Writes a scalar.
    pub fn put_f64(&mut self, name: &str, v: f64) {
        self.insert(
            name,
            Array {
                shape: Vec::new(),
                data: Data::F64(vec![v]),
            },
        );
    }

    /// Writes a counter.
    pub fn put_u64(&mut self, name: &str, v: u64) {
        self.insert(
            name,
            Array {
                shape: Vec::new(),
                data: Data::U64(vec![v]),
            },
        );
    }

    fn require(&self, name: &str) -> Result<&Array> {
        self.get(name)
            .ok_or_else(|| Error::InvalidInput(format!("checkpoint lacks the array {name:?}")))
    }

    /// Reads `n` rows of `R` from `name`, which must have shape
    /// `[n, R::SHAPE...]` and finite values.
    pub fn rows<R: Rows>(&self, name: &str, n: usize) -> Result<Vec<R>> {
        let a = self.require(name)?;
        let mut expected = vec![n];
        expected.extend_from_slice(R::SHAPE);
        if a.shape != expected {
            return Err(Error::InvalidInput(format!(
                "checkpoint array {name:?} has shape {:?}, expected {expected:?} (was it saved from the same scene?)",
                a.shape
            )));
        }
        let values = floats(name, a)?;
        let width: usize = R::SHAPE.iter().product();
        if width == 0 {
            return Ok(Vec::new());
        }
        values
            .chunks_exact(width)
            .enumerate()
            .map(|(i, row)| {
                R::read(row)
                    .map_err(|why| Error::InvalidInput(format!("checkpoint array {name:?}, row {i}: {why}")))
            })
            .collect()
    }

    /// Reads the finite scalar `name`.
    pub fn f64(&self, name: &str) -> Result<f64> {
        let a = self.require(name)?;
        scalar_shape(name, a)?;
        Ok(floats(name, a)?[0])
    }

    /// Reads the counter `name` (a float holding a whole number is accepted).
    pub fn u64(&self, name: &str) -> Result<u64> {
        let a = self.require(name)?;
        scalar_shape(name, a)?;
        match &a.data {
            Data::U64(v) => Ok(v[0]),
            Data::F64(v) => {
                let x = v[0];
                if x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x < 2f64.powi(53) {
                    Ok(x as u64)
                } else {
                    Err(Error::InvalidInput(format!(
                        "checkpoint value {name:?} must be a non-negative whole number, got {x}"
                    )))
                }
            }
        }
    }
}

fn scalar_shape(name: &str, a: &Array) -> Result<()> {
    let len = match &a.data {
        Data::F64(v) => v.len(),
        Data::U64(v) => v.len(),
    };
    if !a.shape.is_empty() || len != 1 {
        return Err(Error::InvalidInput(format!(
            "checkpoint value {name:?} must be a scalar, got shape {:?}",
            a.shape
        )));
    }
    Ok(())
}

fn floats<'a>(name: &str, a: &'a Array) -> Result<std::borrow::Cow<'a, [f64]>> {
    let values: std::borrow::Cow<'a, [f64]> = match &a.data {
        Data::F64(v) => std::borrow::Cow::Borrowed(v.as_slice()),
        Data::U64(v) => std::borrow::Cow::Owned(v.iter().map(|&x| x as f64).collect()),
    };
    if values.len() != a.shape.iter().product::<usize>() {
        return Err(Error::InvalidInput(format!(
            "checkpoint array {name:?} holds {} values for shape {:?}",
            values.len(),
            a.shape
        )));
    }
    if let Some(i) = values.iter().position(|x| !x.is_finite()) {
        return Err(Error::InvalidInput(format!(
            "checkpoint array {name:?} has a non-finite value at flat index {i}"
        )));
    }
    Ok(values)
}

impl Rows for f64 {
    const SHAPE: &'static [usize] = &[];
    fn write(&self, out: &mut Vec<f64>) {
        out.push(*self);
    }
    fn read(row: &[f64]) -> core::result::Result<Self, String> {
        Ok(row[0])
    }
}

impl Rows for f32 {
    const SHAPE: &'static [usize] = &[];
    fn write(&self, out: &mut Vec<f64>) {
        out.push(f64::from(*self));
    }
    fn read(row: &[f64]) -> core::result::Result<Self, String> {
        Ok(row[0] as f32)
    }
}

/// An index or count stored as a whole f64 (exact below 2⁵³).
impl Rows for u32 {
    const SHAPE: &'static [usize] = &[];
    fn write(&self, out: &mut Vec<f64>) {
        out.push(f64::from(*self));
    }
    fn read(row: &[f64]) -> core::result::Result<Self, String> {
        let x = row[0];
        if x >= 0.0 && x.fract() == 0.0 && x <= f64::from(u32::MAX) {
            Ok(x as u32)
        } else {
            Err(format!("expected a whole number in [0, 2³²), got {x}"))
        }
    }
}

/// Small flags stored as whole numbers.
impl Rows for u8 {
    const SHAPE: &'static [usize] = &[];
    fn write(&self, out: &mut Vec<f64>) {
        out.push(f64::from(*self));
    }
    fn read(row: &[f64]) -> core::result::Result<Self, String> {
        let x = row[0];
        if x >= 0.0 && x.fract() == 0.0 && x <= 255.0 {
            Ok(x as u8)
        } else {
            Err(format!("expected a whole number in [0, 255], got {x}"))
        }
    }
}

/// A switch stored as 0 or 1.
impl Rows for bool {
    const SHAPE: &'static [usize] = &[];
    fn write(&self, out: &mut Vec<f64>) {
        out.push(if *self { 1.0 } else { 0.0 });
    }
    fn read(row: &[f64]) -> core::result::Result<Self, String> {
        if row[0] == 0.0 {
            Ok(false)
        } else if row[0] == 1.0 {
            Ok(true)
        } else {
            Err(format!("expected 0 or 1, got {}", row[0]))
        }
    }
}

/// `(w, x, y, z)`.
impl<T: Real> Rows for crate::math::Quat<T> {
    const SHAPE: &'static [usize] = &[4];
    fn write(&self, out: &mut Vec<f64>) {
        out.extend([self.w.to_f64(), self.x.to_f64(), self.y.to_f64(), self.z.to_f64()]);
    }
    fn read(row: &[f64]) -> core::result::Result<Self, String> {
        Ok(crate::math::Quat::new(
            T::from_f64(row[0]),
            T::from_f64(row[1]),
            T::from_f64(row[2]),
            T::from_f64(row[3]),
        ))
    }
}

/// A fixed-size float row (EOL material coordinates, encoded features).
impl<const N: usize> Rows for [f64; N] {
    const SHAPE: &'static [usize] = &[N];
    fn write(&self, out: &mut Vec<f64>) {
        out.extend_from_slice(self);
    }
    fn read(row: &[f64]) -> core::result::Result<Self, String> {
        row.try_into()
            .map_err(|_| format!("a row of {} values, {N} wanted", row.len()))
    }
}

/// A triangle or an index triple.
impl Rows for [u32; 3] {
    const SHAPE: &'static [usize] = &[3];
    fn write(&self, out: &mut Vec<f64>) {
        self.iter().for_each(|i| i.write(out));
    }
    fn read(row: &[f64]) -> core::result::Result<Self, String> {
        Ok([
            u32::read(&row[..1])?,
            u32::read(&row[1..2])?,
            u32::read(&row[2..])?,
        ])
    }
}

impl<T: Real> Rows for Vec3<T> {
    const SHAPE: &'static [usize] = &[3];
    fn write(&self, out: &mut Vec<f64>) {
        out.extend([self.x.to_f64(), self.y.to_f64(), self.z.to_f64()]);
    }
    fn read(row: &[f64]) -> core::result::Result<Self, String> {
        Ok(Vec3::new(
            T::from_f64(row[0]),
            T::from_f64(row[1]),
            T::from_f64(row[2]),
        ))
    }
}

impl<T: Real> Rows for Mat3<T> {
    const SHAPE: &'static [usize] = &[3, 3];
    fn write(&self, out: &mut Vec<f64>) {
        for r in &self.m {
            out.extend(r.iter().map(|x| x.to_f64()));
        }
    }
    fn read(row: &[f64]) -> core::result::Result<Self, String> {
        let mut m = Mat3::zero();
        for i in 0..3 {
            for j in 0..3 {
                m.m[i][j] = T::from_f64(row[3 * i + j]);
            }
        }
        Ok(m)
    }
}

/// A pair of vectors as a `[2, 3]` row (MPM element directions and tangents).
impl<T: Real> Rows for [Vec3<T>; 2] {
    const SHAPE: &'static [usize] = &[2, 3];
    fn write(&self, out: &mut Vec<f64>) {
        self[0].write(out);
        self[1].write(out);
    }
    fn read(row: &[f64]) -> core::result::Result<Self, String> {
        Ok([Vec3::read(&row[..3])?, Vec3::read(&row[3..])?])
    }
}

#[cfg(test)]
#[path = "checkpoint_tests.rs"]
mod tests;
