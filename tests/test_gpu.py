"""GPU primitives (prefix sum, radix sort) against their CPU twins and numpy."""

from __future__ import annotations

import numpy as np
import pytest

import crumple as cr

SIZES = [1, 2, 255, 256, 257, 1000, 65537, 1_000_000]


def _keys(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "random":
        return rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    if kind == "equal":
        return np.full(n, 7, dtype=np.uint32)
    if kind == "sorted":
        return np.sort(rng.integers(0, 2**32, n, dtype=np.uint64)).astype(np.uint32)
    if kind == "reversed":
        return np.sort(rng.integers(0, 2**32, n, dtype=np.uint64))[::-1].astype(np.uint32)
    return rng.integers(0, 16, n).astype(np.uint32)  # few distinct keys: stability matters


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("n", SIZES)
def test_scan_matches_numpy(backend: str, n: int, request: pytest.FixtureRequest) -> None:
    """Exclusive scan equals numpy's cumsum shifted by one (mod 2^32)."""
    if backend == "gpu":
        request.getfixturevalue("gpu_or_skip")
    v = np.random.default_rng(n).integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    out = cr.gpu.scan_exclusive(v, backend=backend)
    expect = np.concatenate([np.zeros(1, np.uint64), np.cumsum(v.astype(np.uint64))[:-1]]).astype(np.uint32)
    assert out.dtype == np.uint32
    np.testing.assert_array_equal(out, expect)


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("kind", ["random", "equal", "sorted", "reversed", "few"])
@pytest.mark.parametrize("n", [1, 257, 65537, 1_000_000])
def test_radix_sort_is_stable_and_matches_numpy(backend: str, kind: str, n: int,
                                                request: pytest.FixtureRequest) -> None:
    """Sorted keys and the stable permutation equal numpy's stable argsort."""
    if backend == "gpu":
        request.getfixturevalue("gpu_or_skip")
    rng = np.random.default_rng(n)
    k = _keys(kind, n, rng)
    v = np.arange(n, dtype=np.uint32)
    ks, vs = cr.gpu.radix_sort_pairs(k, v, backend=backend)
    order = np.argsort(k, kind="stable")
    np.testing.assert_array_equal(ks, k[order])
    np.testing.assert_array_equal(vs, order.astype(np.uint32))


def test_gpu_equals_cpu_on_ten_million(gpu_or_skip: None) -> None:
    """The 10M case: GPU and CPU agree bit for bit (scan and sort)."""
    rng = np.random.default_rng(10)
    n = 10_000_000
    k = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    v = np.arange(n, dtype=np.uint32)
    kc, vc = cr.gpu.radix_sort_pairs(k, v, backend="cpu")
    kg, vg = cr.gpu.radix_sort_pairs(k, v, backend="gpu")
    np.testing.assert_array_equal(kc, kg)
    np.testing.assert_array_equal(vc, vg)
    small = (k & 0xFF).astype(np.uint32)
    np.testing.assert_array_equal(cr.gpu.scan_exclusive(small, backend="cpu"),
                                  cr.gpu.scan_exclusive(small, backend="gpu"))


def test_key_bits_and_bad_input() -> None:
    """key_bits skips passes; bad arrays raise InvalidInputError."""
    k = np.array([3, 1, 2, 1], dtype=np.uint32)
    ks, vs = cr.gpu.radix_sort_pairs(k, np.arange(4), key_bits=2)
    np.testing.assert_array_equal(ks, [1, 1, 2, 3])
    np.testing.assert_array_equal(vs, [1, 3, 2, 0])
    with pytest.raises(cr.InvalidInputError, match="key_bits"):
        cr.gpu.radix_sort_pairs(k, np.arange(4), key_bits=1)
    with pytest.raises(cr.InvalidInputError, match="same length"):
        cr.gpu.radix_sort_pairs(k, np.arange(3))
    with pytest.raises(cr.InvalidInputError, match="unsigned 32-bit"):
        cr.gpu.scan_exclusive(np.array([-1, 2]))
    with pytest.raises(cr.InvalidInputError, match="1-D"):
        cr.gpu.scan_exclusive(np.zeros((2, 2), dtype=np.uint32))
    with pytest.raises(cr.InvalidInputError, match="unknown backend 'cuda'"):
        cr.gpu.scan_exclusive(k, backend="cuda")


def test_backend_resolution(gpu_or_skip: None) -> None:
    """'gpu' resolves with an adapter; the adapter is named."""
    assert cr.backend.resolve_backend("gpu") == "gpu"
    a = cr.backend.gpu_adapter()
    assert a["name"] and a["device_type"] in {"DiscreteGpu", "IntegratedGpu", "VirtualGpu", "Cpu", "Other"}
    print(f"GPU tests ran on: {a['name']} ({a['device_type']}, {a['backend']})")
    assert cr.backend.resolve_backend("cpu") == "cpu"
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # auto may say it falls back to the CPU
        # "auto" takes a hardware adapter and leaves a software one (lavapipe)
        # to explicit backend="gpu".
        expected = "cpu" if a["device_type"] == "Cpu" else "gpu"
        assert cr.backend.resolve_backend("auto") == expected


def test_gpu_unavailable_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without an adapter, 'gpu' raises BackendUnavailable with the reason and
    'auto' falls back to the CPU with one warning."""
    monkeypatch.setattr(cr.backend, "_probe", lambda: (None, "no adapter found (test)"))
    monkeypatch.setattr(cr.backend, "_warned_auto", False)
    with pytest.raises(cr.BackendUnavailable, match=r"no adapter found \(test\)"):
        cr.backend.resolve_backend("gpu")
    with pytest.warns(RuntimeWarning, match="uses the CPU backend"):
        assert cr.backend.resolve_backend("auto") == "cpu"
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cr.backend.resolve_backend("auto") == "cpu"  # said once only
