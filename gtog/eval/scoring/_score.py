"""Run the configured scorers on one answer: the one place that knows how metrics combine."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from gtog.eval.scoring._base import ITEM_FIELDS, SCORERS, Judgement, Scorer, ScoringSetup

if TYPE_CHECKING:
    from gtog.eval._dataset import QAItem

__all__ = ["build_scorers", "score_answer"]


def build_scorers(metrics: list[str], setup: ScoringSetup) -> list[Scorer]:
    """The scorers of `metrics` (names in `SCORERS`), built with `setup`."""
    return [SCORERS[m](setup) for m in metrics]


def _applies(scorer: Scorer, item: QAItem) -> bool:
    """A scorer that needs an optional field (gold evidence) skips questions without it."""
    return all(getattr(item, f, None) for f in scorer.needs & ITEM_FIELDS)


async def score_answer(
    scorers: list[Scorer], item: QAItem, answer: str, context: str | None
) -> dict[str, Judgement]:
    """Each applicable scorer's judgement of `answer`, concurrently, in `scorers`' order."""
    used = [s for s in scorers if _applies(s, item)]
    verdicts = await asyncio.gather(*(s.score(item, answer, context) for s in used))
    return {s.name: v for s, v in zip(used, verdicts, strict=True)}
