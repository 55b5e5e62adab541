"""Server-side SVG charts for the report: no JavaScript to draw, nothing fetched.

Each function takes page data (gtog.eval.report.page) and returns one `<svg class="chart">` as
Markup, or None when there is nothing to draw (the page then says so in words). Every
data mark carries `class="mark"` and a `<title>` tooltip; all text is escaped.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

from gtog.eval.report.markup import Markup, el
from gtog.eval.report.page import CostPoint, ErrorCount, HeatCell, MetricScore, Spread

__all__ = [
    "cost_scatter",
    "error_bars",
    "heat_map",
    "method_colors",
    "score_bars",
    "spread_chart",
    "stage_bars",
]

_PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000")
_STAGES = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1")
_VIRIDIS = (
    (0.0, "#440154"),
    (0.25, "#3b528b"),
    (0.5, "#21918c"),
    (0.75, "#5ec962"),
    (1.0, "#fde725"),
)
_GRID = "#dddddd"
_MAX_DOTS = 400


def method_colors(methods: Sequence[str]) -> dict[str, str]:
    """A colour-blind-safe colour per method (Okabe-Ito), stable for the page."""
    return {m: _PALETTE[i % len(_PALETTE)] for i, m in enumerate(methods)}


def _svg(width: int, height: float, label: str, *children: Markup) -> Markup:
    return el(
        "svg",
        {
            "class": "chart",
            "viewBox": f"0 0 {width} {math.ceil(height)}",
            "width": width,
            "height": math.ceil(height),
            "role": "img",
            "aria-label": label,
        },
        el("title", None, label),
        *children,
    )


def _text(x: float, y: float, text: str, anchor: str = "start", cls: str | None = None) -> Markup:
    return el("text", {"x": x, "y": y, "text-anchor": anchor, "class": cls}, text)


def _line(
    x1: float, y1: float, x2: float, y2: float, stroke: str = _GRID, width: float = 1.0
) -> Markup:
    return el(
        "line", {"x1": x1, "y1": y1, "x2": x2, "y2": y2, "stroke": stroke, "stroke-width": width}
    )


def _ticks(hi: float, count: int = 5) -> list[float]:
    """Round tick values from 0 to at least `hi`."""
    if hi <= 0 or not math.isfinite(hi):
        return [0.0, 1.0]
    raw = hi / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(s * mag for s in (1, 2, 2.5, 5, 10) if s * mag >= raw)
    n = math.ceil(hi / step - 1e-9)
    return [round(i * step, 10) for i in range(n + 1)]


def _fmt(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}".rstrip("0").rstrip(".")
    if abs(value) >= 0.01:
        return f"{value:.2f}".rstrip("0").rstrip(".")
    return f"{value:.2g}"


def _x_axis(
    left: float, width: float, top: float, bottom: float, ticks: list[float], label: str
) -> list[Markup]:
    hi = ticks[-1] or 1.0
    out = []
    for t in ticks:
        x = left + width * t / hi
        out.append(_line(x, top, x, bottom))
        out.append(_text(x, bottom + 14, _fmt(t), "middle", "tick"))
    out.append(_text(left + width / 2, bottom + 30, label, "middle", "axis"))
    return out


def _legend(
    colors: dict[str, str], x0: float, y: float, right: float = 630
) -> tuple[list[Markup], float]:
    """Colour keys in rows that wrap at `right`; returns the marks and the last row's y."""
    out = []
    x = x0
    for name, color in colors.items():
        width = 24 + 7 * len(name)
        if x > x0 and x + width > right:
            x, y = x0, y + 18
        out.append(el("rect", {"x": x, "y": y - 9, "width": 10, "height": 10, "fill": color}))
        out.append(_text(x + 14, y, name))
        x += width
    return out, y


def score_bars(scores: list[MetricScore], methods: list[str], metrics: list[str]) -> Markup | None:
    """Mean per method and metric, with 95% interval whiskers where the summary has them."""
    if not any(s.mean is not None for s in scores):
        return None
    colors = method_colors(methods)
    by_key = {(s.method, s.metric): s for s in scores}
    left, plot, row, gap = 110, 330, 16, 14
    marks, legend_y = _legend(colors, left, 14)
    top = legend_y + 16
    height = top + len(metrics) * (len(methods) * row + gap) + 34
    bottom = height - 34
    marks += _x_axis(left, plot, top - 4, bottom, [0, 0.25, 0.5, 0.75, 1.0], "score (0-1)")
    y = top
    for metric in metrics:
        marks.append(_text(left - 8, y + len(methods) * row / 2 + 4, metric, "end", "label"))
        for method in methods:
            s = by_key.get((method, metric))
            mid = y + row / 2
            if s is None or s.mean is None:
                marks.append(_text(left + 4, mid + 4, f"{method}: unscored", cls="note"))
            else:
                tip = f"{method} {metric}: {s.mean:.3f} over {s.scored} of {s.n} answers"
                if s.ci95:
                    tip += f"; 95% interval {s.ci95[0]:.3f}-{s.ci95[1]:.3f}"
                marks.append(
                    el(
                        "rect",
                        {
                            "class": "mark",
                            "x": left,
                            "y": y + 2,
                            "width": max(plot * s.mean, 1.0),
                            "height": row - 4,
                            "fill": colors[method],
                        },
                        el("title", None, tip),
                    )
                )
                label = f"{s.mean:.2f}"
                if s.ci95:
                    lo, hi = (left + plot * v for v in s.ci95)
                    marks += [
                        _line(lo, mid, hi, mid, "#222", 1.5),
                        _line(lo, mid - 4, lo, mid + 4, "#222", 1.5),
                        _line(hi, mid - 4, hi, mid + 4, "#222", 1.5),
                    ]
                    label += f"  [{s.ci95[0]:.2f}, {s.ci95[1]:.2f}]"
                if s.scored != s.n:
                    label += f"  ({s.scored}/{s.n} scored)"
                marks.append(_text(left + plot + 8, mid + 4, label, cls="value"))
            y += row
        y += gap
    return _svg(640, height, "Score per method and metric", *marks)


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


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def heat_map(cells: list[HeatCell], methods: list[str], metric: str) -> Markup | None:
    """Index x method grid of the mean primary score (grey: nothing scored)."""
    if not cells:
        return None
    keys = list(dict.fromkeys(c.index_key for c in cells))
    by_key = {(c.index_key, c.method): c for c in cells}
    label_w = min(200, 20 + 7 * max(len(k) for k in keys))
    cw, ch, top = 100, 28, 26
    key_text = f"1    colour: mean {metric}; (k) = answers scored"
    width = max(label_w + cw * len(methods) + 20, label_w + 14 * 11 + 16 + 7 * len(key_text))
    height = top + ch * len(keys) + 44
    marks: list[Markup] = []
    for j, method in enumerate(methods):
        marks.append(_text(label_w + cw * j + cw / 2, top - 8, method, "middle", "label"))
    for i, key in enumerate(keys):
        y = top + ch * i
        marks.append(
            el(
                "text",
                {"x": label_w - 8, "y": y + ch / 2 + 4, "text-anchor": "end", "class": "label"},
                _short(key, 26),
                el("title", None, key),
            )
        )
        for j, method in enumerate(methods):
            cell = by_key.get((key, method))
            x = label_w + cw * j
            if cell is None or cell.mean is None:
                fill, text, ink = "#e4e4e4", "unscored", "ink-grey"
                tip = f"{key} / {method}: nothing scored"
            else:
                fill, text = _viridis(cell.mean), f"{cell.mean:.2f} ({cell.scored})"
                ink = "ink-light" if cell.mean < 0.6 else "ink-dark"
                tip = f"{key} / {method}: {metric} {cell.mean:.3f} over {cell.scored} of {cell.n}"
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
                    text,
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
    marks.append(_text(label_w - 6, ly + 9, "0", "end", "tick"))
    marks.append(
        _text(
            label_w + 14 * 11 + 6,
            ly + 9,
            key_text,
            cls="tick",
        )
    )
    return _svg(width, height, f"Mean {metric} per index and method", *marks)


Box = tuple[float, float, float, float]


def _overlaps(box: Box, others: list[Box]) -> bool:
    x0, x1, y0, y1 = box
    return any(x0 < b and a < x1 and y0 < d and c < y1 for a, b, c, d in others)


def cost_scatter(
    points: list[CostPoint],
    x_of: Callable[[CostPoint], float | None],
    x_label: str,
    metric: str,
    colors: dict[str, str],
) -> Markup | None:
    """Each method's mean quality (y) against a mean cost per answer (x)."""
    shown = [(p, x) for p in points if (x := x_of(p)) is not None and p.quality is not None]
    if not shown:
        return None
    left, top, pw, ph = 44, 12, 230, 160
    ticks = _ticks(max(x for _, x in shown) * 1.15)
    marks: list[Markup] = _x_axis(left, pw, top, top + ph, ticks, x_label)
    for t in (0, 0.25, 0.5, 0.75, 1.0):
        y = top + ph * (1 - t)
        marks += [_line(left, y, left + pw, y), _text(left - 6, y + 4, _fmt(t), "end", "tick")]
    marks.append(
        el(
            "text",
            {
                "x": 12,
                "y": top + ph / 2,
                "class": "axis",
                "text-anchor": "middle",
                "transform": f"rotate(-90 12 {top + ph / 2})",
            },
            f"mean {metric}",
        )
    )
    hi = ticks[-1] or 1.0
    dots = [(left + pw * x / hi, top + ph * (1 - (p.quality or 0.0))) for p, x in shown]
    taken: list[Box] = [(cx - 6, cx + 6, cy - 6, cy + 6) for cx, cy in dots]
    for (p, x), (cx, cy) in zip(shown, dots, strict=True):
        assert p.quality is not None
        if p.quality_ci95:
            lo_y, hi_y = (top + ph * (1 - v) for v in p.quality_ci95)
            marks.append(_line(cx, lo_y, cx, hi_y, colors[p.method], 2))
        marks.append(
            el(
                "circle",
                {"class": "mark", "cx": cx, "cy": cy, "r": 6, "fill": colors[p.method]},
                el("title", None, f"{p.method}: {metric} {p.quality:.3f}, {x_label} {_fmt(x)}"),
            )
        )
    for (p, _), (cx, cy) in zip(shown, dots, strict=True):
        width = 7 * len(p.method)
        candidates = [
            (cx + 9, cy + 4),
            (cx - 9 - width, cy + 4),
            (cx - width / 2, cy - 10),
            (cx - width / 2, cy + 19),
            (cx + 9, cy + 17),
            (cx - 9 - width, cy + 17),
            (cx + 9, cy - 9),
        ]

        tx, ty = candidates[0]
        for x0, base in candidates:
            box = (x0, x0 + width, base - 10, base + 2)
            if x0 >= 0 and box[1] <= left + pw + 14 and not _overlaps(box, taken):
                tx, ty = x0, base
                break
        taken.append((tx, tx + width, ty - 10, ty + 2))
        marks.append(_text(tx, ty, p.method, cls="label"))
    return _svg(290, top + ph + 40, f"mean {metric} vs {x_label}", *marks)


def spread_chart(spreads: list[Spread], label: str, colors: dict[str, str]) -> Markup | None:
    """Per-answer values per method: dots, a 25-75% box, the median and 10-90% whiskers."""
    if not spreads:
        return None
    left, plot, row, top = 80, 480, 40, 10
    ticks = _ticks(max(max(s.values) for s in spreads) * 1.05)
    hi = ticks[-1] or 1.0
    height = top + row * len(spreads) + 40
    bottom = top + row * len(spreads)
    marks: list[Markup] = _x_axis(left, plot, top, bottom, ticks, label)

    def sx(v: float) -> float:
        return left + plot * v / hi

    for i, s in enumerate(spreads):
        mid = top + row * i + row / 2
        color = colors.get(s.method, "#444")
        marks.append(_text(left - 8, mid + 4, s.method, "end", "label"))
        marks.append(_line(sx(s.p10), mid, sx(s.p90), mid, "#555", 1))
        tip = (
            f"{s.method}: median {_fmt(s.p50)}, middle half {_fmt(s.p25)}-{_fmt(s.p75)}, "
            f"10-90% {_fmt(s.p10)}-{_fmt(s.p90)}, {len(s.values)} answers"
        )
        marks.append(
            el(
                "rect",
                {
                    "class": "mark",
                    "x": sx(s.p25),
                    "y": mid - 9,
                    "width": max(sx(s.p75) - sx(s.p25), 1.5),
                    "height": 18,
                    "fill": color,
                    "fill-opacity": 0.25,
                    "stroke": color,
                },
                el("title", None, tip),
            )
        )
        marks.append(_line(sx(s.p50), mid - 9, sx(s.p50), mid + 9, color, 2.5))
        if len(s.values) <= _MAX_DOTS:
            for k, v in enumerate(s.values):
                jitter = ((k * 7919) % 13 - 6) * 1.1
                marks.append(
                    el(
                        "circle",
                        {
                            "cx": sx(v),
                            "cy": mid + jitter,
                            "r": 2.2,
                            "fill": color,
                            "fill-opacity": 0.6,
                        },
                    )
                )
    return _svg(640, height, label, *marks)


def stage_bars(stage_calls: dict[str, dict[str, float]], methods: list[str]) -> Markup | None:
    """Mean LLM calls per answer, split by the stage that made them (ToG's stages)."""
    rows = [m for m in methods if m in stage_calls]
    if not rows:
        return None
    stages = list(dict.fromkeys(s for m in rows for s in stage_calls[m]))
    colors = {s: _STAGES[i % len(_STAGES)] for i, s in enumerate(stages)}
    left, plot, row = 80, 440, 26
    hi = _ticks(max(sum(stage_calls[m].values()) for m in rows) * 1.05)
    marks, legend_y = _legend(colors, left, 14)
    top = legend_y + 16
    height = top + row * len(rows) + 40
    marks += _x_axis(left, plot, top, top + row * len(rows), hi, "mean LLM calls per answer")
    scale = plot / (hi[-1] or 1.0)
    for i, method in enumerate(rows):
        y = top + row * i
        marks.append(_text(left - 8, y + row / 2 + 4, method, "end", "label"))
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
        marks.append(_text(x + 6, y + row / 2 + 4, _fmt(total), cls="value"))
    return _svg(640, height, "LLM calls per answer by stage", *marks)


def error_bars(errors: list[ErrorCount], colors: dict[str, str]) -> Markup | None:
    """Failures per method, place (search or judge metric) and kind."""
    if not errors:
        return None
    left, plot, row, top = 330, 250, 22, 6
    ticks = _ticks(max(e.count for e in errors))
    scale = plot / (ticks[-1] or 1.0)
    height = top + row * len(errors) + 40
    marks: list[Markup] = _x_axis(left, plot, top, top + row * len(errors), ticks, "count")
    for i, e in enumerate(errors):
        y = top + row * i
        marks.append(
            _text(
                left - 8,
                y + row / 2 + 4,
                _short(f"{e.method} · {e.where} · {e.kind}", 48),
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
                el("title", None, f"{e.count} x, e.g. {_short(e.example, 300)}"),
            )
        )
        marks.append(_text(left + e.count * scale + 6, y + row / 2 + 4, str(e.count), cls="value"))
    return _svg(640, height, "Failures by method and kind", *marks)
