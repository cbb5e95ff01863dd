//! Tests of `bvh.rs` (kept out of the source file).

use super::*;
use crate::geometry::SplitMix64;

fn random_boxes(rng: &mut SplitMix64, n: usize) -> Vec<Aabb> {
    (0..n)
        .map(|_| {
            let p = Vec3::new(rng.next_f64(), rng.next_f64(), rng.next_f64());
            let s = Vec3::new(rng.next_f64(), rng.next_f64(), rng.next_f64()) * 0.05;
            Aabb { lo: p, hi: p + s }
        })
        .collect()
}

#[test]
fn queries_and_pairs_match_brute_force() {
    let mut rng = SplitMix64::new(3);
    let mut boxes = random_boxes(&mut rng, 3000);
    let mut bvh = Bvh::default();
    let centre = |b: &Aabb| (b.lo + b.hi) * 0.5;
    bvh.update(boxes.len(), |i| centre(&boxes[i]), |i| boxes[i]);
    let mut stack = Vec::new();
    for round in 0..3 {
        if round > 0 {
            // Small motion: refit only.
            for b in boxes.iter_mut() {
                let d = Vec3::new(rng.next_f64(), rng.next_f64(), rng.next_f64()) * 0.01;
                b.lo += d;
                b.hi += d;
            }
            bvh.update(boxes.len(), |i| centre(&boxes[i]), |i| boxes[i]);
        }
        for _ in 0..200 {
            let q = random_boxes(&mut rng, 1)[0].padded(0.02);
            let mut got = Vec::new();
            bvh.query(&q, &mut stack, |id, _| got.push(id));
            got.sort_unstable();
            let want: Vec<u32> = (0..boxes.len() as u32)
                .filter(|&i| boxes[i as usize].overlaps(&q))
                .collect();
            assert_eq!(got, want);
        }
    }
    assert_eq!(bvh.builds(), 1);
    // Self pairs, all and marked, against brute force.
    let all_pairs = |bvh: &Bvh, marks: &[bool]| {
        let keep = |i: u32, j: u32| marks[i as usize] || marks[j as usize];
        let (mut seeds, mut next, mut stack) = (Vec::new(), Vec::new(), Vec::new());
        let pairing = Pairing::Own(bvh);
        pairing.seeds(&keep, &mut seeds, &mut next);
        let mut got = Vec::new();
        for &s in &seeds {
            pairing.descend(&keep, s, &mut stack, |i, j, _, _| got.push((i.min(j), i.max(j))));
        }
        got.sort_unstable();
        got
    };
    let mut marks = Vec::new();
    let n = boxes.len() as u32;
    let brute: Vec<(u32, u32)> = (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .filter(|&(i, j)| boxes[i as usize].overlaps(&boxes[j as usize]))
        .collect();
    bvh.fold_nodes(&mut marks, |_| true, |a, b| a || b);
    assert_eq!(all_pairs(&bvh, &marks), brute);
    bvh.fold_nodes(&mut marks, |ids| ids.iter().any(|i| i % 7 == 0), |a, b| a || b);
    let want: Vec<_> = brute
        .iter()
        .copied()
        .filter(|&(i, j)| i % 7 == 0 || j % 7 == 0)
        .collect();
    let got: Vec<_> = all_pairs(&bvh, &marks)
        .into_iter()
        .filter(|&(i, j)| i % 7 == 0 || j % 7 == 0)
        .collect();
    assert_eq!(got, want);
    // Two trees.
    let other = random_boxes(&mut rng, 500);
    let mut b2 = Bvh::default();
    b2.update(other.len(), |i| centre(&other[i]), |i| other[i]);
    let (mut seeds, mut next, mut stack) = (Vec::new(), Vec::new(), Vec::new());
    let all = |_: u32, _: u32| true;
    let pairing = Pairing::Two(&bvh, &b2);
    pairing.seeds(&all, &mut seeds, &mut next);
    let mut got = Vec::new();
    for &s in &seeds {
        pairing.descend(&all, s, &mut stack, |i, j, _, _| got.push((i, j)));
    }
    got.sort_unstable();
    let want: Vec<(u32, u32)> = (0..n)
        .flat_map(|i| (0..other.len() as u32).map(move |j| (i, j)))
        .filter(|&(i, j)| boxes[i as usize].overlaps(&other[j as usize]))
        .collect();
    assert_eq!(got, want);
    // One tree, two box sets: pairs where each one's second box holds
    // the other's first box.
    let wide: Vec<Aabb> = boxes
        .iter()
        .enumerate()
        .map(|(i, b)| b.padded(0.01 * (i % 3) as f64))
        .collect();
    bvh.update_alt(|i| wide[i]);
    let pairing = Pairing::Cross(&bvh);
    pairing.seeds(&all, &mut seeds, &mut next);
    let mut got = Vec::new();
    for &s in &seeds {
        pairing.descend(&all, s, &mut stack, |i, j, _, _| got.push((i.min(j), i.max(j))));
    }
    got.sort_unstable();
    let want: Vec<(u32, u32)> = (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .filter(|&(i, j)| {
            wide[i as usize].overlaps(&boxes[j as usize]) && wide[j as usize].overlaps(&boxes[i as usize])
        })
        .collect();
    assert_eq!(got, want);
    // Scrambling every box makes the old tree loose: it is rebuilt.
    let scrambled = random_boxes(&mut rng, 3000);
    bvh.update(scrambled.len(), |i| centre(&scrambled[i]), |i| scrambled[i]);
    assert_eq!(bvh.builds(), 2);
}
