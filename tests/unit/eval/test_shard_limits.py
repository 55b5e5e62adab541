"""`--max-usd` with `--shard` (issue 44, item 11): each shard has its own limit, and the
terminal says what they add up to."""

from __future__ import annotations

from gtog.eval.run._spending import shard_limit_note
from gtog.llm._budget import Limits


def test_a_limit_with_shards_says_it_is_per_shard_and_what_the_total_can_reach() -> None:
    note = shard_limit_note(Limits(usd=0.5), 4)
    assert note == (
        "note: the run's limits are per shard: each of the 4 shards may spend $0.5000 (up to "
        "$2.0000 over 4 shards); for a total, give each shard its share (--max-usd TOTAL/4)"
    )
    assert "1000 calls (up to 3000 over 3 shards)" in str(shard_limit_note(Limits(calls=1000), 3))
    assert shard_limit_note(Limits(usd=0.5), 1) is None  # no shards
    assert shard_limit_note(Limits(), 4) is None  # no limit
