"""Tolerant readers of the results JSON: a value of the wrong type reads as missing.

Summaries from other gtog versions, hand-edited files and partial runs all reach the page;
a malformed field is shown as missing (None, an empty mapping), never a crash and never 0.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["as_dict", "as_int", "as_interval", "as_num", "as_str"]


def as_num(value: Any) -> float | None:
    """A finite number as float; anything else (bool, text, NaN) is None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def as_int(value: Any) -> int | None:
    """A finite number as int, else None."""
    number = as_num(value)
    return int(number) if number is not None else None


def as_interval(value: Any) -> tuple[float, float] | None:
    """`[low, high]` of two finite numbers, else None."""
    if isinstance(value, list | tuple) and len(value) == 2:
        lo, hi = as_num(value[0]), as_num(value[1])
        if lo is not None and hi is not None:
            return (lo, hi)
    return None


def as_dict(value: Any) -> dict[str, Any]:
    """A mapping, or an empty one."""
    return value if isinstance(value, dict) else {}


def as_str(value: Any) -> str | None:
    """Text, or None."""
    return value if isinstance(value, str) else None
