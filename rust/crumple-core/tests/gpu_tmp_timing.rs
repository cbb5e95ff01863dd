use crumple_core::gpu::*;
use std::time::Instant;
#[test]
fn gpu_tmp_timing() {
    let ctx = GpuContext::shared().unwrap();
    let n = 10_000_000usize;
    let data: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect();
    let vals: Vec<u32> = (0..n as u32).collect();
    let mut buf = GpuBuffer::from_slice(&ctx, &data, "d").unwrap();
    let mut scan = GpuScan::new(&ctx).unwrap();
    for _ in 0..3 { let t = Instant::now(); scan.scan_exclusive_u32(&mut buf).unwrap(); eprintln!("scan 10M {:?}", t.elapsed()); }
    let mut k = GpuBuffer::from_slice(&ctx, &data, "k").unwrap();
    let mut v = GpuBuffer::from_slice(&ctx, &vals, "v").unwrap();
    let mut s = GpuRadixSort::new(&ctx).unwrap();
    for bits in [Some(4), Some(8), None] { let t = Instant::now(); s.radix_sort_pairs_u32(&mut k, &mut v, bits).unwrap(); eprintln!("sort 10M bits {bits:?} {:?}", t.elapsed()); }
}
