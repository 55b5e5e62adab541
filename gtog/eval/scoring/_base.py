"""What a metric is: the `Judgement` it gives, the `Scorer` protocol and the registry.

A scorer reads one question (`QAItem`), one answer and the context the method answered
from, and gives a `Judgement`: a score, or an error (unscored), never both. A pairwise
scorer (`PairScorer`) reads two answers to one question. Scorers are built per index from
a `ScoringSetup` (the judge model, prompts and sampling of the run) by the factories in
`SCORERS`: one entry adds a metric to every run, its JSON and its report.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from graphrag_llm.config import ModelConfig

    from gtog.eval._dataset import QAItem
    from gtog.llm._models import ChatModel, EmbeddingModel

__all__ = [
    "ITEM_FIELDS",
    "METRIC_GROUPS",
    "SCORERS",
    "AssertionVerdict",
    "CallBound",
    "Judgement",
    "PairCall",
    "PairJudgement",
    "PairScorer",
    "PromptSet",
    "Scorer",
    "ScorerBase",
    "ScorerFactory",
    "ScoringSetup",
    "Winner",
    "is_binary_metric",
    "is_metered",
    "metric_scale",
    "register_scorer",
    "uses_llm",
]


class AssertionVerdict(BaseModel):
    """One assertion (a claim a right answer must make) judged against one answer."""

    assertion: str
    passed: bool | None = None
    """Supported by the answer in more than the pass threshold's share of the trials that
    gave a verdict; None: unscored (`error` says why)."""
    votes: list[int | None] = Field(default_factory=list)
    """Each trial's verdict (1 supported, 0 not, None: the trial failed)."""
    reason: str | None = None
    error: str | None = None


class Judgement(BaseModel):
    """One metric's verdict on one answer: a score, or an error (unscored), never both."""

    score: int | float | None = None
    """0/1 from an LLM judge; a fraction in [0, 1] from a lexical metric."""
    reason: str | None = None
    error: str | None = None
    llm_calls: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    """USD of the judge's calls (LiteLLM's price map); None when the model has no price."""
    cached_calls: int = 0
    """Calls replayed from the model-call cache (also in `llm_calls`; nothing was sent)."""
    usd_saved: float = 0.0
    """What the replayed calls cost when first made (in `cost_usd` too)."""
    votes: list[int | None] | None = None
    """Each trial's score when the judge was asked more than once (None: that trial failed)."""
    assertions: list[AssertionVerdict] | None = Field(
        default=None, exclude_if=lambda value: value is None
    )
    """The `assertions` scorer's verdict on each assertion (absent for other metrics)."""
    scale: list[float] | None = Field(default=None, exclude_if=lambda value: value is None)
    """A graded judge's scale `[low, high]` (the score is on it, not 0/1); absent for
    other metrics."""
    flagged: list[str] | None = Field(default=None, exclude_if=lambda value: value is None)
    """What the metric found wrong in the answer, listed (absent for metrics that list
    nothing): `citation_validity`'s records not in the context, `path_validity`'s invented
    triples, `faithfulness_claims`' unsupported claims, `citation_support`'s unsupported
    sentence-record pairs."""
    panel: dict[str, Judgement] | None = Field(default=None, exclude_if=lambda value: value is None)
    """With a judge panel (`judge.models`): each model's own judgement, by model id; the
    score above is their strict majority (absent without a panel)."""

    @classmethod
    def unscored(cls, why: str, **usage: Any) -> Judgement:
        """No score, and why (the error counted for this metric)."""
        return cls(error=why, **usage)


ITEM_FIELDS = frozenset({"evidence", "reference"})
"""Optional fields of a question: a scorer that needs one skips questions without it (gold
evidence; a reference answer, which an assertions-only question, BenchmarkQED's, lacks)."""


@runtime_checkable
class Scorer(Protocol):
    """A metric of one answer: `await score(item, answer, context) -> Judgement`."""

    name: str
    needs: frozenset[str]
    """What it reads: `question`, `reference`, `answer`, `context`, `evidence`."""
    uses_llm: bool
    binary: bool
    """Scores are 0/1 (paired tests: McNemar), else fractions (a permutation test). A mean's
    interval follows the scores themselves: Wilson for 0/1 scores, else the skewness-corrected
    t (`gtog.eval.results._statistics.mean_interval`)."""

    async def score(self, item: QAItem, answer: str, context: str | None) -> Judgement:
        """The judgement of `answer` (and `context`, None when not saved) to `item`."""
        ...


@runtime_checkable
class PairScorer(Protocol):
    """A metric of two answers to one question (head-to-head judging, one criterion)."""

    name: str
    uses_llm: bool

    async def score_pair(self, item: QAItem, answer_a: str, answer_b: str) -> PairJudgement:
        """Which of the two answers is better (a, b or a tie), and why; or why unscored."""
        ...


@dataclass(frozen=True)
class ScoringSetup:
    """What a scorer may use, per index: the judge model, prompts and sampling."""

    model: ChatModel | None = None
    prompts: PromptSet | None = None
    temperature: float = 0.0
    max_tokens: int = 300
    structured_output: bool = True
    trials: int = 1
    timeout: float | None = None
    embedder: EmbeddingModel | None = None
    """The index's embedding model (for `answer_similarity`; None when no metric needs it)."""
    panel: dict[str, ChatModel] = field(default_factory=dict)
    """A judge panel (model id -> model): each LLM judge asks every model and takes their
    strict majority (empty: `model` alone)."""
    assertion_prompt: str | None = None
    """The `assertions` scorer's prompt template (None: the built-in one)."""
    pass_threshold: float = 0.5
    """An assertion passes when more than this share of its trials find it supported."""
    citations_max_checked: int = 8
    """`citations.max_checked`: (sentence, record) pairs `citation_support` judges at most."""
    project: Any = None
    """The index (`gtog._project.Project`) the answers come from: `path_validity` and
    `evidence_on_path` read its graph (None: not given; those metrics are unscored)."""
    scales: dict[str, tuple[int, int]] = field(default_factory=dict)
    """`judge.scales`: metric -> (low, high) of a graded judge (its prompt asks for an
    integer in it)."""


@dataclass(frozen=True)
class CallBound:
    """Calls one scoring of one answer makes on one model, least and most (the bounds
    estimate, `gtog eval --estimate`): each figure a (low, high) pair over all the calls."""

    model: ModelConfig
    calls: tuple[float, float]
    prompt: tuple[float, float]
    output: tuple[float, float] = (0.0, 0.0)
    embedding: bool = False
    """Embedding requests (priced by input tokens only)."""


class ScorerBase:
    """A convenient base for scorers: class attributes describe it, `setup` is kept."""

    name: str = ""
    needs: frozenset[str] = frozenset({"answer"})
    uses_llm: bool = False
    binary: bool = False
    metered: bool = False
    """Its calls cost tokens or money (LLM judges, embeddings): counted in `judge_usage`."""
    flags: str | None = None
    """What its `flagged` lists are, for the report and the CSV (`invalid citations`);
    None: it lists nothing."""
    scale: tuple[float, float] = (0.0, 1.0)
    """The range of its scores (a graded judge: `(0, 10)`); the verdict line and the
    charts divide by it to show 0-1."""

    def __init__(self, setup: ScoringSetup) -> None:
        self.setup = setup

    async def score(self, item: QAItem, answer: str, context: str | None) -> Judgement:
        """The judgement of `answer` to `item`."""
        raise NotImplementedError

    def bound(self, item: QAItem, answer: int, context: int) -> list[CallBound] | None:
        """What scoring an answer to `item` of at most `answer` tokens (from a context of at
        most `context` tokens) can cost, per model (the bounds estimate). A metric that
        calls no model costs nothing; one that does says how much, else None: unknown (the
        estimate says so rather than understate it)."""
        return None if (self.uses_llm or self.metered) else []


ScorerFactory = type[ScorerBase]

METRIC_GROUPS: dict[str, tuple[str, ...]] = {}
"""A name a config may list for several scores at once (`citations`: its two scores)."""

SCORERS: dict[str, ScorerFactory] = {}
"""Metric name -> scorer class (built per index with its `ScoringSetup`).

One entry adds a metric to every run (see `register_scorer`); the class attributes
(`needs`, `uses_llm`, `binary`) are read without building it.
"""


def register_scorer(factory: ScorerFactory) -> ScorerFactory:
    """Add (or replace) the metric `factory.name`; usable as a class decorator."""
    SCORERS[factory.name] = factory
    return factory


def is_binary_metric(metric: str) -> bool:
    """Whether `metric` gives 0/1 scores (an unknown metric, from an older log: yes)."""
    factory = SCORERS.get(metric)
    return True if factory is None else bool(factory.binary)


def metric_scale(metric: str, scales: dict[str, Any] | None = None) -> tuple[float, float]:
    """The lowest and highest score of `metric`: a run's `judge.scales` entry (`scales`,
    a graded judge), else its scorer's `scale` (an unknown metric: 0 to 1)."""
    given = (scales or {}).get(metric)
    if given:
        return float(given[0]), float(given[1])
    factory = SCORERS.get(metric)
    lo, hi = factory.scale if factory is not None else (0.0, 1.0)
    return float(lo), float(hi)


def is_metered(metric: str) -> bool:
    """Whether `metric`'s calls are counted as judging cost (an LLM judge or an embedding
    model; an unknown metric, from an older log: yes, as an older judge)."""
    factory = SCORERS.get(metric)
    return True if factory is None else bool(factory.uses_llm or factory.metered)


def uses_llm(metric: str) -> bool:
    """Whether `metric` is scored by an LLM judge (an unknown one: no)."""
    factory = SCORERS.get(metric)
    return bool(factory is not None and factory.uses_llm)


Winner = Literal["a", "b", "tie"]


class PairCall(BaseModel):
    """One judge call: the order asked, what the judge said, and for whom that was."""

    order: Literal["ab", "ba"]
    """`ab`: answer a shown first; `ba`: answer b shown first."""
    said: int | None = None
    """The judge's `winner` (1, 2 or 0); None when the call gave no usable reply."""
    winner: Winner | None = None
    reason: str | None = None
    error: str | None = None


class PairJudgement(BaseModel):
    """A comparison of two answers on one criterion: a verdict, or an error (unscored)."""

    winner: Winner | None = None
    error: str | None = None
    orders_agree: bool | None = None
    """Both orders gave the same verdict (False: the judge followed the position)."""
    calls: list[PairCall] = Field(default_factory=list)
    llm_calls: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    cached_calls: int = 0
    """Calls replayed from the model-call cache (also in `llm_calls`)."""
    usd_saved: float = 0.0
    """What the replayed calls cost when first made (in `cost_usd` too)."""

    @property
    def score(self) -> float | None:
        """Answer a's score: 1 for a win, 0.5 for a tie, 0 for a loss; None when unscored."""
        return None if self.winner is None else {"a": 1.0, "tie": 0.5, "b": 0.0}[self.winner]


@dataclass(frozen=True)
class PromptSet:
    """The judge prompt templates of a run, and a hash that identifies them."""

    templates: dict[str, str]

    @property
    def fingerprint(self) -> str:
        """Hash of every template (a changed prompt is a different judge)."""
        h = hashlib.sha256()
        for name in sorted(self.templates):
            h.update(name.encode() + b"\0" + self.templates[name].encode() + b"\0")
        return h.hexdigest()[:16]
