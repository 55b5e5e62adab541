"""A scripted OpenAI-compatible server for tests and benchmarks (127.0.0.1 only).

It speaks `/v1/chat/completions` (plain JSON and SSE streaming, with `usage`),
`/v1/embeddings` and `/v1/models`, answers chat requests by *rules* on the prompt,
and keeps a log of every request so tests can count calls and tokens exactly as the
server saw them.

    server = ScriptedServer(rules=[Rule("echo", lambda r: True, lambda r: r.last_user)])
    server.start()
    ... point settings.yaml `api_base` at server.base_url ...
    server.stop()

A rule's reply may be a string, a `Fail(status, message)` to return an HTTP error (the
message may quote the request's key as `{api_key}`, as providers do), a `Hang(seconds)`
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
import hashlib
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


def _base64(vec: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode()


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up (e.g. a killed `gtog eval`) is not an error worth printing."""

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
    """The bearer token the client sent."""

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
    """When the reply was written (0 until then); `time` is when it was decided."""

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
        self.delay = delay
        """Seconds to wait before each chat reply (to make interruption tests deterministic)."""
        self.embedding_delay = embedding_delay
        """Seconds to wait before each embeddings reply (a remote endpoint's latency)."""
        self.log: list[LogEntry] = []
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
                return super().parse_request()

            def handle_one_request(self) -> None:
                super().handle_one_request()  # (flushes the reply)
                entry = getattr(server._request, "entry", None)
                if entry is not None:
                    entry.end = time.time()
                    server._request.entry = None

            def _send_json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

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
                path = self.path.rstrip("/")
                kind = "chat" if path.endswith("/chat/completions") else "embeddings"
                status = server.faults.draw(kind) if server.faults is not None else None
                if status is not None:
                    with server._lock:
                        server.injected.append((kind, status))
                    if status == DROP:
                        self.close_connection = True
                        return
                    self._send_json(status, {"error": {"message": "injected", "type": "fault"}})
                    return
                if path.endswith("/chat/completions"):
                    self._chat(body)
                elif path.endswith("/embeddings"):
                    self._embeddings(body)
                else:
                    self._send_json(404, {"error": {"message": f"no route {self.path}"}})

            def _embeddings(self, body: dict[str, Any]) -> None:
                inputs = body.get("input")
                if isinstance(inputs, str):
                    inputs = [inputs]
                inputs = [str(x) for x in inputs or []]
                if server.embedding_delay:
                    time.sleep(server.embedding_delay)
                tokens = sum(count_tokens(t) for t in inputs)
                # like OpenAI: base64 float32 when asked (the openai SDK asks by default)
                as_base64 = body.get("encoding_format") == "base64"
                data = [
                    {
                        "object": "embedding",
                        "index": i,
                        "embedding": _base64(vec) if as_base64 else vec,
                    }
                    for i, t in enumerate(inputs)
                    for vec in [hash_embedding(t, server.embedding_dims)]
                ]
                server._record(
                    LogEntry(
                        "embeddings", "embeddings", "\n".join(inputs), "", tokens, 0, False, 200
                    )
                )
                self._send_json(
                    200,
                    {
                        "object": "list",
                        "data": data,
                        "model": body.get("model", "scripted"),
                        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                    },
                )

            def _chat(self, body: dict[str, Any]) -> None:
                auth = self.headers.get("Authorization") or ""
                request = ChatRequest(body, api_key=auth.removeprefix("Bearer ").strip())
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
                    reply = Fail(reply.status, reply.message.replace("{api_key}", request.api_key))
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
                    self._send_json(
                        reply.status, {"error": {"message": reply.message, "type": "scripted"}}
                    )
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
                usage = {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": output_tokens,
                    "total_tokens": prompt_tokens + output_tokens,
                }
                ident = f"chatcmpl-{len(server.log)}"
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
                base = {"id": ident, "object": "chat.completion.chunk", "model": model}
                for i, piece in enumerate(pieces):
                    delta: dict[str, Any] = {"content": piece}
                    if i == 0:
                        delta["role"] = "assistant"
                    chunk = {**base, "choices": [{"index": 0, "delta": delta}]}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                final = {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
                self.wfile.write(f"data: {json.dumps(final)}\n\n".encode())
                wants_usage = (body.get("stream_options") or {}).get("include_usage")
                if server.stream_usage and wants_usage:
                    self.wfile.write(
                        f"data: {json.dumps({**base, 'choices': [], 'usage': usage})}\n\n".encode()
                    )
                self.wfile.write(b"data: [DONE]\n\n")
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
