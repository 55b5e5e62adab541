"""Questions grouped by index: memory holds the indexes in flight, not every index of the run.

The pairs to search run index after index (in the order the dataset names the indexes,
each index's questions in dataset order). An index's engines are built when its first
pair starts and released when its last pair is done; with free concurrency the next
index's pairs start (and its engines are built) while the previous index's last questions
finish. At most about `concurrency + 1` indexes are loaded at once, whatever the number of
indexes, and the first answer waits for one index, not all of them.
"""

from __future__ import annotations

import logging
from collections import Counter

from gtog._project import log_translation
from gtog.eval._dataset import QAItem
from gtog.eval.run._answers import AnswerBook
from gtog.eval.run._engines import Engines
from gtog.eval.run._state import EvalRun, Pair
from gtog.search._outcome import SearchEngine

__all__ = ["IndexSchedule"]

logger = logging.getLogger(__name__.replace("._", "."))  # eval.log names the module as before


class IndexSchedule:
    """The order of a run's pairs, and when each index is opened and released."""

    def __init__(self, run: EvalRun, engines: Engines, pairs: list[Pair]) -> None:
        self._run = run
        self._engines = engines
        rank = {k: i for i, k in enumerate(dict.fromkeys(q.index_key for q, *_ in pairs))}
        self.pairs = sorted(pairs, key=lambda p: rank[p[0].index_key])
        """The pairs, grouped by index (a stable sort: dataset order within an index)."""
        searched = [(q.index_key, m) for q, m, _ in self.pairs if m not in run.answers]
        self._left = Counter(key for key, _ in searched)
        self._methods: dict[str, list[str]] = {}
        for key, method in searched:
            if method not in self._methods.setdefault(key, []):
                self._methods[key].append(method)
        for key in self._methods:
            note = run.projects[key].compat.note(f"index {key!r} ({run.projects[key].root})")
            if note is not None:
                logger.warning("%s", note)
            log_translation(run.projects[key].root, logger)  # (graphrag 2.x settings)

    async def engine(self, item: QAItem, method: str) -> SearchEngine | AnswerBook | BaseException:
        """The engine for one pair (its index is opened first if it is not)."""
        if method not in self._run.answers:
            await self._engines.open(item.index_key, self._methods[item.index_key])
        return self._engines.get(item.index_key, method)

    def done(self, item: QAItem, method: str) -> None:
        """One pair is finished; its index is released after its last one."""
        if method in self._run.answers:
            return
        key = item.index_key
        self._left[key] -= 1
        if self._left[key] == 0:
            self._engines.release(key)
