"""What every module's ``Simulation`` shares, written once.

Objects and colliders with unique names, colliders pushed to the core before
each step and read back after it (so keyframes, velocities and callbacks
are followed), ``step``/``advance`` with frames, a progress bar and exact
landing on ``time + duration``, the frame stream (``frame()``), and the
checkpoint frame (settings, colliders, scripted handles and the core's state
arrays in one ``.npz``). A module subclasses :class:`SimulationBase`, makes
its core object, adds its ``add_*`` methods and objects, and says how its
objects are saved and rebuilt (:meth:`SimulationBase._save_objects`,
:meth:`SimulationBase._load_objects`, :meth:`SimulationBase._restore_handle`).
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar, TypeVar

import numpy as np
import numpy.typing as npt

from . import _checkpoint, _handles
from . import io as _io
from ._checks import index, non_negative, positive, positive_int
from ._progress import progress as _progress_bar
from .colliders import Collider, _from_spec, _to_spec
from .errors import CheckpointError, InvalidInputError
from .frames import Frame, check_name, collider_part, unique_name

__all__ = ["SimulationBase"]

_S = TypeVar("_S", bound="SimulationBase")


class SimulationBase(abc.ABC):
    """The shared part of ``crumple.<module>.Simulation`` (see the module docstring)."""

    #: The module's name: the checkpoint's ``solver`` tag and the progress bar's label.
    _solver: ClassVar[str]

    def __init__(self, params: dict[str, Any]) -> None:
        # The keyword options as given (checked): what `load` passes back to the constructor.
        self._params: dict[str, Any] = params
        self._objects: list[Any] = []
        self._colliders: list[Collider] = []
        self._collider_names: list[str] = []
        # Scripted handles as made, for checkpoints (core id order).
        self._handles: list[dict[str, Any]] = []
        # Whether this object took a step (made or loaded): frames carry the
        # last step's figures only then.
        self._stepped = False

    # -- the core -------------------------------------------------------------------

    @abc.abstractmethod
    def _core_or_none(self) -> Any:
        """The core simulation (``crumple._core``), or None while there is none yet."""

    def _core(self) -> Any:
        core = self._core_or_none()
        if core is None:
            raise InvalidInputError(f"the {self._solver} simulation has no objects yet; add one first")
        return core

    # -- objects and colliders ------------------------------------------------------

    @property
    def objects(self) -> tuple[Any, ...]:
        """The objects, in the order added (the handles the ``add_*`` methods returned)."""
        return tuple(self._objects)

    def _unique_name(self, name: str) -> str:
        """``name`` checked and made unique among the objects and colliders."""
        check_name(name, "name")
        return unique_name(name, {o.name for o in self._objects} | set(self._collider_names))

    def add_collider(self, collider: Collider, *, name: str | None = None) -> int:
        """Add a kinematic collider (plane, sphere, box, capsule, cylinder or
        mesh SDF; its motion and later changes to it are followed) and return
        its index. ``name``: its name in frames (default its type). How it
        touches the objects is the module's contact model (see its docs)."""
        if not isinstance(collider, Collider):
            raise InvalidInputError(f"collider must be a crumple.colliders.Collider; got {type(collider).__name__}")
        nm = self._unique_name(name or type(collider).__name__.lower())
        collider.advance_to(self.time)
        core = self._core_or_none()
        if core is not None:
            core.add_collider(collider._c)
        self._colliders.append(collider)
        self._collider_names.append(nm)
        return len(self._colliders) - 1

    @property
    def colliders(self) -> tuple[Collider, ...]:
        """The colliders, in the order added."""
        return tuple(self._colliders)

    def remove_collider(self, index_: int) -> None:
        """Remove collider ``index_`` (later ones shift down)."""
        i = index(index_, "collider index", len(self._colliders))
        core = self._core_or_none()
        if core is not None:
            core.remove_collider(i)
        del self._colliders[i]
        del self._collider_names[i]

    def _push_colliders(self) -> None:
        """Colliders (callbacks evaluated now) into the core before it steps."""
        core = self._core()
        for i, c in enumerate(self._colliders):
            if c._callback is not None:
                c.advance_to(self.time)
            core.set_collider(i, c._c)

    def _pull_colliders(self) -> None:
        """Colliders back from the core, where they moved (or were rolled back)."""
        core = self._core()
        for i, c in enumerate(self._colliders):
            c._c = core.get_collider(i)

    # -- stepping -------------------------------------------------------------------

    def step(self, dt: float | None = None) -> None:
        """One step of ``dt`` s (default: the module's own step: the configured
        ``dt``, or the CFL-limited one). Raises :class:`SimulationDiverged` if
        the state blows up; the simulation is then left as it was before the
        step, colliders included."""
        h = None if dt is None else positive(dt, "dt")
        core = self._core()
        self._push_colliders()
        try:
            core.step(h)
        finally:
            self._pull_colliders()
        self._stepped = True

    def advance(self, duration: float, *, frames: int = 1, progress: bool = False) -> int:
        """Advance by ``duration`` s (≥ 0) and land exactly on ``time +
        duration``, in ``frames`` equal chunks (collider callbacks run once per
        chunk; a progress bar when ``progress``). Ctrl-C stops it at a step
        boundary with the state intact. A diverging step raises
        :class:`SimulationDiverged` with the state rolled back to the start of
        that step. Returns the number of steps taken."""
        d = non_negative(duration, "duration")
        frames = positive_int(frames, "frames")
        core = self._core()
        steps = 0
        t0 = self.time
        with _progress_bar(frames, self._solver, enabled=progress and frames > 1) as bar:
            for k in range(frames):
                self._push_colliders()
                try:
                    # Frame ends from the start time, so rounding does not accumulate.
                    taken = int(core.advance(max(0.0, t0 + d * (k + 1) / frames - self.time)))
                finally:
                    self._pull_colliders()
                steps += taken
                self._stepped = self._stepped or taken > 0
                bar.update(1)
        return steps

    @property
    def time(self) -> float:
        """Simulated time, s."""
        core = self._core_or_none()
        return 0.0 if core is None else float(core.time)

    @property
    def step_count(self) -> int:
        """Steps taken so far."""
        core = self._core_or_none()
        return 0 if core is None else int(core.step_count)

    def frame(self) -> Frame:
        """What a frame shows now: every object as its frame part (meshes,
        points or curves, with per-element attributes) and every collider with
        its pose, and the last step's figures (``stats``: the module's
        ``sim.stats()``, empty before the first step and where a module has
        none). Exporters (PLY, USD), the viewer and the video renderer read
        only this."""
        # Handles' names are plain attributes (a scene may rename them): a
        # name given twice would drop an object from the frame silently.
        names = [o.name for o in self._objects] + list(self._collider_names)
        for n in names:
            check_name(n, "object")
        if len(set(names)) != len(names):
            twice = sorted({n for n in names if names.count(n) > 1})
            raise InvalidInputError(f"objects and colliders share the names {twice}: a frame shows each by its name, "
                                    "so give every object a unique name (handle.name = ...)")
        objects: dict[str, Any] = {o.name: o._frame_part() for o in self._objects}
        colliders = {n: collider_part(c) for n, c in zip(self._collider_names, self._colliders)}
        stats = getattr(self, "stats", None)
        # Only once this object stepped: a loaded checkpoint has steps behind
        # it but no last step's figures.
        figures = stats() if stats is not None and self._stepped else {}
        return Frame(time=self.time, objects=objects, colliders=colliders, stats=figures)

    # -- checkpoints ------------------------------------------------------------------

    @abc.abstractmethod
    def _save_objects(self, arrays: dict[str, npt.NDArray[Any]]) -> dict[str, Any]:
        """Put the objects' arrays into ``arrays`` and return what the meta
        needs to rebuild them (``_load_objects`` reads it back)."""

    @abc.abstractmethod
    def _load_objects(self, arrays: dict[str, npt.NDArray[Any]], meta: dict[str, Any]) -> None:
        """Add the objects saved by ``_save_objects`` (in the same order)."""

    @abc.abstractmethod
    def _restore_handle(self, obj: Any, arrays: dict[str, Any], handle: dict[str, Any]) -> int:
        """Re-create one saved scripted handle of ``obj`` in the core; its core id."""

    def save(self, path: str | Any) -> Any:
        """Write a checkpoint ``.npz``: the settings, the objects as added, the
        colliders and their motions, scripted handles and pins, and every state
        array of the core. :meth:`load` continues bit-identically (collider
        callbacks are not saved: re-attach them). Returns the path written."""
        core = self._core()
        arrays: dict[str, npt.NDArray[Any]] = {}
        meta = self._save_objects(arrays)
        meta.update(solver=self._solver, params=self._params,
                    colliders=[_to_spec(c) for c in self._colliders],
                    collider_names=self._collider_names,
                    handles=_handles.save(self._handles, arrays))
        for k, v in core.state_arrays().items():
            arrays[f"state_{k}"] = np.asarray(v)
        return _io.save_checkpoint(path, arrays, meta)

    @classmethod
    def load(cls: type[_S], path: str | Any) -> _S:
        """Rebuild a simulation from a checkpoint written by :meth:`save`; its
        objects are in :attr:`objects` (in the order added, the same handle
        types the ``add_*`` methods return). Raises :class:`CheckpointError`
        for a missing, corrupt, truncated or foreign file."""
        arrays, meta = _checkpoint.load(path, cls._solver)
        try:
            sim = cls(**meta["params"])
            sim._load_objects(arrays, meta)
            _handles.restore(sim, meta.get("handles", []), arrays, sim._restore_handle)
            # 0-d arrays (time, step, ...) as Python scalars; the core checks every name and shape.
            state = {k[len("state_"):]: (v.item() if np.ndim(v) == 0 else v)
                     for k, v in arrays.items() if k.startswith("state_")}
            # A corrupt file's complex arrays would lose their imaginary part
            # in the core's float conversion, without a word.
            if any(np.iscomplexobj(v) for v in state.values()):
                raise CheckpointError(f"{path}: a state array holds complex values; the file is corrupt")
            sim._core().set_state_arrays(state)
            # The colliders go in last, once the objects are where they were
            # and the clock is the saved time, so each is added at its pose
            # then: a solver that checks objects against a new collider (eol:
            # no cloth vertex inside a box) would otherwise compare the
            # objects' first shape, or a box's first pose, with the other's
            # saved one (eol_moving_box, found by the soak).
            names = meta.get("collider_names") or [None] * len(meta["colliders"])
            for c, n in zip(meta["colliders"], names):
                sim.add_collider(_from_spec(c["spec"], [tuple(m) for m in c["motions"]]), name=n)
        except CheckpointError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, OverflowError, AttributeError) as e:
            raise CheckpointError(
                f"{str(path)!r} is not a usable {cls._solver} checkpoint: {type(e).__name__}: {e}") from e
        for c in sim._colliders:
            c.advance_to(sim.time)
        sim._push_colliders()
        return sim
