"""graphrag_llm's retry, waiting at least as long as the server asks before the next attempt.

A provider that answers 429 (or 503) often says when to come back: OpenAI and Azure in a
`Retry-After` (or `retry-after-ms`) header, Google's Gemini API in the error body
(`details: [{"@type": ".../google.rpc.RetryInfo", "retryDelay": "13s"}]`). graphrag_llm's
own retries (`exponential_backoff`, `immediate`) do not read either, so an immediate retry
spends its attempts inside the window the server named. `register_retries()` registers both
retry types again under their own names, each the same graphrag_llm class wrapped so that a
retried error's stated delay is waited first (capped by the retry's `max_delay`, else
`MAX_SERVER_DELAY`): still one retry policy, graphrag_llm's, from the project's settings.
"""

from __future__ import annotations

import asyncio
import email.utils
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["MAX_SERVER_DELAY", "register_retries", "server_delay"]

MAX_SERVER_DELAY = 120.0
"""The longest server-stated wait honoured when the retry sets no `max_delay` (seconds)."""

_RETRY_DELAY = re.compile(r'"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"')


def _header_delay(headers: Any) -> float | None:
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return float(ms) / 1000
        value = headers.get("retry-after")
    except AttributeError:
        return None
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        when = email.utils.parsedate_to_datetime(str(value))  # an HTTP date
        return when.timestamp() - time.time() if when is not None else None


def server_delay(exc: BaseException) -> float | None:
    """Seconds the server asked the client to wait before retrying (`Retry-After`,
    `retry-after-ms`, Gemini's `RetryInfo.retryDelay`), None when it said nothing."""
    for source in (exc, getattr(exc, "__cause__", None)):
        if source is None:
            continue
        for holder in (source, getattr(source, "response", None)):
            headers = getattr(holder, "headers", None) or getattr(
                holder, "litellm_response_headers", None
            )
            if headers is not None:
                try:
                    delay = _header_delay(headers)
                except (TypeError, ValueError, OverflowError):
                    delay = None
                if delay is not None:
                    return max(0.0, delay)
    found = _RETRY_DELAY.search(str(exc))
    return float(found.group(1)) if found else None


class _Honouring:
    """A graphrag_llm `Retry` whose attempts wait the server's stated delay when they fail
    with an error the retry retries."""

    def __init__(self, inner: Any, max_retries: int, max_delay: float | None) -> None:
        self._inner = inner
        self._max_retries = max_retries
        self._cap = max_delay or MAX_SERVER_DELAY
        self._skip = set(getattr(inner, "_exceptions_to_skip", ()) or ())

    def _wait(self, exc: Exception, attempt: int) -> float:
        if type(exc).__name__ in self._skip or attempt > self._max_retries:
            return 0.0  # not retried: raise at once
        delay = server_delay(exc)
        return min(delay, self._cap) if delay else 0.0

    def retry(self, *, func: Callable[..., Any], input_args: dict[str, Any]) -> Any:
        """The inner retry's `retry`, each failed attempt waiting the stated delay."""
        attempts = [0]

        def attempt(**kwargs: Any) -> Any:
            attempts[0] += 1
            try:
                return func(**kwargs)
            except Exception as exc:
                if wait := self._wait(exc, attempts[0]):
                    time.sleep(wait)
                raise

        return self._inner.retry(func=attempt, input_args=input_args)

    async def retry_async(
        self, *, func: Callable[..., Awaitable[Any]], input_args: dict[str, Any]
    ) -> Any:
        """The inner retry's `retry_async`, each failed attempt waiting the stated delay."""
        attempts = [0]

        async def attempt(**kwargs: Any) -> Any:
            attempts[0] += 1
            try:
                return await func(**kwargs)
            except Exception as exc:
                if wait := self._wait(exc, attempts[0]):
                    await asyncio.sleep(wait)
                raise

        return await self._inner.retry_async(func=attempt, input_args=input_args)


def _honouring(cls: type) -> Callable[..., Any]:
    def create(**init_args: Any) -> Any:
        inner = cls(**{k: v for k, v in init_args.items() if v is not None})
        return _Honouring(inner, int(inner._max_retries), init_args.get("max_delay"))

    return create


_registered = False


def register_retries() -> None:
    """graphrag_llm's `exponential_backoff` and `immediate` retries, honouring the server's
    stated delay (once per process)."""
    global _registered
    if _registered:
        return
    from graphrag_llm.config.types import RetryType
    from graphrag_llm.retry import register_retry
    from graphrag_llm.retry.exponential_retry import ExponentialRetry
    from graphrag_llm.retry.immediate_retry import ImmediateRetry

    register_retry(RetryType.ExponentialBackoff, _honouring(ExponentialRetry))
    register_retry(RetryType.Immediate, _honouring(ImmediateRetry))
    _registered = True
