"""A run's head-to-head judging: which pairs and criteria, the judges, what is left to do.

`plan_pairwise` turns `pairwise:` of the config into the spec's `PairwiseSpec` and one
`PairwiseJudge` per index and criterion; `PairQueue` tells the loop which comparisons a
question needs as its answers land (both answers present and answered, the comparison
missing, failed with `--retry-errors`, or stale: made by another pairwise judge or on
answers searched again), and builds their records. Methods are compared on their first
answers; with repeats (`epochs` >= 2) the A/A check compares a method's first answer with
its second (`compared_epochs`), two independent answers.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING

from gtog._errors import InputError
from gtog.eval.results._currency import searched_elsewhere
from gtog.eval.results._records import (
    AnswerKey,
    MethodRecord,
    PairRecord,
    answer_key,
    compared_epochs,
)
from gtog.eval.results._spec import PairwiseSpec, stable_hash
from gtog.eval.run._config import EvalConfig
from gtog.eval.run._judging import pairwise_prompt, scoring_setup
from gtog.eval.scoring._pairwise import PairJudgement, PairwiseJudge

if TYPE_CHECKING:
    from gtog.eval._dataset import QAItem
    from gtog.eval.run._state import EvalRun
    from gtog.llm._models import ChatModel

__all__ = ["PairQueue", "answers_hash", "pairs_todo", "plan_pairwise"]


def _pairs(config: EvalConfig, config_path: Path, methods: list[str]) -> list[tuple[str, str]]:
    assert config.pairwise is not None
    if config.pairwise.pairs == "all":
        pairs = list(combinations(methods, 2))
    else:
        known = {*config.methods, *config.variants, *config.answers, *config.http_methods, *methods}
        pairs = []
        for a, b in config.pairwise.pairs:
            for m in (a, b):
                if m not in known:
                    raise InputError(
                        f"{config_path}: pairwise.pairs: unknown method {m!r} "
                        f"(the run's methods: {', '.join(methods)})"
                    )
            if a in methods and b in methods and a != b:  # a pair outside this run: later
                pairs.append((a, b))
    if config.pairwise.aa_check:
        used = dict.fromkeys(m for pair in pairs for m in pair)
        pairs += [(m, m) for m in used]
    return pairs


def plan_pairwise(
    root: Path,
    config: EvalConfig,
    config_path: Path,
    methods: list[str],
    judges: dict[str, ChatModel],
    skip: bool,
) -> tuple[PairwiseSpec | None, dict[str, list[PairwiseJudge]]]:
    """The run's pairwise spec and judges per index (None, {} without pairwise judging)."""
    if config.pairwise is None or skip:
        return None, {}
    template = pairwise_prompt(root, config, config_path)
    criteria = config.pairwise.criteria_map()
    spec = PairwiseSpec(
        criteria=criteria,
        pairs=_pairs(config, config_path, methods),
        trials=config.pairwise.trials,
        prompt=stable_hash(template),
    )
    scorers = {
        key: [
            PairwiseJudge(
                scoring_setup(config, judge, prompts=None),  # type: ignore[arg-type]
                name,
                description,
                template,
                config.pairwise.trials,
            )
            for name, description in criteria.items()
        ]
        for key, judge in judges.items()
    }
    return spec, scorers


def answers_hash(a: MethodRecord, b: MethodRecord) -> str:
    """What a comparison depends on of its two answers."""
    return stable_hash([a.response, b.response])


class PairQueue:
    """Which comparisons each question needs, given the answers so far and those done."""

    def __init__(self, run: EvalRun) -> None:
        self.run = run
        spec = run.spec.pairwise
        self.pairs = spec.pairs if spec is not None else []
        self.criteria = list(spec.criteria) if spec is not None else []
        self.epochs = run.spec.epochs
        self.answers: dict[AnswerKey, MethodRecord] = {}
        self.done: dict[tuple[str, str, str, str], PairRecord] = {r.key: r for r in run.pairs_done}
        self.queued: set[tuple[str, str, str, str]] = set()
        """Comparisons asked for in this run (each is made at most once per run)."""
        self.redo_all = run.mode == "rescore"
        if run.options.skip_judges:
            self.pairs = []

    def _answers(self, qid: str, a: str, b: str) -> tuple[MethodRecord | None, MethodRecord | None]:
        """The two answers a comparison of a and b on question `qid` reads (None: missing)."""
        ea, eb = compared_epochs(a, b, self.epochs)
        return self.answers.get(answer_key(qid, a, ea)), self.answers.get(answer_key(qid, b, eb))

    def _current(self, record: PairRecord, a: MethodRecord, b: MethodRecord) -> bool:
        if self.redo_all or (record.epoch_a, record.epoch_b) != (a.epoch, b.epoch):
            return False
        if self.run.options.retry_errors and record.judgement.error is not None:
            return False
        digest = self.run.spec.pairwise_digest(record.index_key)
        return record.judged_with == digest and record.answers == answers_hash(a, b)

    def add(self, record: MethodRecord) -> list[tuple[str, str, str]]:
        """Note an answer; the (criterion, a, b) its question now needs compared."""
        if not self.pairs:
            return []
        self.answers[record.key] = record
        out = []
        for a, b in self.pairs:
            if record.method not in (a, b):
                continue
            ra, rb = self._answers(record.qid, a, b)
            if ra is not record and rb is not record:  # not an answer it reads
                continue
            if ra is None or rb is None or ra.error is not None or rb.error is not None:
                continue
            for criterion in self.criteria:
                key = (record.qid, criterion, a, b)
                old = self.done.get(key)
                if key in self.queued or (old is not None and self._current(old, ra, rb)):
                    continue
                self.queued.add(key)
                out.append((criterion, a, b))
        return out

    async def compare(self, item: QAItem, criterion: str, a: str, b: str) -> PairRecord:
        """Judge one comparison and return its record (noted as done)."""
        ra, rb = self._answers(item.qid, a, b)
        assert ra is not None and rb is not None
        scorer = next(s for s in self.run.pair_scorers[item.index_key] if s.name == criterion)
        judgement: PairJudgement = await scorer.score_pair(
            item, ra.response or "", rb.response or ""
        )
        record = PairRecord(
            qid=item.qid,
            index_key=item.index_key,
            criterion=criterion,
            a=a,
            b=b,
            judgement=judgement,
            judged_with=self.run.spec.pairwise_digest(item.index_key),
            answers=answers_hash(ra, rb),
            groups=dict(item.groups),
            epoch_a=ra.epoch,
            epoch_b=rb.epoch,
        )
        self.done[record.key] = record
        return record


def pairs_todo(run: EvalRun) -> list[tuple[str, str, str, str]]:
    """(question id, criterion, a, b) comparisons `run` has left with the answers at hand."""
    if run.spec.pairwise is None or run.options.skip_judges:
        return []
    queue = PairQueue(run)
    wanted = {answer_key(q.qid, m, e) for q, m, e in run.pairs}
    out = []
    for r in run.done:
        if run.subset is not None and r.qid not in run.subset:
            continue
        if r.key in wanted and not searched_elsewhere(run.spec, r):
            out += [(r.qid, *k) for k in queue.add(r)]
    return out
