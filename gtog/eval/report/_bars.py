"""Bar and grid charts: scores per method and metric, the index x method heat map, LLM calls
by stage, failures by kind (server-side SVG, see gtog.eval.report._svg)."""

from __future__ import annotations

import itertools

from gtog.eval.report._markup import Markup, el
from gtog.eval.report._models import ErrorCount, HeatCell, Mean, MetricScore
from gtog.eval.report._svg import (
    chart,
    fmt,
    legend,
    line,
    method_colors,
    short,
    text,
    ticks,
    x_axis,
)

__all__ = ["FIT", "error_bars", "heat_map", "score_bars", "stage_bars"]

FIT = 360
"""The score chart's width: it fits whole in a 400 px window (the page's margins and a
scroll bar apart), so no bar is cut on a phone."""

_STAGES = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1")
_VIRIDIS = (
    (0.0, "#440154"),
    (0.25, "#3b528b"),
    (0.5, "#21918c"),
    (0.75, "#5ec962"),
    (1.0, "#fde725"),
)


def _whisker(lo: float, hi: float, mid: float) -> list[Markup]:
    return [
        line(lo, mid, hi, mid, "#222", 1.5),
        line(lo, mid - 4, lo, mid + 4, "#222", 1.5),
        line(hi, mid - 4, hi, mid + 4, "#222", 1.5),
    ]


def score_bars(
    scores: list[MetricScore],
    methods: list[str],
    metrics: list[str],
    common: dict[str, int] | None = None,
    scales: dict[str, tuple[float, float]] | None = None,
) -> Markup | None:
    """Headline mean per method and metric, with 95% interval whiskers where known.

    With `common` (metric -> questions every method answered) the means are same-question
    means and each metric is labelled with its n; without, each method's own-answers mean.
    A graded metric (`scales`) is drawn as 0-1, its label saying so.
    """
    scales = scales or {}
    if not any(s.headline.value is not None for s in scores):
        return None
    colors = method_colors(methods)
    by_key = {(s.method, s.metric): s for s in scores}
    # the whole chart fits a phone's page (FIT px); the intervals are its whiskers (their
    # figures in each bar's tooltip and in the table under it)
    partial = not common and any(
        s.headline.value is not None and s.headline.n != s.answers for s in scores
    )
    labels = [*metrics, *(f"{lo:g}-{hi:g} as 0-1" for lo, hi in scales.values())]
    left = min(max(60, 7 * max(len(m) for m in labels) + 16), 150)
    right = 40 + (56 if partial else 0)
    plot, row, gap = FIT - left - right, 16, 14
    marks, legend_y = legend(colors, left, 14, FIT - 4)
    top = legend_y + 16
    height = top + len(metrics) * (len(methods) * row + gap) + 34
    bottom = height - 34
    marks += x_axis(left, plot, top - 4, bottom, [0, 0.25, 0.5, 0.75, 1.0], "score (0-1)")
    y = top
    for metric in metrics:
        label_y = y + len(methods) * row / 2 + 4
        marks.append(text(left - 8, label_y, short(metric, (left - 16) // 7), "end", "label"))
        scale = scales.get(metric)
        shown = f"{scale[0]:g}-{scale[1]:g} as 0-1" if scale is not None else ""
        if common and metric in common:
            shown = " · ".join(filter(None, (f"n = {common[metric]}", shown)))
        if shown:
            marks.append(text(left - 8, label_y + 13, shown, "end", "tick"))
        for method in methods:
            s = by_key.get((method, metric))
            mean = s.headline if s is not None else None
            mid = y + row / 2
            if mean is not None and mean.value is not None and scale is not None:
                lo, span = scale[0], scale[1] - scale[0]
                mean = Mean(
                    (mean.value - lo) / span,
                    ((mean.ci95[0] - lo) / span, (mean.ci95[1] - lo) / span) if mean.ci95 else None,
                    mean.n,
                )
            if s is None or mean is None or mean.value is None:
                why = "no question scored for every method" if common else "unscored"
                marks.append(text(left + 4, mid + 4, f"{method}: {why}", cls="note"))
            else:
                if common:
                    tip = f"over the {mean.n} questions every method answered"
                else:
                    tip = f"over {mean.n} of {s.answers} answers"
                tip = f"{method} {metric}: {mean.value:.3f} {tip}"
                if mean.ci95:
                    tip += f"; 95% interval {mean.ci95[0]:.3f}-{mean.ci95[1]:.3f}"
                marks.append(
                    el(
                        "rect",
                        {
                            "class": "mark",
                            "x": left,
                            "y": y + 2,
                            "width": max(plot * mean.value, 1.0),
                            "height": row - 4,
                            "fill": colors[method],
                        },
                        el("title", None, tip),
                    )
                )
                label = f"{mean.value:.2f}"
                if mean.ci95:
                    marks += _whisker(*(left + plot * v for v in mean.ci95), mid)
                if not common and mean.n != s.answers:
                    label += f" ({mean.n}/{s.answers})"
                marks.append(text(left + plot + 8, mid + 4, label, cls="value"))
            y += row
        y += gap
    title = "Score per method and metric"
    if common:
        title += " over the questions every method answered"
    return chart(FIT, height, title, *marks)


def _mix(a: str, b: str, t: float) -> str:
    ca = [int(a[i : i + 2], 16) for i in (1, 3, 5)]
    cb = [int(b[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(ca, cb, strict=True))


def _viridis(value: float) -> str:
    value = min(max(value, 0.0), 1.0)
    for (p0, c0), (p1, c1) in itertools.pairwise(_VIRIDIS):
        if value <= p1:
            return _mix(c0, c1, (value - p0) / (p1 - p0))
    return _VIRIDIS[-1][1]


def heat_map(
    cells: list[HeatCell], methods: list[str], metric: str, same_questions: bool = False
) -> Markup | None:
    """Index x method grid of the mean primary score (grey: nothing scored).

    `same_questions`: the cells are means over the questions of the index every method
    answered ((k) = questions), else over each method's own scored answers ((k) = answers).
    """
    if not cells:
        return None
    keys = list(dict.fromkeys(c.index_key for c in cells))
    by_key = {(c.index_key, c.method): c for c in cells}
    label_w = min(200, 20 + 7 * max(len(k) for k in keys))
    cw, ch, top = 100, 28, 26
    if same_questions:
        key_text = (
            f"colour: mean {metric} over the questions every method answered; (k) = questions"
        )
        empty, nothing = "no common", "no question every method answered was scored here"
    else:
        key_text = f"colour: mean {metric} over each method's scored answers; (k) = answers"
        empty, nothing = "unscored", "nothing scored"
    width = max(label_w + cw * len(methods) + 20, label_w + 7 * len(key_text) + 16)
    height = top + ch * len(keys) + 58
    marks: list[Markup] = []
    for j, method in enumerate(methods):
        marks.append(text(label_w + cw * j + cw / 2, top - 8, method, "middle", "label"))
    for i, key in enumerate(keys):
        y = top + ch * i
        marks.append(
            el(
                "text",
                {"x": label_w - 8, "y": y + ch / 2 + 4, "text-anchor": "end", "class": "label"},
                short(key, 26),
                el("title", None, key),
            )
        )
        for j, method in enumerate(methods):
            cell = by_key.get((key, method))
            x = label_w + cw * j
            if cell is None or cell.mean is None:
                fill, label, ink = "#e4e4e4", empty, "ink-grey"
                tip = f"{key} / {method}: {nothing}"
            else:
                fill, label = _viridis(cell.mean), f"{cell.mean:.2f} ({cell.scored})"
                ink = "ink-light" if cell.mean < 0.6 else "ink-dark"
                over = "questions every method answered" if same_questions else f"of {cell.n}"
                tip = f"{key} / {method}: {metric} {cell.mean:.3f} over {cell.scored} {over}"
            marks.append(
                el(
                    "rect",
                    {
                        "class": "mark",
                        "x": x + 1,
                        "y": y + 1,
                        "width": cw - 2,
                        "height": ch - 2,
                        "fill": fill,
                    },
                    el("title", None, tip),
                )
            )
            marks.append(
                el(
                    "text",
                    {"x": x + cw / 2, "y": y + ch / 2 + 4, "text-anchor": "middle", "class": ink},
                    label,
                )
            )
    ly = top + ch * len(keys) + 14
    for k in range(11):
        marks.append(
            el(
                "rect",
                {
                    "x": label_w + 14 * k,
                    "y": ly,
                    "width": 14,
                    "height": 10,
                    "fill": _viridis(k / 10),
                },
            )
        )
    marks.append(text(label_w - 6, ly + 9, "0", "end", "tick"))
    marks.append(text(label_w + 14 * 11 + 6, ly + 9, "1", cls="tick"))
    marks.append(text(label_w, ly + 26, key_text, cls="tick"))
    return chart(width, height, f"Mean {metric} per index and method", *marks)


def stage_bars(stage_calls: dict[str, dict[str, float]], methods: list[str]) -> Markup | None:
    """Mean LLM calls per answer, split by the stage that made them (ToG's stages)."""
    rows = [m for m in methods if m in stage_calls]
    if not rows:
        return None
    stages = list(dict.fromkeys(s for m in rows for s in stage_calls[m]))
    colors = {s: _STAGES[i % len(_STAGES)] for i, s in enumerate(stages)}
    left, plot, row = 80, 440, 26
    hi = ticks(max(sum(stage_calls[m].values()) for m in rows) * 1.05)
    marks, legend_y = legend(colors, left, 14)
    top = legend_y + 16
    height = top + row * len(rows) + 40
    marks += x_axis(left, plot, top, top + row * len(rows), hi, "mean LLM calls per answer")
    scale = plot / (hi[-1] or 1.0)
    for i, method in enumerate(rows):
        y = top + row * i
        marks.append(text(left - 8, y + row / 2 + 4, method, "end", "label"))
        x = float(left)
        for stage, value in stage_calls[method].items():
            if value <= 0:
                continue
            marks.append(
                el(
                    "rect",
                    {
                        "class": "mark",
                        "x": x,
                        "y": y + 4,
                        "width": value * scale,
                        "height": row - 8,
                        "fill": colors[stage],
                    },
                    el("title", None, f"{method} / {stage}: {value:.2f} calls per answer"),
                )
            )
            x += value * scale
        total = sum(stage_calls[method].values())
        marks.append(text(x + 6, y + row / 2 + 4, fmt(total), cls="value"))
    return chart(640, height, "LLM calls per answer by stage", *marks)


def error_bars(errors: list[ErrorCount], colors: dict[str, str]) -> Markup | None:
    """Failures per method, place (search or judge metric) and kind."""
    if not errors:
        return None
    left, plot, row, top = 330, 250, 22, 6
    marks_at = ticks(max(e.count for e in errors))
    scale = plot / (marks_at[-1] or 1.0)
    height = top + row * len(errors) + 40
    marks: list[Markup] = x_axis(left, plot, top, top + row * len(errors), marks_at, "count")
    for i, e in enumerate(errors):
        y = top + row * i
        marks.append(
            text(
                left - 8,
                y + row / 2 + 4,
                short(f"{e.method} · {e.where} · {e.kind}", 48),
                "end",
                "label",
            )
        )
        marks.append(
            el(
                "rect",
                {
                    "class": "mark",
                    "x": left,
                    "y": y + 3,
                    "width": max(e.count * scale, 1.5),
                    "height": row - 6,
                    "fill": colors.get(e.method, "#444"),
                },
                el("title", None, f"{e.count} x, e.g. {short(e.example, 300)}"),
            )
        )
        marks.append(text(left + e.count * scale + 6, y + row / 2 + 4, str(e.count), cls="value"))
    return chart(640, height, "Failures by method and kind", *marks)
