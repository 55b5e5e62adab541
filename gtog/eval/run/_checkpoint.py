"""The checkpoint writer: a header line (the run's spec), then one line per record.

Each record is written, flushed and fsynced as soon as it is done (those done together in
one write, `append_many`), so a killed run loses at most the records in flight. The
format and its reader are `gtog.eval.results._log`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from gtog._files import write_atomic
from gtog.eval.results._log import checkpoint_header
from gtog.eval.results._records import MethodRecord, PairRecord
from gtog.eval.results._spec import EvalSpec

__all__ = ["Checkpoint"]


def _append(handle: IO[bytes], lines: str) -> None:
    handle.write(lines.encode("utf-8") + b"\n")
    handle.flush()
    os.fsync(handle.fileno())


class Checkpoint:
    """Writer for a checkpoint file (thread-safe appends)."""

    def __init__(self, path: Path, handle: IO[bytes]) -> None:
        self.path = path
        self._handle = handle
        self._lock = threading.Lock()

    @classmethod
    def create(cls, path: Path, spec: EvalSpec) -> Checkpoint:
        """Start a new checkpoint with its header."""
        path.parent.mkdir(parents=True, exist_ok=True)
        cp = cls(path, path.open("wb"))
        cp._write(checkpoint_header(spec))
        return cp

    @classmethod
    def reopen(cls, path: Path, intact_bytes: int, spec: EvalSpec) -> Checkpoint:
        """Continue a checkpoint after dropping a torn last line; the header is refreshed."""
        raw = path.read_bytes()[:intact_bytes]
        rest = raw.split(b"\n", 1)[1] if b"\n" in raw else b""
        write_atomic(path, (checkpoint_header(spec) + "\n").encode("utf-8") + rest)
        return cls(path, path.open("ab"))

    def append(self, record: MethodRecord | PairRecord) -> None:
        """Write one finished record (an answer's or a comparison's) to disk."""
        self._write(record.model_dump_json())

    def append_many(self, records: Sequence[MethodRecord | PairRecord]) -> None:
        """Write finished records to disk with one write and one fsync."""
        if records:
            self._write("\n".join(r.model_dump_json() for r in records))

    def _write(self, line: str) -> None:
        with self._lock:
            if self._handle.closed:  # a record finishing in a worker thread after close()
                with self.path.open("ab") as late:
                    _append(late, line)
                return
            _append(self._handle, line)

    def close(self) -> None:
        """Close the file (after a write in progress in another thread has finished)."""
        with self._lock:
            self._handle.close()
