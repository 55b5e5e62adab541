"""The evaluation run: dataset -> method engine -> judges -> record -> checkpoint -> results.

Every (question, method) is isolated: a failed search or judge becomes an error in that
record and the run goes on. Each finished record is appended to the checkpoint at once,
so `resume=True` runs only what is missing.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gtog.errors import InputError
from gtog.eval.checkpoint import (
    CHECKPOINT_NAME,
    Checkpoint,
    fingerprint_mismatch,
    read_checkpoint,
    read_header,
)
from gtog.eval.config import EvalConfig, load_eval_config
from gtog.eval.dataset import QAItem, dataset_fingerprint, load_dataset
from gtog.eval.engines import (
    METHODS,
    SearchEngine,
    build_engine,
    context_threads,
    retrieved_sources,
    run_search,
)
from gtog.eval.judges import FIELDS, Judgement, PromptSet, judge, load_prompts
from gtog.eval.lexical import LEXICAL_METRICS
from gtog.eval.records import Efficiency, MethodRecord, RunFingerprint
from gtog.eval.results import (
    DETAILED_NAME,
    QA_DIR,
    SUMMARY_NAME,
    write_run_files,
)
from gtog.eval.shard import Shard
from gtog.llm import ChatModel, chat_model_from_config
from gtog.project import Project, load_project

__all__ = ["EvalOptions", "EvalRun", "prepare", "run_evaluation", "run_evaluation_async"]


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
    concurrency: int | None = None
    limit: int | None = None
    output_dir: Path | None = None
    progress: bool = True
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
    fingerprint: RunFingerprint
    done: list[MethodRecord] = field(default_factory=list)
    intact_bytes: int = 0
    secrets: list[str] = field(default_factory=list)
    spec: dict[str, Any] = field(default_factory=dict)
    """What shards of one run must share (written to the checkpoint header)."""

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
        """(question, method) pairs without a record yet."""
        finished = {
            r.key for r in self.done if not (self.options.retry_errors and r.error is not None)
        }
        return [(q, m) for q, m in self.pairs if (q.qid, m) not in finished]

    def header(self) -> dict[str, Any]:
        """Checkpoint header fields beside the fingerprint: spec, shard, config."""
        shard = self.options.shard
        return {
            "spec": self.spec,
            "shard": None
            if shard is None
            else {"index": shard.index, "count": shard.count, "pairs": len(self.pairs)},
            "config": str(self.config_path),
        }


def _split(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    out = [v.strip() for item in values for v in item.split(",") if v.strip()]
    return out or None


def _secrets(project: Project) -> list[str]:
    keys = []
    for models in (project.config.completion_models, project.config.embedding_models):
        for m in models.values():
            if m.api_key and len(m.api_key) >= 4:
                keys.append(m.api_key)
    return keys


def _spec(
    config: EvalConfig,
    fingerprint: RunFingerprint,
    methods: list[str],
    keys: list[str],
    limit: int | None,
) -> dict[str, Any]:
    """Everything that decides a run's results, independent of paths and concurrency."""
    settings = config.model_dump(
        exclude={"indexes": True, "dataset": True, "concurrency": True, "output": {"dir"}}
    )
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode())
    return {
        "dataset": fingerprint.dataset,
        "judge_models": fingerprint.judge_models,
        "prompts": fingerprint.prompts,
        "metrics": fingerprint.metrics,
        "methods": methods,
        "index_keys": sorted(keys),
        "limit": limit,
        "save_intermediate": config.output.save_intermediate,
        "qa_responses": config.output.qa_responses,
        "settings": digest.hexdigest()[:16],
    }


def _backup(path: Path) -> None:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    path.rename(path.with_name(f"{path.name}.{stamp}.bak"))


def prepare(options: EvalOptions) -> EvalRun:
    """Validate everything and load projects; raises InputError before any work is done."""
    root = options.root.resolve()
    if not root.is_dir():
        raise InputError(f"{options.root}: --root folder not found")
    config_path = (options.config_path or root / "eval_config.yaml").resolve()
    config = load_eval_config(config_path)

    dataset_path = Path(config.dataset.path)
    dataset_path = dataset_path if dataset_path.is_absolute() else root / dataset_path
    all_items = load_dataset(dataset_path)

    methods = _split(options.methods) or list(dict.fromkeys(config.methods))
    for m in methods:
        if m not in METHODS:
            source = "--methods" if options.methods else f"{config_path}: methods"
            raise InputError(f"{source}: unknown method {m!r} (choose from {', '.join(METHODS)})")

    keys_wanted = _split(options.index_keys)
    dataset_keys = list(dict.fromkeys(i.index_key for i in all_items))
    if keys_wanted:
        for k in keys_wanted:
            if k not in dataset_keys:
                raise InputError(f"--imdb-key: {k!r} has no questions in {dataset_path}")
    selected_keys = keys_wanted or dataset_keys
    for k in selected_keys:
        if k not in config.indexes:
            raise InputError(
                f"{dataset_path}: index key {k!r} is not listed under 'indexes' in {config_path}"
            )

    items = [i for i in all_items if i.index_key in selected_keys]
    limit = options.limit
    if limit is not None:
        if limit < 1:
            raise InputError("--limit: must be at least 1")
        per_key: dict[str, int] = {}
        kept = []
        for i in items:
            per_key[i.index_key] = per_key.get(i.index_key, 0) + 1
            if per_key[i.index_key] <= limit:
                kept.append(i)
        items = kept

    projects: dict[str, Project] = {}
    judges: dict[str, ChatModel] = {}
    secrets: list[str] = []
    for k in selected_keys:
        folder = Path(config.indexes[k])
        folder = folder if folder.is_absolute() else root / folder
        overrides = options.model_overrides(folder) if options.model_overrides else None
        project = load_project(folder, overrides)
        projects[k] = project
        secrets += _secrets(project)
        judge_id = config.judge.model or project.config.local_search.completion_model_id
        if judge_id not in project.config.completion_models:
            raise InputError(
                f"{folder / 'settings.yaml'}: judge.model {judge_id!r} is not a model id under "
                "completion_models"
            )
        judges[k] = chat_model_from_config(project.config, judge_id)

    prompts_dir = Path(config.judge.prompts_dir) if config.judge.prompts_dir else None
    if prompts_dir is not None and not prompts_dir.is_absolute():
        prompts_dir = root / prompts_dir
    if prompts_dir is not None and not prompts_dir.is_dir():
        raise InputError(f"{config_path}: judge.prompts_dir {prompts_dir} is not a folder")
    prompts = load_prompts(prompts_dir)

    output_dir = options.output_dir or Path(config.output.dir)
    output_dir = (output_dir if output_dir.is_absolute() else root / output_dir).resolve()
    if options.shard is not None:
        output_dir = output_dir / options.shard.folder
    fingerprint = RunFingerprint(
        dataset=dataset_fingerprint(all_items),
        judge_models={k: f"{j.name}@T{config.judge.temperature:g}" for k, j in judges.items()},
        prompts=prompts.fingerprint,
        metrics=config.metrics,
    )
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
        fingerprint=fingerprint,
        secrets=sorted(set(secrets), key=len, reverse=True),
        spec=_spec(config, fingerprint, methods, selected_keys, limit),
    )

    checkpoint = output_dir / CHECKPOINT_NAME
    existing = [
        p
        for p in (
            checkpoint,
            output_dir / DETAILED_NAME,
            output_dir / SUMMARY_NAME,
            output_dir / QA_DIR,
        )
        if p.exists()
    ]
    if options.resume:
        old, done, intact = read_checkpoint(checkpoint)
        why = fingerprint_mismatch(old, fingerprint)
        old_shard = read_header(checkpoint).get("shard")
        old_label = f"{old_shard['index']}/{old_shard['count']}" if old_shard else None
        new_label = options.shard.label if options.shard else None
        if old_label != new_label:
            raise InputError(
                f"{checkpoint}: cannot resume: the run was made with --shard {old_label} "
                f"and this one has --shard {new_label}"
            )
        if why and not options.force:
            raise InputError(
                f"{checkpoint}: cannot resume: {why} since the checkpoint was made "
                "(use --force to resume anyway, or a new --output)"
            )
        run.fingerprint = fingerprint.model_copy(
            update={"judge_models": {**old.judge_models, **fingerprint.judge_models}}
        )
        run.done, run.intact_bytes = done, intact
    elif existing:
        if not options.force:
            raise InputError(
                f"{output_dir}: already holds results ({existing[0].name}); use --resume to "
                "continue that run or --force to start over (old files are kept as *.bak)"
            )
        for p in existing:
            _backup(p)
    return run


def _context_str(context: Any) -> str:
    if isinstance(context, dict):
        return "\n\n".join(str(v) for v in context.values())
    if isinstance(context, list):
        return "\n\n".join(str(v) for v in context)
    return str(context or "")


def _redact(text: str | None, secrets: list[str]) -> str | None:
    if text is None:
        return None
    for s in secrets:
        text = text.replace(s, "***")
    return text


async def _evaluate_one(
    run: EvalRun, item: QAItem, method: str, engine: SearchEngine | BaseException
) -> MethodRecord:
    record = MethodRecord(
        qid=item.qid,
        index_key=item.index_key,
        question=item.question,
        reference=item.reference,
        method=method,
    )
    if isinstance(engine, BaseException):
        record.error = f"could not build the {method} engine: {type(engine).__name__}: {engine}"
        record.error = _redact(record.error, run.secrets)
        return record
    started = time.perf_counter()
    try:
        result = await run_search(engine, item.question)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        record.error = _redact(f"{type(exc).__name__}: {first}"[:1000], run.secrets)
        record.efficiency = Efficiency(
            latency=time.perf_counter() - started, llm_calls=0, prompt_tokens=0, output_tokens=0
        )
        return record
    answer = result.response if isinstance(result.response, str) else str(result.response)
    context = _context_str(result.context_text)
    record.response = answer
    record.efficiency = Efficiency(
        latency=result.completion_time,
        llm_calls=result.llm_calls,
        prompt_tokens=result.prompt_tokens,
        output_tokens=result.output_tokens,
        llm_calls_categories=result.llm_calls_categories or {},
        prompt_tokens_categories=result.prompt_tokens_categories or {},
        output_tokens_categories=result.output_tokens_categories or {},
    )
    if run.config.output.save_intermediate:
        record.context_text = context
        record.sources = retrieved_sources(result)
    values = {
        "question": item.question,
        "ground_truth": item.reference,
        "predicted": answer,
        "answer": answer,
        "context": context,
    }
    jc = run.config.judge
    metrics = [m for m in run.config.metrics if m in FIELDS]
    verdicts = await asyncio.gather(
        *(
            judge(
                metric,
                run.judges[item.index_key],
                run.prompts,
                {f: values[f] for f in FIELDS[metric]},
                temperature=jc.temperature,
                max_tokens=jc.max_tokens,
                json_mode=jc.structured_output,
            )
            for metric in metrics
        )
    )
    for metric, verdict in zip(metrics, verdicts, strict=True):
        verdict.error = _redact(verdict.error, run.secrets)
        record.judgements[metric] = verdict
    for metric in run.config.metrics:
        if metric in LEXICAL_METRICS:
            value = LEXICAL_METRICS[metric](item.reference, answer)
            record.judgements[metric] = (
                Judgement(score=value)
                if value is not None
                else Judgement(error="the reference has no content words")
            )
    return record


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
                options = {
                    "response_type": self._run.config.response_type,
                    "tog_search": self._run.config.tog_search,
                }
                try:
                    self._built[slot] = await build_engine(method, self._run.projects[key], options)
                except Exception as exc:  # recorded per question; the run goes on
                    self._built[slot] = exc
            return self._built[slot]


ProgressHook = Callable[[MethodRecord], None]


async def run_evaluation_async(run: EvalRun, on_record: ProgressHook | None = None) -> EvalRun:
    """Run what is left of `run`, appending each record to the checkpoint as it finishes."""
    path = run.output_dir / CHECKPOINT_NAME
    if run.options.resume:
        checkpoint = Checkpoint.reopen(path, run.intact_bytes, run.fingerprint, run.header())
    else:
        checkpoint = Checkpoint.create(path, run.fingerprint, run.header())
    engines = _Engines(run)
    concurrency = run.options.concurrency or run.config.concurrency
    limit = asyncio.Semaphore(concurrency)
    # LiteLLM prepares every call in the loop's default executor (min(32, cores + 4)
    # threads, 6 on 2 cores), where the checkpoint writes also go: size it to the run
    asyncio.get_running_loop().set_default_executor(
        ThreadPoolExecutor(max_workers=2 * concurrency + 4, thread_name_prefix="gtog-eval")
    )
    todo = run.todo
    retried = {(q.qid, m) for q, m in todo}
    run.done = [r for r in run.done if r.key not in retried]

    async def one(item: QAItem, method: str) -> None:
        queued = time.perf_counter()
        async with limit:
            waited = time.perf_counter() - queued
            engine = await engines.get(item.index_key, method)
            record = await _evaluate_one(run, item, method, engine)
        if record.efficiency is not None:
            record.efficiency.queue_wait = waited
        # the write is fsynced: off the event loop, so other questions go on meanwhile
        await asyncio.get_running_loop().run_in_executor(None, checkpoint.append, record)
        run.done.append(record)
        if on_record is not None:
            on_record(record)

    try:
        with context_threads(concurrency):
            await asyncio.gather(*(one(q, m) for q, m in todo))
    finally:
        checkpoint.close()
    return run


def write_results(run: EvalRun) -> tuple[Path, Path]:
    """Write the detailed and summary JSON files (atomically) for all records so far."""
    records = [r for r in run.done if r.method in run.methods]
    metadata = {
        "timestamp": dt.datetime.now().isoformat(timespec="seconds"),
        "total_questions": len({r.qid for r in records}),
        "methods": run.methods,
        "metrics": run.config.metrics,
        "index_keys": sorted(run.projects),
        "judge_models": run.fingerprint.judge_models,
        "judge_prompts": run.prompts.fingerprint,
        "dataset": run.fingerprint.dataset,
        "config": str(run.config_path),
    }
    if run.options.shard is not None:
        metadata["shard"] = run.options.shard.label
    return write_run_files(
        run.output_dir,
        records,
        run.methods,
        run.config.metrics,
        metadata,
        keep_intermediate=run.config.output.save_intermediate,
        qa_files=run.config.output.qa_responses,
    )


def run_evaluation(options: EvalOptions, on_record: ProgressHook | None = None) -> EvalRun:
    """Prepare, run and write results (blocking)."""
    run = prepare(options)
    try:
        asyncio.run(run_evaluation_async(run, on_record))
    finally:
        if run.done:
            write_results(run)
    return run
