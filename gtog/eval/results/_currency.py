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
from typing import Any

from gtog.eval.results._records import (
    AnswerKey,
    MethodRecord,
    PairRecord,
    answer_key,
    compared_epochs,
)
from gtog.eval.results._spec import EvalSpec

__all__ = [
    "Currency",
    "current_records",
    "judged_elsewhere",
    "missing_comparisons",
    "pair_elsewhere",
    "pair_staleness",
    "searched_elsewhere",
]


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


def pair_staleness(
    spec: EvalSpec, pair: PairRecord, answers: dict[AnswerKey, MethodRecord] | None
) -> str | None:
    """Why a comparison is left out of the win rates (None: it is current): made by another
    pairwise judge, on other epochs than the run compares (an A/A check made before the
    run had repeats), or (with `answers`, the current answers by `answer_key`) on answers
    that have changed or failed since."""
    digest = spec.pairwise_digest(pair.index_key)
    if digest is not None and pair.judged_with != digest:
        return "judged by another pairwise judge"
    epochs = compared_epochs(pair.a, pair.b, spec.epochs)
    if (pair.epoch_a, pair.epoch_b) != epochs:
        return f"made on answers {pair.epoch_a} and {pair.epoch_b}, not {epochs[0]} and {epochs[1]}"
    if answers is None:
        return None
    a = answers.get(answer_key(pair.qid, pair.a, pair.epoch_a))
    b = answers.get(answer_key(pair.qid, pair.b, pair.epoch_b))
    if a is None or b is None or a.error is not None or b.error is not None:
        return "its answers are not the run's current answers"
    from gtog._hashing import stable_hash

    if pair.answers != stable_hash([a.response, b.response]):
        return "made on answers searched again since"
    return None


def pair_elsewhere(
    spec: EvalSpec, pair: PairRecord, answers: dict[AnswerKey, MethodRecord] | None
) -> bool:
    """True when a comparison was made by another pairwise judge, or (with `answers`, the
    current answers by (question, method)) on answers that have changed since."""
    return pair_staleness(spec, pair, answers) is not None


def missing_comparisons(
    spec: EvalSpec, records: list[MethodRecord], pairs: list[PairRecord]
) -> list[tuple[str, str, str, str]]:
    """(question id, criterion, a, b) of every comparison `spec` asks for whose two answers
    are current and answered but which has no current record in `pairs` (what a resumed
    run would judge)."""
    if spec.pairwise is None:
        return []
    answers = {r.key: r for r in records if not searched_elsewhere(spec, r)}
    done = {p.key for p in pairs if pair_staleness(spec, p, answers) is None}
    out = []
    for qid in dict.fromkeys(r.qid for r in answers.values()):
        for a, b in spec.pairwise.pairs:
            ea, eb = compared_epochs(a, b, spec.epochs)
            ra, rb = answers.get(answer_key(qid, a, ea)), answers.get(answer_key(qid, b, eb))
            if ra is None or rb is None or ra.error is not None or rb.error is not None:
                continue
            if spec.pairwise_digest(ra.index_key) is None:  # no pairwise judge for the index
                continue
            out += [(qid, c, a, b) for c in spec.pairwise.criteria if (qid, c, a, b) not in done]
    return out


@dataclass
class Currency:
    """The records a summary uses, and per method how many were left out and why."""

    records: list[MethodRecord]
    pairs: list[PairRecord] = field(default_factory=list)
    """Comparisons of the current pairwise judge on the current answers."""
    other_pairs: int = 0
    """Comparisons left out: another pairwise judge, or answers searched again since."""
    other_settings: Counter[str] = field(default_factory=Counter)
    """method -> answers made with other search settings (left out entirely)."""
    other_judge: Counter[str] = field(default_factory=Counter)
    """method -> answers not judged by the current judge (kept, but unscored)."""
    other_epochs: Counter[str] = field(default_factory=Counter)
    """method -> repeats beyond the run's `epochs` (a run resumed with a lower k)."""

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
        if self.other_epochs:
            n = sum(self.other_epochs.values())
            out.append(
                f"{n} repeated answer(s) beyond the run's epochs are left out "
                f"({_per_method(self.other_epochs)}); raise epochs to use them"
            )
        if self.other_pairs:
            out.append(
                f"{self.other_pairs} comparison(s) made by another pairwise judge or on "
                "answers searched again are left out of the win rates; --rescore redoes them"
            )
        return out

    def as_dict(self) -> dict[str, Any]:
        """The counts, for the summary's metadata."""
        out: dict[str, Any] = {
            "other_settings": dict(self.other_settings),
            "other_judge": dict(self.other_judge),
        }
        if self.other_pairs:
            out["other_pairs"] = self.other_pairs
        if self.other_epochs:
            out["other_epochs"] = dict(self.other_epochs)
        return out


def _per_method(counts: Counter[str]) -> str:
    return ", ".join(f"{m} {n}" for m, n in sorted(counts.items()))


def current_records(
    spec: EvalSpec, records: list[MethodRecord], pairs: list[PairRecord] | None = None
) -> Currency:
    """The records of `spec`'s settings, with verdicts only from `spec`'s judge, and the
    comparisons of its pairwise judge on those same answers."""
    out = Currency(records=[])
    for r in records:
        if r.epoch > spec.epochs:
            out.other_epochs[r.method] += 1
            continue
        if searched_elsewhere(spec, r):
            out.other_settings[r.method] += 1
            continue
        if judged_elsewhere(spec, r):
            out.other_judge[r.method] += 1
            r = r.model_copy(update={"judgements": {}})
        out.records.append(r)
    answers = {r.key: r for r in out.records}
    for p in pairs or []:
        if pair_elsewhere(spec, p, answers):
            out.other_pairs += 1
        else:
            out.pairs.append(p)
    return out
