"""The engine cache: an index's engines are built when its first question starts and
released when its last one is done, so a run holds the indexes in flight, not all of them.

Indexes are opened in one worker thread (with its own event loop): reading the tables and
building graphrag's engines is disk and CPU work that would otherwise stall the questions
of the other indexes on the run's event loop. One thread, not many: each thread allocates
from its own malloc arena, and memory freed in many arenas is not given back.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor

from gtog.eval.run._answers import AnswerBook
from gtog.eval.run._features import read_names
from gtog.eval.run._state import EvalRun
from gtog.search._outcome import SearchEngine

__all__ = ["Engines", "import_engines"]

logger = logging.getLogger(__name__.replace("._", "."))  # eval.log names the module as before

Built = SearchEngine | BaseException


_VECTOR_MODULES = {
    "lancedb": "graphrag_vectors.lancedb",
    "azure_ai_search": "graphrag_vectors.azure_ai_search",
    "cosmosdb": "graphrag_vectors.cosmosdb",
}


def engine_modules(run: EvalRun) -> list[str]:
    """What building the run's engines still to build imports (graphrag's engine factories,
    the vector stores' clients: LanceDB alone is ~1 s on 2 cores); none when every method
    left is an answers file or a user's service."""
    methods = {m for _, m, _ in run.todo}
    built = [m for m in methods if m not in run.answers and run.run_methods[m].http is None]
    if not built:
        return []
    names = ["gtog.search._builders", "graphrag.query.factory", "graphrag.query.indexer_adapters"]
    if any((run.run_methods[m].base or m) == "tog" for m in built):
        names.append("gtog.tog._factory")
    keys = {q.index_key for q, m, _ in run.todo if m in built}
    for key in sorted(keys):
        kind = str(getattr(run.projects[key].config.vector_store, "type", "") or "")
        module = _VECTOR_MODULES.get(kind)
        if module is not None and module not in names:
            names.append(module)
    return names


def import_engines(run: EvalRun) -> None:
    """Import `engine_modules(run)` (blocking): before the run's first model call, so the
    first index's opening does not spend the calls' time on them."""
    import contextlib
    import importlib

    for name in engine_modules(run):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


class Engines:
    """Engines built per (index, method): opened per index, released per index."""

    def __init__(self, run: EvalRun) -> None:
        self._run = run
        self._built: dict[tuple[str, str], Built] = {}
        # (an answers file's method needs no engine: `get` hands back its answers)
        self._locks: dict[str, asyncio.Lock] = {}
        self.opened: list[str] = []
        """Index keys in the order they were opened (one entry per opening)."""
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gtog-index")
        self._begun: dict[str, tuple[list[str], Future[tuple[dict[str, Built], float]]]] = {}

    def _wanted(self, key: str, methods: Iterable[str]) -> list[str]:
        return [
            m
            for m in dict.fromkeys(methods)
            if m not in self._run.answers and (key, m) not in self._built
        ]

    def begin(self, key: str, methods: Iterable[str]) -> None:
        """Start building index `key`'s engines of `methods` now, in the engines' thread,
        from outside any event loop (the run's first index, while the vector-size check
        awaits its embedding); `open` takes what was built."""
        wanted = self._wanted(key, methods)
        if wanted and key not in self._begun:
            self._begun[key] = (wanted, self._pool.submit(self._build, key, wanted))

    def _build(self, key: str, wanted: list[str]) -> tuple[dict[str, Built], float]:
        """(In the engines' thread) the engines, and the seconds they took."""
        from gtog._internals import factory_models
        from gtog.llm._models import gated_completion, gated_embedding, sharing_models

        start = time.perf_counter()
        with (
            sharing_models(self._run.models),  # (shared with the judges)
            factory_models(gated_completion, gated_embedding),  # (graphrag makes none)
        ):
            built = asyncio.run(self._build_all(key, wanted))
        return built, time.perf_counter() - start

    async def _build_all(self, key: str, methods: list[str]) -> dict[str, Built]:
        project = self._run.projects[key]
        out: dict[str, Built] = {}
        for method in methods:
            plan = self._run.run_methods[method]
            try:
                if plan.http is not None:
                    from gtog.search._http import build_http_engine

                    out[method] = build_http_engine(method, plan.http, key, project)
                    continue
                out[method] = await plan.entry.build(project, plan.options)
            except Exception as exc:  # recorded per question; the run goes on (logged
                out[method] = exc  # by `_store`, in the run's log, wherever this ran)
        await read_names(self._run, key)  # the routing feature's titles, while here
        project.release()  # the engines hold what they use of the tables
        return out

    async def open(self, key: str, methods: Iterable[str]) -> None:
        """Build the engines of `methods` on index `key` that are not built yet."""
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            begun = self._begun.pop(key, None)
            if begun is not None:
                self._store(key, begun[0], *await asyncio.wrap_future(begun[1]))
            wanted = self._wanted(key, methods)
            if wanted:
                loop = asyncio.get_running_loop()
                built = await loop.run_in_executor(self._pool, self._build, key, wanted)
                self._store(key, wanted, *built)

    def _store(self, key: str, wanted: list[str], built: dict[str, Built], took: float) -> None:
        self._built.update({(key, m): e for m, e in built.items()})
        self.opened.append(key)
        for method, engine in built.items():
            if isinstance(engine, BaseException):
                logger.error("could not build the %s engine for %s", method, key, exc_info=engine)
        logger.info("index %s: %s engine(s) built in %.1f s", key, ", ".join(wanted), took)

    def get(self, key: str, method: str) -> SearchEngine | AnswerBook | BaseException:
        """The engine of `method` on index `key` (an answers file's answers; the build's
        exception if it could not be built). `open` it first."""
        if method in self._run.answers:
            return self._run.answers[method]
        return self._built[(key, method)]

    def release(self, key: str) -> None:
        """Drop index `key`'s engines and tables (built again if opened again)."""
        for slot in [s for s in self._built if s[0] == key]:
            del self._built[slot]
        self._run.projects[key].release()
        logger.info("index %s: released", key)

    def close(self) -> None:
        """Stop the build thread (after the run)."""
        self._pool.shutdown(wait=False, cancel_futures=True)
