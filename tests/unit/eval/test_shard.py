"""Shards: every (question, method) pair in exactly one shard, the same on every machine."""

from __future__ import annotations

import pytest

from gtog.errors import InputError
from gtog.eval.run.shard import Shard, parse_shard, shard_of

PAIRS = [(f"q-{i}", m) for i in range(300) for m in ("tog", "local", "basic")]


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7, 16])
def test_shards_cover_every_pair_exactly_once(count: int) -> None:
    shards = [Shard(index=i, count=count) for i in range(count)]
    for qid, method in PAIRS:
        owners = [s.index for s in shards if s.holds(qid, method)]
        assert owners == [shard_of(qid, method, count)]
    sizes = [sum(s.holds(q, m) for q, m in PAIRS) for s in shards]
    assert sum(sizes) == len(PAIRS)
    assert min(sizes) > 0.5 * len(PAIRS) / count  # no shard is starved


def test_shard_is_pinned() -> None:
    # the slice must not change between gtog versions or machines (resumed shards rely on it)
    pairs = [(q, m) for q in ("lh-01", "or-03") for m in ("tog", "local", "basic")]
    assert [shard_of(q, m, 4) for q, m in pairs] == [0, 0, 3, 3, 3, 3]
    assert [shard_of(q, m, 7) for q, m in pairs] == [0, 0, 4, 6, 5, 1]
    assert {shard_of(q, m, 1) for q, m in PAIRS} == {0}


def test_parse_shard() -> None:
    assert parse_shard("0/4") == Shard(index=0, count=4)
    assert parse_shard(" 3 / 4 ").folder == "shard-3-of-4"
    assert parse_shard("3/4").label == "3/4"
    for bad in ("4/4", "1/0", "a/4", "1-4", "-1/4"):
        with pytest.raises(InputError, match="--shard"):
            parse_shard(bad)
