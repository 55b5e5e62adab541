"""The terminal's lines on people's labels: how the judge did against them, corrected means.

`calibration_parts(summary)` reads the summary's `calibration` blocks (gtog.eval.results.
_calibration): one line per metric saying how many answers people labelled and where the
judge is off (the method whose corrected mean moved most, with the judge's false-positive
or false-negative rate there), then a small table of each method's judge-only and
prediction-powered means.
"""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

__all__ = ["calibration_parts", "judge_finding"]


def _ci(ci: Any) -> str:
    return f"[{ci[0]:.2f}, {ci[1]:.2f}]" if isinstance(ci, list) and len(ci) == 2 else ""


def judge_finding(metric: str, blocks: dict[str, Any]) -> str:
    """`humans labelled 150 answers (correctness): the judge is too lenient on global, FP
    0.21 [0.12, 0.34]; corrected means below`."""
    labelled = sum(int(b.get("n_labels") or 0) for b in blocks.values())
    head = f"humans labelled {labelled} answers ({metric})"
    moved = [
        (abs(b["mean_ppi"] - b["mean_judge"]), m, b)
        for m, b in blocks.items()
        if b.get("mean_ppi") is not None and b.get("mean_judge") is not None
    ]
    if not moved:
        return f"{head}: too few per method for corrected means (10 needed)"
    _, method, b = max(moved, key=lambda t: t[0])
    low, high = b.get("ci95_ppi") or [None, None]
    if low is not None and low <= b["mean_judge"] <= high:
        agreement = b.get("agreement")
        said = f" (agreement {agreement:.2f})" if agreement is not None else ""
        return f"{head}: the judge agrees with them within the noise{said}; corrected means below"
    if b["mean_ppi"] < b["mean_judge"]:
        rate = f"FP {b['fpr']:.2f} {_ci(b.get('fpr_ci95'))}" if b.get("fpr") is not None else ""
        return f"{head}: the judge is too lenient on {method}, {rate}; corrected means below"
    rate = f"FN {b['fnr']:.2f} {_ci(b.get('fnr_ci95'))}" if b.get("fnr") is not None else ""
    return f"{head}: the judge is too strict on {method}, {rate}; corrected means below"


def calibration_parts(summary: dict[str, Any]) -> list[RenderableType]:
    """The lines and tables (none when the run has no labels)."""
    parts: list[RenderableType] = []
    for metric, blocks in (summary.get("calibration") or {}).items():
        if not isinstance(blocks, dict) or not blocks:
            continue
        parts.append(Text(judge_finding(metric, blocks), style="bold"))
        table = Table(box=None, show_edge=False, pad_edge=False)
        for column in ("method", "labels", "judge", "corrected [95%]", "FP", "FN"):
            table.add_column(column, justify="left" if column == "method" else "right")
        for method, b in blocks.items():
            corrected = (
                f"{b['mean_ppi']:.2f} {_ci(b.get('ci95_ppi'))}"
                if b.get("mean_ppi") is not None
                else "–"
            )
            table.add_row(
                method,
                str(b.get("n_labels", 0)),
                f"{b['mean_judge']:.2f}" if b.get("mean_judge") is not None else "–",
                corrected,
                f"{b['fpr']:.2f}" if b.get("fpr") is not None else "–",
                f"{b['fnr']:.2f}" if b.get("fnr") is not None else "–",
            )
        parts.append(table)
    return parts
