"""The model-call cache's store and keys: one JSON file per request, written atomically.

A key is the hash of what reaches the provider and where: provider and model, the model
entry's endpoint (`api_base`, `api_version`, Azure deployment), the model's call
arguments, the request (messages or input, sampling settings, response format, extra
body), the answer's repeat number when it is above 1 (`gtog.llm._repeat`) and the draw
(`draw()`: a judge's trial, a structured reply's second attempt) when above 1. The key,
timeouts and retries are not in it: two entries naming one model at one endpoint with the
same arguments are one model and share the cache; the same model name at another server
is another model (two judges of a panel).

A reply gtog rejects is never kept nor replayed (`rejection`): one cut short
(`finish_reason` `length`, `content_filter`), an empty one, or one the caller's check
refuses (`reading(check)`: `ask_json`'s schema, so an unreadable verdict is asked again
by `--retry-errors` rather than replayed).

The store is a folder of `<k[:2]>/<k>.json` files, each written to a temporary file beside
it and renamed into place, so any number of processes (shards on a shared file system
included) read and write one cache: a reader sees no entry or a whole one, and two writers
of one key write the same reply. Nothing is ever locked. An unreadable entry is a miss
(written again by the next reply); clearing the cache is deleting the folder.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import itertools
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from gtog.llm._repeat import current_epoch
from gtog.llm._usage import CUT_REASONS

if TYPE_CHECKING:
    from graphrag_llm.config import ModelConfig

__all__ = [
    "CACHE_VERSION",
    "CallStore",
    "call_key",
    "current_draw",
    "draw",
    "key_creator",
    "model_identity",
    "reading",
    "rejection",
]

CACHE_VERSION = 2
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


Check = Callable[[str], "str | None"]
"""A caller's reading of a reply's text: why it is refused, or None when it is used."""

_check: contextvars.ContextVar[Check | None] = contextvars.ContextVar("gtog_check", default=None)


@contextmanager
def reading(check: Check) -> Iterator[None]:
    """The replies of the calls inside the block are used only when `check(text)` is None:
    one it refuses is neither stored in the cache nor replayed from it (nor shared with an
    identical request in flight)."""
    token = _check.set(check)
    try:
        yield
    finally:
        _check.reset(token)


def rejection(response: Any) -> str | None:
    """Why gtog rejects a chat reply (a response's `model_dump`): cut short, empty, or
    refused by the current `reading` check; None when it is kept (and for embeddings)."""
    if not isinstance(response, dict) or "choices" not in response:
        return None
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return "a reply without choices"
    finish = choices[0].get("finish_reason")
    if finish in CUT_REASONS:
        return f"reply {CUT_REASONS[finish]} (finish_reason: {finish})"
    message = choices[0].get("message") or {}
    text = message.get("content") if isinstance(message, dict) else None
    if not str(text or "").strip():
        return None if isinstance(message, dict) and message.get("tool_calls") else "empty reply"
    check = _check.get()
    return check(str(text)) if check is not None else None


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


def _endpoint(value: Any) -> str | None:
    """An address as a key part: spaces and trailing slashes aside."""
    return str(value).strip().rstrip("/") or None if value else None


def model_identity(config: ModelConfig) -> dict[str, Any]:
    """What makes a model entry the model it is: provider and model, where it is served
    (`api_base`, `api_version`: the call arguments' where given, as graphrag_llm sends
    them; the Azure deployment) and its call arguments. Two entries alike here are one
    model (its key and secrets aside)."""
    args = dict(config.call_args or {})
    return {
        "model": f"{config.model_provider}/{config.model}",
        "api_base": _endpoint(args.get("api_base") or args.get("base_url") or config.api_base),
        "api_version": args.get("api_version") or config.api_version,
        "deployment": config.azure_deployment_name,
        "call_args": _plain({k: v for k, v in args.items() if k not in _NOT_REQUEST}),
    }


def call_key(kind: str, config: ModelConfig, request: dict[str, Any]) -> str:
    """The cache key of one request (`kind`: `chat` or `embedding`) to `config`'s model."""
    asked = {k: v for k, v in request.items() if k not in _NOT_REQUEST and v is not None}
    data: dict[str, Any] = {
        "v": CACHE_VERSION,
        "kind": kind,
        **model_identity(config),
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


def _dumps(entry: dict[str, Any]) -> bytes:
    """An entry as UTF-8 JSON: orjson's (numbers as `json` writes them, shortest round-trip;
    a NaN, which no reply carries, as null), or `json`'s where orjson refuses a value (an
    integer beyond 64 bits)."""
    try:
        return orjson.dumps(entry, default=str, option=orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError:
        return json.dumps(entry, ensure_ascii=False, default=str).encode("utf-8")


def _loads(data: bytes) -> Any:
    """An entry read back: orjson's reading, or `json`'s for what only it reads (`NaN`)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)


_TEMPS = itertools.count()
"""Numbers the temporary files of the process's writes (`next` is atomic: any thread)."""


class CallStore:
    """A folder of cached replies, one JSON file per key (blocking calls: use a thread).

    Its first lookup lists the folder's keys; from then on a key neither listed nor
    written since by this store is known absent without touching the disk (`absent`), so
    a miss needs no worker thread. (An entry another process writes after that listing is
    not seen by this one: shards search different questions, so their requests differ.)
    `put_later` writes in the store's own writer thread, in order; `flush` waits for the
    writes (the process's exit does too).
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._known: set[str] | None = None
        self._listing = threading.Lock()
        self._writer: ThreadPoolExecutor | None = None
        self._writer_lock = threading.Lock()  # (made and stopped under it)
        self._pending: set[Future[None]] = set()
        self._writing: dict[str, Any] = {}  # key -> value, from `put_later` until written

    def absent(self, key: str) -> bool:
        """True when `key` is surely not stored (memory only: after the first lookup)."""
        known = self._known
        return known is not None and key not in known and key not in self._writing

    def _list(self) -> None:
        with self._listing:
            if self._known is not None:
                return
            known: set[str] = set()
            if self.root.is_dir():
                for sub in os.scandir(self.root):
                    if len(sub.name) == 2 and sub.is_dir():
                        names = (e.name for e in os.scandir(sub.path))
                        known.update(n[:-5] for n in names if n.endswith(".json"))
            self._known = known

    def _place(self, key: str) -> tuple[str, str]:
        """(folder, file) of the entry of `key`, as strings (a write's path: no `Path`)."""
        folder = os.path.join(self.root, key[:2])
        return folder, os.path.join(folder, f"{key}.json")

    def path(self, key: str) -> Path:
        """Where the entry of `key` lives."""
        return Path(self._place(key)[1])

    def get(self, key: str) -> Any | None:
        """The stored value of `key`; None when there is none or it cannot be read."""
        if key in self._writing:
            return self._writing[key]
        if self._known is None:
            self._list()
        try:
            with open(self.path(key), "rb") as f:
                data = _loads(f.read())
        except (OSError, ValueError):
            return None
        return data.get("result") if isinstance(data, dict) else None

    def put(self, key: str, value: Any, **about: Any) -> None:
        """Store `value` under `key` (readers see the old entry or the whole new one).

        The temporary file is named by this process and a counter (not `mkstemp`'s random
        name; readable by its owner only, as `mkstemp` made it), and the folder is made only
        when the write finds it missing: half the CPU of a write (48-69 against 112-128 us
        on this machine), done once per call of a run. The entry is made by orjson (10 against
        120 us for an embedding's reply of 384 numbers).
        """
        folder, entry = self._place(key)
        data = _dumps({"result": value, "saved": time.time(), **about})
        tmp = os.path.join(folder, f".{key[:16]}.{os.getpid()}.{next(_TEMPS)}.tmp")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
        try:
            fd = os.open(tmp, flags, 0o600)
        except FileNotFoundError:  # (no folder yet, or it was removed meanwhile)
            os.makedirs(folder, exist_ok=True)
            fd = os.open(tmp, flags, 0o600)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.replace(tmp, entry)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        if self._known is not None:
            self._known.add(key)

    def put_later(
        self, key: str, value: Any, failed: Callable[[BaseException], None] | None = None
    ) -> Future[None]:
        """`put` in the store's writer thread (returns at once: the write's future);
        `failed(error)` there if the write fails."""
        self._writing[key] = value  # (read back from memory until it is on disk)
        with self._writer_lock:
            if self._writer is None:
                self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gtog-cache")
            done = self._writer.submit(self.put, key, value)
            self._pending.add(done)

        def settled(future: Future[None]) -> None:
            if self._writing.get(key) is value:
                del self._writing[key]
            self._pending.discard(future)
            error = future.exception()
            if error is not None and failed is not None:
                failed(error)

        done.add_done_callback(settled)
        return done

    def wait_written(self) -> None:
        """Wait until every `put_later` so far is written (blocking; the writer goes on)."""
        wait(list(self._pending))

    def flush(self) -> None:
        """Wait until every `put_later` so far is written, and stop the writer thread (a
        later `put_later` starts another). Blocking."""
        with self._writer_lock:
            writer, self._writer = self._writer, None
        if writer is not None:
            writer.shutdown(wait=True)
        wait(list(self._pending))

    def __contains__(self, key: str) -> bool:
        return self.path(key).is_file()
