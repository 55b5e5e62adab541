"""What a run will cost, pair by pair: known where done or cached, else bounded or measured.

One walk over the run's (question, method) pairs, their judges and their comparisons, the
same for both bases: a pair already in the checkpoint (with the run's settings and judge)
counts what it spent; a pair whose calls the cache holds (its note, `manifest`) counts
what it spent when first made and is `cached`; any other pair counts what the basis says
(`Basis`: bounds, or a pilot's measure). `total` is everything less what is cached.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from gtog.eval.estimate._figures import Figures, Range
from gtog.eval.results._currency import judged_elsewhere, searched_elsewhere
from gtog.eval.results._records import answer_key
from gtog.eval.run._manifest import judge_key, noted, search_figures, search_key
from gtog.eval.scoring._base import is_metered

if TYPE_CHECKING:
    from gtog.eval._dataset import QAItem
    from gtog.eval.results._records import MethodRecord, PairRecord
    from gtog.eval.run._state import EvalRun

__all__ = ["Basis", "Estimate", "build_estimate", "judge_figures", "pair_figures"]


@dataclass
class Estimate:
    """An estimate's rows (see `as_json` for estimate.json)."""

    basis: str
    methods: dict[str, Range] = field(default_factory=dict)
    judges: dict[str, Range] = field(default_factory=dict)
    pairwise: Range = field(default_factory=Range)
    cached: Figures = field(default_factory=Figures)
    notes: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    def whole(self) -> Range:
        """Every row: the whole run, what is already held included."""
        out = Range()
        for row in [*self.methods.values(), *self.judges.values(), self.pairwise]:
            out += row
        return out

    def total(self) -> Range:
        """Every row, less what the cache and the checkpoint already hold: what is to pay."""
        out = self.whole()
        out.add(self.cached.scaled(-1.0))
        return out

    def as_json(self) -> dict[str, Any]:
        """estimate.json: `basis`, `methods`, `judges`, `pairwise`, `cached`, `total` (to
        pay, with `usd_low` and `usd_high`), `run` (the whole run, held parts included)
        and what the basis adds (`details`, `notes`)."""
        total = self.total()
        return {
            "basis": self.basis,
            "methods": {m: r.mid.as_dict() for m, r in self.methods.items()},
            "judges": {m: r.mid.as_dict() for m, r in self.judges.items()},
            "pairwise": self.pairwise.mid.as_dict(),
            "cached": self.cached.as_dict(),
            "total": {
                **total.mid.as_dict(),
                "usd_low": total.low.as_dict()["usd"],
                "usd_high": total.high.as_dict()["usd"],
            },
            "run": self.whole().mid.as_dict(),
            **self.details,
            "notes": self.notes,
        }


class Basis(Protocol):
    """What a pair that is neither done nor cached will cost, by one basis."""

    def search(self, item: QAItem, method: str) -> Range | None:
        """The search of `method` on `item` (None: unknown)."""
        ...

    def judge(self, item: QAItem, method: str, metric: str) -> Range | None:
        """One judge metric on `method`'s answer to `item`."""
        ...

    def compare(self, item: QAItem, criterion: str, a: str, b: str) -> Range | None:
        """One head-to-head comparison."""
        ...


def judge_figures(record: MethodRecord, metric: str) -> Figures:
    """What judging `record` on `metric` spent (nothing when it was not judged)."""
    j = record.judgements.get(metric)
    if j is None:
        return Figures()
    return Figures(j.llm_calls, j.prompt_tokens, j.output_tokens, j.cost_usd)


def pair_figures(pair: PairRecord) -> Figures:
    """What one comparison spent."""
    j = pair.judgement
    return Figures(j.llm_calls, j.prompt_tokens, j.output_tokens, j.cost_usd)


def _unknown(row: Range) -> None:
    for f in (row.mid, row.low, row.high):
        f.usd = None


def _part(row: Range, part: Range | None, what: str, notes: list[str]) -> None:
    if part is None:
        _unknown(row)
        if what not in notes:
            notes.append(what)
        return
    row += part


def build_estimate(run: EvalRun, basis: Basis, name: str) -> Estimate:
    """The run's estimate on `basis` (see the module docstring)."""
    est = Estimate(name)
    current = {r.key: r for r in run.done if not searched_elsewhere(run.spec, r)}
    metrics = [m for m in run.config.metrics if is_metered(m)]  # those that call a model
    judging = not run.options.skip_judges
    for item, method, epoch in run.pairs:
        row = est.methods.setdefault(method, Range())
        record = current.get(answer_key(item.qid, method, epoch))
        first = epoch == 1  # the cache's notes are of first answers (a repeat's calls differ)
        answer = record.response if record is not None else None
        if record is not None and (spent := search_figures(record)) is not None:
            row.add(Figures.of(spent))
            est.cached = est.cached + Figures.of(spent)
        elif first and (
            kept := noted(run, search_key(_digest(run, item, method), item.qid, method))
        ):
            row.add(Figures.of(kept))
            est.cached = est.cached + Figures.of(kept)
            answer = kept.get("answer")
        else:
            _part(row, basis.search(item, method), f"{method}: no bound", est.notes)
        if not judging or (record is not None and record.error is not None):
            continue
        for metric in metrics:
            jrow = est.judges.setdefault(metric, Range())
            if record is not None and not judged_elsewhere(run.spec, record):
                spent_j = judge_figures(record, metric)
                jrow.add(spent_j)
                est.cached = est.cached + spent_j
                continue
            if answer is not None and first:
                key = judge_key(run, item.index_key, metric, item.qid, answer)
                if (kept_j := noted(run, key)) is not None:
                    jrow.add(Figures.of(kept_j))
                    est.cached = est.cached + Figures.of(kept_j)
                    continue
            _part(jrow, basis.judge(item, method, metric), f"{metric}: unknown", est.notes)
    if run.spec.pairwise is not None and judging:
        _comparisons(run, basis, est)
    return est


def _digest(run: EvalRun, item: QAItem, method: str) -> str | None:
    return run.spec.search_digest(method, item.index_key)


def _comparisons(run: EvalRun, basis: Basis, est: Estimate) -> None:
    spec = run.spec.pairwise
    assert spec is not None
    done = {p.key: p for p in run.pairs_done}
    methods = set(run.methods)
    wanted = [(a, b) for a, b in spec.pairs if a in methods and b in methods]
    for item in _questions(run):
        for a, b in wanted:
            for criterion in spec.criteria:
                pair = done.get((item.qid, criterion, a, b))
                if pair is not None:
                    spent = pair_figures(pair)
                    est.pairwise.add(spent)
                    est.cached = est.cached + spent
                    continue
                part = basis.compare(item, criterion, a, b)
                _part(est.pairwise, part, "pairwise: unknown", est.notes)


def _questions(run: EvalRun) -> Iterable[QAItem]:
    seen: set[str] = set()
    for item, *_ in run.pairs:
        if item.qid not in seen:
            seen.add(item.qid)
            yield item
