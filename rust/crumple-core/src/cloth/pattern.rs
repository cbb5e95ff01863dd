//! The sparsity pattern of the cloth system matrix (spec §11.2): 3×3 blocks
//! for vertex pairs sharing a triangle or a hinge's wing tips, the gather
//! lists that sum element contributions in a fixed order (§11.1), and the
//! fill-reducing vertex order of the sparse Cholesky.

use crate::geometry::csr;
use crate::math::Vec3;

/// 3×3-block CSR pattern of the system matrix (full symmetric storage) and
/// the lists that gather element contributions into it in a fixed order.
///
/// Blocks exist for vertex pairs sharing a triangle and for the two wing tips
/// of every hinge (spec §11.2). The scalar matrix stored from it is CSR of a
/// symmetric matrix, hence also its CSC, which is what the sparse Cholesky
/// reads.
#[derive(Clone, Debug)]
pub struct Pattern {
    /// Block-row pointers, `n + 1`.
    pub row_ptr: Vec<usize>,
    /// Block column of each block, sorted within a row.
    pub col: Vec<u32>,
    /// Index of the diagonal block of each row.
    pub diag: Vec<usize>,
    /// For each triangle the block indices of its 9 `(a, b)` pairs (`a*3+b`).
    pub tri_blocks: Vec<[u32; 9]>,
    /// For each hinge the block indices of its 16 `(a, b)` pairs (`a*4+b`).
    pub hinge_blocks: Vec<[u32; 16]>,
    /// Per block: contributions `src_ptr[k]..src_ptr[k+1]` in `src`.
    pub src_ptr: Vec<u32>,
    /// Contribution code: `(element << 5) | (kind << 4) | slot` where kind 0 =
    /// triangle (slot = a*3+b), kind 1 = hinge (slot = a*4+b).
    pub src: Vec<u64>,
    /// Per vertex: incident element corners `inc_ptr[i]..inc_ptr[i+1]`.
    pub inc_ptr: Vec<u32>,
    /// Incidence code: `(element << 3) | (kind << 2) | corner` (kind as above).
    pub inc: Vec<u64>,
}

impl Pattern {
    /// Number of 3×3 blocks.
    pub fn num_blocks(&self) -> usize {
        self.col.len()
    }

    /// Scalar CSR row pointers (`3n + 1`) and column indices of the layout
    /// used by the solver: block row `i` occupies the contiguous range
    /// `9·row_ptr[i] .. 9·row_ptr[i+1]`, scalar row `3i + a` inside it starts
    /// at `9·row_ptr[i] + 3·a·nb` (nb = blocks in the row).
    pub fn scalar_csr(&self) -> (Vec<u32>, Vec<u32>) {
        let n = self.row_ptr.len() - 1;
        let mut ptr = Vec::with_capacity(3 * n + 1);
        let mut idx = Vec::with_capacity(9 * self.num_blocks());
        for i in 0..n {
            let (lo, hi) = (self.row_ptr[i], self.row_ptr[i + 1]);
            let nb = hi - lo;
            for a in 0..3 {
                ptr.push((9 * lo + 3 * a * nb) as u32);
                for k in lo..hi {
                    for c in 0..3 {
                        idx.push(3 * self.col[k] + c as u32);
                    }
                }
            }
        }
        ptr.push((9 * self.num_blocks()) as u32);
        (ptr, idx)
    }

    pub(super) fn build(n: usize, faces: &[[u32; 3]], hinges: &[[u32; 4]]) -> Self {
        // Neighbour sets: triangle pairs and hinge wing tips.
        let mut nbr: Vec<Vec<u32>> = (0..n as u32).map(|i| vec![i]).collect();
        for f in faces {
            for &a in f {
                for &b in f {
                    nbr[a as usize].push(b);
                }
            }
        }
        for h in hinges {
            nbr[h[2] as usize].push(h[3]);
            nbr[h[3] as usize].push(h[2]);
        }
        let mut row_ptr = Vec::with_capacity(n + 1);
        let mut col = Vec::new();
        let mut diag = Vec::with_capacity(n);
        row_ptr.push(0);
        for (i, l) in nbr.iter_mut().enumerate() {
            l.sort_unstable();
            l.dedup();
            for &j in l.iter() {
                if j as usize == i {
                    diag.push(col.len());
                }
                col.push(j);
            }
            row_ptr.push(col.len());
        }
        let find = |i: u32, j: u32| -> u32 {
            let (lo, hi) = (row_ptr[i as usize], row_ptr[i as usize + 1]);
            (lo + col[lo..hi]
                .binary_search(&j)
                .expect("pattern holds every element pair")) as u32
        };
        let tri_blocks: Vec<[u32; 9]> = faces
            .iter()
            .map(|f| core::array::from_fn(|s| find(f[s / 3], f[s % 3])))
            .collect();
        let hinge_blocks: Vec<[u32; 16]> = hinges
            .iter()
            .map(|h| core::array::from_fn(|s| find(h[s / 4], h[s % 4])))
            .collect();
        // Gather lists, in element order within each block (fixed, so the sum
        // is the same for any thread count).
        let nbk = col.len();
        let tri_src = tri_blocks.iter().enumerate().flat_map(|(t, bl)| {
            bl.iter()
                .enumerate()
                .map(move |(s, &b)| (b, ((t as u64) << 5) | s as u64))
        });
        let hinge_src = hinge_blocks.iter().enumerate().flat_map(|(h, bl)| {
            bl.iter()
                .enumerate()
                .map(move |(s, &b)| (b, ((h as u64) << 5) | (1 << 4) | s as u64))
        });
        let (src_ptr, src) = csr(nbk, tri_src.chain(hinge_src));
        let tri_inc = faces.iter().enumerate().flat_map(|(t, f)| {
            f.iter()
                .enumerate()
                .map(move |(c, &v)| (v, ((t as u64) << 3) | c as u64))
        });
        let hinge_inc = hinges.iter().enumerate().flat_map(|(h, hv)| {
            hv.iter()
                .enumerate()
                .map(move |(c, &v)| (v, ((h as u64) << 3) | (1 << 2) | c as u64))
        });
        let (inc_ptr, inc) = csr(n, tri_inc.chain(hinge_inc));
        Pattern {
            row_ptr,
            col,
            diag,
            tri_blocks,
            hinge_blocks,
            src_ptr,
            src,
            inc_ptr,
            inc,
        }
    }
}

/// Fill-reducing elimination order of the mesh vertices for the sparse
/// Cholesky: geometric nested dissection on the rest positions (recursive
/// median bisection along the longest axis; the vertices of one half that
/// touch the other half form the separator, ordered last).
///
/// Why not the solver's default AMD on the scalar matrix: on these 2-D
/// surface meshes nested dissection gives markedly less fill and keeps the
/// three unknowns of a vertex together (dense 3×3 blocks → larger
/// supernodes); measured on the 27K-vertex twist tube it cut the
/// factorization time (see `benches/cloth_wrinkles.py`). faer offers AMD and
/// COLAMD only, so this small ordering is written here.
pub fn nested_dissection(positions: &[Vec3<f64>], pattern: &Pattern) -> Vec<u32> {
    const LEAF: usize = 48;
    let n = positions.len();
    let mut order = Vec::with_capacity(n);
    // side[v]: 0 = outside the current set, 1 = left, 2 = right.
    let mut side = vec![0u8; n];
    let mut stack: Vec<(Vec<u32>, bool)> = vec![((0..n as u32).collect(), false)];
    // Iterative post-order: a set is split into (left, right, separator); the
    // separator is emitted after both halves, so it is pushed first with the
    // `done` flag.
    while let Some((set, done)) = stack.pop() {
        if done || set.len() <= LEAF {
            order.extend_from_slice(&set);
            continue;
        }
        let (mut lo, mut hi) = (positions[set[0] as usize], positions[set[0] as usize]);
        for &v in &set {
            lo = lo.component_min(positions[v as usize]);
            hi = hi.component_max(positions[v as usize]);
        }
        let ext = hi - lo;
        let axis = if ext.x >= ext.y && ext.x >= ext.z {
            0
        } else if ext.y >= ext.z {
            1
        } else {
            2
        };
        let mut s = set;
        let mid = s.len() / 2;
        s.select_nth_unstable_by(mid, |&a, &b| {
            positions[a as usize][axis]
                .total_cmp(&positions[b as usize][axis])
                .then(a.cmp(&b))
        });
        for (k, &v) in s.iter().enumerate() {
            side[v as usize] = if k < mid { 1 } else { 2 };
        }
        let mut left = Vec::with_capacity(mid);
        let mut sep = Vec::new();
        for &v in &s[..mid] {
            let (a, b) = (pattern.row_ptr[v as usize], pattern.row_ptr[v as usize + 1]);
            if pattern.col[a..b].iter().any(|&u| side[u as usize] == 2) {
                sep.push(v);
            } else {
                left.push(v);
            }
        }
        let right: Vec<u32> = s[mid..].to_vec();
        for &v in &s {
            side[v as usize] = 0;
        }
        if left.is_empty() || right.is_empty() {
            // Degenerate split (all points equal along the axis): stop here.
            order.extend_from_slice(&s);
            continue;
        }
        left.sort_unstable();
        sep.sort_unstable();
        stack.push((sep, true));
        stack.push((right, false));
        stack.push((left, false));
    }
    order
}
