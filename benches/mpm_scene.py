"""The elastic-cube scene shared by ``mpm_vs_peers`` and its peer kernels.

A fixed-corotated elastic cube (8 particles per cell, on a lattice of spacing
dx/2) is thrown down at ``v0`` and falls under gravity onto the floor of the
unit box, on a 64³ grid with quadratic B-splines. Every framework is given
the same particles, the same material, the same dt and the same number of
steps, so their particle-steps per second can be compared directly.

Nodes within ``bound`` cells of a wall are slip walls (the outward normal
velocity is removed), as in crumple (``boundary_padding=3``) and in taichi's
mpm examples.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class CubeScene:
    """One size of the elastic-cube benchmark (SI units)."""

    n_side: int
    """Particles per cube edge: the cube holds ``n_side³`` particles."""
    warmup: int
    """Steps before the measured window (JIT compilation, first-touch allocation)."""
    steps: int
    """Steps in the measured window."""
    n_grid: int = 64
    """Cells per axis over the unit box (``n_grid + 1`` nodes per axis)."""
    youngs_modulus: float = 5e4
    poisson_ratio: float = 0.25
    density: float = 1000.0
    dt: float = 2.5e-4
    """Fixed step, s: the P-wave CFL number c·dt/dx is about 0.12."""
    v0: float = -1.0
    """Initial vertical velocity, m/s (as if dropped from 5 cm)."""
    gravity: float = -9.81
    bound: int = 3
    """Slip-wall layer thickness in cells."""
    floor_gap_cells: float = 3.5
    """The cube's lower face starts this many cells above y = 0: half a cell above the wall
    layer, so the particles meet the floor's nodes after about 16 steps."""

    @property
    def dx(self) -> float:
        """Grid spacing, m."""
        return 1.0 / self.n_grid

    @property
    def particles(self) -> int:
        """Number of particles."""
        return self.n_side**3

    @property
    def p_vol(self) -> float:
        """Rest volume per particle, m³: (dx/2)³, crumple's default for 8 per cell."""
        return (0.5 * self.dx) ** 3

    @property
    def p_mass(self) -> float:
        """Mass per particle, kg."""
        return self.density * self.p_vol

    @property
    def mu(self) -> float:
        """Lamé μ, Pa."""
        return self.youngs_modulus / (2.0 * (1.0 + self.poisson_ratio))

    @property
    def lam(self) -> float:
        """Lamé λ, Pa."""
        nu = self.poisson_ratio
        return self.youngs_modulus * nu / ((1.0 + nu) * (1.0 - 2.0 * nu))

    @property
    def total_steps(self) -> int:
        """Warm-up plus measured steps."""
        return self.warmup + self.steps

    def points(self) -> npt.NDArray[np.float32]:
        """The cube's particles, ``(n_side³, 3)`` float32: a lattice of spacing dx/2
        (cell-centred), centred in x and z, its lower face ``floor_gap_cells`` above y = 0."""
        h = 0.5 * self.dx
        side = self.n_side * h
        lo = np.array([0.5 - 0.5 * side, self.floor_gap_cells * self.dx, 0.5 - 0.5 * side])
        if side + lo[1] > 1.0 - (self.bound + 1) * self.dx:
            raise ValueError(f"a cube of {self.n_side}³ particles does not fit in the unit box")
        axis = (np.arange(self.n_side) + 0.5) * h
        g = np.stack(np.meshgrid(axis, axis, axis, indexing="ij"), axis=-1).reshape(-1, 3)
        pts: npt.NDArray[np.float32] = (g + lo).astype(np.float32)
        return pts

    def describe(self) -> dict[str, Any]:
        """The scene's parameters as JSON-ready values."""
        d = asdict(self)
        d.update(particles=self.particles, dx=self.dx, p_vol=self.p_vol, p_mass=self.p_mass,
                 cfl_p_wave=self.dt * float(np.sqrt((self.lam + 2 * self.mu) / self.density)) / self.dx)
        return d


def height_stats(x: npt.NDArray[Any], dx: float) -> dict[str, float]:
    """Final-state summary used to check that frameworks simulate the same thing:
    mean, min and max particle height (m), and the mean height in cells."""
    y = np.asarray(x, dtype=np.float64)[:, 1]
    return {"mean_y": float(y.mean()), "min_y": float(y.min()), "max_y": float(y.max()),
            "mean_y_cells": float(y.mean() / dx)}
