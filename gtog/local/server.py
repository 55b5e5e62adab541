"""The local OpenAI-compatible model server (one process, one port, 127.0.0.1).

Routes: ``GET /health``, ``GET /v1/models``, ``POST /v1/chat/completions`` (JSON or SSE,
always with ``usage``) and ``POST /v1/embeddings`` (float or base64). Chat runs on
llama.cpp (``llama_cpp.Llama``, 2 threads, ``logits_all=False``); embeddings on
onnxruntime (all-MiniLM-L6-v2 int8). Requests are served one at a time per model
(a lock each); concurrent clients simply queue.

Run it with ``gtog local-model serve`` or ``python -m gtog.local --port 0``;
the first stdout line is ``READY <base_url>`` once both models are loaded.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import signal
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from gtog.local.weights import (
    CHAT_MODEL_NAME,
    EMBEDDING_DIMS,
    EMBEDDING_MODEL_NAME,
    assemble_chat_weights,
)

__all__ = ["DEFAULT_CTX", "DEFAULT_MAX_TOKENS", "ModelBackend", "make_server", "serve"]

DEFAULT_CTX = 8192
DEFAULT_MAX_TOKENS = 1024
DEFAULT_REPEAT_PENALTY = 1.1
"""llama.cpp's usual default; llama-cpp-python's chat API defaults to 1.0, with which the
1.5B model loops more often in graphrag's entity extraction."""
"""Cap on generated tokens when a request sets none (a 1.5B model can loop; ~10 tok/s)."""


class ModelBackend:
    """The loaded chat and embedding models, each behind its own lock."""

    def __init__(
        self,
        n_ctx: int = DEFAULT_CTX,
        threads: int | None = None,
        chat: bool = True,
        embeddings: bool = True,
        repeat_penalty: float = DEFAULT_REPEAT_PENALTY,
    ) -> None:
        threads = threads or min(2, os.cpu_count() or 1)
        self.n_ctx = n_ctx
        self.repeat_penalty = repeat_penalty
        self.llm = None
        self.embedder = None
        self.chat_lock = threading.Lock()
        if chat:
            from llama_cpp import Llama

            self.llm = Llama(
                model_path=str(assemble_chat_weights()),
                n_ctx=n_ctx,
                n_threads=threads,
                n_threads_batch=threads,
                n_batch=512,
                logits_all=False,
                seed=0,
                verbose=False,
            )
        if embeddings:
            from gtog.local.embeddings import MiniLMEmbedder

            self.embedder = MiniLMEmbedder(threads=threads)

    # -- chat ---------------------------------------------------------------------------
    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        """One chat completion in OpenAI's response shape (with `usage`)."""
        if self.llm is None:
            raise _HttpError(404, "this server has no chat model")
        messages = body.get("messages") or []
        max_tokens = body.get("max_completion_tokens") or body.get("max_tokens")
        args: dict[str, Any] = {
            "messages": _plain_messages(messages),
            "max_tokens": int(max_tokens) if max_tokens else DEFAULT_MAX_TOKENS,
            "repeat_penalty": self.repeat_penalty,
        }
        for key in (
            "temperature", "top_p", "seed", "presence_penalty", "frequency_penalty",
            "repeat_penalty",
        ):  # fmt: skip
            if body.get(key) is not None:
                args[key] = body[key]
        if body.get("stop"):
            args["stop"] = body["stop"]
        fmt = _response_format(body.get("response_format"))
        if fmt is not None:
            args["response_format"] = fmt
        with self.chat_lock:
            started = time.monotonic()
            try:
                result = self.llm.create_chat_completion(**args)
            except ValueError as error:  # prompt longer than the context window
                _log(f"chat error: {error}")
                raise _HttpError(400, str(error), "context_length_exceeded") from error
            usage = result.get("usage") or {}
            _log(
                f"chat {usage.get('prompt_tokens')}+{usage.get('completion_tokens')} tokens "
                f"in {time.monotonic() - started:.1f}s"
                f"{' json' if fmt else ''} finish={result['choices'][0].get('finish_reason')}"
            )
        result["model"] = body.get("model") or CHAT_MODEL_NAME
        return result

    # -- embeddings ---------------------------------------------------------------------
    def embed(self, body: dict[str, Any]) -> dict[str, Any]:
        """Embeddings in OpenAI's response shape."""
        if self.embedder is None:
            raise _HttpError(404, "this server has no embedding model")
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
            raise _HttpError(
                400, "input must be a string or a list of strings (token ids are not supported)"
            )
        vectors = self.embedder.embed(inputs)
        as_base64 = body.get("encoding_format") == "base64"
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": base64.b64encode(vec.astype("<f4").tobytes()).decode()
                if as_base64
                else [float(x) for x in vec],
            }
            for i, vec in enumerate(vectors)
        ]
        tokens = self.embedder.count_tokens(inputs)
        return {
            "object": "list",
            "data": data,
            "model": body.get("model") or EMBEDDING_MODEL_NAME,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }


def _log(message: str) -> None:
    """One line to stderr (the server's log file when started by LocalModelServer)."""
    print(f"{time.strftime('%H:%M:%S')} {message}", file=sys.stderr, flush=True)


class _HttpError(Exception):
    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


def _plain_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages with list-of-parts content flattened to text (the GGUF template wants str)."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        out.append({"role": m.get("role", "user"), "content": content or ""})
    return out


def _response_format(fmt: Any) -> dict[str, Any] | None:
    """OpenAI `response_format` as llama.cpp accepts it (json_schema -> json_object+schema)."""
    if not isinstance(fmt, dict):
        return None
    kind = fmt.get("type")
    if kind == "json_object":
        return {"type": "json_object", **({"schema": fmt["schema"]} if "schema" in fmt else {})}
    if kind == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema")
        return {"type": "json_object", **({"schema": schema} if schema else {})}
    return None


def make_server(
    backend: ModelBackend, host: str = "127.0.0.1", port: int = 0
) -> ThreadingHTTPServer:
    """An HTTP server for `backend` (not started)."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _send_json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            path = self.path.rstrip("/")
            if path in ("/health", "/v1/health"):
                self._send_json(
                    200,
                    {
                        "status": "ok",
                        "chat": backend.llm is not None,
                        "embeddings": backend.embedder is not None,
                    },
                )
            elif path.endswith("/models"):
                models = []
                if backend.llm is not None:
                    models.append(
                        {
                            "id": CHAT_MODEL_NAME,
                            "object": "model",
                            "owned_by": "gtog",
                            "context_window": backend.n_ctx,
                        }
                    )
                if backend.embedder is not None:
                    models.append(
                        {
                            "id": EMBEDDING_MODEL_NAME,
                            "object": "model",
                            "owned_by": "gtog",
                            "dimensions": EMBEDDING_DIMS,
                        }
                    )
                self._send_json(200, {"object": "list", "data": models})
            else:
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                self._send_json(400, {"error": {"message": "invalid JSON body"}})
                return
            path = self.path.rstrip("/")
            try:
                if path.endswith("/chat/completions"):
                    result = backend.chat(body)
                    if body.get("stream"):
                        self._stream(result, body)
                    else:
                        self._send_json(200, result)
                elif path.endswith("/embeddings"):
                    self._send_json(200, backend.embed(body))
                else:
                    self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            except _HttpError as error:
                self._send_json(
                    error.status,
                    {
                        "error": {
                            "message": error.message,
                            "type": "invalid_request_error",
                            "code": error.code,
                        }
                    },
                )
            except Exception as error:  # keep serving; report the failure to the client
                self._send_json(
                    500,
                    {
                        "error": {
                            "message": f"{type(error).__name__}: {error}",
                            "type": "server_error",
                        }
                    },
                )

        def _stream(self, result: dict[str, Any], body: dict[str, Any]) -> None:
            """Send a finished completion as SSE chunks (one content chunk, then usage)."""
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            choice = result["choices"][0]
            base = {
                "id": result.get("id", f"chatcmpl-{uuid.uuid4().hex}"),
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": result["model"],
            }
            chunks = [
                {
                    **base,
                    "choices": [
                        {
                            "index": 0,
                            "delta": {
                                "role": "assistant",
                                "content": choice["message"].get("content") or "",
                            },
                        }
                    ],
                },
                {
                    **base,
                    "choices": [
                        {
                            "index": 0,
                            "delta": {},
                            "finish_reason": choice.get("finish_reason") or "stop",
                        }
                    ],
                },
            ]
            if (body.get("stream_options") or {}).get("include_usage"):
                chunks.append({**base, "choices": [], "usage": result.get("usage")})
            for chunk in chunks:
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

    httpd = ThreadingHTTPServer((host, port), Handler)
    httpd.daemon_threads = True
    return httpd


def serve(
    host: str = "127.0.0.1",
    port: int = 0,
    n_ctx: int = DEFAULT_CTX,
    threads: int | None = None,
    chat: bool = True,
    embeddings: bool = True,
    exit_with_parent: bool = False,
) -> None:
    """Load the models, print `READY <base_url>`, serve until SIGINT/SIGTERM.

    With `exit_with_parent`, also stop when the parent process dies (so a killed
    `gtog eval --local` leaves no orphaned server behind).
    """
    backend = ModelBackend(n_ctx=n_ctx, threads=threads, chat=chat, embeddings=embeddings)
    httpd = make_server(backend, host, port)
    base_url = f"http://{host}:{httpd.server_address[1]}/v1"

    def _stop(signum: int, frame: Any) -> None:
        threading.Thread(target=httpd.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, _stop)
    if exit_with_parent:
        _watch_parent(httpd)
    print(f"READY {base_url}", flush=True)
    try:
        httpd.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()


def _watch_parent(httpd: ThreadingHTTPServer) -> None:
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        _log("parent process exited; stopping")
        httpd.shutdown()

    threading.Thread(target=watch, name="watch-parent", daemon=True).start()


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gtog.local",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--n-ctx", type=int, default=DEFAULT_CTX)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--no-chat", action="store_true", help="serve embeddings only")
    parser.add_argument(
        "--exit-with-parent", action="store_true", help="stop when the parent process exits"
    )
    args = parser.parse_args(argv)
    from gtog.local.weights import LocalExtraMissingError, WeightsError

    try:
        serve(
            args.host,
            args.port,
            args.n_ctx,
            args.threads,
            chat=not args.no_chat,
            exit_with_parent=args.exit_with_parent,
        )
    except (LocalExtraMissingError, WeightsError) as error:
        print(f"ERROR {error}", file=sys.stderr, flush=True)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(_main())
