//! The generalized system of one EOL step (spec eol_cloth §2.3, §3.3–3.6):
//! the velocity layout `q̇ = [ẋ_0 … ẋ_{N−1}, Ẋ_{e(0)} … Ẋ_{e(M−1)}]`, and the
//! generalized mass `M`, stiffness `K = ∂f/∂q` and force `f` assembled from
//! the cloth module's element kernels (membrane: `cloth::membrane`, the
//! orthotropic StVK of the persistent-wrinkles model with its Gauss–Newton
//! Jacobian; bending: `cloth::hinge`, the dihedral-angle hinge) mapped by
//! each element's `J_node = [I, −F_e]`, plus gravity. Rest shapes come from
//! the current material coordinates (§11 item 23), so an element's mass and
//! stiffness change as its EOL nodes slide in material space.

use rayon::prelude::*;

use super::element::{Block5, Grad, MASS_WEIGHTS, Mat2d, deformation_gradient, map_force, pair_block};
use super::sparse::{Csc, PatternCache};
use crate::cloth::hinge;
use crate::cloth::membrane::{self, MembraneStiffness, TriangleRest};
use crate::geometry::Hinge;
use crate::math::{Mat3, Vec3};

/// Cloth material of an EOL simulation (per unit material area).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClothParams {
    /// Area density ρ, kg/m².
    pub density: f64,
    /// Membrane stiffnesses, N/m (the cloth module's orthotropic model).
    pub membrane: MembraneStiffness,
    /// Bending stiffness κ, J (energy ½κ s θ² per hinge, s = l̄²/(Ā0+Ā1)).
    pub bending: f64,
    /// Gravity, m/s².
    pub gravity: Vec3<f64>,
}

/// Where each vertex's velocities sit in `q̇` (spec §2.3).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dofs {
    /// Vertex count N.
    pub vertices: usize,
    /// Per vertex: its index among the EOL vertices, or −1.
    pub eidx: Vec<i32>,
    /// The EOL vertices, ascending.
    pub eol: Vec<u32>,
}

impl Dofs {
    /// The layout for the EOL flags `eol` (one per vertex).
    pub fn new(eol: &[bool]) -> Self {
        let mut eidx = vec![-1; eol.len()];
        let mut list = Vec::new();
        for (i, e) in eol.iter().enumerate() {
            if *e {
                eidx[i] = list.len() as i32;
                list.push(i as u32);
            }
        }
        Self {
            vertices: eol.len(),
            eidx,
            eol: list,
        }
    }

    /// Unknowns `3N + 2M_e`.
    pub fn len(&self) -> usize {
        3 * self.vertices + 2 * self.eol.len()
    }

    /// True without vertices.
    pub fn is_empty(&self) -> bool {
        self.vertices == 0
    }

    /// Per unknown, its group in the QP's fill-reducing ordering
    /// ([`super::qp::KktWorkspace::group_unknowns`]): vertex `i`'s three ẋ
    /// unknowns are group `i`, an EOL vertex's two Ẋ unknowns group `N + e`
    /// (`e` its index among the EOL vertices). Ẋ has its own group: with
    /// ẋ and Ẋ of a vertex in one, the fast QP path at a box corner (whose
    /// Ẋ is fixed by inequality rows only) differed from Clarabel by 2e-5
    /// of the largest velocity over the 250 steps of the corner test in
    /// `tests/test_eol.py`; apart, by 2e-8 (1e-7 with AMD on every
    /// unknown).
    pub fn groups(&self) -> impl Iterator<Item = u32> + '_ {
        let nv = self.vertices;
        (0..self.len()).map(move |d| if d < 3 * nv { d / 3 } else { nv + (d - 3 * nv) / 2 } as u32)
    }

    /// First row of `ẋ_i`.
    #[inline]
    pub fn x(&self, i: usize) -> usize {
        3 * i
    }

    /// First row of `Ẋ_i`, for an EOL vertex.
    #[inline]
    pub fn u(&self, i: usize) -> Option<usize> {
        let e = self.eidx[i];
        (e >= 0).then(|| 3 * self.vertices + 2 * e as usize)
    }

    /// The rows of vertex i's generalized velocity: 3 (Lagrangian) or 5.
    #[inline]
    fn rows(&self, i: usize) -> ([u32; 5], usize) {
        let x = self.x(i) as u32;
        match self.u(i) {
            Some(u) => ([x, x + 1, x + 2, u as u32, u as u32 + 1], 5),
            None => ([x, x + 1, x + 2, 0, 0], 3),
        }
    }
}

/// An EOL cloth mesh at one instant: world and material positions per
/// vertex, faces counter-clockwise in material space, EOL flags.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mesh {
    /// World positions, m.
    pub x: Vec<Vec3<f64>>,
    /// Material coordinates, m.
    pub u: Vec<Mat2d>,
    /// Triangles.
    pub faces: Vec<[u32; 3]>,
    /// Interior edges with their two faces (the cloth module's hinge order).
    pub hinges: Vec<Hinge>,
    /// EOL flag per vertex.
    pub eol: Vec<bool>,
}

impl Mesh {
    /// Lumped vertex masses (kg): `density` (kg/m²) times a third of the
    /// material area of the faces around each vertex.
    pub fn lumped_masses(&self, density: f64) -> Vec<f64> {
        let mut m = vec![0.0; self.x.len()];
        for f in &self.faces {
            let a = super::element::signed_area(&f.map(|k| self.u[k as usize]));
            for &k in f {
                m[k as usize] += density * a / 3.0;
            }
        }
        m
    }

    /// Signed dihedral angle of hinge `h` (rad, flat = 0: the cloth
    /// module's convention).
    pub fn hinge_angle(&self, h: &Hinge) -> f64 {
        hinge::dihedral_angle_and_gradient(&h.vertices.map(|i| self.x[i as usize])).0
    }

    /// Per undirected edge `(smaller, larger)`, the number of faces on it
    /// (1 on the border), in edge order, so every walk over it (the first
    /// border edge found at a vertex, spec §6.1's b̄) is the same on every
    /// run, as a HashMap's order is not.
    pub fn edge_face_counts(&self) -> EdgeCounts {
        let (start, slot) = edge_buckets(&self.faces);
        let mut out: Vec<((u32, u32), u32)> = Vec::with_capacity(slot.len() / 2 + 1);
        for (a, w) in start.windows(2).enumerate() {
            for &(b, _) in &slot[w[0] as usize..w[1] as usize] {
                let e = (a as u32, b);
                match out.last_mut() {
                    Some((last, c)) if *last == e => *c += 1,
                    _ => out.push((e, 1)),
                }
            }
        }
        EdgeCounts(out)
    }
}

/// The face edges of `faces` grouped by their smaller end: bucket `a` is
/// `slot[start[a]..start[a + 1]]`, its `(larger end, face)` pairs sorted,
/// so reading the buckets in turn gives every `((a, b), face)` in
/// ascending order. A counting sort (one bucket per vertex, a few entries
/// each) rather than one comparison sort of the 3F face edges: the
/// remeshers build edge tables several times a step (each split sweep,
/// flip and collapse pass, the contact pass, the rows).
pub(crate) fn edge_buckets(faces: &[[u32; 3]]) -> (Vec<u32>, Vec<(u32, u32)>) {
    let nv = faces.iter().flatten().max().map_or(0, |&k| k as usize + 1);
    let (start, mut slot) = crate::geometry::csr(
        nv,
        faces.iter().enumerate().flat_map(|(fi, f)| {
            (0..3).map(move |k| {
                let (a, b) = (f[k], f[(k + 1) % 3]);
                (a.min(b), (a.max(b), fi as u32))
            })
        }),
    );
    for w in start.windows(2) {
        slot[w[0] as usize..w[1] as usize].sort_unstable();
    }
    (start, slot)
}

/// The faces on each undirected edge `(smaller, larger)` of a mesh, in
/// edge order ([`Mesh::edge_face_counts`]), with the reads of an ordered
/// map.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EdgeCounts(Vec<((u32, u32), u32)>);

impl EdgeCounts {
    /// `(edge, count)`, in edge order.
    pub fn iter(&self) -> impl Iterator<Item = ((u32, u32), u32)> + '_ {
        self.0.iter().copied()
    }

    /// The edges, in order.
    pub fn keys(&self) -> impl Iterator<Item = &(u32, u32)> {
        self.0.iter().map(|(k, _)| k)
    }

    /// The face count of edge `e` (`(smaller, larger)`), if it is one.
    pub fn get(&self, e: &(u32, u32)) -> Option<&u32> {
        self.0
            .binary_search_by(|(k, _)| k.cmp(e))
            .ok()
            .map(|i| &self.0[i].1)
    }

    /// Whether `e` (`(smaller, larger)`) is an edge.
    pub fn contains_key(&self, e: &(u32, u32)) -> bool {
        self.get(e).is_some()
    }

    /// The number of edges.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True without edges.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl IntoIterator for EdgeCounts {
    type Item = ((u32, u32), u32);
    type IntoIter = std::vec::IntoIter<((u32, u32), u32)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

/// The assembled system: `M`, `K` (full, symmetric), `f`, and the layout.
#[derive(Clone, Debug, Default)]
pub struct System {
    /// Velocity layout.
    pub dofs: Dofs,
    /// Generalized mass, kg (and kg·m/m for the material rows).
    pub mass: Csc,
    /// Generalized stiffness `K = ∂f/∂q` (negative semidefinite), N/m.
    pub stiffness: Csc,
    /// Generalized force, N.
    pub force: Vec<f64>,
    /// Each face's F (3×2) at this configuration.
    pub face_grad: Vec<Grad>,
    /// The [`AssemblyCache`] pattern `mass` and `stiffness` were filled on
    /// (0: none), so [`System::qp_terms_with`] knows when its kept `M − h²K`
    /// pattern still fits them.
    pattern_id: u64,
}

/// Writes the block `b` between nodes i and j (only the rows/columns that
/// exist, row-major) into `out` from `*at` on, and moves `*at` past it.
#[inline]
fn emit(dofs: &Dofs, i: usize, j: usize, b: &Block5, out: &mut [f64], at: &mut usize) {
    let (ni, nj) = (dofs.rows(i).1, dofs.rows(j).1);
    for row in b.iter().take(ni) {
        out[*at..*at + nj].copy_from_slice(&row[..nj]);
        *at += nj;
    }
}

/// [`emit`] of `pair_block(k, f, f)`: between two Lagrangian vertices
/// (3 rows each, most pairs of every mesh) `k` itself, without the
/// Eulerian rows and columns `pair_block` would compute for `emit` to drop
/// (they were about half of an element's time on the FRICTION bench row).
/// The same values either way.
/// (`f`: the element's F, the same at both vertices.)
#[inline]
fn emit_pair(dofs: &Dofs, i: usize, j: usize, k: &Mat3<f64>, f: &Grad, out: &mut [f64], at: &mut usize) {
    if dofs.u(i).is_none() && dofs.u(j).is_none() {
        for row in &k.m {
            out[*at..*at + 3].copy_from_slice(row);
            *at += 3;
        }
    } else {
        emit(dofs, i, j, &pair_block(k, f, f), out, at);
    }
}

/// The coordinates of the entries [`emit`] writes for the block between
/// nodes i and j, in the same order.
#[cfg(test)]
fn emit_coords(dofs: &Dofs, i: usize, j: usize, out: &mut Vec<(u32, u32)>) {
    let ((ri, ni), (rj, nj)) = (dofs.rows(i), dofs.rows(j));
    for &r in &ri[..ni] {
        for &c in &rj[..nj] {
            out.push((r, c));
        }
    }
}

/// How many entries an element on `vertices` emits: every pair of its
/// nodes, each with its 3 or 5 rows.
fn element_entries(dofs: &Dofs, vertices: &[u32]) -> usize {
    let n: usize = vertices.iter().map(|&v| dofs.rows(v as usize).1).sum();
    n * n
}

/// The pattern and map [`Csc::pattern`] gives for the coordinates
/// [`emit_coords`] lists for every vertex pair of each face and then of
/// each hinge (`hinges`: their four vertices), built from the block
/// structure instead of sorting those coordinates: every block between two
/// vertices of an element is full, so column `c` of vertex `j` holds the
/// `ẋ` rows of `j`'s neighbours (the vertices sharing an element with it,
/// ascending) and then the `Ẋ` rows of the EOL ones among them, and an
/// entry's place in its column follows from its row vertex's place among
/// the neighbours. The same arrays as the sort's (checked in the tests), in
/// O(entries) with sequential writes: the two counting sorts over a million
/// coordinates were a fifth of a step on meshes the sizing remesh changes
/// every step.
fn block_pattern(dofs: &Dofs, faces: &[[u32; 3]], hinges: &[[u32; 4]]) -> (Csc, Vec<u32>) {
    let nv = dofs.vertices;
    let elements = || {
        faces
            .iter()
            .map(|f| f.as_slice())
            .chain(hinges.iter().map(|h| h.as_slice()))
    };
    // Neighbour lists (with the vertex itself), sorted and without repeats.
    let mut start = vec![0usize; nv + 1];
    for e in elements() {
        for &j in e {
            start[j as usize + 1] += e.len();
        }
    }
    for j in 0..nv {
        start[j + 1] += start[j];
    }
    let mut fill = start.clone();
    let mut all = vec![0u32; start[nv]];
    for e in elements() {
        for &j in e {
            let at = &mut fill[j as usize];
            all[*at..*at + e.len()].copy_from_slice(e);
            *at += e.len();
        }
    }
    let mut nbr_start = vec![0usize; nv + 1];
    let mut nbr: Vec<u32> = Vec::with_capacity(all.len() / 2);
    // Per neighbour entry: the EOL vertices before it in its list.
    let mut eol_before: Vec<u32> = Vec::with_capacity(all.len() / 2);
    let mut eol_count = vec![0u32; nv];
    for j in 0..nv {
        let list = &mut all[start[j]..start[j + 1]];
        list.sort_unstable();
        let mut last = None;
        let mut e = 0u32;
        for &i in list.iter() {
            if last == Some(i) {
                continue;
            }
            last = Some(i);
            nbr.push(i);
            eol_before.push(e);
            if dofs.eidx[i as usize] >= 0 {
                e += 1;
            }
        }
        eol_count[j] = e;
        nbr_start[j + 1] = nbr.len();
    }
    // Columns in dof order: the ẋ columns of every vertex, then the Ẋ
    // columns of the EOL vertices in their order.
    let n = dofs.len();
    let column_vertex = |c: usize| {
        if c < 3 * nv {
            c / 3
        } else {
            dofs.eol[(c - 3 * nv) / 2] as usize
        }
    };
    let column_len = |j: usize| 3 * (nbr_start[j + 1] - nbr_start[j]) + 2 * eol_count[j] as usize;
    let mut colptr = vec![0usize; n + 1];
    for c in 0..n {
        colptr[c + 1] = colptr[c] + column_len(column_vertex(c));
    }
    let mut rowval = Vec::with_capacity(colptr[n]);
    for c in 0..n {
        let j = column_vertex(c);
        let list = &nbr[nbr_start[j]..nbr_start[j + 1]];
        for &i in list {
            let x = dofs.x(i as usize);
            rowval.extend([x, x + 1, x + 2]);
        }
        for &i in list {
            if let Some(u) = dofs.u(i as usize) {
                rowval.extend([u, u + 1]);
            }
        }
    }
    // The map, in emit_coords' order: per element, per (row vertex i,
    // column vertex j), per row of i, per column of j. Each element's part
    // has a fixed place, so the elements are mapped on the thread pool (on
    // a remeshed step this runs beside the collision detection, which is
    // shorter: the thread that finishes it takes elements over).
    let elements: Vec<&[u32]> = elements().collect();
    let lengths: Vec<usize> = elements.iter().map(|e| element_entries(dofs, e)).collect();
    let mut map = vec![0u32; lengths.iter().sum()];
    elements
        .par_iter()
        .zip(split_by(&mut map, &lengths).into_par_iter())
        .with_min_len(256)
        .for_each(|(e, out)| {
            let mut at = 0;
            for &i in e.iter() {
                let (ri, ni) = dofs.rows(i as usize);
                for &j in e.iter() {
                    let j = j as usize;
                    let (rj, nj) = dofs.rows(j);
                    let list = &nbr[nbr_start[j]..nbr_start[j + 1]];
                    let p = list
                        .binary_search(&i)
                        .unwrap_or_else(|_| unreachable!("i is j's neighbour"));
                    let x_rows = 3 * list.len();
                    let u_at = x_rows + 2 * eol_before[nbr_start[j] + p] as usize;
                    for (k, _) in ri[..ni].iter().enumerate() {
                        let rank = if k < 3 { 3 * p + k } else { u_at + k - 3 };
                        for &c in &rj[..nj] {
                            out[at] = (colptr[c as usize] + rank) as u32;
                            at += 1;
                        }
                    }
                }
            }
        });
    let nzval = vec![0.0; rowval.len()];
    (
        Csc {
            rows: n,
            cols: n,
            colptr,
            rowval,
            nzval,
        },
        map,
    )
}

/// Splits `buf` into consecutive pieces of the given lengths.
fn split_by<'a, T>(mut buf: &'a mut [T], lengths: &[usize]) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(lengths.len());
    for &l in lengths {
        let (head, tail) = buf.split_at_mut(l);
        out.push(head);
        buf = tail;
    }
    out
}

/// What one face hands back: its F and the generalized force on each corner
/// (its matrix entries went into the value buffers).
type FaceOut = (Grad, [(usize, [f64; 5]); 3]);

/// The storage indices of `m`'s entries on or above the diagonal, in
/// storage order; their (row, column) are appended to `coords` if given.
fn upper_entries(m: &Csc, mut coords: Option<&mut Vec<(u32, u32)>>) -> Vec<u32> {
    let mut idx = Vec::new();
    for c in 0..m.cols {
        for k in m.colptr[c]..m.colptr[c + 1] {
            if m.rowval[k] <= c {
                idx.push(k as u32);
                if let Some(coords) = coords.as_deref_mut() {
                    coords.push((m.rowval[k] as u32, c as u32));
                }
            }
        }
    }
    idx
}

/// When every stored entry of `m` is one of `k` (the assembled M and K: a
/// face's blocks are in both, a hinge's in K only), the pattern of the
/// entries of `m` and `k` on or above the diagonal is `k`'s upper triangle,
/// and the map [`Csc::pattern`] would give for [`upper_entries`]' lists of
/// `m` then `k` follows by walking the columns: the same arrays without the
/// sort. None when `m` has an entry `k` lacks.
fn upper_within(m: &Csc, k: &Csc) -> Option<(Csc, Vec<u32>)> {
    if m.cols != k.cols || m.rows != k.rows {
        return None;
    }
    let mut colptr = vec![0usize; k.cols + 1];
    let mut rowval = Vec::new();
    let mut m_map = Vec::new();
    for c in 0..k.cols {
        let start = rowval.len();
        for &r in &k.rowval[k.colptr[c]..k.colptr[c + 1]] {
            // Rows ascending without repeats (a public field could break it).
            if rowval.len() > start && rowval.last().is_some_and(|&q| q >= r) {
                return None;
            }
            if r <= c {
                rowval.push(r);
            }
        }
        let column = &rowval[start..];
        for &r in &m.rowval[m.colptr[c]..m.colptr[c + 1]] {
            if r <= c {
                m_map.push((start + column.binary_search(&r).ok()?) as u32);
            }
        }
        colptr[c + 1] = rowval.len();
    }
    let map = m_map.into_iter().chain(0..rowval.len() as u32).collect();
    let nzval = vec![0.0; rowval.len()];
    Some((
        Csc {
            rows: k.rows,
            cols: k.cols,
            colptr,
            rowval,
            nzval,
        },
        map,
    ))
}

/// Unique ids of assembled patterns (0 is "none").
static NEXT_PATTERN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Assembles `M`, `K` and `f` of `mesh` (spec §3.3–3.5). Errors for a face
/// that is degenerate in material space.
pub fn assemble(mesh: &Mesh, p: &ClothParams) -> crate::Result<System> {
    assemble_with(mesh, p, &mut Default::default(), None)
}

/// The hinge shape factor `s = l̄²/(Ā_0 + Ā_1)` of `h` from the current
/// material coordinates (they change as EOL vertices slide, §11 item 23).
pub fn shape_factor(mesh: &Mesh, h: &Hinge) -> f64 {
    let (u0, u1) = (mesh.u[h.vertices[0] as usize], mesh.u[h.vertices[1] as usize]);
    let len = ((u1[0] - u0[0]).powi(2) + (u1[1] - u0[1]).powi(2)).sqrt();
    let area = |f: u32| {
        let u = mesh.faces[f as usize].map(|i| mesh.u[i as usize]);
        super::element::material_inverse(&u).map_or(0.0, |(_, a)| a)
    };
    hinge::shape_factor(len, area(h.faces[0]), area(h.faces[1]))
}

/// The patterns [`assemble_with`] and [`System::qp_terms_with`] keep
/// between steps (mass, stiffness, `M − h²K`) and the value buffers they
/// fill. The element values go straight into flat buffers at fixed offsets
/// and are summed into the kept patterns; the entries' coordinates are
/// listed and sorted only when the faces, hinges or EOL flags changed
/// (what they depend on), so a step that keeps its mesh moves each value
/// once instead of building, copying and comparing a triplet per entry.
#[derive(Debug, Default)]
pub struct AssemblyCache {
    mass: PatternCache,
    stiffness: PatternCache,
    lhs: PatternCache,
    /// The faces, hinge vertices and EOL flags the patterns were built for.
    faces: Vec<[u32; 3]>,
    hinges: Vec<[u32; 4]>,
    eol: Vec<bool>,
    /// Id of the mass/stiffness patterns (0: none yet).
    id: u64,
    /// The pattern of `M̃`'s upper triangle (values zero) for the kept
    /// patterns, what [`System::qp_terms_with`] builds (the stiffness
    /// pattern holds the mass pattern); shared, so the stepper's analysis
    /// reads it beside the assembly without a copy a step.
    lhs_upper: std::sync::Arc<Csc>,
    /// The pattern id `lhs` was built for, and which stored entries of M and
    /// K lie on or above the diagonal (in storage order).
    lhs_for: u64,
    mass_upper: Vec<u32>,
    stiffness_upper: Vec<u32>,
    /// Where K's upper triangle is `M̃`'s pattern (`upper_within`): per
    /// entry of `M̃`, M's stored entry there (`u32::MAX`: none), so its
    /// values are gathered in one pass; empty otherwise.
    mass_at: Vec<u32>,
    /// The stored-entry counts of M and K the lists above index.
    upper_of: (usize, usize),
    /// Value buffers (mass, stiffness), reused.
    mv: Vec<f64>,
    kv: Vec<f64>,
}

impl AssemblyCache {
    /// Whether the kept patterns are those of `mesh` (its faces, hinge
    /// vertices and EOL flags).
    pub fn is_for(&self, mesh: &Mesh) -> bool {
        self.id != 0
            && self.faces == mesh.faces
            && self.eol == mesh.eol
            && self
                .hinges
                .iter()
                .copied()
                .eq(mesh.hinges.iter().map(|h| h.vertices))
    }

    /// Builds the patterns of M, K and `M̃`'s upper triangle for `mesh`
    /// unless they are the ones kept: what [`assemble_with`] does first,
    /// callable ahead of it (the stepper does it beside the collision
    /// detection when the mesh changed, so the QP's structure analysis
    /// has `M̃`'s pattern before the values are assembled).
    pub fn prepare(&mut self, mesh: &Mesh) {
        if self.is_for(mesh) {
            return;
        }
        let dofs = Dofs::new(&mesh.eol);
        self.hinges.clear();
        self.hinges.extend(mesh.hinges.iter().map(|h| h.vertices));
        // M's pattern (the faces') and K's (the faces' and the hinges')
        // side by side: on a remeshed step this runs beside the collision
        // detection, and the thread that finishes first takes over.
        let ((m, m_map), (k, k_map)) = rayon::join(
            || block_pattern(&dofs, &mesh.faces, &[]),
            || block_pattern(&dofs, &mesh.faces, &self.hinges),
        );
        self.mass.keep(m, m_map);
        self.lhs_upper = std::sync::Arc::new(k.upper());
        self.stiffness.keep(k, k_map);
        self.faces.clone_from(&mesh.faces);
        self.eol.clone_from(&mesh.eol);
        self.id = NEXT_PATTERN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// The pattern of `M̃ = M − h²K`'s upper triangle (values zero) as
    /// [`System::qp_terms_with`] builds it for the mesh of the last
    /// [`Self::prepare`] (empty before one).
    pub fn lhs_pattern(&self) -> std::sync::Arc<Csc> {
        self.lhs_upper.clone()
    }
}

impl Clone for AssemblyCache {
    /// A copy starts empty (it is a cache; its patterns would not come
    /// along, see [`PatternCache`]).
    fn clone(&self) -> Self {
        Self::default()
    }
}

/// [`assemble`], listing and sorting the entries' coordinates only when the
/// faces, hinge vertices or EOL flags changed since the last call with
/// `cache` (the same matrices); `bend`, when given, is
/// each hinge's moment (J) and Gauss–Newton coefficient (J/rad) in place of
/// the elastic `κ s θ` and `κ s` (the wrinkle model, `super::wrinkle`).
pub fn assemble_with(
    mesh: &Mesh,
    p: &ClothParams,
    cache: &mut AssemblyCache,
    bend: Option<&[(f64, f64)]>,
) -> crate::Result<System> {
    if let Some(b) = bend
        && b.len() != mesh.hinges.len()
    {
        return Err(crate::Error::InvalidInput(format!(
            "{} hinge moments for {} hinges",
            b.len(),
            mesh.hinges.len()
        )));
    }
    let dofs = Dofs::new(&mesh.eol);
    let n = dofs.len();
    // Every element writes its values at a fixed offset: faces first (the
    // same count into M and K), then the hinges (K only). The order is the
    // triplet order of spec §12.3, so duplicates sum in it for any thread
    // count.
    let face_len: Vec<usize> = mesh.faces.iter().map(|f| element_entries(&dofs, f)).collect();
    let hinge_len: Vec<usize> = mesh
        .hinges
        .iter()
        .map(|h| element_entries(&dofs, &h.vertices))
        .collect();
    let face_total: usize = face_len.iter().sum();
    let hinge_total: usize = hinge_len.iter().sum();
    let mut mv = std::mem::take(&mut cache.mv);
    let mut kv = std::mem::take(&mut cache.kv);
    mv.resize(face_total, 0.0);
    kv.resize(face_total + hinge_total, 0.0);
    let (kv_faces, kv_hinges) = kv.split_at_mut(face_total);
    // Per face: F, the rest data, then mass, membrane and gravity.
    let faces: Vec<crate::Result<FaceOut>> = mesh
        .faces
        .par_iter()
        .zip(split_by(&mut mv, &face_len).into_par_iter())
        .zip(split_by(kv_faces, &face_len).into_par_iter())
        .enumerate()
        .map(|(t, ((f, m), k))| {
            let x = f.map(|v| mesh.x[v as usize]);
            let u = f.map(|v| mesh.u[v as usize]);
            let (grad, area) = deformation_gradient(&x, &u).ok_or_else(|| {
                crate::Error::InvalidInput(format!(
                    "face {t} is degenerate in material space (corners {u:?}); remesh or drop it"
                ))
            })?;
            let rest = TriangleRest::from_uv(u)?;
            let strain = membrane::green_strain(&rest, &x);
            let mut force = [Vec3::zero(); 3];
            let mut jac = [[Mat3::zero(); 3]; 3];
            membrane::add_membrane(&rest, &strain, &p.membrane, &strain.e, &mut force, &mut jac);
            let (mut am, mut ak) = (0, 0);
            let mut genf = [(0usize, [0.0; 5]); 3];
            for a in 0..3 {
                let i = f[a] as usize;
                for b in 0..3 {
                    let j = f[b] as usize;
                    let c = p.density * area * MASS_WEIGHTS[a][b];
                    emit_pair(&dofs, i, j, &(Mat3::identity() * c), &grad, m, &mut am);
                    emit_pair(&dofs, i, j, &jac[a][b], &grad, k, &mut ak);
                }
                let g = p.gravity * (p.density * area / 3.0);
                genf[a] = (i, map_force(force[a] + g, &grad));
            }
            Ok((grad, genf))
        })
        .collect();
    let mut face_grad = Vec::with_capacity(faces.len());
    let mut force = vec![0.0; n];
    let add_force = |i: usize, g: &[f64; 5], force: &mut [f64]| {
        let (rows, ni) = dofs.rows(i);
        for a in 0..ni {
            force[rows[a] as usize] += g[a];
        }
    };
    let mut failed = None;
    for r in faces {
        match r {
            Ok((grad, genf)) => {
                face_grad.push(grad);
                for (i, g) in &genf {
                    add_force(*i, g, &mut force);
                }
            }
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    if let Some(e) = failed {
        cache.mv = mv;
        cache.kv = kv;
        return Err(e);
    }
    // Per hinge: the cloth module's bending, mapped with ½(F_0 + F_1).
    let hinges: Vec<[(usize, [f64; 5]); 4]> = mesh
        .hinges
        .par_iter()
        .zip(split_by(kv_hinges, &hinge_len).into_par_iter())
        .enumerate()
        .map(|(e, (h, k))| {
            let v = h.vertices.map(|i| i as usize);
            let x = v.map(|i| mesh.x[i]);
            let grad = Grad::mean(&face_grad[h.faces[0] as usize], &face_grad[h.faces[1] as usize]);
            let (theta, g) = hinge::dihedral_angle_and_gradient(&x);
            // Plain elastic bending toward flat, or the wrinkle model's
            // moment and Gauss–Newton coefficient computed before assembly
            // (`super::wrinkle`).
            let (moment, coef) = match bend {
                Some(b) => b[e],
                None => {
                    let s = shape_factor(mesh, h);
                    (p.bending * s * theta, p.bending * s)
                }
            };
            let forces = hinge::hinge_forces(&g, moment);
            let mut at = 0;
            for a in 0..4 {
                for b in 0..4 {
                    let blk = hinge::hinge_jacobian_block(&g, coef, a, b);
                    emit_pair(&dofs, v[a], v[b], &blk, &grad, k, &mut at);
                }
            }
            [0, 1, 2, 3].map(|a| (v[a], map_force(forces[a], &grad)))
        })
        .collect();
    for genf in hinges {
        for (i, g) in &genf {
            add_force(*i, g, &mut force);
        }
    }
    cache.prepare(mesh);
    let system = System {
        mass: cache.mass.fill(&mv),
        stiffness: cache.stiffness.fill(&kv),
        force,
        face_grad,
        dofs,
        pattern_id: cache.id,
    };
    cache.mv = mv;
    cache.kv = kv;
    Ok(system)
}

impl System {
    /// `M̃ = M − h²K` (upper triangle, what the QP takes) and
    /// `f̃ = M q̇ⁿ + h f` (spec §3.6) for step `h` (s) and velocities `qd`.
    pub fn implicit_euler(&self, h: f64, qd: &[f64]) -> (Csc, Vec<f64>) {
        let lhs = self.mass.add_scaled(&self.stiffness, -h * h).upper();
        let mut rhs = self.mass.mul(qd);
        for (r, f) in rhs.iter_mut().zip(&self.force) {
            *r += h * f;
        }
        (lhs, rhs)
    }

    /// The QP's `P` (upper `M̃`) and `q = −f̃` for step `h` and velocities `qd`.
    pub fn qp_terms(&self, h: f64, qd: &[f64]) -> (Csc, Vec<f64>) {
        self.qp_terms_with(h, qd, &mut Default::default())
    }

    /// [`Self::qp_terms`] with `M − h²K` built on the pattern `cache` keeps.
    pub fn qp_terms_with(&self, h: f64, qd: &[f64], cache: &mut AssemblyCache) -> (Csc, Vec<f64>) {
        // The entries of M and K on or above the diagonal, M's first, in
        // storage order: listed (and the pattern sorted) once per pattern.
        // (`mass` and `stiffness` are public: the counts catch a system
        // whose matrices were replaced after assembly.)
        let counts = (self.mass.nzval.len(), self.stiffness.nzval.len());
        if self.pattern_id == 0 || cache.lhs_for != self.pattern_id || cache.upper_of != counts {
            cache.mass_upper = upper_entries(&self.mass, None);
            cache.stiffness_upper = upper_entries(&self.stiffness, None);
            let n = self.mass.rows;
            cache.mass_at.clear();
            match upper_within(&self.mass, &self.stiffness) {
                Some((pattern, map)) => {
                    // The map lists M's upper entries' places first, then
                    // K's upper entries, which are the pattern's in order.
                    cache.mass_at.resize(pattern.nzval.len(), u32::MAX);
                    for (&at, &k) in map.iter().zip(&cache.mass_upper) {
                        cache.mass_at[at as usize] = k;
                    }
                    cache.lhs.keep(pattern, map);
                }
                None => {
                    // The entries' coordinates, sorted into a pattern (only
                    // for matrices not assembled together).
                    let mut coords = Vec::new();
                    upper_entries(&self.mass, Some(&mut coords));
                    upper_entries(&self.stiffness, Some(&mut coords));
                    cache.lhs.set(n, n, &coords);
                }
            }
            cache.lhs_for = self.pattern_id;
            cache.upper_of = counts;
        }
        let s = -h * h;
        let lhs = match cache.lhs.pattern() {
            // One gather per entry, in the order `fill` sums the same
            // values (0, then M's entry, then −h²K's), so the same bits
            // without the value list and its scatter (about half of this
            // function's time on the FRICTION bench row).
            Some(pattern) if !cache.mass_at.is_empty() => Csc {
                rows: pattern.rows,
                cols: pattern.cols,
                colptr: pattern.colptr.clone(),
                rowval: pattern.rowval.clone(),
                nzval: cache
                    .mass_at
                    .iter()
                    .zip(&cache.stiffness_upper)
                    .map(|(&m, &k)| {
                        let m = if m == u32::MAX {
                            0.0
                        } else {
                            0.0 + self.mass.nzval[m as usize]
                        };
                        m + s * self.stiffness.nzval[k as usize]
                    })
                    .collect(),
            },
            _ => {
                let mut values = std::mem::take(&mut cache.mv);
                values.clear();
                values.extend(cache.mass_upper.iter().map(|&k| self.mass.nzval[k as usize]));
                values.extend(
                    cache
                        .stiffness_upper
                        .iter()
                        .map(|&k| s * self.stiffness.nzval[k as usize]),
                );
                let lhs = cache.lhs.fill(&values);
                cache.mv = values;
                lhs
            }
        };
        let mut rhs = self.mass.mul(qd);
        for (r, f) in rhs.iter_mut().zip(&self.force) {
            *r = -(*r + h * f);
        }
        (lhs, rhs)
    }
}

/// The cloth of the tests: ρ = 0.05 kg/m² (spec §8.1), a stiff membrane,
/// light bending, gravity `g` m/s² along −z.
#[cfg(test)]
pub(crate) fn test_params(g: f64) -> ClothParams {
    ClothParams {
        density: 0.05,
        membrane: MembraneStiffness {
            k11: 50.0,
            k22: 50.0,
            k12: 0.5,
            k33: 20.0,
        },
        bending: 1e-5,
        gravity: Vec3::new(0.0, 0.0, -g),
    }
}

/// The strip tests' cloth: ρ = 0.05 kg/m², a membrane stiff enough to be
/// all but inextensible (the chain cross-checks of E0), almost no bending,
/// gravity 9.8 m/s² along −z.
#[cfg(test)]
pub(crate) fn strip_params() -> ClothParams {
    ClothParams {
        density: 0.05,
        membrane: MembraneStiffness {
            k11: 2000.0,
            k22: 2000.0,
            k12: 0.0,
            k33: 500.0,
        },
        bending: 1e-7,
        gravity: Vec3::new(0.0, 0.0, -9.8),
    }
}

#[cfg(test)]
#[path = "system_tests.rs"]
mod tests;
