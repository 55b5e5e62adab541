"""Local search contexts built in a process of their own, beside the run's event loop.

Building a local search context (graphrag's `LocalSearchMixedContext`) is 5-10 ms of
Python a question (pandas tables, token counts). In the run's process it shares the
interpreter lock with the event loop that sends and reads every model call: at 16
questions at once against a fast endpoint, the context thread's builds took 53 ms each (17
ms of CPU), the thread was busy all the time, and questions waited 0.2 s for it.
`ContextProcess` runs a child Python (`gtog.search._context_worker`) that builds them on
another core.

The child is spawned before the run's own imports (its imports take as long) and fed from
the event loop through its pipes (no thread between): each builder is pickled once
(`portable_builder`, in a worker thread) and sent as soon as it is known to be worth it (its
first builds, or an earlier builder of its type: the next index's is sent at its first
question), ready or not (the pipe holds it); each question sends its query and embedding and
gets the context back. Until the child holds the builder, for a builder whose contexts are
cheap (basic search's, under 1 ms: sending and reading back cost the loop more) or that
cannot be pickled, and after any failure of the child, contexts are built in the context
thread as before: the same context either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import pickle
import subprocess
import sys
import time
import weakref
from typing import Any

from gtog.search._context_worker import HEADER, frame, unpacked
from gtog.search._offloop import portable_builder

__all__ = ["ContextProcess", "wants_context_process"]

logger = logging.getLogger(__name__.replace("._", "."))  # eval.log names the module as before

_WORTH = 0.006
"""CPU seconds a build must take (on average, in a thread) to be sent to the child."""
_SAMPLES = 4

_PATIENCE = 60
"""Seconds to wait for the child's answer before building in the thread for good."""

_SWITCH = "GTOG_CONTEXT_PROCESS"
"""Environment: `0` never starts the context process, `1` always (tests), unset: by size."""


def wants_context_process(concurrency: int, builds: int) -> bool:
    """Whether a run with `concurrency` questions at once and `builds` contexts to build
    gains from the context process (its start costs a second or two of the other core):
    at 8 or more at once, 100 or more contexts, on 2 or more cores."""
    switch = os.environ.get(_SWITCH, "")
    if switch in ("0", "1"):
        return switch == "1"
    return concurrency >= 8 and builds >= 100 and (os.cpu_count() or 1) >= 2


class ContextProcess:
    """The child process and its pending requests: `spawn` it (as early as the run knows
    it wants it: its imports take seconds), `attach` it to the run's event loop, `close`."""

    def __init__(self) -> None:
        self._popen: subprocess.Popen[bytes] | None = None
        self._stdin: asyncio.WriteTransport | None = None
        self._ready = False
        self._dead = False
        self._settled: asyncio.Event | None = None  # (set: ready, or dead)
        self._reader: asyncio.Task[None] | None = None
        self._next = 0
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._loaded: dict[int, asyncio.Future[bool]] = {}  # builder's id -> in the child?
        self._ids: dict[int, int] = {}  # id(builder) -> its id in the child
        self._thread_cpu: dict[int, list[float]] = {}  # id(builder) -> its first builds' CPU
        self._types: dict[type, bool] = {}  # a builder type -> whether its first was worth it
        self._sending: set[asyncio.Task[int | None]] = set()
        self._tracked: set[int] = set()
        self._started = 0.0
        self.built = 0
        """Contexts the child built."""
        self.cpu = 0.0
        """The child's CPU seconds building them."""
        self.waited = 0.0
        """Seconds the questions waited for them (from sending the query to the answer)."""

    def spawn(self) -> None:
        """Start the child (blocking for the few milliseconds of a fork)."""
        self._started = time.perf_counter()
        try:
            self._popen = subprocess.Popen(
                [sys.executable, "-m", "gtog.search._context_worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError:
            logger.warning("context process not started; contexts built in a thread", exc_info=True)
            self._dead = True

    async def attach(self) -> None:
        """Talk to the child from the running loop (spawned first if it was not)."""
        if self._popen is None and not self._dead:
            self.spawn()
        popen = self._popen
        if popen is None or popen.stdin is None or popen.stdout is None:
            return
        loop = asyncio.get_running_loop()
        stdout = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdout), popen.stdout)
        self._stdin, _ = await loop.connect_write_pipe(asyncio.Protocol, popen.stdin)
        self._settled = asyncio.Event()
        self._reader = asyncio.create_task(self._read(stdout))

    async def ship(self, builder: Any) -> bool:
        """Wait for the child, send it `builder`, and say whether it holds it (contexts
        are built there from then on)."""
        if self._settled is not None:
            await self._settled.wait()
        if self._dead:
            return False
        self._thread_cpu[id(builder)] = [math.inf] * _SAMPLES  # (sent, whatever its builds take)
        await self._load(builder)
        loaded = self._loaded.get(self._ids.get(id(builder), -1))
        if loaded is None:
            return False
        return bool(await self._answered(loaded, False))

    async def _answered(self, answer: asyncio.Future[Any], otherwise: Any) -> Any:
        """The child's `answer`; `otherwise` when none comes within `_PATIENCE` seconds
        (the child is then stopped: the thread builds from now on)."""
        try:
            return await asyncio.wait_for(asyncio.shield(answer), _PATIENCE)
        except TimeoutError:
            logger.warning("context process: no answer in %d s; stopped", _PATIENCE)
            self._stop()
            return otherwise

    def _stop(self) -> None:
        """Give up on the child: kill it (its reader then ends every wait)."""
        if self._popen is not None:
            with contextlib.suppress(ProcessLookupError):
                self._popen.kill()
        self._fail()

    async def _read(self, stdout: asyncio.StreamReader) -> None:
        try:
            while True:
                head = await stdout.readexactly(HEADER.size)
                message = pickle.loads(await stdout.readexactly(HEADER.unpack(head)[0]))
                self._answer(message)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except Exception:
            logger.warning("context process: unreadable answer", exc_info=True)
        if not self._dead:  # (not closed by the run: killed, out of memory, crashed)
            logger.warning("context process ended; contexts are built in a thread from now on")
        self._fail()

    def _answer(self, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "ready":
            self._ready = True
            if self._settled is not None:
                self._settled.set()
            logger.info("context process ready in %.1f s", time.perf_counter() - self._started)
        elif kind == "loaded":
            _, bid, error = message
            if error is not None:
                logger.info("context process: builder not loaded, built in a thread\n%s", error)
            loaded = self._loaded.get(bid)
            if loaded is not None and not loaded.done():
                loaded.set_result(error is None)
        elif kind in ("built", "failed"):
            waiting = self._waiting.pop(message[1], None)
            if kind == "failed":
                logger.info("context process: build failed, built in a thread\n%s", message[2])
            if kind == "built":
                self.cpu += message[3]
            if waiting is not None and not waiting.done():
                waiting.set_result(unpacked(message[2]) if kind == "built" else None)

    def _fail(self) -> None:
        """The child is gone: every waiter builds in its thread from now on."""
        self._dead = True
        if self._settled is not None:
            self._settled.set()
        for waiting in self._waiting.values():
            if not waiting.done():
                waiting.set_result(None)
        for loaded in self._loaded.values():
            if not loaded.done():
                loaded.set_result(False)
        self._waiting.clear()

    def _send(self, message: tuple[Any, ...]) -> bool:
        if self._dead or self._stdin is None or self._stdin.is_closing():
            return False
        try:
            self._stdin.write(frame(message))
        except (ConnectionError, RuntimeError):
            self._fail()
            return False
        return True

    def observe(self, builder: Any, cpu: float) -> None:
        """Note a context of `builder` built in a thread, in `cpu` seconds of its CPU."""
        seen = self._thread_cpu.get(id(builder))
        if seen is None:
            seen = self._thread_cpu[id(builder)] = []
            self._track(builder)
        if len(seen) < _SAMPLES:
            seen.append(cpu)
            if len(seen) == _SAMPLES:
                worth = self._types[type(builder)] = self._worth(builder)  # (its own, now)
                where = "the context process" if worth else "a thread"
                name = type(builder).__name__
                mean = 1000 * sum(seen) / len(seen)
                logger.info("%s: %.1f ms of CPU a context: built in %s", name, mean, where)
                if worth and not self._dead and id(builder) not in self._ids:
                    self._send_now(builder)  # (not at the next question: it may be a round away)

    def _send_now(self, builder: Any) -> None:
        """Send `builder` to the child in a task of its own (no question waits for it)."""
        task = asyncio.get_running_loop().create_task(self._load(builder))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    def _worth(self, builder: Any) -> bool:
        """Whether `builder`'s contexts take long enough to build (`_WORTH` of CPU, over its
        first `_SAMPLES` builds in a thread; until then, what its type's first builder
        showed) to gain from the child: sending the question and reading its context back
        costs the event loop a few ms, and a cheap build (basic search's: under 1 ms) is
        slower there than here."""
        seen = self._thread_cpu.get(id(builder), [])
        if len(seen) >= _SAMPLES:
            return sum(seen) / len(seen) >= _WORTH
        return self._types.get(type(builder), False)

    async def build(self, builder: Any, query: str, response: Any, params: dict[str, Any]) -> Any:
        """`builder`'s context of `query` built in the child, or None when the child cannot
        (the builder not held there yet, a cheap builder, the builder not picklable, a
        failure: build it here instead)."""
        if self._dead or not self._worth(builder):
            return None
        bid = await self._load(builder)  # (sent ready or not: it waits in the pipe)
        if bid is None:
            return None
        self._next += 1
        rid = self._next
        waiting: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[rid] = waiting
        if not self._send(("build", rid, bid, query, response, params)):
            self._waiting.pop(rid, None)
            return None
        sent = time.perf_counter()
        try:
            context = await self._answered(waiting, None)
        finally:
            self._waiting.pop(rid, None)
        if context is not None:
            self.built += 1
            self.waited += time.perf_counter() - sent
        return context

    async def _load(self, builder: Any) -> int | None:
        """The child's id of `builder` once the child holds it; None until then (it is
        sent the first time: pickled in a thread, unpickled there, meanwhile contexts are
        built here) and for a builder the child cannot hold."""
        key = id(builder)
        bid = self._ids.get(key)
        if bid is not None:
            loaded = self._loaded.get(bid)
            return bid if loaded is not None and loaded.done() and loaded.result() else None
        loop = asyncio.get_running_loop()
        bid = self._ids[key] = len(self._ids) + 1
        loaded = self._loaded[bid] = loop.create_future()
        self._track(builder)
        try:
            blob = await loop.run_in_executor(None, portable_builder, builder)
        except Exception as exc:
            name = type(builder).__name__
            logger.info("context process: %s contexts built in a thread (%s)", name, exc)
            loaded.set_result(False)
            return None
        if not self._send(("load", bid, blob)) and not loaded.done():
            loaded.set_result(False)
        return None

    def _track(self, builder: Any) -> None:
        """Forget `builder` (here and in the child) once it is collected (its index done)."""
        if id(builder) not in self._tracked:
            self._tracked.add(id(builder))
            loop = asyncio.get_running_loop()
            with contextlib.suppress(TypeError):  # (a builder that takes no weak reference)
                weakref.finalize(builder, self._forget, loop, id(builder))

    def _forget(self, loop: asyncio.AbstractEventLoop, key: int) -> None:
        """(A builder collected, in any thread) drop it in the child too."""
        self._thread_cpu.pop(key, None)
        self._tracked.discard(key)
        bid = self._ids.pop(key, None)
        if bid is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._drop, bid)

    def _drop(self, bid: int) -> None:
        self._loaded.pop(bid, None)
        self._send(("drop", bid))

    async def close(self) -> None:
        """End the child: its stdin closed, then waited for (killed after 5 s; at once
        when it was not ready yet: nothing it does then is needed)."""
        self._dead = True
        for task in list(self._sending):
            task.cancel()
        if self._stdin is not None:
            self._stdin.close()
        popen, self._popen = self._popen, None
        if popen is not None and not self._ready:
            with contextlib.suppress(ProcessLookupError):
                popen.kill()
        try:
            if popen is not None:
                loop = asyncio.get_running_loop()
                await loop.run_in_executor(None, _end, popen)
        finally:
            if self._reader is not None:
                self._reader.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._reader

    def kill(self) -> None:
        """End a child never attached (the run ended before its loop)."""
        self._dead = True
        popen, self._popen = self._popen, None
        if popen is not None:
            with contextlib.suppress(ProcessLookupError):
                popen.kill()
            _end(popen)


def _end(popen: subprocess.Popen[bytes]) -> None:
    """Wait for the child to end after its stdin closed; kill it after 5 s."""
    if popen.stdin is not None and not popen.stdin.closed:
        with contextlib.suppress(OSError):
            popen.stdin.close()
    try:
        popen.wait(5)
    except subprocess.TimeoutExpired:
        popen.kill()
        popen.wait()
    if popen.stdout is not None:
        popen.stdout.close()
