"""What the HTML report shows: pure functions of the detailed and summary results.

`page_data(detailed, summary)` reads the JSON that `gtog eval` writes (gtog.eval.results)
and returns typed, render-ready figures (gtog.eval.report._models). One rule for means, as
in the terminal table: the headline (score bars and table, heat map, quality axis) is the
mean over the questions every method answered and the judge scored
(`by_method[m]["same_questions"]`, with its n and interval); each method's mean over its
own scored answers is secondary and labelled. It is tolerant of summaries from other gtog
versions: without `same_questions` the headline is the own-answers mean, labelled so;
intervals (`ci95`), paired `comparisons`, per-answer USD costs and the run status
(`metadata.run`) are shown when present, and so are head-to-head judging (`pairwise*`,
gtog.eval.report._versus) and results by question type (`by_group`, gtog.eval.report._groups).
A missing score is None (unscored), never 0.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from gtog.eval.report._claims import assertion_stats
from gtog.eval.report._groups import group_tables
from gtog.eval.report._models import (
    Baseline,
    Comparison,
    CostPoint,
    DiffRow,
    Header,
    HeatCell,
    Mean,
    MetricScore,
    Question,
    RunStatus,
    WhyRow,
)
from gtog.eval.report._noise import noise_view
from gtog.eval.report._pagedata import PageData
from gtog.eval.report._questions import (
    answers_of,
    error_counts,
    error_kind,
    question,
    spreads,
    stage_calls,
    tog_paths,
)
from gtog.eval.report._readers import as_dict, as_int, as_interval, as_num, as_str
from gtog.eval.report._repeats import panel_section, repeats_section
from gtog.eval.report._routing import routing_section
from gtog.eval.report._versus import head_to_head
from gtog.eval.results._spend import cost_line
from gtog.eval.results._verdict import scale_of, to_unit, verdict

__all__ = ["error_kind", "page_data", "primary_metric", "tog_paths"]


def primary_metric(metrics: list[str], scales: dict[str, Any] | None = None) -> str:
    """The metric of the heat map and the quality axis: correctness when judged, else
    the first metric on 0-1 (a graded one only when there is no other)."""
    if "correctness" in metrics or not metrics:
        return "correctness"
    return next((m for m in metrics if m not in (scales or {})), metrics[0])


def _unit(mean: Mean, scale: tuple[float, float] | None) -> Mean:
    """A graded metric's mean (and interval) as 0-1, for the charts."""
    if scale is None or mean.value is None:
        return mean
    ci = tuple(to_unit(v, scale) for v in mean.ci95) if mean.ci95 else mean.ci95
    return Mean(to_unit(mean.value, scale), ci, mean.n)  # type: ignore[arg-type]


def _mean(group: dict[str, Any], metric: str) -> Mean:
    """A summary group's mean of `metric` (the layout of both own and same-question means)."""
    return Mean(
        as_num(group.get(metric)),
        as_interval(as_dict(group.get("ci95")).get(metric)),
        as_int(as_dict(group.get("scored")).get(metric)) or 0,
    )


def _same(group: dict[str, Any], metric: str) -> Mean | None:
    """The same-question mean of a summary group, None when the summary has none."""
    same = group.get("same_questions")
    return _mean(same, metric) if isinstance(same, dict) else None


def _scores(summary: dict[str, Any], methods: list[str], metrics: list[str]) -> list[MetricScore]:
    by_method = as_dict(summary.get("by_method"))
    out = []
    for method in methods:
        group = as_dict(by_method.get(method))
        errors = as_dict(group.get("judge_errors"))
        for metric in metrics:
            out.append(
                MetricScore(
                    method=method,
                    metric=metric,
                    same=_same(group, metric),
                    own=_mean(group, metric),
                    answers=as_int(group.get("n")) or 0,
                    errors=as_int(errors.get(metric)) or 0,
                )
            )
    return out


def _common(scores: list[MetricScore], metrics: list[str]) -> dict[str, int]:
    """metric -> questions in the same-question means (the smallest count, as the table)."""
    out = {}
    for metric in metrics:
        counts = [s.same.n for s in scores if s.metric == metric and s.same is not None]
        if counts:
            out[metric] = min(counts)
    return out


def _comparisons(summary: dict[str, Any]) -> list[Comparison]:
    raw = summary.get("comparisons")
    out = []
    for c in raw if isinstance(raw, list) else []:
        if not isinstance(c, dict):
            continue
        metric, a, b = as_str(c.get("metric")), as_str(c.get("a")), as_str(c.get("b"))
        if not (metric and a and b):
            continue
        out.append(
            Comparison(
                metric=metric,
                a=a,
                b=b,
                n=as_int(c.get("n")),
                a_mean=as_num(c.get("a_mean")),
                b_mean=as_num(c.get("b_mean")),
                diff=as_num(c.get("diff")),
                ci95=as_interval(c.get("ci95")),
                p_value=as_num(c.get("p_value")),
                p_holm=as_num(c.get("p_holm")),
                test=as_str(c.get("test")),
                ci95_naive=as_interval(c.get("ci95_naive")),
                mde=as_num(c.get("mde")),
            )
        )
    return out


def _heat(
    summary: dict[str, Any], questions: list[Question], methods: list[str], primary: str
) -> list[HeatCell]:
    scale = scale_of(summary, primary)
    by_index = as_dict(summary.get("by_movie"))
    keys = list(by_index) or list(dict.fromkeys(q.index_key for q in questions))
    out = []
    for key in keys:
        groups = as_dict(by_index.get(key))
        for method in methods:
            g = as_dict(groups.get(method))
            if g:
                mean = _unit(_same(g, primary) or _mean(g, primary), scale)
                out.append(HeatCell(key, method, mean.value, mean.n, as_int(g.get("n")) or 0))
                continue
            answers = [
                a for q in questions if q.index_key == key for a in q.answers if a.method == method
            ]
            known = [to_unit(s, scale) for a in answers if (s := a.scores.get(primary)) is not None]
            out.append(HeatCell(key, method, _mean_or_none(known), len(known), len(answers)))
    return out


def _mean_or_none(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


def _all_known(values: list[float | None]) -> float | None:
    """The mean of per-answer figures, None when any is unknown (never a subset's mean)."""
    if not values or any(v is None for v in values):
        return None
    return _mean_or_none([v for v in values if v is not None])


def _costs(
    summary: dict[str, Any], questions: list[Question], methods: list[str], primary: str
) -> list[CostPoint]:
    by_method = as_dict(summary.get("by_method"))
    efficiency = as_dict(summary.get("efficiency"))
    out = []
    for method in methods:
        ok = answers_of(questions, method)
        eff = as_dict(efficiency.get(method))
        group = as_dict(by_method.get(method))
        if eff:  # the summary's figures: None where a search did not state one
            prompt, output = (
                as_num(eff.get("avg_prompt_tokens")),
                as_num(eff.get("avg_output_tokens")),
            )
            tokens = prompt + output if prompt is not None and output is not None else None
            latency = as_num(eff.get("avg_latency"))
            calls = as_num(eff.get("avg_llm_calls"))
        else:  # no summary for this method (an older page's data): from the answers
            tokens = _all_known(
                [
                    float(a.prompt_tokens + a.output_tokens)
                    if a.prompt_tokens is not None and a.output_tokens is not None
                    else None
                    for a in ok
                ]
            )
            latency = _all_known([a.latency for a in ok])
            calls = _all_known(
                [float(a.llm_calls) if a.llm_calls is not None else None for a in ok]
            )
        cost = _all_known([a.cost_usd for a in ok])
        scale = scale_of(summary, primary)
        quality = _unit(_same(group, primary) or _mean(group, primary), scale)
        if quality.value is None and not group:
            known = [to_unit(s, scale) for a in ok if (s := a.scores.get(primary)) is not None]
            quality = Mean(_mean_or_none(known), None, len(known))
        stated = {str(k): v for k, v in as_dict(eff.get("stated")).items() if as_int(v) is not None}
        out.append(
            CostPoint(
                method=method,
                quality=quality.value,
                quality_ci95=quality.ci95,
                quality_n=quality.n,
                tokens=tokens,
                latency=latency,
                llm_calls=calls,
                cost_usd=cost,
                n=len(ok),
                stated={k: int(v) for k, v in stated.items()},
                searches=as_int(eff.get("searches")) or 0,
                replayed=as_int(eff.get("latency_replayed")) or 0,
            )
        )
    return out


def _run_status(meta: dict[str, Any]) -> RunStatus | None:
    """`metadata.run` when it names a status (absent in summaries of older gtog versions)."""
    run = as_dict(meta.get("run"))
    status = as_str(run.get("status"))
    if not status:
        return None
    return RunStatus(status.strip(), as_int(run.get("pairs_done")), as_int(run.get("pairs_total")))


def _header(
    meta: dict[str, Any],
    questions: list[Question],
    methods: list[str],
    metrics: list[str],
    partial: bool,
) -> Header:
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
    versions = {str(k): str(v) for k, v in as_dict(meta.get("versions")).items()}
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
        judge_models={str(k): str(v) for k, v in as_dict(meta.get("judge_models")).items()},
        versions=versions,
        timestamp=str(meta.get("timestamp") or "?"),
        answers=len(answers),
        fully_scored=fully,
        search_failed=failed,
        judge_failed=judge_failed,
        unscored_judgements=sum(len(a.judge_errors) for a in answers),
        partial=partial,
        run=_run_status(meta),
        notes=[str(n) for n in meta.get("notes") or [] if isinstance(n, str)],
    )


def _run_shape(meta: dict[str, Any], detailed: dict[str, Any], summary: dict[str, Any]):
    results = [r for r in detailed.get("results") or [] if isinstance(r, dict)]
    seen_methods = [m for r in results for m in as_dict(r.get("methods"))]
    methods = [str(m) for m in meta.get("methods") or []] or list(as_dict(summary.get("by_method")))
    methods += [m for m in dict.fromkeys(seen_methods) if m not in methods]
    metrics = [str(m) for m in meta.get("metrics") or []]
    if not metrics:
        metrics = list(
            dict.fromkeys(
                k
                for r in results
                for e in as_dict(r.get("methods")).values()
                for k in as_dict(as_dict(e).get("scores"))
            )
        )
    return methods, metrics


def _why(summary: dict[str, Any], methods: list[str]) -> list[WhyRow]:
    """Abstentions and failure attribution per method, when the summary has them."""
    attribution = as_dict(summary.get("attribution"))
    by_method = as_dict(summary.get("by_method"))
    out = []
    for method in methods:
        a = as_dict(attribution.get(method))
        if not a:
            continue
        group = as_dict(by_method.get(method))
        table = {
            found: {v: as_int(as_dict(as_dict(a.get("table")).get(found)).get(v)) or 0
                    for v in ("right", "wrong")}
            for found in ("found", "missed")
        }  # fmt: skip
        out.append(
            WhyRow(
                method=method,
                abstention_rate=as_num(group.get("abstention_rate")),
                answered=as_num(as_dict(group.get("answered")).get("correctness")),
                wrong=as_int(a.get("wrong")) or 0,
                retrieval=as_int(a.get("retrieval_failures")) or 0,
                generation=as_int(a.get("generation_failures")) or 0,
                unknown=as_int(a.get("unknown")) or 0,
                retrieval_share=as_num(a.get("retrieval_share")),
                table=table,
                stages={str(k): as_int(v) or 0 for k, v in as_dict(a.get("tog_stages")).items()},
                threshold=as_num(a.get("threshold")),
            )
        )
    return out


def _baseline(diff: dict[str, Any] | None, label: str) -> Baseline | None:
    """The page's view of a run-to-run diff (`gtog.eval.results._diff`)."""
    if not diff:
        return None
    rows = [
        DiffRow(
            method=str(method),
            metric=str(metric),
            n=as_int(e.get("n")) or 0,
            a=as_num(e.get("a")),
            b=as_num(e.get("b")),
            delta=as_num(e.get("delta")),
            p_holm=as_num(e.get("p_holm")),
            regression=bool(e.get("regression")),
            to_wrong=[str(q) for q in e.get("to_wrong") or []],
            to_right=[str(q) for q in e.get("to_right") or []],
        )
        for method, metrics in as_dict(diff.get("methods")).items()
        for metric, e in as_dict(metrics).items()
        if isinstance(e, dict)
    ]
    common = as_int(as_dict(diff.get("questions")).get("common")) or 0
    answers = {
        str(m): {str(q): as_dict(v) for q, v in as_dict(qs).items()}
        for m, qs in as_dict(diff.get("answers")).items()
    }
    return Baseline(label, rows, common, answers)  # type: ignore[arg-type]


def page_data(
    detailed: dict[str, Any],
    summary: dict[str, Any],
    *,
    partial: bool = False,
    diff: dict[str, Any] | None = None,
    baseline: str = "",
) -> PageData:
    """The page's figures from a run's detailed and summary results.

    `partial`: the results were rebuilt from the checkpoint of a run still going or
    interrupted (the page says so). `diff` (of this run against the run `baseline`) adds
    a section comparing the two.
    """
    meta = {**as_dict(summary.get("metadata")), **as_dict(detailed.get("metadata"))}
    if "run" in as_dict(summary.get("metadata")):  # the summary is written last: it decides
        meta["run"] = as_dict(summary.get("metadata"))["run"]
    methods, metrics = _run_shape(meta, detailed, summary)
    scales = {m: sc for m in metrics if (sc := scale_of(summary, m)) is not None}
    primary = primary_metric(metrics, scales)
    spec = as_dict(meta.get("spec"))
    versus = head_to_head(summary, spec, methods)
    criteria = list(versus.criteria) if versus is not None else None
    questions = [
        question(r, methods, metrics, primary, criteria)
        for r in detailed.get("results") or []
        if isinstance(r, dict)
    ]
    scores = _scores(summary, methods, metrics)
    return PageData(
        header=replace(
            _header(meta, questions, methods, metrics, partial),
            spend=cost_line(as_dict(summary.get("cost"))).removeprefix("cost: "),
        ),
        primary=primary,
        scores=scores,
        comparisons=_comparisons(summary),
        heat=_heat(summary, questions, methods, primary),
        costs=_costs(summary, questions, methods, primary),
        latency=spreads(questions, methods, "latency"),
        llm_calls=spreads(questions, methods, "llm_calls"),
        stage_calls=stage_calls(questions, methods),
        errors=error_counts(questions, methods),
        questions=questions,
        has_intervals=any(s.headline.ci95 is not None for s in scores),
        same_questions=any(s.same is not None for s in scores),
        common=_common(scores, metrics),
        head_to_head=versus,
        groups=group_tables(summary, spec, questions, methods, metrics),
        why=_why(summary, methods),
        baseline=_baseline(diff, baseline),
        repeats=repeats_section(detailed, summary),
        panel=panel_section(detailed, summary),
        assertions=assertion_stats(summary, methods),
        noise=noise_view(summary),
        verdict=verdict(summary, metrics),
        routing=routing_section(summary),
        calibration={
            str(metric): {str(m): b for m, b in blocks.items() if isinstance(b, dict)}
            for metric, blocks in as_dict(summary.get("calibration")).items()
            if isinstance(blocks, dict)
        },
        calibration_comparisons=[
            c for c in summary.get("calibration_comparisons") or [] if isinstance(c, dict)
        ],
        scales=scales,
    )
