"""The page's data as a whole: every section the report draws (gtog.eval.report._page builds
it; its parts are in gtog.eval.report._models and the section modules)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gtog.eval.report._models import (
    AssertionStats,
    Baseline,
    Comparison,
    CostPoint,
    ErrorCount,
    Header,
    HeatCell,
    MetricScore,
    Question,
    Spread,
    WhyRow,
)

if TYPE_CHECKING:
    from gtog.eval.report._groups import GroupTable
    from gtog.eval.report._noise import Noise
    from gtog.eval.report._pairs import HeadToHead
    from gtog.eval.report._repeats import PanelSection, RepeatsSection
    from gtog.eval.report._routing import RoutingSection

__all__ = ["PageData"]


@dataclass(frozen=True)
class PageData:
    """Everything the page draws."""

    header: Header
    primary: str
    scores: list[MetricScore]
    comparisons: list[Comparison]
    heat: list[HeatCell]
    costs: list[CostPoint]
    latency: list[Spread]
    llm_calls: list[Spread]
    stage_calls: dict[str, dict[str, float]]
    """method -> stage -> mean LLM calls per answer (methods that report stages)."""
    errors: list[ErrorCount]
    questions: list[Question]
    has_intervals: bool = field(default=False)
    same_questions: bool = field(default=False)
    """The headline means are same-question means (False: an older summary without them,
    or none at all; the page then shows each method's own-answers mean, labelled so)."""
    common: dict[str, int] = field(default_factory=dict)
    """metric -> questions every method answered and the judge scored (same-question n)."""
    head_to_head: HeadToHead | None = None
    """Head-to-head judging (None: the run did none)."""
    groups: list[GroupTable] = field(default_factory=list)
    """Results by question type, one table per `group_by` field."""
    why: list[WhyRow] = field(default_factory=list)
    """Abstentions and failure attribution per method (empty: no correctness judge)."""
    baseline: Baseline | None = None
    """The diff against a baseline run (`gtog eval report --baseline`)."""
    repeats: RepeatsSection | None = None
    """Repeated answers (`epochs: k`; None: one answer per question)."""
    panel: PanelSection | None = None
    """A judge panel (`judge.models`; None: one judge)."""
    assertions: list[AssertionStats] = field(default_factory=list)
    """Assertions passed and missed per method (empty: the run scored none)."""
    noise: Noise | None = None
    """Clusters, omnibus tests and detectable differences (None: an older summary)."""
    calibration: dict[str, Any] = field(default_factory=dict)
    """metric -> method -> the judge against people's labels (empty: no labels)."""
    calibration_comparisons: list[dict[str, Any]] = field(default_factory=list)
    """Prediction-powered paired differences (metric, a, b, diff_ppi, ci95, p_holm)."""
    verdict: str | None = None
    """What the run found, in one line (gtog.eval.results._verdict; the terminal's too)."""
    routing: RoutingSection | None = None
    """Is routing worth it? (the summary's `routing`; None: fewer than 2 methods)."""
    scales: dict[str, tuple[float, float]] = field(default_factory=dict)
    """Graded metrics' scales (the tables show them on it; the charts as 0-1)."""

    def score(self, method: str, metric: str) -> MetricScore | None:
        """The method's score on the metric, if the summary has it."""
        return next((s for s in self.scores if s.method == method and s.metric == metric), None)
