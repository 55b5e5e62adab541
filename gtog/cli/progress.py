"""`gtog eval`'s progress bar: items done, elapsed, an ETA that shows on slow runs, and
the run's spend as it happens (spent so far / estimate / limit).

rich's `TimeRemainingColumn` estimates speed from the last 30 seconds of progress only
(`Progress(speed_estimate_period=30)`): when each answer takes longer than that (the CPU
demo: over 30 s per answer), no two updates fall in the window and it shows `-:--:--` to
the end. `EtaColumn` takes the mean seconds per finished item since the bar started, which
exists from the first item on.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from rich.progress import ProgressColumn, Task
from rich.text import Text

if TYPE_CHECKING:
    from gtog.llm.budget import Budget

__all__ = ["EtaColumn", "SpendColumn", "cost_line", "eta_seconds", "spend_text"]


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


def cost_line(cost: dict) -> str:
    """The summary's `cost` in one line: `cost: $0.0412 spent; the cache replayed 57 of
    80 calls ($0.0301 saved); estimate $0.0800; limit $0.1000`."""
    spent = cost.get("spent_usd")
    cache = cost.get("cache") or {}
    if spent is None and not cache:
        return ""
    parts = [f"{_usd(spent)} spent" if spent is not None else "USD unknown (no price)"]
    hits, misses = cache.get("hits") or 0, cache.get("misses") or 0
    if hits:
        parts.append(
            f"the cache replayed {hits} of {hits + misses} calls "
            f"({_usd(cache.get('usd_saved') or 0.0)} saved)"
        )
    if cost.get("estimate_usd") is not None:
        parts.append(f"estimate {_usd(cost['estimate_usd'])}")
    if cost.get("limit_usd") is not None:
        parts.append(f"limit {_usd(cost['limit_usd'])}")
    return "cost: " + "; ".join(parts)
