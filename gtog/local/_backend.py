"""The local server's models: llama.cpp chat and onnxruntime embeddings, each behind a lock.

Chat is reproducible: a request that sets no ``seed`` is sampled with the server's seed
(0), and each request starts from an empty model state (no prompt prefix reused from the
previous request: how a prompt was split between requests changes the numbers slightly),
so the same request gets the same reply whatever came before it, at any temperature.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
import threading
import time
from typing import Any

from gtog.local._weights import CHAT_MODEL_NAME, EMBEDDING_MODEL_NAME, assemble_chat_weights

__all__ = [
    "DEFAULT_CTX",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_SEED",
    "BackendError",
    "ModelBackend",
    "log",
]

DEFAULT_CTX = 8192
DEFAULT_MAX_TOKENS = 1024
"""Cap on generated tokens when a request sets none (a 1.5B model can loop; ~10 tok/s)."""
DEFAULT_REPEAT_PENALTY = 1.1
"""llama.cpp's usual default; llama-cpp-python's chat API defaults to 1.0, with which the
1.5B model loops more often in graphrag's entity extraction."""
DEFAULT_SEED = 0
"""The sampling seed of every chat request that sets none.

llama-cpp-python would otherwise derive each request's seed from the previous one, so a
reply at temperature > 0 depended on how many requests came before it."""


class ModelBackend:
    """The loaded chat and embedding models, each behind its own lock."""

    def __init__(
        self,
        n_ctx: int = DEFAULT_CTX,
        threads: int | None = None,
        chat: bool = True,
        embeddings: bool = True,
        repeat_penalty: float = DEFAULT_REPEAT_PENALTY,
        seed: int = DEFAULT_SEED,
        reuse_prefix: bool = False,
    ) -> None:
        threads = threads or min(2, os.cpu_count() or 1)
        self.n_ctx = n_ctx
        self.repeat_penalty = repeat_penalty
        self.seed = seed
        self.reuse_prefix = reuse_prefix
        """Keep the previous request's prompt tokens evaluated (faster, not reproducible)."""
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
                seed=seed,
                verbose=False,
            )
        if embeddings:
            from gtog.local._embeddings import MiniLMEmbedder

            self.embedder = MiniLMEmbedder(threads=threads)

    # -- chat ---------------------------------------------------------------------------
    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        """One chat completion in OpenAI's response shape (with `usage`)."""
        if self.llm is None:
            raise BackendError(404, "this server has no chat model")
        messages = body.get("messages") or []
        max_tokens = body.get("max_completion_tokens") or body.get("max_tokens")
        args: dict[str, Any] = {
            "messages": _plain_messages(messages),
            "max_tokens": int(max_tokens) if max_tokens else DEFAULT_MAX_TOKENS,
            "repeat_penalty": self.repeat_penalty,
            "seed": self.seed,
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
            if not self.reuse_prefix:
                self.llm.reset()  # the next eval clears the whole KV cache
            try:
                result = self.llm.create_chat_completion(**args)
            except ValueError as error:  # prompt longer than the context window
                log(f"chat error: {error}")
                raise BackendError(400, str(error), "context_length_exceeded") from error
            usage = result.get("usage") or {}
            choice = result["choices"][0]
            log(
                f"chat {usage.get('prompt_tokens')}+{usage.get('completion_tokens')} tokens "
                f"in {time.monotonic() - started:.1f}s"
                f"{' json' if fmt else ''} finish={choice.get('finish_reason')}"
                f" request={_digest(args)} reply={_digest(choice['message'].get('content'))}"
            )
        result["model"] = body.get("model") or CHAT_MODEL_NAME
        return result

    # -- embeddings ---------------------------------------------------------------------
    def embed(self, body: dict[str, Any]) -> dict[str, Any]:
        """Embeddings in OpenAI's response shape."""
        if self.embedder is None:
            raise BackendError(404, "this server has no embedding model")
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
            raise BackendError(
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


def _digest(value: Any) -> str:
    """A short stable hash of a request's arguments or a reply (to compare runs' logs)."""
    text = json.dumps(value, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def log(message: str) -> None:
    """One line to stderr (the server's log file when started by LocalModelServer)."""
    print(f"{time.strftime('%H:%M:%S')} {message}", file=sys.stderr, flush=True)


class BackendError(Exception):
    """A request the backend refuses, with its HTTP status and OpenAI error code."""

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
