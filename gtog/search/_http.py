"""HTTP methods: a method whose answers come from a running service's endpoint.

    http_methods:
      my_agent:
        url: "http://localhost:8000/api/collections/{index_key}/search/agent"
        body: {query: "{question}", stream: false}
        headers: {Authorization: "Bearer ${MY_TOKEN}"}
        answer: response          # dotted path of the answer in the reply
        context: context_data     # optional: the retrieved context (for the judges)
        usage: {llm_calls: stats.llm_calls}   # optional: what the reply says it spent
        timeout: 120              # seconds per request

`{question}`, `{index_key}` and `{question_id}` are filled in the url (URL-quoted) and in
every string of the body; `${VAR}` in a header is the environment variable's value, known
to the run's redactor and never written anywhere (the spec holds url, body and paths, not
headers). A JSON reply is read at once; a server-sent-events reply (`text/event-stream`)
or JSON lines (`application/x-ndjson`) is read to its end, the answer being the
concatenation of every event's answer path, context and usage the last event's.

A streaming agent (`stream: {answer: content.delta, done: done, route: done.method_used,
error: error.message}`): each path's first part names the event (SSE `event:`, or the
data's `type`); the answer is every `content` event's delta joined, an `error` event is the
pair's error (its message), a stream that ends without `done` is an error (`stream cut`).
`route: method_used` (or `stream.route`) is the method a router chose: kept on the answer
(`route` in the records and the CSV) for the routing analysis.

Retries: graphrag_llm's own `Retry`, configured like the index's model calls (the retry
block of its local_search completion model in settings.yaml; `retry:` here overrides it),
for 429, 503 and dropped connections only. Every other failure (another HTTP status, the
timeout, a reply that is not JSON or lacks the answer path) is the pair's error at once,
with its `error_kind`. What the service spent is unknown unless `usage` reads it from the
reply: never 0.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphrag.query.structured_search.base import SearchResult

from gtog._dotted import MISSING, context_text, pick
from gtog._errors import describe_exception
from gtog.search._endpoints import HttpEndpoint
from gtog.search._outcome import current_question_id

if TYPE_CHECKING:
    import httpx
    from graphrag_llm.config import RetryConfig
    from graphrag_llm.retry import Retry

    from gtog._project import Project

__all__ = [
    "EndpointError",
    "HttpEndpoint",
    "HttpEngine",
    "HttpResult",
    "StatedUsage",
    "build_http_engine",
]

logger = logging.getLogger(__name__.replace("._", "."))  # eval.log names the module as before


@dataclass(frozen=True)
class StatedUsage:
    """What a reply says its search spent (None: it does not say)."""

    llm_calls: int | None = None
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None


@dataclass
class HttpResult(SearchResult):
    """graphrag's `SearchResult` of an HTTP method, with the usage its reply stated."""

    stated: StatedUsage | None = None
    route: str | None = None
    """The method a router chose (`route` / `stream.route`), None when not stated."""


class EndpointError(Exception):
    """An HTTP method's failure; `error_kind` names it in the record (`http 500`, ...)."""

    error_kind = "http"

    def __init__(self, message: str, kind: str | None = None) -> None:
        super().__init__(message)
        if kind is not None:
            self.error_kind = kind


class RateLimitError(EndpointError):
    """429: retried (graphrag_llm's retry keys on the class name, as for model calls)."""


class ServiceUnavailableError(EndpointError):
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


_NOT_RETRIED = ["EndpointError", "EndpointStatusError", "EndpointTimeout", "BadReply"]
"""`exceptions_to_skip` of the HTTP retry: everything but 429, 503 and the connection."""


def _fill(value: Any, values: dict[str, str], quote: bool = False) -> Any:
    """`value` with `{question}`, `{index_key}`, `{question_id}` filled in its strings."""
    if isinstance(value, str):
        for name, text in values.items():
            value = value.replace("{" + name + "}", urllib.parse.quote(text) if quote else text)
        return value
    if isinstance(value, dict):
        return {k: _fill(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, values) for v in value]
    return value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _number(value: Any, integer: bool) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    if integer:
        return int(value) if float(value).is_integer() else None
    return float(value)


def _event(data: str) -> Any:
    if data.strip() in ("", "[DONE]"):
        return None
    try:
        return json.loads(data)
    except json.JSONDecodeError:
        return data  # a plain-text chunk


def _named(name: str | None, data: Any) -> Any:
    """A streaming agent's event as `{name: data}`, its name the SSE `event:` field or,
    for an unnamed event, its data's `type` (or `event`); unnamed data as it is."""
    if name and name != "message":
        return {name: data}
    if isinstance(data, dict):
        kind = data.get("type", data.get("event"))
        if isinstance(kind, str) and kind:
            return {kind: data}
    return data


def _last(events: list[Any], path: str | None) -> Any:
    """The value at `path` in the last event that has it (None: none has)."""
    if path is None:
        return None
    for event in reversed(events):
        value = pick(event, path)
        if value is not MISSING:
            return value
    return None


def _route(value: Any) -> str | None:
    if value is MISSING or value is None or isinstance(value, dict | list):
        return None
    text = str(value).strip()
    return text or None


@dataclass(frozen=True)
class _Reply:
    answer: str
    context: str | None
    stated: StatedUsage
    route: str | None = None


class HttpEngine:
    """One HTTP method on one index: `search(question)` -> `HttpResult` (graphrag's shape).

    The question's id is the search's (`run_search(..., question_id=)`). One client per
    search, closed with it; its `seconds` are the wall time of every attempt.
    """

    def __init__(
        self,
        name: str,
        endpoint: HttpEndpoint,
        index_key: str,
        headers: dict[str, str],
        retry: Retry | None,
    ) -> None:
        self.name = name
        self.endpoint = endpoint
        self.index_key = index_key
        self._headers = headers
        self._retry = retry

    async def search(self, query: str) -> HttpResult:
        """Ask the endpoint; any failure raises `EndpointError` (its kind named)."""
        import httpx

        values = {
            "question": query,
            "index_key": self.index_key,
            "question_id": current_question_id() or "",
        }
        url = _fill(self.endpoint.url, values, quote=True)
        body = _fill(self.endpoint.body, values)
        start = time.perf_counter()
        async with httpx.AsyncClient(timeout=None, follow_redirects=True) as client:

            async def attempt() -> _Reply:
                return await self._attempt(client, url, body)

            if self._retry is None:
                reply = await attempt()
            else:
                reply = await self._retry.retry_async(func=attempt, input_args={})
        return HttpResult(
            response=reply.answer,
            context_data={},
            context_text=reply.context or "",
            completion_time=time.perf_counter() - start,
            llm_calls=0,
            prompt_tokens=0,
            output_tokens=0,
            stated=reply.stated,
            route=reply.route,
        )

    async def _attempt(self, client: httpx.AsyncClient, url: str, body: Any) -> _Reply:
        timeout = self.endpoint.timeout
        try:
            async with asyncio.timeout(timeout):
                return await self._request(client, url, body)
        except TimeoutError:
            raise EndpointTimeout(
                f"timed out after {timeout:g} s (http_methods.{self.name}.timeout)"
            ) from None

    async def _request(self, client: httpx.AsyncClient, url: str, body: Any) -> _Reply:
        import httpx

        try:
            async with client.stream("POST", url, json=body, headers=self._headers) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise _status_error(response)
                kind = response.headers.get("content-type", "").partition(";")[0].strip()
                if kind == "text/event-stream":
                    from httpx_sse import EventSource

                    sse = [e async for e in EventSource(response).aiter_sse()]
                    if self.endpoint.stream is not None:
                        return self._read_stream([_named(e.event, _event(e.data)) for e in sse])
                    events = [_event(e.data) for e in sse]
                    return self._read([e for e in events if e is not None], streamed=True)
                raw = await response.aread()
        except EndpointError:
            raise
        except (httpx.ConnectError, httpx.ReadError, httpx.WriteError) as exc:
            raise APIConnectionError(f"connection failed: {describe_exception(exc)}") from exc
        except httpx.RemoteProtocolError as exc:
            raise APIConnectionError(f"connection dropped: {describe_exception(exc)}") from exc
        except httpx.HTTPError as exc:
            raise EndpointError(describe_exception(exc)) from exc
        text = raw.decode("utf-8", errors="replace")
        if kind in ("application/x-ndjson", "application/jsonl", "application/json-lines"):
            lines = [_event(line) for line in text.split("\n")]
            if self.endpoint.stream is not None:
                return self._read_stream([_named(None, e) for e in lines if e is not None])
            return self._read([e for e in lines if e is not None], streamed=True)
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            raise BadReply(
                f"the reply is not JSON (content-type {kind or 'none'}): {text[:80]!r}"
            ) from None
        return self._read([data], streamed=False)

    def _read(self, events: list[Any], streamed: bool) -> _Reply:
        """The answer, context and stated usage of a reply's events (one for plain JSON)."""
        e = self.endpoint
        parts = [(event if isinstance(event, str) else pick(event, e.answer)) for event in events]
        found = [p for p in parts if p is not MISSING and p is not None]
        if not found:
            shape = f"{len(events)} event(s)" if streamed else "the reply"
            raise BadReply(
                f"{shape} without the answer path {e.answer!r} (http_methods.{self.name}.answer)",
                kind="no answer in reply",
            )
        answer = "".join(_text(p) for p in found)
        if not answer.strip():
            raise BadReply(f"the reply's {e.answer!r} is empty", kind="empty answer")

        usage = {f: _number(_last(events, p), f != "cost_usd") for f, p in e.usage.items()}
        return _Reply(
            answer,
            context_text(_last(events, e.context)),
            StatedUsage(**usage),
            _route(_last(events, e.route)),
        )

    def _read_stream(self, events: list[Any]) -> _Reply:
        """A streaming agent's events (`stream:`, each `{name: data}`): an error event
        raises, the answer deltas are joined, the stream must end with its done event."""
        e, paths = self.endpoint, self.endpoint.stream
        assert paths is not None
        where = f"http_methods.{self.name}.stream"
        if paths.error is not None:
            head = paths.error.split(".")[0]
            for event in events:
                message = pick(event, paths.error)
                if message is MISSING or message is None:
                    message = pick(event, head) if isinstance(event, dict) else MISSING
                if message is not MISSING and message not in (None, "", {}):
                    raise EndpointError(
                        f"the agent's {head!r} event: {' '.join(_text(message).split())[:200]}",
                        kind="agent error",
                    )
        if not any(pick(event, paths.done) is not MISSING for event in events):
            raise BadReply(
                f"the stream ended without its {paths.done!r} event after {len(events)} "
                f"event(s) ({where}.done)",
                kind="stream cut",
            )
        found = [p for p in (pick(event, paths.answer) for event in events) if p is not MISSING]
        found = [p for p in found if p is not None]
        if not found:
            raise BadReply(
                f"{len(events)} event(s) without the answer path {paths.answer!r} ({where}.answer)",
                kind="no answer in reply",
            )
        answer = "".join(_text(p) for p in found)
        if not answer.strip():
            raise BadReply(f"the stream's {paths.answer!r} is empty", kind="empty answer")

        usage = {f: _number(_last(events, p), f != "cost_usd") for f, p in e.usage.items()}
        route = _route(_last(events, paths.route or e.route))
        return _Reply(answer, context_text(_last(events, e.context)), StatedUsage(**usage), route)


def _status_error(response: httpx.Response) -> EndpointError:
    code = response.status_code
    text = " ".join(response.text.split())[:200]
    message = f"HTTP {code} {response.reason_phrase}" + (f": {text}" if text else "")
    kind = f"http {code}"
    if code == 429:
        return RateLimitError(message, kind)
    if code == 503:
        return ServiceUnavailableError(message, kind)
    return EndpointStatusError(message, kind)


def retry_config(endpoint: HttpEndpoint, project: Project | None) -> RetryConfig | None:
    """The endpoint's `retry`, else the retry of the index's local_search model (None:
    no retry, as for that model)."""
    from graphrag_llm.config import RetryConfig

    if endpoint.retry is not None:
        return RetryConfig.model_validate(endpoint.retry)
    if project is None:
        return RetryConfig()
    c = project.config
    return c.get_completion_model_config(c.local_search.completion_model_id).retry


def build_http_engine(
    name: str,
    endpoint: HttpEndpoint,
    index_key: str,
    project: Project | None,
    environ: Mapping[str, str] | None = None,
) -> HttpEngine:
    """The engine of HTTP method `name` on index `index_key` (headers expanded now)."""
    from graphrag_llm.retry import create_retry

    headers = endpoint.expanded_headers(
        os.environ if environ is None else environ, f"http_methods.{name}"
    )
    config = retry_config(endpoint, project)
    retry = None
    if config is not None:
        retry = create_retry(config.model_copy(update={"exceptions_to_skip": _NOT_RETRIED}))
    return HttpEngine(name, endpoint, index_key, headers, retry)
