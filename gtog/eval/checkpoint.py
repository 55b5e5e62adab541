"""Append-only JSONL checkpoint: a header line, then one line per finished record.

Each record is written and flushed (and fsynced) as soon as it is done, so a killed run
loses at most the record in flight. A torn last line is dropped on resume.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from gtog.errors import InputError
from gtog.eval.records import MethodRecord, RunFingerprint

__all__ = [
    "CHECKPOINT_NAME",
    "Checkpoint",
    "fingerprint_mismatch",
    "read_checkpoint",
    "read_header",
]

CHECKPOINT_NAME = "eval_checkpoint.jsonl"


def read_checkpoint(path: Path) -> tuple[RunFingerprint, list[MethodRecord], int]:
    """Header, records and the byte length of the intact part of a checkpoint."""
    if not path.is_file():
        raise InputError(f"{path}: no checkpoint to resume (run without --resume first)")
    raw = path.read_bytes()
    good = raw.rfind(b"\n") + 1  # bytes after the last newline are a torn write
    lines = raw[:good].decode("utf-8").splitlines()
    if not lines:
        raise InputError(f"{path}: checkpoint is empty")
    try:
        header = json.loads(lines[0])
        fingerprint = RunFingerprint.model_validate(header["fingerprint"])
    except (json.JSONDecodeError, KeyError, TypeError, ValidationError):
        raise InputError(f"{path}: line 1: not a gtog checkpoint header") from None
    records: dict[tuple[str, str], MethodRecord] = {}
    for n, line in enumerate(lines[1:], start=2):
        try:
            record = MethodRecord.model_validate_json(line)
        except ValidationError:
            raise InputError(f"{path}: line {n}: malformed checkpoint record") from None
        records[record.key] = record
    return fingerprint, list(records.values()), good


def read_header(path: Path) -> dict[str, Any]:
    """A checkpoint's header line (fingerprint, and `spec`/`shard` where the run wrote them)."""
    if not path.is_file():
        raise InputError(f"{path}: no checkpoint (not a gtog eval output folder?)")
    with path.open("rb") as f:
        first = f.readline()
    try:
        header = json.loads(first)
        RunFingerprint.model_validate(header["fingerprint"])
    except (json.JSONDecodeError, KeyError, TypeError, ValidationError):
        raise InputError(f"{path}: line 1: not a gtog checkpoint header") from None
    return header


def fingerprint_mismatch(old: RunFingerprint, new: RunFingerprint) -> str | None:
    """What differs between two runs' fingerprints (None when they match)."""
    if old.dataset != new.dataset:
        return "the dataset changed"
    if old.prompts != new.prompts:
        return "the judge prompts changed"
    for key, model in new.judge_models.items():
        if key in old.judge_models and old.judge_models[key] != model:
            return f"the judge model for {key!r} changed ({old.judge_models[key]} -> {model})"
    return None


class Checkpoint:
    """Writer for a checkpoint file (thread-safe appends)."""

    def __init__(self, path: Path, handle: IO[str]) -> None:
        self.path = path
        self._handle = handle
        self._lock = threading.Lock()

    @classmethod
    def create(
        cls, path: Path, fingerprint: RunFingerprint, extra: dict[str, Any] | None = None
    ) -> Checkpoint:
        """Start a new checkpoint with its header (`extra`: more header fields)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = path.open("w", encoding="utf-8")
        cp = cls(path, handle)
        cp._write(_header(fingerprint, extra))
        return cp

    @classmethod
    def reopen(
        cls,
        path: Path,
        intact_bytes: int,
        fingerprint: RunFingerprint,
        extra: dict[str, Any] | None = None,
    ) -> Checkpoint:
        """Continue a checkpoint after dropping a torn last line; the header is refreshed."""
        with path.open("r+b") as f:
            f.truncate(intact_bytes)
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        lines[0] = _header(fingerprint, extra) + "\n"
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text("".join(lines), encoding="utf-8")
        os.replace(tmp, path)
        return cls(path, path.open("a", encoding="utf-8"))

    def append(self, record: MethodRecord) -> None:
        """Write one finished record to disk."""
        self._write(record.model_dump_json())

    def _write(self, line: str) -> None:
        with self._lock:
            self._handle.write(line + "\n")
            self._handle.flush()
            os.fsync(self._handle.fileno())

    def close(self) -> None:
        """Close the file."""
        self._handle.close()


def _header(fingerprint: RunFingerprint, extra: dict[str, Any] | None) -> str:
    return json.dumps({"type": "header", "fingerprint": fingerprint.model_dump(), **(extra or {})})
