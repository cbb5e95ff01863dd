#!/usr/bin/env bash
# The Python extension (maturin) and `cargo test` of crumple-core must ask
# for the same features of every crate they share, so `make test` compiles
# wgpu, naga, faer and the rest once (see rust/crumple-py/Cargo.toml). This
# compares the two builds' feature sets per shared crate and version; a
# difference names the crate and both sets. Crates only one build uses, and
# other versions of a crate, do not count.
set -euo pipefail
cd "$(dirname "$0")/.."
# Byte order for sort and join alike (join needs its input sorted its way).
export LC_ALL=C
tree() {
    cargo tree --locked -p "$1" -e "$2" -f "{p} {f}" --prefix none | sed 's/ (\*)$//; s/ (proc-macro)//' | sort -u
}
py=$(tree crumple-py normal,build)
core=$(tree crumple-core normal,build,dev)
# Keyed by "name version": every feature line of that crate in each build.
keyed() {
    awk '{k=$1" "$2; $1=$2=""; a[k]=a[k]"["$0"]"} END{for(k in a) print k"|"a[k]}' | sort -t'|' -k1,1
}
paired=$(join -j1 -t'|' --check-order <(echo "$py" | keyed) <(echo "$core" | keyed))
# Most of the extension's crates are crumple-core's: far fewer paired means
# cargo tree's output changed and nothing was compared.
if [ "$(echo "$paired" | wc -l)" -lt 50 ]; then
    echo "check-feature-unification: only $(echo "$paired" | wc -l) shared crates found; cargo tree's output changed?" >&2
    exit 1
fi
diff=$(echo "$paired" | awk -F'|' '$2 != $3')
if [ -n "$diff" ]; then
    echo "feature sets differ between the extension and crumple-core's tests (crate | extension | tests):" >&2
    echo "$diff" >&2
    echo "add the missing features to rust/crumple-py/Cargo.toml or crumple-core's dev-dependencies" >&2
    exit 1
fi
echo "feature unification: the extension and crumple-core's tests agree on every shared crate"
