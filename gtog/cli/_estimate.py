"""`gtog eval --estimate [--pilot K]`: what a run will cost, before it is paid.

Bounds (no `--pilot`): no model call; only `OUTPUT/estimate.json` is written. A pilot
runs K questions per method for real into the run's checkpoint (a later `gtog eval` with
the same flags resumes from them), then writes the estimate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:
    from gtog.eval.estimate._plan import Estimate
    from gtog.eval.run._state import EvalRun

__all__ = ["estimate_table", "run_pilot", "show_bounds"]

_BASES = {
    "bounds": "bounds: at most (no model call); the range is the least to the most it can be",
    "pilot": "pilot: measured on {k} questions per method, extrapolated; the range prices "
    "every question like the cheapest / dearest pilot question",
}


def _usd(value: float | None) -> str:
    if value is None:
        return "unknown"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def _row(table: Table, name: str, figures: dict[str, Any], style: str | None = None) -> None:
    table.add_row(
        escape(name),
        f"{figures['llm_calls']:,}",
        f"{figures['prompt_tokens']:,}",
        f"{figures['output_tokens']:,}",
        _usd(figures["usd"]),
        style=style,
    )


def estimate_table(data: dict[str, Any]) -> Table:
    """estimate.json as a table: a row per method, judge metric and the comparisons, what
    is held already, and the total to pay with its range."""
    k = len(data.get("pilot_questions") or [])
    table = Table(
        title=f"estimate ({_BASES[data['basis']].format(k=k)})",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
    )
    table.add_column("", no_wrap=True)
    for col in ("calls", "prompt tok", "output tok", "USD"):
        table.add_column(col, justify="right", no_wrap=True)
    for method, figures in data["methods"].items():
        _row(table, f"search {method}", figures)
    for metric, figures in data["judges"].items():
        _row(table, f"judge {metric}", figures)
    if data["pairwise"]["llm_calls"]:
        _row(table, "head to head", data["pairwise"])
    if data["cached"]["llm_calls"]:
        _row(table, "held (checkpoint, cache)", data["cached"], style="dim")
    total = data["total"]
    _row(table, "to pay", total, style="bold")
    table.caption = (
        f"USD {_usd(total['usd_low'])} to {_usd(total['usd_high'])}; calls count "
        "embedding requests, prompt tokens their input"
    )
    table.caption_justify = "left"
    return table


def _show(est: Estimate, run: EvalRun, console: Console) -> None:
    from gtog.eval.estimate._estimate import write_estimate

    path = write_estimate(run.output_dir, est)
    data = est.as_json()
    console.print(estimate_table(data))
    prices = ", ".join(f"{m}: {src or 'no price'}" for m, src in data["prices"].items())
    console.print(f"prices: {prices}", highlight=False, markup=False, soft_wrap=True)
    for note in est.notes:
        console.print(f"note: {note}", highlight=False, markup=False, soft_wrap=True)
    console.print(f"wrote {path}", highlight=False, markup=False)


def show_bounds(run: EvalRun, console: Console) -> None:
    """Bound the run's cost (no model call), print it and write estimate.json."""
    from gtog.eval.estimate._estimate import estimate_bounds
    from gtog.llm._models import run_sync

    _show(run_sync(estimate_bounds(run)), run, console)


def run_pilot(run: EvalRun, k: int, quiet: bool, console: Console) -> int:
    """Run `k` questions per method, extrapolate, print and write estimate.json; the exit
    code (1: the pilot stopped, 130: interrupted)."""
    from gtog.cli._progress import run_with_progress
    from gtog.eval.estimate._estimate import estimate_pilot
    from gtog.eval.estimate._pilot import pilot_questions

    qids = pilot_questions(run, k)
    run.subset = set(qids)
    console.print(
        f"gtog eval --estimate: pilot of {len(qids)} questions x {len(run.methods)} methods "
        f"({', '.join(qids)}) -> {run.output_dir}",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    code = run_with_progress(run, quiet, console)
    if code == 130:
        return code
    _show(estimate_pilot(run, qids), run, console)
    if code == 0:
        console.print(
            "the pilot's pairs are kept: `gtog eval --resume` with the same flags goes on "
            "from them",
            highlight=False,
            markup=False,
        )
    return code
