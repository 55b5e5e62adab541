"""A readable table of a summary (rich)."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

__all__ = ["print_summary", "summary_table"]


_SHORT = {
    "correctness": "correct",
    "faithfulness": "faithful",
    "relevance": "relevant",
    "completeness": "complete",
    "token_recall": "tok recall",
    "evidence_recall": "evid recall",
}


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def summary_table(summary: dict[str, Any], metrics: list[str]) -> Table:
    """Scores and efficiency per method, one row each."""
    table = Table(
        title="gtog eval: mean judge score and search cost per method",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
    )
    table.add_column("method", style="bold", no_wrap=True)
    for m in metrics:
        table.add_column(_SHORT.get(m, m), justify="right", no_wrap=True)
    for col in ("n", "errors", "sec", "calls", "tok in", "tok out"):
        table.add_column(col, justify="right", no_wrap=True)
    for method, scores in summary["by_method"].items():
        eff = summary["efficiency"].get(method, {})
        n = scores["n"]
        cells = [
            _fmt(scores.get(m))
            + ("" if scores["scored"].get(m, 0) == n else f" ({scores['scored'].get(m, 0)})")
            for m in metrics
        ]
        judge_errors = sum(scores["judge_errors"].values())
        cells += [str(n), f"{scores['search_errors']}+{judge_errors}"]
        cells += [
            _fmt(eff.get("avg_latency")),
            _fmt(eff.get("avg_llm_calls"), 1),
            _fmt(eff.get("avg_prompt_tokens"), 0),
            _fmt(eff.get("avg_output_tokens"), 0),
        ]
        table.add_row(method, *cells)
    table.caption = (
        "score (k) = mean over the k answers the judge scored; errors = failed searches + "
        "failed judge calls; cost columns average successful searches"
    )
    return table


def print_summary(
    summary: dict[str, Any], metrics: list[str], console: Console | None = None
) -> None:
    """Print the summary table."""
    console = console or Console()
    if not console.is_terminal:
        console = Console(width=120, file=console.file)
    console.print(summary_table(summary, metrics))
