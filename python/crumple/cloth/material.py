"""Cloth materials (the paper's Table 2/3 fabrics as presets) and the wrinkle switches."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt

from .. import _core
from .._checks import as_array, choice, finite, flag, in_range, non_negative, positive
from .._presets import Presets
from ..errors import InvalidInputError


Vec3Like = Sequence[float] | npt.ArrayLike


Triple = tuple[float, float, float]


def _triple(x: Any, name: str) -> Triple:
    v = as_array(x, name, np.float64, "3 numbers (uu, vv, uv) or one for all").reshape(-1)
    if v.size == 1:
        v = np.repeat(v, 3)
    if v.size != 3 or not np.all(np.isfinite(v)):
        raise InvalidInputError(f"{name} needs 3 finite values (uu, vv, uv) or one for all; got {x!r}")
    return (float(v[0]), float(v[1]), float(v[2]))


@dataclass(frozen=True)
class Material(Presets):
    """A cloth material: one row of the paper's Table 2/3 plus the tensile
    constants of spec §7.3. Use :meth:`preset` for the paper's fabrics
    (names in :attr:`PRESETS`). Frozen: use ``dataclasses.replace`` or
    ``Material.preset(name, field=value)`` for a variant. Every field is
    range-checked when the material is made.

    Fields (units): ``areal_density`` ρ (kg/m², > 0); membrane ``k11`` warp,
    ``k22`` weft, ``k12`` coupling, ``k33`` shear (N/m, ≥ 0); ``bending``
    K̂_b (J, the tables' "3×K_b", ≥ 0); ``bending_scale`` c_b (0.25
    reproduces the paper's figures, spec A1); ``friction_stiffness`` K̂_f
    (J), ``friction_eps0`` and ``friction_eps_inf`` (rad: stick threshold at
    zero and infinite dwell), ``friction_tau`` (s, > 0); ``yield_angle`` εY0
    (rad), ``hardening`` K_h0 (J), ``hardening_drop`` g (in [0, 1]),
    ``hardening_tau`` τ_p (s, > 0); tensile friction and plasticity per
    strain component (uu, vv, uv): stiffness (N/m), thresholds (Green
    strain), times (s).
    """

    areal_density: float = 0.06
    k11: float = 50.0
    k22: float = 50.0
    k12: float = 0.2
    k33: float = 30.0
    bending: float = 5e-6
    bending_scale: float = 0.25
    friction_stiffness: float = 1e-5
    friction_eps0: float = 0.1
    friction_eps_inf: float = 1.7
    friction_tau: float = 30.0
    yield_angle: float = 1.8
    hardening: float = 5e-6
    hardening_drop: float = 0.99
    hardening_tau: float = 30.0
    tensile_friction_stiffness: Triple = (200.0, 200.0, 5.0)
    tensile_eps0: Triple = (0.005, 0.005, 0.005)
    tensile_eps_inf: Triple = (0.05, 0.05, 0.05)
    tensile_tau_f: Triple = (30.0, 30.0, 30.0)
    tensile_eps_y0: Triple = (0.033, 0.033, 0.033)
    tensile_k_h0: Triple = (10.0, 10.0, 5.0)
    tensile_g: Triple = (0.5, 0.5, 0.5)
    tensile_tau_p: Triple = (30.0, 30.0, 30.0)

    #: The paper's fabrics by name: ``cotton``, ``denim``, ``polyester``
    #: (Table 2) and ``trouser_cotton``, ``trouser_denim``,
    #: ``trouser_polyester`` (Table 3), each a dict of field values.
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {}

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.name.startswith("tensile_"):
                t = _triple(v, f"Material.{f.name}")
                if min(t) < 0:
                    raise InvalidInputError(f"Material.{f.name} must be >= 0; got {v!r}")
                object.__setattr__(self, f.name, t)
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)):
                raise InvalidInputError(f"Material.{f.name} must be a number; got {v!r}")
            non_negative(v, f"Material.{f.name}")
            object.__setattr__(self, f.name, float(v))
        positive(self.areal_density, "Material.areal_density (kg/m²)")
        positive(self.friction_tau, "Material.friction_tau (s)")
        positive(self.hardening_tau, "Material.hardening_tau (s)")
        in_range(self.hardening_drop, "Material.hardening_drop g", 0.0, 1.0)
        if self.friction_eps_inf < self.friction_eps0:
            raise InvalidInputError(
                f"Material.friction_eps_inf ({self.friction_eps_inf}) must be >= friction_eps0 "
                f"({self.friction_eps0}): the stick threshold grows with dwell")
        for name in ("tensile_tau_f", "tensile_tau_p"):
            if min(getattr(self, name)) <= 0:
                raise InvalidInputError(f"Material.{name} must be > 0 s; got {getattr(self, name)}")


Material.PRESETS.update({n: _core.cloth_preset(n) for n in _core.cloth_preset_names()})
# The EOL paper's sheet (spec eol_cloth §8.1: ρ = 0.05 kg/m², E = 50 N/m,
# ν = 0.01, bending 1e-5): the isotropic StVK membrane in this model's
# stiffnesses (plane stress: k11 = k22 = E/(1−ν²), k12 = ν k11, k33 =
# E/(1+ν)) and κ_b = c_b K̂_b = 1e-5 J; the wrinkle constants are cotton's
# (crumple.eol runs them on its hinges only when add_cloth gets wrinkles=).
Material.PRESETS["eol_sheet"] = {
    **Material.PRESETS["cotton"],
    "areal_density": 0.05, "k11": 50.0 / (1 - 0.01**2), "k22": 50.0 / (1 - 0.01**2),
    "k12": 0.01 * 50.0 / (1 - 0.01**2), "k33": 50.0 / 1.01, "bending": 4e-5, "hardening": 4e-5,
}


@dataclass(frozen=True)
class Wrinkles:
    """Which wrinkle elements run (spec §4, §5.2–5.3).

    ``bend_friction``: "dwell" (the paper's stick–slip anchor with dwell),
    "dahl" (the Dahl baseline of E9) or "off"; ``bend_plasticity``: hinge
    hardening plasticity; ``tensile_friction`` / ``tensile_plasticity``: the
    same elements on the three Green-strain components of each triangle;
    ``clock``: plastic-clock semantics ("alg2" default, "eq14", "always"; A2);
    ``friction_slip_tangent``: keep κ_f in the Jacobian of slipping hinges
    (the paper's behaviour, A15); ``warp_faces``: the hold warp also advances
    triangle clocks; ``constant_hardening``: the time-independent hardening
    baseline of E6 (g = 0).
    """

    bend_friction: Literal["dwell", "dahl", "off"] = "dwell"
    bend_plasticity: bool = True
    tensile_friction: bool = False
    tensile_plasticity: bool = False
    clock: Literal["alg2", "eq14", "always"] = "alg2"
    friction_slip_tangent: bool = True
    warp_faces: bool = False
    constant_hardening: bool = False

    def __post_init__(self) -> None:
        choice(self.bend_friction, "bend_friction", ("dwell", "dahl", "off"))
        choice(self.clock, "clock", ("alg2", "eq14", "always"))
        for f in dataclasses.fields(self):
            if f.type in ("bool",):
                flag(getattr(self, f.name), f"Wrinkles.{f.name}")

    @classmethod
    def off(cls) -> Wrinkles:
        """All elements off: plain elastic cloth (the ``M_elastic`` reference)."""
        return cls(bend_friction="off", bend_plasticity=False)

    def _dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
