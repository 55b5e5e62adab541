"""The model-call cache's store and keys: one JSON file per request, written atomically.

A key is the hash of what reaches the provider: provider and model (and Azure deployment),
the model's call arguments, the request (messages or input, sampling settings, response
format, extra body), the answer's repeat number when it is above 1 (`gtog.llm._repeat`) and
the draw (`draw()`: a judge's trial, a structured reply's second attempt) when above 1. The
endpoint, key, timeouts and retries are not in it: the same model served elsewhere shares it.

The store is a folder of `<k[:2]>/<k>.json` files, each written to a temporary file beside
it and renamed into place, so any number of processes (shards on a shared file system
included) read and write one cache: a reader sees no entry or a whole one, and two writers
of one key write the same reply. Nothing is ever locked. An unreadable entry is a miss
(written again by the next reply); clearing the cache is deleting the folder.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gtog.llm._repeat import current_epoch

if TYPE_CHECKING:
    from graphrag_llm.config import ModelConfig

__all__ = ["CACHE_VERSION", "CallStore", "call_key", "current_draw", "draw", "key_creator"]

CACHE_VERSION = 1
"""Part of every key: raised when what a key means or an entry holds changes."""

_NOT_REQUEST = frozenset(
    {
        "metrics",
        "stream",
        "stream_options",
        "mock_response",
        "timeout",
        "request_timeout",
        "base_url",
        "api_base",
        "api_version",
        "api_key",
        "azure_ad_token_provider",
        "drop_params",
        "max_retries",
        "num_retries",
        "extra_headers",
    }
)
"""Arguments that change how a request travels, not what it asks (left out of the key)."""

_draw: contextvars.ContextVar[tuple[tuple[str, int], ...]] = contextvars.ContextVar(
    "gtog_draw", default=()
)


@contextmanager
def draw(label: str, n: int) -> Iterator[None]:
    """Make the calls inside the block the `n`-th draw of `label` (1-based).

    Asking one request again on purpose (a judge's second trial, a second attempt after an
    unreadable reply) is a new sample, not a replay: draw 2 has a key of its own. Draw 1
    adds nothing, so a run with one trial shares its calls with the first trial of many.
    """
    if n <= 1:
        yield
        return
    token = _draw.set((*_draw.get(), (label, n)))
    try:
        yield
    finally:
        _draw.reset(token)


def current_draw() -> tuple[tuple[str, int], ...]:
    """The draws the calls made now belong to (empty: the first of everything)."""
    return _draw.get()


def _plain(value: Any) -> Any:
    """A JSON-able form of a request value (a pydantic class: its JSON schema)."""
    schema = getattr(value, "model_json_schema", None)
    if isinstance(value, type) and callable(schema):
        return {"schema": value.__name__, "json_schema": schema()}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return _plain(dump(mode="json"))
    return value


def call_key(kind: str, config: ModelConfig, request: dict[str, Any]) -> str:
    """The cache key of one request (`kind`: `chat` or `embedding`) to `config`'s model."""
    asked = {k: v for k, v in request.items() if k not in _NOT_REQUEST and v is not None}
    call_args = {k: v for k, v in (config.call_args or {}).items() if k not in _NOT_REQUEST}
    data: dict[str, Any] = {
        "v": CACHE_VERSION,
        "kind": kind,
        "model": f"{config.model_provider}/{config.model}",
        "deployment": config.azure_deployment_name,
        "call_args": _plain(call_args),
        "request": _plain(asked),
    }
    epoch = current_epoch()
    if epoch > 1:
        data["epoch"] = epoch
    drawn = current_draw()
    if drawn:
        data["draw"] = [list(d) for d in drawn]
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def key_creator(kind: str, config: ModelConfig) -> Callable[[dict[str, Any]], str]:
    """graphrag_llm's `CacheKeyCreator` for one model: `call_key` of each request."""

    def create(input_args: dict[str, Any]) -> str:
        return call_key(kind, config, input_args)

    return create


class CallStore:
    """A folder of cached replies, one JSON file per key (blocking calls: use a thread)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path(self, key: str) -> Path:
        """Where the entry of `key` lives."""
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Any | None:
        """The stored value of `key`; None when there is none or it cannot be read."""
        try:
            with open(self.path(key), encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            return None
        return data.get("result") if isinstance(data, dict) else None

    def put(self, key: str, value: Any, **about: Any) -> None:
        """Store `value` under `key` (readers see the old entry or the whole new one)."""
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(
            {"result": value, "saved": time.time(), **about}, ensure_ascii=False, default=str
        )
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def __contains__(self, key: str) -> bool:
        return self.path(key).is_file()
