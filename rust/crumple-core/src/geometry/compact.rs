//! Dropping the vertices no face uses, for solvers whose meshes change
//! (the shape-matching surface after tearing, the EOL cloth after
//! collapses): one renumbering, and the per-vertex arrays follow it.

/// Renumbers `faces` (over `n` vertices) so the vertices no face uses are
/// gone, keeping the order of the others. Returns per old vertex whether it
/// is kept and its new index (`u32::MAX` if dropped); apply
/// [`retain_used`] to every per-vertex array, and the map to any other
/// vertex index held.
pub fn drop_unused_vertices(n: usize, faces: &mut [[u32; 3]]) -> (Vec<bool>, Vec<u32>) {
    let mut used = vec![false; n];
    for f in faces.iter() {
        for &k in f {
            used[k as usize] = true;
        }
    }
    let mut map = vec![u32::MAX; n];
    let mut next = 0u32;
    for (k, u) in used.iter().enumerate() {
        if *u {
            map[k] = next;
            next += 1;
        }
    }
    for f in faces.iter_mut() {
        *f = f.map(|k| map[k as usize]);
    }
    (used, map)
}

/// Keeps the entries of `v` whose `used` flag is set, in order.
pub fn retain_used<T>(v: &mut Vec<T>, used: &[bool]) {
    let mut k = 0;
    v.retain(|_| {
        k += 1;
        used[k - 1]
    });
}
