"""A run's options and its prepared state: what it covers and what is left to do."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from gtog._redact import Redactor
from gtog.eval._dataset import QAItem
from gtog.eval.results._currency import judged_elsewhere, searched_elsewhere
from gtog.eval.results._records import MethodRecord, PairRecord, answer_key
from gtog.eval.results._spec import EvalSpec
from gtog.eval.run._answers import AnswerBook
from gtog.eval.run._config import EvalConfig
from gtog.eval.run._lock import OutputLock
from gtog.eval.run._methods import RunMethod
from gtog.eval.run._shard import Shard
from gtog.eval.scoring._base import PairScorer, Scorer
from gtog.eval.scoring._judges import PromptSet

if TYPE_CHECKING:
    import asyncio

    from gtog._project import Project
    from gtog.llm._ahead import EmbeddingsAhead
    from gtog.llm._budget import Budget
    from gtog.llm._models import ChatModel
    from gtog.llm._runcalls import RunCalls
    from gtog.search._context_process import ContextProcess

__all__ = ["EvalOptions", "EvalRun", "Pair", "by_index"]

Pair = tuple[QAItem, str, int]
"""(question, method, epoch): one answer a run makes (epoch 1 to the spec's `epochs`)."""


class Closing(Protocol):
    """Something the run closes when it ends (its engines, should no loop take them)."""

    def close(self) -> None: ...


def by_index(pairs: list[Pair]) -> list[Pair]:
    """The pairs in the order a run searches them: grouped by index, the indexes in the
    order the pairs name them first (a stable sort: dataset order within an index)."""
    rank = {k: i for i, k in enumerate(dict.fromkeys(q.index_key for q, *_ in pairs))}
    return sorted(pairs, key=lambda p: rank[p[0].index_key])


@dataclass
class EvalOptions:
    """What a user can set on the command line (None = take it from the config)."""

    root: Path
    config_path: Path | None = None
    methods: list[str] | None = None
    index_keys: list[str] | None = None
    resume: bool = False
    force: bool = False
    retry_errors: bool = False
    rescore: bool = False
    """Re-judge the saved answers of the output folder; no search is run."""
    skip_judges: bool = False
    """Run the searches only (answers, efficiency, sources); judge later with `rescore`."""
    concurrency: int | None = None
    limit: int | None = None
    output_dir: Path | None = None
    max_errors: str | None = None
    """Error budget: a count (`10`) or a share of the pairs (`5%`); past it the run stops."""
    model_overrides: Callable[[Path], dict[str, Any]] | None = None
    """graphrag config overrides per index folder (e.g. to use the local model server)."""
    shard: Shard | None = None
    """Run only this shard's questions (all their methods and comparisons), into
    `<output>/shard-i-of-n`."""
    no_cache: bool = False
    """Send every model request (the model-call cache is neither read nor written)."""
    max_usd: float | None = None
    """The run's USD limit (over `limits.run.usd`)."""
    dry: bool = False
    """Only look (an estimate): `--force` renames nothing, nothing is written but the
    estimate."""


@dataclass
class EvalRun:
    """A prepared run: validated inputs, loaded projects, and what is left to do."""

    options: EvalOptions
    config: EvalConfig
    config_path: Path
    items: list[QAItem]
    methods: list[str]
    projects: dict[str, Project]
    judges: dict[str, ChatModel]
    prompts: PromptSet
    run_methods: dict[str, RunMethod]
    """method name -> how it answers (registry method and options, or an answers file)."""
    answers: dict[str, AnswerBook]
    """answers-file method name -> its answers, read and matched before any work."""
    scorers: dict[str, list[Scorer]]
    """index key -> the run's metrics as scorers (with that index's judge model)."""
    output_dir: Path
    spec: EvalSpec
    redactor: Redactor
    pair_scorers: dict[str, list[PairScorer]] = field(default_factory=dict)
    """index key -> one head-to-head judge per criterion (empty: no pairwise judging)."""
    done: list[MethodRecord] = field(default_factory=list)
    pairs_done: list[PairRecord] = field(default_factory=list)
    intact_bytes: int = 0
    mode: str = "new"
    """`new`, `resume`, `rescore`, or `complete` (a finished run of the same spec)."""
    lock: OutputLock | None = None
    stopped: str | None = None
    """Why the run stopped early (a fatal error), if it did."""
    status: str | None = None
    """How the loop ended: `complete`, `interrupted` (Ctrl-C, a crash) or `stopped: why`;
    None before it ran."""
    dataset_warnings: list[str] = field(default_factory=list)
    """One-line notes on the dataset (repeated questions, skipped files) for the caller."""
    ahead: EmbeddingsAhead | None = None
    """The vector-size check's embeddings, for the searches to take (None: not checked)."""
    engines: Closing | None = None
    """The run's `Engines` (`gtog.eval.run._engines`), once its first index is being opened
    ahead of the loop (during the vector-size check: `open_first_index`); the loop takes
    them."""
    models: dict[str, object] = field(default_factory=dict)
    """The run's graphrag_llm models, one per model entry (`gtog.llm._models.sharing_models`):
    its judges' and, made in the engines' thread, its engines'."""
    context_process: ContextProcess | None = None
    """The process that builds the run's search contexts, spawned ahead of the loop
    (`spawn_context_process`: its imports take seconds); the loop takes it."""
    cache_dir: Path | None = None
    """The model-call cache folder (None: the cache is off)."""
    calls: RunCalls | None = None
    """The run's model-call settings (its cache), set by `open_spending`."""
    budget: Budget | None = None
    """What the run has sent to providers, against its limits (`open_spending`)."""
    subset: set[str] | None = None
    """Only these question ids are searched, judged and compared (a pilot); None: all."""
    spend_written: tuple[Any, ...] | None = None
    """spend.json's figures as last written (its elapsed time aside; `save_spend`)."""
    entity_names: dict[str, frozenset[str] | None] = field(default_factory=dict)
    """index key -> its entities' normalised titles (`_features`; None: unreadable)."""
    entity_reads: dict[str, asyncio.Future[frozenset[str] | None]] = field(default_factory=dict)
    """index key -> the read of its entity titles under way (`_features`)."""

    @property
    def concurrency(self) -> int:
        """Calls in flight at once (`gtog.llm._slots`): `--concurrency`, else the config's."""
        return self.options.concurrency or self.config.concurrency

    @property
    def pairs(self) -> list[Pair]:
        """Every (question, method, epoch) of this run (of its shard's questions, if
        sharded): `epochs` answers per (question, method), a question's together."""
        shard = self.options.shard
        return [
            (q, m, e)
            for q in self.items
            if shard is None or shard.holds(q.qid)
            for e in range(1, self.spec.epochs + 1)
            for m in self.methods
        ]

    @property
    def todo(self) -> list[Pair]:
        """Answers to search: no record yet, or (retry_errors) a failed one."""
        if self.mode == "rescore":
            return []
        finished = {
            r.key
            for r in self.done
            if not (self.options.retry_errors and r.error is not None)
            and not searched_elsewhere(self.spec, r)  # --force after a change: re-run
        }
        return [
            (q, m, e)
            for q, m, e in self.pairs
            if answer_key(q.qid, m, e) not in finished
            and (self.subset is None or q.qid in self.subset)
        ]

    @property
    def to_judge(self) -> list[MethodRecord]:
        """Answered records to (re)judge without searching again."""
        if self.options.skip_judges:
            return []
        wanted = {answer_key(q.qid, m, e) for q, m, e in self.pairs}
        searching = {answer_key(q.qid, m, e) for q, m, e in self.todo}
        out = []
        for r in self.done:
            if r.key not in wanted or r.key in searching or r.error is not None:
                continue
            if self.subset is not None and r.qid not in self.subset:
                continue
            # --force resumes despite a changed judge: earlier verdicts are judged again
            stale = judged_elsewhere(self.spec, r)
            retry = self.options.retry_errors and r.judge_failed
            if self.mode == "rescore" or stale or retry:
                out.append(r)
        return out

    def close(self) -> None:
        """Release the output folder (and the engines opened ahead that no loop took)."""
        if self.engines is not None:
            self.engines.close()
            self.engines = None
        if self.context_process is not None:
            self.context_process.kill()
            self.context_process = None
        if self.lock is not None:
            self.lock.release()
            self.lock = None
