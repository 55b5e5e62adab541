"""`citation_support` (LLM): does each cited record's text support the sentence citing it?

The pairs (sentence, cited record) of an answer whose record is in its context (a record
not there is `citation_validity`'s business) are judged one per call (prompt
`citation_support.txt`: `{sentence}`, `{record}`; reply `{"score": 0|1, "reason": ...}`,
`judge.trials` times, the majority counts, like the other judges). At most
`citations.max_checked` pairs (8) are judged, chosen deterministically: evenly spread over
the answer's pairs in order. Score = supported / checked; the unsupported pairs are the
judgement's `flagged` list (`Entities 5: <sentence>`). Unscored when no pair can be checked
(no citation found in the context), and when any pair is unscored.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from gtog.eval.scoring._base import CallBound, Judgement, PromptSet, ScorerBase, register_scorer
from gtog.eval.scoring._citations import (
    _PATHS_RE,
    NO_RECORDS,
    TOG_DOES_NOT_CITE,
    check_citations,
    record_texts,
)
from gtog.eval.scoring._claims import judge_model
from gtog.eval.scoring._judges import EXTRA_PROMPTS, _total, judge_trials, load_prompts
from gtog.search._bounds import MESSAGE_OVERHEAD

if TYPE_CHECKING:
    from gtog.eval._dataset import QAItem

__all__ = ["MAX_CHECKED", "METRIC", "CitationSupport", "chosen"]

METRIC = "citation_support"
EXTRA_PROMPTS[METRIC] = {METRIC: ("sentence", "record")}
MAX_CHECKED = 8
"""`citations.max_checked`'s default."""


def chosen(n: int, k: int) -> list[int]:
    """`k` of `n` positions, evenly spread, in order (all when `n <= k`)."""
    if n <= k:
        return list(range(n))
    return sorted({round(i * (n - 1) / (k - 1)) for i in range(k)}) if k > 1 else [0]


@register_scorer
class CitationSupport(ScorerBase):
    """The share of checked (sentence, cited record) pairs whose record supports it."""

    name = METRIC
    needs = frozenset({"answer", "context"})
    uses_llm = True
    binary = False
    flags = "unsupported citations"

    def _template(self) -> str:
        prompts = self.setup.prompts
        if prompts is not None and METRIC in prompts.templates:
            return prompts.templates[METRIC]
        return load_prompts(None, [METRIC]).templates[METRIC]

    def _pairs(self, answer: str, context: str) -> list[tuple[str, str, str]]:
        """(label, sentence, record text) of each checkable pair, in the answer's order."""
        check = check_citations(answer, context)
        texts = record_texts(context)
        out: dict[tuple[str, int], tuple[str, str, str]] = {}
        for c in check.citations:
            span = next(((s, e) for s, e in check.sentence_spans if s <= c.start < e), None)
            text = texts.get((c.table, c.id))
            if span is None or text is None:
                continue
            out.setdefault((c.label, span[0]), (c.label, answer[span[0] : span[1]].strip(), text))
        return list(out.values())

    async def score(self, item: QAItem, answer: str, context: str | None) -> Judgement:
        """Each chosen pair judged `trials` times; unscored when any pair is."""
        setup = self.setup
        model = judge_model(setup)
        if model is None:
            return Judgement.unscored("no judge model configured")
        if context is None:
            return Judgement.unscored(
                "no saved context to find the cited records in (output.save_intermediate was off)"
            )
        if _PATHS_RE.search(context):
            return Judgement.unscored(TOG_DOES_NOT_CITE)
        if not record_texts(context):
            return Judgement.unscored(NO_RECORDS)
        pairs = self._pairs(answer, context)
        if not pairs:
            return Judgement.unscored("no citation of a record in the context to check")
        picked = [pairs[i] for i in chosen(len(pairs), setup.citations_max_checked)]
        prompts = PromptSet({METRIC: self._template()})
        sampling: dict[str, Any] = {
            "trials": setup.trials,
            "temperature": setup.temperature,
            "max_tokens": setup.max_tokens,
            "json_mode": setup.structured_output,
            "timeout": setup.timeout,
        }
        verdicts = await asyncio.gather(
            *(
                judge_trials(METRIC, model, prompts, {"sentence": s, "record": r}, **sampling)
                for _, s, r in picked
            )
        )
        out = _total(list(verdicts))
        failed = [v for v in verdicts if v.score is None]
        if failed:
            out.error = f"{len(failed)} of {len(picked)} pairs unscored: {failed[0].error}"[:500]
            return out
        unsupported = [
            f"{label}: {s}"
            for (label, s, _), v in zip(picked, verdicts, strict=True)
            if not v.score
        ]
        kept = len(picked) - len(unsupported)
        out.score = kept / len(picked)
        out.reason = f"{kept} of {len(picked)} cited records support their sentence"
        if len(pairs) > len(picked):
            out.reason += f" ({len(picked)} of {len(pairs)} pairs checked)"
        out.flagged = unsupported
        return out

    def bound(self, item: QAItem, answer: int, context: int) -> list[CallBound] | None:
        """None to `citations.max_checked` pairs, each `trials` to `2 x trials` calls of
        the prompt with a sentence of at most the answer and a record of at most the
        context; each reply at most `judge.max_tokens`."""
        setup = self.setup
        model = judge_model(setup)
        if model is None:
            return []
        t, k = max(1, setup.trials), setup.citations_max_checked
        prompt = model.count_tokens(self._template()) + MESSAGE_OVERHEAD + answer + context
        most = 2 * t * k
        return [
            CallBound(model.config, (0, most), (0, most * prompt), (0, most * setup.max_tokens))
        ]
