"""The record of one (question, method): what the run produces and everything reads."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

from gtog.eval.scoring._judges import Judgement
from gtog.eval.scoring._pairwise import PairJudgement

__all__ = [
    "COST_FIELDS",
    "AnswerKey",
    "Efficiency",
    "MethodRecord",
    "PairRecord",
    "answer_key",
    "compared_epochs",
    "measured_latency",
    "metric_scales",
    "replayed",
    "unknown_efficiency",
]

AnswerKey = tuple[str, str] | tuple[str, str, int]
"""(question id, method), with the epoch added for a repeat (epoch > 1)."""


def answer_key(qid: str, method: str, epoch: int = 1) -> AnswerKey:
    """What a checkpoint counts as done: `(qid, method)`, `(qid, method, epoch)` for a
    repeat; a record without an epoch (an older checkpoint) is epoch 1."""
    return (qid, method) if epoch == 1 else (qid, method, epoch)


def compared_epochs(a: str, b: str, epochs: int) -> tuple[int, int]:
    """Which answers a head-to-head comparison of a and b reads: (epoch of a, epoch of b).

    Methods are compared on their first answers; with repeats (`epochs` >= 2) the A/A check
    (a == b) compares a method's first answer with its second, two independent answers.
    """
    return (1, 2) if a == b and epochs >= 2 else (1, 1)


def _without_first_epoch(data: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    """A record's JSON without its epoch fields when they are all 1: a run without repeats
    writes what it always did."""
    if all(data.get(name, 1) == 1 for name in fields):
        for name in fields:
            data.pop(name, None)
    return data


class Efficiency(BaseModel):
    """Cost of one search (judging excluded); for a failed search, what it spent before.

    None is unknown, never 0: an answers file or an HTTP method's reply that does not state
    a figure leaves it None (gtog's own searches know every figure but, for a model
    without a price, `cost_usd`).
    """

    latency: float | None
    llm_calls: int | None
    prompt_tokens: int | None
    output_tokens: int | None
    llm_calls_categories: dict[str, int] = Field(default_factory=dict)
    prompt_tokens_categories: dict[str, int] = Field(default_factory=dict)
    output_tokens_categories: dict[str, int] = Field(default_factory=dict)
    cost_usd: float | None = None
    """USD of the chat and embedding calls (LiteLLM's price map); None when a model has no
    known price."""
    embedding_calls: int | None = 0
    """Embedding requests (the query's embedding, ToG's linking); not in `llm_calls`."""
    embedding_tokens: int | None = 0
    queue_wait: float | None = None
    """Seconds the pair waited to start, and its search for call slots (`gtog.llm._slots`);
    not part of `latency`."""
    cached_calls: int | None = 0
    """Chat and embedding calls replayed from the model-call cache (counted in the figures
    above as when first made; nothing was sent)."""
    usd_saved: float | None = 0.0
    """What the replayed calls cost when first made (in `cost_usd` too; not paid again)."""


COST_FIELDS = (
    "latency",
    "llm_calls",
    "prompt_tokens",
    "output_tokens",
    "cost_usd",
    "embedding_calls",
    "embedding_tokens",
)
"""The figures of an `Efficiency` that may be unknown (None): the summary counts who stated
each (`efficiency.<m>.stated`)."""


def replayed(efficiency: Efficiency | None) -> bool:
    """Whether the search replayed a chat call from the model-call cache: its wall time is
    then the cache's speed, not the method's (gtog records no latency for it; a record of an
    older gtog kept the wall time: more calls replayed than embedding requests made)."""
    if efficiency is None or not efficiency.cached_calls:
        return False
    return efficiency.latency is None or efficiency.cached_calls > (efficiency.embedding_calls or 0)


def measured_latency(efficiency: Efficiency | None) -> float | None:
    """The search's latency as the method's speed: None when unknown, or when a chat call
    was replayed from the cache (left out of latency). A replayed query embedding alone
    keeps the latency (it saved a fraction of a second)."""
    if efficiency is None or replayed(efficiency):
        return None
    return efficiency.latency


def unknown_efficiency(latency: float | None = None) -> Efficiency:
    """An `Efficiency` that knows nothing but, perhaps, the latency gtog measured."""
    return Efficiency(
        latency=latency,
        llm_calls=None,
        prompt_tokens=None,
        output_tokens=None,
        cost_usd=None,
        embedding_calls=None,
        embedding_tokens=None,
        cached_calls=None,
        usd_saved=None,
    )


def metric_scales(records: Iterable[MethodRecord]) -> dict[str, tuple[float, float]]:
    """metric -> the scale `(low, high)` its graded judgements state (absent: 0-1)."""
    out: dict[str, tuple[float, float]] = {}
    for r in records:
        for metric, j in r.judgements.items():
            if j.scale and metric not in out:
                out[metric] = (float(j.scale[0]), float(j.scale[1]))
    return out


class MethodRecord(BaseModel):
    """One method's answer to one question, its judgements and its cost."""

    qid: str
    index_key: str
    question: str
    reference: str
    method: str
    evidence: str | None = None
    """The question's gold evidence from the dataset, if it has one."""
    response: str | None = None
    error: str | None = None
    """Why the search failed (then there is no response and no judgement)."""
    error_kind: str | None = None
    """A short class of `error` (`timeout`, `engine`, `internal`, `truncated`, or the
    exception type)."""
    finish_reason: str | None = None
    """`length` when the answer was cut at max_tokens (then, by default, `error` says so)."""
    route: str | None = None
    """The method a router chose for this answer (an HTTP method's `route` path, an
    answers file's `route` field); None when the method is no router or did not say."""
    linked_entities: int | None = None
    """How many of the index's entities the question names (a feature known before
    answering, for the routing analysis's learned rule); None when not counted."""
    context_text: str | None = None
    sources: list[dict[str, str]] | None = None
    """Text units the answer's context used (`id`, `text`); None when none were recorded."""
    judgements: dict[str, Judgement] = Field(default_factory=dict)
    judged_with: str | None = None
    """The judge spec hash the judgements were made with (None: not judged yet)."""
    searched_with: str | None = None
    """The search spec hash (method settings and index) the answer was made with."""
    groups: dict[str, str] = Field(default_factory=dict)
    """The question's values of the dataset's `group_by` fields (absent: not in the item)."""
    efficiency: Efficiency | None = None
    exploration: list[dict[str, Any]] | None = None
    """ToG: what the search explored, one entry per depth (`gtog.tog._trace`); else None."""
    paths: list[dict[str, Any]] | None = None
    """ToG: the evidence paths the answer was made from (`gtog.tog._trace`); else None."""
    epoch: int = Field(default=1, ge=1)
    """Which of the run's `epochs` answers to the question this is (1-based)."""

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = _without_first_epoch(handler(self), ("epoch",))
        for name in ("route", "linked_entities"):  # not known: the record as it always was
            if data.get(name, 0) is None:
                del data[name]
        return data

    @property
    def key(self) -> AnswerKey:
        """(question id, method), and the epoch of a repeat: what a checkpoint counts as
        done (`answer_key`)."""
        return answer_key(self.qid, self.method, self.epoch)

    def scores(self) -> dict[str, int | float | None]:
        """metric -> score, or None where the metric is unscored."""
        return {m: j.score for m, j in self.judgements.items()}

    @property
    def judge_failed(self) -> bool:
        """True when some metric of this record has an error."""
        return any(j.error for j in self.judgements.values())


class PairRecord(BaseModel):
    """A head-to-head comparison: methods a and b's answers to one question, one criterion.

    `a == b` is the A/A check (a method's answer against itself). `answers` is a hash of
    the two answers compared: a comparison whose answers were searched again is stale.
    """

    type: str = "pair"
    qid: str
    index_key: str
    criterion: str
    a: str
    b: str
    judgement: PairJudgement
    judged_with: str | None = None
    """The pairwise judge spec hash the comparison was made with."""
    answers: str = ""
    groups: dict[str, str] = Field(default_factory=dict)
    epoch_a: int = Field(default=1, ge=1)
    """The epoch of a's answer compared (`compared_epochs`)."""
    epoch_b: int = Field(default=1, ge=1)
    """The epoch of b's answer compared: 2 for the A/A check of a run with repeats."""

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _without_first_epoch(handler(self), ("epoch_a", "epoch_b"))

    @property
    def key(self) -> tuple[str, str, str, str]:
        """(question id, criterion, a, b): what a checkpoint counts as done."""
        return (self.qid, self.criterion, self.a, self.b)
