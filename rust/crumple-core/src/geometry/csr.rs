//! Compressed rows from `(row, value)` entries by a counting sort: the one
//! builder behind every incidence list (vertex → faces, vertex → element
//! slots, block → contributions, particle → cluster memberships).

/// `(offsets, values)`: row `r`'s values are `values[offsets[r]..offsets[r + 1]]`,
/// in the order the entries came (so a sum over a row is the same for any
/// thread count). `entries` is walked twice (count, then fill).
pub fn csr<V: Copy + Default>(
    rows: usize,
    entries: impl Iterator<Item = (u32, V)> + Clone,
) -> (Vec<u32>, Vec<V>) {
    let mut offsets = vec![0u32; rows + 1];
    for (r, _) in entries.clone() {
        offsets[r as usize + 1] += 1;
    }
    for i in 0..rows {
        offsets[i + 1] += offsets[i];
    }
    let mut fill = offsets.clone();
    let mut values = vec![V::default(); offsets[rows] as usize];
    for (r, v) in entries {
        values[fill[r as usize] as usize] = v;
        fill[r as usize] += 1;
    }
    (offsets, values)
}

#[cfg(test)]
mod tests {
    use super::csr;

    #[test]
    fn rows_keep_the_input_order() {
        let (o, v) = csr(3, [(2u32, 10u64), (0, 11), (2, 12), (0, 13)].into_iter());
        assert_eq!(o, vec![0, 2, 2, 4]);
        assert_eq!(v, vec![11, 13, 10, 12]);
        let (o, v) = csr::<u32>(2, std::iter::empty());
        assert_eq!((o, v), (vec![0, 0, 0], vec![]));
    }
}
