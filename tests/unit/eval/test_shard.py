"""Shards: every question in exactly one shard with all its methods, the same on every machine."""

from __future__ import annotations

import pytest

from gtog._errors import InputError
from gtog.eval.run._shard import Shard, parse_shard, shard_of

QIDS = [f"q-{i}" for i in range(300)]


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7, 16])
def test_shards_cover_every_question_exactly_once(count: int) -> None:
    shards = [Shard(index=i, count=count) for i in range(count)]
    for qid in QIDS:
        owners = [s.index for s in shards if s.holds(qid)]
        assert owners == [shard_of(qid, count)]
    sizes = [sum(s.holds(q) for q in QIDS) for s in shards]
    assert sum(sizes) == len(QIDS)
    assert min(sizes) > 0.5 * len(QIDS) / count  # no shard is starved


def test_shard_is_pinned() -> None:
    # the slice must not change between gtog versions or machines (resumed shards rely on it)
    qids = ("lh-01", "or-03", "lh-02", "q-7")
    assert [shard_of(q, 4) for q in qids] == [1, 1, 2, 0]
    assert [shard_of(q, 7) for q in qids] == [1, 5, 4, 0]
    assert {shard_of(q, 1) for q in QIDS} == {0}


def test_parse_shard() -> None:
    assert parse_shard("0/4") == Shard(index=0, count=4)
    assert parse_shard(" 3 / 4 ").folder == "shard-3-of-4"
    assert parse_shard("3/4").label == "3/4"
    for bad in ("4/4", "1/0", "a/4", "1-4", "-1/4"):
        with pytest.raises(InputError, match="--shard"):
            parse_shard(bad)
