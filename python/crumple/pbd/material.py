"""The material of a shape-matching body: cluster shape stiffness, plastic yield,
flow rate, hardening rate, the F_P cap of the no-re-sampling baseline, volume
correction and density (spec shape_matching §4.6, §10.2)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

from .. import _core
from .._checks import flag, in_range, non_negative, positive, real
from .._presets import Presets
from ..errors import InvalidInputError


@dataclass(frozen=True)
class Material(Presets):
    """A shape-matching material. Use :meth:`preset` for the paper's scenes
    (names in :attr:`PRESETS`). Frozen: ``dataclasses.replace`` or
    ``Material.preset(name, field=value)`` for a variant; every field is
    range-checked when the material is made.

    Fields: ``shape_stiffness`` K in [0, 1] (share of the distance to the cluster
    goal removed per solver iteration; 1 is rigid-like); ``yield_strain``
    ε_γ (log strain ≥ 0, ``math.inf`` = purely elastic); ``flow_rate`` ν in
    [0, 1] (share of the strain above yield made permanent per step);
    ``hardening_rate`` κ ≥ 0 (1/s: the yield grows by κ‖ε‖dt with every plastic
    step); ``plastic_cap`` (‖F_P‖_F limit when re-sampling is off, > √3);
    ``volume_correction`` (keep the surface's enclosed volume, spec §8.5);
    ``density`` (kg/m³; each particle weighs density · spacing³).
    """

    shape_stiffness: float = 0.1
    yield_strain: float = 0.1
    flow_rate: float = 0.9
    hardening_rate: float = 0.0
    plastic_cap: float = 2.0
    volume_correction: bool = False
    density: float = 1000.0

    #: The paper's scenes by name (Figs. 1–8): ``armadillo``, ``armadillo_drop``,
    #: ``bunny``, ``cow``, ``taffy``, ``dough``, ``dough_hands``, and ``elastic``.
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {}

    def __post_init__(self) -> None:
        in_range(self.shape_stiffness, "Material.shape_stiffness K", 0.0, 1.0)
        y = real(self.yield_strain, "Material.yield_strain")
        if math.isnan(y) or y < 0:
            raise InvalidInputError(f"Material.yield_strain must be ≥ 0 (log strain; inf = elastic); got {self.yield_strain!r}")
        object.__setattr__(self, "yield_strain", y)
        in_range(self.flow_rate, "Material.flow_rate ν", 0.0, 1.0)
        non_negative(self.hardening_rate, "Material.hardening_rate κ (1/s)")
        cap = real(self.plastic_cap, "Material.plastic_cap")
        if not cap > math.sqrt(3.0) or not math.isfinite(cap):
            raise InvalidInputError(f"Material.plastic_cap must be finite and > √3 (the paper uses 2.0); got {self.plastic_cap!r}")
        flag(self.volume_correction, "Material.volume_correction")
        positive(self.density, "Material.density (kg/m³)")


Material.PRESETS.update({n: _core.pbd_preset(n) for n in _core.pbd_preset_names()})
