//! Compressed-sparse-column matrices from triplets, in the order the EOL
//! system is assembled (spec eol_cloth §12.3): the triplets of every
//! element are concatenated in element order, sorted by (column, row) with a
//! stable sort and duplicates summed in that order, so the matrix is the
//! same bit for bit for any thread count (§10 test 20). Written here because
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
    /// The matrix of `triplets` (left in (column, row) order; duplicates
    /// summed in their given order). Entries must lie inside `rows × cols`.
    pub fn from_triplets(rows: usize, cols: usize, triplets: &mut [Triplet]) -> Self {
        // A stable counting sort by column, then a stable sort of each
        // column by row: the same order as one stable sort by (column, row),
        // in O(n) plus the short per-column sorts (a few dozen entries),
        // where the full sort was most of the step's matrix fill.
        let mut start = vec![0usize; cols + 1];
        for &(_, c, _) in triplets.iter() {
            start[c as usize + 1] += 1;
        }
        for c in 0..cols {
            start[c + 1] += start[c];
        }
        let mut next = start.clone();
        let mut sorted: Vec<Triplet> = vec![(0, 0, 0.0); triplets.len()];
        for &t in triplets.iter() {
            let slot = &mut next[t.1 as usize];
            sorted[*slot] = t;
            *slot += 1;
        }
        for c in 0..cols {
            sorted[start[c]..start[c + 1]].sort_by_key(|&(r, _, _)| r);
        }
        triplets.copy_from_slice(&sorted);
        let mut colptr = vec![0usize; cols + 1];
        let mut rowval = Vec::with_capacity(triplets.len());
        let mut nzval: Vec<f64> = Vec::with_capacity(triplets.len());
        let mut last: Option<(u32, u32)> = None;
        for &(r, c, v) in triplets.iter() {
            debug_assert!((r as usize) < rows && (c as usize) < cols);
            if last == Some((r, c)) {
                if let Some(z) = nzval.last_mut() {
                    *z += v;
                }
                continue;
            }
            last = Some((r, c));
            rowval.push(r as usize);
            nzval.push(v);
            colptr[c as usize + 1] += 1;
        }
        for c in 0..cols {
            colptr[c + 1] += colptr[c];
        }
        Self {
            rows,
            cols,
            colptr,
            rowval,
            nzval,
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
