"""Merge the shards of one run (`gtog eval --shard i/n`) into one output folder.

Each shard's checkpoint carries the run's spec (`gtog.eval.results._log.EvalSpec`) with its shard
(`index`, `count`, `pairs`, `split`). Shards merge only when they share one spec and one
split, are all present once, and hold disjoint pairs; a shard with pairs still missing is
refused unless `partial=True`, and so is a merge that lacks head-to-head comparisons the
spec asks for (a shard stopped before judging them, or shards of an older gtog, which split
a question's methods across shards). The merged folder gets a checkpoint (unsharded, so
`gtog eval --resume -o OUT` can complete it: missing answers are searched, missing
comparisons judged) and the detailed, summary, `qa/`, report and CSV files, written by the
same writers as a run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gtog._errors import InputError
from gtog.eval.results._currency import missing_comparisons
from gtog.eval.results._log import EvalLog, read_log
from gtog.eval.results._records import AnswerKey, MethodRecord, PairRecord
from gtog.eval.results._spec import (
    CHECKPOINT_NAME,
    DETAILED_NAME,
    QA_DIR,
    SUMMARY_NAME,
    EvalSpec,
    what_differs,
)
from gtog.eval.run._checkpoint import Checkpoint
from gtog.eval.run._lock import OutputLock
from gtog.eval.run._shard import SPLIT, shard_of

__all__ = ["MergeResult", "merge_runs"]


@dataclass
class MergeResult:
    """What a merge wrote and what it found."""

    out: Path
    records: list[MethodRecord]
    spec: EvalSpec
    shards: int
    missing: dict[str, int] = field(default_factory=dict)
    """Shard label -> pairs it has not finished (only with `partial=True`)."""
    missing_comparisons: int = 0
    """Comparisons the spec asks for that no shard made (only with `partial=True`)."""
    detailed: Path | None = None
    summary: Path | None = None


def _load(folder: Path) -> EvalLog:
    path = folder / CHECKPOINT_NAME
    log = read_log(path)
    if log.spec.shard is None:
        raise InputError(f"{path}: not a shard (run it with gtog eval --shard i/n)")
    return log


def _label(log: EvalLog) -> str:
    return log.spec.shard.label if log.spec.shard else "-"


def _check(shards: list[EvalLog], partial: bool) -> dict[str, int]:
    first = shards[0]
    for s in shards[1:]:
        why = what_differs(first.spec, s.spec)
        if why:
            raise InputError(
                f"{s.location}: shard {_label(s)} is from a different run than "
                f"{first.location} (shard {_label(first)}): {why}"
            )
    assert first.spec.shard is not None
    count = first.spec.shard.count
    seen: dict[int, EvalLog] = {}
    for s in shards:
        assert s.spec.shard is not None
        if s.spec.shard.count != count:
            raise InputError(
                f"{s.location}: shard {_label(s)} splits the run in {s.spec.shard.count}, "
                f"{first.location} in {count}"
            )
        if s.spec.shard.split != first.spec.shard.split:
            raise InputError(
                f"{s.location}: shard {_label(s)} holds whole {s.spec.shard.split}s, "
                f"{first.location} whole {first.spec.shard.split}s: run the older shards "
                "again with --force"
            )
        if s.spec.shard.index in seen:
            raise InputError(
                f"shard {_label(s)} given twice: {seen[s.spec.shard.index].location} and "
                f"{s.location}"
            )
        seen[s.spec.shard.index] = s
    absent = [i for i in range(count) if i not in seen]
    if absent:
        names = ", ".join(f"{i}/{count}" for i in absent)
        raise InputError(f"missing shard(s) {names}: give all {count} shard folders")
    owner: dict[AnswerKey, EvalLog] = {}
    for s in shards:
        for r in s.records:
            if r.key in owner:
                which = f"({r.qid}, {r.method}" + (f", epoch {r.epoch})" if r.epoch > 1 else ")")
                raise InputError(f"{s.location}: pair {which} is also in {owner[r.key].location}")
            owner[r.key] = s
    missing = {
        _label(s): s.spec.shard.pairs - len(s.records)
        for s in shards
        if s.spec.shard is not None and len(s.records) < s.spec.shard.pairs
    }
    if missing and not partial:
        label, n = next(iter(missing.items()))
        shard = next(s for s in shards if _label(s) == label)
        raise InputError(
            f"{shard.location}: shard {label} is unfinished ({n} pairs missing); finish it "
            f"with gtog eval --shard {label} --resume, or merge anyway with --partial"
        )
    return missing


def _lost_comparisons(
    shards: list[EvalLog],
    spec: EvalSpec,
    records: list[MethodRecord],
    pairs: list[PairRecord],
    partial: bool,
) -> int:
    """How many comparisons the spec asks for are in no shard; refused unless `partial`."""
    lost = missing_comparisons(spec, records, pairs)
    if not lost or partial:
        return len(lost)
    first = shards[0]
    assert first.spec.shard is not None
    qid, criterion, a, b = lost[0]
    example = f"question {qid}: {criterion}, {a} vs {b}"
    if first.spec.shard.split != SPLIT:
        raise InputError(
            f"{first.location}: {len(lost)} comparison(s) the run asks for are in no shard "
            f"({example}): these shards, made by an older gtog, split a question's methods "
            "across shards; merge with --partial and then `gtog eval --resume -o OUT` "
            "judges them (no search), or run the shards again with --force"
        )
    count = first.spec.shard.count
    owner = shard_of(qid, count)
    shard = next(s for s in shards if s.spec.shard is not None and s.spec.shard.index == owner)
    label = f"{owner}/{count}"
    n = sum(1 for q, *_ in lost if shard_of(q, count) == owner)
    raise InputError(
        f"{shard.location}: shard {label} has {n} comparison(s) still to judge ({example}); "
        f"finish it with gtog eval --shard {label} --resume, or merge anyway with --partial"
    )


def merge_runs(out: Path, dirs: list[Path], *, partial: bool = False) -> MergeResult:
    """Check the shard folders `dirs` and write their merged run into `out`."""
    from gtog.eval.run._outputs import write_outputs

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
    total = sum(s.spec.shard.pairs for s in shards if s.spec.shard is not None)
    spec = shards[0].spec.model_copy(update={"shard": None, "pairs": total})
    ordered = sorted(shards, key=lambda s: s.spec.shard.index if s.spec.shard else 0)
    records = [r for s in ordered for r in s.records]
    pairs = [p for s in ordered for p in s.pairs]
    lost = _lost_comparisons(ordered, spec, records, pairs, partial)
    with OutputLock(out):
        checkpoint = Checkpoint.create(out / CHECKPOINT_NAME, spec)
        try:
            for r in [*records, *pairs]:
                checkpoint.append(r)
        finally:
            checkpoint.close()
        detailed, summary = write_outputs(
            out,
            spec,
            records,
            spec.methods,
            keep_intermediate=any(r.context_text is not None for r in records),
            pairs=pairs,
        )
    return MergeResult(out, records, spec, len(shards), missing, lost, detailed, summary)
