"""What the report shows, as typed, render-ready data (built by gtog.eval.report._page).

A missing score is None (unscored), never 0. Means carry the set of answers they cover:
the page's headline is the mean over the questions every method answered and the judge
scored (`MetricScore.same`), as in the terminal table; each method's mean over its own
scored answers (`MetricScore.own`) is secondary and labelled as such.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from gtog.eval.results._pairwise import SIGNIFICANCE

if TYPE_CHECKING:
    from gtog.eval.report._pairs import QuestionPair
    from gtog.eval.report._tree import Exploration


__all__ = [
    "SIGNIFICANCE",
    "Answer",
    "AssertionCheck",
    "AssertionStats",
    "Baseline",
    "Comparison",
    "CostPoint",
    "DiffRow",
    "ErrorCount",
    "Header",
    "HeatCell",
    "Mean",
    "MetricScore",
    "Question",
    "RunStatus",
    "Spread",
    "WhyRow",
]

"""A difference is called significant when its (Holm-adjusted) p-value is below this."""


@dataclass(frozen=True)
class RunStatus:
    """How far the run got (the summary's `metadata.run`; absent in older summaries)."""

    status: str
    """`complete`, `interrupted` or `stopped: <reason>`."""
    pairs_done: int | None
    pairs_total: int | None

    @property
    def complete(self) -> bool:
        """The run answered every (question, method) pair it was asked for."""
        return self.status == "complete"


@dataclass(frozen=True)
class Header:
    """Who, what and when of the run, and how many answers were scored or failed."""

    dataset: str
    indexes: list[str]
    methods: list[str]
    metrics: list[str]
    judge_models: dict[str, str]
    versions: dict[str, str]
    timestamp: str
    answers: int
    fully_scored: int
    search_failed: int
    judge_failed: int
    """Answers with at least one judge error (their other metrics may be scored)."""
    unscored_judgements: int
    partial: bool = False
    """Rebuilt from the checkpoint of a run still going or interrupted."""
    run: RunStatus | None = None
    notes: list[str] = field(default_factory=list)
    """Records the summary left out and why (`metadata.notes`: other settings, other judge)."""
    spend: str = ""
    """What the run paid, saved by the cache, was estimated at and limited to (`cost`)."""


@dataclass(frozen=True)
class Mean:
    """A mean score with its 95% interval (None when the summary has none) and its count."""

    value: float | None
    ci95: tuple[float, float] | None
    n: int
    """How many scores it averages."""


@dataclass(frozen=True)
class MetricScore:
    """One method's score on one metric."""

    method: str
    metric: str
    same: Mean | None
    """Over the questions every method answered and the judge scored (None: not in the
    summary, which an older gtog wrote)."""
    own: Mean
    """Over the answers of this method the judge scored."""
    answers: int
    """Answers of this method (scored or not)."""
    errors: int

    @property
    def headline(self) -> Mean:
        """The mean the page compares methods by: `same`, else (older summaries) `own`."""
        return self.same if self.same is not None else self.own


@dataclass(frozen=True)
class Comparison:
    """A paired difference between two methods on one metric (from the summary)."""

    metric: str
    a: str
    b: str
    n: int | None
    a_mean: float | None
    b_mean: float | None
    diff: float | None
    ci95: tuple[float, float] | None
    p_value: float | None
    p_holm: float | None
    test: str | None
    ci95_naive: tuple[float, float] | None = None
    """The interval if the questions were independent (None: the summary has none)."""
    mde: float | None = None
    """The smallest difference this comparison could detect at 80% power."""

    @property
    def clustered(self) -> bool:
        """The interval and test allow for clusters of questions."""
        return self.test == "cluster_sign_flip"

    @property
    def significant(self) -> bool:
        """Holm-adjusted p (or plain p when no adjustment is given) below SIGNIFICANCE."""
        p = self.p_holm if self.p_holm is not None else self.p_value
        return p is not None and p < SIGNIFICANCE


@dataclass(frozen=True)
class HeatCell:
    """Mean primary score of one method on one index."""

    index_key: str
    method: str
    mean: float | None
    scored: int
    """Scores averaged: questions (same-question means) or answers (own answers)."""
    n: int
    """Answers of this method on this index."""


@dataclass(frozen=True)
class CostPoint:
    """A method's mean quality against its mean cost per answer."""

    method: str
    quality: float | None
    quality_ci95: tuple[float, float] | None
    quality_n: int
    """Scores in the quality mean."""
    tokens: float | None
    latency: float | None
    llm_calls: float | None
    cost_usd: float | None
    """Mean USD per answer, when every costed answer had a known price."""
    n: int
    """Successful searches (the cost averages' count)."""
    stated: dict[str, int] = field(default_factory=dict)
    """figure (`latency`, `llm_calls`, `prompt_tokens`, `output_tokens`, `cost_usd`) ->
    searches that stated it, out of `searches` (an answers file or an HTTP method may not:
    then the figure is unknown, never 0)."""
    searches: int = 0
    replayed: int = 0
    """Answers replayed from the model-call cache: left out of `latency` (the cache's speed
    is not the method's)."""

    def unstated(self, *figures: str) -> str | None:
        """`stated by 1 of 3` when some search did not state one of `figures`, else None."""
        counts = [self.stated[f] for f in figures if f in self.stated]
        if not counts or min(counts) >= self.searches:
            return None
        return f"stated by {min(counts)} of {self.searches}"


@dataclass(frozen=True)
class Spread:
    """Quantiles of a per-answer figure for one method (numpy percentiles)."""

    method: str
    values: list[float]
    p10: float
    p25: float
    p50: float
    p75: float
    p90: float

    @classmethod
    def of(cls, method: str, values: list[float]) -> Spread | None:
        """None when there are no values."""
        if not values:
            return None
        q = np.percentile(np.asarray(values, dtype=float), [10, 25, 50, 75, 90])
        return cls(method, values, *(float(x) for x in q))


@dataclass(frozen=True)
class ErrorCount:
    """How often one kind of failure happened for one method."""

    method: str
    where: str
    """`search` or `judge: <metric>`."""
    kind: str
    count: int
    example: str


@dataclass(frozen=True)
class AssertionCheck:
    """One assertion judged against one answer (the `assertions` metric)."""

    assertion: str
    passed: bool | None
    """None: unscored (`note` says why)."""
    note: str | None
    """The judge's reason, or why it is unscored."""


@dataclass(frozen=True)
class AssertionStats:
    """One method's assertions over the run (the summary's `assertions`)."""

    method: str
    answers: int
    assertions: int
    passed: int
    missed: int
    unscored: int
    pass_rate: float | None
    all_supported: int
    missed_list: list[tuple[str, str, str]]
    """(question id, index key, assertion) of every assertion the method missed."""


@dataclass(frozen=True)
class Answer:
    """One method's answer to one question, as shown in the question list."""

    method: str
    response: str | None
    error: str | None
    error_kind: str | None
    """The kind the run recorded for `error` (`timeout`, `engine`, an exception type)."""
    scores: dict[str, float | None]
    reasons: dict[str, str | None]
    judge_errors: dict[str, str]
    latency: float | None
    llm_calls: int | None
    prompt_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    calls_by_stage: dict[str, int]
    paths: list[str]
    context: str | None
    source_ids: list[str]
    stale: str | None = None
    """Why the summary leaves this answer or its scores out (earlier settings, an earlier
    judge); None: it is the run's current answer."""
    tree: Exploration | None = None
    """ToG's exploration tree (None: the method records none)."""
    assertions: list[AssertionCheck] = field(default_factory=list)
    """Each of the question's assertions as judged against this answer (empty: none)."""
    flagged: dict[str, list[str]] = field(default_factory=dict)
    """What a metric found wrong, by what it is (`invalid citations` -> [`Entities 99`])."""
    marked: Any = None
    """The response as markup with its invalid citations highlighted (None: none)."""


@dataclass(frozen=True)
class Question:
    """A question with the dataset's reference and every method's answer."""

    qid: str
    index_key: str
    question: str
    ground_truth: str
    gold_evidence: str | None
    answers: list[Answer]
    disagree: bool
    """Methods scored differently on the primary metric (current answers only)."""
    failed: bool
    """A search or judge failed for some method."""
    wrong: bool
    """Some method scored below 0.5 on the primary metric (current answers only)."""
    groups: dict[str, str] = field(default_factory=dict)
    """The question's values of the dataset's `group_by` fields (a missing one: absent)."""
    pairs: list[QuestionPair] = field(default_factory=list)
    """Head-to-head verdicts, one entry per compared pair (A/A checks last)."""

    def answer(self, method: str) -> Answer | None:
        """The method's answer to this question, if it has one."""
        return next((a for a in self.answers if a.method == method), None)


@dataclass(frozen=True)
class WhyRow:
    """One method's abstentions and failure attribution (the summary's `attribution`)."""

    method: str
    abstention_rate: float | None
    answered: float | None
    """Correctness over the answers that did not abstain."""
    wrong: int
    retrieval: int
    generation: int
    unknown: int
    retrieval_share: float | None
    table: dict[str, dict[str, int]]
    stages: dict[str, int]
    threshold: float | None


@dataclass(frozen=True)
class DiffRow:
    """One method and metric of a run-to-run diff (`gtog eval report --baseline`)."""

    method: str
    metric: str
    n: int
    a: float | None
    b: float | None
    delta: float | None
    p_holm: float | None
    regression: bool
    to_wrong: list[str]
    to_right: list[str]


@dataclass(frozen=True)
class Baseline:
    """This run against a baseline run: the diff's rows and what it compared."""

    label: str
    rows: list[DiffRow]
    common: int
    answers: dict[str, dict[str, dict[str, str | None]]]
    """method -> question id -> {a, b}: the flipped questions' answers in both runs."""
