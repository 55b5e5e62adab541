"""Calls in flight: a run has at most `concurrency` requests out at once, and keeps them out.

A run's `concurrency` bounds what the endpoint sees: the model calls (and the requests to
an HTTP method) in flight at once. Each takes one of the run's call slots (`call_slots`,
set around the run's loop) as it goes out and gives it back once its reply is read (a
streamed answer's last chunk; a model call waiting to be retried keeps its slot). A model
call takes it in the call gate (`gtog.llm._gate`), once no stored reply answers it and the
pair's earlier replies are written: a reply replayed from the cache, or a wait on the disk,
holds no slot. The run keeps a few more questions going than that (`questions_at_once`),
so that a question's own work between its calls (its context, its answer's scoring, its
record) leaves no slot empty: the calls of the others fill it.

A search's time held back by the slots (a call of its own waiting, none out) is not the
method's: `Holdup` counts it apart (the pair's `queue_wait`, not its latency) and stops
the search's timeout meanwhile. Outside a run (no slots) a call takes none.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import Any

__all__ = [
    "Holdup",
    "call_slot",
    "call_slots",
    "holdup",
    "questions_at_once",
    "slotted",
    "take_slot",
]

_slots: contextvars.ContextVar[asyncio.Semaphore | None] = contextvars.ContextVar(
    "gtog_call_slots", default=None
)
_holdup: contextvars.ContextVar[Holdup | None] = contextvars.ContextVar("gtog_holdup", default=None)
_ticket: contextvars.ContextVar[_Ticket | None] = contextvars.ContextVar(
    "gtog_slot_ticket", default=None
)


def questions_at_once(concurrency: int) -> int:
    """Questions a run keeps going for `concurrency` calls in flight: a quarter more (at
    least one), measured best of 2-6 more at 16 (docs/measured.md, issue 45)."""
    return concurrency + max(1, concurrency // 4)


@contextmanager
def call_slots(concurrency: int) -> Iterator[None]:
    """In the block (on one event loop), at most `concurrency` calls are out at once."""
    token = _slots.set(asyncio.Semaphore(concurrency))
    try:
        yield
    finally:
        _slots.reset(token)


class Holdup:
    """One search's time held back by the call slots: while one of its calls waits for a
    slot and none of its calls is out. `timeout` (the search's) is stopped meanwhile."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.timeout: asyncio.Timeout | None = None
        self._waiting = 0
        self._out = 0
        self._since: float | None = None
        self._left: float | None = None

    def _change(self, waiting: int, out: int) -> None:
        self._waiting += waiting
        self._out += out
        held = self._waiting > 0 and self._out == 0
        if held == (self._since is not None):
            return
        if held:
            self._since = time.perf_counter()
            self._pause()
        else:
            self.seconds += time.perf_counter() - (self._since or 0.0)
            self._since = None
            self._resume()

    def _pause(self) -> None:
        timeout = self.timeout
        if timeout is None or (when := timeout.when()) is None:
            return
        loop = asyncio.get_running_loop()
        try:
            timeout.reschedule(None)
        except RuntimeError:  # (expired or left already)
            return
        self._left = when - loop.time()

    def _resume(self) -> None:
        timeout, left = self.timeout, self._left
        self._left = None
        if timeout is None or left is None:
            return
        with suppress(RuntimeError):
            timeout.reschedule(asyncio.get_running_loop().time() + left)


@contextmanager
def holdup() -> Iterator[Holdup]:
    """The block's calls (one search's, and its tasks') report their waits to the Holdup."""
    held = Holdup()
    token = _holdup.set(held)
    try:
        yield held
    finally:
        _holdup.reset(token)


class _Ticket:
    """One call's slot: taken once (`take`: at once, or where the call gate lets the call
    out, `take_slot`) and given back once (`give`); the current search's Holdup is told."""

    def __init__(self, slots: asyncio.Semaphore) -> None:
        self.slots = slots
        self.taken = False
        self.held = _holdup.get()

    async def take(self) -> None:
        if self.taken:
            return
        held = self.held
        if held is not None:
            held._change(1, 0)
        try:
            await self.slots.acquire()
        except BaseException:  # (cancelled while waiting)
            if held is not None:
                held._change(-1, 0)
            raise
        if held is not None:
            held._change(-1, 1)
        self.taken = True

    def give(self) -> None:
        if not self.taken:
            return
        self.taken = False
        self.slots.release()
        if self.held is not None:
            self.held._change(0, -1)


@asynccontextmanager
async def call_slot() -> AsyncIterator[None]:
    """One call's slot for the block (none outside a run)."""
    slots = _slots.get()
    if slots is None:
        yield
        return
    ticket = _Ticket(slots)
    await ticket.take()
    try:
        yield
    finally:
        ticket.give()


async def take_slot() -> None:
    """The current call is about to go out (the call gate found no reply to replay and no
    limit that refuses it): its slot now, if the run has slots."""
    ticket = _ticket.get()
    if ticket is not None:
        await ticket.take()


async def slotted(send: Callable[[], Awaitable[Any]], stream: bool = False) -> Any:
    """`await send()` in a call slot; a stream (`stream`: its reply is an async iterator)
    keeps the slot until it is read to its end or closed. A call that passes the call gate
    (not streamed) takes its slot there, once its cache lookup and waits are done."""
    slots = _slots.get()
    if slots is None:
        return await send()
    ticket = _Ticket(slots)
    if not stream:
        token = _ticket.set(ticket)
        try:
            return await send()
        finally:
            _ticket.reset(token)
            ticket.give()
    await ticket.take()
    try:
        reply = await send()
    except BaseException:
        ticket.give()
        raise
    return _Chunks(reply, ticket)


class _Chunks:
    """A streamed reply that gives its slot back when read to the end, closed or dropped."""

    _ticket: _Ticket | None = None

    def __init__(self, inner: Any, ticket: _Ticket) -> None:
        self._inner = inner
        self._ticket = ticket

    def _done(self) -> None:
        if self._ticket is not None:
            self._ticket.give()  # (once: a ticket given back is not given again)

    def __aiter__(self) -> _Chunks:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._inner.__anext__()
        except BaseException:  # its end (StopAsyncIteration), an error, a cancellation
            self._done()
            raise

    async def aclose(self) -> None:
        self._done()
        close = getattr(self._inner, "aclose", None)
        if close is not None:
            await close()

    def __del__(self) -> None:  # (a stream dropped half read)
        self._done()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
