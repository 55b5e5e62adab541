"""Questions grouped by index: memory holds the indexes in flight, not every index of the run.

The pairs to search run index after index (in the order the dataset names the indexes,
each index's questions in dataset order). An index's engines are built when its first
pair starts and released when its last pair is done; with free concurrency the next
index's pairs start (and its engines are built) while the previous index's last questions
finish. At most about `questions_at_once(concurrency) + 2` indexes are loaded at once,
whatever the number of indexes, and the first answer waits for one index, not all of them.

The next index is opened ahead: once the pairs of an index that have not started are no
more than the questions the run keeps going (`gtog.llm._slots.questions_at_once`), its
successor's engines are built (in the engines' thread) while those last pairs run, so its
first questions find them built instead of all waiting for them at once, with the run's
calls stalled meanwhile. The first index is opened before the loop starts
(`open_first_index`), while the vector-size check's embeddings of the first round's
questions are awaited.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from itertools import pairwise

from gtog._project import log_translation
from gtog.eval._dataset import QAItem
from gtog.eval.run._answers import AnswerBook
from gtog.eval.run._engines import Engines
from gtog.eval.run._state import EvalRun, Pair, by_index
from gtog.llm._slots import questions_at_once
from gtog.search._outcome import SearchEngine

__all__ = ["IndexSchedule", "open_first_index"]

logger = logging.getLogger(__name__.replace("._", "."))  # eval.log names the module as before


class IndexSchedule:
    """The order of a run's pairs, and when each index is opened and released."""

    def __init__(self, run: EvalRun, engines: Engines, pairs: list[Pair]) -> None:
        self._run = run
        self._engines = engines
        self.pairs = by_index(pairs)
        """The pairs, grouped by index (a stable sort: dataset order within an index)."""
        searched = [(q.index_key, m) for q, m, _ in self.pairs if m not in run.answers]
        self._left = Counter(key for key, _ in searched)
        self._unstarted = Counter(self._left)
        order = list(self._left)  # the indexes in the order their pairs run
        self._next = dict(pairwise(order))
        self._ahead: dict[str, asyncio.Task[None]] = {}
        self._methods = _methods(run, self.pairs)
        for key in self._methods:
            note = run.projects[key].compat.note(f"index {key!r} ({run.projects[key].root})")
            if note is not None:
                logger.warning("%s", note)
            log_translation(run.projects[key].root, logger)  # (graphrag 2.x settings)

    async def engine(self, item: QAItem, method: str) -> SearchEngine | AnswerBook | BaseException:
        """The engine for one pair (its index is opened first if it is not)."""
        if method not in self._run.answers:
            key = item.index_key
            self._unstarted[key] -= 1
            await self._engines.open(key, self._methods[key])
            self._open_next(key)
        return self._engines.get(item.index_key, method)

    def _open_next(self, key: str) -> None:
        """Open the index after `key` once `key`'s pairs still to start fit in the questions
        the run keeps going (its last questions are then running, or about to)."""
        following = self._next.get(key)
        if following is None or following in self._ahead:
            return
        if self._unstarted[key] > questions_at_once(self._run.concurrency):
            return
        task = asyncio.get_running_loop().create_task(
            self._engines.open(following, self._methods[following])
        )
        task.add_done_callback(_quiet)  # a failed build is the waiting pair's error
        self._ahead[following] = task

    def close(self) -> None:
        """Cancel the openings ahead that no pair waited for (the run is over)."""
        for task in self._ahead.values():
            task.cancel()

    def done(self, item: QAItem, method: str) -> None:
        """One pair is finished; its index is released after its last one."""
        if method in self._run.answers:
            return
        key = item.index_key
        self._left[key] -= 1
        if self._left[key] == 0:
            self._engines.release(key)


def open_first_index(run: EvalRun) -> None:
    """Begin building the engines of the index the run's questions start with (in the
    engines' thread, `run.engines`; no event loop needed), so that it is built while the
    run's first model call (the vector-size check's embedding) is awaited, not after it."""
    methods = _methods(run, by_index(run.todo))
    if methods:
        engines = run.engines if isinstance(run.engines, Engines) else Engines(run)
        run.engines = engines
        key = next(iter(methods))
        engines.begin(key, methods[key])


def _methods(run: EvalRun, grouped: list[Pair]) -> dict[str, list[str]]:
    """index key -> the methods searched on it, the indexes in the order they run."""
    out: dict[str, list[str]] = {}
    for q, method, _ in grouped:
        if method not in run.answers and method not in out.setdefault(q.index_key, []):
            out[q.index_key].append(method)
    return {key: methods for key, methods in out.items() if methods}


def _quiet(task: asyncio.Task[None]) -> None:
    if not task.cancelled():
        task.exception()
