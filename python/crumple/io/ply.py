"""Runs as folders of per-object PLY files per frame plus a ``manifest.json``; and reading them back."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InvalidInputError, MeshError
from ..frames import Frame, FrameCollider, FrameCurves, FrameMesh, FrameObject, FramePoints
from .mesh import PathLike
from .run import MANIFEST, RUN_FORMAT, RUN_VERSION, Run, _check_run_header, _RunWriter


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
    ``fps``, per frame its ``index``, ``time`` (s), the names it holds and
    its ``stats`` (the frame's solver figures, when it has any),
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
        if f.stats:
            # JSON has no NaN or infinity: those are written as null (read back as NaN).
            entry["stats"] = {name: v if math.isfinite(v) else None for name, v in f.stats.items()}
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
        _check_run_header(doc, str(mpath), f"{str(mpath)!r} is not a crumple run manifest")
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
        stats = {name: float("nan") if v is None else v for name, v in (entry.get("stats") or {}).items()}
        return Frame(time=float(entry["time"]), objects=objects, colliders=colliders, stats=stats)
