"""`faithfulness_claims` (LLM): the share of an answer's atomic claims its context supports.

As RAGAS and BenchmarkQED measure faithfulness: the judge model splits the answer into
atomic claims (one call, `claims_split` prompt), then checks the claims against the context
the method answered from, `BATCH` claims a call (`claims_check`), each reply a list of one
0/1 per claim in order (a list of another length is unreadable: asked once more, then the
metric is unscored). Score = supported / claims; unscored when the answer makes no claim,
when the context was not saved, or when any call gives no usable reply. The unsupported
claims (the hallucinations) are the judgement's `flagged` list. At most `MAX_CLAIMS`
claims are checked (the rest are named in the reason); one trial, the run's judge model
(with a panel, its first model).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field, create_model, field_validator

from gtog._errors import describe_exception
from gtog._prompts import render_prompt
from gtog.eval.scoring._base import CallBound, Judgement, ScorerBase, register_scorer
from gtog.eval.scoring._judges import EXTRA_PROMPTS, _usage, load_prompts
from gtog.llm._errors import fatal_reason
from gtog.llm._replies import ask_json, exact_choice, optional_text
from gtog.llm._usage import metering
from gtog.search._bounds import MESSAGE_OVERHEAD

if TYPE_CHECKING:
    from gtog.eval._dataset import QAItem
    from gtog.llm._models import ChatModel

__all__ = ["BATCH", "MAX_CLAIMS", "METRIC", "ClaimList", "FaithfulnessClaims", "judge_model"]

METRIC = "faithfulness_claims"
SPLIT, CHECK = "claims_split", "claims_check"
EXTRA_PROMPTS[METRIC] = {SPLIT: ("question", "answer"), CHECK: ("context", "claims")}
BATCH = 8
"""Claims checked per call."""
MAX_CLAIMS = 24
"""Claims checked per answer at most (the estimate's bound: a split and 3 checks, each
asked twice at most)."""
CLAIM_TOKENS = 800
"""Reply tokens a claims call may take at least (a long answer's claim list is longer
than a verdict): `max(judge.max_tokens, CLAIM_TOKENS)`."""


class ClaimList(BaseModel):
    """The split reply: the answer's atomic claims."""

    claims: list[str]


class _Verdicts(BaseModel):
    """The check reply: one 0/1 per claim, in order, and a reason."""

    supported: list[Literal[0, 1]]
    reason: str | None = None

    @field_validator("supported", mode="before")
    @classmethod
    def _exact(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        return [exact_choice(v, (0, 1), "supported") for v in value]

    @field_validator("reason", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return optional_text(value)


def _verdicts(n: int) -> type[_Verdicts]:
    """The check reply for `n` claims: exactly `n` verdicts."""
    return create_model(  # type: ignore[call-overload, no-any-return]
        f"ClaimVerdicts{n}",
        __base__=_Verdicts,
        supported=(Annotated[list[Literal[0, 1]], Field(min_length=n, max_length=n)], ...),
    )


def judge_model(setup: Any) -> ChatModel | None:
    """The model a one-trial LLM metric asks: the judge, or a panel's first model."""
    if setup.model is not None:
        return setup.model
    return next(iter(setup.panel.values()), None) if setup.panel else None


@register_scorer
class FaithfulnessClaims(ScorerBase):
    """The share of the answer's atomic claims that its context supports."""

    name = METRIC
    needs = frozenset({"question", "answer", "context"})
    uses_llm = True
    binary = False
    flags = "unsupported claims"

    def _templates(self) -> dict[str, str]:
        templates = dict(self.setup.prompts.templates) if self.setup.prompts else {}
        if SPLIT not in templates or CHECK not in templates:
            templates.update(load_prompts(None, [METRIC]).templates)
        return templates

    def bound(self, item: QAItem, answer: int, context: int) -> list[CallBound] | None:
        """A split and up to `MAX_CLAIMS / BATCH` checks, each asked twice at most: the
        split's prompt with the question and an answer of at most `answer` tokens, each
        check's with a context of at most `context` tokens and claims of at most a reply;
        each reply at most `max(judge.max_tokens, CLAIM_TOKENS)`."""
        setup = self.setup
        model = judge_model(setup)
        if model is None:
            return []
        n = model.count_tokens
        templates = self._templates()
        reply = max(setup.max_tokens, CLAIM_TOKENS)
        split = n(templates[SPLIT]) + n(item.question) + MESSAGE_OVERHEAD
        check = n(templates[CHECK]) + context + reply + MESSAGE_OVERHEAD
        checks = -(-MAX_CLAIMS // BATCH)
        most = 2 * (1 + checks)
        return [
            CallBound(
                model.config,
                (1, most),
                (split + 1, 2 * (split + answer) + 2 * checks * check),
                (1, most * reply),
            )
        ]

    async def score(self, item: QAItem, answer: str, context: str | None) -> Judgement:
        """Split, then check in batches; unscored on any call without a usable reply."""
        setup = self.setup
        model = judge_model(setup)
        if model is None:
            return Judgement.unscored("no judge model configured")
        if context is None:
            return Judgement.unscored(
                "no saved context to judge (output.save_intermediate was off)"
            )
        templates = self._templates()
        ask: dict[str, Any] = {
            "temperature": setup.temperature,
            "max_tokens": max(setup.max_tokens, CLAIM_TOKENS),
            "structured": setup.structured_output,
            "category": METRIC,
        }
        with metering() as meter:
            try:
                split = await asyncio.wait_for(
                    ask_json(
                        model,
                        render_prompt(
                            templates[SPLIT], {"question": item.question, "answer": answer}
                        ),
                        ClaimList,
                        **ask,
                    ),
                    setup.timeout,
                )
                if split.value is None:
                    return Judgement.unscored(
                        f"no claim list: {split.error}"[:500], **_usage(meter)
                    )
                claims = list(dict.fromkeys(c.strip() for c in split.value.claims if c.strip()))
                if not claims:
                    return Judgement.unscored("the answer makes no claim", **_usage(meter))
                left = claims[MAX_CLAIMS:]
                claims = claims[:MAX_CLAIMS]
                batches = [claims[i : i + BATCH] for i in range(0, len(claims), BATCH)]
                checks = await asyncio.wait_for(
                    asyncio.gather(
                        *(
                            ask_json(
                                model,
                                render_prompt(
                                    templates[CHECK],
                                    {
                                        "context": context,
                                        "claims": "\n".join(
                                            f"{n}. {c}" for n, c in enumerate(batch, 1)
                                        ),
                                    },
                                ),
                                _verdicts(len(batch)),
                                **ask,
                            )
                            for batch in batches
                        )
                    ),
                    setup.timeout,
                )
            except TimeoutError:
                return Judgement.unscored(f"timed out after {setup.timeout:g} s", **_usage(meter))
            except Exception as exc:
                if fatal_reason(exc) is not None:
                    raise
                return Judgement.unscored(describe_exception(exc), **_usage(meter))
        usage = _usage(meter)
        failed = next((c for c in checks if c.value is None), None)
        if failed is not None:
            return Judgement.unscored(f"unusable claim check: {failed.error}"[:500], **usage)
        said = [v for c in checks for v in c.value.supported]  # type: ignore[union-attr]
        unsupported = [c for c, v in zip(claims, said, strict=True) if v == 0]
        kept = len(claims) - len(unsupported)
        reason = f"{kept} of {len(claims)} claims supported by the context"
        if left:
            reason += f" ({len(left)} more claims not checked)"
        return Judgement(score=kept / len(claims), reason=reason, flagged=unsupported, **usage)
