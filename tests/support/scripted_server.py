"""A scripted OpenAI-compatible server for tests and benchmarks (127.0.0.1 only).

It speaks `/v1/chat/completions` (plain JSON and SSE streaming, with `usage`),
`/v1/embeddings` and `/v1/models`, answers chat requests by *rules* on the prompt,
and keeps a log of every request so tests can count calls and tokens exactly as the
server saw them. The same rules answer two more wire formats:

- Azure OpenAI: `/openai/deployments/{deployment}/chat/completions?api-version=...` (and
  `/embeddings`), the key in an `api-key` header;
- Google's Gemini REST API as LiteLLM's `gemini/` route sends it to a custom `api_base`
  (`server.gemini_base`): `POST {base}/models/{model}:generateContent`,
  `:streamGenerateContent?alt=sse`, `:batchEmbedContents`, the key in `x-goog-api-key`,
  `usageMetadata` on replies, errors as `{"error": {code, message, status, details}}`
  (429 `RESOURCE_EXHAUSTED` with a `RetryInfo.retryDelay`, 400 `API_KEY_INVALID`), cut
  replies as `finishReason: MAX_TOKENS` or `SAFETY`.

`server.report_usage = False` plays an OpenAI-compatible local server that reports no
usage: `"usage": null` on replies and stream chunks, and no usage chunk even when asked.

    server = ScriptedServer(rules=[Rule("echo", lambda r: True, lambda r: r.last_user)])
    server.start()
    ... point settings.yaml `api_base` at server.base_url ...
    server.stop()

A rule's reply may be a string, a `Fail(status, message)` to return an HTTP error (the
message may quote the request's key as `{api_key}`, as providers do; `reason` is Gemini's
`ErrorInfo.reason`, e.g. `API_KEY_INVALID`; `retry_after` seconds go out as a `Retry-After`
header, and as Gemini's `retryDelay`), a `Cut(text, finish_reason)` for a reply the model
did not finish, a `Hang(seconds)`
for a reply that does not come in time, or `Drop()` to close the connection without a
reply. `server.faults = Faults(rate=0.2)` injects random 429/500 errors into a share of
all requests (seeded; `server.injected` counts them); the status `DROP` among a `Faults`'
statuses drops the connection instead.
Requests that no rule matches are answered with `UNSCRIPTED` and listed in
`server.unscripted`, so a test can assert that every call was foreseen.
Run `python -m tests.support.scripted_server --port 0` to serve the default rules
from a separate process (the port is printed on stdout).
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import itertools
import json
import math
import re
import struct
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "DROP",
    "ChatRequest",
    "Drop",
    "Fail",
    "Faults",
    "Hang",
    "LogEntry",
    "Rule",
    "ScriptedServer",
    "count_tokens",
    "hash_embedding",
]

UNSCRIPTED = "UNSCRIPTED"
DROP = 0
"""A `Faults` status that closes the connection without any reply (a dropped connection)."""
_TOKEN_RE = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    """The server's own token count: words and punctuation marks."""
    return len(_TOKEN_RE.findall(text))


def hash_embedding(text: str, dims: int = 64) -> list[float]:
    """A deterministic bag-of-words embedding: texts sharing words are close."""
    vec = [0.0] * dims
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if len(word) < 3:
            continue
        h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")
        vec[h % dims] += 1.0 if (h >> 32) & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


_GEMINI_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
"""Google's status names for HTTP statuses (`error.status` of a Gemini error)."""

_GEMINI_FINISH = {"stop": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY"}
"""OpenAI finish reasons as Gemini's `finishReason`."""


def _parts_text(parts: Any) -> str:
    return "".join(str(p.get("text", "")) for p in parts or [] if isinstance(p, dict))


def _gemini_as_openai(raw: dict[str, Any], model: str, stream: bool) -> dict[str, Any]:
    """A `generateContent` body in OpenAI's chat shape, for the rules."""
    messages: list[dict[str, Any]] = []
    system = raw.get("systemInstruction") or raw.get("system_instruction")
    if isinstance(system, dict):
        messages.append({"role": "system", "content": _parts_text(system.get("parts"))})
    for content in raw.get("contents") or []:
        role = "assistant" if content.get("role") == "model" else "user"
        messages.append({"role": role, "content": _parts_text(content.get("parts"))})
    config = raw.get("generationConfig") or raw.get("generation_config") or {}
    body: dict[str, Any] = {"model": model, "messages": messages, "stream": stream}
    if config.get("temperature") is not None:
        body["temperature"] = config["temperature"]
    if config.get("maxOutputTokens") is not None:
        body["max_tokens"] = config["maxOutputTokens"]
    mime = config.get("responseMimeType") or config.get("response_mime_type")
    if mime == "application/json":
        body["response_format"] = {"type": "json_object"}
    return body


def _gemini_inputs(raw: dict[str, Any]) -> list[str]:
    """The texts of a `batchEmbedContents` (or `embedContent`) body."""
    if "requests" in raw:
        return [_parts_text((r.get("content") or {}).get("parts")) for r in raw["requests"]]
    return [_parts_text((raw.get("content") or {}).get("parts"))]


def _base64(vec: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode()


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up (e.g. a killed `gtog eval`) is not an error worth printing.

    Its listen backlog is a provider's, not socketserver's 5: with 16 connections opened
    at once (a run's first round), the kernel dropped some and the client's SYN was sent
    again a second later, a stall no hosted endpoint causes (issue 45's runs at -j 16 fell
    to 11 calls in flight when it struck, 12.5-13 when not).
    """

    request_queue_size = 1024

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


@dataclass
class ChatRequest:
    """One chat request as the rules see it."""

    body: dict[str, Any]
    api_key: str = ""
    """The key the client sent (bearer token, `api-key` or `x-goog-api-key` header)."""
    wire: str = "openai"
    """The wire format it came in: `openai`, `azure` or `gemini` (whose `body` is the
    request translated to OpenAI's shape; the Gemini body itself is in `raw`)."""
    raw: dict[str, Any] = field(default_factory=dict)
    """The request body as sent (Gemini's `contents`, `generationConfig`, ...)."""

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The request's messages."""
        return list(self.body.get("messages") or [])

    def _text(self, content: Any) -> str:
        if isinstance(content, list):
            return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        return str(content or "")

    @property
    def prompt(self) -> str:
        """All message contents joined, in order."""
        return "\n".join(self._text(m.get("content")) for m in self.messages)

    @property
    def system(self) -> str:
        """The system messages joined."""
        return "\n".join(
            self._text(m.get("content")) for m in self.messages if m.get("role") == "system"
        )

    @property
    def last_user(self) -> str:
        """The last user message."""
        for m in reversed(self.messages):
            if m.get("role") == "user":
                return self._text(m.get("content"))
        return ""

    @property
    def stream(self) -> bool:
        """Whether the client asked for SSE streaming."""
        return bool(self.body.get("stream"))

    @property
    def temperature(self) -> float | None:
        """The requested temperature, if any."""
        t = self.body.get("temperature")
        return float(t) if t is not None else None


@dataclass(frozen=True)
class Fail:
    """A scripted HTTP error reply (`{api_key}` in the message is the request's key)."""

    status: int = 500
    message: str = "scripted failure"
    reason: str | None = None
    """Gemini's `ErrorInfo.reason` (e.g. `API_KEY_INVALID`), sent in the error's details."""
    retry_after: float | None = None
    """Seconds the client should wait: a `Retry-After` header, and Gemini's `retryDelay`."""


_REFUSED = {
    "openai": Fail(401, "Incorrect API key provided. You can find your API key at ..."),
    "azure": Fail(
        401,
        "Access denied due to invalid subscription key or wrong API endpoint. Make sure to "
        "provide a valid key for an active subscription and use a correct regional API "
        "endpoint for your resource.",
    ),
    "gemini": Fail(400, "API key not valid. Please pass a valid API key.", "API_KEY_INVALID"),
}
"""How each provider refuses a bad key (`ScriptedServer.accepts`)."""


@dataclass(frozen=True)
class Hang:
    """A reply that takes `seconds` to come (a 504 after that, if the client still waits)."""

    seconds: float = 3600.0


@dataclass(frozen=True)
class Cut:
    """A reply the model did not finish: `finish_reason` `length` (max_tokens) or
    `content_filter`."""

    text: str
    finish_reason: str = "length"


@dataclass(frozen=True)
class Drop:
    """A reply that never comes: the connection is closed without a response."""


class Faults:
    """Random HTTP errors on a share of requests, reproducible from `seed`."""

    def __init__(
        self,
        rate: float,
        statuses: tuple[int, ...] = (429, 500),
        seed: int = 0,
        kinds: tuple[str, ...] = ("chat", "embeddings"),
    ) -> None:
        import random

        self.rate, self.statuses, self.kinds = rate, statuses, kinds
        self._random = random.Random(seed)
        self._lock = threading.Lock()

    def draw(self, kind: str) -> int | None:
        """The status to fail this request with, or None to answer it."""
        if kind not in self.kinds:
            return None
        with self._lock:
            if self._random.random() >= self.rate:
                return None
            return self._random.choice(self.statuses)


@dataclass
class Rule:
    """Answer requests for which `match` is true with `reply(request)`."""

    name: str
    match: Callable[[ChatRequest], bool]
    reply: Callable[[ChatRequest], str | Fail | Hang | Cut | Drop]


@dataclass
class LogEntry:
    """One request the server answered."""

    kind: str  # "chat" | "embeddings"
    rule: str | None
    prompt: str
    reply: str
    prompt_tokens: int
    output_tokens: int
    stream: bool
    status: int
    temperature: float | None = None
    request: dict[str, Any] = field(default_factory=dict)
    time: float = field(default_factory=time.time)
    start: float = 0.0
    """When the request arrived (its request line was read; `time.time()`)."""
    end: float = 0.0
    """When the reply was written, or its writing failed (0 until then); `time` is when it
    was decided."""
    reply_id: str = ""
    """The `id` of an OpenAI-wire chat reply (`chatcmpl-N`, unique per server)."""
    cut: bool = False
    """The client hung up before the whole reply was written (a killed `gtog eval`): the
    write failed. (A reply written whole may still be unread by a client killed after.)"""
    path: str = ""
    """The request's path and query (`/v1/chat/completions`, `...:generateContent`)."""
    auth: str = ""
    """The header that carried the key: `Authorization`, `api-key` or `x-goog-api-key`."""
    wire: str = "openai"
    """The wire format: `openai`, `azure` or `gemini`."""

    @property
    def identity(self) -> str:
        """What makes two logged requests the same request: kind, text and body."""
        return json.dumps([self.kind, self.prompt, self.request], sort_keys=True, default=str)


class ScriptedServer:
    """Threaded HTTP server answering OpenAI-style requests by rules."""

    def __init__(
        self,
        rules: Iterable[Rule] = (),
        *,
        port: int = 0,
        embedding_dims: int = 64,
        stream_usage: bool = False,
        delay: float = 0.0,
        embedding_delay: float = 0.0,
    ) -> None:
        self.rules: list[Rule] = list(rules)
        self.embedding_dims = embedding_dims
        self.stream_usage = stream_usage
        """Send a final usage chunk on streams (only when the client asks for it)."""
        self.report_usage = True
        """False: report no usage at all (`"usage": null`), as some local servers do."""
        self.accepts: Callable[[str], bool] | None = None
        """Which keys the server takes (None: any); a request with another key is refused
        as the wire's provider refuses it (OpenAI and Azure: 401; Gemini: 400
        `API_KEY_INVALID`), chat and embeddings alike, before any rule or fault."""
        self.delay = delay
        """Seconds to wait before each chat reply (to make interruption tests deterministic)."""
        self.embedding_delay = embedding_delay
        """Seconds to wait before each embeddings reply (a remote endpoint's latency)."""
        self.log: list[LogEntry] = []
        self.arrived: dict[str, int] = {}
        """Requests read since the last `clear_log`, by kind (`chat`, `embeddings`): a
        request is counted as it arrives, logged only once its reply is decided (after
        `delay`)."""
        self._replies = itertools.count(1)
        self._epoch = 0.0
        """Requests that started before this time (the last `clear_log`) are not logged."""
        self.faults: Faults | None = None
        """Random errors injected before any rule is asked (None: none)."""
        self.injected: list[tuple[str, int]] = []
        """(kind, status) of every injected fault."""
        self._lock = threading.Lock()
        self._request = threading.local()
        self._httpd = _QuietServer(("127.0.0.1", port), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------
    @property
    def port(self) -> int:
        """The bound port."""
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (`.../v1`)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def gemini_base(self) -> str:
        """The `api_base` for LiteLLM's `gemini/` route (`.../v1beta`)."""
        return f"http://127.0.0.1:{self.port}/v1beta"

    @property
    def azure_base(self) -> str:
        """The `api_base` of an Azure OpenAI resource (`.../openai/deployments/...` below)."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ScriptedServer:
        """Serve in a background thread."""
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- log helpers -------------------------------------------------------------------
    def chat_log(self) -> list[LogEntry]:
        """Chat requests only."""
        with self._lock:
            return [e for e in self.log if e.kind == "chat"]

    def clear_log(self) -> None:
        """Forget all logged requests, and never log one that started before now.

        (A request an earlier test left hanging is otherwise logged when its reply is
        decided, inside a later test's log.)
        """
        with self._lock:
            self.log.clear()
            self.arrived = {}
            self._epoch = time.time()

    @property
    def unscripted(self) -> list[LogEntry]:
        """Chat requests that no rule matched."""
        return [e for e in self.chat_log() if e.rule is None]

    # -- answering ---------------------------------------------------------------------
    def answer(self, request: ChatRequest) -> tuple[str | None, str | Fail | Hang | Cut | Drop]:
        """The first matching rule's name and reply."""
        for rule in self.rules:
            if rule.match(request):
                return rule.name, rule.reply(request)
        return None, UNSCRIPTED

    def busy_seconds(self) -> tuple[float, float]:
        """(sum of server-side request durations, span from first start to last end)."""
        with self._lock:
            spans = [(e.start or e.time, e.end or e.time) for e in self.log]
        if not spans:
            return 0.0, 0.0
        busy = sum(end - start for start, end in spans)
        return busy, max(end for _, end in spans) - min(start for start, _ in spans)

    def _record(self, entry: LogEntry) -> None:
        entry.start = getattr(self._request, "started", entry.time)
        for name, value in (getattr(self._request, "meta", None) or {}).items():
            setattr(entry, name, value)
        self._request.entry = entry
        with self._lock:
            if entry.start >= self._epoch:
                self.log.append(entry)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # a reply is headers + body: no 40 ms delayed ACK

            def log_message(self, format: str, *args: Any) -> None:
                return

            def parse_request(self) -> bool:
                # a call's server-side time runs from its request line to its reply's end
                server._request.started = time.time()
                server._request.entry = None
                server._request.meta = None
                return super().parse_request()

            def handle_one_request(self) -> None:
                try:
                    super().handle_one_request()  # (flushes the reply)
                except ConnectionError:
                    entry = getattr(server._request, "entry", None)
                    if entry is not None:
                        entry.cut = True
                    raise
                finally:
                    entry = getattr(server._request, "entry", None)
                    if entry is not None:
                        entry.end = time.time()
                        server._request.entry = None

            def _send_json(
                self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _send_error(self, wire: str, fail: Fail) -> None:
                """An HTTP error in the wire format's own shape."""
                headers = {}
                if fail.retry_after is not None and wire != "gemini":
                    headers["Retry-After"] = f"{fail.retry_after:g}"
                if wire != "gemini":
                    payload = {"error": {"message": fail.message, "type": "scripted"}}
                    self._send_json(fail.status, payload, headers)
                    return
                details: list[dict[str, Any]] = []
                if fail.reason:
                    details.append(
                        {
                            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                            "reason": fail.reason,
                            "domain": "googleapis.com",
                            "metadata": {"service": "generativelanguage.googleapis.com"},
                        }
                    )
                if fail.retry_after is not None:
                    details.append(
                        {
                            "@type": "type.googleapis.com/google.rpc.RetryInfo",
                            "retryDelay": f"{fail.retry_after:g}s",
                        }
                    )
                status = _GEMINI_STATUS.get(fail.status, "UNKNOWN")
                error = {"code": fail.status, "message": fail.message, "status": status}
                self._send_json(fail.status, {"error": {**error, "details": details}})

            def _key(self) -> tuple[str, str]:
                """(header, key) of the request's credentials."""
                for header in ("x-goog-api-key", "api-key"):
                    if self.headers.get(header):
                        return header, str(self.headers.get(header))
                auth = self.headers.get("Authorization") or ""
                return ("Authorization" if auth else ""), auth.removeprefix("Bearer ").strip()

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send_json(200, {"object": "list", "data": [{"id": "scripted"}]})
                elif self.path.rstrip("/").endswith("/log"):
                    with server._lock:
                        entries = [e.__dict__ for e in server.log]
                    self._send_json(200, {"log": entries})
                else:
                    self._send_json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self._send_json(400, {"error": {"message": "invalid JSON body"}})
                    return
                path = urlsplit(self.path).path.rstrip("/")
                gemini = re.search(r"/models/([^/:]+):(\w+)$", path)
                wire = (
                    "gemini" if gemini else "azure" if "/openai/deployments/" in path else "openai"
                )
                if gemini:
                    kind = "embeddings" if "mbed" in gemini.group(2) else "chat"
                else:
                    kind = "chat" if path.endswith("/chat/completions") else "embeddings"
                with server._lock:
                    server.arrived[kind] = server.arrived.get(kind, 0) + 1
                header, key = self._key()
                server._request.meta = {"path": self.path, "auth": header, "wire": wire}
                if server.accepts is not None and not server.accepts(key):
                    refused = _REFUSED[wire]
                    server._record(LogEntry(kind, "refused", "", "", 0, 0, False, refused.status))
                    self._send_error(wire, refused)
                    return
                status = server.faults.draw(kind) if server.faults is not None else None
                if status is not None:
                    with server._lock:
                        server.injected.append((kind, status))
                    if status == DROP:
                        self.close_connection = True
                        return
                    self._send_error(wire, Fail(status, "injected"))
                    return
                if gemini and kind == "chat":
                    model, action = gemini.groups()
                    stream = action == "streamGenerateContent"
                    request = ChatRequest(_gemini_as_openai(body, model, stream), key, wire, body)
                    self._chat(request)
                elif gemini:
                    self._embeddings(_gemini_inputs(body), wire, body)
                elif path.endswith("/chat/completions"):
                    self._chat(ChatRequest(body, api_key=key, wire=wire, raw=body))
                elif path.endswith("/embeddings"):
                    inputs = body.get("input")
                    inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
                    self._embeddings([str(x) for x in inputs], wire, body)
                else:
                    self._send_json(404, {"error": {"message": f"no route {self.path}"}})

            def _embeddings(self, inputs: list[str], wire: str, body: dict[str, Any]) -> None:
                if server.embedding_delay:
                    time.sleep(server.embedding_delay)
                tokens = sum(count_tokens(t) for t in inputs)
                vectors = [hash_embedding(t, server.embedding_dims) for t in inputs]
                server._record(
                    LogEntry(
                        "embeddings", "embeddings", "\n".join(inputs), "", tokens, 0, False, 200
                    )
                )
                if wire == "gemini":  # batchEmbedContents: no usage, as Google's API
                    self._send_json(200, {"embeddings": [{"values": v} for v in vectors]})
                    return
                # like OpenAI: base64 float32 when asked (the openai SDK asks by default)
                as_base64 = body.get("encoding_format") == "base64"
                data = [
                    {"object": "embedding", "index": i, "embedding": _base64(v) if as_base64 else v}
                    for i, v in enumerate(vectors)
                ]
                usage = {"prompt_tokens": tokens, "total_tokens": tokens}
                self._send_json(
                    200,
                    {
                        "object": "list",
                        "data": data,
                        "model": body.get("model", "scripted"),
                        "usage": usage if server.report_usage else None,
                    },
                )

            def _chat(self, request: ChatRequest) -> None:
                body = request.body
                rule, reply = server.answer(request)
                if server.delay:
                    time.sleep(server.delay)
                if isinstance(reply, Hang):
                    time.sleep(reply.seconds)
                    reply = Fail(504, "gateway timeout")
                if isinstance(reply, Drop):
                    server._record(
                        LogEntry("chat", rule, request.prompt, "", 0, 0, request.stream, DROP)
                    )
                    self.close_connection = True
                    return
                if isinstance(reply, Fail) and "{api_key}" in reply.message:
                    message = reply.message.replace("{api_key}", request.api_key)
                    reply = dataclasses.replace(reply, message=message)
                prompt_tokens = count_tokens(request.prompt)
                if isinstance(reply, Fail):
                    server._record(
                        LogEntry(
                            "chat",
                            rule,
                            request.prompt,
                            "",
                            prompt_tokens,
                            0,
                            request.stream,
                            reply.status,
                            request.temperature,
                            body,
                        )
                    )
                    self._send_error(request.wire, reply)
                    return
                finish = "stop"
                if isinstance(reply, Cut):
                    reply, finish = reply.text, reply.finish_reason
                output_tokens = count_tokens(reply)
                server._record(
                    LogEntry(
                        "chat",
                        rule,
                        request.prompt,
                        reply,
                        prompt_tokens,
                        output_tokens,
                        request.stream,
                        200,
                        request.temperature,
                        body,
                    )
                )
                if request.wire == "gemini":
                    self._gemini_reply(request, reply, finish, prompt_tokens, output_tokens)
                    return
                usage: dict[str, int] | None = {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": output_tokens,
                    "total_tokens": prompt_tokens + output_tokens,
                }
                if not server.report_usage:
                    usage = None
                ident = f"chatcmpl-{next(server._replies)}"
                server._request.entry.reply_id = ident
                model = body.get("model", "scripted")
                if not request.stream:
                    self._send_json(
                        200,
                        {
                            "id": ident,
                            "object": "chat.completion",
                            "created": int(time.time()),
                            "model": model,
                            "choices": [
                                {
                                    "index": 0,
                                    "message": {"role": "assistant", "content": reply},
                                    "finish_reason": finish,
                                }
                            ],
                            "usage": usage,
                        },
                    )
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                pieces = re.findall(r"\S+\s*|\s+", reply) or [""]
                base: dict[str, Any] = {
                    "id": ident,
                    "object": "chat.completion.chunk",
                    "model": model,
                }
                if not server.report_usage:
                    base["usage"] = None  # (llama.cpp, vLLM, ... without stream_options)
                for i, piece in enumerate(pieces):
                    delta: dict[str, Any] = {"content": piece}
                    if i == 0:
                        delta["role"] = "assistant"
                    chunk = {**base, "choices": [{"index": 0, "delta": delta}]}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                final = {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
                self.wfile.write(f"data: {json.dumps(final)}\n\n".encode())
                wants_usage = (body.get("stream_options") or {}).get("include_usage")
                if server.stream_usage and wants_usage and usage is not None:
                    self.wfile.write(
                        f"data: {json.dumps({**base, 'choices': [], 'usage': usage})}\n\n".encode()
                    )
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

            def _gemini_reply(
                self,
                request: ChatRequest,
                reply: str,
                finish: str,
                prompt_tokens: int,
                output_tokens: int,
            ) -> None:
                """A `generateContent` reply, or its `alt=sse` stream (one event a word)."""
                reason = _GEMINI_FINISH.get(finish, "STOP")
                usage = {
                    "promptTokenCount": prompt_tokens,
                    "candidatesTokenCount": output_tokens,
                    "totalTokenCount": prompt_tokens + output_tokens,
                }
                version = {"modelVersion": request.body.get("model"), "responseId": "scripted"}

                def candidate(text: str, finish_reason: str | None) -> dict[str, Any]:
                    found: dict[str, Any] = {"index": 0}
                    if text or finish_reason != "SAFETY":  # a blocked reply has no content
                        found["content"] = {"parts": [{"text": text}], "role": "model"}
                    if finish_reason is not None:
                        found["finishReason"] = finish_reason
                    if finish_reason == "SAFETY":
                        found["safetyRatings"] = [
                            {
                                "category": "HARM_CATEGORY_DANGEROUS_CONTENT",
                                "probability": "HIGH",
                                "blocked": True,
                            }
                        ]
                    return found

                if not request.stream:
                    payload = {
                        "candidates": [candidate(reply, reason)],
                        "usageMetadata": usage,
                        **version,
                    }
                    self._send_json(200, payload)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                pieces = re.findall(r"\S+\s*|\s+", reply) or [""]
                for i, piece in enumerate(pieces):
                    last = i == len(pieces) - 1
                    # like Google's API: every event has usageMetadata, the last the totals
                    so_far = count_tokens("".join(pieces[: i + 1]))
                    event = {
                        "candidates": [candidate(piece, reason if last else None)],
                        "usageMetadata": {
                            **usage,
                            "candidatesTokenCount": so_far,
                            "totalTokenCount": prompt_tokens + so_far,
                        },
                        **version,
                    }
                    self.wfile.write(f"data: {json.dumps(event)}\r\n\r\n".encode())
                self.wfile.flush()
                self.close_connection = True

        return Handler


def _main() -> None:
    import argparse

    from tests.support.world import default_rules

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = ScriptedServer(default_rules(), port=args.port)
    print(server.port, flush=True)
    server._httpd.serve_forever()


if __name__ == "__main__":
    _main()
