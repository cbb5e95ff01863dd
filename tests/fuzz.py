"""Shared pieces of the property-based input tests (issue 17, item 5).

Every fuzzed call must end in a valid result or a typed crumple error
(:class:`crumple.CrumpleError`); anything else (a TypeError, a MemoryError,
a panic from the core) fails the test with hypothesis's smallest example,
and so does a NaN where a test checks the result with :func:`all_finite`
(positions after steps, generated meshes and points). ``CASES`` counts the calls per module; the conftest
prints the counts at the end of the run.
"""

from __future__ import annotations

import inspect
import math
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import crumple as cr

CASES: Counter[str] = Counter()
# CRUMPLE_FUZZ_TRACE=file: every call appended to it before it runs (to find a hang).
_TRACE = __import__("os").environ.get("CRUMPLE_FUZZ_TRACE")
#: Calls that ended in a typed crumple error, per module.
REFUSED: Counter[str] = Counter()

# Floats near and far from any domain: the special values first (hypothesis
# shrinks toward them), then anything.
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-12, -1e-12, 1e12, -1e12, 1e308, -1e308, math.inf, -math.inf, math.nan]
floats = st.one_of(st.sampled_from(SPECIAL), st.floats(allow_nan=True, allow_infinity=True),
                   st.floats(min_value=-10, max_value=10))
# Counts: small, zero, negative, and sizes no machine can hold.
ints = st.one_of(st.integers(min_value=-3, max_value=40), st.sampled_from([10**10, 2**31, 2**32 + 1, 10**15, -(2**63), 10**400]))
wild = st.one_of(st.none(), st.text(max_size=6), st.booleans(), st.just([]), st.just({}), st.just(object()),
                 st.lists(floats, max_size=4), st.just(b"\x00"), st.just(float("nan")))
DTYPES = [np.float64, np.float32, np.int32, np.int64, np.uint32, np.bool_, np.complex128, np.float16]


def arrays(max_dims: int = 3, max_side: int = 8) -> st.SearchStrategy[np.ndarray]:
    """Arrays of any common dtype and shape (empty included), NaN and inf inside."""
    return st.sampled_from(DTYPES).flatmap(
        lambda dt: hnp.arrays(dt, hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=0, max_side=max_side),
                              elements=_elements(dt)))


def _elements(dt: Any) -> st.SearchStrategy[Any]:
    if np.issubdtype(dt, np.floating):
        return st.floats(allow_nan=True, allow_infinity=True, width=16 if dt == np.float16 else 32)
    if dt == np.bool_:
        return st.booleans()
    if np.issubdtype(dt, np.complexfloating):
        return st.complex_numbers(allow_nan=True, allow_infinity=True, width=128)
    info = np.iinfo(dt)
    return st.integers(min_value=max(info.min, -(2**31)), max_value=min(info.max, 2**31))


def vec3s() -> st.SearchStrategy[Any]:
    """Three numbers mostly, sometimes the wrong count or type."""
    return st.one_of(st.tuples(floats, floats, floats), st.lists(floats, max_size=5), arrays(2, 4), wild)


def like(default: Any) -> st.SearchStrategy[Any]:
    """A value for a parameter whose default is ``default``: of the same
    kind mostly (any float for a float, any count for an int, ...), any
    other kind sometimes."""
    if isinstance(default, bool):
        base: st.SearchStrategy[Any] = st.booleans()
    elif isinstance(default, int):
        base = ints
    elif isinstance(default, float):
        base = floats
    elif isinstance(default, str):
        base = st.one_of(st.just(default), st.text(max_size=8))
    elif isinstance(default, tuple) and len(default) == 3:
        base = vec3s()
    elif isinstance(default, tuple):
        base = st.one_of(st.tuples(*[like(d) for d in default]), st.lists(floats, max_size=4))
    else:
        base = st.one_of(arrays(), vec3s())
    return st.one_of(base, base, base, wild)


def kwargs_for(fn: Callable[..., Any], *, overrides: dict[str, st.SearchStrategy[Any]] | None = None,
               skip: tuple[str, ...] = ()) -> st.SearchStrategy[dict[str, Any]]:
    """Keyword arguments of ``fn``: a random subset of its parameters (the
    required ones always), each drawn by :func:`like` of its default or by
    ``overrides``."""
    overrides = overrides or {}
    required: dict[str, st.SearchStrategy[Any]] = {}
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for name, p in inspect.signature(fn).parameters.items():
        if name in skip or name == "self" or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        s = overrides[name] if name in overrides else (
            like(p.default) if p.default is not p.empty else st.one_of(arrays(), vec3s(), floats))
        (required if p.default is p.empty else optional)[name] = s
    return st.fixed_dictionaries(required, optional=optional)


def attempt(module: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``fn``: its result, or None when it raised a crumple error.
    Any other exception propagates (the test fails)."""
    CASES[module] += 1
    if _TRACE:
        with open(_TRACE, "a") as f:
            f.write(f"{module} {getattr(fn, '__qualname__', fn)} {args!r:.200} {kwargs!r:.300}\n")
    try:
        return fn(*args, **kwargs)
    except cr.CrumpleError as e:
        REFUSED[module] += 1
        assert str(e), f"{type(e).__name__} without a message"
        return None


def all_finite(*arrays_: Any) -> None:
    for a in arrays_:
        a = np.asarray(a)
        if a.dtype.kind in "fc":
            assert np.isfinite(a).all(), "a result holds NaN or inf"
