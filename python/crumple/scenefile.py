"""Scene files: a simulation described in TOML, validated against a JSON
Schema and run by ``crumple run scene.toml``.

A file has one of two forms.

A **built-in scene** with its options (what ``crumple scenes --export NAME``
writes: the scene's scripted protocol, its holds, releases and moving pins,
stays the scene's code; the file names it and sets every option)::

    scene = "eol_crease"
    frames = 60
    [options]
    hold_time = 200.0
    material = "denim"

A **declared scene**: the module, its simulation options, the objects (meshes
by file or generator, materials by preset and overrides, pins, velocities),
the colliders with their motion, and the frames and outputs::

    module = "cloth"
    frames = 48
    fps = 24.0
    [simulation]
    dt = 0.002
    [[objects]]
    kind = "cloth"
    name = "sheet"
    mesh = { generator = "grid_mesh", size = [0.5, 0.5], resolution = [16, 16], center = [0, 0.4, 0] }
    material = { preset = "cotton", overrides = { bending = 1e-6 } }
    pin = { lower = [-0.3, 0.3, 0.2], upper = [0.3, 0.5, 0.3] }
    [[colliders]]
    type = "Sphere"
    center = [0, 0.1, 0]
    radius = 0.12
    friction = 0.5
    motion = { velocity = { linear = [0, 0.05, 0] } }

The schema is generated from one definition, the API itself: the
simulation options of each module from its ``Simulation`` signature, the
material fields and preset names from its material classes, the generators
from :mod:`crumple.geometry`, the colliders from :mod:`crumple.colliders`
(:func:`schema`; ``docs/scene.schema.json`` is its published copy). Files
are parsed with :mod:`tomllib` (no eval, no pickle) and checked with
``jsonschema``; an error names the key path and what is allowed there.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import InvalidInputError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["schema", "load", "run", "export", "validate", "check_options", "SceneFileError"]


class SceneFileError(InvalidInputError):
    """A scene file that cannot be run: not TOML, or not what the schema
    allows. The message names the key path (``objects[0].material.preset``)
    and what is allowed there."""


# The objects each module adds, and the Simulation method that adds them.
_KINDS: dict[str, dict[str, str]] = {
    "mpm": {"cloth": "add_cloth", "curves": "add_curves", "solid": "add_solid", "granular": "add_granular",
            "goo": "add_goo"},
    "cloth": {"cloth": "add_cloth"},
    "pbd": {"body": "add_body"},
    "eol": {"cloth": "add_cloth"},
}
_MESH_GENERATORS = ("grid_mesh", "uv_sphere", "box_mesh", "cylinder_mesh", "torus_mesh")
_POINT_GENERATORS = ("sample_box", "sample_sphere")
_CURVE_GENERATORS = ("helix_curves", "straight_curves")
_COLLIDERS = ("Plane", "Sphere", "Box", "Capsule", "Cylinder")


def _modules() -> dict[str, Any]:
    from . import cloth, eol, mpm, pbd

    return {"mpm": mpm, "cloth": cloth, "pbd": pbd, "eol": eol}


def _materials(module: str) -> dict[str, Any]:
    """The material classes an object kind of ``module`` takes."""
    from . import cloth, mpm, pbd

    if module == "mpm":
        return {"cloth": mpm.ClothMaterial, "curves": mpm.CurveMaterial, "solid": mpm.ElasticMaterial,
                "granular": mpm.SandMaterial, "goo": mpm.GooMaterial}
    if module == "pbd":
        return {"body": pbd.Material}
    return {"cloth": cloth.Material}


_LITERAL = re.compile(r"Literal\[([^\]]*)\]")


def _value_schema(default: Any, annotation: Any) -> dict[str, Any]:
    """A JSON Schema for a keyword option from its default and annotation."""
    text = annotation if isinstance(annotation, str) else repr(annotation)
    m = _LITERAL.search(text)
    if m:
        names = [v.strip().strip("'\"") for v in m.group(1).split(",")]
        return {"enum": names}
    if isinstance(default, bool):
        return {"type": "boolean"}
    if isinstance(default, int):
        return {"type": "integer"}
    if isinstance(default, float):
        return {"type": "number"}  # TOML writes inf and nan as floats too
    if isinstance(default, str):
        return {"type": "string"}
    if isinstance(default, tuple) and default and all(isinstance(v, (int, float)) for v in default):
        return {"type": "array", "items": {"type": "number"}, "minItems": len(default), "maxItems": len(default)}
    return {}


def _required_schema(annotation: Any) -> dict[str, Any]:
    """A JSON Schema for a required option (no default) from its annotation."""
    text = annotation if isinstance(annotation, str) else repr(annotation)
    if "Vec3Like" in text:
        return _vec3()
    if text in ("float", "<class 'float'>"):
        return {"type": "number"}
    if text in ("int", "<class 'int'>"):
        return {"type": "integer"}
    return {}


def _options_schema(fn: Callable[..., Any], skip: tuple[str, ...] = ()) -> dict[str, Any]:
    props: dict[str, Any] = {}
    for name, p in inspect.signature(fn).parameters.items():
        if name in ("self", *skip) or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        props[name] = _required_schema(p.annotation) if p.default is p.empty else _value_schema(p.default, p.annotation)
    return {"type": "object", "properties": props, "additionalProperties": False}


def _vec3() -> dict[str, Any]:
    return {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3}


# Pinned vertices: those inside an axis-aligned box (or several boxes), m.
_PIN_BOX: dict[str, Any] = {"type": "object", "additionalProperties": False, "required": ["lower", "upper"],
                            "properties": {"lower": _vec3(), "upper": _vec3()}}


def _generator_schema(names: tuple[str, ...]) -> dict[str, Any]:
    from . import geometry

    variants = []
    for n in names:
        s = _options_schema(getattr(geometry, n), skip=("mesh", "roots"))
        s["properties"] = {"generator": {"const": n}, **s["properties"]}
        if n == "straight_curves":
            s["properties"]["roots"] = {"type": "array", "items": _vec3(), "minItems": 1}
        fn = getattr(geometry, n)
        required = [k for k, p in inspect.signature(fn).parameters.items() if p.default is p.empty]
        s["required"] = ["generator", *required]
        variants.append({"if": {"properties": {"generator": {"const": n}}, "required": ["generator"]}, "then": s})
    return {"type": "object", "required": ["generator"],
            "properties": {"generator": {"enum": list(names)}}, "allOf": variants}


def _mesh_schema() -> dict[str, Any]:
    return {"oneOf": [
        {"type": "object", "properties": {"file": {"type": "string"}}, "required": ["file"],
         "additionalProperties": False},
        _generator_schema(_MESH_GENERATORS),
    ]}


def _material_schema(cls: Any) -> dict[str, Any]:
    fields = {f.name: _value_schema(f.default, f.type) for f in dataclasses.fields(cls)}
    return {"type": "object", "additionalProperties": False, "properties": {
        "preset": {"enum": sorted(cls.PRESETS)},
        "overrides": {"type": "object", "properties": fields, "additionalProperties": False},
    }}


def _object_schema(module: str) -> dict[str, Any]:
    sim = _modules()[module].Simulation
    mats = _materials(module)
    kinds = _KINDS[module]
    variants = []
    for kind, method in kinds.items():
        props: dict[str, Any] = {
            "kind": {"const": kind},
            "name": {"type": "string"},
            "material": _material_schema(mats[kind]),
            "pin": {"oneOf": [_PIN_BOX, {"type": "array", "items": _PIN_BOX, "minItems": 1}]},
            "options": _options_schema(getattr(sim, method), skip=("name", "material", "mesh", "points", "curves",
                                                                   "wrinkles", "uv", "material_coordinates",
                                                                   "particles", "clusters")),
        }
        if kind in ("solid", "granular", "goo"):
            props["points"] = {"oneOf": [_generator_schema(_POINT_GENERATORS),
                                         {"type": "object", "required": ["file"], "additionalProperties": False,
                                          "properties": {"file": {"type": "string"},
                                                         "spacing": {"type": "number"}}}]}
            req = ["kind", "points"]
        elif kind == "curves":
            props["curves"] = _generator_schema(_CURVE_GENERATORS)
            req = ["kind", "curves"]
        else:
            props["mesh"] = _mesh_schema()
            req = ["kind", "mesh"]
        if module in ("cloth", "eol"):
            from .cloth import Wrinkles

            props["wrinkles"] = {"oneOf": [{"type": "boolean"}, _options_schema(Wrinkles)]}
        variants.append({"if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]},
                         "then": {"type": "object", "properties": props, "required": req,
                                  "additionalProperties": False}})
    return {"type": "object", "required": ["kind"], "properties": {"kind": {"enum": list(kinds)}},
            "allOf": variants}


def _collider_schema() -> dict[str, Any]:
    from . import colliders

    variants = []
    for n in _COLLIDERS:
        s = _options_schema(getattr(colliders, n))
        s["properties"] = {"type": {"const": n}, **s["properties"], "motion": {
            "type": "object", "additionalProperties": False, "properties": {
                "velocity": {"type": "object", "additionalProperties": False,
                             "properties": {"linear": _vec3(), "angular": _vec3()}},
                "keyframes": {"type": "object", "additionalProperties": False, "required": ["times", "translations"],
                              "properties": {"times": {"type": "array", "items": {"type": "number"}, "minItems": 1},
                                             "translations": {"type": "array", "items": _vec3(), "minItems": 1}}},
            }}, "name": {"type": "string"}}
        for k in ("a", "b", "radius"):  # Capsule's required end points and radius
            if k in inspect.signature(getattr(colliders, n)).parameters and k not in s["properties"]:
                s["properties"][k] = _vec3() if k != "radius" else {"type": "number"}
        if "rotation" in s["properties"]:
            s["properties"]["rotation"] = {"type": "array", "items": _vec3(), "minItems": 3, "maxItems": 3}
        required = [k for k, p in inspect.signature(getattr(colliders, n)).parameters.items() if p.default is p.empty]
        s["required"] = ["type", *required]
        variants.append({"if": {"properties": {"type": {"const": n}}, "required": ["type"]}, "then": s})
    return {"type": "object", "required": ["type"], "properties": {"type": {"enum": list(_COLLIDERS)}},
            "allOf": variants}


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a scene file, generated from the
    API (see the module docstring)."""
    from . import scenes

    mods = _modules()
    output = {"type": "object", "additionalProperties": False, "properties": {
        "dir": {"type": "string"}, "format": {"enum": list(scenes.FORMATS)}, "picture": {"type": "boolean"},
        "checkpoint": {"type": "boolean"}}}
    frames = {"type": "integer", "minimum": 1}
    # Each built-in scene's own options, from its function's signature.
    per_scene = [{"if": {"properties": {"scene": {"const": n}}, "required": ["scene"]},
                  "then": {"properties": {"options": _options_schema(
                      scenes._get(n).fn, skip=("out_dir", "frames", "backend", "scale", "progress"))}}}
                 for n in scenes.names()]
    builtin = {"type": "object", "required": ["scene"], "additionalProperties": False, "properties": {
        "scene": {"enum": scenes.names()}, "frames": frames, "scale": {"type": "number", "exclusiveMinimum": 0},
        "backend": {"enum": ["auto", "cpu", "gpu"]}, "options": {"type": "object"}, "output": output},
        "allOf": per_scene}
    declared_variants = []
    for name, mod in mods.items():
        props: dict[str, Any] = {
            "module": {"const": name}, "frames": frames, "fps": {"type": "number", "exclusiveMinimum": 0},
            "output": output, "simulation": _options_schema(mod.Simulation),
            "objects": {"type": "array", "minItems": 1, "items": _object_schema(name)},
            "colliders": {"type": "array", "items": _collider_schema()},
        }
        if name == "eol":
            props["wires"] = {"type": "array", "items": {"type": "object", "required": ["points"],
                                                         "additionalProperties": False, "properties": {
                "points": {"type": "array", "items": _vec3(), "minItems": 2}, "normal": _vec3(),
                "velocity": _vec3(), "friction": {"type": "number", "minimum": 0}}}}
            props["points"] = {"type": "array", "items": {"type": "object", "required": ["position"],
                                                          "additionalProperties": False, "properties": {
                "position": _vec3(), "normal": _vec3(), "velocity": _vec3(),
                "friction": {"type": "number", "minimum": 0}}}}
        declared_variants.append({"if": {"properties": {"module": {"const": name}}, "required": ["module"]},
                                  "then": {"properties": props, "additionalProperties": False,
                                           "required": ["module", "objects"]}})
    declared = {"type": "object", "required": ["module"], "properties": {"module": {"enum": list(mods)}},
                "allOf": declared_variants}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://crumple.dev/scene.schema.json",
        "title": "crumple scene file",
        "description": "A crumple simulation in TOML: a built-in scene with its options, or a declared scene "
                       "(module, simulation options, objects, colliders, frames, outputs).",
        "type": "object",
        "if": {"required": ["scene"]},
        "then": builtin,
        "else": declared,
    }


def _path(e: Any) -> str:
    out = ""
    for p in e.absolute_path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"


def _explain(e: Any) -> str:
    """One line per error: where, what is wrong, and what is allowed."""
    if e.validator in ("oneOf", "anyOf") and e.context:
        # Explain the alternative the file meant: one whose own keys are
        # there (a mesh with a "generator" is not a mesh "file" missing its
        # key); among those, the deepest error says the most.
        import jsonschema  # type: ignore[import-untyped, unused-ignore]

        by_alt: dict[Any, list[Any]] = {}
        for c in e.context:
            by_alt.setdefault(c.schema_path[0] if c.schema_path else None, []).append(c)
        meant = [errs for errs in by_alt.values()
                 if not any(c.validator in ("required", "type") and not list(c.relative_path) for c in errs)]
        pool = meant[0] if len(meant) == 1 else list(e.context)
        return _explain(jsonschema.exceptions.best_match(sorted(pool, key=lambda c: -len(list(c.absolute_path)))))
    where = _path(e)
    s = e.schema if isinstance(e.schema, dict) else {}
    if e.validator == "enum":
        return f"{where}: {e.instance!r} is not allowed; use one of {', '.join(map(repr, s['enum']))}"
    if e.validator == "const":
        return f"{where}: must be {s['const']!r}"
    if e.validator == "additionalProperties":
        allowed = sorted(s.get("properties", {}))
        extra = sorted(set(e.instance) - set(allowed)) if isinstance(e.instance, dict) else []
        return f"{where}: unknown key(s) {', '.join(map(repr, extra))}; allowed here: {', '.join(allowed)}"
    if e.validator == "required":
        return f"{where}: {e.message}"
    return f"{where}: {e.message}"


def _schema_errors(*docs: Mapping[str, Any]) -> list[str]:
    """Every way ``docs`` miss :func:`schema`, one explained line each
    (:func:`_explain`), the deepest first: they say the most (if/then
    nesting repeats them higher up)."""
    import jsonschema  # type: ignore[import-untyped, unused-ignore]

    validator = jsonschema.Draft202012Validator(schema())
    errors = sorted((e for doc in docs for e in validator.iter_errors(dict(doc))),
                    key=lambda e: (-len(list(e.absolute_path)), _path(e)))
    return list(dict.fromkeys(_explain(e) for e in errors))


def validate(doc: Mapping[str, Any]) -> None:
    """Check a parsed scene file against :func:`schema`; raises
    :class:`SceneFileError` naming every bad key path."""
    lines = _schema_errors(doc)
    if lines:
        raise SceneFileError("the scene file does not match the schema:\n  " + "\n  ".join(lines[:8]))


def check_options(name: str, *option_sets: Mapping[str, Any], given_as: str = "--set") -> None:
    """Check option sets of the built-in scene ``name`` as parsed from the
    command line (JSON values) against its schema, the one scene files are
    checked with (the scene function's signature: names, and types where
    the defaults give them); raises :class:`InvalidInputError` naming each
    bad option and what it takes."""
    lines = _schema_errors(*({"scene": name, "options": dict(options)} for options in option_sets))
    if lines:
        # Said as the command line gives them: "hold: ..." for "options.hold: ...".
        lines = [line.removeprefix("options.").removeprefix("options: ").replace("allowed here: ", "allowed: ")
                 for line in lines]
        lines = [line + "(none)" if line.endswith("allowed: ") else line for line in lines]
        raise InvalidInputError(f"bad options for scene {name!r} ({given_as}):\n  " + "\n  ".join(lines[:8]))


def load(path: str | Path) -> dict[str, Any]:
    """Parse and validate a scene file; its contents as a dict."""
    p = Path(path)
    try:
        doc = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise SceneFileError(f"scene file {str(p)!r} does not exist") from e
    except (OSError, UnicodeDecodeError) as e:
        raise SceneFileError(f"scene file {str(p)!r} cannot be read: {e}") from e
    except tomllib.TOMLDecodeError as e:
        raise SceneFileError(f"scene file {str(p)!r} is not valid TOML: {e}") from e
    validate(doc)
    return doc


def _mesh(spec: Mapping[str, Any], base: Path) -> Any:
    from . import geometry, io

    if "file" in spec:
        return io.load_mesh(base / spec["file"])
    kw = {k: (tuple(v) if isinstance(v, list) else v) for k, v in spec.items() if k != "generator"}
    return getattr(geometry, spec["generator"])(**kw)


def _points(spec: Mapping[str, Any], base: Path) -> Any:
    from . import geometry, io

    if "file" in spec:
        mesh = io.load_mesh(base / spec["file"])
        if "spacing" not in spec:
            raise SceneFileError("points.file needs points.spacing (m) to sample the mesh's inside")
        return geometry.sample_mesh(mesh, spacing=spec["spacing"])
    kw = {k: (tuple(v) if isinstance(v, list) else v) for k, v in spec.items() if k != "generator"}
    return getattr(geometry, spec["generator"])(**kw)


def _curves(spec: Mapping[str, Any]) -> Any:
    from . import geometry

    kw = {k: (tuple(v) if isinstance(v, list) and k != "roots" else v) for k, v in spec.items() if k != "generator"}
    return getattr(geometry, spec["generator"])(**kw)


def _material(module: str, kind: str, spec: Mapping[str, Any] | None) -> Any:
    cls = _materials(module)[kind]
    spec = spec or {}
    overrides = dict(spec.get("overrides", {}))
    if "preset" in spec:
        return cls.preset(spec["preset"], **overrides)
    return cls(**overrides)


def build(doc: Mapping[str, Any], base: Path = Path(".")) -> Any:
    """The simulation a declared scene describes (objects, pins, colliders
    and their motion, eol wires and points), at time 0."""
    from . import colliders as col
    from .cloth import Wrinkles

    module = doc["module"]
    mod = _modules()[module]
    sim = mod.Simulation(**{k: tuple(v) if isinstance(v, list) else v for k, v in doc.get("simulation", {}).items()})
    for i, o in enumerate(doc["objects"]):
        kind = o["kind"]
        add = getattr(sim, _KINDS[module][kind])
        kw = dict(o.get("options", {}))
        if "name" in o:
            kw["name"] = o["name"]
        if "wrinkles" in o and o["wrinkles"] is not False:
            kw["wrinkles"] = Wrinkles() if o["wrinkles"] is True else Wrinkles(**o["wrinkles"])
        mat = _material(module, kind, o.get("material"))
        if kind in ("solid", "granular", "goo"):
            h = add(_points(o["points"], base), mat, **kw)
        elif kind == "curves":
            h = add(_curves(o["curves"]), mat, **kw)
        else:
            h = add(_mesh(o["mesh"], base), mat, **kw)
        if "pin" in o:
            x = np.asarray(h.positions, dtype=np.float64)
            boxes = o["pin"] if isinstance(o["pin"], list) else [o["pin"]]
            inside = np.zeros(len(x), dtype=bool)
            for box in boxes:
                lo, hi = np.asarray(box["lower"]), np.asarray(box["upper"])
                hit = ((x >= lo) & (x <= hi)).all(axis=1)
                if not hit.any():
                    raise SceneFileError(f"objects[{i}].pin: no vertex lies in the box {lo.tolist()} to {hi.tolist()}")
                inside |= hit
            h.pin(np.flatnonzero(inside))
    for c in doc.get("colliders", []):
        kw = {k: v for k, v in c.items() if k not in ("type", "motion", "name")}
        if "rotation" in kw:
            kw["rotation"] = np.asarray(kw["rotation"], dtype=np.float64)
        collider = getattr(col, c["type"])(**kw)
        motion = c.get("motion", {})
        if "velocity" in motion:
            v = motion["velocity"]
            collider.set_velocity(linear=tuple(v.get("linear", (0, 0, 0))), angular=tuple(v.get("angular", (0, 0, 0))))
        if "keyframes" in motion:
            k = motion["keyframes"]
            collider.set_keyframes(k["times"], [tuple(t) for t in k["translations"]])
        sim.add_collider(collider, name=c.get("name"))
    for w in doc.get("wires", []):
        sim.add_wire(w["points"], **{k: tuple(v) if isinstance(v, list) else v for k, v in w.items() if k != "points"})
    for p in doc.get("points", []):
        sim.add_point(tuple(p["position"]), **{k: tuple(v) if isinstance(v, list) else v
                                               for k, v in p.items() if k != "position"})
    return sim


def run(path: str | Path, *, out_dir: str | Path | None = None, progress: bool = False) -> Path:
    """Run a scene file: a built-in scene through :func:`crumple.scenes.run`
    with the file's options, or a declared scene built by :func:`build`
    stepped ``frames`` frames of ``1 / fps`` s; writes the frames
    through the frame stream, a PNG (a built-in scene always writes its
    own; ``output.picture`` is for declared scenes), ``metrics.json`` and
    (unless ``output.checkpoint = false``) ``checkpoint.npz``; returns the
    folder. ``output.dir`` (default ``out``) is relative to the working
    directory, like ``--out``; mesh and point files are relative to the
    scene file."""
    from . import scenes
    from ._progress import progress as bar

    p = Path(path)
    doc = load(p)
    out = doc.get("output", {})
    root = Path(out_dir or out.get("dir", "out"))
    fmt = out.get("format", "ply")
    if "scene" in doc:
        return scenes.run(doc["scene"], out_dir=root, frames=doc.get("frames"), backend=doc.get("backend", "auto"),
                          scale=doc.get("scale", 1.0), progress=progress, format=fmt,
                          checkpoint=out.get("checkpoint", True), **doc.get("options", {}))
    name = p.stem
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    sim = build(doc, p.parent)
    frames = int(doc.get("frames", 24))
    dt_frame = 1.0 / float(doc.get("fps", scenes.FRAME_RATE))
    token = scenes._OUTPUT.set(scenes._Output(format=fmt, checkpoint=out.get("checkpoint", True)))
    try:
        with scenes.frame_writer(folder, name, fps=1.0 / dt_frame, sim=sim) as stream, \
                bar(frames, name, enabled=progress) as b:
            last = sim.frame()
            stream.write(last)
            for _ in range(frames):
                sim.advance(dt_frame)
                last = sim.frame()
                stream.write(last)
                b.update(1)
    finally:
        scenes._OUTPUT.reset(token)
    # The metrics and the picture read the last frame, as every exporter
    # and viewer does: what they show is what the run holds (a pbd body's
    # surface, mpm strands as curves, eol's wires and points by name).
    xs = {k: np.asarray(part.positions, dtype=np.float64) for k, part in last.objects.items()}
    metrics = {"scene_file": str(p), "module": doc["module"], "frames": frames, "time_s": sim.time,
               "steps": sim.step_count, "kinetic_energy_j": float(sim.kinetic_energy()),
               "finite": bool(all(np.isfinite(x).all() for x in xs.values())),
               "objects": {k: {"lower": x.min(axis=0).tolist(), "upper": x.max(axis=0).tolist()}
                           for k, x in xs.items() if len(x)}}
    (folder / "metrics.json").write_text(json.dumps(metrics, indent=1))
    if out.get("picture", True):
        from . import viz
        from .frames import FrameCurves, FrameMesh
        from .geometry import Curves, TriMesh

        items: dict[str, Any] = {}
        for k, part in last.objects.items():
            if isinstance(part, FrameMesh):
                items[k] = TriMesh(part.positions, part.faces)
            elif isinstance(part, FrameCurves):
                items[k] = Curves(part.positions, part.offsets)
            else:
                items[k] = part.positions
        for k, c in last.colliders.items():
            if len(c.faces):
                items[k] = TriMesh(_drawn_inside(c.world_vertices()), c.faces)
        viz.screenshot(items, folder / f"{name}.png")
    return folder


def _drawn_inside(v: npt.NDArray[np.float64], by: float = 0.003) -> npt.NDArray[np.float64]:
    """A collider's drawn vertices moved up to ``by`` m toward their
    centroid: cloth resting on a collider lies within a few mm of its
    surface (EOL vertices sit inside it by the snap depth), and a collider
    drawn at full size hides it (depth fighting). The built-in scenes draw
    their boxes 3 mm smaller for the same reason."""
    d = v - v.mean(axis=0)
    n = np.linalg.norm(d, axis=1, keepdims=True)
    return np.asarray(v - d * (np.minimum(by, 0.5 * n) / np.maximum(n, 1e-300)))


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        f = float(v)
        return "inf" if f == math.inf else ("-inf" if f == -math.inf else ("nan" if f != f else repr(f)))
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise SceneFileError(f"cannot write {type(v).__name__} {v!r} to a scene file")


def export(name: str, path: str | Path | None = None) -> str:
    """A built-in scene as a scene file: its name, frame count and every
    option with its default (from the scene function's signature), ready to
    edit and run with ``crumple run FILE``. Returns the text (and writes it
    to ``path`` when given)."""
    from . import scenes

    s = scenes._get(name)
    lines = [f"# {name}: {s.description}", "# Run with: crumple run FILE.toml   (schema: docs/scene.schema.json)",
             f"scene = {json.dumps(name)}", f"frames = {s.frames}", "scale = 1.0", 'backend = "auto"', "",
             "[options]"]
    for k, p in inspect.signature(s.fn).parameters.items():
        if k in ("out_dir", "frames", "backend", "scale", "progress") or p.default is p.empty or p.default is None:
            continue
        try:
            lines.append(f"{k} = {_toml_value(p.default)}")
        except SceneFileError:
            continue
    lines += ["", "[output]", 'dir = "out"', 'format = "ply"', "checkpoint = true", ""]
    text = "\n".join(lines)
    validate(tomllib.loads(text))
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text
