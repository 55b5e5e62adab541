"""graphrag-eval 6.x's time-series step comparisons."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gtog.qa._timeseries import (
    data_points_equal,
    normalize_granularity,
    time_series_equal,
    times_equal,
)

NOON = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def ts(**args: object) -> dict[str, object]:
    return {"name": "retrieve_time_series", "args": args}


def dp(**args: object) -> dict[str, object]:
    return {"name": "retrieve_data_points", "args": {"external_id": "e1", **args}}


def test_time_series_mrids_ignore_order_and_limit_counts_when_given() -> None:
    assert time_series_equal(ts(mrid=["a", "b"]), ts(mrid=["b", "a"]))
    assert time_series_equal(ts(mrid="a"), ts(mrid=["a"]))
    assert not time_series_equal(ts(mrid="a"), ts(mrid="b"))
    assert time_series_equal(ts(mrid="a"), ts(mrid="a", limit=5))  # no reference limit
    assert not time_series_equal(ts(mrid="a", limit=2), ts(mrid="a", limit=5))
    assert time_series_equal(ts(limit=2), ts(limit=2))
    assert not time_series_equal(ts(limit=2), ts(mrid="a", limit=2))


def test_granularity_units() -> None:
    assert normalize_granularity("1h") == normalize_granularity("1hour") == "1hours"
    assert normalize_granularity("5Minute") == "5minutes"
    assert normalize_granularity("hourly") == "hourly"
    assert normalize_granularity(None) is None


def test_times() -> None:
    assert times_equal(NOON, None, None)
    assert not times_equal(NOON, "now", None)
    assert times_equal(NOON, "2h-ago", "2024-05-01T10:00:59Z")  # within 60 s
    assert not times_equal(NOON, "2h-ago", "2024-05-01T10:01:01Z")
    assert times_equal(NOON, "120m-ago", "2h-ago")  # both relative: exact
    assert not times_equal(NOON, "2024-05-01T10:00:00Z", "2h-ago")  # absolute vs relative
    assert times_equal(NOON, "2024-05-01T12:00:00+02:00", "2024-05-01T10:00:00")  # naive = UTC
    assert times_equal(NOON, "20240501T100000Z", "2024-05-01T10:00:00Z")  # dateutil's isoparse


def test_times_raise_where_graphrag_eval_raises() -> None:
    with pytest.raises(TypeError):  # a text anchor cannot be shifted
        times_equal("2024-05-01T12:00:00Z", "1d-ahead", "2024-05-02T12:00:00Z")
    assert times_equal("2024-05-01T12:00:00Z", "now", "now")  # "now" is the anchor itself
    with pytest.raises(AttributeError):  # no anchor
        times_equal(None, "2h-ago", "2024-05-01T10:00:00Z")


def test_data_points() -> None:
    ref = dp(granularity="1h", aggregates=["max", "min"], start="1d-ago", end="now")
    act = dp(granularity="1hour", aggregates=["min", "max"], start="1d-ago", end="now")
    assert data_points_equal(ref, act, NOON)
    assert not data_points_equal(ref, {**act, "args": {**act["args"], "limit": 3}}, NOON)
    assert not data_points_equal(ref, {**act, "args": {**act["args"], "external_id": "e2"}}, NOON)
