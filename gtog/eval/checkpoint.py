"""Append-only JSONL checkpoint: a header line (the run's spec), then one line per record.

Each record is written, flushed and fsynced as soon as it is done, so a killed run loses
at most the records in flight. Lines are split on newline bytes only: JSON escapes every
newline inside a string, while text may hold U+2028, U+2029 or U+0085, which
`str.splitlines()` would wrongly treat as line ends. A torn last line is dropped on
resume; a later line for the same (question, method) replaces an earlier one.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import IO

from pydantic import ValidationError

from gtog.errors import InputError
from gtog.eval.log import CHECKPOINT_NAME, EvalSpec
from gtog.eval.records import MethodRecord
from gtog.files import write_atomic

__all__ = ["CHECKPOINT_NAME", "Checkpoint", "read_checkpoint"]


def _header(spec: EvalSpec) -> str:
    return json.dumps({"type": "header", "spec": spec.model_dump()}, ensure_ascii=False)


def read_checkpoint(path: Path) -> tuple[EvalSpec, list[MethodRecord], int]:
    """Spec, records and the byte length of the intact part of a checkpoint."""
    if not path.is_file():
        raise InputError(f"{path}: no checkpoint to resume (run without --resume first)")
    raw = path.read_bytes()
    good = raw.rfind(b"\n") + 1  # bytes after the last newline are a torn write
    lines = [line for line in raw[:good].split(b"\n") if line.strip()]
    if not lines:
        raise InputError(f"{path}: checkpoint is empty")
    try:
        header = json.loads(lines[0])
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise InputError(f"{path}: line 1: not a gtog checkpoint header") from None
    if not isinstance(header, dict) or header.get("type") != "header":
        raise InputError(f"{path}: line 1: not a gtog checkpoint header")
    if "spec" not in header:
        raise InputError(
            f"{path}: line 1: a checkpoint of an older gtog (no spec); start a new --output "
            "or use --force to start over"
        )
    try:
        spec = EvalSpec.model_validate(header["spec"])
    except ValidationError as exc:
        raise InputError(f"{path}: line 1: spec: {exc.errors()[0]['msg']}") from None
    records: dict[tuple[str, str], MethodRecord] = {}
    for n, line in enumerate(lines[1:], start=2):
        try:
            record = MethodRecord.model_validate_json(line)
        except ValidationError:
            raise InputError(f"{path}: line {n}: malformed checkpoint record") from None
        records[record.key] = record
    return spec, list(records.values()), good


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
        cp._write(_header(spec))
        return cp

    @classmethod
    def reopen(cls, path: Path, intact_bytes: int, spec: EvalSpec) -> Checkpoint:
        """Continue a checkpoint after dropping a torn last line; the header is refreshed."""
        raw = path.read_bytes()[:intact_bytes]
        rest = raw.split(b"\n", 1)[1] if b"\n" in raw else b""
        write_atomic(path, (_header(spec) + "\n").encode("utf-8") + rest)
        return cls(path, path.open("ab"))

    def append(self, record: MethodRecord) -> None:
        """Write one finished record to disk."""
        self._write(record.model_dump_json())

    def _write(self, line: str) -> None:
        with self._lock:
            self._handle.write(line.encode("utf-8") + b"\n")
            self._handle.flush()
            os.fsync(self._handle.fileno())

    def close(self) -> None:
        """Close the file."""
        self._handle.close()
