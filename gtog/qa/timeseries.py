"""graphrag-eval 6.x's comparisons of `retrieve_time_series` and `retrieve_data_points`
steps (used by `semantics="graphrag-eval-6"`); pure functions of the steps' args.

Time series match on `mrid` (a string or a list, order ignored) and `limit`; data
points on `external_id`, `granularity` ("1h" == "1hour"), `aggregates`, `limit` and
the `start`/`end` times. A time is absolute (ISO 8601, naive means UTC) or relative to
the actual step's `execution_timestamp` ("now", "15m-ago", "2d-ahead"); a relative
reference time matches an absolute actual time within 60 seconds, an absolute reference
never matches a relative actual time.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = ["data_points_equal", "normalize_granularity", "time_series_equal", "times_equal"]

_RELATIVE = re.compile(r"^(?:(\d+)([smhdw])-(ago|ahead)|now)$")
_GRANULARITY = re.compile(r"(\d+)([a-zA-Z]+)")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_UNITS = {
    "s": "seconds",
    "second": "seconds",
    "m": "minutes",
    "minute": "minutes",
    "h": "hours",
    "hour": "hours",
    "d": "days",
    "day": "days",
    "w": "weeks",
    "week": "weeks",
    "mo": "months",
    "month": "months",
    "q": "quarters",
    "quarter": "quarters",
    "y": "years",
    "year": "years",
}
TOLERANCE_SEC = 60


def _values(value: Any) -> Any:
    """A string as a one-item list, a list sorted; empty values unchanged."""
    if not value:
        return value
    if isinstance(value, str):
        return [value]
    try:
        return sorted(value)
    except TypeError:
        return list(value)


def normalize_granularity(value: Any) -> Any:
    """ "1h" -> "1hours", "5Minute" -> "5minutes"; anything else unchanged."""
    if not value or not isinstance(value, str):
        return value
    match = _GRANULARITY.match(value)
    if not match:
        return value
    number, unit = match.groups()
    return f"{number}{_UNITS.get(unit.lower(), unit.lower())}"


def _is_relative(value: Any) -> bool:
    return isinstance(value, str) and bool(_RELATIVE.match(value))


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _absolute(value: Any, anchor: datetime | None) -> Any:
    """A datetime (UTC) for a relative or ISO time; other values unchanged."""
    if isinstance(value, datetime):
        return _utc(value)
    if not isinstance(value, str):
        return value
    match = _RELATIVE.match(value)
    if match:
        if anchor is None:
            return value
        if value == "now":
            return anchor
        amount, unit, direction = match.groups()
        delta = timedelta(seconds=int(amount) * _UNIT_SECONDS[unit])
        return anchor + delta if direction == "ahead" else anchor - delta
    try:
        return _utc(datetime.fromisoformat(value))
    except ValueError:
        return value


def _anchor(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return _utc(value)
    if isinstance(value, str):
        try:
            return _utc(datetime.fromisoformat(value))
        except ValueError:
            return None
    return None


def times_equal(anchor: Any, reference: Any, actual: Any) -> bool:
    """Whether two start/end times agree (see the module doc); `anchor` resolves
    relative times (a datetime or ISO string; without it they compare as text)."""
    if reference is None or actual is None:
        return reference is None and actual is None
    reference_relative, actual_relative = _is_relative(reference), _is_relative(actual)
    if actual_relative and not reference_relative:
        return False
    moment = _anchor(anchor)
    ref, act = _absolute(reference, moment), _absolute(actual, moment)
    if isinstance(ref, datetime) and isinstance(act, datetime):
        if reference_relative and not actual_relative:
            return abs((ref - act).total_seconds()) <= TOLERANCE_SEC
        return ref == act
    return bool(ref == act)


def _args(step: Mapping[str, Any]) -> Mapping[str, Any]:
    args = step.get("args")
    return args if isinstance(args, Mapping) else {}


def time_series_equal(reference: Mapping[str, Any], actual: Mapping[str, Any]) -> bool:
    """`retrieve_time_series`: same `mrid` values; same `limit` when the reference has
    one (or, without an `mrid`, no actual `mrid` and the same `limit`)."""
    ref, act = _args(reference), _args(actual)
    if ref.get("mrid"):
        same = _values(ref.get("mrid")) == _values(act.get("mrid"))
        return same and (not ref.get("limit") or ref.get("limit") == act.get("limit"))
    return act.get("mrid") is None and ref.get("limit") == act.get("limit")


def data_points_equal(
    reference: Mapping[str, Any], actual: Mapping[str, Any], anchor: Any = None
) -> bool:
    """`retrieve_data_points`: same ids, granularity, aggregates, limit and times."""
    ref, act = _args(reference), _args(actual)
    return (
        _values(ref.get("external_id")) == _values(act.get("external_id"))
        and normalize_granularity(ref.get("granularity"))
        == normalize_granularity(act.get("granularity"))
        and _values(ref.get("aggregates")) == _values(act.get("aggregates"))
        and times_equal(anchor, ref.get("start"), act.get("start"))
        and times_equal(anchor, ref.get("end"), act.get("end"))
        and ref.get("limit") == act.get("limit")
    )
