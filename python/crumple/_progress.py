"""Progress bars for long runs (tqdm), one style for every solver and the CLI."""

from __future__ import annotations

import sys
from typing import Any

from tqdm.auto import tqdm  # type: ignore[import-untyped]

__all__ = ["progress"]


def progress(total: float, desc: str, *, unit: str = "frame", enabled: bool | None = None, **kw: Any) -> tqdm:
    """A tqdm bar on stderr. ``enabled=None`` shows it when stderr is a terminal
    or when running under the CLI (which passes ``enabled=True``)."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    return tqdm(total=total, desc=desc, unit=unit, disable=not enabled, dynamic_ncols=True, **kw)
