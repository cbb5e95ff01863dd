"""MPM materials (the paper's Table 1 values as presets): cloth, strands, elastic solids, sand and goo."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy.typing as npt

from .._checks import in_range, non_negative, positive
from .._presets import Presets
from ..errors import InvalidInputError


Vec3Like = Sequence[float] | npt.ArrayLike


def _angle(x: float, name: str) -> float:
    return in_range(x, name, 0.0, 90.0, hi_open=True, hint=" degrees")


def _poisson(x: float) -> float:
    return in_range(x, "poisson_ratio", -1.0, 0.5, lo_open=True, hi_open=True)


class _Presets(Presets):
    """The shared presets (``crumple._presets``) and the constitutive fields
    the core's material specs read."""

    def _params(self) -> dict[str, float]:
        """The constitutive fields by name, as the core's material specs list
        them (density, thickness and radius go to the object instead)."""
        return {f.name: float(getattr(self, f.name)) for f in dataclasses.fields(self)  # type: ignore[arg-type]
                if f.name not in ("density", "thickness", "radius")}


@dataclass(frozen=True)
class ClothMaterial(_Presets):
    """A cloth (surface) material (spec §4.3; paper Table 1 columns).

    density: kg/m³ of the shell (mass = density · area · thickness).
    youngs_modulus, poisson_ratio: in-plane elasticity (Pa, -).
    normal_stiffness: k, resistance to compression across the sheet (contact), Pa.
    shear_stiffness: γ, resistance to layers sliding over each other, Pa.
    friction_angle: Φ_F in degrees; Coulomb friction between layers (c_F = tan Φ_F).
    thickness: τ_h in m (default: the grid spacing dx).
    """

    density: float = 2.0
    youngs_modulus: float = 400.0
    poisson_ratio: float = 0.3
    normal_stiffness: float = 800.0
    shear_stiffness: float = 0.0
    friction_angle: float = 0.0
    thickness: float | None = None

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        # paper Table 1 (spec §6.1); ν_d is add_cloth's rpic_damping
        "curtain": dict(density=2, youngs_modulus=400, poisson_ratio=0.3, normal_stiffness=800),
        "cloth_ball": dict(density=2, youngs_modulus=200, poisson_ratio=0.3, normal_stiffness=100),
        "twister": dict(density=2, youngs_modulus=200, poisson_ratio=0.3, normal_stiffness=400),
        "curtain_goo": dict(density=2, youngs_modulus=400, poisson_ratio=0.3, normal_stiffness=40000),
        "cloth_slime": dict(density=2.5, youngs_modulus=15000, poisson_ratio=0.35, normal_stiffness=20000),
        "curtain_sand": dict(density=2, youngs_modulus=400, poisson_ratio=0.3, normal_stiffness=200000),
        "cloth_sand": dict(density=2, youngs_modulus=200, poisson_ratio=0.3, normal_stiffness=40000),
    }

    def __post_init__(self) -> None:
        positive(self.density, "density")
        non_negative(self.youngs_modulus, "youngs_modulus")
        _poisson(self.poisson_ratio)
        non_negative(self.normal_stiffness, "normal_stiffness")
        non_negative(self.shear_stiffness, "shear_stiffness")
        _angle(self.friction_angle, "friction_angle")
        if self.thickness is not None:
            positive(self.thickness, "thickness")


@dataclass(frozen=True)
class CurveMaterial(_Presets):
    """A strand (curve) material for hair, yarn and fibres (spec §4.4, §5.2).

    stretch_stiffness: k, fibre stretching stiffness, Pa.
    shear_stiffness: γ, fibre shear stiffness, Pa.
    youngs_modulus, poisson_ratio: cross-section (contact) stiffness.
    friction_angle: Φ_F in degrees (α for the cross-section, β = tan Φ_F along the fibre).
    radius: cross-section radius r_h in m (default dx / 2).
    """

    density: float = 1.0
    youngs_modulus: float = 60.0
    poisson_ratio: float = 0.3
    stretch_stiffness: float = 2000.0
    shear_stiffness: float = 10.0
    friction_angle: float = 15.0
    radius: float | None = None

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "hair": dict(density=1, youngs_modulus=60, stretch_stiffness=2000, shear_stiffness=10, friction_angle=15),
        "knit_sweater": dict(density=4, youngs_modulus=500, stretch_stiffness=500, shear_stiffness=100,
                             friction_angle=10),
        "knit_poncho": dict(density=4, youngs_modulus=500, stretch_stiffness=2000, shear_stiffness=500,
                            friction_angle=40),
        "knit_curtain": dict(density=4, youngs_modulus=500, stretch_stiffness=500, shear_stiffness=500,
                             friction_angle=20),
        "shag_carpet": dict(density=2, youngs_modulus=400, stretch_stiffness=800, shear_stiffness=0,
                            friction_angle=0),
        "tearing_fiber": dict(density=4, youngs_modulus=100, stretch_stiffness=8000, shear_stiffness=500,
                              friction_angle=40),
    }

    def __post_init__(self) -> None:
        positive(self.density, "density")
        non_negative(self.youngs_modulus, "youngs_modulus")
        _poisson(self.poisson_ratio)
        non_negative(self.stretch_stiffness, "stretch_stiffness")
        non_negative(self.shear_stiffness, "shear_stiffness")
        _angle(self.friction_angle, "friction_angle")
        if self.radius is not None:
            positive(self.radius, "radius")


@dataclass(frozen=True)
class ElasticMaterial(_Presets):
    """A fixed-corotated elastic solid (spec §4.6): density kg/m³, Young's modulus Pa."""

    density: float = 1000.0
    youngs_modulus: float = 1e4
    poisson_ratio: float = 0.3

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "jelly": dict(density=1000.0, youngs_modulus=1e4, poisson_ratio=0.3),
    }

    def __post_init__(self) -> None:
        positive(self.density, "density")
        non_negative(self.youngs_modulus, "youngs_modulus")
        _poisson(self.poisson_ratio)


@dataclass(frozen=True)
class SandMaterial(_Presets):
    """Drucker–Prager sand with hardening (Klár et al. 2016; spec §5.4). The
    defaults are Klár's: friction angle φ = h0 + (h1 q − h3) exp(−h2 q) in degrees."""

    density: float = 2200.0
    youngs_modulus: float = 3.537e5
    poisson_ratio: float = 0.3
    friction_angle: float = 35.0
    hardening_slope: float = 9.0
    hardening_decay: float = 0.2
    initial_deficit: float = 10.0

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        # Klár et al. 2016's sand (the defaults)
        "sand": dict(density=2200.0, youngs_modulus=3.537e5, poisson_ratio=0.3, friction_angle=35.0),
    }

    def __post_init__(self) -> None:
        positive(self.density, "density")
        non_negative(self.youngs_modulus, "youngs_modulus")
        _poisson(self.poisson_ratio)
        _angle(self.friction_angle, "friction_angle")
        non_negative(self.hardening_slope, "hardening_slope")
        non_negative(self.hardening_decay, "hardening_decay")
        non_negative(self.initial_deficit, "initial_deficit")


@dataclass(frozen=True)
class GooMaterial(_Presets):
    """Viscoplastic goo (our choice where the paper is silent, spec §4.6):
    Hencky elasticity with a von Mises yield stress (Pa) and a viscosity (Pa·s)
    that relaxes the stress above it."""

    density: float = 1000.0
    youngs_modulus: float = 2000.0
    poisson_ratio: float = 0.3
    yield_stress: float = 50.0
    viscosity: float = 10.0

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "goo": dict(density=1000.0, youngs_modulus=2000.0, poisson_ratio=0.3, yield_stress=50.0, viscosity=10.0),
    }

    def __post_init__(self) -> None:
        positive(self.density, "density")
        non_negative(self.youngs_modulus, "youngs_modulus")
        _poisson(self.poisson_ratio)
        non_negative(self.yield_stress, "yield_stress")
        non_negative(self.viscosity, "viscosity")
