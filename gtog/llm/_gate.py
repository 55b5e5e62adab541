"""The gate every gtog model request passes before it is sent: cache, then limits.

`CallGate` is a graphrag_cache `Cache` given to every completion and embedding model gtog
creates (`gtog.llm._models`), so graphrag_llm's own cache middleware asks it first, for
chat and embeddings, asynchronous and synchronous calls alike, below graphrag's engines,
ToG and the judges. During a run (`model_calls(...)`, a context variable):

- a request whose reply is stored is answered from the store, marked `gtog_cached` (the
  meter counts it with its recorded usage, as cached), unless gtog rejects that reply
  (`gtog.llm._cache.rejection`: cut, empty, refused by the caller's check): then it is
  sent again;
- otherwise, if a limit of the run or of the current pair is reached, the request is
  refused (`LimitReached`); else it goes out, and graphrag_llm stores its reply here
  (a rejected reply is not stored).

Outside a run (no `model_calls` block) the gate lets every request through and keeps
nothing. Called on the main thread's event loop, it never waits on the disk: a reply is
read in a worker thread (a key the store knows absent needs none: `CallStore.absent`) and
written in the store's writer thread without being awaited (`CallStore.put_later`; the
run's end and the process's exit wait for those writes). Inside a pair (`pair_writes`), a
request goes out only once the pair's earlier replies are written, so a kill never pays
again for a reply the pair had already gone past.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any

from graphrag_cache import Cache

from gtog.llm._budget import refusal
from gtog.llm._cache import rejection
from gtog.llm._runcalls import CACHED_MARK, RunCalls, current_calls, model_calls
from gtog.llm._slots import take_slot

__all__ = ["CALL_GATE", "CallGate", "RunCalls", "current_calls", "model_calls"]

logger = logging.getLogger(__name__.replace("._", "."))  # eval.log names the module as before


_pair_writes: contextvars.ContextVar[list[Future[None]] | None] = contextvars.ContextVar(
    "gtog_pair_writes", default=None
)


@contextmanager
def pair_writes() -> Iterator[None]:
    """The calls made in the block (one pair's: its search and its judges) send a request
    only once the replies they received before it are written: a kill then loses no reply
    of a pair that went on to its next call, and a landed record's replies are stored."""
    token = _pair_writes.set([])
    try:
        yield
    finally:
        _pair_writes.reset(token)


async def _after_own_writes() -> None:
    """Wait for the current pair's replies still on their way to the cache (the writer is
    one thread, in order: its last write done, all are). Mostly done already: no wait."""
    unsaved = _pair_writes.get()
    if not unsaved:
        return
    last = unsaved[-1]
    if not last.done():
        with contextlib.suppress(Exception):  # (a failed write is logged where it failed)
            await asyncio.wrap_future(last)
    unsaved.clear()


async def _blocking(fn: Any, *args: Any) -> Any:
    """`fn(*args)`, in a worker thread when on the main thread (its event loop)."""
    if threading.current_thread() is threading.main_thread():
        return await asyncio.to_thread(fn, *args)
    return fn(*args)


def _replayable(value: Any) -> bool:
    """A stored or received value graphrag_llm can replay, of a reply gtog keeps."""
    if not isinstance(value, dict) or not isinstance(value.get("response"), dict):
        return False
    return rejection(value["response"]) is None


class CallGate(Cache):
    """graphrag_llm's cache for gtog's models: the run's store, then the run's limits."""

    def __init__(self, *, storage: Any = None, **kwargs: Any) -> None:
        """No storage of its own: the store is the current run's."""

    async def get(self, key: str) -> Any:
        """The stored reply of `key`, marked as replayed; else None (send the request), or
        `LimitReached` when a limit forbids sending it."""
        calls = current_calls()
        if calls is not None and calls.store is not None and not calls.store.absent(key):
            value = await _blocking(calls.store.get, key)
            if _replayable(value):
                return {**value, "response": {**value["response"], CACHED_MARK: True}}
        refused = refusal()
        if refused is not None:
            raise refused
        await _after_own_writes()
        await take_slot()  # (the request goes out now: gtog.llm._slots)
        return None

    async def set(self, key: str, value: Any, debug_data: dict | None = None) -> None:
        """Keep a reply that came from the provider (a failure to write costs only money)."""
        calls = current_calls()
        if calls is None or calls.store is None or not _replayable(value):
            return
        store = calls.store

        def failed(exc: BaseException) -> None:
            calls.write_errors += 1
            if calls.write_errors == 1:
                logger.warning("model-call cache: cannot write to %s: %s", store.root, exc)

        if threading.current_thread() is threading.main_thread():
            written = store.put_later(key, value, failed)  # (its writer thread: the loop goes on)
            unsaved = _pair_writes.get()
            if unsaved is not None:
                unsaved.append(written)
            return
        try:
            store.put(key, value)
        except OSError as exc:
            failed(exc)

    async def has(self, key: str) -> bool:
        """True when the current run's store holds `key`."""
        calls = current_calls()
        if calls is None or calls.store is None:
            return False
        return bool(await _blocking(calls.store.__contains__, key))

    async def delete(self, key: str) -> None:
        """Entries are never deleted one by one (delete the folder to clear the cache)."""

    async def clear(self) -> None:
        """Nothing: delete the cache folder to clear it."""

    def child(self, name: str) -> Cache:
        """The same gate (keys already name the model)."""
        return self


CALL_GATE = CallGate()
"""The one gate every model gtog creates is given."""
