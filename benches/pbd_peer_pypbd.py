"""SM-block (``pbd_scene.py``) on Jan Bender's PositionBasedDynamics through
its Python package ``pyPBD`` 2.2.2: the library's shape-matching
constraints (one per SM-block cluster, each correction divided by the
particle's cluster count, stiffness K), solved by its Gauss–Seidel PBD loop
over graph-coloured constraint groups (OpenMP inside a group;
``OMP_NUM_THREADS`` sets the threads) with 4 position iterations. The
particles come from the library's regular tet model (same id order as the
scene; the tets get no constraint), the ground is a static box with a
signed-distance field, top face at y = 0. No plasticity: the library has
none.

Runs in its own environment (``bench-out/peers/pypbd``, made by
``pbd_table1.py``); prints one ``RESULT`` line.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from typing import Any

import numpy as np

import pbd_scene as S
from _common import time_steps, worker_main


def _ground_box(pbd: Any, model: Any, centre_x: float, centre_z: float) -> None:
    """A static 20 × 1 × 20 m box whose top face is y = 0, from a unit-cube OBJ."""
    corners = [(x, y, z) for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)]
    faces = [(1, 2, 4), (1, 4, 3), (5, 7, 8), (5, 8, 6), (1, 5, 6), (1, 6, 2),
             (3, 4, 8), (3, 8, 7), (1, 3, 7), (1, 7, 5), (2, 6, 8), (2, 8, 4)]
    path = os.path.join(tempfile.mkdtemp(), "cube.obj")
    with open(path, "w") as fh:
        fh.writelines(f"v {a} {b} {c}\n" for a, b, c in corners)
        fh.writelines(f"f {a} {b} {c}\n" for a, b, c in faces)
    vertices, mesh = pbd.OBJLoader.loadObjToMesh(path, [1, 1, 1])
    body = model.addRigidBody(1.0, vertices, mesh, [centre_x, -0.5, centre_z], np.identity(3), [20.0, 1.0, 20.0],
                              testMesh=True, generateCollisionObject=True, resolution=[40, 10, 40])
    body.setMass(0.0)


def measure(size: str) -> dict[str, Any]:
    import pypbd as pbd

    block = S.SIZES[size]
    n = block.n
    x0 = S.lattice(n)
    clusters, count = S.clusters(n)
    sim = pbd.Simulation.getCurrent()
    sim.initDefault()
    model = sim.getModel()
    ts = sim.getTimeStep()
    ts.setValueUInt(pbd.TimeStepController.NUM_SUB_STEPS, 1)
    ts.setValueUInt(pbd.TimeStepController.MAX_ITERATIONS, S.ITERATIONS)
    pbd.TimeManager.getCurrent().setTimeStepSize(S.DT)
    extent = np.full(3, (n - 1) * S.R)
    centre = np.array([0.0, S.Y0, 0.0]) + 0.5 * extent
    tets = model.addRegularTetModel(n, n, n, translation=centre, scale=extent, testMesh=True)
    particles = model.getParticles()
    first = tets.getIndexOffset()

    def positions() -> np.ndarray:
        return np.array([particles.getPosition(first + i) for i in range(n ** 3)])

    if np.abs(positions() - x0).max() > 1e-5:
        raise RuntimeError("pyPBD's particle order differs from the scene's")
    for c in clusters:
        model.addShapeMatchingConstraint(len(c), (c + first).tolist(), count[c].tolist(), S.STIFFNESS)
    _ground_box(pbd, model, float(centre[0]), float(centre[2]))
    timing = time_steps(lambda: ts.step(model), warmup=block.warmup, steps=block.steps)
    threads = os.environ.get("OMP_NUM_THREADS", "all")
    return {"framework": "pyPBD 2.2.2 (PositionBasedDynamics, Gauss-Seidel shape matching)", "size": size,
            "particles": n ** 3, "clusters": len(clusters), "threads": threads,
            "ms_per_step": 1e3 * timing.s_per_step, "median_ms_per_step": 1e3 * timing.median_s_per_step,
            "cpu_utilisation": timing.cpu_utilisation, **S.sanity(x0, positions())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size", choices=sorted(S.SIZES), default="13.8K")
    args = ap.parse_args()
    return worker_main(lambda: measure(args.size))


if __name__ == "__main__":
    sys.exit(main())
