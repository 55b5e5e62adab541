"""The engine cache: one engine per (index, method), built before the first question."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from gtog.eval.run.spec import engine_options
from gtog.eval.run.state import EvalRun
from gtog.search import SearchEngine, build_engine

__all__ = ["Engines"]

logger = logging.getLogger(__name__)


class Engines:
    """Engines built once per (index, method), on first use."""

    def __init__(self, run: EvalRun) -> None:
        self._run = run
        self._built: dict[tuple[str, str], SearchEngine | BaseException] = {}
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}

    async def get(self, key: str, method: str) -> SearchEngine | BaseException:
        slot = (key, method)
        lock = self._locks.setdefault(slot, asyncio.Lock())
        async with lock:
            if slot not in self._built:
                options = engine_options(method, self._run.config)
                try:
                    self._built[slot] = await build_engine(method, self._run.projects[key], options)
                except Exception as exc:  # recorded per question; the run goes on
                    logger.exception("could not build the %s engine for %s", method, key)
                    self._built[slot] = exc
            return self._built[slot]

    async def build(self, slots: Iterable[tuple[str, str]]) -> None:
        """Build these engines now, before any question runs (a build holds the loop)."""
        for key, method in sorted(set(slots)):
            await self.get(key, method)
