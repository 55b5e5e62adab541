"""Spending limits: a run's and each (question, method) pair's USD, tokens, calls and time.

Every model request gtog sends passes `CallGate` (`gtog.llm._gate`), which asks `refusal()`
before it goes out: once a limit is reached, no new request is sent (the calls already in
flight finish). Every reply is charged here as it is counted (`charge`): to the current
pair's budget whether or not it was replayed from the cache (a pair's figures are the same
on a replay), to the run's only when it reached the provider (the run's limit is money
and calls actually spent).
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = [
    "LIMIT_FIELDS",
    "Budget",
    "LimitReached",
    "Limits",
    "charge",
    "current_pair_budget",
    "current_run_budget",
    "pair_budget",
    "refusal",
    "run_budget",
]

LIMIT_FIELDS = ("usd", "tokens", "calls", "time")
"""What a limit can bound, in the order they are checked."""


@dataclass(frozen=True)
class Limits:
    """Upper bounds (None: no bound): USD, tokens (prompt + output + embedding input),
    calls (chat + embedding requests) and seconds."""

    usd: float | None = None
    tokens: int | None = None
    calls: int | None = None
    time: float | None = None

    def __bool__(self) -> bool:
        return any(getattr(self, f) is not None for f in LIMIT_FIELDS)


class LimitReached(Exception):
    """A request refused because a limit is reached (`scope`: `run` or `pair`)."""

    def __init__(self, scope: str, what: str, budget: Budget) -> None:
        self.scope = scope
        self.what = what
        self.error_kind = "limit"
        super().__init__(f"{scope} limit {what} reached ({budget.describe(what)})")


@dataclass
class Budget:
    """What one scope (the run, one pair) has spent, against its limits."""

    limits: Limits = field(default_factory=Limits)
    usd: float = 0.0
    tokens: int = 0
    calls: int = 0
    usd_unknown: bool = False
    """True once a call without a known price was charged (its USD counted as 0)."""
    started: float = field(default_factory=time.monotonic)
    offset: float = 0.0
    """Seconds spent before `started` (earlier sessions of a resumed run)."""
    refused: str | None = None
    """The limit a request of this scope was refused for (`usd`, ...), if one was."""
    run_refused: bool = False
    """A pair's: a request of it was refused because the run reached its limit."""
    cached_calls: int = 0
    """The run's: calls replayed from the cache (not charged)."""
    saved_usd: float = 0.0
    """The run's: what the replayed calls cost when they were first made."""

    def charge(self, calls: int, tokens: int, usd: float | None) -> None:
        """Count one reply's calls, tokens and price."""
        self.calls += calls
        self.tokens += tokens
        if usd is None:
            self.usd_unknown = True
        else:
            self.usd += usd

    def seconds(self) -> float:
        """Seconds since the scope started (plus earlier sessions')."""
        return time.monotonic() - self.started + self.offset

    def _value(self, what: str) -> float:
        return self.seconds() if what == "time" else float(getattr(self, what))

    def reached(self) -> str | None:
        """The first limit spent up to or past its bound (no more requests), else None."""
        for what in LIMIT_FIELDS:
            bound = getattr(self.limits, what)
            if bound is not None and self._value(what) >= bound:
                return what
        return None

    def over(self) -> str | None:
        """The first limit passed (or a request refused for), else None."""
        if self.refused is not None:
            return self.refused
        for what in LIMIT_FIELDS:
            bound = getattr(self.limits, what)
            if bound is not None and self._value(what) > bound:
                return what
        return None

    def describe(self, what: str) -> str:
        """`$0.5012 spent of $0.5000`, `1200 tokens of 1000`, ..."""
        bound = getattr(self.limits, what)
        if what == "usd":
            return f"${self.usd:.4f} spent of ${bound:.4f}"
        if what == "time":
            return f"{self.seconds():.0f} s of {bound:g} s"
        return f"{self._value(what):.0f} {what} of {bound}"


_run: contextvars.ContextVar[Budget | None] = contextvars.ContextVar(
    "gtog_run_budget", default=None
)
_pair: contextvars.ContextVar[Budget | None] = contextvars.ContextVar(
    "gtog_pair_budget", default=None
)


@contextmanager
def run_budget(budget: Budget | None) -> Iterator[Budget | None]:
    """Charge the requests made inside the block (and the tasks it starts) to `budget`."""
    token = _run.set(budget)
    try:
        yield budget
    finally:
        _run.reset(token)


@contextmanager
def pair_budget(limits: Limits) -> Iterator[Budget]:
    """A new budget for one pair's calls (search and judges) made inside the block."""
    budget = Budget(limits)
    token = _pair.set(budget)
    try:
        yield budget
    finally:
        _pair.reset(token)


def current_run_budget() -> Budget | None:
    """The run's budget, if a run is charging."""
    return _run.get()


def current_pair_budget() -> Budget | None:
    """The current pair's budget, if any."""
    return _pair.get()


def charge(calls: int, tokens: int, usd: float | None, *, cached: bool) -> None:
    """Charge one reply to the current pair (always) and the run (when it was sent)."""
    pair = _pair.get()
    if pair is not None:
        pair.charge(calls, tokens, usd)
    run = _run.get()
    if run is None:
        return
    if not cached:
        run.charge(calls, tokens, usd)
    else:
        run.cached_calls += calls
        run.saved_usd += usd or 0.0


def refusal() -> LimitReached | None:
    """Why the next request must not be sent (a limit of the run or the pair), else None.

    The scope's `refused` records it, so the pair knows it was stopped and by which.
    """
    pair = _pair.get()
    run = _run.get()
    if run is not None and (what := run.reached()) is not None:
        run.refused = run.refused or what
        if pair is not None:
            pair.run_refused = True
        return LimitReached("run", what, run)
    if pair is not None and (what := pair.reached()) is not None:
        pair.refused = pair.refused or what
        return LimitReached("pair", what, pair)
    return None
