"""Shards of a run: a deterministic slice of the questions, each with all its work.

A question belongs to shard `sha256(qid) mod n`, with every method's answer and every
head-to-head comparison of those answers, so every machine computes the same slices from
the dataset alone (no coordination), the n shards cover each (question, method) pair once,
and no comparison needs answers from two shards. (gtog before issue 31 split the
(question, method) pairs, so a comparison existed only when both answers fell in one shard:
such shards say `split: pair`, and `gtog eval merge` finds their missing comparisons.)
"""

from __future__ import annotations

import hashlib
import re

from pydantic import BaseModel, ConfigDict, Field

from gtog._errors import InputError

__all__ = ["SPLIT", "Shard", "parse_shard", "shard_of"]

SPLIT = "question"
"""What a shard holds whole (`ShardSpec.split`); older shards say `pair`."""


class Shard(BaseModel):
    """Shard `index` of `count` (0 <= index < count)."""

    model_config = ConfigDict(frozen=True)

    index: int = Field(ge=0)
    count: int = Field(ge=1)

    @property
    def label(self) -> str:
        """`i/n`, as given on the command line."""
        return f"{self.index}/{self.count}"

    @property
    def folder(self) -> str:
        """The shard's output folder name, `shard-i-of-n`."""
        return f"shard-{self.index}-of-{self.count}"

    def holds(self, qid: str) -> bool:
        """Whether this shard runs the question `qid` (all its methods and comparisons)."""
        return shard_of(qid, self.count) == self.index


def shard_of(qid: str, count: int) -> int:
    """The shard (0..count-1) of a question id."""
    digest = hashlib.sha256(qid.encode()).digest()
    return int.from_bytes(digest[:8], "big") % count


def parse_shard(text: str) -> Shard:
    """`"i/n"` -> Shard; InputError unless 0 <= i < n."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not match:
        raise InputError(f"--shard: expected i/n (e.g. 0/4), got {text!r}")
    index, count = int(match[1]), int(match[2])
    if count < 1 or index >= count:
        raise InputError(f"--shard: {text!r}: need 0 <= i < n (shards are numbered from 0)")
    return Shard(index=index, count=count)
