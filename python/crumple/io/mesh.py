"""Meshes and point clouds in and out through trimesh (OBJ, PLY, STL, OFF, GLB, ...), and per-frame mesh files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .._checks import as_faces, as_points
from ..errors import InvalidInputError, MeshError
from ..geometry import TriMesh


MESH_FORMATS = ("ply", "obj", "stl", "off", "glb", "gltf")


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
