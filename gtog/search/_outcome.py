"""One search, run and judged as a success or a failure: `run_search`.

A recorded LLM error, an exception graphrag logged while swallowing it, a reply stopped by
the provider's content filter, or an empty answer without a successful completion becomes
`SearchFailed`, which carries what the search spent before it failed. An answer cut at
max_tokens is a success marked `cut` (the caller decides).
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from dataclasses import dataclass
from typing import Any, Protocol

import pandas as pd
from graphrag.query.structured_search.base import SearchResult

from gtog._errors import describe_exception
from gtog.llm._errors import fatal_reason
from gtog.llm._slots import holdup
from gtog.llm._usage import UsageMeter, UsageTally, metering
from gtog.search._metering import watch_swallowed_errors

__all__ = [
    "SearchEngine",
    "SearchFailed",
    "SearchOutcome",
    "current_question_id",
    "retrieved_sources",
    "run_search",
]

_question_id: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "gtog_question_id", default=None
)


def current_question_id() -> str | None:
    """The id of the question the current search answers (`run_search(question_id=)`), for
    engines that send it on (an HTTP method's `{question_id}`)."""
    return _question_id.get()


class SearchEngine(Protocol):
    """Anything with graphrag's `search(query) -> SearchResult`."""

    async def search(self, query: str) -> SearchResult: ...


class SearchFailed(Exception):
    """A search raised, timed out, or its engine swallowed an error; `usage` is what it spent."""

    def __init__(self, message: str, usage: UsageTally, seconds: float, held: float = 0.0) -> None:
        super().__init__(message)
        self.usage = usage
        self.seconds = seconds
        self.held = held
        """Seconds the search was held back by the run's call slots (not in `seconds`)."""


@dataclass
class SearchOutcome:
    """A successful search: graphrag's result, the metered usage and the wall time."""

    result: SearchResult
    usage: UsageTally
    seconds: float
    cut: str | None = None
    """`length` when the answer was cut at max_tokens (its last reply's finish reason)."""
    held: float = 0.0
    """Seconds the search was held back by the run's call slots (not in `seconds`)."""


def _failure(meter: UsageMeter, result: SearchResult | None) -> BaseException | str | None:
    """Why a search that returned `result` (None: it raised) failed, or None if it did not."""
    fatal = [e for e in meter.errors if fatal_reason(e) is not None]
    if fatal:
        return fatal[0]
    if meter.errors:
        return meter.errors[0]
    filtered = meter.filtered()
    if filtered is not None:
        return f"the provider's content filter stopped a reply ({filtered})"
    empty = result is not None and not str(result.response or "").strip()
    if empty and meter.tally.total_calls == 0:
        return "the engine returned an empty answer without a successful LLM call"
    return None


async def run_search(
    engine: SearchEngine,
    query: str,
    *,
    timeout: float | None = None,
    question_id: str | None = None,
) -> SearchOutcome:
    """Run one search with the server's usage; any failure raises `SearchFailed`.

    A fatal provider error (see `gtog.llm._errors.fatal_reason`) is raised as itself, so the
    caller can stop the run. `timeout` bounds the search's own time (not the time its calls
    waited for the run's call slots, `gtog.llm._slots`); `question_id` is what
    `current_question_id()` says during it. The time held back by the slots is left out of
    the outcome's `seconds`, and given apart (`held`).
    """
    watch_swallowed_errors()
    start = time.perf_counter()
    result: SearchResult | None = None
    token = _question_id.set(question_id)
    with metering() as meter, holdup() as held:

        async def bounded() -> SearchResult:
            async with asyncio.timeout(timeout) as held.timeout:
                return await engine.search(query)

        try:  # (a task of its own, as wait_for made: the search's context stays its own)
            result = await asyncio.ensure_future(bounded())
        except TimeoutError as exc:
            if held.timeout is None or not held.timeout.expired():  # (the engine's own)
                meter.errors.insert(0, exc)
            else:
                raise SearchFailed(
                    f"timed out after {timeout:g} s",
                    meter.tally,
                    time.perf_counter() - start - held.seconds,
                    held.seconds,
                ) from None
        except SearchFailed:
            raise
        except Exception as exc:
            meter.errors.insert(0, exc)
        finally:
            _question_id.reset(token)
    seconds = time.perf_counter() - start - held.seconds
    why = _failure(meter, result)
    if isinstance(why, BaseException):
        if fatal_reason(why) is not None:
            raise why
        raise SearchFailed(describe_exception(why), meter.tally, seconds, held.seconds) from why
    if why is not None or result is None:
        raise SearchFailed(why or "no result", meter.tally, seconds, held.seconds)
    tally = meter.tally
    result.completion_time = seconds
    result.llm_calls = tally.total_calls
    result.prompt_tokens = tally.total_prompt_tokens
    result.output_tokens = tally.total_output_tokens
    stages = list(dict.fromkeys([*(result.llm_calls_categories or {}), *tally.llm_calls]))
    result.llm_calls_categories = {s: tally.llm_calls.get(s, 0) for s in stages}
    result.prompt_tokens_categories = {s: tally.prompt_tokens.get(s, 0) for s in stages}
    result.output_tokens_categories = {s: tally.output_tokens.get(s, 0) for s in stages}
    return SearchOutcome(result, tally, seconds, meter.last_cut, held.seconds)


def retrieved_sources(result: SearchResult) -> list[dict[str, str]] | None:
    """The text units a result's context used, as `{id, text}` (for retrieval metrics).

    None when the method records no source table at all (e.g. ToG without text units):
    that is "no retrieval to score", not "retrieved nothing". A missing id or text (None,
    NaN: a text unit without text in the index) is "", never "nan" or "None".
    """
    data = result.context_data
    if not isinstance(data, dict):
        return None
    for key in ("sources", "text_units"):
        df = data.get(key)
        if isinstance(df, pd.DataFrame) and "text" in df.columns:
            ids = df["id" if "id" in df.columns else df.columns[0]].tolist()
            texts = df["text"].tolist()  # (lists: `iterrows` built a Series a row, ~1 ms)
            return [{"id": _text(i), "text": _text(t)} for i, t in zip(ids, texts, strict=True)]
    return None


def _text(value: Any) -> str:
    """A table cell as text: a string as it is, a missing value (None, NaN, NA) as ""."""
    if isinstance(value, str):
        return value
    return "" if pd.api.types.is_scalar(value) and pd.isna(value) else str(value)
