"""The typed, versioned eval log: what a run was (its spec), its records and its results.

Every file a run writes is a view of one `EvalLog`: the checkpoint holds the spec and the
records as they finish, the detailed results hold the spec (in `metadata.spec`) and the
records, the summary holds the spec and the results. `read_log()` reads any of them, or an
output folder, back into an `EvalLog`, which is what resume, rescoring, the report and
merging read.

The checkpoint is JSONL: a header line (the spec), then one line per record. Lines are
split on newline bytes only: JSON escapes every newline inside a string, while text may
hold U+2028, U+2029 or U+0085, which `str.splitlines()` would wrongly treat as line ends.
A torn last line is dropped; a later line for the same (question, method) — and epoch, for
a run with repeats — replaces an earlier one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from gtog._errors import InputError
from gtog.eval.results._records import AnswerKey, Efficiency, MethodRecord, PairRecord
from gtog.eval.results._spec import (
    CHECKPOINT_NAME,
    DETAILED_NAME,
    LOG_VERSION,
    SUMMARY_NAME,
    EvalSpec,
)
from gtog.eval.scoring._base import Judgement

__all__ = [
    "CheckpointContents",
    "EvalLog",
    "checkpoint_header",
    "read_checkpoint",
    "read_checkpoint_contents",
    "read_log",
]


def checkpoint_header(spec: EvalSpec) -> str:
    return json.dumps({"type": "header", "spec": spec.model_dump()}, ensure_ascii=False)


@dataclass
class CheckpointContents:
    """What a checkpoint holds: the spec, the answers' records, the comparisons' records,
    and the byte length of its intact part."""

    spec: EvalSpec
    records: list[MethodRecord]
    pairs: list[PairRecord]
    intact: int


_PAIR_LINE = b'{"type":"pair"'


def read_checkpoint(path: Path) -> tuple[EvalSpec, list[MethodRecord], int]:
    """Spec, records and the byte length of the intact part of a checkpoint."""
    contents = read_checkpoint_contents(path)
    return contents.spec, contents.records, contents.intact


def read_checkpoint_contents(path: Path) -> CheckpointContents:
    """Everything a checkpoint holds (see `CheckpointContents`)."""
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
    records: dict[AnswerKey, MethodRecord] = {}
    pairs: dict[tuple[str, str, str, str], PairRecord] = {}
    for n, line in enumerate(lines[1:], start=2):
        try:
            if line.startswith(_PAIR_LINE):
                pair = PairRecord.model_validate_json(line)
                pairs[pair.key] = pair
                continue
            record = MethodRecord.model_validate_json(line)
        except ValidationError:
            raise InputError(f"{path}: line {n}: malformed checkpoint record") from None
        if record.searched_with is None:  # written before records carried it: the header's
            record.searched_with = spec.search_digest(record.method, record.index_key)
        records[record.key] = record
    return CheckpointContents(spec, list(records.values()), list(pairs.values()), good)


class EvalLog(BaseModel):
    """A run: its spec, its records, and (once written) its summary results."""

    version: int = LOG_VERSION
    spec: EvalSpec
    records: list[MethodRecord] = Field(default_factory=list)
    pairs: list[PairRecord] = Field(default_factory=list)
    """Head-to-head comparisons (runs with pairwise judging)."""
    results: dict[str, Any] | None = None
    location: str | None = None
    """The file this log was read from."""


# -- reading any output back -----------------------------------------------------------


def _pairs_from_detailed(results: list[dict[str, Any]]) -> list[PairRecord]:
    pairs = []
    for q in results:
        for entry in q.get("pairwise") or []:
            fields = {k: v for k, v in entry.items() if k != "stale"}
            pairs.append(
                PairRecord.model_validate(
                    {
                        **fields,
                        "qid": q["question_id"],
                        "index_key": q.get("index_key", ""),
                        "groups": q.get("groups") or {},
                    }
                )
            )
    return pairs


def _record_from_entry(
    q: dict[str, Any], method: str, entry: dict[str, Any], epoch: int
) -> MethodRecord:
    """One answer's record from its entry in the detailed results."""
    judgements: dict[str, Judgement] = {}
    usage = entry.get("judge_usage") or {}
    errors = entry.get("judge_errors") or {}
    panels = entry.get("panel") or {}
    parts = entry.get("assertions") or {}
    flagged = entry.get("flagged") or {}
    scales = entry.get("scales") or {}
    for metric in {*(entry.get("scores") or {}), *errors}:
        panel = panels.get(metric)
        judgements[metric] = Judgement(
            score=(entry.get("scores") or {}).get(metric),
            reason=(entry.get("reasons") or {}).get(metric),
            error=errors.get(metric),
            assertions=parts.get(metric),
            flagged=flagged.get(metric),
            scale=scales.get(metric),
            panel={n: Judgement.model_validate(v) for n, v in panel.items()} if panel else None,
            **(usage.get(metric) or {}),
        )
    eff = entry.get("efficiency")
    return MethodRecord(
        qid=q["question_id"],
        index_key=q.get("index_key", q.get("imdb_key", "")),
        question=q["question"],
        reference=q.get("ground_truth", ""),
        method=method,
        evidence=q.get("evidence"),
        response=entry.get("response"),
        error=entry.get("error"),
        error_kind=entry.get("error_kind"),
        finish_reason=entry.get("finish_reason"),
        route=entry.get("route"),
        linked_entities=entry.get("linked_entities"),
        context_text=entry.get("context_text"),
        sources=entry.get("sources"),
        judgements=judgements,
        judged_with=entry.get("judged_with"),
        searched_with=entry.get("searched_with"),
        groups=q.get("groups") or {},
        efficiency=Efficiency.model_validate(eff) if eff else None,
        exploration=entry.get("exploration"),
        paths=entry.get("paths"),
        epoch=epoch,
    )


def _records_from_detailed(results: list[dict[str, Any]]) -> list[MethodRecord]:
    records = []
    for q in results:
        for method, entry in (q.get("methods") or {}).items():
            records.append(_record_from_entry(q, method, entry, 1))
        for epoch, methods in (q.get("repeats") or {}).items():
            for method, entry in methods.items():
                records.append(_record_from_entry(q, method, entry, int(epoch)))
    return records


def _read_json_log(path: Path) -> EvalLog:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not readable as JSON ({exc})") from None
    spec = (data.get("metadata") or {}).get("spec") if isinstance(data, dict) else None
    if spec is None:
        raise InputError(f"{path}: metadata.spec: missing (not written by this gtog version)")
    try:
        parsed = EvalSpec.model_validate(spec)
    except ValidationError as exc:
        raise InputError(f"{path}: metadata.spec: {exc.errors()[0]['msg']}") from None
    if "results" in data and isinstance(data["results"], list):
        return EvalLog(
            spec=parsed,
            records=_records_from_detailed(data["results"]),
            pairs=_pairs_from_detailed(data["results"]),
            location=str(path),
        )
    results = {k: v for k, v in data.items() if k != "metadata"}
    return EvalLog(spec=parsed, results=results, location=str(path))


def read_log(path: Path) -> EvalLog:
    """The `EvalLog` of a checkpoint, detailed or summary JSON, or an output folder.

    A folder is read from its checkpoint (the most complete view), else its detailed
    results; its summary, when present, fills `results`.
    """
    path = Path(path)
    if path.is_dir():
        checkpoint, detailed = path / CHECKPOINT_NAME, path / DETAILED_NAME
        if checkpoint.is_file():
            c = read_checkpoint_contents(checkpoint)
            log = EvalLog(spec=c.spec, records=c.records, pairs=c.pairs, location=str(checkpoint))
        elif detailed.is_file():
            log = _read_json_log(detailed)
        else:
            raise InputError(f"{path}: no {CHECKPOINT_NAME} or {DETAILED_NAME} here")
        summary = path / SUMMARY_NAME
        if summary.is_file():
            log.results = _read_json_log(summary).results
        return log
    if path.suffix == ".jsonl":
        c = read_checkpoint_contents(path)
        return EvalLog(spec=c.spec, records=c.records, pairs=c.pairs, location=str(path))
    if not path.is_file():
        raise InputError(f"{path}: no such eval log")
    return _read_json_log(path)
