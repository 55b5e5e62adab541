"""The record of one (question, method): what the runner produces and everything reads."""

from __future__ import annotations

from pydantic import BaseModel, Field

from gtog.eval.judges import Judgement

__all__ = ["Efficiency", "MethodRecord", "RunFingerprint"]


class Efficiency(BaseModel):
    """Cost of one search (judging excluded)."""

    latency: float
    """Seconds the search itself took (from its start, after a concurrency slot was free)."""
    llm_calls: int
    prompt_tokens: int
    output_tokens: int
    llm_calls_categories: dict[str, int] = Field(default_factory=dict)
    prompt_tokens_categories: dict[str, int] = Field(default_factory=dict)
    output_tokens_categories: dict[str, int] = Field(default_factory=dict)
    queue_wait: float | None = None
    """Seconds the pair waited for a concurrency slot before it started (None: not recorded)."""


class MethodRecord(BaseModel):
    """One method's answer to one question, its judgements and its cost."""

    qid: str
    index_key: str
    question: str
    reference: str
    method: str
    response: str | None = None
    error: str | None = None
    """Why the search failed (then there is no response and no judgement)."""
    context_text: str | None = None
    sources: list[dict[str, str]] | None = None
    """Text units the answer's context used (`id`, `text`), when intermediates are kept."""
    judgements: dict[str, Judgement] = Field(default_factory=dict)
    efficiency: Efficiency | None = None

    @property
    def key(self) -> tuple[str, str]:
        """(question id, method): what a checkpoint counts as done."""
        return (self.qid, self.method)

    def scores(self) -> dict[str, int | None]:
        """metric -> 0/1, or None where the judge failed."""
        return {m: j.score for m, j in self.judgements.items()}


class RunFingerprint(BaseModel):
    """What must match for a checkpoint to be resumed."""

    dataset: str
    judge_models: dict[str, str]
    prompts: str
    metrics: list[str]
