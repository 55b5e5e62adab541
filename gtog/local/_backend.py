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
from collections.abc import Callable, Sequence
from typing import Any

from gtog.local._weights import CHAT_MODEL_NAME, EMBEDDING_MODEL_NAME, assemble_chat_weights

__all__ = [
    "DEFAULT_CTX",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_SEED",
    "REPEAT_CUT",
    "BackendError",
    "LoopCut",
    "ModelBackend",
    "log",
    "repeated_tail",
]

DEFAULT_CTX = 8192
DEFAULT_MAX_TOKENS = 1024
"""Cap on generated tokens when a request sets none (a 1.5B model can loop; ~10 tok/s)."""
DEFAULT_REPEAT_PENALTY = 1.1
"""llama.cpp's usual default; llama-cpp-python's chat API defaults to 1.0, with which the
1.5B model loops more often in graphrag's entity extraction."""
REPEAT_CUT = 64
"""A reply whose last this many tokens already appeared, verbatim, earlier in the same reply
is looping: the server ends it there and drops the repeated copy (0: never). The 1.5B model
at temperature 0 lists graphrag's extraction records once, then lists them again until
max_tokens (3,000 tokens of one 900-token list, 11 minutes on 2 cores); a record repeating
one description (~30 tokens) is not a loop. Replies held to a JSON grammar
(`response_format`) are never cut: the grammar does not allow them to end mid-object."""
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
        repeat_cut: int = REPEAT_CUT,
        seed: int = DEFAULT_SEED,
        reuse_prefix: bool = False,
    ) -> None:
        threads = threads or min(2, os.cpu_count() or 1)
        self.n_ctx = n_ctx
        self.repeat_penalty = repeat_penalty
        self.repeat_cut = repeat_cut
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
        # A reply held to a JSON grammar cannot end mid-object: it is never cut.
        cut_loops = bool(self.repeat_cut) and fmt is None
        loop = LoopCut(self.repeat_cut, self.llm.token_eos(), self._piece) if cut_loops else None
        if loop is not None:
            from llama_cpp import LogitsProcessorList

            args["logits_processor"] = LogitsProcessorList([loop])
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
            cut = ""
            if loop is not None and loop.kept is not None:
                text = self.llm.detokenize(loop.kept).decode("utf-8", errors="ignore")
                choice["message"]["content"] = text.rstrip()
                choice["finish_reason"] = "stop"
                cut = f" (looping: cut at token {len(loop.kept)})"
            args.pop("logits_processor", None)
            log(
                f"chat {usage.get('prompt_tokens')}+{usage.get('completion_tokens')} tokens "
                f"in {time.monotonic() - started:.1f}s"
                f"{' json' if fmt else ''} finish={choice.get('finish_reason')}{cut}"
                f" request={_digest(args)} reply={_digest(choice['message'].get('content'))}"
            )
        result["model"] = body.get("model") or CHAT_MODEL_NAME
        return result

    def _piece(self, token: int) -> str:
        assert self.llm is not None
        return self.llm.detokenize([token]).decode("utf-8", errors="ignore")

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


def repeated_tail(generated: Sequence[int], k: int) -> bool:
    """True when the last `k` of `generated` tokens already appeared, in order, earlier."""
    import numpy as np

    tokens = np.asarray(generated)
    n = len(tokens)
    if k <= 0 or n < k + 1:
        return False
    tail = tokens[n - k :]
    starts = np.flatnonzero(tokens[: n - k] == tail[0])
    return any(np.array_equal(tokens[i : i + k], tail) for i in starts)


class LoopCut:
    """A llama.cpp logits processor that ends a reply once it repeats itself (`REPEAT_CUT`).

    On the first step it notes where the reply starts; once the reply's last `k` tokens
    repeat an earlier run of it, it keeps the reply up to that copy and through the end
    of the line the copy began in (`kept`: a record the model was finishing is kept whole),
    and then allows only the end-of-text token, so the model stops there. `piece(token)`
    is a token's text.
    """

    def __init__(self, k: int, eos: int, piece: Callable[[int], str] = str) -> None:
        self.k, self.eos, self.piece = k, eos, piece
        self.start: int | None = None
        self.kept: list[int] | None = None

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self.start is None:
            self.start = len(input_ids)
        if self.kept is None:
            generated = [int(t) for t in input_ids[self.start :]]
            if repeated_tail(generated, self.k):
                copy = len(generated) - self.k
                line_end = next(
                    (i + 1 for i, t in enumerate(generated[copy:]) if "\n" in self.piece(t)), 0
                )
                self.kept = generated[: copy + line_end]
        if self.kept is not None:
            eos = scores[self.eos]
            scores[:] = -float("inf")
            scores[self.eos] = eos if eos > -float("inf") else 0.0
        return scores


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
