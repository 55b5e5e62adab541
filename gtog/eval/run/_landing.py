"""Finished records landed on disk from one thread, in batches (a group commit).

Each finished record must be in the checkpoint (written and fsynced) before the run counts
it, and spend.json must hold what was paid so far. At 16 pairs at once, records finish a
few milliseconds apart: writing each in its own worker thread costs a write, an fsync, an
atomic spend.json rewrite and the cache's notes per record, in threads that all want the
interpreter lock the event loop needs. `Lander` writes every record that finished while the
previous batch was on its way to disk together: one checkpoint write and fsync, one
spend.json, then the notes; each record's waiter is woken when its batch is safe.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Generic, TypeVar

__all__ = ["Lander"]

R = TypeVar("R")

_Waiter = tuple[asyncio.AbstractEventLoop, "asyncio.Future[None]"]


class Lander(Generic[R]):
    """Runs `write(batch)` in one worker thread for the records handed to `land`.

    A batch is every record queued while the previous one was being written (up to
    `most`); `land` returns once its record's batch is written, or raises what the
    write raised. A waiter cancelled meanwhile does not cancel the write: `close` (and
    the interpreter's exit, as for any executor) waits for every queued record.
    """

    def __init__(self, write: Callable[[Sequence[R]], None], most: int = 256) -> None:
        self._write = write
        self._most = most
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gtog-land")
        self._lock = threading.Lock()
        self._queued: list[tuple[R, _Waiter]] = []
        self._draining = False

    async def land(self, record: R) -> None:
        """Queue `record` and wait until it is written."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        with self._lock:
            self._queued.append((record, (loop, done)))
            start, self._draining = not self._draining, True
        if start:
            self._pool.submit(self._drain)
        await done

    def _drain(self) -> None:
        while True:
            with self._lock:
                batch, self._queued = self._queued[: self._most], self._queued[self._most :]
                if not batch:
                    self._draining = False
                    return
            error: BaseException | None = None
            try:
                self._write([record for record, _ in batch])
            except BaseException as exc:  # handed to each waiter, which raises it
                error = exc
            for _, (loop, done) in batch:
                if not loop.is_closed():
                    loop.call_soon_threadsafe(_settle, done, error)

    def close(self) -> None:
        """Write what is queued and stop the thread (blocking: call it off the loop)."""
        self._pool.shutdown(wait=True)


def _settle(done: asyncio.Future[None], error: BaseException | None) -> None:
    if done.cancelled():
        return
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)
