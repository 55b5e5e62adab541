"""The pilot basis: K questions per method run for real, their spend extrapolated.

The pilot's questions are spread evenly over the run's questions (every index, in the
dataset's order); every method answers the same K questions, so their comparisons run
too. Each pair not run yet is priced at the mean of its method's pilot pairs (a judge
metric: of that method's pilot verdicts; a comparison: of the pilot's comparisons of the
same two methods and criterion); low and high price it like the cheapest and the dearest
pilot pair. The pilot's records stay in the checkpoint: the run resumes from them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from gtog.eval.estimate._figures import Figures, Range
from gtog.eval.estimate._plan import judge_figures, pair_figures
from gtog.eval.results._currency import searched_elsewhere
from gtog.eval.run._manifest import search_figures

if TYPE_CHECKING:
    from gtog.eval._dataset import QAItem
    from gtog.eval.run._state import EvalRun

__all__ = ["PilotBasis", "pilot_questions"]


def pilot_questions(run: EvalRun, k: int) -> list[str]:
    """The ids of `k` questions spread evenly over the run's (first and last included)."""
    qids = list(dict.fromkeys(q.qid for q, *_ in run.pairs))
    if k >= len(qids):
        return qids
    if k == 1:
        return [qids[len(qids) // 2]]
    step = (len(qids) - 1) / (k - 1)
    return list(dict.fromkeys(qids[round(i * step)] for i in range(k)))


def _key(f: Figures) -> tuple[float, float]:
    return (f.usd if f.usd is not None else 0.0, f.llm_calls + f.prompt_tokens + f.output_tokens)


def _spread(samples: Iterable[Figures]) -> Range | None:
    """Mean, cheapest and dearest of `samples` (None: no sample)."""
    values = list(samples)
    if not values:
        return None
    mean = Figures()
    for v in values:
        mean = mean + v
    ordered = sorted(values, key=_key)
    return Range(mean.scaled(1 / len(values)), ordered[0], ordered[-1])


class PilotBasis:
    """Each pair priced like its method's pilot pairs."""

    def __init__(self, run: EvalRun, qids: list[str]) -> None:
        pilot = set(qids)
        self.records = [
            r
            for r in run.done
            if r.qid in pilot and r.method in run.methods and not searched_elsewhere(run.spec, r)
        ]
        self.pairs = [p for p in run.pairs_done if p.qid in pilot]

    def search(self, item: QAItem, method: str) -> Range | None:
        """The mean of the method's pilot searches."""
        spent = (search_figures(r) for r in self.records if r.method == method)
        return _spread(Figures.of(s) for s in spent if s is not None)

    def judge(self, item: QAItem, method: str, metric: str) -> Range | None:
        """The mean of the metric's spend on the method's pilot pairs (a failed search,
        never judged, spent nothing: the pilot's failure rate is in the mean)."""
        return _spread(judge_figures(r, metric) for r in self.records if r.method == method)

    def compare(self, item: QAItem, criterion: str, a: str, b: str) -> Range | None:
        """The mean of the pilot's comparisons of `a` and `b` on `criterion`."""
        same = (p for p in self.pairs if (p.criterion, p.a, p.b) == (criterion, a, b))
        return _spread(pair_figures(p) for p in same)
