"""The local OpenAI-compatible model server (one process, one port, 127.0.0.1).

Routes: ``GET /health``, ``GET /v1/models``, ``POST /v1/chat/completions`` (JSON or SSE,
always with ``usage``) and ``POST /v1/embeddings`` (float or base64). Chat runs on
llama.cpp (``llama_cpp.Llama``, 2 threads, ``logits_all=False``); embeddings on
onnxruntime (all-MiniLM-L6-v2 int8). Requests are served one at a time per model
(a lock each); concurrent clients simply queue.

Chat replies are reproducible: the same request gets the same reply whatever came before
it, at any temperature (see gtog.local._backend).

Run it with ``gtog local-model serve`` or ``python -m gtog.local --port 0``;
the first stdout line is ``READY <base_url>`` once both models are loaded.
"""

from __future__ import annotations

import argparse
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

from gtog.local._backend import (
    DEFAULT_CTX,
    DEFAULT_MAX_TOKENS,
    DEFAULT_SEED,
    BackendError,
    ModelBackend,
    log,
)
from gtog.local._weights import CHAT_MODEL_NAME, EMBEDDING_DIMS, EMBEDDING_MODEL_NAME

__all__ = [
    "DEFAULT_CTX",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_SEED",
    "ModelBackend",
    "make_server",
    "serve",
]


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
            except BackendError as error:
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
    seed: int = DEFAULT_SEED,
    reuse_prefix: bool = False,
) -> None:
    """Load the models, print `READY <base_url>`, serve until SIGINT/SIGTERM.

    With `exit_with_parent`, also stop when the parent process dies (so a killed
    `gtog eval --local` leaves no orphaned server behind).
    """
    backend = ModelBackend(
        n_ctx=n_ctx,
        threads=threads,
        chat=chat,
        embeddings=embeddings,
        seed=seed,
        reuse_prefix=reuse_prefix,
    )
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
        log("parent process exited; stopping")
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
        "--seed", type=int, default=DEFAULT_SEED, help="sampling seed of requests that set none"
    )
    parser.add_argument(
        "--reuse-prefix",
        action="store_true",
        help="reuse the previous request's prompt prefix (faster; replies then depend on it)",
    )
    parser.add_argument(
        "--exit-with-parent", action="store_true", help="stop when the parent process exits"
    )
    args = parser.parse_args(argv)
    from gtog.local._weights import LocalExtraMissingError, WeightsError

    try:
        serve(
            args.host,
            args.port,
            args.n_ctx,
            args.threads,
            chat=not args.no_chat,
            exit_with_parent=args.exit_with_parent,
            seed=args.seed,
            reuse_prefix=args.reuse_prefix,
        )
    except (LocalExtraMissingError, WeightsError) as error:
        print(f"ERROR {error}", file=sys.stderr, flush=True)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(_main())
