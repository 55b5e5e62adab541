"""An HTTP method's settings (`http_methods:` in eval_config.yaml): the config model only.

Kept apart from `gtog.search._http` (the client, which imports graphrag) so that reading a
config stays quick.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gtog._errors import InputError

__all__ = ["HEADER_PLACEHOLDERS", "PLACEHOLDERS", "USAGE_FIELDS", "HttpEndpoint", "StreamPaths"]

PLACEHOLDERS = ("question", "index_key", "question_id")
HEADER_PLACEHOLDERS = ("index_key", "question_id")
"""What is filled in a header's value (a question is no header: it may not be ASCII)."""
USAGE_FIELDS = ("llm_calls", "prompt_tokens", "output_tokens", "cost_usd")
MAX_REPLY_BYTES = 10_000_000
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SECRET_HEADER = re.compile(
    r"auth|key|token|secret|cookie|password|passwd|session|signature|credential", re.I
)
"""Header names whose values are secrets (Authorization, X-API-Key, Cookie, ...)."""


class StreamPaths(BaseModel):
    """`stream:` of an HTTP method: how to read an agent's server-sent events.

    Each path is dotted, its first part the event's name (SSE `event:`, or the data's
    `type`/`event` field), the rest a path in its data: `content.delta` is the `delta` of
    every `content` event (joined: the answer), `done` the event that ends the stream (a
    stream without it is an error), `done.method_used` the route the agent chose, and
    `error.message` an `error` event's message (the pair's error).
    """

    model_config = ConfigDict(extra="forbid")

    answer: str = "content.delta"
    done: str = "done"
    route: str | None = None
    error: str | None = "error.message"


class HttpEndpoint(BaseModel):
    """One `http_methods` entry: where to ask, what to send, where the answer is."""

    model_config = ConfigDict(extra="forbid")

    url: str
    body: Any = Field(default_factory=lambda: {"query": "{question}"})
    """Any JSON; `{question}`, `{index_key}`, `{question_id}` filled in its strings."""
    headers: dict[str, str] = Field(default_factory=dict)
    """`${VAR}` is the environment variable's value (never logged, never in the spec);
    `{index_key}` and `{question_id}` are filled in per request."""
    answer: str = "response"
    context: str | None = None
    usage: dict[Literal["llm_calls", "prompt_tokens", "output_tokens", "cost_usd"], str] = Field(
        default_factory=dict
    )
    route: str | None = None
    """Dotted path of the method a router chose in a JSON reply (`method_used`)."""
    stream: StreamPaths | None = None
    """How to read a streaming agent's events (then `answer` is not read)."""
    timeout: float = Field(default=120.0, gt=0)
    """Seconds per request (each retry has its own)."""
    retry: dict[str, Any] | None = None
    """graphrag_llm's retry settings (type, max_retries, base_delay, ...); absent: the
    index's local_search model's."""
    max_reply_bytes: int = Field(default=MAX_REPLY_BYTES, gt=0)
    """A longer reply is the pair's error (`reply too large`), read no further."""
    max_retry_after: float = Field(default=60.0, ge=0)
    """The longest wait a 429/503's `Retry-After` may ask for before the next attempt."""

    @field_validator("url")
    @classmethod
    def _http(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r} is not an http:// or https:// address")
        if _ENV.search(value):
            raise ValueError("no ${VAR} in the url (it is written in the spec); use a header")
        return value

    @field_validator("headers")
    @classmethod
    def _headers(cls, value: dict[str, str]) -> dict[str, str]:
        for name, text in value.items():
            if "{question}" in text:
                raise ValueError(
                    f"{name}: {{question}} cannot be sent in a header (put it in the body); "
                    "{index_key} and {question_id} can"
                )
        return value

    @field_validator("retry")
    @classmethod
    def _retry(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            from graphrag_llm.config import RetryConfig

            RetryConfig.model_validate(value)
        return value

    def spec(self) -> dict[str, Any]:
        """What the answers depend on: url, body and paths (not the headers: secrets);
        `route` and `stream` only when set (a spec made before they existed is unchanged)."""
        out = self.model_dump(mode="json", include={"url", "body", "answer", "context", "usage"})
        for key in ("route", "stream"):
            if getattr(self, key) is not None:
                out[key] = self.model_dump(mode="json", include={key})[key]
        return out

    def variables(self) -> list[str]:
        """The environment variables the headers name."""
        return list(dict.fromkeys(v for h in self.headers.values() for v in _ENV.findall(h)))

    def expanded_headers(self, environ: Mapping[str, str], where: str) -> dict[str, str]:
        """The headers with `${VAR}` expanded; InputError naming an unset variable."""
        out = {}
        for name, value in self.headers.items():
            missing = [v for v in _ENV.findall(value) if v not in environ]
            if missing:
                raise InputError(f"{where}.headers.{name}: ${{{missing[0]}}} is not set")
            out[name] = _ENV.sub(lambda m: environ[m.group(1)], value)
        return out

    def secret_values(self, environ: Mapping[str, str]) -> list[str]:
        """What the redactor masks: every `${VAR}`'s value, and the value of each header
        whose name says it holds a secret (Authorization, X-API-Key, Cookie, ...), whole
        and its credential after a scheme (`Bearer <token>`)."""
        out = [environ[v] for v in self.variables() if environ.get(v)]
        for name, value in self.headers.items():
            if not _SECRET_HEADER.search(name):
                continue
            text = _ENV.sub(lambda m: environ.get(m.group(1), ""), value).strip()
            out += [text, text.split()[-1]] if text else []
        return out
