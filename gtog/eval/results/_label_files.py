"""Labels made elsewhere: `gtog eval label OUTPUT --import FILE` and `--export FILE`.

`export_sample` writes the label sample (gtog.eval.results._labels.label_sample) as a CSV a
spreadsheet opens: one row per answer and metric, with the question, reference, answer (and
the context, for metrics judged against it) and an empty `label` column to fill.
`import_labels` reads such a CSV back, or any CSV or JSONL with the columns `question_id,
method, metric, label` (optional `epoch`, `labeller`, `answer_hash`; other columns are
ignored): every row is checked before any is kept, and a file with a bad row imports
nothing and names each bad row (its line, the field, why).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gtog.eval.results._labels import (
    Label,
    answer_hash,
    label_sample,
    labellable_metrics,
    now,
)
from gtog.eval.results._records import MethodRecord

__all__ = [
    "CONTEXT_METRICS",
    "EXPORT_COLUMNS",
    "LabelFileError",
    "export_sample",
    "import_labels",
]

EXPORT_COLUMNS = (
    "question_id",
    "method",
    "epoch",
    "metric",
    "question",
    "reference",
    "answer",
    "context",
    "answer_hash",
    "label",
    "labeller",
)
_RIGHT = {"right", "1", "yes", "true", "correct", "y"}
_WRONG = {"wrong", "0", "no", "false", "incorrect", "n"}
CONTEXT_METRICS = frozenset({"faithfulness", "faithfulness_claims", "citation_support"})
"""Metrics judged against the answer's context: the labeller needs to see it too."""


class LabelFileError(Exception):
    """A label file that cannot be imported; `lines` names each bad row."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


@dataclass(frozen=True)
class _Row:
    line: int
    fields: dict[str, Any]


def export_sample(
    records: list[MethodRecord], metrics: list[str], per_method: int, seed: int
) -> str:
    """The sample to label, as CSV text."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=EXPORT_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for metric in metrics:
        for r in label_sample(records, metric, per_method, seed):
            writer.writerow(
                {
                    "question_id": r.qid,
                    "method": r.method,
                    "epoch": r.epoch,
                    "metric": metric,
                    "question": r.question,
                    "reference": r.reference,
                    "answer": r.response or "",
                    "context": (r.context_text or "") if metric in CONTEXT_METRICS else "",
                    "answer_hash": answer_hash(r.response),
                    "label": "",
                    "labeller": "",
                }
            )
    return out.getvalue()


def _rows(path: Path, text: str) -> list[_Row]:
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        rows = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except ValueError as exc:
                raise LabelFileError([f"{path}: line {n}: not JSON ({exc})"]) from None
            if not isinstance(value, dict):
                raise LabelFileError([f"{path}: line {n}: expected a JSON object"])
            rows.append(_Row(n, value))
        return rows
    reader = csv.DictReader(io.StringIO(text))
    missing = [
        c
        for c in ("question_id", "method", "metric", "label")
        if c not in (reader.fieldnames or [])
    ]
    if missing:
        raise LabelFileError(
            [
                f"{path}: line 1: no column {', '.join(missing)} (needed: question_id, method, "
                "metric, label; optional: epoch, labeller, answer_hash)"
            ]
        )
    return [_Row(reader.line_num, dict(row)) for row in reader]


def _value(raw: Any) -> int | str | None:
    """1, 0, None (left empty) or the text that is neither."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    if isinstance(raw, bool):
        return int(raw)
    text = str(raw).strip().lower()
    if text in _RIGHT:
        return 1
    if text in _WRONG:
        return 0
    return str(raw)


def import_labels(
    path: Path, records: list[MethodRecord], metrics: list[str], labeller: str | None = None
) -> tuple[list[Label], int]:
    """The labels of `path` (CSV or JSONL) and how many rows were left empty; raises
    LabelFileError naming every bad row (nothing is imported then)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise LabelFileError([f"{path}: cannot read ({exc})"]) from None
    answers = {(r.qid, r.method, r.epoch): r for r in records}
    allowed = labellable_metrics(metrics)
    labels, errors, empty = [], [], 0
    for row in _rows(path, text):
        f = row.fields
        qid, method = str(f.get("question_id") or "").strip(), str(f.get("method") or "").strip()
        metric = str(f.get("metric") or "").strip()
        where = f"{path}: line {row.line} (question_id {qid or '?'}, method {method or '?'})"
        try:
            epoch = int(f.get("epoch") or 1)
        except ValueError:
            errors.append(f"{where}: epoch {f.get('epoch')!r} is not a whole number")
            continue
        value = _value(f.get("label"))
        if value is None:
            empty += 1
            continue
        if isinstance(value, str):
            errors.append(
                f"{where}: label {value!r} is not right or wrong (right/wrong, 1/0, yes/no)"
            )
            continue
        record = answers.get((qid, method, epoch))
        if record is None:
            errors.append(f"{where}: no such answer in this run")
            continue
        if metric not in allowed:
            errors.append(
                f"{where}: metric {metric!r} is not one of the run's judge metrics a person "
                f"can label ({', '.join(allowed) or 'none'})"
            )
            continue
        labels.append(
            Label(
                question_id=qid,
                method=method,
                epoch=epoch,
                metric=metric,
                label=value,
                labeller=str(f.get("labeller") or "").strip() or labeller or f"import:{path.name}",
                at=str(f.get("at") or "") or now(),
                answer_hash=str(f.get("answer_hash") or "").strip() or answer_hash(record.response),
            )
        )
    if errors:
        raise LabelFileError(errors)
    return labels, empty
