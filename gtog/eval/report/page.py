"""What the HTML report shows: pure functions of the detailed and summary results.

`page_data(detailed, summary)` reads the JSON that `gtog eval` writes (see results.py) and
returns typed, render-ready figures. It is tolerant of summaries from other gtog versions:
95% intervals (`by_method[m]["ci95"][metric]`), paired `comparisons` and per-answer USD
costs are shown when present; without them the page shows means without intervals.
A missing score is None (unscored), never 0.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "SIGNIFICANCE",
    "Answer",
    "Comparison",
    "CostPoint",
    "ErrorCount",
    "Header",
    "HeatCell",
    "MetricScore",
    "PageData",
    "Question",
    "Spread",
    "error_kind",
    "page_data",
    "primary_metric",
    "tog_paths",
]

SIGNIFICANCE = 0.05
"""A difference is called significant when its (Holm-adjusted) p-value is below this."""


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


@dataclass(frozen=True)
class MetricScore:
    """One method's mean on one metric, over the answers that metric scored."""

    method: str
    metric: str
    mean: float | None
    ci95: tuple[float, float] | None
    scored: int
    n: int
    errors: int


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
    n: int


@dataclass(frozen=True)
class CostPoint:
    """A method's mean quality against its mean cost per answer."""

    method: str
    quality: float | None
    quality_ci95: tuple[float, float] | None
    tokens: float | None
    latency: float | None
    llm_calls: float | None
    cost_usd: float | None
    """Mean USD per answer, when every costed answer had a known price."""
    n: int


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
class Answer:
    """One method's answer to one question, as shown in the question list."""

    method: str
    response: str | None
    error: str | None
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
    """Methods scored differently on the primary metric."""
    failed: bool
    """A search or judge failed for some method."""
    wrong: bool
    """Some method scored below 0.5 on the primary metric."""


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


# -- tolerant readers -------------------------------------------------------------------------
def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _int(value: Any) -> int | None:
    number = _num(value)
    return int(number) if number is not None else None


def _interval(value: Any) -> tuple[float, float] | None:
    if isinstance(value, list | tuple) and len(value) == 2:
        lo, hi = _num(value[0]), _num(value[1])
        if lo is not None and hi is not None:
            return (lo, hi)
    return None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def primary_metric(metrics: list[str]) -> str:
    """The metric of the heat map and the quality axis: correctness when judged."""
    if "correctness" in metrics or not metrics:
        return "correctness"
    return metrics[0]


# -- pieces -------------------------------------------------------------------------------------
_PATHS_RE = re.compile(r"-----Paths-----\n[^\n]*\n(.*?)(?:\n\n|\Z)", re.S)


def tog_paths(context: str | None) -> list[str]:
    """ToG's reasoning paths (`score  A -[rel]-> B`) from its evidence text."""
    if not context:
        return []
    m = _PATHS_RE.search(context)
    if not m:
        return []
    out = []
    for line in m.group(1).splitlines():
        parts = line.split("|", 2)
        if len(parts) == 3:
            out.append(f"{parts[1]}  {parts[2]}")
        elif line.strip():
            out.append(line.strip())
    return out


_EXC_RE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Timeout|Exit))\b")


def error_kind(message: str) -> str:
    """A short kind for an error message: the exception class, or its first words."""
    if message.startswith("could not build the"):
        inner = message.split(": ", 1)[-1]
        m = _EXC_RE.match(inner)
        return f"engine build: {m.group(1)}" if m else "engine build"
    if message.startswith("unparseable judge reply"):
        return "unparseable judge reply"
    m = _EXC_RE.match(message)
    if m:
        return m.group(1).rsplit(".", 1)[-1]
    head = message.split(":", 1)[0].strip()
    return head[:60] or "error"


def _answer(method: str, entry: dict[str, Any], metrics: list[str]) -> Answer:
    scores_raw = _dict(entry.get("scores"))
    reasons_raw = _dict(entry.get("reasons"))
    judge_errors = {k: str(v) for k, v in _dict(entry.get("judge_errors")).items() if v}
    eff = _dict(entry.get("efficiency"))
    calls = {k: int(v) for k, v in _dict(eff.get("llm_calls_categories")).items() if _int(v)}
    context = _str(entry.get("context_text"))
    sources = entry.get("sources")
    source_ids = [str(s.get("id")) for s in sources or [] if isinstance(s, dict) and "id" in s]
    keys = [m for m in metrics if m in scores_raw] + [m for m in scores_raw if m not in metrics]
    return Answer(
        method=method,
        response=_str(entry.get("response")),
        error=_str(entry.get("error")),
        scores={m: _num(scores_raw.get(m)) for m in keys},
        reasons={m: _str(reasons_raw.get(m)) for m in keys},
        judge_errors=judge_errors,
        latency=_num(eff.get("latency")),
        llm_calls=_int(eff.get("llm_calls")),
        prompt_tokens=_int(eff.get("prompt_tokens")),
        output_tokens=_int(eff.get("output_tokens")),
        cost_usd=_num(eff.get("cost_usd")),
        calls_by_stage=calls,
        paths=tog_paths(context) if method == "tog" else [],
        context=context,
        source_ids=source_ids,
    )


def _question(raw: dict[str, Any], methods: list[str], metrics: list[str], primary: str):
    entries = _dict(raw.get("methods"))
    order = [m for m in methods if m in entries] + [m for m in entries if m not in methods]
    answers = [_answer(m, _dict(entries[m]), metrics) for m in order]
    primary_scores = [a.scores.get(primary) for a in answers if a.error is None]
    known = [s for s in primary_scores if s is not None]
    gold = raw.get("evidence", raw.get("context"))
    return Question(
        qid=str(raw.get("question_id", "")),
        index_key=str(raw.get("imdb_key", raw.get("index_key", ""))),
        question=str(raw.get("question", "")),
        ground_truth=str(raw.get("ground_truth", "")),
        gold_evidence=gold if isinstance(gold, str) and gold.strip() else None,
        answers=answers,
        disagree=len({round(s, 6) for s in known}) > 1,
        failed=any(a.error or a.judge_errors for a in answers),
        wrong=any(s < 0.5 for s in known),
    )


def _scores(summary: dict[str, Any], methods: list[str], metrics: list[str]) -> list[MetricScore]:
    by_method = _dict(summary.get("by_method"))
    out = []
    for method in methods:
        group = _dict(by_method.get(method))
        ci = _dict(group.get("ci95"))
        scored = _dict(group.get("scored"))
        errors = _dict(group.get("judge_errors"))
        for metric in metrics:
            out.append(
                MetricScore(
                    method=method,
                    metric=metric,
                    mean=_num(group.get(metric)),
                    ci95=_interval(ci.get(metric)),
                    scored=_int(scored.get(metric)) or 0,
                    n=_int(group.get("n")) or 0,
                    errors=_int(errors.get(metric)) or 0,
                )
            )
    return out


def _comparisons(summary: dict[str, Any]) -> list[Comparison]:
    raw = summary.get("comparisons")
    out = []
    for c in raw if isinstance(raw, list) else []:
        if not isinstance(c, dict):
            continue
        metric, a, b = _str(c.get("metric")), _str(c.get("a")), _str(c.get("b"))
        if not (metric and a and b):
            continue
        out.append(
            Comparison(
                metric=metric,
                a=a,
                b=b,
                n=_int(c.get("n")),
                a_mean=_num(c.get("a_mean")),
                b_mean=_num(c.get("b_mean")),
                diff=_num(c.get("diff")),
                ci95=_interval(c.get("ci95")),
                p_value=_num(c.get("p_value")),
                p_holm=_num(c.get("p_holm")),
                test=_str(c.get("test")),
            )
        )
    return out


def _heat(
    summary: dict[str, Any], questions: list[Question], methods: list[str], primary: str
) -> list[HeatCell]:
    by_index = _dict(summary.get("by_movie"))
    keys = list(by_index) or list(dict.fromkeys(q.index_key for q in questions))
    out = []
    for key in keys:
        groups = _dict(by_index.get(key))
        for method in methods:
            g = _dict(groups.get(method))
            if g:
                out.append(
                    HeatCell(
                        key,
                        method,
                        _num(g.get(primary)),
                        _int(_dict(g.get("scored")).get(primary)) or 0,
                        _int(g.get("n")) or 0,
                    )
                )
                continue
            values = [
                a.scores.get(primary)
                for q in questions
                if q.index_key == key
                for a in q.answers
                if a.method == method
            ]
            known = [v for v in values if v is not None]
            mean = float(np.mean(known)) if known else None
            out.append(HeatCell(key, method, mean, len(known), len(values)))
    return out


def _mean_or_none(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


def _costs(
    summary: dict[str, Any], questions: list[Question], methods: list[str], primary: str
) -> list[CostPoint]:
    by_method = _dict(summary.get("by_method"))
    efficiency = _dict(summary.get("efficiency"))
    out = []
    for method in methods:
        answers = [a for q in questions for a in q.answers if a.method == method]
        ok = [a for a in answers if a.error is None]
        eff = _dict(efficiency.get(method))
        group = _dict(by_method.get(method))
        tokens_summary = [_num(eff.get("avg_prompt_tokens")), _num(eff.get("avg_output_tokens"))]
        if all(t is not None for t in tokens_summary):
            tokens = sum(t for t in tokens_summary if t is not None)
        else:
            tokens = _mean_or_none(
                [
                    float(a.prompt_tokens + a.output_tokens)
                    for a in ok
                    if a.prompt_tokens is not None and a.output_tokens is not None
                ]
            )
        latency = _num(eff.get("avg_latency"))
        if latency is None:
            latency = _mean_or_none([a.latency for a in ok if a.latency is not None])
        calls = _num(eff.get("avg_llm_calls"))
        if calls is None:
            calls = _mean_or_none([float(a.llm_calls) for a in ok if a.llm_calls is not None])
        usd = [a.cost_usd for a in ok]
        if ok and all(u is not None for u in usd):
            cost = _mean_or_none([u for u in usd if u is not None])
        else:
            cost = _num(eff.get("avg_cost_usd"))
        quality = _num(group.get(primary))
        if quality is None and not group:
            quality = _mean_or_none([s for a in ok if (s := a.scores.get(primary)) is not None])
        out.append(
            CostPoint(
                method=method,
                quality=quality,
                quality_ci95=_interval(_dict(group.get("ci95")).get(primary)),
                tokens=tokens,
                latency=latency,
                llm_calls=calls,
                cost_usd=cost,
                n=len(ok),
            )
        )
    return out


def _stage_calls(questions: list[Question], methods: list[str]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for method in methods:
        ok = [a for q in questions for a in q.answers if a.method == method and a.error is None]
        stages = list(dict.fromkeys(s for a in ok for s in a.calls_by_stage))
        if ok and stages:
            out[method] = {
                s: float(np.mean([a.calls_by_stage.get(s, 0) for a in ok])) for s in stages
            }
    return out


def _errors(questions: list[Question], methods: list[str]) -> list[ErrorCount]:
    counts: dict[tuple[str, str, str], list[str]] = {}
    for q in questions:
        for a in q.answers:
            if a.error:
                counts.setdefault((a.method, "search", error_kind(a.error)), []).append(a.error)
            for metric, message in a.judge_errors.items():
                key = (a.method, f"judge: {metric}", error_kind(message))
                counts.setdefault(key, []).append(message)
    rank = {m: i for i, m in enumerate(methods)}
    return [
        ErrorCount(method, where, kind, len(messages), messages[0])
        for (method, where, kind), messages in sorted(
            counts.items(), key=lambda kv: (rank.get(kv[0][0], 99), kv[0][1], -len(kv[1]))
        )
    ]


def _header(
    detailed: dict[str, Any],
    questions: list[Question],
    methods: list[str],
    metrics: list[str],
    partial: bool,
) -> Header:
    meta = _dict(detailed.get("metadata"))
    answers = [a for q in questions for a in q.answers]
    failed = sum(1 for a in answers if a.error)
    judge_failed = sum(1 for a in answers if a.error is None and a.judge_errors)
    fully = sum(
        1
        for a in answers
        if a.error is None
        and not a.judge_errors
        and all(a.scores.get(m) is not None for m in metrics)
    )
    versions = {str(k): str(v) for k, v in _dict(meta.get("versions")).items()}
    indexes = meta.get("index_keys")
    return Header(
        dataset=" · hash ".join(
            str(v) for v in (meta.get("dataset_path"), meta.get("dataset")) if v
        )
        or "?",
        indexes=[str(k) for k in indexes]
        if isinstance(indexes, list)
        else list(dict.fromkeys(q.index_key for q in questions)),
        methods=methods,
        metrics=metrics,
        judge_models={str(k): str(v) for k, v in _dict(meta.get("judge_models")).items()},
        versions=versions,
        timestamp=str(meta.get("timestamp") or "?"),
        answers=len(answers),
        fully_scored=fully,
        search_failed=failed,
        judge_failed=judge_failed,
        unscored_judgements=sum(len(a.judge_errors) for a in answers),
        partial=partial,
    )


def _run_shape(detailed: dict[str, Any], summary: dict[str, Any]) -> tuple[list[str], list[str]]:
    meta = {**_dict(summary.get("metadata")), **_dict(detailed.get("metadata"))}
    results = [r for r in detailed.get("results") or [] if isinstance(r, dict)]
    seen_methods = [m for r in results for m in _dict(r.get("methods"))]
    methods = [str(m) for m in meta.get("methods") or []] or list(_dict(summary.get("by_method")))
    methods += [m for m in dict.fromkeys(seen_methods) if m not in methods]
    metrics = [str(m) for m in meta.get("metrics") or []]
    if not metrics:
        metrics = list(
            dict.fromkeys(
                k
                for r in results
                for e in _dict(r.get("methods")).values()
                for k in _dict(_dict(e).get("scores"))
            )
        )
    return methods, metrics


def page_data(
    detailed: dict[str, Any], summary: dict[str, Any], *, partial: bool = False
) -> PageData:
    """The page's figures from a run's detailed and summary results."""
    methods, metrics = _run_shape(detailed, summary)
    primary = primary_metric(metrics)
    questions = [
        _question(r, methods, metrics, primary)
        for r in detailed.get("results") or []
        if isinstance(r, dict)
    ]
    scores = _scores(summary, methods, metrics)
    latency = [
        s
        for m in methods
        if (
            s := Spread.of(
                m,
                [
                    a.latency
                    for q in questions
                    for a in q.answers
                    if a.method == m and a.error is None and a.latency is not None
                ],
            )
        )
    ]
    calls = [
        s
        for m in methods
        if (
            s := Spread.of(
                m,
                [
                    float(a.llm_calls)
                    for q in questions
                    for a in q.answers
                    if a.method == m and a.error is None and a.llm_calls is not None
                ],
            )
        )
    ]
    return PageData(
        header=_header(detailed, questions, methods, metrics, partial),
        primary=primary,
        scores=scores,
        comparisons=_comparisons(summary),
        heat=_heat(summary, questions, methods, primary),
        costs=_costs(summary, questions, methods, primary),
        latency=latency,
        llm_calls=calls,
        stage_calls=_stage_calls(questions, methods),
        errors=_errors(questions, methods),
        questions=questions,
        has_intervals=any(s.ci95 is not None for s in scores),
    )
