"""What every chart shares: the `<svg>` frame, text and lines, axes, ticks, legends, colours.

Each chart (gtog.eval.report._bars, gtog.eval.report._scatter) returns one
`<svg class="chart">` as Markup, or None when there is nothing to draw (the page then says
so in words). Every data mark carries `class="mark"` and a `<title>` tooltip; all text is
escaped (gtog.eval.report._markup).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from gtog.eval.report._markup import Markup, el

__all__ = [
    "GRID",
    "chart",
    "fmt",
    "legend",
    "line",
    "method_colors",
    "short",
    "text",
    "ticks",
    "x_axis",
]

_PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000")
GRID = "#dddddd"


def method_colors(methods: Sequence[str]) -> dict[str, str]:
    """A colour-blind-safe colour per method (Okabe-Ito), stable for the page."""
    return {m: _PALETTE[i % len(_PALETTE)] for i, m in enumerate(methods)}


def chart(width: int, height: float, label: str, *children: Markup) -> Markup:
    """`<svg class="chart">` of `width` x `height` with `label` as its title."""
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


def text(x: float, y: float, content: str, anchor: str = "start", cls: str | None = None) -> Markup:
    """A `<text>` at (x, y)."""
    return el("text", {"x": x, "y": y, "text-anchor": anchor, "class": cls}, content)


def line(
    x1: float, y1: float, x2: float, y2: float, stroke: str = GRID, width: float = 1.0
) -> Markup:
    """A `<line>` (a grid line by default)."""
    return el(
        "line", {"x1": x1, "y1": y1, "x2": x2, "y2": y2, "stroke": stroke, "stroke-width": width}
    )


def ticks(hi: float, count: int = 5) -> list[float]:
    """Round tick values from 0 to at least `hi`."""
    if hi <= 0 or not math.isfinite(hi):
        return [0.0, 1.0]
    raw = hi / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(s * mag for s in (1, 2, 2.5, 5, 10) if s * mag >= raw)
    n = math.ceil(hi / step - 1e-9)
    return [round(i * step, 10) for i in range(n + 1)]


def fmt(value: float) -> str:
    """A tick or value label: few digits, thousands separated."""
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}".rstrip("0").rstrip(".")
    if abs(value) >= 0.01:
        return f"{value:.2f}".rstrip("0").rstrip(".")
    return f"{value:.2g}"


def x_axis(
    left: float, width: float, top: float, bottom: float, marks: list[float], label: str
) -> list[Markup]:
    """Vertical grid lines at `marks` (0 to `marks[-1]`), their values, and the axis label."""
    hi = marks[-1] or 1.0
    out = []
    for t in marks:
        x = left + width * t / hi
        out.append(line(x, top, x, bottom))
        out.append(text(x, bottom + 14, fmt(t), "middle", "tick"))
    out.append(text(left + width / 2, bottom + 30, label, "middle", "axis"))
    return out


def legend(
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
        out.append(text(x + 14, y, name))
        x += width
    return out, y


def short(content: str, limit: int) -> str:
    """`content` cut to `limit` characters with an ellipsis."""
    return content if len(content) <= limit else content[: limit - 1] + "…"
