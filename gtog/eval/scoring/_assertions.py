"""The `assertions` scorer: the share of a question's assertions an answer supports.

A question may carry assertions: short claims a right answer must make (the dataset's
`assertions`; `gtog eval generate` writes 3-6 per question). The judge is asked about each
assertion on its own (`{"score": 0|1, "reason": ...}` through `gtog.llm._replies.ask_json`, like the
other judges), `judge.trials` times; an assertion passes when more than
`judge.assertion_threshold` of the trials that gave a verdict found it supported, and is
unscored when fewer than a majority of its trials gave one. The answer's score is the share
of its assertions that passed; it is unscored (never 0) when any assertion is, and for a
question without assertions. Every assertion's verdict is kept on the judgement, so the
report can show which ones each method missed.
"""

from __future__ import annotations

import asyncio
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from gtog._errors import InputError
from gtog._prompts import placeholders
from gtog.eval.scoring._base import (
    AssertionVerdict,
    CallBound,
    Judgement,
    ScorerBase,
    register_scorer,
)
from gtog.eval.scoring._judges import PromptSet, asked_bound, judge

if TYPE_CHECKING:
    from gtog.eval._dataset import QAItem

__all__ = [
    "ASSERTION_FIELDS",
    "METRIC",
    "AssertionsScorer",
    "assertion_verdict",
    "load_assertion_prompt",
    "missed",
    "share_passed",
]

METRIC = "assertions"
ASSERTION_FIELDS = ("question", "answer", "assertion")
"""The placeholders the assertion prompt takes."""


def load_assertion_prompt(prompts_dir: Path | None = None) -> str:
    """The built-in assertion prompt, or `<prompts_dir>/assertions.txt` where present."""
    custom = prompts_dir / f"{METRIC}.txt" if prompts_dir else None
    if custom is not None and custom.is_file():
        text = custom.read_text(encoding="utf-8")
        missing = [f for f in ASSERTION_FIELDS if f not in placeholders(text)]
        if missing:
            raise InputError(f"{custom}: prompt lacks placeholder {{{missing[0]}}}")
        return text
    builtin = resources.files("gtog.eval.scoring") / "prompts" / f"{METRIC}.txt"
    return builtin.read_text(encoding="utf-8")


def assertion_verdict(
    assertion: str, trials: list[Judgement], threshold: float = 0.5
) -> AssertionVerdict:
    """One assertion's verdict from its trials: passed when the share of the trials with a
    verdict that said 1 is above `threshold`; unscored unless most trials gave a verdict."""
    votes = [t.score if t.score is None else int(t.score) for t in trials]
    said = [v for v in votes if v is not None]
    if 2 * len(said) <= len(votes):
        why = next((t.error for t in trials if t.error), None) or "no verdict"
        failed = len(votes) - len(said)
        prefix = f"{failed} of {len(votes)} trials failed: " if len(votes) > 1 else ""
        return AssertionVerdict(assertion=assertion, votes=votes, error=f"{prefix}{why}"[:500])
    passed = sum(said) / len(said) > threshold
    reason = next((t.reason for t in trials if t.score == int(passed)), None)
    return AssertionVerdict(assertion=assertion, passed=passed, votes=votes, reason=reason)


def share_passed(verdicts: list[AssertionVerdict]) -> tuple[float | None, str | None]:
    """(share of the assertions that passed, None), or (None, why) when any is unscored."""
    if not verdicts:
        return None, "the question has no assertions"
    failed = [v for v in verdicts if v.passed is None]
    if failed:
        return None, (f"{len(failed)} of {len(verdicts)} assertions unscored: {failed[0].error}")[
            :500
        ]
    return sum(1 for v in verdicts if v.passed) / len(verdicts), None


def missed(verdicts: list[AssertionVerdict] | None) -> list[str]:
    """The assertions an answer did not support (judged, not passed)."""
    return [v.assertion for v in verdicts or [] if v.passed is False]


def _reason(verdicts: list[AssertionVerdict]) -> str:
    passed = sum(1 for v in verdicts if v.passed)
    lost = missed(verdicts)
    text = f"{passed} of {len(verdicts)} assertions supported"
    if lost:
        text += "; missed: " + "; ".join(lost)
    return text[:500]


@register_scorer
class AssertionsScorer(ScorerBase):
    """The share of the question's assertions the answer supports (an LLM judge per
    assertion, `trials` times each)."""

    name = METRIC
    needs = frozenset({"question", "answer"})
    uses_llm = True
    binary = False

    async def score(self, item: QAItem, answer: str, context: str | None) -> Judgement:
        """Each assertion judged `setup.trials` times; unscored on any unscored assertion."""
        setup = self.setup
        if not item.assertions:
            return Judgement.unscored("the question has no assertions")
        if setup.model is None:
            return Judgement.unscored("no judge model configured")
        template = setup.assertion_prompt or load_assertion_prompt()
        prompts = PromptSet({METRIC: template})
        trials = max(1, setup.trials)

        async def ask(assertion: str) -> Judgement:
            assert setup.model is not None
            return await judge(
                METRIC,
                setup.model,
                prompts,
                {"question": item.question, "answer": answer, "assertion": assertion},
                temperature=setup.temperature,
                max_tokens=setup.max_tokens,
                json_mode=setup.structured_output,
                timeout=setup.timeout,
            )

        claims = list(item.assertions)
        asked = await asyncio.gather(*(ask(a) for a in claims for _ in range(trials)))
        verdicts = [
            assertion_verdict(a, list(asked[i * trials : (i + 1) * trials]), setup.pass_threshold)
            for i, a in enumerate(claims)
        ]
        costs = [j.cost_usd for j in asked]
        usage = {
            "llm_calls": sum(j.llm_calls for j in asked),
            "prompt_tokens": sum(j.prompt_tokens for j in asked),
            "output_tokens": sum(j.output_tokens for j in asked),
            "cost_usd": None if None in costs else sum(c for c in costs if c is not None),
        }
        score, error = share_passed(verdicts)
        if error is not None:
            return Judgement(error=error, assertions=verdicts, **usage)
        return Judgement(score=score, reason=_reason(verdicts), assertions=verdicts, **usage)

    def bound(self, item: QAItem, answer: int, context: int) -> list[CallBound] | None:
        """One prompt per assertion (the template, the question, the assertion and an
        answer of at most `answer` tokens), `trials` times, on the judge model."""
        setup = self.setup
        if not item.assertions or setup.model is None:
            return []
        model = setup.model
        n = model.count_tokens
        fixed = n(setup.assertion_prompt or load_assertion_prompt()) + n(item.question)
        prompts = [(fixed + n(a) + 1, fixed + n(a) + answer) for a in item.assertions]
        return [asked_bound(model, prompts, setup.trials, setup.max_tokens)]
