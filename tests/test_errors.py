"""The exception tree."""

from __future__ import annotations

import crumple as cr


def test_tree() -> None:
    """Every error derives from CrumpleError; input errors are ValueErrors."""
    for e in (cr.InvalidInputError, cr.MeshError, cr.BackendUnavailable, cr.SimulationDiverged, cr.SolverError):
        assert issubclass(e, cr.CrumpleError)
    assert issubclass(cr.InvalidInputError, ValueError)
    assert issubclass(cr.MeshError, ValueError)
    assert not issubclass(cr.BackendUnavailable, ValueError)


def test_rust_raises_python_classes() -> None:
    """Errors raised inside Rust are the Python classes of crumple.errors."""
    import numpy as np

    try:
        cr.geometry.TriMesh(np.zeros((3, 3)), [[0, 1, 5]])
    except cr.MeshError as e:
        assert type(e) is cr.MeshError and "vertex 5" in str(e)
    else:
        raise AssertionError("no MeshError")
