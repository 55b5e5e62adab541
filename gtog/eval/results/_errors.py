"""The one error classifier: a short kind for an error message, and counts per kind."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from gtog.eval.results._records import MethodRecord

__all__ = ["error_kind", "error_kinds"]

_EXC_RE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Timeout|Exit))\b")


def error_kind(message: str, recorded: str | None = None) -> str:
    """A short kind for an error: the kind recorded with it, else from its message.

    From a message: `timeout`, `unparseable reply`, `engine build: <class>`, the exception
    class it starts with, else its first words.
    """
    if recorded:
        return recorded
    if message.startswith("timed out"):
        return "timeout"
    if message.startswith("unparseable"):
        return "unparseable reply"
    if message.startswith("could not build the"):
        m = _EXC_RE.match(message.split(": ", 1)[-1])
        return f"engine build: {m.group(1)}" if m else "engine build"
    m = _EXC_RE.match(message)
    if m:
        return m.group(1).rsplit(".", 1)[-1]
    return message.split(":", 1)[0].strip()[:60] or "error"


def error_kinds(records: Iterable[MethodRecord]) -> list[dict[str, Any]]:
    """One entry per kind of failure: `{kind, count, example}` (most frequent first).

    Kinds are `search: <kind>` for failed searches and `judge <metric>: <kind>` for
    unscored metrics; `example` names one (question, method) and its message.
    """
    kinds: dict[str, dict[str, Any]] = {}

    def add(kind: str, r: MethodRecord, message: str) -> None:
        entry = kinds.setdefault(kind, {"kind": kind, "count": 0, "example": None})
        entry["count"] += 1
        if entry["example"] is None:
            entry["example"] = {"question_id": r.qid, "method": r.method, "message": message}

    for r in records:
        if r.error:
            add(f"search: {error_kind(r.error, r.error_kind)}", r, r.error)
        for metric, j in r.judgements.items():
            if j.error:
                add(f"judge {metric}: {error_kind(j.error)}", r, j.error)
    return sorted(kinds.values(), key=lambda e: (-e["count"], e["kind"]))
