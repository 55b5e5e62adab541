"""graphrag-eval 6.6.1's comparisons of `retrieve_time_series` and `retrieve_data_points`
steps (used by `semantics="graphrag-eval-6"`); pure functions of the steps' args.

Time series match on `mrid` (a string or a sorted list) and `limit` (when the reference
has one; without a reference `mrid`, the actual step must have none and the same
`limit`). Data points match on `external_id`, `granularity` ("1h" == "1hour"),
`aggregates`, `limit` and the `start`/`end` times. A time is absolute (ISO 8601 as
`dateutil.parser.isoparse` reads it; naive means UTC) or relative to the actual step's
`execution_timestamp` ("now", "15m-ago", "2d-ahead"); a relative reference time matches
an absolute actual time within 60 seconds; an absolute reference never matches a
relative actual time. Raises where graphrag-eval 6.6.1 raises (a missing `args` or
`external_id`, a relative time against a text anchor, unsortable values).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = ["data_points_equal", "normalize_granularity", "time_series_equal", "times_equal"]

_RELATIVE = re.compile(r"^((\d+([smhdw])-(ago|ahead))|now)$")
_AMOUNT = re.compile(r"(\d+)([smhdw])-(ago|ahead)")
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
    """A string as a one-item list, other values sorted; empty values unchanged."""
    if not value:
        return value
    if isinstance(value, str):
        return [value]
    return sorted(value)


def normalize_granularity(value: Any) -> Any:
    """ "1h" -> "1hours", "5Minute" -> "5minutes"; other text unchanged."""
    if not value:
        return value
    match = _GRANULARITY.match(value)
    if not match:
        return value
    number, unit = match.groups()
    return f"{number}{_UNITS.get(unit.lower(), unit.lower())}"


def _is_relative(value: Any) -> bool:
    return isinstance(value, str) and bool(_RELATIVE.match(value))


def _resolve(relative: str, anchor: Any) -> Any:
    """The moment `relative` ("now", "<n><unit>-ago|ahead") names from `anchor`."""
    if relative == "now":
        return anchor
    match = _AMOUNT.match(relative)
    assert match is not None  # `relative` matched _RELATIVE
    amount, unit, direction = match.groups()
    delta = timedelta(seconds=int(amount) * _UNIT_SECONDS[unit])
    return anchor + (delta if direction == "ahead" else -delta)


def _absolute(value: Any, anchor: Any) -> Any:
    if isinstance(value, str):
        if _is_relative(value):
            return _resolve(value, anchor)
        from dateutil import parser  # graphrag-eval's ISO reader (imported when needed)

        try:
            return parser.isoparse(value)
        except ValueError:
            pass
    return value


def _utc(value: Any) -> Any:
    if isinstance(value, str):
        return value
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def times_equal(anchor: Any, reference: Any, actual: Any) -> bool:
    """Whether two start/end times agree (see the module doc)."""
    if reference is None and actual is None:
        return True
    if reference is None or actual is None:
        return False
    reference_relative, actual_relative = _is_relative(reference), _is_relative(actual)
    if actual_relative and not reference_relative:
        return False
    moment = _utc(anchor)
    ref = _utc(_absolute(reference, moment))
    act = _utc(_absolute(actual, moment))
    if isinstance(ref, datetime) and isinstance(act, datetime):
        if reference_relative and not actual_relative:
            return abs((ref - act).total_seconds()) <= TOLERANCE_SEC
        return ref == act
    return bool(ref == act)


def time_series_equal(reference: Mapping[str, Any], actual: Mapping[str, Any]) -> bool:
    """`retrieve_time_series` steps agree (see the module doc)."""
    ref, act = reference["args"], actual["args"]
    ref_mrid, ref_limit = ref.get("mrid"), ref.get("limit")
    act_mrid, act_limit = act.get("mrid"), act.get("limit")
    if ref_mrid:
        same = _values(ref_mrid) == _values(act_mrid)
        return bool(same and ref_limit == act_limit) if ref_limit else bool(same)
    return bool(act_mrid is None and ref_limit == act_limit)


def data_points_equal(reference: Mapping[str, Any], actual: Mapping[str, Any], anchor: Any) -> bool:
    """`retrieve_data_points` steps agree (see the module doc)."""
    ref, act = reference["args"], actual["args"]
    ref_ids = _values(ref["external_id"])
    ref_granularity = normalize_granularity(ref.get("granularity"))
    ref_aggregates = _values(ref.get("aggregates"))
    act_ids = _values(act["external_id"])
    act_granularity = normalize_granularity(act.get("granularity"))
    act_aggregates = _values(act.get("aggregates"))
    return bool(
        ref_ids == act_ids
        and ref_granularity == act_granularity
        and ref_aggregates == act_aggregates
        and times_equal(anchor, ref.get("start"), act.get("start"))
        and times_equal(anchor, ref.get("end"), act.get("end"))
        and ref.get("limit") == act.get("limit")
    )
