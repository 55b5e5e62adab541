"""The typed, versioned eval log: what a run was (its spec), its records and its results.

Every file a run writes is a view of one `EvalLog`: the checkpoint holds the spec and the
records as they finish, the detailed results hold the spec (in `metadata.spec`) and the
records, the summary holds the spec and the results. `read_log()` reads any of them, or an
output folder, back into an `EvalLog`, which is what resume, rescoring, the report and
merging read.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from gtog.errors import InputError
from gtog.eval.judges import Judgement
from gtog.eval.records import Efficiency, MethodRecord

__all__ = [
    "CHECKPOINT_NAME",
    "DETAILED_NAME",
    "LOG_VERSION",
    "SUMMARY_NAME",
    "DatasetSpec",
    "EvalLog",
    "EvalSpec",
    "JudgeSpec",
    "ShardSpec",
    "read_log",
    "spec_changes",
    "stable_hash",
    "what_differs",
]

LOG_VERSION = 2
CHECKPOINT_NAME = "eval_checkpoint.jsonl"
DETAILED_NAME = "eval_results_detailed.json"
SUMMARY_NAME = "eval_results_summary.json"


def stable_hash(value: Any, length: int = 16) -> str:
    """A short sha256 of a JSON-able value (key order does not matter)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:length]


class DatasetSpec(BaseModel):
    """The dataset a run asked its questions from."""

    path: str
    hash: str
    questions: int
    repeats: int = 0
    """Questions that occur more than once in the dataset (each is kept with its own id)."""


class JudgeSpec(BaseModel):
    """Everything that changes a score: judge models, sampling, prompts, metrics."""

    models: dict[str, str] = Field(default_factory=dict)
    """index key -> `provider/model` of the judge."""
    temperature: float = 0.0
    max_tokens: int = 300
    structured_output: bool = True
    trials: int = 1
    prompts: str = ""
    """Hash of the judge prompt templates."""
    metrics: list[str] = Field(default_factory=list)
    skipped: bool = False
    """True for a `--skip-judges` run (answers only, judged later with `--rescore`)."""

    def digest(self, index_key: str) -> str:
        """The hash a record judged under this spec carries (`MethodRecord.judged_with`)."""
        if self.skipped:
            return "skipped"
        data = self.model_dump(exclude={"models", "skipped"})
        return stable_hash({**data, "model": self.models.get(index_key)})


class ShardSpec(BaseModel):
    """One shard of a sharded run: `index` of `count`, holding `pairs` (question, method)."""

    index: int
    count: int
    pairs: int = 0

    @property
    def label(self) -> str:
        """`i/n`, as given on the command line."""
        return f"{self.index}/{self.count}"


class EvalSpec(BaseModel):
    """What a run is: the same spec gives the same answers and the same scores."""

    version: int = LOG_VERSION
    gtog_version: str = ""
    graphrag_version: str = ""
    config_path: str = ""
    dataset: DatasetSpec
    methods: list[str]
    method_settings: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """method -> index key -> effective settings (models, call args, prompts' hashes, ...)."""
    indexes: dict[str, str] = Field(default_factory=dict)
    """index key -> hash of the index's output tables."""
    judge: JudgeSpec = Field(default_factory=JudgeSpec)
    limit: int | None = None
    """`--limit`: the first N questions per index (merging needs the same; resume does not)."""
    shard: ShardSpec | None = None
    """The shard this run is, for one shard of a sharded run (`gtog eval --shard i/n`)."""

    @property
    def metrics(self) -> list[str]:
        """The metrics of the run."""
        return self.judge.metrics


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flat(v, f"{prefix}{k}."))
        return out
    return {prefix.rstrip("."): value}


def _what_differs(old: Any, new: Any, limit: int = 3) -> str:
    """`key: old -> new` for the first few differing keys of two settings dicts."""
    a, b = _flat(old), _flat(new)
    keys = sorted(
        (k for k in set(a) | set(b) if a.get(k) != b.get(k)), key=lambda k: (k.count("."), k)
    )
    parts = [f"{k}: {str(a.get(k))[:40]} -> {str(b.get(k))[:40]}" for k in keys[:limit]]
    return "; ".join(parts) + (f"; +{len(keys) - limit} more" if len(keys) > limit else "")


def what_differs(old: EvalSpec, new: EvalSpec) -> str:
    """The first few settings in which two specs differ (shard, paths and versions aside)."""
    skip = {"shard", "config_path", "gtog_version", "graphrag_version"}
    return _what_differs(old.model_dump(exclude=skip), new.model_dump(exclude=skip))


def _changed(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    return [k for k in sorted(set(old) & set(new)) if stable_hash(old[k]) != stable_hash(new[k])]


def search_changes(old: EvalSpec, new: EvalSpec) -> list[str]:
    """What changed that changes answers: the dataset, an index, a method's settings."""
    changes = []
    old_shard = old.shard.label if old.shard else None
    new_shard = new.shard.label if new.shard else None
    if old_shard != new_shard:
        changes.append(f"the shard changed (--shard {old_shard} -> {new_shard})")
    if old.dataset.hash != new.dataset.hash:
        changes.append("the dataset changed")
    changes += [f"the index {k!r} changed" for k in _changed(old.indexes, new.indexes)]
    for method in sorted(set(old.method_settings) & set(new.method_settings)):
        before, after = old.method_settings[method], new.method_settings[method]
        changes += [
            f"the {method} settings for {k!r} changed ({_what_differs(before[k], after[k])})"
            for k in _changed(before, after)
        ]
    return changes


def judge_changes(old: JudgeSpec, new: JudgeSpec) -> list[str]:
    """What changed that changes scores: judge models, sampling, prompts, metrics."""
    changes = []
    if old.skipped != new.skipped:
        changes.append("judging was skipped" if old.skipped else "judging is now skipped")
        return changes
    if old.prompts != new.prompts:
        changes.append("the judge prompts changed")
    if old.metrics != new.metrics:
        changes.append(f"the metrics changed ({old.metrics} -> {new.metrics})")
    for field in ("temperature", "max_tokens", "structured_output", "trials"):
        if getattr(old, field) != getattr(new, field):
            changes.append(
                f"judge.{field} changed ({getattr(old, field)} -> {getattr(new, field)})"
            )
    for key in sorted(set(old.models) & set(new.models)):
        if old.models[key] != new.models[key]:
            changes.append(
                f"the judge model for {key!r} changed ({old.models[key]} -> {new.models[key]})"
            )
    return changes


def spec_changes(old: EvalSpec, new: EvalSpec) -> list[str]:
    """Every difference that makes `old`'s records invalid for `new` (empty: compatible).

    Only methods and index keys present in both count: running a subset of a run's
    methods or adding an index is not a change.
    """
    return search_changes(old, new) + judge_changes(old.judge, new.judge)


class EvalLog(BaseModel):
    """A run: its spec, its records, and (once written) its summary results."""

    version: int = LOG_VERSION
    spec: EvalSpec
    records: list[MethodRecord] = Field(default_factory=list)
    results: dict[str, Any] | None = None
    location: str | None = None
    """The file this log was read from."""


# -- reading any output back -----------------------------------------------------------


def _records_from_detailed(results: list[dict[str, Any]]) -> list[MethodRecord]:
    records = []
    for q in results:
        for method, entry in (q.get("methods") or {}).items():
            judgements: dict[str, Judgement] = {}
            usage = entry.get("judge_usage") or {}
            errors = entry.get("judge_errors") or {}
            for metric in {*(entry.get("scores") or {}), *errors}:
                judgements[metric] = Judgement(
                    score=(entry.get("scores") or {}).get(metric),
                    reason=(entry.get("reasons") or {}).get(metric),
                    error=errors.get(metric),
                    **(usage.get(metric) or {}),
                )
            eff = entry.get("efficiency")
            records.append(
                MethodRecord(
                    qid=q["question_id"],
                    index_key=q.get("index_key", q.get("imdb_key", "")),
                    question=q["question"],
                    reference=q.get("ground_truth", ""),
                    method=method,
                    evidence=q.get("evidence"),
                    response=entry.get("response"),
                    error=entry.get("error"),
                    error_kind=entry.get("error_kind"),
                    context_text=entry.get("context_text"),
                    sources=entry.get("sources"),
                    judgements=judgements,
                    judged_with=entry.get("judged_with"),
                    efficiency=Efficiency.model_validate(eff) if eff else None,
                )
            )
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
            spec=parsed, records=_records_from_detailed(data["results"]), location=str(path)
        )
    results = {k: v for k, v in data.items() if k != "metadata"}
    return EvalLog(spec=parsed, results=results, location=str(path))


def read_log(path: Path) -> EvalLog:
    """The `EvalLog` of a checkpoint, detailed or summary JSON, or an output folder.

    A folder is read from its checkpoint (the most complete view), else its detailed
    results; its summary, when present, fills `results`.
    """
    from gtog.eval.checkpoint import read_checkpoint

    path = Path(path)
    if path.is_dir():
        checkpoint, detailed = path / CHECKPOINT_NAME, path / DETAILED_NAME
        if checkpoint.is_file():
            spec, records, _ = read_checkpoint(checkpoint)
            log = EvalLog(spec=spec, records=records, location=str(checkpoint))
        elif detailed.is_file():
            log = _read_json_log(detailed)
        else:
            raise InputError(f"{path}: no {CHECKPOINT_NAME} or {DETAILED_NAME} here")
        summary = path / SUMMARY_NAME
        if summary.is_file():
            log.results = _read_json_log(summary).results
        return log
    if path.suffix == ".jsonl":
        spec, records, _ = read_checkpoint(path)
        return EvalLog(spec=spec, records=records, location=str(path))
    if not path.is_file():
        raise InputError(f"{path}: no such eval log")
    return _read_json_log(path)
