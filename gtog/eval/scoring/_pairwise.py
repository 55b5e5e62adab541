"""Head-to-head judging: which of two answers to one question is better, on one criterion.

As in the GraphRAG paper and BenchmarkQED, an LLM judge reads two answers and names the
better one (or a tie). Judges prefer the answer they read first, so every comparison is
asked in both orders (answer a first, then b first), `trials` times each; an order's
verdict is what a majority of its trials said (a split is a tie), and the comparison's
verdict is a win when both orders name the same answer, else a tie. A trial that gives no
usable reply counts against the majority: an order without one is unscored, and so is the
comparison — never a win or a tie.

The prompt is a template (`pairwise.txt`, replaceable in `judge.prompts_dir`) with
`{question}`, `{criterion}`, `{criterion_description}`, `{answer_1}` and `{answer_2}`; the
reply is `{"winner": 1 | 2 | 0, "reason": "..."}`, read with `gtog.llm._replies.ask_json`.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, field_validator

from gtog._errors import InputError, describe_exception
from gtog._prompts import placeholders, render_prompt
from gtog.eval.scoring._base import PairCall, PairJudgement, ScoringSetup, Winner
from gtog.llm._cache import draw
from gtog.llm._errors import fatal_reason
from gtog.llm._replies import ask_json, exact_choice, optional_text
from gtog.llm._usage import metering

if TYPE_CHECKING:
    from gtog.eval._dataset import QAItem

__all__ = [
    "CRITERIA",
    "DEFAULT_CRITERIA",
    "PAIR_FIELDS",
    "PairCall",
    "PairJudgement",
    "PairVerdict",
    "PairwiseJudge",
    "load_pairwise_prompt",
]

CRITERIA: dict[str, str] = {
    "comprehensiveness": (
        "how fully the answer covers what the question asks: every part of it, with the "
        "details that matter"
    ),
    "diversity": (
        "how many different angles, sources and insights the answer brings to the question, "
        "rather than one view repeated"
    ),
    "empowerment": (
        "how well the answer lets the reader understand the topic and reach their own "
        "informed judgement, for instance by explaining why and citing what it rests on"
    ),
    "relevance": (
        "how closely the answer keeps to what the question asks, without wandering into "
        "material the question does not need"
    ),
    "directness": "how plainly and specifically the answer responds to the question",
}
"""Built-in criteria: the GraphRAG paper's four and BenchmarkQED's relevance, in our words."""

DEFAULT_CRITERIA = ("comprehensiveness", "diversity", "empowerment", "relevance")

PAIR_FIELDS = ("question", "criterion", "criterion_description", "answer_1", "answer_2")
"""The placeholders the pairwise prompt must use."""


class PairVerdict(BaseModel):
    """A pairwise judge reply: which answer is better (1 or 2; 0 = neither) and why."""

    winner: Literal[0, 1, 2]
    reason: str | None = None

    @field_validator("winner", mode="before")
    @classmethod
    def _exact(cls, value: Any) -> Any:
        return exact_choice(value, (0, 1, 2), "winner")

    @field_validator("reason", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return optional_text(value)


def load_pairwise_prompt(prompts_dir: Path | None = None) -> str:
    """The built-in pairwise prompt, or `<prompts_dir>/pairwise.txt` where present."""
    custom = prompts_dir / "pairwise.txt" if prompts_dir else None
    if custom is not None and custom.is_file():
        text = custom.read_text(encoding="utf-8")
        missing = [f for f in PAIR_FIELDS if f not in placeholders(text)]
        if missing:
            raise InputError(f"{custom}: prompt lacks placeholder {{{missing[0]}}}")
        return text
    return (resources.files("gtog.eval.scoring") / "prompts" / "pairwise.txt").read_text("utf-8")


_SLOTS: dict[str, dict[int, Winner]] = {
    "ab": {1: "a", 2: "b", 0: "tie"},
    "ba": {1: "b", 2: "a", 0: "tie"},
}


def _order_verdict(calls: list[PairCall], trials: int) -> tuple[Winner | None, str | None]:
    """The verdict a majority of an order's `trials` gave (a split: tie), or why none."""
    said = Counter(c.winner for c in calls if c.winner is not None)
    answered = sum(said.values())
    if 2 * answered <= trials:
        first = next((c.error for c in calls if c.error), "no reply")
        return None, f"{trials - answered} of {trials} trials failed: {first}"
    winner, votes = said.most_common(1)[0]
    return (winner if 2 * votes > trials else "tie"), None


class PairwiseJudge:
    """A `PairScorer`: one criterion, both orders, `trials` calls per order."""

    uses_llm = True

    def __init__(
        self, setup: ScoringSetup, criterion: str, description: str, template: str, trials: int
    ) -> None:
        self.name = criterion
        self.description = description
        self.setup = setup
        self.template = template
        self.trials = max(1, trials)

    async def _ask(self, item: QAItem, order: str, first: str, second: str, n: int) -> PairCall:
        """Call `n` (1-based) of the comparison's `2 x trials`: each a sample of its own
        (an A/A check's two orders send one prompt, and must not replay each other)."""
        with draw("pairwise", n):
            return await self._ask_once(item, order, first, second)

    async def _ask_once(self, item: QAItem, order: str, first: str, second: str) -> PairCall:
        setup = self.setup
        assert setup.model is not None
        prompt = render_prompt(
            self.template,
            {
                "question": item.question,
                "criterion": self.name,
                "criterion_description": self.description,
                "answer_1": first,
                "answer_2": second,
            },
        )
        try:
            reply = await asyncio.wait_for(
                ask_json(
                    setup.model,
                    prompt,
                    PairVerdict,
                    temperature=setup.temperature,
                    max_tokens=setup.max_tokens,
                    structured=setup.structured_output,
                    category=f"pairwise:{self.name}",
                ),
                setup.timeout,
            )
        except TimeoutError:
            return PairCall(order=order, error=f"timed out after {setup.timeout:g} s")  # type: ignore[arg-type]
        except Exception as exc:
            if fatal_reason(exc) is not None:
                raise
            return PairCall(order=order, error=describe_exception(exc))  # type: ignore[arg-type]
        if reply.value is None:
            return PairCall(order=order, error=reply.error)  # type: ignore[arg-type]
        said = reply.value.winner
        return PairCall(
            order=order,  # type: ignore[arg-type]
            said=said,
            winner=_SLOTS[order][said],
            reason=reply.value.reason,
        )

    async def score_pair(self, item: QAItem, answer_a: str, answer_b: str) -> PairJudgement:
        """Ask both orders `trials` times; the verdict, or why there is none."""
        if self.setup.model is None:
            return PairJudgement(error="no judge model configured")
        with metering() as meter:
            t = self.trials
            asks = [self._ask(item, "ab", answer_a, answer_b, n) for n in range(1, t + 1)]
            asks += [self._ask(item, "ba", answer_b, answer_a, t + n) for n in range(1, t + 1)]
            calls = list(await asyncio.gather(*asks))
        tally = meter.tally
        out = PairJudgement(
            calls=calls,
            llm_calls=tally.total_calls,
            prompt_tokens=tally.total_prompt_tokens,
            output_tokens=tally.total_output_tokens,
            cost_usd=tally.cost_usd,
            cached_calls=tally.cached_calls,
            usd_saved=tally.cached_usd,
        )
        verdicts = {}
        for order in ("ab", "ba"):
            verdict, why = _order_verdict([c for c in calls if c.order == order], self.trials)
            if verdict is None:
                out.error = f"order {order}: {why}"[:500]
                return out
            verdicts[order] = verdict
        out.orders_agree = verdicts["ab"] == verdicts["ba"]
        out.winner = verdicts["ab"] if out.orders_agree else "tie"
        return out
