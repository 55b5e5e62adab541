"""The engine cache: one engine per (index, method), built before the first question."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from gtog.eval.run.answers import AnswerBook
from gtog.eval.run.state import EvalRun
from gtog.search import SearchEngine

__all__ = ["Engines"]

logger = logging.getLogger(__name__)


class Engines:
    """Engines built once per (index, method), on first use."""

    def __init__(self, run: EvalRun) -> None:
        self._run = run
        self._built: dict[tuple[str, str], SearchEngine | BaseException] = {}
        # (an answers file's method needs no engine: `get` hands back its answers)
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}

    async def get(self, key: str, method: str) -> SearchEngine | AnswerBook | BaseException:
        """The engine of `method` on index `key` (an answers file's answers; the build's
        exception if it could not be built)."""
        if method in self._run.answers:
            return self._run.answers[method]
        slot = (key, method)
        lock = self._locks.setdefault(slot, asyncio.Lock())
        async with lock:
            if slot not in self._built:
                plan = self._run.run_methods[method]
                try:
                    self._built[slot] = await plan.entry.build(
                        self._run.projects[key], plan.options
                    )
                except Exception as exc:  # recorded per question; the run goes on
                    logger.exception("could not build the %s engine for %s", method, key)
                    self._built[slot] = exc
            return self._built[slot]

    async def build(self, slots: Iterable[tuple[str, str]]) -> None:
        """Build these engines now, before any question runs (a build holds the loop)."""
        for key, method in sorted(set(slots)):
            await self.get(key, method)
