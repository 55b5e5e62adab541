"""A readable table of a summary (rich)."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

__all__ = ["ALPHA", "print_summary", "summary_table"]


_SHORT = {
    "correctness": "correct",
    "faithfulness": "faithful",
    "relevance": "relevant",
    "completeness": "complete",
    "token_recall": "tok recall",
    "evidence_recall": "evid recall",
}


ALPHA = 0.05
"""Holm-adjusted p below this marks a method as different from the best one."""


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _usd(value: float | None) -> str:
    if value is None:
        return "-"
    return f"${value:.2g}" if 0 < value < 0.01 else f"${value:.2f}"


def _best(summary: dict[str, Any], metric: str) -> str | None:
    means = {
        m: g["same_questions"].get(metric)
        for m, g in summary["by_method"].items()
        if g["same_questions"].get(metric) is not None
    }
    return max(means, key=lambda m: means[m]) if means else None


def _differs(summary: dict[str, Any], metric: str, best: str | None, method: str) -> bool:
    if best is None or method == best:
        return False
    for c in summary.get("comparisons", []):
        if c["metric"] == metric and {c["a"], c["b"]} == {best, method}:
            return c["p_holm"] is not None and c["p_holm"] < ALPHA
    return False


def _cell(group: dict[str, Any], metric: str, mark: bool) -> str:
    mean = group.get(metric)
    ci = group.get("ci95", {}).get(metric)
    text = _fmt(mean)
    if mean is not None and ci is not None:
        text += f" ±{(ci[1] - ci[0]) / 2:.2f}"
    return text + ("*" if mark else "")


def _question_note(summary: dict[str, Any], metrics: list[str]) -> str:
    counts = {
        m: min(
            (g["same_questions"]["scored"].get(m, 0) for g in summary["by_method"].values()),
            default=0,
        )
        for m in metrics
    }
    if len(set(counts.values())) == 1:
        n = next(iter(counts.values()), 0)
        where = f"the {n} questions"
    else:
        where = (
            "the questions ("
            + ", ".join(f"{_SHORT.get(m, m)} {k}" for m, k in counts.items())
            + ")"
        )
    return f"scores: mean over {where} every method answered and the judge scored"


def summary_table(summary: dict[str, Any], metrics: list[str]) -> Table:
    """Same-question means with 95% intervals, significance marks and cost, one row per method."""
    table = Table(
        title="gtog eval: mean score ± half its 95% interval, and cost per method",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
    )
    table.add_column("method", style="bold", no_wrap=True)
    for m in metrics:
        table.add_column(escape(_SHORT.get(m, m)), justify="right", no_wrap=True)
    for col in ("n", "errors", "sec p50", "sec p95", "calls", "tok p50", "$/answer"):
        table.add_column(col, justify="right", no_wrap=True)
    best = {m: _best(summary, m) for m in metrics}
    for method, group in summary["by_method"].items():
        eff = summary["efficiency"].get(method, {})
        cost = summary.get("cost", {}).get(method, {})
        same = group["same_questions"]
        cells = [_cell(same, m, _differs(summary, m, best[m], method)) for m in metrics]
        judge_errors = sum(group["judge_errors"].values())
        per_search, per_judge = cost.get("search_usd_per_answer"), cost.get("judge_usd_per_answer")
        per_answer = None if per_search is None or per_judge is None else per_search + per_judge
        cells += [str(group["n"]), f"{group['search_errors']}+{judge_errors}"]
        cells += [
            _fmt(eff.get("p50_latency")),
            _fmt(eff.get("p95_latency")),
            _fmt(eff.get("p50_llm_calls"), 0),
            _fmt(eff.get("p50_tokens"), 0),
            _usd(per_answer),
        ]
        table.add_row(escape(method), *cells)
    table.caption = (
        f"{_question_note(summary, metrics)} (same_questions in the summary JSON; strict and "
        "per-method means are there too); ± half the 95% interval (Wilson for 0/1 judges, "
        "bootstrap otherwise; none when too few or identical scores, see ci95_reason); "
        f"* differs from the best method (paired test, Holm p < {ALPHA:g}); "
        "errors = failed searches + failed judge calls; sec/calls/tokens per successful search; "
        "$/answer = search + judging (- when a model has no price)"
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
