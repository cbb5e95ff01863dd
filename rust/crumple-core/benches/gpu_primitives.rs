//! Prefix sum and stable radix sort, CPU (rayon) against GPU, at 1M and 10M
//! elements; throughput in elements per second.
//!
//! GPU times cover encoding, submission and waiting for the result on the
//! device; uploads, readbacks and restoring the input between iterations are
//! outside the timed region. Run with `cargo bench -p crumple-core --bench
//! gpu_primitives`; without an adapter only the CPU rows run.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use crumple_core::gpu::{
    GpuBuffer, GpuContext, GpuRadixSort, GpuScan, radix_sort_pairs_u32, scan_exclusive_u32,
};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

const SIZES: [usize; 2] = [1_000_000, 10_000_000];

fn random_u32(n: usize, seed: u64) -> Vec<u32> {
    let mut r = StdRng::seed_from_u64(seed);
    (0..n).map(|_| r.random::<u32>()).collect()
}

fn gpu() -> Option<Arc<GpuContext>> {
    match GpuContext::shared() {
        Ok(ctx) => {
            let a = ctx.adapter_info();
            println!("GPU adapter: {} ({}, {})", a.name, a.device_type, a.backend);
            Some(ctx)
        }
        Err(e) => {
            println!("SKIPPED GPU rows: no GPU adapter: {e}");
            None
        }
    }
}

/// Restores `dst` from `src` with a device-side copy (not timed).
fn restore(ctx: &GpuContext, src: &GpuBuffer<u32>, dst: &GpuBuffer<u32>) {
    let mut encoder = ctx.encoder("bench restore");
    encoder.copy_buffer_to_buffer(src.raw(), 0, dst.raw(), 0, (src.len() * 4) as u64);
    ctx.submit_and_wait("bench restore", encoder).unwrap();
}

fn bench_scan(c: &mut Criterion, ctx: Option<&Arc<GpuContext>>) {
    let mut group = c.benchmark_group("scan_exclusive_u32");
    group.sample_size(10);
    for n in SIZES {
        let data = random_u32(n, 1);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("cpu", n), &data, |b, data| {
            b.iter_batched_ref(
                || data.clone(),
                |d| black_box(scan_exclusive_u32(d)),
                BatchSize::LargeInput,
            );
        });
        if let Some(ctx) = ctx {
            let pristine = GpuBuffer::from_slice(ctx, &data, "bench pristine").unwrap();
            let mut work = GpuBuffer::from_slice(ctx, &data, "bench work").unwrap();
            let mut scan = GpuScan::new(ctx).unwrap();
            group.bench_function(BenchmarkId::new("gpu", n), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        restore(ctx, &pristine, &work);
                        let t = Instant::now();
                        scan.scan_exclusive_u32(&mut work).unwrap();
                        total += t.elapsed();
                    }
                    total
                });
            });
        }
    }
    group.finish();
}

fn bench_sort(c: &mut Criterion, ctx: Option<&Arc<GpuContext>>) {
    let mut group = c.benchmark_group("radix_sort_pairs_u32");
    group.sample_size(10);
    for n in SIZES {
        let keys = random_u32(n, 2);
        let values: Vec<u32> = (0..n as u32).collect();
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(
            BenchmarkId::new("cpu", n),
            &(keys.clone(), values.clone()),
            |b, (keys, values)| {
                b.iter_batched_ref(
                    || (keys.clone(), values.clone()),
                    |(k, v)| radix_sort_pairs_u32(k, v, None).unwrap(),
                    BatchSize::LargeInput,
                );
            },
        );
        if let Some(ctx) = ctx {
            let pristine_k = GpuBuffer::from_slice(ctx, &keys, "bench pristine keys").unwrap();
            let pristine_v = GpuBuffer::from_slice(ctx, &values, "bench pristine values").unwrap();
            let mut k = GpuBuffer::from_slice(ctx, &keys, "bench keys").unwrap();
            let mut v = GpuBuffer::from_slice(ctx, &values, "bench values").unwrap();
            let mut sorter = GpuRadixSort::new(ctx).unwrap();
            group.bench_function(BenchmarkId::new("gpu", n), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        restore(ctx, &pristine_k, &k);
                        restore(ctx, &pristine_v, &v);
                        let t = Instant::now();
                        sorter.radix_sort_pairs_u32(&mut k, &mut v, None).unwrap();
                        total += t.elapsed();
                    }
                    total
                });
            });
        }
    }
    group.finish();
}

fn gpu_primitives(c: &mut Criterion) {
    let ctx = gpu();
    bench_scan(c, ctx.as_ref());
    bench_sort(c, ctx.as_ref());
}

criterion_group! {
    name = benches;
    // Ten samples and short windows: the 10M GPU rows on a software adapter
    // take about a second each, and the whole run should stay within minutes
    // on two cores.
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = gpu_primitives
}
criterion_main!(benches);
