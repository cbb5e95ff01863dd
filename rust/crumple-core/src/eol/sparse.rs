//! Compressed-sparse-column matrices from triplets, in the order the EOL
//! system is assembled (spec eol_cloth §12.3): the entries of every
//! element follow each other in element order, are sorted by (column, row)
//! with a stable sort and duplicates summed in that order, so the matrix is
//! the same bit for bit for any thread count (§10 test 20). Written here because
//! the two consumers (Clarabel's `CscMatrix` and faer's `SparseColMat`)
//! each take plain CSC arrays and neither sums duplicates in a documented
//! order.

/// One entry `(row, column, value)`.
pub type Triplet = (u32, u32, f64);

/// A `rows × cols` CSC matrix.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Csc {
    /// Row count.
    pub rows: usize,
    /// Column count.
    pub cols: usize,
    /// Start of each column in `rowval`/`nzval`, `cols + 1` entries.
    pub colptr: Vec<usize>,
    /// Row of each stored entry, ascending within a column.
    pub rowval: Vec<usize>,
    /// Value of each stored entry.
    pub nzval: Vec<f64>,
}

impl Csc {
    /// The matrix of `triplets` (duplicates summed in their given order;
    /// the slice is left as it was). Entries must lie inside `rows × cols`.
    pub fn from_triplets(rows: usize, cols: usize, triplets: &mut [Triplet]) -> Self {
        // The pattern (two stable counting sorts, by row then by column:
        // one stable sort by (column, row) in O(n)), then the values
        // scattered into it, duplicates summed in order.
        let coords: Vec<(u32, u32)> = triplets.iter().map(|t| (t.0, t.1)).collect();
        let (mut m, map) = Self::pattern(rows, cols, &coords);
        Self::scatter(&mut m.nzval, &map, triplets.iter().map(|t| t.2));
        m
    }

    /// The pattern [`Self::from_triplets`] would build from triplets at
    /// `coords` (row, column), with zero values, and per triplet the index
    /// of the stored entry it adds into: [`Self::scatter`] then fills the
    /// values of any triplets at the same coordinates without sorting (the
    /// same sums in the same order).
    pub fn pattern(rows: usize, cols: usize, coords: &[(u32, u32)]) -> (Self, Vec<u32>) {
        let mut start = vec![0usize; cols + 1];
        for &(_, c) in coords {
            start[c as usize + 1] += 1;
        }
        for c in 0..cols {
            start[c + 1] += start[c];
        }
        // Two stable counting sorts (by row, then by column: a radix sort)
        // give the triplets in (column, row) order with duplicates in
        // triplet order, so their sums run in triplet order; O(nnz + rows +
        // cols), where a comparison sort per column cost a third of the
        // matrix fill whenever the mesh changed.
        let mut row_next = vec![0usize; rows + 1];
        for &(r, _) in coords {
            row_next[r as usize + 1] += 1;
        }
        for r in 0..rows {
            row_next[r + 1] += row_next[r];
        }
        let mut by_row = vec![0u32; coords.len()];
        for (k, &(r, _)) in coords.iter().enumerate() {
            let slot = &mut row_next[r as usize];
            by_row[*slot] = k as u32;
            *slot += 1;
        }
        let mut next = start.clone();
        let mut order = vec![0u32; coords.len()];
        for &k in &by_row {
            let slot = &mut next[coords[k as usize].1 as usize];
            order[*slot] = k;
            *slot += 1;
        }
        let mut colptr = vec![0usize; cols + 1];
        let mut rowval = Vec::with_capacity(coords.len());
        let mut map = vec![0u32; coords.len()];
        let mut last: Option<(u32, u32)> = None;
        for &k in &order {
            let (r, c) = coords[k as usize];
            if last != Some((r, c)) {
                last = Some((r, c));
                rowval.push(r as usize);
                colptr[c as usize + 1] += 1;
            }
            map[k as usize] = (rowval.len() - 1) as u32;
        }
        for c in 0..cols {
            colptr[c + 1] += colptr[c];
        }
        let nzval = vec![0.0; rowval.len()];
        (
            Self {
                rows,
                cols,
                colptr,
                rowval,
                nzval,
            },
            map,
        )
    }

    /// Fills `nzval` from the triplet values `values` through `map` (from
    /// [`Self::pattern`]), summing duplicates in triplet order from zero.
    pub fn scatter(nzval: &mut [f64], map: &[u32], values: impl Iterator<Item = f64>) {
        nzval.fill(0.0);
        for (&z, v) in map.iter().zip(values) {
            nzval[z as usize] += v;
        }
    }

    /// An empty `rows × cols` matrix.
    pub fn zeros(rows: usize, cols: usize) -> Self {
        Self {
            rows,
            cols,
            colptr: vec![0; cols + 1],
            rowval: Vec::new(),
            nzval: Vec::new(),
        }
    }

    /// The entries on and above the diagonal (what the QP solvers take of a
    /// symmetric matrix).
    pub fn upper(&self) -> Self {
        let mut out = Self::zeros(self.rows, self.cols);
        // About half the entries of a symmetric pattern, and the diagonal.
        let half = self.rowval.len() / 2 + self.cols.min(self.rows);
        out.rowval.reserve(half);
        out.nzval.reserve(half);
        for c in 0..self.cols {
            for k in self.colptr[c]..self.colptr[c + 1] {
                if self.rowval[k] <= c {
                    out.rowval.push(self.rowval[k]);
                    out.nzval.push(self.nzval[k]);
                }
            }
            out.colptr[c + 1] = out.rowval.len();
        }
        out
    }

    /// `A x`.
    pub fn mul(&self, x: &[f64]) -> Vec<f64> {
        let mut y = vec![0.0; self.rows];
        for (c, &xc) in x.iter().enumerate().take(self.cols) {
            for k in self.colptr[c]..self.colptr[c + 1] {
                y[self.rowval[k]] += self.nzval[k] * xc;
            }
        }
        y
    }

    /// `Aᵀ y`.
    pub fn mul_t(&self, y: &[f64]) -> Vec<f64> {
        (0..self.cols)
            .map(|c| {
                (self.colptr[c]..self.colptr[c + 1])
                    .map(|k| self.nzval[k] * y[self.rowval[k]])
                    .sum()
            })
            .collect()
    }

    /// `S x` for the symmetric `S` whose upper triangle this is.
    pub fn sym_mul(&self, x: &[f64]) -> Vec<f64> {
        let mut y = vec![0.0; self.rows];
        for c in 0..self.cols {
            for k in self.colptr[c]..self.colptr[c + 1] {
                let (r, v) = (self.rowval[k], self.nzval[k]);
                y[r] += v * x[c];
                if r != c {
                    y[c] += v * x[r];
                }
            }
        }
        y
    }

    /// `self + s·other` (same shape).
    pub fn add_scaled(&self, other: &Csc, s: f64) -> Self {
        let mut t: Vec<Triplet> = self
            .triplets()
            .chain(other.triplets().map(|(r, c, v)| (r, c, s * v)))
            .collect();
        Self::from_triplets(self.rows, self.cols, &mut t)
    }

    /// The stored entries as triplets, column by column.
    pub fn triplets(&self) -> impl Iterator<Item = Triplet> + '_ {
        (0..self.cols).flat_map(move |c| {
            (self.colptr[c]..self.colptr[c + 1])
                .map(move |k| (self.rowval[k] as u32, c as u32, self.nzval[k]))
        })
    }

    /// Dense row-major copy (tests and diagnostics).
    pub fn to_dense(&self) -> Vec<Vec<f64>> {
        let mut d = vec![vec![0.0; self.cols]; self.rows];
        for (r, c, v) in self.triplets() {
            d[r as usize][c as usize] += v;
        }
        d
    }
}

/// A kept sparsity pattern: [`Self::set`] sorts the coordinates of a
/// triplet list once, [`Self::fill`] then makes the matrix of any values at
/// those coordinates in that order without sorting (the step's matrices keep
/// their pattern while the mesh and its EOL vertices do; sorting a million
/// and more triplets each step was most of the matrix fill).
#[derive(Default)]
pub struct PatternCache {
    map: Vec<u32>,
    pattern: Option<Csc>,
}

impl Clone for PatternCache {
    /// A copy starts empty (it is a cache).
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for PatternCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PatternCache")
            .field("triplets", &self.map.len())
            .finish()
    }
}

impl PatternCache {
    /// Keeps the pattern of triplets at `coords` (row, column) in a
    /// `rows × cols` matrix.
    pub fn set(&mut self, rows: usize, cols: usize, coords: &[(u32, u32)]) {
        let (p, map) = Csc::pattern(rows, cols, coords);
        self.map = map;
        self.pattern = Some(p);
    }

    /// Keeps `pattern` and `map` as [`Self::set`] would from coordinates
    /// whose [`Csc::pattern`] they are (built another way: the caller
    /// vouches for them).
    pub fn keep(&mut self, pattern: Csc, map: Vec<u32>) {
        self.map = map;
        self.pattern = Some(pattern);
    }

    /// The kept pattern (its values as they were given to [`Self::keep`]
    /// or zero), if any.
    pub fn pattern(&self) -> Option<&Csc> {
        self.pattern.as_ref()
    }

    /// The matrix of triplets with `values` at the kept coordinates (one
    /// value per coordinate, in their order; duplicates summed in that
    /// order), as [`Csc::from_triplets`] builds it. Empty when no pattern is
    /// kept; panics on a length mismatch (a caller's bug).
    pub fn fill(&self, values: &[f64]) -> Csc {
        // One comparison per matrix: values for another pattern would be
        // summed into the wrong entries without a word.
        assert_eq!(values.len(), self.map.len(), "values for a different pattern");
        let mut m = match &self.pattern {
            Some(p) => p.clone(),
            None => return Csc::default(),
        };
        Csc::scatter(&mut m.nzval, &self.map, values.iter().copied());
        m
    }
}

#[cfg(test)]
mod pattern_tests {
    use super::*;

    /// The cached pattern and its scatter give the matrix `from_triplets`
    /// gives, duplicates summed, for triplets in any order.
    #[test]
    fn pattern_and_scatter_equal_from_triplets() {
        let mut seed = 7u64;
        let mut rnd = |m: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        let t: Vec<Triplet> = (0..400)
            .map(|_| (rnd(30) as u32, rnd(25) as u32, rnd(1000) as f64 / 7.0 - 50.0))
            .collect();
        let want = Csc::from_triplets(30, 25, &mut t.clone());
        let coords: Vec<(u32, u32)> = t.iter().map(|x| (x.0, x.1)).collect();
        let (mut got, map) = Csc::pattern(30, 25, &coords);
        Csc::scatter(&mut got.nzval, &map, t.iter().map(|x| x.2));
        assert_eq!(got.colptr, want.colptr);
        assert_eq!(got.rowval, want.rowval);
        for (a, b) in got.nzval.iter().zip(&want.nzval) {
            assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} vs {b}");
        }
        // New values at the same coordinates: scattered, not re-sorted.
        let t2: Vec<Triplet> = t.iter().map(|&(r, c, v)| (r, c, 2.0 * v + 1.0)).collect();
        Csc::scatter(&mut got.nzval, &map, t2.iter().map(|x| x.2));
        let want2 = Csc::from_triplets(30, 25, &mut t2.clone());
        for (a, b) in got.nzval.iter().zip(&want2.nzval) {
            assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0));
        }
        // Against a map summed in triplet order, column-major: the same
        // entries and bit-identical sums (duplicates add in triplet order).
        let mut sums = std::collections::BTreeMap::new();
        for &(r, c, v) in &t {
            *sums.entry((c, r)).or_insert(0.0) += v;
        }
        assert_eq!(want.rowval.len(), sums.len());
        for (k, (&(c, r), &v)) in sums.iter().enumerate() {
            assert_eq!(want.rowval[k], r as usize);
            assert!(want.colptr[c as usize] <= k && k < want.colptr[c as usize + 1]);
            assert_eq!(want.nzval[k].to_bits(), (0.0 + v).to_bits(), "entry ({r}, {c})");
        }
    }
}
