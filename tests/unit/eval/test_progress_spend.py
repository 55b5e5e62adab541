"""The progress bar on slow runs (an ETA from the first answer on), the spend beside it,
and the summary's cost line (issue 33). Times are fed in: no clock is read."""

from __future__ import annotations

import io
import queue

from rich.console import Console
from rich.progress import Progress, TimeRemainingColumn

from gtog.cli._progress import PLAIN_EVERY, EtaColumn, PlainProgress, eta_seconds, spend_text
from gtog.eval.results._spend import cost_line
from gtog.llm._budget import Budget, Limits


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _render(column: object, task: object) -> str:
    return column.render(task).plain  # type: ignore[attr-defined]


def test_the_eta_shows_from_the_first_answer_on_a_slow_run() -> None:
    clock = Clock()
    progress = Progress(get_time=clock, disable=True)
    task_id = progress.add_task("evaluating", total=18)
    task = progress.tasks[0]
    ours, rich_own = EtaColumn(), TimeRemainingColumn()
    assert _render(ours, task) == "-:--:--"  # no answer yet: nothing to go on
    seen = []
    for _ in range(17):  # the CPU demo: each answer takes 45 s, longer than rich's window
        clock.now += 45.0
        progress.update(task_id, advance=1)
        seen.append((_render(ours, task), _render(rich_own, task)))
    assert [r for _, r in seen] == ["-:--:--"] * 17  # rich's own column: never an ETA
    assert seen[0][0] == "0:12:45"  # 17 left x 45 s
    assert seen[8][0] == "0:06:45"  # after 9: 9 left x 45 s
    assert seen[-1][0] == "0:00:45"
    clock.now += 45.0
    progress.update(task_id, advance=1)
    assert _render(ours, task) == "0:00:00"


def test_eta_seconds_is_the_mean_pace_times_what_is_left() -> None:
    assert eta_seconds(None, 0, 10) is None
    assert eta_seconds(30.0, 0, 10) is None
    assert eta_seconds(30.0, 3, None) is None
    assert eta_seconds(30.0, 3, 10) == 70.0  # 10 s per item, 7 left
    assert eta_seconds(30.0, 12, 10) == 0.0  # a total that grew late


def test_the_spend_shows_spent_estimate_and_limit() -> None:
    budget = Budget(Limits(usd=2.5), usd=0.0123)
    assert spend_text(budget, 0.05) == "$0.0123 spent / est $0.0500 / limit $2.50"
    budget.saved_usd, budget.usd_unknown = 0.004, True
    assert spend_text(budget, None) == "$0.0123+ spent ($0.0040 cached) / limit $2.50"
    assert spend_text(None, 1.0) == ""


def test_the_cost_line_reads_the_summary() -> None:
    cost = {
        "spent_usd": 0.0412,
        "cached_usd_saved": 0.0301,
        "estimate_usd": 0.08,
        "limit_usd": None,
        "cache": {"hits": 57, "misses": 23, "usd_saved": 0.0301},
    }
    assert cost_line(cost) == (
        "cost: $0.0412 spent; the cache replayed 57 of 80 calls ($0.0301 saved); estimate $0.0800"
    )
    assert cost_line({**cost, "spent_usd": None, "cache": {"hits": 0, "misses": 3}}) == (
        "cost: USD unknown (no price); estimate $0.0800"
    )
    assert cost_line({}) == ""


def test_without_a_terminal_a_line_every_30_seconds_also_when_nothing_finishes() -> None:
    clock = Clock()
    ticks: queue.Queue[float | None] = queue.Queue()

    def wait(seconds: float) -> bool:  # the heartbeat's sleep: the test says when it ends
        assert seconds == 30.0
        now = ticks.get()
        if now is None:
            return True
        clock.now = now
        return False

    out = io.StringIO()
    console = Console(file=out, width=300)  # a file: not a terminal
    assert not console.is_terminal and PLAIN_EVERY == 30.0
    lines = PlainProgress(console, 4, lambda: "$0.0100 spent", PLAIN_EVERY, clock, wait)
    with lines:
        clock.now = 1010.0
        lines.advance("tog q1 ok")  # 10 s after the start: not yet
        assert out.getvalue() == ""
        clock.now = 1035.0
        lines.advance("basic q1 failed")  # 35 s: a line
        ticks.put(1070.0)  # nothing finishes for 35 s: the heartbeat prints one
        ticks.put(1080.0)  # 10 s after that one: none
        ticks.put(None)
    assert out.getvalue().splitlines() == [
        "evaluating 2/4 (50%), 0:00:35 elapsed, eta 0:00:35, $0.0100 spent, last: basic q1 failed",
        "evaluating 2/4 (50%), 0:01:10 elapsed, eta 0:01:10, $0.0100 spent, last: basic q1 failed",
        "evaluating 2/4 (50%), 0:01:20 elapsed, eta 0:01:20, $0.0100 spent, last: basic q1 failed",
    ]  # the last: the run ended


def test_every_0_prints_a_line_per_finished_item(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("GTOG_PROGRESS_SECONDS", "0")
    clock = Clock()
    out = io.StringIO()
    lines = PlainProgress(Console(file=out, width=300), 2, clock=clock)
    with lines:
        lines.add(1)
        for n in range(3):
            clock.now += 5
            lines.advance(f"item {n}")
    text = out.getvalue().splitlines()
    assert text[0] == "evaluating 1/3 (33%), 0:00:05 elapsed, eta 0:00:10, last: item 0"
    assert len(text) == 4 and text[-1].startswith("evaluating 3/3 (100%), 0:00:15 elapsed")
