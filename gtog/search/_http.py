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
every string of the body, `{index_key}` and `{question_id}` in the headers too (LightRAG's
`LIGHTRAG-WORKSPACE: "{index_key}"`); `${VAR}` in a header is the environment variable's
value, known to the run's redactor and never written anywhere (the spec holds url, body
and paths, not headers). A JSON reply is read at once, decoded by its `charset` (UTF-8
when it names none); a server-sent-events reply (`text/event-stream`) or JSON lines
(`application/x-ndjson`) is read to its end, the answer being the concatenation of every
event's answer path, context and usage the last event's. A reply longer than
`max_reply_bytes` (10 MB) is the pair's error, read no further.

Redirects: a 307/308 to the same origin is followed (the POST repeated there); a redirect
to another origin is refused, naming both origins (the configured headers, the API key
among them, are never sent to another origin), and so is a 301/302/303, which would turn
the POST into a GET without its body (the error names where it pointed).

A streaming agent (`stream: {answer: content.delta, done: done, route: done.method_used,
error: error.message}`): each path's first part names the event (SSE `event:`, or the
data's `type`); the answer is every `content` event's delta joined, an `error` event is the
pair's error (its message), a stream that ends without `done` is an error (`stream cut`).
`route: method_used` (or `stream.route`) is the method a router chose: kept on the answer
(`route` in the records and the CSV) for the routing analysis.

Retries: graphrag_llm's own `Retry`, configured like the index's model calls (the retry
block of its local_search completion model in settings.yaml; `retry:` here overrides it),
for 429, 503 and dropped connections only; a 429/503's `Retry-After` (seconds or a date)
is waited out before the next attempt, up to `max_retry_after` seconds (the policy's own
backoff counting towards it). Every retry is one line in the log (eval.log during a run).
Every other failure (another HTTP status, the timeout, a reply that is not JSON or lacks
the answer path) is the pair's error at once, with its `error_kind`. An error message
never holds a secret header's value (the service may echo it). What the service spent is
unknown unless `usage` reads it from the reply: never 0.
"""

from __future__ import annotations

import asyncio
import email.utils
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
from gtog._redact import Redactor
from gtog.llm._slots import call_slot
from gtog.search._endpoints import HEADER_PLACEHOLDERS, HttpEndpoint
from gtog.search._http_errors import (
    NOT_RETRIED,
    APIConnectionError,
    BadReply,
    EndpointError,
    EndpointStatusError,
    EndpointTimeout,
    RateLimitError,
    RedirectRefused,
    ReplyTooLarge,
    Retryable,
    ServiceUnavailableError,
)
from gtog.search._outcome import current_question_id

if TYPE_CHECKING:
    import httpx
    from graphrag_llm.config import RetryConfig
    from graphrag_llm.retry import Retry
    from httpx_sse import ServerSentEvent

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


_REDIRECTS = (301, 302, 303, 307, 308)
_MAX_REDIRECTS = 5


def _origin(url: httpx.URL) -> str:
    default = {"http": 80, "https": 443}.get(url.scheme)
    port = f":{url.port}" if url.port not in (None, default) else ""
    return f"{url.scheme}://{url.host}{port}"


def _retry_after(value: str | None) -> float | None:
    """A `Retry-After` header's wait in seconds (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclass
class _Attempts:
    """One search's attempts: the last failure and when it happened (for the retry log
    and `Retry-After`)."""

    count: int = 0
    failure: EndpointError | None = None
    failed_at: float = 0.0


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
        redactor: Redactor | None = None,
    ) -> None:
        self.name = name
        self.endpoint = endpoint
        self.index_key = index_key
        self._headers = headers
        self._retry = retry
        self._redact = redactor or Redactor()

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
        headers = _fill(self._headers, {k: values[k] for k in HEADER_PLACEHOLDERS})
        start = time.perf_counter()
        attempts = _Attempts()
        async with httpx.AsyncClient(timeout=None, follow_redirects=False) as client:

            async def attempt() -> _Reply:
                await self._before(attempts, values["question_id"])
                try:
                    async with call_slot():  # (a run's calls in flight: gtog.llm._slots)
                        return await self._attempt(client, url, body, headers)
                except EndpointError as exc:
                    attempts.failure, attempts.failed_at = exc, time.monotonic()
                    raise

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

    async def _before(self, attempts: _Attempts, question_id: str) -> None:
        """Before a retry: one log line, and the wait a `Retry-After` asked for (bounded by
        `max_retry_after`; the policy's backoff since the failure counts towards it)."""
        attempts.count += 1
        failure = attempts.failure
        if failure is None:
            return
        wait = 0.0
        asked = failure.retry_after if isinstance(failure, Retryable) else None
        if asked is not None:
            bounded = min(asked, self.endpoint.max_retry_after)
            wait = max(0.0, bounded - (time.monotonic() - attempts.failed_at))
        waited = f"; waiting {wait:.1f} s more as its Retry-After asks" if wait > 0 else ""
        logger.warning(
            "http_methods.%s on %s, question %s: retry %d after %s: %s%s",
            self.name,
            self.index_key,
            question_id or "-",
            attempts.count - 1,
            failure.error_kind,
            failure,
            waited,
        )
        if wait > 0:
            await asyncio.sleep(wait)

    async def _attempt(
        self, client: httpx.AsyncClient, url: str, body: Any, headers: dict[str, str]
    ) -> _Reply:
        timeout = self.endpoint.timeout
        try:
            async with asyncio.timeout(timeout):
                return await self._request(client, url, body, headers)
        except TimeoutError:
            raise EndpointTimeout(
                f"timed out after {timeout:g} s (http_methods.{self.name}.timeout)"
            ) from None
        except EndpointError as exc:  # the service may echo a header: never in a message
            exc.args = (self._redact(str(exc)),)
            raise

    def _redirected(self, response: httpx.Response) -> str:
        """Where a redirect may be followed to (307/308, same origin), else RedirectRefused."""
        code = response.status_code
        target = response.url.join(response.headers["location"])
        here, there = _origin(response.url), _origin(target)
        if here != there:
            raise RedirectRefused(
                f"HTTP {code}: the service redirects from {here} to another origin, {there}; "
                f"refused, so that http_methods.{self.name}.headers are never sent there "
                "(point url at the new address if you trust it)",
                kind="cross-origin redirect",
            )
        if code in (301, 302, 303):
            raise RedirectRefused(
                f"HTTP {code} {response.reason_phrase}: the service redirects the POST from "
                f"{response.url} to {target}, which would turn it into a GET without its "
                f"body; set http_methods.{self.name}.url to {target}"
            )
        return str(target)

    def _too_large(self, size: str) -> ReplyTooLarge:
        cap = self.endpoint.max_reply_bytes
        return ReplyTooLarge(
            f"the reply is longer than {cap} bytes ({size}; "
            f"http_methods.{self.name}.max_reply_bytes); not read further"
        )

    async def _body(self, response: httpx.Response, strict: bool = True) -> bytes:
        """The reply's bytes, at most `max_reply_bytes` (over: ReplyTooLarge, or the first
        bytes when not `strict`, for an error status's text)."""
        cap = self.endpoint.max_reply_bytes
        length = response.headers.get("content-length", "")
        if strict and length.isdigit() and int(length) > cap:
            raise self._too_large(f"Content-Length {length}")
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > cap:
                if strict:
                    raise self._too_large(f"{size} bytes read")
                chunks.append(chunk[: len(chunk) - (size - cap)])
                break
            chunks.append(chunk)
        return b"".join(chunks)

    async def _request(
        self, client: httpx.AsyncClient, url: str, body: Any, headers: dict[str, str]
    ) -> _Reply:
        import httpx

        try:
            for _ in range(_MAX_REDIRECTS + 1):
                async with client.stream("POST", url, json=body, headers=headers) as response:
                    code = response.status_code
                    if code in _REDIRECTS and "location" in response.headers:
                        url = self._redirected(response)
                        continue
                    if code >= 400:
                        raw = await self._body(response, strict=False)
                        raise _status_error(
                            response, raw.decode(response.encoding or "utf-8", "replace")
                        )
                    kind = response.headers.get("content-type", "").partition(";")[0].strip()
                    if kind == "text/event-stream":
                        sse = await self._sse(response)
                        if self.endpoint.stream is not None:
                            return self._read_stream([_named(e.event, _event(e.data)) for e in sse])
                        events = [_event(e.data) for e in sse]
                        return self._read([e for e in events if e is not None], streamed=True)
                    raw = await self._body(response)
                    encoding = response.encoding or "utf-8"
                    break
            else:
                raise RedirectRefused(
                    f"more than {_MAX_REDIRECTS} redirects from {self.endpoint.url}"
                )
        except EndpointError:
            raise
        except (httpx.ConnectError, httpx.ReadError, httpx.WriteError) as exc:
            raise APIConnectionError(f"connection failed: {describe_exception(exc)}") from exc
        except httpx.RemoteProtocolError as exc:
            raise APIConnectionError(f"connection dropped: {describe_exception(exc)}") from exc
        except httpx.HTTPError as exc:
            raise EndpointError(describe_exception(exc)) from exc
        text = raw.decode(encoding, errors="replace").removeprefix("\ufeff")
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

    async def _sse(self, response: httpx.Response) -> list[ServerSentEvent]:
        """A server-sent-events reply's events (decoded by its charset), at most
        `max_reply_bytes` of them."""
        from httpx_sse import EventSource

        events: list[ServerSentEvent] = []
        size = 0
        async for e in EventSource(response).aiter_sse():
            size += len(e.data.encode()) + len(e.event or "") + 8
            if size > self.endpoint.max_reply_bytes:
                raise self._too_large(f"{size} bytes of events read")
            events.append(e)
        return events

    def _read(self, events: list[Any], streamed: bool) -> _Reply:
        """The answer, context and stated usage of a reply's events (one for plain JSON)."""
        e = self.endpoint
        answer = _joined(
            [(event if isinstance(event, str) else pick(event, e.answer)) for event in events],
            e.answer,
            f"{len(events)} event(s)" if streamed else "the reply",
            f"http_methods.{self.name}.answer",
            "reply",
        )
        return self._reply(events, answer, e.route)

    def _reply(self, events: list[Any], answer: str, route: str | None) -> _Reply:
        """The reply of `answer`, with the context, usage and route its events state."""
        e = self.endpoint
        usage = {f: _number(_last(events, p), f != "cost_usd") for f, p in e.usage.items()}
        return _Reply(
            answer,
            context_text(_last(events, e.context)),
            StatedUsage(**usage),
            _route(_last(events, route)),
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
        answer = _joined(
            [pick(event, paths.answer) for event in events],
            paths.answer,
            f"{len(events)} event(s)",
            f"{where}.answer",
            "stream",
        )
        return self._reply(events, answer, paths.route or e.route)


def _joined(parts: list[Any], path: str, shape: str, where: str, owner: str) -> str:
    """The answer parts found at `path`, joined; BadReply when there is none or it is empty."""
    found = [p for p in parts if p is not MISSING and p is not None]
    if not found:
        raise BadReply(
            f"{shape} without the answer path {path!r} ({where})", kind="no answer in reply"
        )
    answer = "".join(_text(p) for p in found)
    if not answer.strip():
        raise BadReply(f"the {owner}'s {path!r} is empty", kind="empty answer")
    return answer


def _status_error(response: httpx.Response, body: str) -> EndpointError:
    code = response.status_code
    text = " ".join(body.split())[:200]
    message = f"HTTP {code} {response.reason_phrase}" + (f": {text}" if text else "")
    kind = f"http {code}"
    if code in (429, 503):
        error: Retryable = (RateLimitError if code == 429 else ServiceUnavailableError)(
            message, kind
        )
        error.retry_after = _retry_after(response.headers.get("retry-after"))
        return error
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

    env = os.environ if environ is None else environ
    headers = endpoint.expanded_headers(env, f"http_methods.{name}")
    config = retry_config(endpoint, project)
    retry = None
    if config is not None:
        retry = create_retry(config.model_copy(update={"exceptions_to_skip": NOT_RETRIED}))
    redactor = Redactor(endpoint.secret_values(env))
    return HttpEngine(name, endpoint, index_key, headers, retry, redactor)
