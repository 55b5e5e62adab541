"""Point charts: quality against cost per method, and per-answer spreads (latency, LLM calls)
with quantile boxes (server-side SVG, see gtog.eval.report._svg)."""

from __future__ import annotations

from collections.abc import Callable

from gtog.eval.report._markup import Markup, el
from gtog.eval.report._models import CostPoint, Spread
from gtog.eval.report._svg import chart, fmt, line, text, ticks, x_axis

__all__ = ["cost_scatter", "spread_chart"]

_MAX_DOTS = 400

Box = tuple[float, float, float, float]


def _overlaps(box: Box, others: list[Box]) -> bool:
    x0, x1, y0, y1 = box
    return any(x0 < b and a < x1 and y0 < d and c < y1 for a, b, c, d in others)


def _labels(shown: list[tuple[CostPoint, float]], dots: list[tuple[float, float]], right: float):
    """Method names next to their dots, each at the first place that overlaps nothing."""
    taken: list[Box] = [(cx - 6, cx + 6, cy - 6, cy + 6) for cx, cy in dots]
    out = []
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
            if x0 >= 0 and box[1] <= right and not _overlaps(box, taken):
                tx, ty = x0, base
                break
        taken.append((tx, tx + width, ty - 10, ty + 2))
        out.append(text(tx, ty, p.method, cls="label"))
    return out


def cost_scatter(
    points: list[CostPoint],
    x_of: Callable[[CostPoint], float | None],
    x_label: str,
    metric: str,
    colors: dict[str, str],
    over: str = "",
) -> Markup | None:
    """Each method's mean quality (y) against a mean cost per answer (x).

    `over` says which answers the quality means cover (in each dot's tooltip).
    """
    shown = [(p, x) for p in points if (x := x_of(p)) is not None and p.quality is not None]
    if not shown:
        return None
    left, top, pw, ph = 44, 12, 230, 160
    marks_at = ticks(max(x for _, x in shown) * 1.15)
    marks: list[Markup] = x_axis(left, pw, top, top + ph, marks_at, x_label)
    for t in (0, 0.25, 0.5, 0.75, 1.0):
        y = top + ph * (1 - t)
        marks += [line(left, y, left + pw, y), text(left - 6, y + 4, fmt(t), "end", "tick")]
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
    hi = marks_at[-1] or 1.0
    dots = [(left + pw * x / hi, top + ph * (1 - (p.quality or 0.0))) for p, x in shown]
    for (p, x), (cx, cy) in zip(shown, dots, strict=True):
        assert p.quality is not None
        if p.quality_ci95:
            lo_y, hi_y = (top + ph * (1 - v) for v in p.quality_ci95)
            marks.append(line(cx, lo_y, cx, hi_y, colors[p.method], 2))
        tip = f"{p.method}: {metric} {p.quality:.3f}{over}, {x_label} {fmt(x)}"
        marks.append(
            el(
                "circle",
                {"class": "mark", "cx": cx, "cy": cy, "r": 6, "fill": colors[p.method]},
                el("title", None, tip),
            )
        )
    marks += _labels(shown, dots, left + pw + 14)
    return chart(290, top + ph + 40, f"mean {metric} vs {x_label}", *marks)


def spread_chart(spreads: list[Spread], label: str, colors: dict[str, str]) -> Markup | None:
    """Per-answer values per method: dots, a 25-75% box, the median and 10-90% whiskers."""
    if not spreads:
        return None
    left, plot, row, top = 80, 480, 40, 10
    marks_at = ticks(max(max(s.values) for s in spreads) * 1.05)
    hi = marks_at[-1] or 1.0
    height = top + row * len(spreads) + 40
    bottom = top + row * len(spreads)
    marks: list[Markup] = x_axis(left, plot, top, bottom, marks_at, label)

    def sx(v: float) -> float:
        return left + plot * v / hi

    for i, s in enumerate(spreads):
        mid = top + row * i + row / 2
        color = colors.get(s.method, "#444")
        marks.append(text(left - 8, mid + 4, s.method, "end", "label"))
        marks.append(line(sx(s.p10), mid, sx(s.p90), mid, "#555", 1))
        tip = (
            f"{s.method}: median {fmt(s.p50)}, middle half {fmt(s.p25)}-{fmt(s.p75)}, "
            f"10-90% {fmt(s.p10)}-{fmt(s.p90)}, {len(s.values)} answers"
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
        marks.append(line(sx(s.p50), mid - 9, sx(s.p50), mid + 9, color, 2.5))
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
    return chart(640, height, label, *marks)
