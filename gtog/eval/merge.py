"""Merge the shards of one run (`gtog eval --shard i/n`) into one output folder.

Each shard's checkpoint header carries the run's spec (dataset, judges, prompts, metrics,
methods, index keys, limit, settings) and its shard (`index`, `count`, `pairs`). Shards
merge only when they share one spec, are all present once, and hold disjoint pairs; a
shard with pairs still missing is refused unless `partial=True`. The merged folder gets a
checkpoint (unsharded, so `gtog eval --resume -o OUT` can complete it) and the detailed,
summary and `qa/` files, written by the same writers as a run.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gtog.errors import InputError
from gtog.eval.checkpoint import CHECKPOINT_NAME, Checkpoint, read_checkpoint, read_header
from gtog.eval.records import MethodRecord, RunFingerprint
from gtog.eval.results import DETAILED_NAME, QA_DIR, SUMMARY_NAME, write_run_files

__all__ = ["MergeResult", "merge_runs"]


@dataclass
class MergeResult:
    """What a merge wrote and what it found."""

    out: Path
    records: list[MethodRecord]
    spec: dict[str, Any]
    shards: int
    missing: dict[str, int] = field(default_factory=dict)
    """Shard label -> pairs it has not finished (only with `partial=True`)."""
    detailed: Path | None = None
    summary: Path | None = None


@dataclass
class _Shard:
    folder: Path
    header: dict[str, Any]
    fingerprint: RunFingerprint
    records: list[MethodRecord]

    @property
    def label(self) -> str:
        s = self.header["shard"]
        return f"{s['index']}/{s['count']}"


def _load(folder: Path) -> _Shard:
    path = folder / CHECKPOINT_NAME
    header = read_header(path)
    if not isinstance(header.get("spec"), dict) or "shard" not in header:
        raise InputError(f"{path}: no run spec in the header (made by an older gtog); rerun it")
    if not header["shard"]:
        raise InputError(f"{path}: not a shard (run it with gtog eval --shard i/n)")
    fingerprint, records, _ = read_checkpoint(path)
    return _Shard(folder, header, fingerprint, records)


def _spec_difference(a: dict[str, Any], b: dict[str, Any]) -> str | None:
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            return f"{key} differs ({a.get(key)!r} vs {b.get(key)!r})"
    return None


def _check(shards: list[_Shard], partial: bool) -> dict[str, int]:
    first = shards[0]
    for s in shards[1:]:
        why = _spec_difference(first.header["spec"], s.header["spec"])
        if why:
            raise InputError(
                f"{s.folder}: shard {s.label} is from a different run than {first.folder} "
                f"(shard {first.label}): {why}"
            )
    count = first.header["shard"]["count"]
    seen: dict[int, _Shard] = {}
    for s in shards:
        if s.header["shard"]["count"] != count:
            raise InputError(
                f"{s.folder}: shard {s.label} splits the run in "
                f"{s.header['shard']['count']}, {first.folder} in {count}"
            )
        index = s.header["shard"]["index"]
        if index in seen:
            raise InputError(f"shard {s.label} given twice: {seen[index].folder} and {s.folder}")
        seen[index] = s
    absent = [i for i in range(count) if i not in seen]
    if absent:
        names = ", ".join(f"{i}/{count}" for i in absent)
        raise InputError(f"missing shard(s) {names}: give all {count} shard folders")
    owner: dict[tuple[str, str], _Shard] = {}
    for s in shards:
        for r in s.records:
            if r.key in owner:
                raise InputError(
                    f"{s.folder}: pair ({r.qid}, {r.method}) is also in {owner[r.key].folder}"
                )
            owner[r.key] = s
    missing = {
        s.label: s.header["shard"]["pairs"] - len(s.records)
        for s in shards
        if len(s.records) < s.header["shard"]["pairs"]
    }
    if missing and not partial:
        label, n = next(iter(missing.items()))
        shard = next(s for s in shards if s.label == label)
        raise InputError(
            f"{shard.folder}: shard {label} is unfinished ({n} of "
            f"{shard.header['shard']['pairs']} pairs missing); finish it with "
            f"gtog eval --shard {label} --resume, or merge anyway with --partial"
        )
    return missing


def merge_runs(out: Path, dirs: list[Path], *, partial: bool = False) -> MergeResult:
    """Check the shard folders `dirs` and write their merged run into `out`."""
    if not dirs:
        raise InputError("merge: give the shard folders to merge")
    taken = [
        p
        for p in (out / CHECKPOINT_NAME, out / DETAILED_NAME, out / SUMMARY_NAME, out / QA_DIR)
        if p.exists()
    ]
    if taken:
        raise InputError(f"{out}: already holds results ({taken[0].name}); merge into a new folder")
    shards = [_load(Path(d)) for d in dirs]
    missing = _check(shards, partial)
    first = shards[0]
    spec = first.header["spec"]
    records = [r for s in sorted(shards, key=lambda s: s.label) for r in s.records]
    checkpoint = Checkpoint.create(
        out / CHECKPOINT_NAME,
        first.fingerprint,
        {
            "spec": spec,
            "shard": None,
            "config": first.header.get("config"),
            "merged_from": [str(s.folder) for s in shards],
        },
    )
    try:
        for r in records:
            checkpoint.append(r)
    finally:
        checkpoint.close()
    metadata = {
        "timestamp": dt.datetime.now().isoformat(timespec="seconds"),
        "total_questions": len({r.qid for r in records}),
        "methods": spec["methods"],
        "metrics": spec["metrics"],
        "index_keys": spec["index_keys"],
        "judge_models": spec["judge_models"],
        "judge_prompts": spec["prompts"],
        "dataset": spec["dataset"],
        "config": first.header.get("config"),
        "merged_shards": len(shards),
    }
    keep = spec.get("save_intermediate", True)
    detailed, summary = write_run_files(
        out,
        records,
        spec["methods"],
        spec["metrics"],
        metadata,
        keep_intermediate=keep,
        qa_files=spec.get("qa_responses", True),
    )
    return MergeResult(out, records, spec, len(shards), missing, detailed, summary)
