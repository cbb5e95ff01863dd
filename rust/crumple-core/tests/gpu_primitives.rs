//! GPU primitives against their CPU twins, and the CPU twins against std.
//!
//! GPU tests need an adapter (Mesa lavapipe is enough). Without one they
//! print "SKIPPED: no GPU adapter: <reason>" and return, unless
//! `CRUMPLE_REQUIRE_GPU=1`, which CI sets so the tests cannot pass without
//! having run. Both that line and the adapter's name are written straight to
//! stderr so they show without `--nocapture`.

mod common;

use common::gpu;

use crumple_core::Error;
use crumple_core::gpu::{GpuBuffer, GpuRadixSort, GpuScan, probe, radix_sort_pairs_u32, scan_exclusive_u32};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// Sizes around the 256-invocation workgroup, the 2048-element scan block and
/// the 4096-pair sort block, past 65536 (a two-level scan) and a million.
const SIZES: [usize; 12] = [
    1,
    2,
    255,
    256,
    257,
    1000,
    2049,
    4095,
    4096,
    4097,
    65_536 + 1,
    1_000_000,
];
const TEN_MILLION: usize = 10_000_000;

fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// Key patterns that exercise stability and digit skipping.
#[derive(Debug, Clone, Copy)]
enum Keys {
    Random,
    AllEqual,
    Sorted,
    Reversed,
    /// Keys in 0..4: long runs of equal keys whose order must survive.
    SmallRange,
}

const PATTERNS: [Keys; 5] = [
    Keys::Random,
    Keys::AllEqual,
    Keys::Sorted,
    Keys::Reversed,
    Keys::SmallRange,
];

fn keys(pattern: Keys, n: usize, seed: u64) -> Vec<u32> {
    let mut r = rng(seed);
    match pattern {
        Keys::Random => (0..n).map(|_| r.random::<u32>()).collect(),
        Keys::AllEqual => vec![0xDEAD_BEEF; n],
        Keys::Sorted => (0..n as u32).map(|i| i.wrapping_mul(397)).collect(),
        Keys::Reversed => (0..n as u32).rev().map(|i| i * 3 + 1).collect(),
        Keys::SmallRange => (0..n).map(|_| r.random_range(0..4u32)).collect(),
    }
}

/// Values are the original positions, so any instability shows.
fn positions(n: usize) -> Vec<u32> {
    (0..n as u32).collect()
}

/// Stable reference: std's stable `sort_by_key` on the masked key.
fn std_stable(keys: &[u32], values: &[u32], key_bits: Option<u32>) -> (Vec<u32>, Vec<u32>) {
    let mask = match key_bits.unwrap_or(32) {
        32 => u32::MAX,
        b => (1u32 << b) - 1,
    };
    let mut idx: Vec<usize> = (0..keys.len()).collect();
    idx.sort_by_key(|&i| keys[i] & mask);
    (
        idx.iter().map(|&i| keys[i]).collect(),
        idx.iter().map(|&i| values[i]).collect(),
    )
}

fn cpu_sort(keys: &[u32], values: &[u32], key_bits: Option<u32>) -> (Vec<u32>, Vec<u32>) {
    let (mut k, mut v) = (keys.to_vec(), values.to_vec());
    radix_sort_pairs_u32(&mut k, &mut v, key_bits).unwrap();
    (k, v)
}

fn cpu_scan(data: &[u32]) -> Vec<u32> {
    let mut out = data.to_vec();
    scan_exclusive_u32(&mut out);
    out
}

#[test]
fn gpu_adapter_is_reported_and_probe_agrees() {
    let Some(ctx) = gpu() else { return };
    let info = ctx.adapter_info();
    assert!(!info.name.is_empty());
    assert!(
        ["DiscreteGpu", "IntegratedGpu", "VirtualGpu", "Cpu", "Other"].contains(&info.device_type.as_str()),
        "device type {}",
        info.device_type
    );
    assert!(["vulkan", "metal", "dx12"].contains(&info.backend.as_str()));
    assert_eq!(probe().as_ref(), Some(info));
    // Spec §10.3: the device gets the adapter's storage binding limit, not
    // the 128 MiB default, and at least the default.
    assert!(ctx.limits().max_storage_buffer_binding_size >= 128 << 20);
}

#[test]
fn gpu_shaders_validate_with_naga() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/gpu/shaders");
    let mut checked = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("wgsl") {
            continue;
        }
        let source = std::fs::read_to_string(&path).unwrap();
        let name = path.display().to_string();
        let module = naga::front::wgsl::parse_str(&source)
            .unwrap_or_else(|e| panic!("{}", e.emit_to_string_with_path(&source, &name)));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::default(),
        )
        .validate(&module)
        .unwrap_or_else(|e| panic!("{}", e.emit_to_string_with_path(&source, &name)));
        checked.push(name);
    }
    assert!(
        checked.len() >= 2,
        "expected the scan and sort shaders in {dir:?}"
    );
}

#[test]
fn cpu_twin_of_gpu_scan_matches_serial_reference() {
    for &n in SIZES.iter().chain(&[TEN_MILLION]) {
        let mut r = rng(n as u64);
        let data: Vec<u32> = (0..n).map(|_| r.random::<u32>()).collect();
        let got = cpu_scan(&data);
        let mut sum = 0u32;
        for (i, (&g, &x)) in got.iter().zip(&data).enumerate() {
            assert_eq!(g, sum, "n = {n}, i = {i}");
            sum = sum.wrapping_add(x);
        }
    }
}

#[test]
fn gpu_scan_matches_cpu() {
    let Some(ctx) = gpu() else { return };
    let mut scan = GpuScan::new(&ctx).unwrap();
    for n in SIZES {
        let mut r = rng(7 + n as u64);
        // Random u32 overflow constantly (wrapping); small values and ones
        // check exact counts.
        let inputs = [
            (0..n).map(|_| r.random::<u32>()).collect::<Vec<_>>(),
            (0..n).map(|_| r.random_range(0..16u32)).collect(),
            vec![1; n],
        ];
        for data in inputs {
            let got = scan.scan_exclusive_u32_host(&data).unwrap();
            assert!(got == cpu_scan(&data), "n = {n}");
        }
    }
}

#[test]
fn gpu_scan_matches_cpu_10m() {
    let Some(ctx) = gpu() else { return };
    let mut scan = GpuScan::new(&ctx).unwrap();
    let mut r = rng(10);
    let data: Vec<u32> = (0..TEN_MILLION).map(|_| r.random::<u32>()).collect();
    let got = scan.scan_exclusive_u32_host(&data).unwrap();
    assert!(got == cpu_scan(&data));
}

#[test]
fn cpu_twin_of_gpu_sort_matches_std_stable_sort() {
    for n in SIZES {
        for pattern in PATTERNS {
            let k = keys(pattern, n, 3 + n as u64);
            let v = positions(n);
            assert!(
                cpu_sort(&k, &v, None) == std_stable(&k, &v, None),
                "{pattern:?}, n = {n}"
            );
        }
    }
}

#[test]
fn cpu_twin_of_gpu_sort_matches_std_stable_sort_10m() {
    let k = keys(Keys::Random, TEN_MILLION, 11);
    let v = positions(TEN_MILLION);
    assert!(cpu_sort(&k, &v, None) == std_stable(&k, &v, None));
}

#[test]
fn gpu_sort_matches_cpu() {
    let Some(ctx) = gpu() else { return };
    let mut sorter = GpuRadixSort::new(&ctx).unwrap();
    for n in SIZES {
        for pattern in PATTERNS {
            let k = keys(pattern, n, 5 + n as u64);
            let v = positions(n);
            let got = sorter.radix_sort_pairs_u32_host(&k, &v, None).unwrap();
            assert!(got == cpu_sort(&k, &v, None), "{pattern:?}, n = {n}");
        }
    }
}

#[test]
fn gpu_sort_matches_cpu_10m() {
    let Some(ctx) = gpu() else { return };
    let mut sorter = GpuRadixSort::new(&ctx).unwrap();
    for pattern in [Keys::Random, Keys::SmallRange] {
        let k = keys(pattern, TEN_MILLION, 12);
        let v = positions(TEN_MILLION);
        let got = sorter.radix_sort_pairs_u32_host(&k, &v, None).unwrap();
        assert!(got == cpu_sort(&k, &v, None), "{pattern:?}");
    }
}

/// `key_bits` sorts on the low bits only: high bits are carried along, and
/// the odd pass counts (3 bits: one GPU pass) end in the caller's buffers.
#[test]
fn gpu_and_cpu_sorts_use_only_the_low_key_bits() {
    let ctx = gpu();
    let mut sorter = ctx.as_ref().map(|c| GpuRadixSort::new(c).unwrap());
    for n in [257usize, 1000, 65_537] {
        let mut r = rng(n as u64);
        let k: Vec<u32> = (0..n).map(|_| r.random::<u32>()).collect();
        let v = positions(n);
        for key_bits in [Some(0), Some(1), Some(3), Some(4), Some(9), Some(17), Some(32)] {
            let want = std_stable(&k, &v, key_bits);
            assert!(cpu_sort(&k, &v, key_bits) == want, "cpu, n = {n}, {key_bits:?}");
            if let Some(s) = sorter.as_mut() {
                let got = s.radix_sort_pairs_u32_host(&k, &v, key_bits).unwrap();
                assert!(got == want, "gpu, n = {n}, {key_bits:?}");
            }
        }
    }
}

#[test]
fn gpu_buffers_stay_on_device_between_stages() {
    let Some(ctx) = gpu() else { return };
    let n = 5000;
    let k = keys(Keys::SmallRange, n, 1);
    let mut keys_buf = GpuBuffer::from_slice(&ctx, &k, "keys").unwrap();
    let mut values_buf = GpuBuffer::from_slice(&ctx, &positions(n), "values").unwrap();
    let mut sorter = GpuRadixSort::new(&ctx).unwrap();
    let mut scan = GpuScan::new(&ctx).unwrap();
    // Sort, then scan the sorted keys in place, then read once.
    sorter
        .radix_sort_pairs_u32(&mut keys_buf, &mut values_buf, Some(2))
        .unwrap();
    scan.scan_exclusive_u32(&mut keys_buf).unwrap();
    let (sorted, _) = cpu_sort(&k, &positions(n), Some(2));
    assert_eq!(keys_buf.read().unwrap(), cpu_scan(&sorted));
}

#[test]
fn gpu_buffer_round_trips_and_reuses_its_allocation() {
    let Some(ctx) = gpu() else { return };
    let data: Vec<u32> = (0..1000).collect();
    let mut buf = GpuBuffer::from_slice(&ctx, &data, "round trip").unwrap();
    assert_eq!(buf.read().unwrap(), data);
    let raw = buf.raw().clone();
    buf.upload(&data[..10]).unwrap();
    assert_eq!((buf.len(), buf.capacity()), (10, 1000));
    assert_eq!(buf.raw(), &raw, "shrinking must not reallocate");
    assert_eq!(buf.read().unwrap(), &data[..10]);
    buf.upload(&[]).unwrap();
    assert!(buf.is_empty());
    assert_eq!(buf.read().unwrap(), Vec::<u32>::new());
    // Element sizes that are not a multiple of 4 bytes are padded.
    let bytes: Vec<u8> = (0..7).collect();
    let b = GpuBuffer::from_slice(&ctx, &bytes, "bytes").unwrap();
    assert_eq!(b.read().unwrap(), bytes);
}

#[test]
fn gpu_errors_are_backend_errors_not_panics() {
    let Some(ctx) = gpu() else { return };
    let broken = ctx.pipeline("broken_for_test", "fn main( {", "main");
    assert!(matches!(broken, Err(Error::Backend(_))), "{broken:?}");
    let too_big = GpuBuffer::<u32>::zeroed(&ctx, (ctx.limits().max_buffer_size / 4 + 1) as usize, "too big");
    assert!(matches!(too_big, Err(Error::Backend(_))), "{too_big:?}");
    // The context still works after both.
    let mut scan = GpuScan::new(&ctx).unwrap();
    assert_eq!(scan.scan_exclusive_u32_host(&[3, 4, 5]).unwrap(), [0, 3, 7]);

    let mut sorter = GpuRadixSort::new(&ctx).unwrap();
    assert!(matches!(
        sorter.radix_sort_pairs_u32_host(&[1, 2], &[1], None),
        Err(Error::InvalidInput(_))
    ));
    assert!(matches!(
        sorter.radix_sort_pairs_u32_host(&[1, 2], &[1, 2], Some(40)),
        Err(Error::InvalidInput(_))
    ));
}
