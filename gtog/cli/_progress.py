"""`gtog eval`'s progress bar: items done, elapsed, an ETA that shows on slow runs, and
the run's spend as it happens (spent so far / estimate / limit).

rich's `TimeRemainingColumn` estimates speed from the last 30 seconds of progress only
(`Progress(speed_estimate_period=30)`): when each answer takes longer than that (the CPU
demo: over 30 s per answer), no two updates fall in the window and it shows `-:--:--` to
the end. `EtaColumn` takes the mean seconds per finished item since the bar started, which
exists from the first item on.

Without a terminal (stderr to a file, a pipe, CI), rich draws no bar until the end: the run
prints a plain line instead (`PlainProgress`): items done, elapsed, ETA, spend and the last
item, every `PLAIN_EVERY` seconds (`GTOG_PROGRESS_SECONDS`; 0: one line per finished item),
and one when the run ends.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
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
    "PLAIN_EVERY",
    "EtaColumn",
    "PlainProgress",
    "SpendColumn",
    "eta_seconds",
    "run_with_progress",
    "spend_text",
]

LOG_NAME = "eval.log"
"""Every log record of a run (keys masked), in its output folder."""
PLAIN_EVERY = 30.0
"""Seconds between progress lines without a terminal (env `GTOG_PROGRESS_SECONDS`)."""


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


def _plain_every() -> float:
    raw = os.environ.get("GTOG_PROGRESS_SECONDS", "").strip()
    try:
        return max(float(raw), 0.0) if raw else PLAIN_EVERY
    except ValueError:
        return PLAIN_EVERY


def _clock(seconds: float) -> str:
    return str(timedelta(seconds=int(seconds)))


class PlainProgress:
    """Progress as plain lines, for a console that is not a terminal: one every `every`
    seconds while the run goes on (also when no item finishes in between), one per finished
    item when `every` is 0, and one at the end."""

    def __init__(
        self,
        console: Console,
        total: int,
        spend: Callable[[], str] = str,
        every: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        wait: Callable[[float], bool] | None = None,
        label: str = "evaluating",
    ) -> None:
        """`wait(seconds)`: the heartbeat's pause, True when the run ended (default: the
        end of the run, or `every` seconds)."""
        self.console = console
        self.total = total
        self.completed = 0
        self.last = ""
        self.spend = spend
        self.every = _plain_every() if every is None else every
        self.clock = clock
        self.started = clock()
        self.printed = self.started
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._wait = wait or self._stop.wait
        self.label = label

    def line(self) -> str:
        """`evaluating 12/40 (30%), 0:05:00 elapsed, eta 0:12:30, $0.01 spent, last: ...`."""
        elapsed = self.clock() - self.started
        share = f" ({100 * self.completed / self.total:.0f}%)" if self.total else ""
        left = eta_seconds(elapsed, self.completed, self.total)
        parts = [
            f"{self.label} {self.completed}/{self.total}{share}",
            f"{_clock(elapsed)} elapsed",
            f"eta {_clock(left) if left is not None else '-:--:--'}",
        ]
        if spent := self.spend():
            parts.append(spent)
        if self.last:
            parts.append(f"last: {self.last}")
        return ", ".join(parts)

    def _print(self) -> None:
        with self._lock:
            self.printed = self.clock()
            text = self.line()
        self.console.print(text, highlight=False, markup=False, soft_wrap=True)

    def _due(self) -> bool:
        return self.clock() - self.printed >= self.every

    def advance(self, last: str) -> None:
        """One more item finished; a line when one is due."""
        with self._lock:
            self.completed += 1
            self.last = last
        if self._due():
            self._print()

    def add(self, n: int) -> None:
        """`n` more items to do."""
        with self._lock:
            self.total += n

    def _beat(self) -> None:
        while not self._wait(self.every):
            if self._due():
                self._print()

    def __enter__(self) -> PlainProgress:
        if self.every > 0:
            self._thread = threading.Thread(target=self._beat, name="gtog-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._print()


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
    run: EvalRun,
    quiet: bool,
    console: Console,
    on_exit: Callable[[], None] | None = None,
    on_record: Callable[[MethodRecord | PairRecord, int], None] | None = None,
) -> int:
    """Run what is left of `run` with its logs captured and a progress bar; `on_record` is
    told of each record as it lands, with how many records are still to land (comparisons
    are counted as they are scheduled), `on_exit` runs however it ends. The exit code: 0, 1
    (a fatal error or a limit stopped it), 130."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from gtog._errors import FatalRunError
    from gtog._logs import capture_logs
    from gtog.cli._say import error
    from gtog.eval.results._spend import cost_context
    from gtog.eval.run._loop import run_evaluation_async
    from gtog.llm._models import run_sync

    estimate_usd = cost_context(run.output_dir)["estimate_usd"]
    plain = not quiet and not console.is_terminal
    progress = Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(bar_width=24),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        EtaColumn(),
        SpendColumn(run.budget, estimate_usd),
        TextColumn("{task.fields[last]}", markup=False),
        console=console,
        disable=quiet or plain,
    )
    total = len(run.todo) + len(run.to_judge)
    lines = PlainProgress(console, total, lambda: spend_text(run.budget, estimate_usd))
    code = 0
    with capture_logs(run.output_dir / LOG_NAME, run.redactor):
        try:
            with progress, lines if plain else contextlib.nullcontext():
                task = progress.add_task("evaluating", total=total, last="")

                def more(n: int) -> None:  # comparisons start as their answers land
                    lines.add(n)
                    progress.update(task, total=lines.total)

                landed = [0]

                def done(record: MethodRecord | PairRecord) -> None:
                    note = last_item(record)
                    progress.update(task, advance=1, last=note)
                    if plain:
                        lines.advance(note)
                    landed[0] += 1
                    if on_record is not None:
                        on_record(record, lines.total - landed[0])

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
