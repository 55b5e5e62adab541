"""`gtog eval`'s progress bar: items done, elapsed, an ETA that shows on slow runs, and
the run's spend as it happens (spent so far / estimate / limit).

rich's `TimeRemainingColumn` estimates speed from the last 30 seconds of progress only
(`Progress(speed_estimate_period=30)`): when each answer takes longer than that (the CPU
demo: over 30 s per answer), no two updates fall in the window and it shows `-:--:--` to
the end. `EtaColumn` takes the mean seconds per finished item since the bar started, which
exists from the first item on.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import ProgressColumn, Task
from rich.text import Text

if TYPE_CHECKING:
    from gtog.eval.results._records import MethodRecord, PairRecord
    from gtog.eval.run._state import EvalRun
    from gtog.llm._budget import Budget

__all__ = [
    "LOG_NAME",
    "EtaColumn",
    "SpendColumn",
    "eta_seconds",
    "run_with_progress",
    "spend_text",
]

LOG_NAME = "eval.log"
"""Every log record of a run (keys masked), in its output folder."""


def eta_seconds(elapsed: float | None, completed: float, total: float | None) -> float | None:
    """Seconds left at the mean pace so far: None before the first item (or without a total)."""
    if total is None or elapsed is None or completed <= 0:
        return None
    return max(total - completed, 0.0) * elapsed / completed


class EtaColumn(ProgressColumn):
    """Time left from the mean seconds per finished item (`-:--:--` before the first)."""

    max_refresh = 0.5

    def render(self, task: Task) -> Text:
        """`h:mm:ss` left, or `-:--:--`."""
        if task.finished:
            return Text("0:00:00", style="progress.remaining")
        left = eta_seconds(task.elapsed, task.completed, task.total)
        if left is None:
            return Text("-:--:--", style="progress.remaining")
        return Text(str(timedelta(seconds=int(left))), style="progress.remaining")


def _usd(value: float) -> str:
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def spend_text(budget: Budget | None, estimate_usd: float | None) -> str:
    """`$0.0123 spent / est $0.0500 / limit $0.1000` (the parts that are known)."""
    if budget is None:
        return ""
    unknown = "+" if budget.usd_unknown else ""  # some prices unknown: at least this
    parts = [f"{_usd(budget.usd)}{unknown} spent"]
    if budget.saved_usd:
        parts[0] += f" ({_usd(budget.saved_usd)} cached)"
    if estimate_usd is not None:
        parts.append(f"est {_usd(estimate_usd)}")
    if budget.limits.usd is not None:
        parts.append(f"limit {_usd(budget.limits.usd)}")
    return " / ".join(parts)


class SpendColumn(ProgressColumn):
    """The run's spend so far (its budget, live), its estimate and its limit."""

    def __init__(self, budget: Budget | None, estimate_usd: float | None = None) -> None:
        super().__init__()
        self.budget = budget
        self.estimate_usd = estimate_usd

    def render(self, task: Task) -> Text:
        """The spend line (empty without a budget)."""
        return Text(spend_text(self.budget, self.estimate_usd), style="progress.data.speed")


def last_item(record: MethodRecord | PairRecord) -> str:
    """The progress bar's note on the item that just finished: `tog lh-03 ok`."""
    from gtog.eval.results._records import PairRecord

    if isinstance(record, PairRecord):
        what = f"{record.a}/{record.b} {record.criterion[:12]}"
        outcome = record.judgement.winner or "unscored"
    else:
        what = record.method + (f"#{record.epoch}" if record.epoch > 1 else "")
        outcome = "failed" if record.error else "ok"
    return f"{what} {record.qid[:16]} {outcome}"


def run_with_progress(
    run: EvalRun, quiet: bool, console: Console, on_exit: Callable[[], None] | None = None
) -> int:
    """Run what is left of `run` with its logs captured and a progress bar; `on_exit` runs
    however it ends. The exit code: 0, 1 (a fatal error or a limit stopped it), 130."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from gtog._errors import FatalRunError
    from gtog._logs import capture_logs
    from gtog.cli._say import error
    from gtog.eval.results._spend import cost_context
    from gtog.eval.run._loop import run_evaluation_async
    from gtog.llm._models import run_sync

    progress = Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(bar_width=24),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        EtaColumn(),
        SpendColumn(run.budget, cost_context(run.output_dir)["estimate_usd"]),
        TextColumn("{task.fields[last]}", markup=False),
        console=console,
        disable=quiet,
    )
    code = 0
    with capture_logs(run.output_dir / LOG_NAME, run.redactor):
        try:
            with progress:
                total = [len(run.todo) + len(run.to_judge)]
                task = progress.add_task("evaluating", total=total[0], last="")

                def more(n: int) -> None:  # comparisons start as their answers land
                    total[0] += n
                    progress.update(task, total=total[0])

                def done(record: MethodRecord | PairRecord) -> None:
                    progress.update(task, advance=1, last=last_item(record))

                run_sync(run_evaluation_async(run, on_record=done, on_scheduled=more))
        except FatalRunError as exc:
            error(console, exc, label="stopped")
            code = 1
        except KeyboardInterrupt:
            console.print(
                "interrupted: finished records are in the checkpoint; rerun with --resume"
            )
            code = 130
        finally:
            if on_exit is not None:
                on_exit()
    return code
