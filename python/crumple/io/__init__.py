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

from .checkpoint import CHECKPOINT_VERSION, load_checkpoint, save_checkpoint
from .mesh import MESH_FORMATS, FrameWriter, PathLike, load_mesh, save_mesh, save_points
from .open import open_run, writer
from .ply import PlyWriter
from .run import MANIFEST, RUN_FORMAT, RUN_FORMATS, RUN_VERSION, Run
from .usd import UsdWriter

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
