"""People's verdicts on a run's answers: `OUTPUT/labels.jsonl`, the sample to label, staleness.

A label is one person's verdict (right 1, wrong 0) on one answer for one judge metric:
`{question_id, method, epoch, metric, label, labeller, at, answer_hash}`. The file only ever
grows (appended by `gtog eval view`'s label mode and by `gtog eval label --import`); a later
line of the same labeller for the same answer and metric replaces an earlier one, a line with
`label: null` takes it back (undo), `label: "skip"` passes it over. A label made on an answer
that has since changed (its `answer_hash` is not the answer's now) is stale: left out.

The sample to label is seeded and stratified by method: `per_method` answers of each method
drawn at random among those the judge scored on the metric, so every method gets the same
number of labels whatever its share of the run.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import random
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gtog.eval.results._records import MethodRecord
from gtog.eval.scoring._base import is_binary_metric, uses_llm

__all__ = [
    "LABELS_NAME",
    "SKIP",
    "Label",
    "LabelKey",
    "answer_hash",
    "append_labels",
    "current_labels",
    "label_sample",
    "labellable_metrics",
    "read_labels",
]

LABELS_NAME = "labels.jsonl"
SKIP = "skip"
LabelKey = tuple[str, str, int, str]
"""(question id, method, epoch, metric): the answer and metric a label is about."""

_WRITE = threading.Lock()


@dataclass(frozen=True)
class Label:
    """One line of labels.jsonl."""

    question_id: str
    method: str
    epoch: int
    metric: str
    label: int | str | None
    """1 right, 0 wrong, `skip`, or None (the labeller's earlier label taken back)."""
    labeller: str
    at: str
    answer_hash: str

    @property
    def key(self) -> LabelKey:
        return (self.question_id, self.method, self.epoch, self.metric)

    def as_json(self) -> dict[str, Any]:
        return {
            "question_id": self.question_id,
            "method": self.method,
            "epoch": self.epoch,
            "metric": self.metric,
            "label": self.label,
            "labeller": self.labeller,
            "at": self.at,
            "answer_hash": self.answer_hash,
        }


def answer_hash(response: str | None) -> str:
    """What a label remembers of the answer it was made on (16 hex digits of its sha256)."""
    return hashlib.sha256((response or "").encode("utf-8")).hexdigest()[:16]


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _label(raw: Any) -> Label | None:
    if not isinstance(raw, dict):
        return None
    value = raw.get("label")
    if value not in (0, 1, None, SKIP) or isinstance(value, bool):
        return None
    try:
        return Label(
            question_id=str(raw["question_id"]),
            method=str(raw["method"]),
            epoch=int(raw.get("epoch") or 1),
            metric=str(raw["metric"]),
            label=value,
            labeller=str(raw.get("labeller") or "anonymous"),
            at=str(raw.get("at") or ""),
            answer_hash=str(raw.get("answer_hash") or ""),
        )
    except (KeyError, TypeError, ValueError):
        return None


def read_labels(output_dir: Path) -> list[Label]:
    """Every line of the folder's labels.jsonl, in order ([] without one); a torn or
    unreadable line is left out."""
    try:
        data = (output_dir / LABELS_NAME).read_bytes()
    except OSError:
        return []
    out = []
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            label = _label(json.loads(line))
        except ValueError:
            continue
        if label is not None:
            out.append(label)
    return out


def append_labels(output_dir: Path, labels: Iterable[Label]) -> None:
    """Append `labels` to the folder's labels.jsonl, each line whole (blocking: call it off
    the event loop)."""
    text = "".join(json.dumps(x.as_json(), ensure_ascii=False) + "\n" for x in labels)
    if not text:
        return
    with _WRITE, (output_dir / LABELS_NAME).open("a", encoding="utf-8") as f:
        f.write(text)
        f.flush()


def current_labels(
    labels: Iterable[Label], records: Iterable[MethodRecord]
) -> tuple[dict[LabelKey, dict[str, int]], int]:
    """key -> labeller -> 0/1 for each answer's live labels, and how many were stale.

    Each labeller's last line per answer and metric counts; a skip or an undo counts as no
    label; a label whose answer changed since (hash), or whose answer is gone, is stale.
    """
    hashes = {(r.qid, r.method, r.epoch): answer_hash(r.response) for r in records}
    last: dict[tuple[LabelKey, str], Label] = {}
    for x in labels:
        last[(x.key, x.labeller)] = x
    out: dict[LabelKey, dict[str, int]] = {}
    stale = 0
    for (key, labeller), x in last.items():
        if x.label not in (0, 1):
            continue
        if hashes.get(key[:3]) != x.answer_hash:
            stale += 1
            continue
        out.setdefault(key, {})[labeller] = int(x.label)  # type: ignore[arg-type]
    return out, stale


def labellable_metrics(metrics: Iterable[str]) -> list[str]:
    """The run's metrics a person can label right or wrong: its 0/1 LLM judges."""
    return [m for m in metrics if uses_llm(m) and is_binary_metric(m)]


def label_sample(
    records: Iterable[MethodRecord], metric: str, per_method: int = 50, seed: int = 0
) -> list[MethodRecord]:
    """The answers to label for `metric`: up to `per_method` of each method's answers the
    judge scored, drawn with `seed`, methods interleaved (a labeller who stops early has
    labelled every method alike)."""
    by_method: dict[str, list[MethodRecord]] = {}
    for r in sorted(records, key=lambda r: (r.method, r.qid, r.epoch)):
        j = r.judgements.get(metric)
        if r.error is None and j is not None and j.score is not None:
            by_method.setdefault(r.method, []).append(r)
    drawn = []
    for method, candidates in sorted(by_method.items()):
        rng = random.Random(f"{seed}:{metric}:{method}")
        drawn.append(rng.sample(candidates, min(per_method, len(candidates))))
    out = []
    for i in range(max((len(d) for d in drawn), default=0)):
        out += [d[i] for d in drawn if i < len(d)]
    return out
