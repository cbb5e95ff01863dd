"""Fuzzed inputs (issue 17, item 5) of the four solvers: constructors,
materials, adding objects from wild meshes and point sets, pins, stepping
with any dt, and checkpoints truncated, overwritten or with arrays
replaced. Every case ends in a valid (finite) result or a typed crumple
error (see ``fuzz.py``)."""

from __future__ import annotations

import io as _io
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crumple as cr
from crumple import cloth, eol, geometry, mpm, pbd
from fuzz import all_finite, arrays, attempt, floats, ints, kwargs_for, vec3s, wild

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                       HealthCheck.function_scoped_fixture])
NAMES = {
    "backend": st.sampled_from(["cpu", "auto", "tpu", ""]),
    "kernel": st.sampled_from(["quadratic", "cubic", "linear"]),
    "precision": st.sampled_from(["f32", "f64", "f16"]),
    "out_of_domain": st.sampled_from(["error", "clamp", "remove", "wrap"]),
    "transfer": st.sampled_from(["apic", "mls", "zero_eulerian", "eq13", "pic"]),
    "tangents": st.sampled_from(["mesh", "eulerian", "x"]),
    "linear_solver": st.sampled_from(["lagged", "cholesky", "cg", "lu"]),
    "weights": st.sampled_from(["split", "particle", "x"]),
    "rotation_fit": st.sampled_from(["rigid", "linear", "x"]),
    "mode": st.sampled_from(["eol", "lag_static", "lag_nonconformal", "lag_conformal_avg", "lag_conformal_cone", "x"]),
    "qp_solver": st.sampled_from(["active_set", "clarabel", "osqp"]),
    "sizing": st.one_of(st.none(), st.booleans(), st.just({"size_min": -1.0}), st.just({"x": 1.0})),
    "bend_friction": st.sampled_from(["dwell", "dahl", "off", "x"]),
    "clock": st.sampled_from(["alg2", "eq14", "always", "x"]),
}
SOLVERS = {"mpm": mpm.Simulation, "cloth": cloth.Simulation, "pbd": pbd.Simulation, "eol": eol.Simulation}
MATERIALS = [("mpm", mpm.ClothMaterial), ("mpm", mpm.CurveMaterial), ("mpm", mpm.ElasticMaterial),
             ("mpm", mpm.SandMaterial), ("mpm", mpm.GooMaterial), ("cloth", cloth.Material),
             ("cloth", cloth.Wrinkles), ("pbd", pbd.Material)]


@FUZZ
@given(data=st.data())
@pytest.mark.parametrize("module", list(SOLVERS))
def test_constructors(module: str, data: st.DataObject) -> None:
    kw = data.draw(kwargs_for(SOLVERS[module], overrides=NAMES))
    attempt(module, SOLVERS[module], **kw)


@FUZZ
@given(data=st.data())
@pytest.mark.parametrize(("module", "cls"), MATERIALS, ids=lambda v: getattr(v, "__qualname__", v))
def test_materials(module: str, cls: Any, data: st.DataObject) -> None:
    kw = data.draw(kwargs_for(cls, overrides=NAMES))
    attempt(module, cls, **kw)
    if hasattr(cls, "preset"):
        attempt(module, cls.preset, data.draw(st.one_of(st.text(max_size=10), st.sampled_from(sorted(cls.PRESETS)))))


# Meshes: a valid small grid or box, moved, scaled (tiny to huge), squashed
# flat, with a vertex dragged onto another, or replaced by random arrays.
def meshes(closed: bool) -> st.SearchStrategy[Any]:
    base = geometry.box_mesh(half_extents=(0.2, 0.2, 0.2)) if closed else \
        geometry.grid_mesh(size=(0.4, 0.4), resolution=(4, 4))

    def warp(scale: float, squash: int, merge: bool, shift: float) -> Any:
        v = np.array(base.vertices) * scale + shift
        if squash >= 0:
            v[:, squash % 3] = 0.0
        if merge:
            v[1] = v[0]
        return attempt("geometry", geometry.TriMesh, v, base.faces)

    warped = st.builds(warp, st.sampled_from([1.0, 1e-9, 1e-3, 10.0, 1e9]), st.integers(-3, 2), st.booleans(),
                       st.sampled_from([0.0, 0.5, -3.0, 1e6]))
    randoms = st.builds(lambda v, f: attempt("geometry", geometry.TriMesh, v, f), arrays(2, 9), arrays(2, 9))
    faces_only = st.builds(lambda f: attempt("geometry", geometry.TriMesh, base.vertices, f), arrays(2, 12))
    return st.one_of(warped, warped, randoms, faces_only, wild)


def _step_and_check(module: str, sim: Any, dt: Any, objects: list[Any]) -> None:
    for _ in range(2):
        if attempt(module, sim.step, dt) is None and not objects:
            return
    for o in objects:
        all_finite(o.positions)


@FUZZ
@given(mesh=meshes(False), data=st.data())
def test_cloth_add_pin_step(mesh: Any, data: st.DataObject) -> None:
    sim = cloth.Simulation(self_collision=data.draw(st.booleans()))
    kw = data.draw(kwargs_for(cloth.Simulation.add_cloth, skip=("mesh", "material", "wrinkles", "name"),
                              overrides={"uv": st.one_of(st.none(), arrays(2, 30))}))
    c = attempt("cloth", sim.add_cloth, mesh, data.draw(st.one_of(st.sampled_from(["cotton", "denim"]), wild)),
                **kw)
    if c is None:
        return
    attempt("cloth", c.pin, data.draw(st.one_of(arrays(1, 30), ints, wild)))
    attempt("cloth", c.set_pin_targets, data.draw(st.one_of(arrays(1, 5), wild)), data.draw(arrays(2, 5)))
    _step_and_check("cloth", sim, data.draw(st.one_of(st.none(), floats)), [c])


@FUZZ
@given(mesh=meshes(False), data=st.data())
def test_eol_add_obstacles_step(mesh: Any, data: st.DataObject) -> None:
    sim = eol.Simulation(mode=data.draw(st.sampled_from(["eol", "lag_static"])))
    box = cr.colliders.Box(center=(0.0, -0.5, 0.0), half_extents=(0.5, 0.49, 0.5))
    # Moving, turning and keyframed boxes (any numbers: huge turns per step included).
    motion = data.draw(st.sampled_from(["static", "velocity", "keyframes"]))
    if motion == "velocity":
        attempt("eol", box.set_velocity, data.draw(vec3s()), data.draw(vec3s()))
    elif motion == "keyframes":
        n = data.draw(st.integers(min_value=1, max_value=3))
        turns = data.draw(st.lists(st.floats(min_value=-720.0, max_value=720.0), min_size=n, max_size=n))
        attempt("eol", box.set_keyframes, data.draw(st.one_of(arrays(1, 4), wild)),
                data.draw(st.one_of(arrays(2, 4), wild)),
                [cr.colliders.rotation((0.3, 1.0, -0.2), d) for d in turns])
    attempt("eol", sim.add_collider, box)
    attempt("eol", sim.add_wire, data.draw(st.one_of(arrays(2, 4), wild)),
            **data.draw(kwargs_for(eol.Simulation.add_wire, skip=("points",))))
    attempt("eol", sim.add_point, data.draw(st.one_of(st.tuples(floats, floats, floats), wild)),
            **data.draw(kwargs_for(eol.Simulation.add_point, skip=("position",))))
    kw = data.draw(kwargs_for(eol.Simulation.add_cloth, skip=("mesh", "material", "wrinkles", "name"),
                              overrides={"material_coordinates": st.one_of(st.none(), arrays(2, 30))}))
    c = attempt("eol", sim.add_cloth, mesh, "cotton", **kw)
    if c is None:
        return
    attempt("eol", c.pin, data.draw(st.one_of(arrays(1, 30), wild)))
    _step_and_check("eol", sim, data.draw(st.one_of(st.none(), floats)), [c])


@FUZZ
@given(mesh=meshes(True), data=st.data())
def test_pbd_add_body_step(mesh: Any, data: st.DataObject) -> None:
    sim = pbd.Simulation(resampling=data.draw(st.booleans()))
    kw = data.draw(kwargs_for(pbd.Simulation.add_body, skip=("mesh", "material", "name"),
                              overrides={"spacing": st.one_of(st.none(), floats),
                                         "particles": st.one_of(st.none(), arrays(2, 12)),
                                         "clusters": st.one_of(st.none(), st.lists(arrays(1, 6), max_size=3))}))
    b = attempt("pbd", sim.add_body, mesh, data.draw(st.one_of(st.sampled_from(["dough", "taffy"]), wild)), **kw)
    if b is None:
        return
    attempt("pbd", b.pin, data.draw(st.one_of(arrays(1, 30), wild)))
    _step_and_check("pbd", sim, data.draw(st.one_of(st.none(), floats)), [b])


@FUZZ
@given(data=st.data())
def test_mpm_add_step(data: st.DataObject) -> None:
    sim = mpm.Simulation(lower=(0, 0, 0), upper=(1, 1, 1), dx=1 / 16,
                         out_of_domain=data.draw(st.sampled_from(["error", "clamp", "remove"])))
    kind = data.draw(st.sampled_from(["solid", "granular", "goo", "cloth", "curves"]))
    if kind == "cloth":
        mesh = data.draw(meshes(False))
        o = attempt("mpm", sim.add_cloth, mesh, **data.draw(kwargs_for(mpm.Simulation.add_cloth,
                                                                          skip=("mesh", "material", "name"),
                                                                          overrides=NAMES)))
    elif kind == "curves":
        c = attempt("geometry", geometry.Curves, data.draw(arrays(2, 8)), data.draw(arrays(1, 4)))
        o = attempt("mpm", sim.add_curves, c if c is not None else data.draw(wild))
    else:
        pts = data.draw(st.one_of(arrays(2, 20), st.just(geometry.sample_box(lower=(0.4, 0.4, 0.4), upper=(0.6, 0.6, 0.6),
                                                                           spacing=0.05)), wild))
        fn = getattr(sim, f"add_{kind}")
        o = attempt("mpm", fn, pts, **data.draw(kwargs_for(fn, skip=("points", "material", "name"))))
    _step_and_check("mpm", sim, data.draw(st.one_of(st.none(), floats)), [] if o is None else [o])


def _small_sim(module: str) -> Any:
    if module == "mpm":
        s: Any = mpm.Simulation(dx=1 / 16)
        s.add_solid(geometry.sample_box(lower=(0.4, 0.4, 0.4), upper=(0.6, 0.6, 0.6), spacing=0.05))
    elif module == "cloth":
        s = cloth.Simulation()
        s.add_cloth(geometry.grid_mesh(size=(0.2, 0.2), resolution=(3, 3)), "cotton")
    elif module == "pbd":
        s = pbd.Simulation()
        s.add_body(geometry.box_mesh(half_extents=(0.2, 0.2, 0.2)), "dough")
    else:
        s = eol.Simulation()
        s.add_cloth(geometry.grid_mesh(size=(0.2, 0.2), resolution=(3, 3)), "cotton")
    s.step()
    return s


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    d = tmp_path_factory.mktemp("ckpt")
    return {m: Path(_small_sim(m).save(d / f"{m}.npz")).read_bytes() for m in SOLVERS}


def _replace_array(good: bytes, key_index: int, value: np.ndarray) -> bytes:
    """The checkpoint with one of its arrays swapped for ``value``."""
    with np.load(_io.BytesIO(good), allow_pickle=False) as z:
        arrays_ = {k: z[k] for k in z.files}
    keys = sorted(arrays_)
    arrays_[keys[key_index % len(keys)]] = value
    buf = _io.BytesIO()
    np.savez(buf, **arrays_)
    return buf.getvalue()


@FUZZ
@given(data=st.data())
@pytest.mark.parametrize("module", list(SOLVERS))
def test_corrupt_checkpoints(tmp_path: Path, checkpoints: dict[str, bytes], module: str,
                             data: st.DataObject) -> None:
    good = checkpoints[module]
    how = data.draw(st.sampled_from(["truncate", "flip", "replace", "replace", "random", "other_module"]))
    if how == "truncate":
        body = good[: data.draw(st.integers(0, len(good) - 1))]
    elif how == "flip":
        b = bytearray(good)
        for _ in range(data.draw(st.integers(1, 6))):
            b[data.draw(st.integers(0, len(b) - 1))] = data.draw(st.integers(0, 255))
        body = bytes(b)
    elif how == "replace":
        body = _replace_array(good, data.draw(st.integers(0, 200)), data.draw(arrays(3, 6)))
    elif how == "other_module":
        body = checkpoints[data.draw(st.sampled_from([m for m in SOLVERS if m != module]))]
    else:
        body = data.draw(st.binary(max_size=300))
    p = tmp_path / "fuzz.npz"
    p.write_bytes(body)
    sim = attempt(module, SOLVERS[module].load, p)
    if sim is not None:
        _step_and_check(module, sim, None, list(sim.objects))


# Every public method and settable property of a simulation and of its
# objects, with arguments drawn from the method's signature. Durations stay
# short (a huge finite one is a legitimate long run, not a fuzz case).
SKIP_METHODS = {"save", "load", "frame"}
SHORT = {"duration": st.one_of(st.sampled_from([0.0, 1e-4, -1.0, float("nan"), float("inf")]), wild),
         "frames": st.one_of(st.integers(-2, 3), wild), "progress": st.just(False),
         "steps": st.one_of(st.integers(-2, 50), st.sampled_from([2**40]), wild), **NAMES}


def _public(obj: Any) -> tuple[list[str], list[str]]:
    methods, setters = [], []
    for name in dir(type(obj)):
        if name.startswith("_") or name in SKIP_METHODS:
            continue
        attr = getattr(type(obj), name)
        if isinstance(attr, property):
            if attr.fset is not None:
                setters.append(name)
        elif callable(attr):
            methods.append(name)
    return methods, setters


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
@pytest.mark.parametrize("module", list(SOLVERS))
def test_every_public_method(module: str, data: st.DataObject) -> None:
    sim = _small_sim(module)
    target = data.draw(st.sampled_from([sim, *sim.objects]))
    methods, setters = _public(target)
    if setters and (not methods or data.draw(st.booleans())):
        name = data.draw(st.sampled_from(setters))
        attempt(module, setattr, target, name, data.draw(st.one_of(arrays(2, 40), vec3s(), floats, wild)))
    elif methods:
        name = data.draw(st.sampled_from(methods))
        fn = getattr(target, name)
        try:
            kw = data.draw(kwargs_for(fn, overrides=SHORT))
        except ValueError:  # no signature (a builtin)
            kw = {}
        attempt(module, fn, **kw)
    for o in sim.objects:
        all_finite(o.positions)
    attempt(module, sim.step)
    for o in sim.objects:
        all_finite(o.positions)
