"""What a run is (its spec): the same spec gives the same answers and the same scores.

Every file a run writes carries the spec; resume, rescoring and merging compare specs
(`spec_changes`) to decide whether earlier records still hold.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from gtog._hashing import stable_hash

__all__ = [
    "CHECKPOINT_NAME",
    "DETAILED_NAME",
    "LOG_VERSION",
    "QA_DIR",
    "SUMMARY_NAME",
    "AnalysisSpec",
    "DatasetSpec",
    "EvalSpec",
    "JudgeSpec",
    "PairwiseSpec",
    "ShardSpec",
    "judge_changes",
    "pairwise_changes",
    "search_changes",
    "spec_changes",
    "stable_hash",
    "what_differs",
]

LOG_VERSION = 3
CHECKPOINT_NAME = "eval_checkpoint.jsonl"
DETAILED_NAME = "eval_results_detailed.json"
SUMMARY_NAME = "eval_results_summary.json"
QA_DIR = "qa"
"""The run's records in graphrag-eval's format (`reference.json`, `responses_<m>.json`)."""


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
    """index key -> `provider/model` of the judge (a panel: its models, comma-separated)."""
    temperature: float = 0.0
    max_tokens: int = 300
    structured_output: bool = True
    trials: int = 1
    prompts: str = ""
    """Hash of the judge prompt templates."""
    metrics: list[str] = Field(default_factory=list)
    skipped: bool = False
    """True for a `--skip-judges` run (answers only, judged later with `--rescore`)."""
    embedding_models: dict[str, str] = Field(default_factory=dict)
    """index key -> `provider/model` embedding texts for `answer_similarity` (empty when no
    metric embeds)."""
    panel: list[str] = Field(default_factory=list)
    """A judge panel's model ids as `judge.models` names them (empty: one judge). (The
    digest reads the panel from `models`.)"""
    assertions: str | None = None
    """Hash of the `assertions` scorer's prompt and pass threshold (None: not scored)."""
    scales: dict[str, list[int]] | None = None
    """`judge.scales` (None: none given)."""
    citations_max_checked: int | None = None
    """`citations.max_checked` of a run scoring `citation_support` (None: it does not)."""

    def digest(self, index_key: str) -> str:
        """The hash a record judged under this spec carries (`MethodRecord.judged_with`)."""
        if self.skipped:
            return "skipped"
        exclude = {"models", "skipped", "embedding_models", "panel"}
        if self.assertions is None:  # (absent from the hash of runs that score none)
            exclude.add("assertions")
        if not self.scales:  # (absent from the hash of runs that set none)
            exclude.add("scales")
        if self.citations_max_checked is None:
            exclude.add("citations_max_checked")
        data = self.model_dump(exclude=exclude)
        if self.embedding_models:  # (absent from the hash of runs that embed nothing)
            data["embedding_model"] = self.embedding_models.get(index_key)
        return stable_hash({**data, "model": self.models.get(index_key)})


class PairwiseSpec(BaseModel):
    """Everything that changes a head-to-head verdict (beside the judge model and sampling)."""

    criteria: dict[str, str] = Field(default_factory=dict)
    """criterion -> its description, as the prompt shows it."""
    pairs: list[tuple[str, str]] = Field(default_factory=list)
    """(a, b) compared; (m, m) is an A/A check."""
    trials: int = 2
    prompt: str = ""
    """Hash of the pairwise prompt template."""

    def digest(self, judge: JudgeSpec, index_key: str) -> str:
        """The hash a comparison judged under this spec carries (`PairRecord.judged_with`)."""
        sampling = judge.model_dump(include={"temperature", "max_tokens", "structured_output"})
        return stable_hash(
            {
                "criteria": self.criteria,
                "trials": self.trials,
                "prompt": self.prompt,
                "model": judge.models.get(index_key),
                **sampling,
            }
        )


class AnalysisSpec(BaseModel):
    """How the summary reads the records (no answer or score depends on it): what counts
    as an abstention, the evidence_recall that counts as evidence found, and how questions
    are clustered."""

    abstention_patterns: list[str] = Field(default_factory=list)
    abstention_builtin: bool = True
    evidence_threshold: float = 0.5
    cluster_by: str | None = "index_key"
    """`statistics.cluster_by`: `index_key`, a dataset field, or None (no clustering)."""
    routers: list[str] = Field(default_factory=list)
    """`routing.routers`: methods the routing analysis takes as routers."""


class ShardSpec(BaseModel):
    """One shard of a sharded run: `index` of `count`, holding `pairs` (question, method)."""

    index: int
    count: int
    pairs: int = 0
    split: str = "pair"
    """What the shard holds whole: `question` (all its methods and comparisons), or `pair`
    (a (question, method) pair: shards of gtog before issue 31, which read without it)."""

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
    pairs: int | None = None
    """(question, method) pairs the run covers (a merged run: all its shards')."""
    pairwise: PairwiseSpec | None = None
    """Head-to-head judging, when the run does it."""
    group_by: list[str] = Field(default_factory=list)
    """Item fields the results are grouped by."""
    analysis: AnalysisSpec = Field(default_factory=AnalysisSpec)
    """Abstention rules and the attribution threshold (the summary's reading only)."""
    epochs: int = 1
    """Answers per (question, method) (`epochs:`; a spec without it: 1). Not a change
    for resume: a raised k adds the new epochs, a lowered one leaves the extra out."""

    @property
    def metrics(self) -> list[str]:
        """The metrics of the run."""
        return self.judge.metrics

    def search_digest(self, method: str, index_key: str) -> str | None:
        """The hash a record searched under this spec carries (`MethodRecord.searched_with`).

        None when this spec does not cover (method, index key): it cannot judge the record.
        """
        settings = self.method_settings.get(method, {})
        if index_key not in settings or index_key not in self.indexes:
            return None
        return stable_hash({"settings": settings[index_key], "index": self.indexes[index_key]})

    def pairwise_digest(self, index_key: str) -> str | None:
        """`pairwise.digest(...)` for the index, or None when there is no pairwise judging
        or no judge for the index."""
        if self.pairwise is None or self.judge.skipped or index_key not in self.judge.models:
            return None
        return self.pairwise.digest(self.judge, index_key)

    def judge_digest(self, index_key: str) -> str | None:
        """`judge.digest(index_key)`, or None when this spec has no judge for the index."""
        if not self.judge.skipped and index_key not in self.judge.models:
            return None
        return self.judge.digest(index_key)


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
    skip = {"shard", "pairs", "config_path", "gtog_version", "graphrag_version", "analysis"}
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
    elif old.shard and new.shard and old.shard.split != new.shard.split:
        changes.append(
            f"the shards split the run by {old.shard.split} and now by {new.shard.split} "
            "(a question's methods and comparisons share one shard): start the shards over "
            "with --force"
        )
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
    if old.assertions is not None and new.assertions not in (None, old.assertions):
        changes.append("the assertion prompt or judge.assertion_threshold changed")
    if old.metrics != new.metrics:
        changes.append(f"the metrics changed ({old.metrics} -> {new.metrics})")
    for field in ("temperature", "max_tokens", "structured_output", "trials"):
        if getattr(old, field) != getattr(new, field):
            changes.append(
                f"judge.{field} changed ({getattr(old, field)} -> {getattr(new, field)})"
            )
    for key in sorted(set(old.embedding_models) & set(new.embedding_models)):
        if old.embedding_models[key] != new.embedding_models[key]:
            changes.append(
                f"the embedding model for {key!r} changed ({old.embedding_models[key]} -> "
                f"{new.embedding_models[key]})"
            )
    for key in sorted(set(old.models) & set(new.models)):
        if old.models[key] != new.models[key]:
            changes.append(
                f"the judge model for {key!r} changed ({old.models[key]} -> {new.models[key]})"
            )
    return changes


def pairwise_changes(old: EvalSpec, new: EvalSpec) -> list[str]:
    """What changed that changes head-to-head verdicts (not turning pairwise on or off)."""
    if old.pairwise is None or new.pairwise is None:
        return []
    a, b = old.pairwise, new.pairwise
    changes = []
    if a.criteria != b.criteria:
        changes.append(f"the pairwise criteria changed ({list(a.criteria)} -> {list(b.criteria)})")
    if a.trials != b.trials:
        changes.append(f"pairwise.trials changed ({a.trials} -> {b.trials})")
    if a.prompt != b.prompt:
        changes.append("the pairwise prompt changed")
    return changes


def spec_changes(old: EvalSpec, new: EvalSpec) -> list[str]:
    """Every difference that makes `old`'s records invalid for `new` (empty: compatible).

    Only methods and index keys present in both count: running a subset of a run's
    methods or adding an index is not a change; neither is turning pairwise judging on.
    """
    return (
        search_changes(old, new) + judge_changes(old.judge, new.judge) + pairwise_changes(old, new)
    )
