"""Which records a summary may use: answers from the run's settings, verdicts from its judge.

A checkpoint can hold records made under other settings: `--resume --force` after a
change keeps them until they are re-run, and an interrupted `--rescore` leaves some
answers judged by the old judge. Each record carries the hashes of the search spec and the
judge spec it was made with; a summary uses only answers made with the current settings
and scores given by the current judge, and counts the rest apart (never mixes them).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from gtog.eval.results.records import MethodRecord
from gtog.eval.results.spec import EvalSpec

__all__ = ["Currency", "current_records", "judged_elsewhere", "searched_elsewhere"]


def searched_elsewhere(spec: EvalSpec, record: MethodRecord) -> bool:
    """True when `record`'s answer was made with settings other than `spec`'s."""
    digest = spec.search_digest(record.method, record.index_key)
    return digest is not None and record.searched_with not in (None, digest)


def judged_elsewhere(spec: EvalSpec, record: MethodRecord) -> bool:
    """True when `record`'s verdicts were given by a judge other than `spec`'s."""
    if record.error is not None:
        return False
    digest = spec.judge_digest(record.index_key)
    return digest is not None and record.judged_with != digest


@dataclass
class Currency:
    """The records a summary uses, and per method how many were left out and why."""

    records: list[MethodRecord]
    other_settings: Counter[str] = field(default_factory=Counter)
    """method -> answers made with other search settings (left out entirely)."""
    other_judge: Counter[str] = field(default_factory=Counter)
    """method -> answers not judged by the current judge (kept, but unscored)."""

    def notes(self) -> list[str]:
        """One line per kind of record left out, for the terminal and the report."""
        out = []
        if self.other_settings:
            n = sum(self.other_settings.values())
            out.append(
                f"{n} answer(s) made with earlier settings are left out "
                f"({_per_method(self.other_settings)}); they are re-run by --resume --force"
            )
        if self.other_judge:
            n = sum(self.other_judge.values())
            out.append(
                f"{n} answer(s) not judged by the current judge are left out of the scores "
                f"({_per_method(self.other_judge)}); --rescore judges them"
            )
        return out

    def as_dict(self) -> dict[str, dict[str, int]]:
        """The counts, for the summary's metadata."""
        return {
            "other_settings": dict(self.other_settings),
            "other_judge": dict(self.other_judge),
        }


def _per_method(counts: Counter[str]) -> str:
    return ", ".join(f"{m} {n}" for m, n in sorted(counts.items()))


def current_records(spec: EvalSpec, records: list[MethodRecord]) -> Currency:
    """The records of `spec`'s settings, with verdicts only from `spec`'s judge."""
    out = Currency(records=[])
    for r in records:
        if searched_elsewhere(spec, r):
            out.other_settings[r.method] += 1
            continue
        if judged_elsewhere(spec, r):
            out.other_judge[r.method] += 1
            r = r.model_copy(update={"judgements": {}})
        out.records.append(r)
    return out
