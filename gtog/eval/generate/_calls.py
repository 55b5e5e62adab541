"""Model calls of question generation, each kept once it is answered.

`CallCache` is a JSON-lines file beside the output, in a hidden folder a dataset search
passes over (`.gtog-generate/<output name>.calls.jsonl`): one line per usable reply (a
generation reply, a check verdict, a question's embedding), keyed by a hash of the model,
the sampling and the prompt. A second run, interrupted or not, asks only what
is not in it; a changed prompt, source or model is a new key. Lines are appended in a
worker thread (the event loop never waits on the disk); a torn last line is ignored.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from gtog._errors import describe_exception
from gtog._hashing import stable_hash
from gtog.llm._errors import fatal_reason
from gtog.llm._models import ChatModel, EmbeddingModel
from gtog.llm._replies import ask_json

__all__ = ["CallCache", "ask_cached", "embed_cached"]

T = TypeVar("T", bound=BaseModel)


class CallCache:
    """Answered calls by key, read at start and appended to as calls finish."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: dict[str, Any] = {}
        self.hits = 0
        self._lock = threading.Lock()
        if path is not None and path.is_file():
            for line in path.read_bytes().split(b"\n"):
                try:
                    entry = json.loads(line)
                    self.entries[str(entry["key"])] = entry["value"]
                except (ValueError, KeyError, TypeError):
                    continue  # a torn last line, or the empty tail

    def get(self, key: str) -> Any | None:
        """The kept value of `key` (counted as a hit), else None."""
        value = self.entries.get(key)
        if value is not None:
            self.hits += 1
        return value

    def _append(self, line: bytes) -> None:
        assert self.path is not None
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("ab") as f:
                f.write(line)
                f.flush()

    async def put(self, key: str, value: Any) -> None:
        """Keep `value` under `key` (and on disk)."""
        self.entries[key] = value
        if self.path is not None:
            line = json.dumps({"key": key, "value": value}, ensure_ascii=False) + "\n"
            await asyncio.to_thread(self._append, line.encode("utf-8"))


async def ask_cached(
    model: ChatModel,
    prompt: str,
    schema: type[T],
    cache: CallCache,
    *,
    temperature: float | None,
    max_tokens: int,
    category: str,
) -> tuple[T | None, str | None]:
    """`(reply, None)` from the cache or the model, else `(None, why)`; a fatal provider
    error (401/403/404) is raised."""
    key = stable_hash(
        {
            "model": model.name,
            "schema": schema.__name__,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "prompt": prompt,
        }
    )
    hit = cache.get(key)
    if hit is not None:
        return schema.model_validate(hit), None
    try:
        reply = await ask_json(
            model,
            prompt,
            schema,
            temperature=temperature,
            max_tokens=max_tokens,
            category=category,
        )
    except Exception as exc:
        if fatal_reason(exc) is not None:
            raise
        return None, describe_exception(exc)
    if reply.value is None:
        return None, reply.error or "unusable reply"
    await cache.put(key, reply.value.model_dump())
    return reply.value, None


async def embed_cached(
    model: EmbeddingModel, texts: list[str], cache: CallCache, batch: int = 32
) -> list[list[float]]:
    """Each text's embedding, from the cache or the model (in batches of `batch`)."""
    name = f"{model.config.model_provider}/{model.config.model}"
    keys = [stable_hash({"embedding": name, "text": t}) for t in texts]
    out: dict[str, list[float]] = {k: v for k in keys if (v := cache.get(k)) is not None}
    todo = [(k, t) for k, t in zip(keys, texts, strict=True) if k not in out]
    for start in range(0, len(todo), batch):
        part = todo[start : start + batch]
        vectors = await model.embed([t for _, t in part])
        for (k, _), v in zip(part, vectors, strict=True):
            out[k] = v
            await cache.put(k, v)
    return [out[k] for k in keys]
