"""Files in and out: meshes (through trimesh), frame sequences, checkpoints.

- :func:`load_mesh` / :func:`save_mesh`: any format trimesh reads or writes
  (OBJ, PLY, STL, OFF, GLB, ...), chosen by the file extension.
- :class:`FrameWriter`: one file per frame (``frame_00012.ply``), meshes or
  point clouds, readable by Blender, Houdini, MeshLab, ParaView.
- :func:`save_checkpoint` / :func:`load_checkpoint`: named arrays in one
  ``.npz`` with a format version, for exact restarts.

Runs (a stream of :class:`~crumple.frames.Frame`, what ``sim.frame()`` returns):

- :class:`PlyWriter`: a folder of per-object PLY files per frame plus a
  ``manifest.json`` kept current after every frame;
- :class:`UsdWriter`: one USD stage per run (topology once, time-sampled
  points, colliders as a mesh under a time-sampled transform), for Blender,
  Houdini, Omniverse, usdview (``pip install 'crumple[usd]'``);
- :func:`open_run`: either back as a :class:`Run` of frames;
- :func:`writer`: pick a writer by format name.
"""

from __future__ import annotations

import abc
import importlib
import json
import math
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ._checks import as_faces, as_points
from .errors import CrumpleError, InvalidInputError, MeshError
from .frames import Frame, FrameCollider, FrameCurves, FrameMesh, FrameObject, FramePoints
from .geometry import TriMesh

__all__ = [
    "load_mesh",
    "save_mesh",
    "save_points",
    "FrameWriter",
    "save_checkpoint",
    "load_checkpoint",
    "PlyWriter",
    "UsdWriter",
    "Run",
    "open_run",
    "writer",
    "RUN_FORMATS",
]

MESH_FORMATS = ("ply", "obj", "stl", "off", "glb", "gltf")
CHECKPOINT_VERSION = 1

PathLike = str | os.PathLike[str]


def _ext(path: PathLike) -> str:
    ext = Path(path).suffix.lower().lstrip(".")
    if not ext:
        raise InvalidInputError(f"cannot tell the file format of {str(path)!r}: give it an extension such as .ply or .obj")
    return ext


def load_mesh(path: PathLike) -> TriMesh:
    """Load a triangle mesh from ``path`` (OBJ, PLY, STL, OFF, GLB, ...).

    Vertices are read exactly as stored (no merging or re-ordering), so the
    indices of a saved mesh round-trip. The result is validated like any
    :class:`TriMesh` (raises :class:`MeshError` on a bad mesh).
    """
    import trimesh

    p = Path(path)
    if not p.is_file():
        raise InvalidInputError(f"mesh file {str(p)!r} does not exist")
    try:
        m = trimesh.load(str(p), force="mesh", process=False)
    except Exception as e:  # trimesh raises many types for bad files
        raise MeshError(f"could not read a triangle mesh from {str(p)!r}: {e}") from e
    faces = getattr(m, "faces", None)
    if faces is None or len(faces) == 0:
        raise MeshError(f"{str(p)!r} holds no triangles")
    return TriMesh(np.asarray(getattr(m, "vertices"), dtype=np.float64), np.asarray(faces, dtype=np.int64))


def _mesh_arrays(mesh: Any, faces: Any = None) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    if isinstance(mesh, TriMesh):
        return mesh.vertices, mesh.faces
    if faces is None:
        raise InvalidInputError("save_mesh needs a TriMesh, or vertices and faces arrays")
    return as_points(mesh, "vertices"), as_faces(faces)


def save_mesh(path: PathLike, mesh: TriMesh | npt.ArrayLike, faces: npt.ArrayLike | None = None) -> Path:
    """Write a mesh (a :class:`TriMesh`, or ``vertices (N,3)`` and ``faces (M,3)``)
    to ``path``; the format follows the extension. Returns the path."""
    import trimesh

    ext = _ext(path)
    if ext not in MESH_FORMATS:
        raise InvalidInputError(f"unsupported mesh format {ext!r}; use one of {', '.join(MESH_FORMATS)}")
    v, f = _mesh_arrays(mesh, faces)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    trimesh.Trimesh(vertices=v, faces=f, process=False).export(str(path))
    return Path(path)


def save_points(path: PathLike, points: npt.ArrayLike, *, normals: npt.ArrayLike | None = None) -> Path:
    """Write a point cloud ``(N, 3)`` to a ``.ply`` file."""
    import trimesh

    if _ext(path) != "ply":
        raise InvalidInputError(f"point clouds are written as .ply; got {str(path)!r}")
    p = as_points(points, "points", allow_empty=True)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    pc = trimesh.PointCloud(p)
    if normals is not None:
        pc.metadata["normals"] = as_points(normals, "normals", allow_empty=True)
    pc.export(str(path))
    return Path(path)


class FrameWriter:
    """Writes one file per frame into ``out_dir``: ``{prefix}_{frame:05d}.{fmt}``.

    Call :meth:`write` with a frame index and either ``vertices`` + ``faces``
    (a mesh) or ``points`` alone (a point cloud, PLY only).
    """

    def __init__(self, out_dir: PathLike, *, prefix: str = "frame", fmt: str = "ply") -> None:
        fmt = fmt.lower()
        if fmt not in ("ply", "obj"):
            raise InvalidInputError(f"frame format must be 'ply' or 'obj'; got {fmt!r}")
        self.out_dir = Path(out_dir)
        self.prefix = prefix
        self.fmt = fmt
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.paths: list[Path] = []

    def path(self, frame: int) -> Path:
        """The file name of ``frame``."""
        return self.out_dir / f"{self.prefix}_{frame:05d}.{self.fmt}"

    def write(self, frame: int, vertices: npt.ArrayLike, faces: npt.ArrayLike | None = None) -> Path:
        """Write frame ``frame``; returns its path."""
        p = self.path(frame)
        if faces is None:
            if self.fmt != "ply":
                raise InvalidInputError("point-cloud frames need fmt='ply'")
            save_points(p, vertices)
        else:
            save_mesh(p, as_points(vertices, "vertices"), faces)
        self.paths.append(p)
        return p


def save_checkpoint(path: PathLike, arrays: Mapping[str, npt.ArrayLike], meta: Mapping[str, Any] | None = None) -> Path:
    """Save named arrays and JSON-able metadata to one compressed ``.npz``.

    Arrays are stored bit-exactly, so a simulation restored from a checkpoint
    continues identically.
    """
    if _ext(path) != "npz":
        raise InvalidInputError(f"checkpoints are .npz files; got {str(path)!r}")
    for k in arrays:
        if k.startswith("__"):
            raise InvalidInputError(f"checkpoint array names may not start with '__': {k!r}")
    header = {"format": "crumple-checkpoint", "version": CHECKPOINT_VERSION, "meta": dict(meta or {})}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    payload: dict[str, Any] = {k: np.asarray(v) for k, v in arrays.items()}
    payload["__header__"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    np.savez_compressed(str(path), **payload)
    return Path(path)


def load_checkpoint(path: PathLike) -> tuple[dict[str, npt.NDArray[Any]], dict[str, Any]]:
    """Load a checkpoint written by :func:`save_checkpoint`: ``(arrays, meta)``."""
    p = Path(path)
    if not p.is_file():
        raise InvalidInputError(f"checkpoint {str(p)!r} does not exist")
    with np.load(str(p), allow_pickle=False) as z:
        if "__header__" not in z.files:
            raise InvalidInputError(f"{str(p)!r} is not a crumple checkpoint (no header)")
        header = json.loads(bytes(z["__header__"]).decode())
        if header.get("format") != "crumple-checkpoint":
            raise InvalidInputError(f"{str(p)!r} is not a crumple checkpoint")
        if header.get("version", 0) > CHECKPOINT_VERSION:
            raise InvalidInputError(
                f"{str(p)!r} was written by a newer crumple (checkpoint version {header['version']}); upgrade crumple"
            )
        arrays = {k: z[k] for k in z.files if k != "__header__"}
    return arrays, header.get("meta", {})


# --- runs: streams of frames ---------------------------------------------------

RUN_FORMAT = "crumple-run"
RUN_VERSION = 1
RUN_FORMATS = ("ply", "usd")
MANIFEST = "manifest.json"
_USD_EXTS = (".usd", ".usdc", ".usda")


def _fps(fps: Any) -> float:
    try:
        f = float(fps)
    except (TypeError, ValueError) as e:
        raise InvalidInputError(f"fps must be a number of frames per second; got {fps!r}") from e
    if not (math.isfinite(f) and f > 0):
        raise InvalidInputError(f"fps must be > 0; got {fps!r}")
    return f


def _as_frame(frame: Any) -> Frame:
    if not isinstance(frame, Frame):
        raise InvalidInputError(f"write() takes a crumple.frames.Frame (what sim.frame() returns); got "
                                f"{type(frame).__name__}")
    return frame


class _RunWriter(abc.ABC):
    """What both writers share: frame counting, ``fps`` and the context manager."""

    fps: float
    num_frames: int
    _closed: bool

    def _start(self, fps: Any) -> None:
        self.fps = _fps(fps)
        self.num_frames = 0
        self._closed = False
        self._kinds: dict[str, str] = {}

    def _check(self, frame: Any) -> Frame:
        if self._closed:
            raise InvalidInputError(f"{type(self).__name__} is closed; open a new one to write more frames")
        f = _as_frame(frame)
        # A name keeps its kind for the whole run: the files or prims of one
        # name are read back as one object.
        for name, part in [*f.objects.items(), *f.colliders.items()]:
            old = self._kinds.get(name)
            if old is not None and old != part.kind:
                raise InvalidInputError(f"{name!r} was a {old} in earlier frames and is a {part.kind} now; "
                                        "a name keeps its kind for the whole run")
        for name, part in [*f.objects.items(), *f.colliders.items()]:
            self._kinds[name] = part.kind
        return f

    @abc.abstractmethod
    def write(self, frame: Frame) -> int:
        """Write ``frame``; returns its frame index."""

    @abc.abstractmethod
    def close(self) -> None:
        """Finish the run's files."""

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _ply_attributes(data: Mapping[str, npt.NDArray[np.float64]], reserved: set[str], what: str
                    ) -> tuple[dict[str, npt.NDArray[np.float64]], dict[str, int]]:
    """PLY properties for named data: ``(N,)`` as ``name``, ``(N, 3)`` as
    ``name_x``, ``name_y``, ``name_z`` (scalar properties, which every PLY
    reader understands, unlike list properties); also each name's width."""
    props: dict[str, npt.NDArray[np.float64]] = {}
    dims: dict[str, int] = {}
    for key, a in data.items():
        names = [key] if a.ndim == 1 else [f"{key}_{c}" for c in "xyz"]
        for i, n in enumerate(names):
            if n in reserved or n in props:
                raise InvalidInputError(f"{what} {key!r} would be written as the PLY property {n!r}, which is taken; "
                                        "rename it")
            props[n] = a if a.ndim == 1 else np.ascontiguousarray(a[:, i])
        dims[key] = 1 if a.ndim == 1 else 3
    return props, dims


def _write_ply(path: Path, vertices: npt.NDArray[np.float64], faces: npt.NDArray[np.int64] | None,
               vertex_props: Mapping[str, npt.NDArray[np.float64]],
               face_props: Mapping[str, npt.NDArray[np.float64]]) -> None:
    import trimesh

    # A Trimesh with no faces is how trimesh writes a point cloud that
    # carries vertex properties (its PointCloud drops them).
    f = np.zeros((0, 3), dtype=np.int64) if faces is None else faces
    m = trimesh.Trimesh(vertices=vertices, faces=f, process=False)
    for k, a in vertex_props.items():
        m.vertex_attributes[k] = np.asarray(a, dtype=np.float64)
    for k, a in face_props.items():
        m.face_attributes[k] = np.asarray(a, dtype=np.float64)
    tmp = path.with_name(path.name + ".part")
    m.export(str(tmp), file_type="ply")
    os.replace(tmp, path)


class PlyWriter(_RunWriter):
    """Writes a run as PLY files into the folder ``out_dir``.

    Each :meth:`write` (frame index ``k`` = 0, 1, 2, ... in write order)
    writes ``{name}_{k:05d}.ply`` for every object and collider of the frame:

    - a :class:`~crumple.frames.FrameMesh` as a triangle mesh, its
      ``vertex_data`` and ``face_data`` as vertex and face properties;
    - :class:`~crumple.frames.FramePoints` and
      :class:`~crumple.frames.FrameCurves` as point clouds with a ``radius``
      property (m) and their ``point_data``;
    - a collider as a triangle mesh in world space.

    ``(N, 3)`` data become three properties ``name_x``, ``name_y``,
    ``name_z``. Positions are stored as float32 (PLY's usual vertex type).

    ``manifest.json`` (format ``"crumple-run"``, version 1) describes the run:
    ``fps``, per frame its ``index``, ``time`` (s) and the names it holds,
    per object its ``kind``, ``file`` pattern (``str.format`` with
    ``frame=k``), data widths and, for curves, the ``offsets``. It is
    rewritten after every frame, so a run that crashed can still be opened
    with :func:`open_run`.
    """

    def __init__(self, out_dir: PathLike, *, fps: float = 24.0) -> None:
        self._start(fps)
        self.path = Path(out_dir)
        self.path.mkdir(parents=True, exist_ok=True)
        self._objects: dict[str, dict[str, Any]] = {}
        self._colliders: dict[str, dict[str, Any]] = {}
        self._frames: list[dict[str, Any]] = []

    def _entry(self, table: dict[str, dict[str, Any]], name: str, kind: str) -> dict[str, Any]:
        if name not in table:
            table[name] = {"name": name, "kind": kind, "file": f"{name}_{{frame:05d}}.ply"}
        return table[name]

    def write(self, frame: Frame) -> int:
        """Write ``frame`` as frame ``k`` (the number of frames written before);
        returns ``k``."""
        f = self._check(frame)
        k = self.num_frames
        entry: dict[str, Any] = {"index": k, "time": f.time, "names": f.names}
        for name, part in f.objects.items():
            e = self._entry(self._objects, name, part.kind)
            path = self.path / f"{name}_{k:05d}.ply"
            if isinstance(part, FrameMesh):
                vp, vd = _ply_attributes(part.vertex_data, {"x", "y", "z"}, "vertex_data")
                fp, fd = _ply_attributes(part.face_data, {"vertex_indices"}, "face_data")
                _write_ply(path, part.positions, part.faces, vp, fp)
                e.setdefault("vertex_data", {}).update(vd)
                e.setdefault("face_data", {}).update(fd)
            else:
                pp, pd = _ply_attributes(part.point_data, {"x", "y", "z", "radius"}, "point_data")
                pp["radius"] = part.radii
                _write_ply(path, part.positions, None, pp, {})
                e.setdefault("point_data", {}).update(pd)
                if isinstance(part, FrameCurves):
                    offsets = part.offsets.tolist()
                    if "offsets" not in e:
                        e["offsets"] = offsets
                    elif e["offsets"] != offsets:
                        # Strands were added or cut: this frame says its own.
                        entry.setdefault("offsets", {})[name] = offsets
        for name, col in f.colliders.items():
            self._entry(self._colliders, name, col.kind)
            _write_ply(self.path / f"{name}_{k:05d}.ply", col.world_vertices(), col.faces, {}, {})
        self._frames.append(entry)
        self.num_frames = k + 1
        self._write_manifest()
        return k

    def _write_manifest(self) -> None:
        doc = {
            "format": RUN_FORMAT,
            "version": RUN_VERSION,
            "fps": self.fps,
            "objects": self._objects,
            "colliders": self._colliders,
            "frames": self._frames,
        }
        # Write then rename, so a reader (or a crash) never sees half a manifest.
        tmp = self.path / (MANIFEST + ".part")
        tmp.write_text(json.dumps(doc, indent=1))
        os.replace(tmp, self.path / MANIFEST)

    def close(self) -> None:
        """Finish the run (the manifest is already current; later writes fail)."""
        self._closed = True


def _pxr() -> Any:
    """``(Usd, UsdGeom, Sdf, Vt, Gf)`` from usd-core, imported on first use
    (it is an optional, large dependency without type stubs)."""
    try:
        return tuple(importlib.import_module(f"pxr.{m}") for m in ("Usd", "UsdGeom", "Sdf", "Vt", "Gf"))
    except ImportError as e:
        raise CrumpleError("USD files need usd-core: pip install 'crumple[usd]'") from e


class _Sampled:
    """One USD attribute whose value usually never changes (topology, a
    collider's local points): written once as its default value, and switched
    to time samples only if a later frame differs. (Once an attribute has time
    samples USD ignores its default, so the first value is re-written as a
    sample at the frame it was first seen.)"""

    def __init__(self, attr: Any, convert: Any) -> None:
        self.attr = attr
        self.convert = convert
        self.first: int | None = None
        self.last: npt.NDArray[Any] | None = None
        self.sampled = False

    def set(self, value: npt.NDArray[Any], k: int) -> None:
        if self.last is None:
            self.attr.Set(self.convert(value))
            self.first = k
        elif not np.array_equal(self.last, value):
            if not self.sampled:
                assert self.first is not None
                self.attr.Set(self.convert(self.last), float(self.first))
                self.sampled = True
            self.attr.Set(self.convert(value), float(k))
        elif self.sampled:
            self.attr.Set(self.convert(value), float(k))
        self.last = value


class UsdWriter(_RunWriter):
    """Writes a run into one USD file ``path`` (``.usdc`` / ``.usd`` binary,
    ``.usda`` text), saved on :meth:`close` (or :meth:`save`).

    The stage has ``metersPerUnit = 1``, ``upAxis = Y`` and
    ``timeCodesPerSecond = framesPerSecond = fps``; frame ``k`` (write order)
    is time code ``k``, and the frame's simulated time (s) is the time-sampled
    attribute ``crumple:time`` of the default prim ``/World``. Under
    ``/World``, by name:

    - :class:`~crumple.frames.FrameMesh` → ``UsdGeom.Mesh`` (no subdivision):
      topology written once (time-sampled only if it changes), ``points`` and
      ``extent`` time-sampled, ``vertex_data`` / ``face_data`` as
      ``vertex`` / ``uniform`` primvars, time-sampled;
    - :class:`~crumple.frames.FramePoints` → ``UsdGeom.Points`` with
      time-sampled ``points`` and ``widths`` (= 2 × radii);
    - :class:`~crumple.frames.FrameCurves` → linear ``UsdGeom.BasisCurves``
      with ``curveVertexCounts`` and per-point ``widths``;
    - a collider → an ``Xform`` with a time-sampled ``xformOp:transform``
      holding a ``Mesh`` named ``surface`` in the collider's local frame
      (points written once).

    An object missing from some frames is ``invisible`` at those time codes.
    Each prim's ``customData["crumple:kind"]`` says which kind it is.
    """

    def __init__(self, path: PathLike, *, fps: float = 24.0) -> None:
        Usd, UsdGeom, Sdf, _, _ = self._pxr = _pxr()
        self._start(fps)
        self.path = Path(path)
        if self.path.suffix.lower() not in _USD_EXTS:
            raise InvalidInputError(f"a USD run is written to a .usd, .usdc or .usda file; got {str(path)!r}")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # An anonymous layer exported on save: no clash with a file of the
        # same name already open in USD's layer registry, and no half-written
        # file on disk while the run goes on.
        self._layer = Sdf.Layer.CreateAnonymous("crumple" + self.path.suffix.lower())
        stage = self._stage = Usd.Stage.Open(self._layer)
        UsdGeom.SetStageMetersPerUnit(stage, 1.0)
        UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.y)
        stage.SetTimeCodesPerSecond(self.fps)
        stage.SetFramesPerSecond(self.fps)
        stage.SetStartTimeCode(0)
        stage.SetEndTimeCode(0)
        self._layer.customLayerData = {"crumple": {"format": RUN_FORMAT, "version": RUN_VERSION}}
        world = UsdGeom.Xform.Define(stage, "/World")
        stage.SetDefaultPrim(world.GetPrim())
        self._time = world.GetPrim().CreateAttribute("crumple:time", Sdf.ValueTypeNames.Double)
        self._prims: dict[str, dict[str, Any]] = {}

    # Conversions to the USD value types (float32 points, as DCC tools expect).
    def _vec3f(self, a: npt.NDArray[Any]) -> Any:
        return self._pxr[3].Vec3fArray.FromNumpy(np.ascontiguousarray(a, dtype=np.float32))

    def _floats(self, a: npt.NDArray[Any]) -> Any:
        return self._pxr[3].FloatArray.FromNumpy(np.ascontiguousarray(a, dtype=np.float32))

    def _ints(self, a: npt.NDArray[Any]) -> Any:
        return self._pxr[3].IntArray.FromNumpy(np.ascontiguousarray(a, dtype=np.int32))

    def _extent(self, p: npt.NDArray[np.float64], pad: float = 0.0) -> Any:
        """The bounding box USD wants on every boundable prim (widened by the
        largest radius for points and curves)."""
        lo_hi = np.stack([p.min(axis=0) - pad, p.max(axis=0) + pad]) if len(p) else np.zeros((2, 3))
        return self._vec3f(lo_hi)

    def _define(self, name: str, kind: str, k: int) -> dict[str, Any]:
        """The prim of ``name`` (created on first use) and its bookkeeping."""
        if name in self._prims:
            return self._prims[name]
        _, UsdGeom, _, _, _ = self._pxr
        path = f"/World/{name}"
        rec: dict[str, Any] = {"kind": kind, "visible": True, "primvars": {}, "vis_sampled": k > 0}
        if kind == "mesh":
            g = UsdGeom.Mesh.Define(self._stage, path)
            g.CreateSubdivisionSchemeAttr(UsdGeom.Tokens.none)
            rec["counts"] = _Sampled(g.CreateFaceVertexCountsAttr(), self._ints)
            rec["indices"] = _Sampled(g.CreateFaceVertexIndicesAttr(), self._ints)
        elif kind == "points":
            g = UsdGeom.Points.Define(self._stage, path)
            g.SetWidthsInterpolation(UsdGeom.Tokens.vertex)
        elif kind == "curves":
            g = UsdGeom.BasisCurves.Define(self._stage, path)
            g.CreateTypeAttr(UsdGeom.Tokens.linear)
            g.SetWidthsInterpolation(UsdGeom.Tokens.vertex)
            rec["counts"] = _Sampled(g.CreateCurveVertexCountsAttr(), self._ints)
        else:
            x = UsdGeom.Xform.Define(self._stage, path)
            rec["xform"] = x.AddTransformOp()
            m = UsdGeom.Mesh.Define(self._stage, path + "/surface")
            m.CreateSubdivisionSchemeAttr(UsdGeom.Tokens.none)
            rec["local"] = _Sampled(m.CreatePointsAttr(), self._vec3f)
            rec["extent"] = _Sampled(m.CreateExtentAttr(), self._vec3f)
            rec["counts"] = _Sampled(m.CreateFaceVertexCountsAttr(), self._ints)
            rec["indices"] = _Sampled(m.CreateFaceVertexIndicesAttr(), self._ints)
            g = x
        g.GetPrim().SetCustomDataByKey("crumple:kind", kind)
        rec["geom"] = g
        if k > 0:
            # Absent in the frames written before it appeared.
            g.CreateVisibilityAttr().Set(UsdGeom.Tokens.invisible, 0.0)
            g.GetVisibilityAttr().Set(UsdGeom.Tokens.inherited, float(k))
        self._prims[name] = rec
        return rec

    def _primvars(self, rec: dict[str, Any], data: Mapping[str, npt.NDArray[np.float64]], interpolation: str,
                  k: int) -> None:
        _, UsdGeom, Sdf, _, _ = self._pxr
        api = UsdGeom.PrimvarsAPI(rec["geom"].GetPrim())
        for key, a in data.items():
            pv = rec["primvars"].get(key)
            if pv is None:
                vtype = Sdf.ValueTypeNames.FloatArray if a.ndim == 1 else Sdf.ValueTypeNames.Float3Array
                pv = rec["primvars"][key] = api.CreatePrimvar(key, vtype, interpolation)
            pv.Set(self._floats(a) if a.ndim == 1 else self._vec3f(a), float(k))

    def write(self, frame: Frame) -> int:
        """Add ``frame`` at time code ``k`` (the number of frames written
        before); returns ``k``."""
        _, UsdGeom, _, _, Gf = self._pxr
        f = self._check(frame)
        k = self.num_frames
        t = float(k)
        for name, part in f.objects.items():
            rec = self._define(name, part.kind, k)
            g = rec["geom"]
            g.GetPointsAttr().Set(self._vec3f(part.positions), t)
            pad = 0.0 if isinstance(part, FrameMesh) or not len(part.radii) else float(part.radii.max())
            g.GetExtentAttr().Set(self._extent(part.positions, pad), t)
            if isinstance(part, FrameMesh):
                rec["counts"].set(np.full(len(part.faces), 3, dtype=np.int32), k)
                rec["indices"].set(part.faces.reshape(-1), k)
                self._primvars(rec, part.vertex_data, UsdGeom.Tokens.vertex, k)
                self._primvars(rec, part.face_data, UsdGeom.Tokens.uniform, k)
            else:
                g.GetWidthsAttr().Set(self._floats(2.0 * part.radii), t)
                if isinstance(part, FrameCurves):
                    rec["counts"].set(np.diff(part.offsets).astype(np.int32), k)
                self._primvars(rec, part.point_data, UsdGeom.Tokens.vertex, k)
        for name, col in f.colliders.items():
            rec = self._define(name, col.kind, k)
            rec["local"].set(col.vertices, k)
            rec["extent"].set(np.stack([col.vertices.min(axis=0), col.vertices.max(axis=0)])
                              if len(col.vertices) else np.zeros((2, 3)), k)
            rec["counts"].set(np.full(len(col.faces), 3, dtype=np.int32), k)
            rec["indices"].set(col.faces.reshape(-1), k)
            # USD multiplies row vectors: world = [p, 1] @ M, so M is the
            # transpose of the column-vector matrix.
            rec["xform"].Set(Gf.Matrix4d(col.matrix().T.tolist()), t)
        present = set(f.names)
        for name, rec in self._prims.items():
            if (name in present) != rec["visible"]:
                vis = rec["geom"].GetVisibilityAttr()
                if not rec["vis_sampled"]:
                    # A first sample holds for all earlier times: say it was
                    # visible from frame 0 before hiding it now.
                    vis.Set(UsdGeom.Tokens.inherited, 0.0)
                    rec["vis_sampled"] = True
                rec["visible"] = name in present
                vis.Set(UsdGeom.Tokens.inherited if rec["visible"] else UsdGeom.Tokens.invisible, t)
        self._time.Set(f.time, t)
        self._stage.SetEndTimeCode(t)
        self.num_frames = k + 1
        return k

    def save(self) -> Path:
        """Write the stage as it is now to ``path``; returns the path."""
        tmp = self.path.with_name(self.path.stem + ".part" + self.path.suffix)
        if not self._layer.Export(str(tmp)):
            raise CrumpleError(f"USD could not write {str(self.path)!r}")
        os.replace(tmp, self.path)
        return self.path

    def close(self) -> None:
        """Save the file; later writes fail. Closing twice is harmless."""
        if not self._closed:
            self.save()
            self._closed = True


def writer(format: str, out: PathLike, name: str = "run", *, fps: float = 24.0) -> PlyWriter | UsdWriter:
    """A run writer by format name: ``"ply"`` gives :class:`PlyWriter` into the
    folder ``out``; ``"usd"`` gives :class:`UsdWriter` writing
    ``out/{name}.usdc``."""
    fmt = str(format).lower()
    if fmt == "ply":
        return PlyWriter(out, fps=fps)
    if fmt == "usd":
        return UsdWriter(Path(out) / f"{name}.usdc", fps=fps)
    raise InvalidInputError(f"unknown run format {format!r}; use one of {', '.join(RUN_FORMATS)}")


# --- reading runs back ---------------------------------------------------------


class Run(abc.ABC):
    """A written run read back as frames (see :func:`open_run`).

    Attributes
    ----------
    path : the run folder or USD file.
    fps : frames per second the run was written with.
    num_frames : number of frames.
    names : every object and collider name that appears in the run (objects
        first, in the order they first appear).
    kinds : each name's kind: ``"mesh"``, ``"points"``, ``"curves"`` or
        ``"collider"``.
    """

    path: Path
    fps: float
    num_frames: int
    names: list[str]
    kinds: dict[str, str]

    @property
    def times(self) -> npt.NDArray[np.float64]:
        """``(num_frames,)`` simulated time (s) of every frame."""
        return np.array([self._time(k) for k in range(self.num_frames)], dtype=np.float64)

    def frame(self, k: int) -> Frame:
        """Frame ``k`` (``0 <= k < num_frames``; negative counts from the end,
        ``-1`` is the last)."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise InvalidInputError(f"frame index must be an integer; got {k!r}")
        n = self.num_frames
        i = int(k) + n if k < 0 else int(k)
        if not 0 <= i < n:
            raise InvalidInputError(f"frame {k} does not exist: {str(self.path)!r} has {n} frames (0..{n - 1})")
        return self._frame(i)

    def __len__(self) -> int:
        return self.num_frames

    def __iter__(self) -> Iterator[Frame]:
        for k in range(self.num_frames):
            yield self._frame(k)

    @abc.abstractmethod
    def _frame(self, k: int) -> Frame: ...

    @abc.abstractmethod
    def _time(self, k: int) -> float: ...

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r}, {self.num_frames} frames at {self.fps:g} fps, {self.names})"


def _ply_elements(path: Path) -> dict[str, Any]:
    """The parsed PLY elements of ``path`` (trimesh keeps every property)."""
    import trimesh

    if not path.is_file():
        raise InvalidInputError(f"{str(path)!r} is listed in the run's manifest but does not exist")
    try:
        loaded = trimesh.load(str(path), file_type="ply", process=False)
    except Exception as e:  # trimesh raises many types for bad files
        raise MeshError(f"could not read {str(path)!r}: {e}") from e
    raw = getattr(loaded, "metadata", {}).get("_ply_raw")
    if raw is None:
        raise MeshError(f"{str(path)!r}: this trimesh version does not expose PLY properties; upgrade trimesh")
    return dict(raw)


def _ply_property_data(data: Any, dims: Mapping[str, int]) -> dict[str, npt.NDArray[np.float64]]:
    if isinstance(data, Mapping):
        names = set(data.keys())
    else:
        names = set(getattr(getattr(data, "dtype", None), "names", None) or ())
    out: dict[str, npt.NDArray[np.float64]] = {}
    for key, d in dims.items():
        if d == 3 and all(f"{key}_{c}" in names for c in "xyz"):
            out[key] = np.stack([np.asarray(data[f"{key}_{c}"], dtype=np.float64) for c in "xyz"], axis=1)
        elif d == 1 and key in names:
            out[key] = np.asarray(data[key], dtype=np.float64)
    return out


def _ply_vertices(vertex: Mapping[str, Any]) -> npt.NDArray[np.float64]:
    d = vertex["data"]
    if int(vertex.get("length", 1)) == 0:
        return np.zeros((0, 3))
    return np.stack([np.asarray(d[c], dtype=np.float64) for c in "xyz"], axis=1)


def _ply_faces(elements: Mapping[str, Any]) -> npt.NDArray[np.int64]:
    face = elements.get("face")
    if face is None or int(face.get("length", 0)) == 0:
        return np.zeros((0, 3), dtype=np.int64)
    d = face["data"]
    idx = d["vertex_indices"]
    # trimesh gives a structured (count, indices) pair for binary lists.
    if getattr(idx, "dtype", None) is not None and idx.dtype.names:
        idx = idx["f1"]
    return np.asarray(idx, dtype=np.int64).reshape(-1, 3)


class _PlyRun(Run):
    def __init__(self, folder: Path) -> None:
        self.path = folder
        mpath = folder / MANIFEST
        try:
            doc = json.loads(mpath.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise InvalidInputError(f"could not read {str(mpath)!r}: {e}") from e
        if not isinstance(doc, dict) or doc.get("format") != RUN_FORMAT:
            raise InvalidInputError(f"{str(mpath)!r} is not a crumple run manifest")
        if int(doc.get("version", 0)) > RUN_VERSION:
            raise InvalidInputError(f"{str(mpath)!r} was written by a newer crumple (run version {doc['version']}); "
                                    "upgrade crumple")
        self._doc = doc
        self.fps = float(doc["fps"])
        self._frames: list[dict[str, Any]] = list(doc["frames"])
        self.num_frames = len(self._frames)
        self._objects: dict[str, dict[str, Any]] = dict(doc["objects"])
        self._colliders: dict[str, dict[str, Any]] = dict(doc["colliders"])
        self.names = [*self._objects, *self._colliders]
        self.kinds = {n: e["kind"] for n, e in [*self._objects.items(), *self._colliders.items()]}

    def _time(self, k: int) -> float:
        return float(self._frames[k]["time"])

    def _frame(self, k: int) -> Frame:
        entry = self._frames[k]
        present = set(entry.get("names", self.names))
        objects: dict[str, FrameObject] = {}
        colliders: dict[str, FrameCollider] = {}
        for name, e in self._objects.items():
            if name not in present:
                continue
            el = _ply_elements(self.path / e["file"].format(frame=k))
            pos = _ply_vertices(el["vertex"])
            vdata = el["vertex"]["data"]
            if e["kind"] == "mesh":
                faces = _ply_faces(el)
                fdata = el["face"]["data"] if "face" in el and len(faces) else {}
                objects[name] = FrameMesh(pos, faces, _ply_property_data(vdata, e.get("vertex_data", {})),
                                          _ply_property_data(fdata, e.get("face_data", {})) if len(faces) else {})
            else:
                radii = np.asarray(vdata["radius"], dtype=np.float64) if len(pos) else np.zeros(0)
                pdata = _ply_property_data(vdata, e.get("point_data", {})) if len(pos) else {}
                if e["kind"] == "points":
                    objects[name] = FramePoints(pos, radii, pdata)
                else:
                    offsets = entry.get("offsets", {}).get(name, e.get("offsets"))
                    objects[name] = FrameCurves(pos, np.asarray(offsets, dtype=np.int64), radii, pdata)
        for name, e in self._colliders.items():
            if name not in present:
                continue
            el = _ply_elements(self.path / e["file"].format(frame=k))
            # Stored in world space: the pose is the identity.
            colliders[name] = FrameCollider(_ply_vertices(el["vertex"]), _ply_faces(el))
        return Frame(time=float(entry["time"]), objects=objects, colliders=colliders)


class _UsdRun(Run):
    def __init__(self, path: Path) -> None:
        Usd, UsdGeom, Sdf, _, _ = self._pxr = _pxr()
        self.path = path
        if not path.is_file():
            raise InvalidInputError(f"USD file {str(path)!r} does not exist")
        # Opened as anonymous so a file rewritten since an earlier open is
        # read fresh, not served from USD's layer cache.
        layer = Sdf.Layer.OpenAsAnonymous(str(path))
        if layer is None:
            raise InvalidInputError(f"USD could not open {str(path)!r}")
        info = dict(layer.customLayerData).get("crumple")
        if not isinstance(info, dict) or info.get("format") != RUN_FORMAT:
            raise InvalidInputError(f"{str(path)!r} was not written by crumple.io.UsdWriter (no crumple run data)")
        if int(info.get("version", 0)) > RUN_VERSION:
            raise InvalidInputError(f"{str(path)!r} was written by a newer crumple (run version {info['version']}); "
                                    "upgrade crumple")
        self._layer = layer
        stage = self._stage = Usd.Stage.Open(layer)
        self.fps = float(stage.GetTimeCodesPerSecond())
        world = stage.GetPrimAtPath("/World")
        self._time_attr = world.GetAttribute("crumple:time")
        self._codes = [float(c) for c in self._time_attr.GetTimeSamples()]
        self.num_frames = len(self._codes)
        self._prims: dict[str, tuple[str, Any]] = {}
        for child in world.GetChildren():
            kind = child.GetCustomDataByKey("crumple:kind")
            if kind in ("mesh", "points", "curves", "collider"):
                self._prims[child.GetName()] = (str(kind), child)
        objs = [n for n, (kd, _) in self._prims.items() if kd != "collider"]
        cols = [n for n, (kd, _) in self._prims.items() if kd == "collider"]
        self.names = objs + cols
        self.kinds = {n: kd for n, (kd, _) in self._prims.items()}

    def _time(self, k: int) -> float:
        return float(self._time_attr.Get(self._codes[k]))

    def _primvars(self, prim: Any, t: float) -> tuple[dict[str, npt.NDArray[np.float64]],
                                                       dict[str, npt.NDArray[np.float64]]]:
        _, UsdGeom, _, _, _ = self._pxr
        per_vertex: dict[str, npt.NDArray[np.float64]] = {}
        per_face: dict[str, npt.NDArray[np.float64]] = {}
        for pv in UsdGeom.PrimvarsAPI(prim).GetPrimvars():
            if not pv.HasAuthoredValue():
                continue
            v = pv.Get(t)
            if v is None:
                continue
            a = np.asarray(v, dtype=np.float64)
            interp = pv.GetInterpolation()
            if interp == UsdGeom.Tokens.vertex:
                per_vertex[str(pv.GetPrimvarName())] = a
            elif interp == UsdGeom.Tokens.uniform:
                per_face[str(pv.GetPrimvarName())] = a
        return per_vertex, per_face

    @staticmethod
    def _array(v: Any, shape: tuple[int, ...], dtype: Any) -> npt.NDArray[Any]:
        return np.zeros(shape, dtype=dtype) if v is None or len(v) == 0 else np.asarray(v, dtype=dtype)

    def _frame(self, k: int) -> Frame:
        _, UsdGeom, _, _, _ = self._pxr
        t = self._codes[k]
        objects: dict[str, FrameObject] = {}
        colliders: dict[str, FrameCollider] = {}
        for name, (kind, prim) in self._prims.items():
            if UsdGeom.Imageable(prim).GetVisibilityAttr().Get(t) == UsdGeom.Tokens.invisible:
                continue
            if kind == "collider":
                surf = prim.GetChild("surface")
                mesh = UsdGeom.Mesh(surf)
                v = self._array(mesh.GetPointsAttr().Get(t), (0, 3), np.float64)
                f = self._array(mesh.GetFaceVertexIndicesAttr().Get(t), (0,), np.int64).reshape(-1, 3)
                m = np.array(UsdGeom.Xformable(prim).GetLocalTransformation(t), dtype=np.float64).T
                colliders[name] = FrameCollider(v, f, rotation=m[:3, :3], translation=m[:3, 3])
                continue
            g = UsdGeom.PointBased(prim)
            pos = self._array(g.GetPointsAttr().Get(t), (0, 3), np.float64)
            vdata, fdata = self._primvars(prim, t)
            if kind == "mesh":
                faces = self._array(UsdGeom.Mesh(prim).GetFaceVertexIndicesAttr().Get(t), (0,), np.int64)
                objects[name] = FrameMesh(pos, faces.reshape(-1, 3), vdata, fdata)
                continue
            typed = UsdGeom.Points(prim) if kind == "points" else UsdGeom.BasisCurves(prim)
            widths = self._array(typed.GetWidthsAttr().Get(t), (0,), np.float64)
            radii = 0.5 * widths if len(widths) == len(pos) else np.zeros(len(pos))
            if kind == "points":
                objects[name] = FramePoints(pos, radii, vdata)
            else:
                counts = self._array(typed.GetCurveVertexCountsAttr().Get(t), (0,), np.int64)
                offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
                objects[name] = FrameCurves(pos, offsets, radii, vdata)
        return Frame(time=self._time(k), objects=objects, colliders=colliders)


def open_run(path: PathLike) -> Run:
    """Open a written run: a folder with ``manifest.json`` (from
    :class:`PlyWriter`) or a ``.usd`` / ``.usdc`` / ``.usda`` file (from
    :class:`UsdWriter`). Frames are read when asked for with
    :meth:`Run.frame`."""
    p = Path(path)
    if p.is_dir() and not (p / MANIFEST).is_file():
        # An output folder holding one run (`crumple run SCENE --out DIR`
        # writes DIR/SCENE/ with a manifest, or DIR/SCENE.usdc): open that one.
        found = sorted([q for q in p.iterdir() if q.is_dir() and (q / MANIFEST).is_file()]
                       + [q for q in p.iterdir() if q.is_file() and q.suffix.lower() in _USD_EXTS])
        if len(found) == 1:
            return open_run(found[0])
        if len(found) > 1:
            raise InvalidInputError(f"{str(p)!r} holds several runs; pass one of: "
                                    + ", ".join(str(q) for q in found))
    if p.is_dir():
        if not (p / MANIFEST).is_file():
            raise InvalidInputError(
                f"{str(p)!r} has no {MANIFEST}, so it is not a crumple run. Write runs with crumple.io.PlyWriter "
                "(or `crumple run SCENE --out DIR`), or pass a .usd/.usdc/.usda file written by crumple.io.UsdWriter")
        return _PlyRun(p)
    if p.name == MANIFEST and p.is_file():
        return _PlyRun(p.parent)
    if p.suffix.lower() in _USD_EXTS:
        return _UsdRun(p)
    if not p.exists():
        raise InvalidInputError(f"{str(p)!r} does not exist")
    raise InvalidInputError(f"cannot open {str(p)!r} as a run: pass a run folder (with {MANIFEST}) or a "
                            ".usd/.usdc/.usda file")
