"""Which repeat (epoch) of an answer the current model calls belong to.

A run with `epochs: k` answers each (question, method) k times. Every call made while
answering or judging repeat `n` runs inside `answering_epoch(n)`, and the model-call cache
adds `n` to its key when `n > 1`, so a repeat is a new sample (and repeat 1 shares its
calls with a run without repeats).
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["answering_epoch", "current_epoch"]

_epoch: contextvars.ContextVar[int] = contextvars.ContextVar("gtog_epoch", default=1)


def current_epoch() -> int:
    """The repeat number of the calls made now (1 outside any `answering_epoch`)."""
    return _epoch.get()


@contextmanager
def answering_epoch(n: int) -> Iterator[None]:
    """Make the calls inside the block (in this task) belong to repeat `n` (1-based)."""
    if n < 1:
        raise ValueError(f"an epoch is 1 or more, got {n}")
    token = _epoch.set(n)
    try:
        yield
    finally:
        _epoch.reset(token)
