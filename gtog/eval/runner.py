"""The evaluation run: dataset -> method engine -> judges -> record -> checkpoint -> results.

Every (question, method) is isolated: a failed search, a judge that gives no verdict, a
timeout or an unexpected exception becomes an error in that record and the run goes on.
Each finished record is appended to the checkpoint at once, so `resume=True` runs only
what is missing. What no later item can escape (a refused key, an unknown model, every
item failing the same way from the start, the error budget spent) stops the run with a
`FatalRunError`; the checkpoint stays valid for `--resume` after the fix.

`prepare()` validates everything before any model is called; `run_evaluation_async()`
does the work; `write_results()` writes the detailed and summary JSON and the qa/ files.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import gc
import importlib.metadata
import logging
import math
import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gtog
from gtog.errors import FatalRunError, InputError, describe_exception
from gtog.eval.checkpoint import Checkpoint, read_checkpoint
from gtog.eval.config import DEFAULT_RESPONSE_TYPE, EvalConfig, load_eval_config
from gtog.eval.dataset import QAItem, dataset_fingerprint, load_dataset
from gtog.eval.judges import FIELDS, Judgement, PromptSet, judge_trials, load_prompts
from gtog.eval.lexical import CONTEXT_METRICS, LEXICAL_METRICS
from gtog.eval.lock import OutputLock
from gtog.eval.log import (
    CHECKPOINT_NAME,
    DETAILED_NAME,
    SUMMARY_NAME,
    DatasetSpec,
    EvalSpec,
    JudgeSpec,
    ShardSpec,
    search_changes,
    spec_changes,
    stable_hash,
)
from gtog.eval.records import Efficiency, MethodRecord
from gtog.eval.results import QA_DIR, qa_reference, qa_responses, result_views
from gtog.eval.shard import Shard
from gtog.files import write_json_atomic
from gtog.llm import ChatModel, chat_model_from_config, fatal_reason, run_sync
from gtog.project import Project, load_project
from gtog.redact import Redactor
from gtog.search import (
    METHODS,
    SearchEngine,
    SearchFailed,
    build_engine,
    context_threads,
    retrieved_sources,
    run_search,
)

__all__ = [
    "EvalOptions",
    "EvalRun",
    "prepare",
    "run_evaluation",
    "run_evaluation_async",
    "write_outputs",
    "write_results",
]

logger = logging.getLogger(__name__)

EARLY_FAILURES = 5
"""Stop when this many first finished pairs all failed the same way and none succeeded."""


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
    """Run only this shard's (question, method) pairs, into `<output>/shard-i-of-n`."""


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
    output_dir: Path
    spec: EvalSpec
    redactor: Redactor
    done: list[MethodRecord] = field(default_factory=list)
    intact_bytes: int = 0
    mode: str = "new"
    """`new`, `resume`, `rescore`, or `complete` (a finished run of the same spec)."""
    lock: OutputLock | None = None
    stopped: str | None = None
    """Why the run stopped early (a fatal error), if it did."""
    dataset_warnings: list[str] = field(default_factory=list)
    """One-line notes on the dataset (repeated questions, skipped files) for the caller."""

    @property
    def pairs(self) -> list[tuple[QAItem, str]]:
        """Every (question, method) pair of this run (of its shard, if sharded)."""
        shard = self.options.shard
        return [
            (q, m)
            for q in self.items
            for m in self.methods
            if shard is None or shard.holds(q.qid, m)
        ]

    @property
    def todo(self) -> list[tuple[QAItem, str]]:
        """(question, method) pairs to search: no record yet, or (retry_errors) a failed one."""
        if self.mode == "rescore":
            return []
        finished = {
            r.key for r in self.done if not (self.options.retry_errors and r.error is not None)
        }
        return [(q, m) for q, m in self.pairs if (q.qid, m) not in finished]

    @property
    def to_judge(self) -> list[MethodRecord]:
        """Answered records to (re)judge without searching again."""
        if self.options.skip_judges:
            return []
        wanted = {(q.qid, m) for q, m in self.pairs}
        searching = {(q.qid, m) for q, m in self.todo}
        out = []
        for r in self.done:
            if r.key not in wanted or r.key in searching or r.error is not None:
                continue
            # --force resumes despite a changed judge: earlier verdicts are kept as they are
            stale = not self.options.force and r.judged_with != self.spec.judge.digest(r.index_key)
            retry = self.options.retry_errors and r.judge_failed
            if self.mode == "rescore" or stale or retry:
                out.append(r)
        return out

    def close(self) -> None:
        """Release the output folder."""
        if self.lock is not None:
            self.lock.release()
            self.lock = None


# -- prepare: validate everything before any work ---------------------------------------


def _split(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    out = [v.strip() for item in values for v in item.split(",") if v.strip()]
    return out or None


def _load_config(options: EvalOptions) -> tuple[Path, Path, EvalConfig]:
    root = options.root.resolve()
    if not root.is_dir():
        raise InputError(f"{options.root}: --root folder not found")
    config_path = (options.config_path or root / "eval_config.yaml").resolve()
    return root, config_path, load_eval_config(config_path)


def _select_methods(options: EvalOptions, config: EvalConfig, config_path: Path) -> list[str]:
    methods = _split(options.methods) or list(dict.fromkeys(config.methods))
    for m in methods:
        if m not in METHODS:
            source = "--methods" if options.methods else f"{config_path}: methods"
            raise InputError(f"{source}: unknown method {m!r} (choose from {', '.join(METHODS)})")
    if isinstance(config.response_type, dict):
        for m in config.response_type:
            if m not in METHODS:
                raise InputError(
                    f"{config_path}: response_type: unknown method {m!r} "
                    f"(choose from {', '.join(METHODS)})"
                )
    return methods


def _select_items(
    options: EvalOptions, config: EvalConfig, config_path: Path, path: Path, items: list[QAItem]
) -> tuple[list[QAItem], list[str]]:
    keys_wanted = _split(options.index_keys)
    dataset_keys = list(dict.fromkeys(i.index_key for i in items))
    for k in keys_wanted or []:
        if k not in dataset_keys:
            raise InputError(f"--index-key/--imdb-key: {k!r} has no questions in {path}")
    selected = keys_wanted or dataset_keys
    for k in selected:
        if k not in config.indexes:
            raise InputError(
                f"{path}: index key {k!r} is not listed under 'indexes' in {config_path}"
            )
    kept = [i for i in items if i.index_key in selected]
    if options.limit is not None:
        if options.limit < 1:
            raise InputError("--limit: must be at least 1")
        seen: dict[str, int] = {}
        limited = []
        for i in kept:
            seen[i.index_key] = seen.get(i.index_key, 0) + 1
            if seen[i.index_key] <= options.limit:
                limited.append(i)
        kept = limited
    return kept, selected


def _load_projects(
    root: Path, config: EvalConfig, keys: list[str], options: EvalOptions
) -> dict[str, Project]:
    projects = {}
    for k in keys:
        folder = Path(config.indexes[k])
        folder = folder if folder.is_absolute() else root / folder
        overrides = options.model_overrides(folder) if options.model_overrides else None
        projects[k] = load_project(folder, overrides)
    return projects


def _load_judges(config: EvalConfig, projects: dict[str, Project]) -> dict[str, ChatModel]:
    judges = {}
    for k, project in projects.items():
        judge_id = config.judge.model or project.config.local_search.completion_model_id
        if judge_id not in project.config.completion_models:
            raise InputError(
                f"{project.settings_path}: judge.model {judge_id!r} is not a model id under "
                "completion_models"
            )
        judges[k] = chat_model_from_config(project.config, judge_id)
    return judges


def _load_judge_prompts(root: Path, config: EvalConfig, config_path: Path) -> PromptSet:
    prompts_dir = Path(config.judge.prompts_dir) if config.judge.prompts_dir else None
    if prompts_dir is not None and not prompts_dir.is_absolute():
        prompts_dir = root / prompts_dir
    if prompts_dir is not None and not prompts_dir.is_dir():
        raise InputError(f"{config_path}: judge.prompts_dir {prompts_dir} is not a folder")
    return load_prompts(prompts_dir)


def _model_spec(project: Project, model_id: str, completion: bool) -> dict[str, Any]:
    cfg = (
        project.config.get_completion_model_config(model_id)
        if completion
        else project.config.get_embedding_model_config(model_id)
    )
    # not api_base: the same model behind another address (e.g. --local's port, chosen
    # afresh each run) gives the same answers
    return {
        "id": model_id,
        "model": f"{cfg.model_provider}/{cfg.model}",
        "call_args": cfg.call_args,
    }


def _method_settings(
    method: str, project: Project, config: EvalConfig, config_path: Path
) -> dict[str, Any]:
    """The effective settings of `method` on `project` (what changes its answers)."""
    c = project.config
    if method == "tog":
        from gtog.tog.settings import load_tog_settings, validate_tog_overrides
        from gtog.tog.templates import load_prompts as load_tog_prompts

        validate_tog_overrides(config.tog_search, str(config_path))
        overrides = _engine_options("tog", config)["tog_search"]
        tog = load_tog_settings(project.root, overrides)
        prompts = load_tog_prompts(tog, project.root)
        return {
            "tog_search": tog.model_dump(exclude={"prompts"}),
            "prompts": stable_hash(prompts.__dict__),
            "completion": _model_spec(
                project, tog.completion_model_id or c.local_search.completion_model_id, True
            ),
            "embedding": _model_spec(
                project, tog.embedding_model_id or c.local_search.embedding_model_id, False
            ),
        }
    search = c.local_search if method == "local" else c.basic_search
    prompt = project.prompt(search.prompt)
    return {
        f"{method}_search": search.model_dump(mode="json", exclude={"prompt"}),
        "prompt": stable_hash(prompt) if prompt is not None else "graphrag default",
        "response_type": _engine_options(method, config)["response_type"],
        "completion": _model_spec(project, search.completion_model_id, True),
        "embedding": _model_spec(project, search.embedding_model_id, False),
    }


def _engine_options(method: str, config: EvalConfig) -> dict[str, Any]:
    """What `build_engine` gets: the method's response type and the ToG overrides."""
    response_type = config.response_type_for(method)
    tog_search = dict(config.tog_search)
    if method == "tog" and response_type is not None:
        tog_search = {"response_type": response_type, **tog_search}
    return {"response_type": response_type or DEFAULT_RESPONSE_TYPE, "tog_search": tog_search}


def _index_hash(project: Project) -> str:
    """A hash of the index's output tables (file storage), else of where they are."""
    out = project.config.output_storage
    if getattr(out, "type", "file") != "file":
        return stable_hash(out.model_dump(mode="json"))
    base = Path(out.base_dir or "output")
    base = base if base.is_absolute() else project.root / base
    import hashlib

    h = hashlib.sha256()
    for table in sorted(base.glob("*.parquet")):
        h.update(table.name.encode() + b"\0")
        with table.open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()[:16]


def _build_spec(run_parts: dict[str, Any], options: EvalOptions, config: EvalConfig) -> EvalSpec:
    projects: dict[str, Project] = run_parts["projects"]
    methods: list[str] = run_parts["methods"]
    judges: dict[str, ChatModel] = run_parts["judges"]
    all_items: list[QAItem] = run_parts["all_items"]
    jc = config.judge
    return EvalSpec(
        gtog_version=gtog.__version__,
        graphrag_version=importlib.metadata.version("graphrag"),
        config_path=str(run_parts["config_path"]),
        dataset=DatasetSpec(
            path=str(run_parts["dataset_path"]),
            hash=dataset_fingerprint(all_items),
            questions=len(all_items),
            repeats=run_parts["repeats"],
        ),
        methods=methods,
        limit=options.limit,
        method_settings={
            m: {
                k: _method_settings(m, p, config, run_parts["config_path"])
                for k, p in projects.items()
            }
            for m in methods
        },
        indexes={k: _index_hash(p) for k, p in projects.items()},
        judge=JudgeSpec(
            models={k: f"{j.name}@T{jc.temperature:g}" for k, j in judges.items()},
            temperature=jc.temperature,
            max_tokens=jc.max_tokens,
            structured_output=jc.structured_output,
            trials=jc.trials,
            prompts=run_parts["prompts"].fingerprint,
            metrics=[] if options.skip_judges else list(config.metrics),
            skipped=options.skip_judges,
        ),
    )


def _secrets(projects: dict[str, Project]) -> list[str]:
    keys: list[str] = []
    for project in projects.values():
        for models in (project.config.completion_models, project.config.embedding_models):
            keys += [m.api_key for m in models.values() if m.api_key]
    keys += [
        v
        for k, v in os.environ.items()
        if k.upper().endswith(("_KEY", "_TOKEN", "_SECRET", "API_KEY")) and v
    ]
    return keys


def _backup(path: Path) -> None:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    path.rename(path.with_name(f"{path.name}.{stamp}.bak"))


def _refusal(path: Path, changes: list[str], judge_only: bool) -> InputError:
    hint = "use --force to resume anyway, or a new --output"
    if judge_only:
        hint = "use --rescore to re-judge the saved answers, --force to resume anyway"
    return InputError(f"{path}: cannot resume: {'; '.join(changes)} ({hint})")


def _open_output(run: EvalRun) -> None:
    """Check the output folder against the options: resume, rescore, refuse or back up."""
    options, out = run.options, run.output_dir
    checkpoint = out / CHECKPOINT_NAME
    existing = [
        p for p in (checkpoint, out / DETAILED_NAME, out / SUMMARY_NAME, out / QA_DIR) if p.exists()
    ]
    if options.rescore:
        old, done, intact = read_checkpoint(checkpoint)
        run.spec = old.model_copy(update={"judge": run.spec.judge})
        run.done, run.intact_bytes, run.mode = done, intact, "rescore"
        return
    if options.resume:
        old, done, intact = read_checkpoint(checkpoint)
        changes = spec_changes(old, run.spec)
        if changes and not options.force:
            only_judge = not search_changes(old, run.spec)
            raise _refusal(checkpoint, changes, only_judge)
        run.done, run.intact_bytes, run.mode = done, intact, "resume"
        return
    if not existing:
        return
    if not options.force:
        if checkpoint.is_file():
            old, done, intact = read_checkpoint(checkpoint)
            if not spec_changes(old, run.spec):
                run.done, run.intact_bytes, run.mode = done, intact, "resume"
                if not run.todo and not run.to_judge:
                    run.mode = "complete"
                    return
        raise InputError(
            f"{out}: already holds results ({existing[0].name}); use --resume to "
            "continue that run or --force to start over (old files are kept as *.bak)"
        )
    for p in existing:
        _backup(p)


def prepare(options: EvalOptions) -> EvalRun:
    """Validate everything and load projects; raises InputError before any work is done.

    The output folder is locked for this run (`EvalRun.close()` releases it).
    """
    if options.rescore and (options.resume or options.skip_judges):
        raise InputError("--rescore: not with --resume or --skip-judges")
    root, config_path, config = _load_config(options)

    def under_root(value: str | Path) -> Path:
        path = Path(value)
        return path if path.is_absolute() else root / path

    output_dir = under_root(options.output_dir or Path(config.output.dir)).resolve()
    dataset_path = under_root(config.dataset.path) if config.dataset.path else None
    dataset = load_dataset(
        dataset_path,
        list(config.indexes),
        files={k: under_root(f) for k, f in config.dataset.files.items()},
        exclude=[output_dir],
    )
    all_items = dataset.items
    if "metrics" not in config.model_fields_set and dataset.has_evidence:
        config = config.model_copy(update={"metrics": [*config.metrics, "evidence_recall"]})
    dataset_path = dataset_path or config_path
    if "evidence_recall" in config.metrics and not dataset.has_evidence:
        dataset.warnings.append(
            f"{config_path}: metrics: evidence_recall is asked for but no question in the "
            "dataset has gold evidence (a 'context' field); it stays unscored"
        )
    methods = _select_methods(options, config, config_path)
    items, keys = _select_items(options, config, config_path, dataset_path, all_items)
    projects = _load_projects(root, config, keys, options)
    judges = _load_judges(config, projects)
    prompts = _load_judge_prompts(root, config, config_path)
    parts = {
        "projects": projects,
        "methods": methods,
        "judges": judges,
        "all_items": all_items,
        "config_path": config_path,
        "dataset_path": dataset_path,
        "prompts": prompts,
        "repeats": dataset.repeated_questions,
    }
    spec = _build_spec(parts, options, config)
    _parse_budget(options.max_errors, 1)
    if options.shard is not None:
        output_dir = output_dir / options.shard.folder
    run = EvalRun(
        options=options,
        config=config,
        config_path=config_path,
        items=items,
        methods=methods,
        projects=projects,
        judges=judges,
        prompts=prompts,
        output_dir=output_dir,
        spec=spec,
        redactor=Redactor(_secrets(projects)),
        dataset_warnings=dataset.warnings,
    )
    if options.shard is not None:
        run.spec.shard = ShardSpec(
            index=options.shard.index, count=options.shard.count, pairs=len(run.pairs)
        )
    run.lock = OutputLock(output_dir).acquire()
    try:
        _open_output(run)
    except BaseException:
        run.close()
        raise
    return run


# -- one (question, method) -----------------------------------------------------------


def _context_str(context: Any) -> str:
    if isinstance(context, dict):
        return "\n\n".join(str(v) for v in context.values())
    if isinstance(context, list):
        return "\n\n".join(str(v) for v in context)
    return str(context or "")


async def _search(
    run: EvalRun, item: QAItem, record: MethodRecord, engine: SearchEngine | BaseException
) -> str | None:
    """Fill `record` with the answer and its cost; returns the context text (None: failed)."""
    if isinstance(engine, BaseException):
        if fatal_reason(engine) is not None:
            raise engine
        record.error = f"could not build the {record.method} engine: {describe_exception(engine)}"
        record.error_kind = "engine"
        return None
    try:
        outcome = await run_search(engine, item.question, timeout=run.config.timeouts.search)
    except SearchFailed as failed:
        record.error = str(failed)
        record.error_kind = "timeout" if str(failed).startswith("timed out") else _kind(failed)
        record.efficiency = _efficiency(failed.usage, failed.seconds)
        return None
    result = outcome.result
    record.response = result.response if isinstance(result.response, str) else str(result.response)
    record.efficiency = _efficiency(outcome.usage, outcome.seconds, result)
    context = _context_str(result.context_text)
    if run.config.output.save_intermediate:
        record.context_text = context
        record.sources = retrieved_sources(result)
    return context


def _kind(failed: SearchFailed) -> str:
    cause = failed.__cause__
    return type(cause).__name__ if cause is not None else "search"


def _efficiency(usage: Any, seconds: float, result: Any = None) -> Efficiency:
    calls = dict(getattr(result, "llm_calls_categories", None) or usage.llm_calls)
    prompt = dict(getattr(result, "prompt_tokens_categories", None) or usage.prompt_tokens)
    output = dict(getattr(result, "output_tokens_categories", None) or usage.output_tokens)
    return Efficiency(
        latency=seconds,
        llm_calls=usage.total_calls,
        prompt_tokens=usage.total_prompt_tokens,
        output_tokens=usage.total_output_tokens,
        llm_calls_categories=calls,
        prompt_tokens_categories=prompt,
        output_tokens_categories=output,
        cost_usd=usage.cost_usd if usage.total_calls else 0.0,
    )


async def _judge(run: EvalRun, item: QAItem, record: MethodRecord, context: str | None) -> None:
    """(Re)judge an answered record with the run's metrics (LLM judges and lexical ones)."""
    record.judgements = {}
    if run.options.skip_judges:
        record.judged_with = run.spec.judge.digest(record.index_key)
        return
    answer = record.response or ""
    values = {
        "question": record.question,
        "ground_truth": record.reference,
        "predicted": answer,
        "answer": answer,
        "context": context,
    }
    jc = run.config.judge
    llm_metrics = [m for m in run.config.metrics if m in FIELDS]
    missing = [m for m in llm_metrics if any(values[f] is None for f in FIELDS[m])]
    asked = [m for m in llm_metrics if m not in missing]
    verdicts = await asyncio.gather(
        *(
            judge_trials(
                metric,
                run.judges[record.index_key],
                run.prompts,
                {f: str(values[f]) for f in FIELDS[metric]},
                trials=jc.trials,
                temperature=jc.temperature,
                max_tokens=jc.max_tokens,
                json_mode=jc.structured_output,
                timeout=run.config.timeouts.judge,
            )
            for metric in asked
        )
    )
    for metric in run.config.metrics:
        if metric in missing:
            record.judgements[metric] = Judgement.unscored(
                "no saved context to judge (output.save_intermediate was off)"
            )
        elif metric in LEXICAL_METRICS:
            value = LEXICAL_METRICS[metric](item.reference, answer)
            record.judgements[metric] = (
                Judgement(score=value)
                if value is not None
                else Judgement.unscored("the reference has no content words")
            )
        elif metric in CONTEXT_METRICS and item.evidence:
            record.judgements[metric] = _context_metric(metric, item.evidence, context)
    for metric, verdict in zip(asked, verdicts, strict=True):
        record.judgements[metric] = verdict
    record.judgements = {
        m: record.judgements[m] for m in run.config.metrics if m in record.judgements
    }
    record.judged_with = run.spec.judge.digest(record.index_key)


def _context_metric(metric: str, evidence: str, context: str | None) -> Judgement:
    """An LLM-free metric of the gold evidence against the context the method answered from."""
    if not (context or "").strip():
        return Judgement.unscored("no retrieved context to look for the evidence in")
    value = CONTEXT_METRICS[metric](evidence, context or "")
    if value is None:
        return Judgement.unscored("the evidence has no content words")
    return Judgement(score=value)


def _redact(run: EvalRun, record: MethodRecord) -> MethodRecord:
    r = run.redactor
    record.error = r.optional(record.error)
    for j in record.judgements.values():
        j.error, j.reason = r.optional(j.error), r.optional(j.reason)
    return record


async def _evaluate_one(
    run: EvalRun, item: QAItem, method: str, engine: SearchEngine | BaseException
) -> MethodRecord:
    record = MethodRecord(
        qid=item.qid,
        index_key=item.index_key,
        question=item.question,
        reference=item.reference,
        method=method,
        evidence=item.evidence,
    )
    try:
        context = await _search(run, item, record, engine)
        if record.error is None:
            await _judge(run, item, record, context)
    except FatalRunError:
        raise
    except Exception as exc:
        if fatal_reason(exc) is not None:
            raise
        logger.exception("unexpected error on %s / %s", item.qid, method)
        record.error = f"internal error: {describe_exception(exc)}"
        record.error_kind = "internal"
    return _redact(run, record)


async def _rejudge_one(run: EvalRun, item: QAItem, record: MethodRecord) -> MethodRecord:
    record = record.model_copy(deep=True)
    try:
        await _judge(run, item, record, record.context_text)
    except FatalRunError:
        raise
    except Exception as exc:
        if fatal_reason(exc) is not None:
            raise
        logger.exception("unexpected error judging %s / %s", record.qid, record.method)
        for metric in run.config.metrics:
            record.judgements[metric] = Judgement.unscored(
                f"internal error: {describe_exception(exc)}"
            )
    return _redact(run, record)


class _Engines:
    """Engines built once per (index, method), on first use."""

    def __init__(self, run: EvalRun) -> None:
        self._run = run
        self._built: dict[tuple[str, str], SearchEngine | BaseException] = {}
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}

    async def get(self, key: str, method: str) -> SearchEngine | BaseException:
        slot = (key, method)
        lock = self._locks.setdefault(slot, asyncio.Lock())
        async with lock:
            if slot not in self._built:
                options = _engine_options(method, self._run.config)
                try:
                    self._built[slot] = await build_engine(method, self._run.projects[key], options)
                except Exception as exc:  # recorded per question; the run goes on
                    logger.exception("could not build the %s engine for %s", method, key)
                    self._built[slot] = exc
            return self._built[slot]

    async def build(self, slots: Iterable[tuple[str, str]]) -> None:
        """Build these engines now, before any question runs (a build holds the loop)."""
        for key, method in sorted(set(slots)):
            await self.get(key, method)


def _parse_budget(value: str | None, total: int) -> int | None:
    """`--max-errors`: a count or a share (`5%`) of `total` pairs; None = no budget."""
    if value is None:
        return None
    text = str(value).strip()
    try:
        if text.endswith("%"):
            share = float(text[:-1])
            if not 0 <= share <= 100:
                raise ValueError
            return math.floor(share / 100 * total)
        count = int(text)
        if count < 0:
            raise ValueError
        return count
    except ValueError:
        raise InputError(
            f"--max-errors: {value!r} is not a count (10) or a share of the pairs (5%)"
        ) from None


class _Guard:
    """Stops the run when failures show that no later item can succeed."""

    def __init__(self, budget: int | None) -> None:
        self.budget = budget
        self.failed = 0
        self.succeeded = 0
        self.first_kinds: list[str] = []

    def observe(self, record: MethodRecord) -> None:
        kind = _failure_kind(record)
        if kind is None:
            self.succeeded += 1
            return
        self.failed += 1 if record.error else 0
        if not self.succeeded and len(self.first_kinds) < EARLY_FAILURES:
            self.first_kinds.append(kind)
            if len(self.first_kinds) == EARLY_FAILURES and len(set(self.first_kinds)) == 1:
                raise FatalRunError(
                    f"the first {EARLY_FAILURES} answers all failed ({kind}: "
                    f"{_failure_message(record)}); stopped; fix the cause and rerun with --resume"
                )
        if self.budget is not None and self.failed > self.budget:
            raise FatalRunError(
                f"error budget spent: {self.failed} searches failed (--max-errors allows "
                f"{self.budget}); last: {_failure_message(record)}; rerun with --resume "
                "--retry-errors after the fix"
            )


def _failure_kind(record: MethodRecord) -> str | None:
    if record.error:
        return f"search {record.error_kind or 'error'}"
    llm = [j for m, j in record.judgements.items() if m in FIELDS]
    if llm and all(j.error for j in llm):
        return "judges " + (llm[0].error or "").split(":", 1)[0][:40]
    return None


def _failure_message(record: MethodRecord) -> str:
    if record.error:
        return record.error[:200]
    return next((j.error or "" for j in record.judgements.values() if j.error), "")[:200]


ProgressHook = Callable[[MethodRecord], None]


async def run_evaluation_async(run: EvalRun, on_record: ProgressHook | None = None) -> EvalRun:
    """Run what is left of `run`, appending each record to the checkpoint as it finishes.

    Raises `FatalRunError` (after the finished records are safe on disk) when the run
    must stop; `run.stopped` says why.
    """
    path = run.output_dir / CHECKPOINT_NAME
    if run.mode in ("resume", "rescore", "complete"):
        checkpoint = Checkpoint.reopen(path, run.intact_bytes, run.spec)
    else:
        checkpoint = Checkpoint.create(path, run.spec)
    engines = _Engines(run)
    concurrency = run.options.concurrency or run.config.concurrency
    limit = asyncio.Semaphore(concurrency)
    loop = asyncio.get_running_loop()
    # LiteLLM prepares every call in the loop's default executor (min(32, cores + 4)
    # threads, 6 on 2 cores), where the checkpoint writes also go: size it to the run
    loop.set_default_executor(
        ThreadPoolExecutor(max_workers=2 * concurrency + 4, thread_name_prefix="gtog-eval")
    )
    todo, to_judge = run.todo, run.to_judge
    guard = _Guard(_parse_budget(run.options.max_errors, len(todo) + len(to_judge)))
    items = {q.qid: q for q in run.items}
    redo = {(q.qid, m) for q, m in todo} | {r.key for r in to_judge}
    kept = [r for r in run.done if r.key not in redo]

    async def finish(record: MethodRecord) -> None:
        # the write is fsynced: off the event loop, so other questions go on meanwhile
        await loop.run_in_executor(None, checkpoint.append, record)
        kept.append(record)
        if on_record is not None:
            on_record(record)
        guard.observe(record)

    async def search_one(item: QAItem, method: str) -> None:
        queued = time.perf_counter()
        async with limit:
            waited = time.perf_counter() - queued
            engine = await engines.get(item.index_key, method)
            record = await _evaluate_one(run, item, method, engine)
        if record.efficiency is not None:
            record.efficiency.queue_wait = waited
        await finish(record)

    async def judge_one(record: MethodRecord) -> None:
        async with limit:
            rejudged = await _rejudge_one(run, items[record.qid], record)
        await finish(rejudged)

    await engines.build((q.index_key, m) for q, m in todo)
    # the indexes, engines and imports are never garbage: spare them the collector's
    # full passes, which otherwise stall every question for a third of a second
    gc.freeze()
    try:
        with context_threads():
            async with asyncio.TaskGroup() as group:
                for r in to_judge:
                    group.create_task(judge_one(r))
                for q, m in todo:
                    group.create_task(search_one(q, m))
    except* FatalRunError as errors:
        fatal = errors.exceptions[0]
        run.stopped = run.redactor(str(fatal))
        raise FatalRunError(run.stopped) from None
    finally:
        gc.unfreeze()
        checkpoint.close()
        old = {r.key for r in kept}
        run.done = kept + [r for r in run.done if r.key in redo and r.key not in old]
    return run


def write_outputs(
    output_dir: Path,
    spec: EvalSpec,
    records: list[MethodRecord],
    methods: list[str],
    *,
    keep_intermediate: bool = True,
    qa_files: bool = True,
    stopped: str | None = None,
) -> tuple[Path, Path]:
    """Write a run's detailed and summary JSON, qa/ files, report.html and CSV, atomically."""
    from gtog.eval.publish import write_report

    detailed_data, summary = result_views(
        spec, records, methods, keep_intermediate=keep_intermediate, stopped=stopped
    )
    detailed = output_dir / DETAILED_NAME
    summary_path = output_dir / SUMMARY_NAME
    write_json_atomic(detailed, detailed_data)
    write_json_atomic(summary_path, summary)
    if qa_files:
        qa_dir = output_dir / QA_DIR
        write_json_atomic(qa_dir / "reference.json", qa_reference(records))
        for method in methods:
            write_json_atomic(qa_dir / f"responses_{method}.json", qa_responses(records, method))
    write_report(output_dir)  # report.html + eval_results.csv, from the files just written
    return detailed, summary_path


def write_results(run: EvalRun) -> tuple[Path, Path]:
    """Write everything for the records of `run` so far (see `write_outputs`)."""
    return write_outputs(
        run.output_dir,
        run.spec,
        [r for r in run.done if r.method in run.methods],
        run.methods,
        keep_intermediate=run.config.output.save_intermediate,
        qa_files=run.config.output.qa_responses,
        stopped=run.stopped,
    )


def run_evaluation(options: EvalOptions, on_record: ProgressHook | None = None) -> EvalRun:
    """Prepare, run and write results (blocking); the output folder is released after."""
    run = prepare(options)
    try:
        if run.mode != "complete":
            try:
                run_sync(run_evaluation_async(run, on_record))
            finally:
                if run.done:
                    write_results(run)
    finally:
        run.close()
    return run
