"""The summary of a run's records: means with intervals, paired comparisons, cost.

Pure functions of records. See `QUESTION_SETS` for which questions each mean covers.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from typing import Any

from gtog.eval.results._abstention import AbstentionRules, abstention_summary
from gtog.eval.results._agreement import metric_agreement
from gtog.eval.results._assertions import assertion_summary
from gtog.eval.results._attribution import attribution_summary
from gtog.eval.results._epochs import add_epoch_entries, reduce_epochs
from gtog.eval.results._inference import (
    Clusters,
    compare,
    mean_stats,
    statistics_block,
    with_mde,
)
from gtog.eval.results._omnibus import omnibus_entry
from gtog.eval.results._records import (
    COST_FIELDS,
    Efficiency,
    MethodRecord,
    measured_latency,
    metric_scales,
    replayed,
    unknown_efficiency,
)
from gtog.eval.results._spec import AnalysisSpec
from gtog.eval.results._statistics import holm, is_binary, percentile
from gtog.eval.scoring._base import is_binary_metric, is_metered

__all__ = [
    "QUESTION_SETS",
    "common_means",
    "comparisons",
    "efficiency_summary",
    "group_summary",
    "judge_usage",
    "summarize",
]


def _mean(values: list[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


QKey = tuple[str, str]
"""(index key, question id): one question of a run."""
Labels = dict[QKey, Hashable] | None
"""Each question's cluster (`inference.Clusters.labels`), or None without clustering."""


def _score_of(record: MethodRecord, metric: str, strict: bool, low: float = 0.0) -> float | None:
    """The record's score; with `strict`, a failed search and an unscored judge call (a
    judgement without a score: the judge failed, its reply was unusable) count as wrong:
    `low`, the bottom of the metric's scale (0)."""
    if record.error is not None:
        return low if strict else None
    j = record.judgements.get(metric)
    if j is not None and j.score is not None:
        return float(j.score)
    return low if strict and j is not None else None


def _scores(
    records: Iterable[MethodRecord], metric: str, *, strict: bool = False, low: float = 0.0
) -> dict[str, dict[QKey, float]]:
    """method -> question -> score, for the questions with a score."""
    out: dict[str, dict[QKey, float]] = {}
    for r in records:
        value = _score_of(r, metric, strict, low)
        if value is not None:
            out.setdefault(r.method, {})[(r.index_key, r.qid)] = value
    return out


_BLOCK_KEYS = ("ci95", "ci95_method", "ci95_reason", "ci95_naive", "icc", "design_effect")


def _intervals(
    scored: dict[str, list[tuple[QKey, float]]], labels: Labels, graded: Iterable[str] = ()
) -> dict[str, Any]:
    """Per metric (a metric -> (question, score) mapping) `ci95`, `ci95_method`,
    `ci95_reason`, `ci95_naive`, `icc` and `design_effect` (`inference.mean_stats`): Wilson
    when the scores are all 0 or 1 (whatever the metric), else the skewness-corrected t;
    clustered from MIN_CLUSTERS clusters on. A graded metric (`graded`: on a scale of its
    own) always gets the skewness-corrected t."""
    graded = set(graded)
    stats = {
        m: mean_stats(
            [v for _, v in pairs],
            None if labels is None else [labels[q] for q, _ in pairs],
            binary=False if m in graded else None,
        )
        for m, pairs in scored.items()
    }
    return {key: {m: s[key] for m, s in stats.items()} for key in _BLOCK_KEYS}


def _unanimous(records: list[MethodRecord], metric: str) -> float | None:
    """Share of answers whose repeated judge trials all gave the same score."""
    votes = [
        r.judgements[metric].votes
        for r in records
        if metric in r.judgements and r.judgements[metric].votes
    ]
    if not votes:
        return None
    same = sum(1 for v in votes if None not in v and len(set(v)) == 1)  # type: ignore[arg-type]
    return same / len(votes)


def group_summary(
    records: Iterable[MethodRecord], metrics: list[str], labels: Labels = None
) -> dict[str, Any]:
    """Mean score per metric over the answers the judge scored, with counts and intervals.

    `n` questions; `search_errors` failed searches; per metric, `scored` answers, judge
    `errors`, the 95% interval `ci95` (Wilson for 0/1 scores, the skewness-corrected t
    otherwise; None with `ci95_reason` when there are too few scores; clustered by
    `labels`, see `_intervals`) and, with `judge.trials` > 1, the share of `unanimous`
    verdicts. A failed search or judge is left out of the mean, not counted as 0.
    """
    records = list(records)
    out: dict[str, Any] = {}
    scored: dict[str, int] = {}
    errors: dict[str, int] = {}
    values: dict[str, list[tuple[QKey, float]]] = {}
    for metric in metrics:
        values[metric] = [
            ((r.index_key, r.qid), float(r.judgements[metric].score))  # type: ignore[arg-type]
            for r in records
            if metric in r.judgements and r.judgements[metric].score is not None
        ]
        out[metric] = _mean([v for _, v in values[metric]])
        scored[metric] = len(values[metric])
        errors[metric] = sum(
            1 for r in records if metric in r.judgements and r.judgements[metric].error
        )
    out["n"] = len(records)
    out["search_errors"] = sum(1 for r in records if r.error)
    out["scored"] = scored
    out["judge_errors"] = errors
    out.update(_intervals(values, labels, metric_scales(records)))
    out["unanimous"] = {m: _unanimous(records, m) for m in metrics}
    return out


def common_questions(table: dict[str, dict[QKey, float]], methods: list[str]) -> list[QKey]:
    """The questions every method of `methods` has a score for in `table`, sorted."""
    if not methods:
        return []
    return sorted(set.intersection(*(set(table.get(m, {})) for m in methods)))


def common_means(
    records: list[MethodRecord],
    methods: list[str],
    metrics: list[str],
    *,
    strict: bool,
    labels: Labels = None,
) -> dict[str, dict[str, Any]]:
    """Per method, means over the questions every method has a score for (per metric)."""
    out: dict[str, dict[str, Any]] = {m: {} for m in methods}
    per_method: dict[str, dict[str, list[tuple[QKey, float]]]] = {m: {} for m in methods}
    graded = metric_scales(records)
    for metric in metrics:
        low = graded.get(metric, (0.0, 1.0))[0]
        table = _scores(records, metric, strict=strict, low=low)
        common = common_questions(table, methods)
        for m in methods:
            per_method[m][metric] = [(q, table[m][q]) for q in common]
            out[m][metric] = _mean([table[m][q] for q in common])
    for m in methods:
        out[m]["scored"] = {metric: len(per_method[m][metric]) for metric in metrics}
        out[m].update(_intervals(per_method[m], labels, graded))
    if strict:  # how many of the strict mean's zeros are failures, per method and metric
        for m in methods:
            mine = {(r.index_key, r.qid): r for r in records if r.method == m}
            out[m]["failed"] = {}
            for metric in metrics:
                rs = [mine[q] for q, _ in per_method[m][metric] if q in mine]
                out[m]["failed"][metric] = {
                    "search_errors": sum(1 for r in rs if r.error is not None),
                    "judge_errors": sum(
                        1
                        for r in rs
                        if r.error is None
                        and (j := r.judgements.get(metric)) is not None
                        and j.score is None
                    ),
                }
    return out


def comparisons(
    records: Iterable[MethodRecord], methods: list[str], metrics: list[str], labels: Labels = None
) -> list[dict[str, Any]]:
    """Every pair of methods on every metric, over the questions both scored, Holm-adjusted.

    0/1 judges: exact McNemar test and Newcombe interval of the difference; other scores:
    seeded paired permutation test and bootstrap interval; with `labels` of at least
    MIN_CLUSTERS clusters, the cluster sign-flip test and clustered intervals
    (`inference.compare`). `diff` = a_mean - b_mean. The Holm adjustment runs over all
    entries of the returned list (one family of N tests); each `mde` is the difference
    its test detects with 80% power after Holm over those N (`mde_tests`).
    """
    records = list(records)
    out: list[dict[str, Any]] = []
    tested: list[tuple[list[float], list[float], list[Any] | None, bool]] = []
    graded = metric_scales(records)
    for metric in metrics:
        table = _scores(records, metric)
        for i, a in enumerate(methods):
            for b in methods[i + 1 :]:
                a_scores, b_scores = table.get(a, {}), table.get(b, {})
                both = sorted(set(a_scores) & set(b_scores))
                xa, xb = [a_scores[q] for q in both], [b_scores[q] for q in both]
                binary = (
                    is_binary_metric(metric)
                    and metric not in graded
                    and is_binary(xa)
                    and is_binary(xb)
                )
                cl = None if labels is None else [labels[q] for q in both]
                entry = compare(xa, xb, cl, binary=binary, tests=None)
                out.append({"metric": metric, "a": a, "b": b, **entry, "p_holm": None})
                tested.append((xa, xb, cl, binary))
    adjusted = holm([e["p_value"] for e in out])
    family = sum(1 for p in adjusted if p is not None)  # the tests Holm adjusts over
    for entry, p, (xa, xb, cl, binary) in zip(out, adjusted, tested, strict=True):
        entry["p_holm"] = p
        entry.update(with_mde(xa, xb, cl, binary=binary, tests=family, icc=entry["icc"]))
    return out


def omnibus(
    records: list[MethodRecord], methods: list[str], metrics: list[str], labels: Labels = None
) -> dict[str, Any]:
    """`omnibus[metric]` with 3 or more methods (`omnibus.omnibus_entry`): Cochran's Q for
    0/1 scores, Friedman's test otherwise, over the questions every method scored; empty
    for fewer methods."""
    out: dict[str, Any] = {}
    graded = metric_scales(records)
    for metric in metrics:
        table = _scores(records, metric)
        values = [v for m in methods for v in table.get(m, {}).values()]
        binary = is_binary_metric(metric) and metric not in graded and is_binary(values)
        entry = omnibus_entry(table, methods, binary=binary, labels=labels)  # type: ignore[arg-type]
        if entry is not None:
            out[metric] = entry
    return out


def _cost_total(costs: list[float | None]) -> float | None:
    """Sum of costs (0 for none); None if any is unknown (a partial sum would understate it)."""
    if any(c is None for c in costs):
        return None
    # fsum is exact: the order the records come in (a sharded run's, an unsharded run's)
    # must not change the last digit
    return math.fsum(c for c in costs if c is not None)


def _known(effs: list[Efficiency], attr: str) -> list[float] | None:
    """Every search's `attr`, or None when any of them does not state it (unknown)."""
    values = [getattr(e, attr) for e in effs]
    if any(v is None for v in values):
        return None
    return [float(v) for v in values]


def _sum(values: list[float] | None) -> int | float | None:
    if values is None:
        return None
    total = math.fsum(values)
    return int(total) if total.is_integer() else total


def efficiency_summary(records: Iterable[MethodRecord]) -> dict[str, Any]:
    """Search cost: averages and p50/p95 over successful searches, totals over every search.

    Embedding requests (the query's embedding, ToG's linking) are counted apart from LLM
    calls and priced into the USD figures. `truncated` counts answers cut at max_tokens.
    A failed search still spent calls, tokens and money before it failed; they are in the
    totals (`failed_llm_calls` says how many calls), so totals are never understated.

    A figure some search does not state (an answers file's line, an HTTP method's reply
    without usage) is unknown: its averages, percentiles and totals are None, never 0 or
    a sum over the searches that stated it; `stated[figure]` counts the searches that did,
    out of `searches`.
    """
    records = list(records)
    # an answer without an efficiency (an answers file's line that states no cost) is
    # one search whose every figure is unknown
    effs = [r.efficiency or unknown_efficiency() for r in records if r.error is None]
    failed = [r.efficiency for r in records if r.error is not None and r.efficiency]
    spent = effs + failed

    def avg(attr: str) -> float | None:
        values = _known(effs, attr)
        return _mean(values) if values is not None else None

    # a search that replayed calls from the cache is left out of latency (the cache's
    # speed, not the method's); another search's unknown latency makes it unknown
    timed = [e for e in effs if not replayed(e)]
    latencies = _known(timed, "latency")

    out: dict[str, Any] = {
        "avg_latency": _mean(latencies) if latencies else None,
        "latency_replayed": len(effs) - len(timed),
        "avg_llm_calls": avg("llm_calls"),
        "avg_prompt_tokens": avg("prompt_tokens"),
        "avg_output_tokens": avg("output_tokens"),
        "avg_queue_wait": _mean([e.queue_wait for e in effs if e.queue_wait is not None]),
        "avg_embedding_calls": avg("embedding_calls"),
        "total_llm_calls": _sum(_known(spent, "llm_calls")),
        "total_prompt_tokens": _sum(_known(spent, "prompt_tokens")),
        "total_output_tokens": _sum(_known(spent, "output_tokens")),
        "total_embedding_calls": _sum(_known(spent, "embedding_calls")),
        "total_embedding_tokens": _sum(_known(spent, "embedding_tokens")),
        "failed_llm_calls": _sum(_known(failed, "llm_calls")),
        "truncated": sum(1 for r in records if r.finish_reason == "length"),
        "n": len(effs),
        "searches": len(spent),
        "stated": {
            attr: sum(
                1
                for e in spent
                if (measured_latency(e) if attr == "latency" else getattr(e, attr)) is not None
            )
            for attr in COST_FIELDS
        },
    }
    for attr in ("latency", "llm_calls", "prompt_tokens", "output_tokens"):
        values = _known(effs, attr) if attr != "latency" else latencies
        out[f"p50_{attr}"] = percentile(values, 50) if values else None
        out[f"p95_{attr}"] = percentile(values, 95) if values else None
    prompt, output = _known(effs, "prompt_tokens"), _known(effs, "output_tokens")
    tokens = None
    if prompt is not None and output is not None:
        tokens = [p + o for p, o in zip(prompt, output, strict=True)]
    out["p50_tokens"] = percentile(tokens, 50) if tokens is not None else None
    out["p95_tokens"] = percentile(tokens, 95) if tokens is not None else None
    answered = _cost_total([e.cost_usd for e in effs])
    out["usd_total"] = _cost_total([e.cost_usd for e in spent])
    out["usd_per_answer"] = answered / len(effs) if answered is not None and effs else None
    return out


def judge_usage(records: Iterable[MethodRecord]) -> dict[str, Any]:
    """LLM calls, tokens and USD spent by the LLM judges and embedding-based metrics (per
    judged answer and in total)."""
    records = list(records)
    js = [j for r in records for m, j in r.judgements.items() if is_metered(m)]
    judged = sum(1 for r in records if r.error is None and r.judgements)
    total = _cost_total([j.cost_usd for j in js])
    return {
        "llm_calls": sum(j.llm_calls for j in js),
        "prompt_tokens": sum(j.prompt_tokens for j in js),
        "output_tokens": sum(j.output_tokens for j in js),
        "usd_total": total,
        "usd_per_answer": total / judged if total is not None and judged else None,
    }


QUESTION_SETS = {
    "by_method.<m>.<metric>": "mean over the answers of that method the judge scored",
    "by_method.<m>.same_questions": (
        "mean over the questions every method answered and the judge scored (compare these)"
    ),
    "by_method.<m>.strict": (
        "as same_questions, but a failed search or an unscored judge call counts as a wrong "
        "answer (score 0; `failed` counts them)"
    ),
    "comparisons": "each pair over the questions both methods have a score for",
    "by_method.<m>.answered": (
        "mean over the answers of that method the judge scored that did not abstain"
    ),
    "attribution": "wrong answers (correctness 0) of each method, by where the evidence was",
    "metric_agreement": "every answer with both a correctness verdict and the metric's score",
    "by_method.<m>.epochs": (
        "with repeats: the questions whose k answers were all scored (a mean per question)"
    ),
}
"""What question set each kind of mean in the summary covers (written into the summary)."""


def _scope(
    answers: list[MethodRecord],
    methods: list[str],
    metrics: list[str],
    rules: AbstentionRules,
    labels: Labels = None,
    epochs: int = 1,
) -> dict:
    """Each method's entry: means over questions (a question's repeats reduced to one,
    `reduce_epochs`), abstention over every answer, and with `epochs` > 1 `epochs`."""
    records = reduce_epochs(answers)
    same = common_means(records, methods, metrics, strict=False, labels=labels)
    strict = common_means(
        reduce_epochs(answers, strict=True), methods, metrics, strict=True, labels=labels
    )
    out = {
        m: {
            **group_summary((r for r in records if r.method == m), metrics, labels),
            "same_questions": same[m],
            "strict": strict[m],
            **abstention_summary((r for r in answers if r.method == m), metrics, rules, labels),
        }
        for m in methods
    }
    if epochs > 1:
        add_epoch_entries(out, answers, metrics, epochs)
        for m in methods:  # judge trials agree or not per answer, not per question
            mine = [r for r in answers if r.method == m]
            out[m]["unanimous"] = {metric: _unanimous(mine, metric) for metric in metrics}
    return out


def _cost(eff: dict[str, Any], usage: dict[str, Any]) -> dict[str, float | None]:
    search, judging = eff["usd_total"], usage["usd_total"]
    per_search, per_judge = eff["usd_per_answer"], usage["usd_per_answer"]
    return {
        "search_usd": search,
        "judge_usd": judging,
        "total_usd": None if search is None or judging is None else search + judging,
        "search_usd_per_answer": per_search,
        "judge_usd_per_answer": per_judge,
    }


def summarize(
    records: list[MethodRecord],
    methods: list[str],
    metrics: list[str],
    analysis: AnalysisSpec | None = None,
    epochs: int = 1,
) -> dict[str, Any]:
    """`statistics`, `by_method`, `by_movie` (per index key), `comparisons`, `omnibus`,
    `efficiency`, `cost`, `attribution`, `metric_agreement` and, with the `assertions`
    metric, `assertions`.

    See `QUESTION_SETS` for which questions each mean covers; `analysis` sets the
    abstention rules, the attribution threshold (defaults: the built-in rules, 0.5) and
    how questions are clustered (default: by index key; `statistics` says how many
    clusters, and whether the intervals and tests are clustered). With repeats (`epochs`
    > 1), means and tests are over questions (each question's answers reduced to one,
    `reduce_epochs`); cost counts every answer.
    """
    analysis = analysis or AnalysisSpec()
    rules = AbstentionRules(tuple(analysis.abstention_patterns), analysis.abstention_builtin)
    clusters = Clusters.of(analysis.cluster_by)
    labels = clusters.labels(records)
    present = [m for m in methods if any(r.method == m for r in records)]
    keys = sorted({r.index_key for r in records})
    per_key = {k: [r for r in records if r.index_key == k] for k in keys}
    efficiency = {m: efficiency_summary(r for r in records if r.method == m) for m in present}
    usage = {m: judge_usage(r for r in records if r.method == m) for m in present}
    questions = reduce_epochs(records)  # (repeats: one record per question)
    extra = {"assertions": assertion_summary(records, present)} if "assertions" in metrics else {}
    return {
        "question_sets": QUESTION_SETS,
        "statistics": statistics_block(records, clusters),
        "by_method": _scope(records, present, metrics, rules, labels, epochs),
        "by_movie": {k: _scope(per_key[k], present, metrics, rules, labels, epochs) for k in keys},
        "comparisons": comparisons(questions, present, metrics, labels),
        "omnibus": omnibus(questions, present, metrics, labels),
        "comparisons_by_movie": {
            k: comparisons(reduce_epochs(per_key[k]), present, metrics, labels) for k in keys
        },
        "efficiency": efficiency,
        "judge_usage": usage,
        "cost": {"by_method": {m: _cost(efficiency[m], usage[m]) for m in present}},
        "attribution": attribution_summary(records, present, analysis.evidence_threshold),
        "metric_agreement": metric_agreement(records, metrics),
        **extra,
    }
