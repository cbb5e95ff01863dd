"""The presets of every material class of every module: ``PRESETS`` (name →
field values), ``preset(name, **overrides)``, ``coerce`` (what ``add_*``
accepts for ``material=``) and the field dict the core reads. One mixin, so
the vocabulary's "presets" row behaves the same everywhere."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, TypeVar

from ._checks import choice
from .errors import InvalidInputError

_M = TypeVar("_M", bound="Presets")


class Presets:
    """Mixin for frozen material dataclasses; each class sets its own ``PRESETS``."""

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {}

    @classmethod
    def preset(cls: type[_M], name: str, **overrides: Any) -> _M:
        """The material ``name`` (a key of ``PRESETS``) with optional field
        overrides; unknown names or fields raise :class:`InvalidInputError`."""
        key = choice(name, f"{cls.__name__} preset", tuple(cls.PRESETS))
        known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]  # subclasses are dataclasses
        bad = set(overrides) - known
        if bad:
            raise InvalidInputError(f"unknown {cls.__name__} fields {sorted(bad)}; known: {sorted(known)}")
        return cls(**{**cls.PRESETS[key], **overrides})

    @classmethod
    def coerce(cls: type[_M], value: Any, default: str, what: str) -> _M:
        """``value`` as a material: None → the ``default`` preset, a string →
        that preset, an instance → itself; anything else raises
        :class:`InvalidInputError` naming ``what`` (e.g. ``"cloth.Material"``)."""
        if value is None:
            return cls.preset(default)
        if isinstance(value, str):
            return cls.preset(value)
        if not isinstance(value, cls):
            raise InvalidInputError(f"material must be a {what} or a preset name; got {type(value).__name__}")
        return value

    def _dict(self) -> dict[str, Any]:
        """Every field by name: the core lists the same names."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]
