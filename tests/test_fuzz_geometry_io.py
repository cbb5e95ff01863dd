"""Fuzzed inputs (issue 17, item 5): the geometry and collider toolkit,
mesh files and checkpoints. Every case ends in a valid result or a typed
crumple error (see ``fuzz.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crumple as cr
from crumple import colliders, geometry, io
from fuzz import all_finite, arrays, attempt, floats, ints, kwargs_for, wild

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                        HealthCheck.function_scoped_fixture])
SMALL = geometry.box_mesh(half_extents=(0.2, 0.2, 0.2))

GENERATORS = [geometry.grid_mesh, geometry.uv_sphere, geometry.box_mesh, geometry.cylinder_mesh,
              geometry.torus_mesh, geometry.helix_curves, geometry.straight_curves, geometry.sample_box,
              geometry.sample_sphere]


def _check_result(r: Any) -> None:
    if isinstance(r, geometry.TriMesh):
        all_finite(r.vertices)
        assert r.faces.size == 0 or r.faces.max() < len(r.vertices)
    elif isinstance(r, geometry.Curves):
        all_finite(r.points)
    elif r is not None:
        all_finite(r)


@FUZZ
@given(data=st.data())
@pytest.mark.parametrize("fn", GENERATORS, ids=lambda f: f.__name__)
def test_generators(fn: Any, data: st.DataObject) -> None:
    kw = data.draw(kwargs_for(fn, overrides={"method": st.sampled_from(["lattice", "poisson", "x", ""])}))
    _check_result(attempt("geometry", fn, **kw))


@FUZZ
@given(v=st.one_of(arrays(), wild), f=st.one_of(arrays(), wild))
def test_trimesh_and_curves(v: Any, f: Any) -> None:
    _check_result(attempt("geometry", geometry.TriMesh, v, f))
    _check_result(attempt("geometry", geometry.Curves, v, f))


@FUZZ
@given(spacing=floats, method=st.sampled_from(["lattice", "poisson", "?"]), seed=ints)
def test_sample_mesh(spacing: float, method: str, seed: int) -> None:
    _check_result(attempt("geometry", geometry.sample_mesh, SMALL, spacing=spacing, method=method, seed=seed))


COLLIDERS = [colliders.Plane, colliders.Sphere, colliders.Box, colliders.Capsule, colliders.Cylinder]


@FUZZ
@given(data=st.data())
@pytest.mark.parametrize("cls", COLLIDERS, ids=lambda c: c.__name__)
def test_colliders(cls: Any, data: st.DataObject) -> None:
    kw = data.draw(kwargs_for(cls, overrides={"mode": st.sampled_from(["sticky", "slip", "separate", "glue", 3])}))
    c = attempt("colliders", cls, **kw)
    if c is not None:
        # A collider that was made must move and report finite state.
        attempt("colliders", c.set_keyframes, data.draw(st.lists(floats, max_size=3)),
                data.draw(st.lists(st.tuples(floats, floats, floats), max_size=3)))


@FUZZ
@given(dx=floats, padding=ints, friction=floats)
def test_mesh_sdf(dx: float, padding: int, friction: float) -> None:
    attempt("colliders", colliders.MeshSDF, SMALL, dx=dx, padding=padding, friction=friction)


SUFFIXES = [".obj", ".ply", ".stl", ".off", ".glb", ".txt", ""]


@pytest.fixture(scope="module")
def mesh_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    d = tmp_path_factory.mktemp("meshes")
    out = {}
    for s in (".obj", ".ply", ".stl", ".off"):
        p = io.save_mesh(d / f"m{s}", geometry.uv_sphere(n_lat=4, n_lon=6))
        out[s] = Path(p).read_bytes()
    return out


@FUZZ
@given(data=st.data(), suffix=st.sampled_from(SUFFIXES))
def test_load_mesh_of_corrupt_files(tmp_path: Path, mesh_files: dict[str, bytes], data: st.DataObject,
                                    suffix: str) -> None:
    """Random bytes, and valid files truncated or with bytes overwritten."""
    good = mesh_files.get(suffix, mesh_files[".obj"])
    how = data.draw(st.sampled_from(["random", "truncate", "flip", "empty"]))
    if how == "random":
        body = data.draw(st.binary(max_size=400))
    elif how == "truncate":
        body = good[: data.draw(st.integers(0, len(good)))]
    elif how == "flip":
        b = bytearray(good)
        for _ in range(data.draw(st.integers(1, 8))):
            i = data.draw(st.integers(0, len(b) - 1))
            b[i] = data.draw(st.integers(0, 255))
        body = bytes(b)
    else:
        body = b""
    p = tmp_path / f"fuzz{suffix}"
    p.write_bytes(body)
    _check_result(attempt("io", io.load_mesh, p))


@FUZZ
@given(v=st.one_of(arrays(), wild), f=st.one_of(arrays(), wild), suffix=st.sampled_from(SUFFIXES))
def test_save_mesh(tmp_path: Path, v: Any, f: Any, suffix: str) -> None:
    attempt("io", io.save_mesh, tmp_path / f"out{suffix}", v, f)
