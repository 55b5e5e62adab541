"""The terminal's "why" table: abstentions, failure attribution and ToG's stages per method.

Printed under the scores and cost tables when the summary has them (a run with the
correctness judge). One row per method: answers that declined, correctness over the
answers that did not, and the wrong answers split by where the evidence was.
"""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

__all__ = ["STAGE_LABELS", "why_table"]

STAGE_LABELS = {
    "no_start_entity": "no start entity",
    "answered_without_paths": "no paths",
    "evidence_pruned": "evidence pruned",
    "stopped_early": "stopped early",
    "not_reached": "not reached",
}
"""Short names of ToG's stages (gtog.eval.results._attribution.TOG_STAGES)."""


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def why_table(summary: dict[str, Any]) -> RenderableType | None:
    """Abstentions and attribution per method (None when the summary has neither)."""
    attribution = summary.get("attribution") or {}
    by_method = summary.get("by_method") or {}
    if not attribution:
        return None
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False, collapse_padding=True)
    table.add_column("method", style="bold", no_wrap=True)
    for col in ("abstain", "correct*", "wrong", "retrieval", "generation", "unknown"):
        table.add_column(col, justify="right", no_wrap=True)
    notes = []
    for method, group in by_method.items():
        a = attribution.get(method)
        if a is None:
            continue
        answered = (group.get("answered") or {}).get("correctness")
        table.add_row(
            escape(method),
            _pct(group.get("abstention_rate")),
            _fmt(answered),
            str(a["wrong"]),
            f"{a['retrieval_failures']} ({_pct(a['retrieval_share'])})",
            f"{a['generation_failures']} ({_pct(a['generation_share'])})",
            str(a["unknown"]),
        )
        stages = {k: n for k, n in (a.get("tog_stages") or {}).items() if n}
        if stages:
            parts = ", ".join(f"{STAGE_LABELS.get(k, k)} {n}" for k, n in stages.items())
            notes.append(f"{method} retrieval failures by stage: {parts}")
    threshold = next(iter(attribution.values())).get("threshold")
    parts: list[RenderableType] = [
        Text("why answers fail (correctness)", style="bold"),
        table,
        Text(
            "abstain = answers that declined; correct* = correctness over the answers that "
            "did not; wrong answers: retrieval = the gold evidence was not in what the method "
            f"found (evidence_recall < {threshold:g}), generation = it was, unknown = no gold "
            "evidence or no saved context.",
            style="dim",
        ),
    ]
    parts += [Text(escape(n), style="dim") for n in notes]
    return Group(*parts)
