"""Runs as one USD stage (usd-core: topology once, time-sampled points, colliders under time-sampled transforms); and reading them back."""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import CrumpleError, InvalidInputError
from ..frames import Frame, FrameCollider, FrameCurves, FrameMesh, FrameObject, FramePoints
from .mesh import PathLike
from .run import RUN_FORMAT, RUN_VERSION, Run, _check_run_header, _RunWriter, _USD_EXTS


def _pxr() -> Any:
    """``(Usd, UsdGeom, Sdf, Vt, Gf)`` from usd-core, imported on first use
    (it is an optional, large dependency without type stubs)."""
    try:
        return tuple(importlib.import_module(f"pxr.{m}") for m in ("Usd", "UsdGeom", "Sdf", "Vt", "Gf"))
    except ImportError as e:
        raise CrumpleError("USD files need usd-core: pip install 'crumple[usd]'") from e


# The prefix of the frames' solver figures (``Frame.stats``), attributes of /World.
_STATS = "crumple:stats:"


class _Sampled:
    """One USD attribute whose value usually never changes (topology, a
    collider's local points): written once as its default value, and switched
    to time samples only if a later frame differs. (Once an attribute has time
    samples USD ignores its default, so the first value is re-written as a
    sample at the frame it was first seen, and again at the last frame that
    had it: USD interpolates real arrays linearly between samples, so
    without that one the frames in between would be read back blended
    towards the new value, e.g. a wire that rests and then moves.)"""

    def __init__(self, attr: Any, convert: Any) -> None:
        self.attr = attr
        self.convert = convert
        self.first: int | None = None
        self.last_k: int | None = None
        self.last: npt.NDArray[Any] | None = None
        self.sampled = False

    def set(self, value: npt.NDArray[Any], k: int) -> None:
        if self.last is None:
            self.attr.Set(self.convert(value))
            self.first = k
        elif not np.array_equal(self.last, value):
            if not self.sampled:
                assert self.first is not None and self.last_k is not None
                self.attr.Set(self.convert(self.last), float(self.first))
                if self.last_k != self.first:
                    self.attr.Set(self.convert(self.last), float(self.last_k))
                self.sampled = True
            self.attr.Set(self.convert(value), float(k))
        elif self.sampled:
            self.attr.Set(self.convert(value), float(k))
        self.last = value
        self.last_k = k


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
    Each prim's ``customData["crumple:kind"]`` says which kind it is. The
    frames' solver figures (``Frame.stats``) are time-sampled doubles
    ``crumple:stats:<name>`` of ``/World``, sampled at the frames that have
    them.
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
        self._world = world.GetPrim()
        self._time = self._world.CreateAttribute("crumple:time", Sdf.ValueTypeNames.Double)
        # The frames' solver figures: one time-sampled double per name,
        # sampled at the frames that have it.
        self._stats: dict[str, Any] = {}
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
        for key, value in f.stats.items():
            attr = self._stats.get(key)
            if attr is None:
                attr = self._world.CreateAttribute(f"{_STATS}{key}", self._pxr[2].ValueTypeNames.Double)
                self._stats[key] = attr
            attr.Set(value, t)
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
        _check_run_header(info, str(path),
                          f"{str(path)!r} was not written by crumple.io.UsdWriter (no crumple run data)")
        self._layer = layer
        stage = self._stage = Usd.Stage.Open(layer)
        self.fps = float(stage.GetTimeCodesPerSecond())
        world = stage.GetPrimAtPath("/World")
        self._time_attr = world.GetAttribute("crumple:time")
        self._codes = [float(c) for c in self._time_attr.GetTimeSamples()]
        self.num_frames = len(self._codes)
        # Each stats attribute with the time codes it was written at (a
        # frame without a figure has no sample there; USD would otherwise
        # hold the nearest one).
        self._stats = [(a.GetName()[len(_STATS):], a, {float(c) for c in a.GetTimeSamples()})
                       for a in world.GetAttributes() if a.GetName().startswith(_STATS)]
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
        stats = {name: float(a.Get(t)) for name, a, codes in self._stats if t in codes}
        return Frame(time=self._time(k), objects=objects, colliders=colliders, stats=stats)
