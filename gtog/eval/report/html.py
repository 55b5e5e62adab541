"""The report page: one self-contained HTML file from `PageData`.

Charts are server-side SVG (gtog.eval.report.charts); a few lines of inline JavaScript only filter
the question list. A Content-Security-Policy allows nothing but this page's own style and
script (by hash): no request leaves the page, and markup inside an answer could not run
even if it were not escaped, which it is (gtog.eval.report.markup).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from importlib import resources

from gtog.eval.report.charts import (
    cost_scatter,
    error_bars,
    heat_map,
    method_colors,
    score_bars,
    spread_chart,
    stage_bars,
)
from gtog.eval.report.markup import Child, Markup, el, join
from gtog.eval.report.page import SIGNIFICANCE, Answer, CostPoint, PageData, Question

__all__ = ["render_page"]


def _asset(name: str) -> str:
    return (resources.files("gtog.eval.report") / "assets" / name).read_text(encoding="utf-8")


_CSS = _asset("report.css")
_JS = _asset("report.js")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def _csp() -> str:
    return (
        f"default-src 'none'; style-src '{_sha256(_CSS)}'; script-src '{_sha256(_JS)}'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )


def _f(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _header(data: PageData) -> Markup:
    h = data.header
    judges = sorted(set(h.judge_models.values()))
    versions = ", ".join(f"{k} {v}" for k, v in h.versions.items()) or "not recorded"
    rows: list[tuple[str, Child]] = [
        ("dataset", h.dataset),
        ("indexes", f"{len(h.indexes)}: " + ", ".join(h.indexes)),
        ("methods", ", ".join(h.methods)),
        ("metrics", ", ".join(h.metrics)),
        ("judge model", ", ".join(judges) or "–"),
        ("versions", versions),
        ("when", h.timestamp),
        (
            "answers",
            f"{h.answers} (question, method) answers: {h.fully_scored} fully scored, "
            f"{h.search_failed} failed searches, {h.judge_failed} with a failed judge "
            f"({h.unscored_judgements} judgements unscored)",
        ),
    ]
    banner = (
        el(
            "p",
            {"class": "banner"},
            "Partial results: rebuilt from the checkpoint of a run that is still going or was "
            f"interrupted; the figures cover the {h.answers} answers finished so far.",
        )
        if h.partial
        else None
    )
    nav = el(
        "nav",
        None,
        [
            el("a", {"href": f"#{anchor}"}, label)
            for anchor, label in (
                ("scores", "Scores"),
                ("heat", "Per index"),
                ("cost", "Quality vs cost"),
                ("dist", "Distributions"),
                ("questions", "Questions"),
            )
        ],
    )
    table = el(
        "table",
        {"class": "meta"},
        [el("tr", None, el("th", None, k), el("td", None, v)) for k, v in rows],
    )
    return el("header", None, el("h1", None, "gtog eval report"), banner, table, nav)


def _or_note(chart: Markup | None, note: str) -> Markup:
    return chart if chart is not None else el("p", {"class": "note"}, note)


def _scores_section(data: PageData) -> Markup:
    h = data.header
    chart = score_bars(data.scores, h.methods, h.metrics)
    by_key = {(s.method, s.metric): s for s in data.scores}
    head = el(
        "tr", None, el("th", None, "method"), [el("th", {"class": "num"}, m) for m in h.metrics]
    )
    body = []
    for method in h.methods:
        cells = []
        for metric in h.metrics:
            s = by_key.get((method, metric))
            text = "–"
            if s is not None and s.mean is not None:
                text = f"{s.mean:.3f}"
                if s.ci95:
                    text += f" [{s.ci95[0]:.2f}, {s.ci95[1]:.2f}]"
                text += f" ({s.scored}/{s.n})"
            elif s is not None:
                text = f"unscored (0/{s.n})"
            cells.append(el("td", {"class": "num"}, text))
        body.append(el("tr", None, el("th", None, method), cells))
    intervals = (
        "Bars: mean over the answers each metric scored; whiskers: 95% intervals."
        if data.has_intervals
        else "Bars: mean over the answers each metric scored. This summary has no 95% "
        "intervals, so the means are shown without them."
    )
    return join(
        [
            el("h2", {"id": "scores"}, "Score per method and metric"),
            el("p", {"class": "note"}, intervals + " (k/n) = answers scored / answers."),
            _or_note(chart, "No answer was scored."),
            el("table", {"class": "grid"}, head, body),
            el("h3", None, "Which differences are significant"),
            _comparisons(data),
        ]
    )


def _comparisons(data: PageData) -> Markup:
    if not data.comparisons:
        return el(
            "p",
            {"class": "note"},
            "This summary has no paired comparisons between methods, so no difference is "
            "called significant.",
        )
    head = el(
        "tr",
        None,
        [
            el(
                "th",
                {"class": "num" if c in ("n", "a", "b", "a − b", "p", "p (Holm)") else None},
                c,
            )
            for c in (
                "metric",
                "a",
                "b",
                "n",
                "mean a",
                "mean b",
                "a − b",
                "95% interval",
                "p",
                "p (Holm)",
                "test",
                "",
            )
        ],
    )
    rows = []
    for c in data.comparisons:
        ci = f"[{c.ci95[0]:.3f}, {c.ci95[1]:.3f}]" if c.ci95 else "–"
        rows.append(
            el(
                "tr",
                None,
                el("td", None, c.metric),
                el("td", None, c.a),
                el("td", None, c.b),
                el("td", {"class": "num"}, "–" if c.n is None else str(c.n)),
                el("td", {"class": "num"}, _f(c.a_mean, 3)),
                el("td", {"class": "num"}, _f(c.b_mean, 3)),
                el("td", {"class": "num"}, _f(c.diff, 3)),
                el("td", None, ci),
                el("td", {"class": "num"}, _f(c.p_value, 4)),
                el("td", {"class": "num"}, _f(c.p_holm, 4)),
                el("td", None, c.test or "–"),
                el(
                    "td",
                    {"class": "sig"} if c.significant else None,
                    "significant" if c.significant else "not significant",
                ),
            )
        )
    return join(
        [
            el(
                "p",
                {"class": "note"},
                f"Paired on the questions both methods answered; significant = p (Holm-adjusted "
                f"where given) below {SIGNIFICANCE:g}.",
            ),
            el("table", {"class": "grid"}, head, rows),
        ]
    )


def _cost_section(data: PageData) -> Markup:
    colors = method_colors(data.header.methods)
    metric = data.primary

    def panel(x_of: Callable[[CostPoint], float | None], label: str, note: str) -> Markup:
        return el(
            "div", None, _or_note(cost_scatter(data.costs, x_of, label, metric, colors), note)
        )

    rows = [
        el(
            "tr",
            None,
            el("th", None, p.method),
            el("td", {"class": "num"}, _f(p.quality, 3)),
            el("td", {"class": "num"}, _f(p.tokens, 0)),
            el("td", {"class": "num"}, _f(p.latency, 2)),
            el("td", {"class": "num"}, _f(p.llm_calls, 1)),
            el("td", {"class": "num"}, "unknown" if p.cost_usd is None else f"{p.cost_usd:.5f}"),
            el("td", {"class": "num"}, str(p.n)),
        )
        for p in data.costs
    ]
    head = el(
        "tr",
        None,
        el("th", None, "method"),
        [
            el("th", {"class": "num"}, c)
            for c in (
                f"mean {metric}",
                "tokens / answer",
                "seconds / answer",
                "LLM calls / answer",
                "USD / answer",
                "searches",
            )
        ],
    )
    return join(
        [
            el("h2", {"id": "cost"}, "Quality vs cost"),
            el(
                "p",
                {"class": "note"},
                f"Each method's mean {metric} against its mean cost per answer (search only, "
                "judging excluded; averages over successful searches).",
            ),
            el(
                "div",
                {"class": "row"},
                panel(lambda p: p.tokens, "tokens per answer (in + out)", "No token counts."),
                panel(lambda p: p.latency, "seconds per answer", "No latencies."),
                panel(
                    lambda p: p.cost_usd,
                    "USD per answer",
                    "USD unknown: no price is known for these models.",
                ),
            ),
            el("table", {"class": "grid"}, head, rows),
        ]
    )


def _dist_section(data: PageData) -> Markup:
    colors = method_colors(data.header.methods)
    error_rows = [
        el(
            "tr",
            None,
            el("td", None, e.method),
            el("td", None, e.where),
            el("td", None, e.kind),
            el("td", {"class": "num"}, str(e.count)),
            el("td", {"class": "text"}, e.example),
        )
        for e in data.errors
    ]
    errors = (
        join(
            [
                error_bars(data.errors, colors),
                el(
                    "details",
                    None,
                    el("summary", None, "Error messages"),
                    el(
                        "table",
                        {"class": "grid"},
                        el(
                            "tr",
                            None,
                            [
                                el("th", None, c)
                                for c in ("method", "where", "kind", "count", "example")
                            ],
                        ),
                        error_rows,
                    ),
                ),
            ]
        )
        if data.errors
        else el("p", {"class": "note"}, "No failed searches or judge calls.")
    )
    return join(
        [
            el("h2", {"id": "dist"}, "Distributions"),
            el("h3", None, "Latency per answer"),
            _or_note(spread_chart(data.latency, "seconds per answer", colors), "No latencies."),
            el("h3", None, "LLM calls per answer"),
            _or_note(
                spread_chart(data.llm_calls, "LLM calls per answer", colors), "No call counts."
            ),
            el(
                "p", {"class": "note"}, "Split by stage (ToG: linking, pruning, reasoning, answer):"
            ),
            _or_note(stage_bars(data.stage_calls, data.header.methods), "No per-stage counts."),
            el("h3", None, "Errors by kind"),
            errors,
        ]
    )


def _badge(answer: Answer, metric: str) -> Markup:
    if answer.error:
        return el(
            "span", {"class": "badge b-err", "title": answer.error}, f"{answer.method} failed"
        )
    score = answer.scores.get(metric)
    if score is None:
        return el("span", {"class": "badge b-na"}, f"{answer.method} unscored")
    cls = "b-ok" if score >= 0.5 else "b-bad"
    mark = "✓" if score >= 0.5 else "✗"
    return el(
        "span", {"class": f"badge {cls}", "title": f"{metric} {score:g}"}, f"{answer.method} {mark}"
    )


def _answer(a: Answer) -> Markup:
    score_rows = []
    for metric, score in a.scores.items():
        if score is None:
            why = a.judge_errors.get(metric, "unscored")
            score_rows.append(
                el(
                    "tr",
                    None,
                    el("td", None, metric),
                    el("td", {"class": "err"}, "unscored"),
                    el("td", {"class": "err text"}, why),
                )
            )
        else:
            score_rows.append(
                el(
                    "tr",
                    None,
                    el("td", None, metric),
                    el("td", {"class": "num"}, f"{score:g}"),
                    el("td", {"class": "text"}, a.reasons.get(metric) or ""),
                )
            )
    eff = []
    if a.latency is not None:
        eff.append(f"{a.latency:.2f} s")
    if a.llm_calls is not None:
        calls = f"{a.llm_calls} LLM calls"
        if len(a.calls_by_stage) > 1:
            calls += " (" + ", ".join(f"{k} {v}" for k, v in a.calls_by_stage.items()) + ")"
        eff.append(calls)
    if a.prompt_tokens is not None:
        eff.append(f"{a.prompt_tokens} tokens in, {a.output_tokens} out")
    if a.cost_usd is not None:
        eff.append(f"${a.cost_usd:.5f}")
    return el(
        "section",
        {"class": "ans"},
        el("h4", None, a.method),
        el("div", {"class": "resp text"}, a.response)
        if a.response is not None
        else el("div", {"class": "resp text note"}, "(no answer)"),
        el("p", {"class": "err text"}, "Search failed: ", a.error) if a.error else None,
        el("table", {"class": "grid"}, score_rows) if score_rows else None,
        el("p", {"class": "eff"}, " · ".join(eff)) if eff else None,
        el(
            "details",
            None,
            el("summary", None, f"Reasoning paths ({len(a.paths)})"),
            el("ol", {"class": "paths"}, [el("li", {"class": "text"}, p) for p in a.paths]),
        )
        if a.paths
        else None,
        el(
            "details",
            None,
            el("summary", None, f"Context it answered from ({len(a.context):,} characters)"),
            el("pre", None, a.context),
            el("p", {"class": "eff"}, "Text units: ", ", ".join(a.source_ids))
            if a.source_ids
            else None,
        )
        if a.context
        else None,
    )


def _question(q: Question, metric: str) -> Markup:
    return el(
        "details",
        {
            "class": "q",
            "id": f"q-{q.qid}",
            "data-index": q.index_key,
            "data-disagree": "1" if q.disagree else "0",
            "data-failed": "1" if q.failed else "0",
            "data-wrong": "1" if q.wrong else "0",
        },
        el(
            "summary",
            None,
            el("span", {"class": "qid"}, q.qid),
            el("span", {"class": "idx"}, q.index_key),
            el("span", {"class": "text"}, q.question),
            [_badge(a, metric) for a in q.answers],
        ),
        el(
            "div",
            {"class": "qbody"},
            el(
                "table",
                {"class": "meta"},
                el(
                    "tr",
                    None,
                    el("th", None, "ground truth"),
                    el("td", {"class": "text"}, q.ground_truth),
                ),
                el(
                    "tr",
                    None,
                    el("th", None, "gold evidence"),
                    el("td", {"class": "text"}, q.gold_evidence)
                    if q.gold_evidence
                    else el("td", {"class": "note"}, "none in the dataset"),
                ),
            ),
            el("div", {"class": "answers"}, [_answer(a) for a in q.answers]),
        ),
    )


def _questions_section(data: PageData) -> Markup:
    keys = list(dict.fromkeys(q.index_key for q in data.questions))
    counts = {
        "disagree": sum(q.disagree for q in data.questions),
        "failed": sum(q.failed for q in data.questions),
        "wrong": sum(q.wrong for q in data.questions),
    }
    labels = {
        "disagree": "methods disagree",
        "failed": "a search or judge failed",
        "wrong": f"a wrong answer ({data.primary} < 0.5)",
    }
    form = el(
        "form",
        {"id": "filters"},
        el(
            "label",
            None,
            "index ",
            el(
                "select",
                {"name": "index"},
                el("option", {"value": ""}, f"all ({len(keys)})"),
                [el("option", {"value": k}, k) for k in keys],
            ),
        ),
        [
            el(
                "label",
                None,
                el("input", {"type": "checkbox", "name": f}),
                f" {labels[f]} ({counts[f]})",
            )
            for f in ("disagree", "failed", "wrong")
        ],
        el("span", {"id": "shown", "class": "note"}, f"{len(data.questions)} questions"),
    )
    return join(
        [
            el("h2", {"id": "questions"}, "Every question"),
            el(
                "p",
                {"class": "note"},
                f"Badges: {data.primary} per method. Open a question for the ground truth, "
                "each answer with its judge scores and reasons, its cost, ToG's reasoning paths "
                "and the context it answered from.",
            ),
            form,
            [_question(q, data.primary) for q in data.questions],
        ]
    )


def render_page(data: PageData) -> str:
    """The whole page as one HTML string (UTF-8, no external references)."""
    h = data.header
    heat = heat_map(data.heat, h.methods, data.primary)
    body = el(
        "body",
        None,
        _header(data),
        el(
            "main",
            None,
            _scores_section(data),
            el("h2", {"id": "heat"}, f"Mean {data.primary} per index and method"),
            _or_note(heat, "No index was scored."),
            _cost_section(data),
            _dist_section(data),
            _questions_section(data),
            el("p", {"class": "note"}, "Written by gtog eval. This file needs no network."),
        ),
        el("script", None, Markup(_JS)),
    )
    head = el(
        "head",
        None,
        el("meta", {"charset": "utf-8"}),
        el("meta", {"http-equiv": "Content-Security-Policy", "content": _csp()}),
        el("meta", {"name": "viewport", "content": "width=device-width, initial-scale=1"}),
        el("title", None, f"gtog eval report: {', '.join(h.methods)} on {len(h.indexes)} indexes"),
        el("style", None, Markup(_CSS)),
    )
    return "<!DOCTYPE html>\n" + el("html", {"lang": "en"}, head, body) + "\n"
