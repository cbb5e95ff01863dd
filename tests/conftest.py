"""Shared pytest fixtures."""

from __future__ import annotations

import os

import pytest

import crumple as cr


@pytest.fixture(scope="session")
def gpu_or_skip() -> None:
    """Skip a GPU test with the reason when no adapter exists, unless
    CRUMPLE_REQUIRE_GPU=1 (CI), where a missing adapter is a failure."""
    if cr.backend.gpu_available():
        return
    reason = cr.backend._probe()[1]
    if os.environ.get("CRUMPLE_REQUIRE_GPU") == "1":
        pytest.fail(f"CRUMPLE_REQUIRE_GPU=1 but no GPU adapter: {reason}")
    pytest.skip(f"no GPU adapter: {reason}")


def pytest_report_header(config: pytest.Config) -> str:
    """Say which adapter the GPU tests run on (or why they skip)."""
    info, reason = cr.backend._probe()
    if info is None:
        return f"crumple GPU tests: no adapter ({reason})"
    return f"crumple GPU tests run on: {info['name']} ({info['device_type']}, {info['backend']})"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The fuzzed input tests' case counts per module (issue 17), when they ran."""
    import sys

    fuzz = sys.modules.get("fuzz")
    if fuzz is None or not fuzz.CASES:
        return
    terminalreporter.section("fuzzed inputs: calls per module (refused with a crumple error)")
    for module, n in sorted(fuzz.CASES.items()):
        terminalreporter.write_line(f"{module:12s} {n:7d} ({fuzz.REFUSED[module]} refused)")
    terminalreporter.write_line(f"{'total':12s} {sum(fuzz.CASES.values()):7d}")


# The fuzzed input tests draw the same cases on every machine (a failure on
# CI reproduces here); the case counts are the tests' max_examples.
try:
    from hypothesis import settings as _hsettings

    _hsettings.register_profile("crumple", derandomize=True)
    _hsettings.load_profile("crumple")
except ImportError:  # pragma: no cover - hypothesis is a test dependency
    pass
