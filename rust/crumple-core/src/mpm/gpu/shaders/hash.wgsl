// Block lookup for the stages that read the sparse grid (p2g, g2p): the
// active index of block key k, or NO_BLOCK. The including shader declares
// `hash_keys` (key + 1 per slot, 0 = empty) and `hash_vals` (active index).

fn find_block(k: u32) -> u32 {
    var h = hash_slot(k);
    for (var i = 0u; i <= params.hash_mask; i++) {
        let s = hash_keys[h];
        if s == k + 1u {
            return hash_vals[h];
        }
        if s == 0u {
            return NO_BLOCK;
        }
        h = (h + 1u) & params.hash_mask;
    }
    return NO_BLOCK;
}
