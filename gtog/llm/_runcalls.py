"""What the model calls of one run share (its cache store), and the block that routes them.

Apart from the gate (`gtog.llm._gate`, a graphrag_cache `Cache`) so that what only sets up
or reads a run's calls (`gtog.eval.run._spending`) imports neither graphrag_cache nor the
storage and pandas it brings (most of a second on 2 cores): a run with nothing left to do
never builds a model.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from gtog.llm._budget import Budget, run_budget
from gtog.llm._cache import CallStore

__all__ = ["CACHED_MARK", "RunCalls", "current_calls", "model_calls"]

CACHED_MARK = "gtog_cached"
"""The field a replayed response carries (True)."""


@dataclass
class RunCalls:
    """What the model calls of one run share: the cache store (None: off)."""

    store: CallStore | None = None
    write_errors: int = 0


_calls: ContextVar[RunCalls | None] = ContextVar("gtog_run_calls", default=None)


@contextmanager
def model_calls(calls: RunCalls | None, budget: Budget | None = None) -> Iterator[None]:
    """Route the requests made inside the block through `calls`' cache, and charge them
    to `budget` (the run's limits)."""
    token = _calls.set(calls)
    try:
        with run_budget(budget):
            yield
    finally:
        _calls.reset(token)


def current_calls() -> RunCalls | None:
    """The current run's call settings, if any."""
    return _calls.get()
