"""Terminal tables of repeated answers (`by_method[m].epochs`) and of a judge panel
(`by_method[m].judges`, `judge_agreement`), printed under the scores table."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

__all__ = ["panel_parts", "repeat_parts"]


def _fmt(value: Any) -> str:
    return "-" if not isinstance(value, int | float) else f"{value:.2f}"


def _table(*columns: str) -> Table:
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False, collapse_padding=True)
    for i, col in enumerate(columns):
        table.add_column(escape(col), justify="left" if i < 2 else "right", no_wrap=True)
    return table


def repeat_parts(summary: dict[str, Any]) -> list[RenderableType]:
    """The repeated answers table (empty without repeats)."""
    rows = [
        (method, metric, e)
        for method, group in (summary.get("by_method") or {}).items()
        for metric, e in (group.get("epochs") or {}).items()
        if isinstance(e, dict)
    ]
    if not rows:
        return []
    k = rows[0][2].get("k")
    table = _table("method", "metric", "n", "mean", f"pass@{k}", f"pass^{k}", "flip")
    for method, metric, e in rows:
        table.add_row(
            escape(method),
            escape(metric),
            str(e.get("n", "-")),
            _fmt(e.get("mean")),
            _fmt(e.get("pass_at_k")),
            _fmt(e.get("pass_hat_k")),
            _fmt(e.get("flip_rate")),
        )
    note = (
        f"over the n questions whose {k} answers were all scored: pass@{k} some answer right, "
        f"pass^{k} every answer right, flip = the verdicts differ; the scores above are "
        "means per question."
    )
    return [
        Text(f"repeated answers ({k} per question)", style="bold"),
        table,
        Text(note, style="dim"),
    ]


def panel_parts(summary: dict[str, Any]) -> list[RenderableType]:
    """Each panel model's means and the judges' agreement (empty without a panel)."""
    agreement = summary.get("judge_agreement") or {}
    if not agreement:
        return []
    models = next(iter(agreement.values())).get("models") or []
    table = _table("method", "metric", *models)
    for method, group in (summary.get("by_method") or {}).items():
        judges = group.get("judges") or {}
        for metric in agreement:
            table.add_row(
                escape(method),
                escape(metric),
                *(_fmt((judges.get(m) or {}).get(metric)) for m in models),
            )
    lines = []
    for metric, a in agreement.items():
        alpha = a.get("krippendorff_alpha")
        figure = f"{alpha:.2f}" if alpha is not None else f"- ({a.get('reason')})"
        lines.append(
            f"{metric}: Krippendorff's alpha {figure} over {a.get('n')} answers; "
            f"the judges split on {a.get('split')}"
        )
    return [
        Text("judge panel: each model's mean (the scores above are the majority)", style="bold"),
        table,
        *(Text(line, style="dim") for line in lines),
    ]
