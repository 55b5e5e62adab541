"""The context process: builds search contexts for a parent `gtog eval` (see `_context_process`).

    python -m gtog.search._context_worker

Reads frames (8-byte big-endian length, then a pickle) on stdin and answers on the stdout it
was started with (the library's own prints go to stderr):

- `("load", bid, builder)`: keep a context builder (`portable_builder`'s copy) as `bid`;
  answered `("loaded", bid, None)` or `("loaded", bid, error text)`;
- `("build", rid, bid, query, embedding, params)`: build the context of `query` with the
  query's embedding response given; answered `("built", rid, context, cpu seconds)` (the
  context's tables each pickled on their own: `packed`) or `("failed", rid, error text)`;
- `("drop", bid)`: forget a builder (its index is done).

It says `("ready",)` once its imports are done, and ends at the end of stdin.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import struct
import sys
import time
import traceback
from typing import IO, Any

__all__ = ["HEADER", "LazyTables", "frame", "packed", "read_frame", "unpacked", "write_frame"]

HEADER = struct.Struct(">Q")
"""A frame's header: the length of the pickle that follows."""


def frame(message: Any) -> bytes:
    """`message` as one frame (both ends write them so)."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(data)) + data


def write_frame(out: IO[bytes], message: Any) -> None:
    """Write one message (blocking)."""
    out.write(frame(message))
    out.flush()


def read_frame(source: IO[bytes]) -> Any:
    """The next message, or None at the end of the stream."""
    head = source.read(HEADER.size)
    if len(head) < HEADER.size:
        return None
    (size,) = HEADER.unpack(head)
    data = source.read(size)
    if len(data) < size:
        return None
    return pickle.loads(data)


class _Pickled(bytes):
    """One table, pickled."""


class LazyTables(dict):  # type: ignore[type-arg]
    """A context's `context_records` as the child sent them: each table is unpickled the
    first time it is read (a local context's five small DataFrames take the event loop
    ~1.5 ms to unpickle, and a run reads one of them, the sources).

    Reading goes through `__getitem__` whichever way it is done (`get`, `items`, `values`,
    iteration, `dict(tables)`, pickling); only `dict.__getitem__` and friends would see a
    table still pickled.
    """

    def __getitem__(self, key: Any) -> Any:
        value = dict.__getitem__(self, key)
        if isinstance(value, _Pickled):
            value = pickle.loads(value)
            dict.__setitem__(self, key, value)
        return value

    def __iter__(self) -> Any:  # (not the C fast path: `dict(tables)` reads through here)
        return dict.__iter__(self)

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if key in self else default  # noqa: SIM401 (this is `get`)

    def values(self) -> Any:
        return [self[key] for key in self]

    def items(self) -> Any:
        return [(key, self[key]) for key in self]

    def copy(self) -> dict[Any, Any]:
        return dict(self.items())

    def pop(self, key: Any, *default: Any) -> Any:
        if key in self:
            value = self[key]
            dict.__delitem__(self, key)
            return value
        return dict.pop(self, key, *default)

    def __eq__(self, other: object) -> bool:  # (and so unhashable, as a dict is)
        return dict(self.items()) == other

    def __repr__(self) -> str:
        return repr(dict(self.items()))

    def __reduce__(self) -> Any:
        return (dict, (dict(self.items()),))


def packed(context: Any) -> Any:
    """`context` with its `context_records` tables each pickled (the child's side)."""
    tables = getattr(context, "context_records", None)
    if isinstance(tables, dict):
        context.context_records = {
            key: _Pickled(pickle.dumps(table, protocol=pickle.HIGHEST_PROTOCOL))
            for key, table in tables.items()
        }
    return context


def unpacked(context: Any) -> Any:
    """`packed`'s context as the parent reads it: its tables unpickled when first read."""
    tables = getattr(context, "context_records", None)
    if isinstance(tables, dict):
        context.context_records = LazyTables(tables)
    return context


def _serve(source: IO[bytes], out: IO[bytes]) -> None:
    import contextvars

    # what unpickling a builder needs, imported before saying ready
    import graphrag.query.structured_search.basic_search.basic_context
    import graphrag.query.structured_search.local_search.mixed_context  # noqa: F401
    import graphrag_llm.tokenizer.lite_llm_tokenizer  # noqa: F401  (LiteLLM: seconds)

    from gtog.search import _offloop, _vectors  # noqa: F401

    # (this module runs as __main__: its importable copy's `packed`, whose tables the parent
    # can unpickle)
    from gtog.search._context_worker import packed

    builders: dict[int, Any] = {}
    write_frame(out, ("ready",))
    while (message := read_frame(source)) is not None:
        kind = message[0]
        if kind == "load":
            _, bid, blob = message
            try:
                builders[bid] = pickle.loads(blob)
                write_frame(out, ("loaded", bid, None))
            except Exception:
                write_frame(out, ("loaded", bid, traceback.format_exc()))
        elif kind == "drop":
            builders.pop(message[1], None)
        elif kind == "build":
            _, rid, bid, query, embedding, params = message
            try:
                began = time.process_time()
                question = contextvars.copy_context()
                context = question.run(
                    _offloop.build_prefetched, builders[bid], query, embedding, params
                )
                context = packed(context)
                write_frame(out, ("built", rid, context, time.process_time() - began))
            except Exception:
                write_frame(out, ("failed", rid, traceback.format_exc()))


def main() -> None:
    """Serve the parent on stdin/stdout until stdin ends (or the parent's Ctrl-C)."""
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a library's print is not a frame
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):  # (the parent's Ctrl-C)
        _serve(sys.stdin.buffer, out)


if __name__ == "__main__":
    main()
