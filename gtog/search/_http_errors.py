"""An HTTP method's failures, by kind: the error types `gtog.search._http` raises and its
retry policy retries or skips (429, 503 and a lost connection are retried)."""

from __future__ import annotations

__all__ = [
    "NOT_RETRIED",
    "APIConnectionError",
    "BadReply",
    "EndpointError",
    "EndpointStatusError",
    "EndpointTimeout",
    "RateLimitError",
    "RedirectRefused",
    "ReplyTooLarge",
    "Retryable",
    "ServiceUnavailableError",
]


class EndpointError(Exception):
    """An HTTP method's failure; `error_kind` names it in the record (`http 500`, ...)."""

    error_kind = "http"

    def __init__(self, message: str, kind: str | None = None) -> None:
        super().__init__(message)
        if kind is not None:
            self.error_kind = kind


class Retryable(EndpointError):
    """A status the retry policy retries; `retry_after`: the seconds its `Retry-After`
    header asked for (None: it did not)."""

    retry_after: float | None = None


class RateLimitError(Retryable):
    """429: retried (graphrag_llm's retry keys on the class name, as for model calls)."""


class ServiceUnavailableError(Retryable):
    """503: retried."""


class APIConnectionError(EndpointError):
    """A refused, reset or dropped connection: retried."""

    error_kind = "connection"


class EndpointStatusError(EndpointError):
    """Any other HTTP error status: not retried."""


class EndpointTimeout(EndpointError):
    """No complete reply within the endpoint's `timeout`: not retried."""

    error_kind = "timeout"


class BadReply(EndpointError):
    """A reply that is not JSON, or lacks the answer path: not retried."""

    error_kind = "bad reply"


class ReplyTooLarge(EndpointError):
    """A reply longer than the endpoint's `max_reply_bytes`: not retried, not read on."""

    error_kind = "reply too large"


class RedirectRefused(EndpointError):
    """A redirect to another origin, or one that turns the POST into a GET: not followed."""

    error_kind = "redirect"


NOT_RETRIED = [
    "EndpointError",
    "EndpointStatusError",
    "EndpointTimeout",
    "BadReply",
    "ReplyTooLarge",
    "RedirectRefused",
]
"""`exceptions_to_skip` of the HTTP retry: everything but 429, 503 and the connection."""
