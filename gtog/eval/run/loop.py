"""The loop: every (question, method) searched, scored and checkpointed as it finishes.

Every pair is isolated: a failed search, a judge that gives no verdict, a timeout or an
unexpected exception becomes an error in that record and the run goes on. Each finished
record is appended to the checkpoint at once, so a resumed run does only what is missing.
What no later item can escape (a refused key, an unknown model, every item failing the same
way from the start, the error budget spent) stops the run with a `FatalRunError`; the
checkpoint stays valid for `--resume` after the fix.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from gtog.errors import FatalRunError, describe_exception
from gtog.eval.dataset import QAItem
from gtog.eval.results.records import Efficiency, MethodRecord
from gtog.eval.results.spec import CHECKPOINT_NAME
from gtog.eval.run.answers import AnswerBook
from gtog.eval.run.checkpoint import Checkpoint
from gtog.eval.run.engines import Engines
from gtog.eval.run.guard import Guard, parse_budget
from gtog.eval.run.outputs import write_results
from gtog.eval.run.prepare import prepare
from gtog.eval.run.schedule import IndexSchedule
from gtog.eval.run.state import EvalOptions, EvalRun
from gtog.eval.scoring import Judgement, score_answer
from gtog.llm import fatal_reason, run_sync
from gtog.search import SearchEngine, SearchFailed, context_threads, retrieved_sources, run_search

__all__ = ["ProgressHook", "run_evaluation", "run_evaluation_async"]

logger = logging.getLogger(__name__)

Engine = SearchEngine | AnswerBook


def _context_str(context: Any) -> str:
    if isinstance(context, dict):
        return "\n\n".join(str(v) for v in context.values())
    if isinstance(context, list):
        return "\n\n".join(str(v) for v in context)
    return str(context or "")


def _read_answer(run: EvalRun, item: QAItem, record: MethodRecord, book: AnswerBook) -> str | None:
    """Fill `record` from an answers file; a question it does not answer is the pair's error."""
    line = book.get(item)
    if line is None:
        record.error = f"no answer in {book.path.name}"
        record.error_kind = "no answer"
        return None
    record.response = line.answer
    counts = (line.latency, line.llm_calls, line.prompt_tokens, line.output_tokens)
    if None not in counts:  # a cost the file does not state is unknown, never 0
        record.efficiency = Efficiency(
            latency=line.latency,
            llm_calls=line.llm_calls,
            prompt_tokens=line.prompt_tokens,
            output_tokens=line.output_tokens,
            cost_usd=line.cost_usd,
        )
    if run.config.output.save_intermediate:
        record.context_text = line.context
    return line.context


async def _search(
    run: EvalRun, item: QAItem, record: MethodRecord, engine: Engine | BaseException
) -> str | None:
    """Fill `record` with the answer and its cost; returns the context text (None: failed)."""
    if isinstance(engine, AnswerBook):
        return _read_answer(run, item, record, engine)
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
    """(Re)judge an answered record with the run's scorers."""
    record.judgements = {}
    if not run.options.skip_judges:
        record.judgements = await score_answer(
            run.scorers[record.index_key], item, record.response or "", context
        )
    record.judged_with = run.spec.judge.digest(record.index_key)


def _redact(run: EvalRun, record: MethodRecord) -> MethodRecord:
    r = run.redactor
    record.error = r.optional(record.error)
    for j in record.judgements.values():
        j.error, j.reason = r.optional(j.error), r.optional(j.reason)
    return record


async def _evaluate_one(
    run: EvalRun, item: QAItem, method: str, engine: Engine | BaseException
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
    engines = Engines(run)
    concurrency = run.options.concurrency or run.config.concurrency
    limit = asyncio.Semaphore(concurrency)
    loop = asyncio.get_running_loop()
    # LiteLLM prepares every call in the loop's default executor (min(32, cores + 4)
    # threads, 6 on 2 cores), where the checkpoint writes also go: size it to the run
    loop.set_default_executor(
        ThreadPoolExecutor(max_workers=2 * concurrency + 4, thread_name_prefix="gtog-eval")
    )
    todo, to_judge = run.todo, run.to_judge
    guard = Guard(parse_budget(run.options.max_errors, len(todo) + len(to_judge)))
    items = {q.qid: q for q in run.items}
    redo = {(q.qid, m) for q, m in todo} | {r.key for r in to_judge}
    kept = [r for r in run.done if r.key not in redo]
    schedule = IndexSchedule(run, engines, todo)  # index by index: see schedule.py

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
            engine = await schedule.engine(item, method)
            record = await _evaluate_one(run, item, method, engine)
        if record.efficiency is not None:
            record.efficiency.queue_wait = waited
        await finish(record)
        schedule.done(item, method)

    async def judge_one(record: MethodRecord) -> None:
        async with limit:
            rejudged = await _rejudge_one(run, items[record.qid], record)
        await finish(rejudged)

    # the imports, configs and judges are never garbage: spare them the collector's full
    # passes (the indexes, loaded later, are released as the run goes)
    gc.freeze()
    try:
        with context_threads():
            async with asyncio.TaskGroup() as group:
                for r in to_judge:
                    group.create_task(judge_one(r))
                for q, m in schedule.pairs:
                    group.create_task(search_one(q, m))
    except* FatalRunError as errors:
        fatal = errors.exceptions[0]
        run.stopped = run.redactor(str(fatal))
        raise FatalRunError(run.stopped) from None
    finally:
        gc.unfreeze()
        engines.close()
        checkpoint.close()
        old = {r.key for r in kept}
        run.done = kept + [r for r in run.done if r.key in redo and r.key not in old]
    return run


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
