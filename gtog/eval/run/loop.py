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
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from gtog.errors import FatalRunError, describe_exception
from gtog.eval.dataset import QAItem
from gtog.eval.results.currency import searched_elsewhere
from gtog.eval.results.errors import error_kind
from gtog.eval.results.records import (
    Efficiency,
    MethodRecord,
    PairRecord,
    answer_key,
    compared_epochs,
    unknown_efficiency,
)
from gtog.eval.results.spec import CHECKPOINT_NAME
from gtog.eval.run.answers import AnswerBook
from gtog.eval.run.checkpoint import Checkpoint
from gtog.eval.run.engines import Engines
from gtog.eval.run.guard import Guard, parse_budget
from gtog.eval.run.outputs import write_results
from gtog.eval.run.pairwise import PairQueue
from gtog.eval.run.preparation import check_vector_sizes, prepare
from gtog.eval.run.schedule import IndexSchedule
from gtog.eval.run.state import EvalOptions, EvalRun
from gtog.eval.scoring import Judgement, score_answer
from gtog.eval.scoring.pairwise import PairJudgement
from gtog.llm import CUT_REASONS, fatal_reason, run_sync
from gtog.llm.ahead import embeddings_ahead
from gtog.llm.repeat import answering_epoch
from gtog.search import SearchEngine, SearchFailed, context_threads, retrieved_sources, run_search
from gtog.search.endpoints import USAGE_FIELDS
from gtog.search.http import HttpEngine

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
    # what the line does not state is unknown (None), never 0
    record.efficiency = unknown_efficiency(line.latency).model_copy(
        update={
            "llm_calls": line.llm_calls,
            "prompt_tokens": line.prompt_tokens,
            "output_tokens": line.output_tokens,
            "cost_usd": line.cost_usd,
        }
    )
    if run.config.output.save_intermediate:
        record.context_text = line.context
    return line.context


def _stated_efficiency(seconds: float, result: Any = None) -> Efficiency:
    """An HTTP method's cost: the latency gtog measured, and what its reply stated."""
    stated = getattr(result, "stated", None)
    update = {f: getattr(stated, f) for f in USAGE_FIELDS} if stated is not None else {}
    return unknown_efficiency(seconds).model_copy(update=update)


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
    http = isinstance(engine, HttpEngine)
    try:
        outcome = await run_search(
            engine, item.question, timeout=run.config.timeouts.search, question_id=item.qid
        )
    except SearchFailed as failed:
        record.error = str(failed)
        record.error_kind = error_kind(str(failed), _cause(failed))
        record.efficiency = (
            _stated_efficiency(failed.seconds)
            if http
            else _efficiency(failed.usage, failed.seconds)
        )
        return None
    result = outcome.result
    record.response = result.response if isinstance(result.response, str) else str(result.response)
    record.efficiency = (
        _stated_efficiency(outcome.seconds, result)
        if http
        else _efficiency(outcome.usage, outcome.seconds, result)
    )
    if outcome.cut is not None:
        record.finish_reason = outcome.cut
        if run.config.truncated_answers == "error":  # kept, but never judged as an answer
            record.error = f"answer {CUT_REASONS[outcome.cut]} (finish_reason: {outcome.cut})"
            record.error_kind = "truncated"
            return None
    _record_exploration(record, result.context_data)
    context = _context_str(result.context_text)
    if run.config.output.save_intermediate:
        record.context_text = context
        record.sources = retrieved_sources(result)
    return context


def _record_exploration(record: MethodRecord, context_data: Any) -> None:
    """ToG's exploration tree and evidence paths (kept whatever save_intermediate says:
    they are small, and failure attribution reads them)."""
    from gtog.tog.trace import exploration_json

    tree = exploration_json(context_data)
    if tree is not None:
        record.exploration, record.paths = tree


def _cause(failed: SearchFailed) -> str | None:
    """The kind a failed search's cause names (an HTTP method's `http 500`), else the
    cause's class; None without a cause (then the classifier reads the message)."""
    cause = failed.__cause__
    if cause is None:
        return None
    return str(getattr(cause, "error_kind", None) or type(cause).__name__)


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
        cost_usd=usage.cost_usd,
        embedding_calls=usage.embedding_calls,
        embedding_tokens=usage.embedding_tokens,
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
        for one in [j, *(j.panel or {}).values()]:  # a panel's models: each their own
            one.error, one.reason = r.optional(one.error), r.optional(one.reason)
        for v in j.assertions or []:
            v.error, v.reason = r.optional(v.error), r.optional(v.reason)
    return record


async def _evaluate_one(
    run: EvalRun, item: QAItem, method: str, engine: Engine | BaseException, epoch: int = 1
) -> MethodRecord:
    """One answer (epoch `epoch` of the pair), searched and judged; every call of it made
    in that epoch (`answering_epoch`: a model-call cache keys each epoch's calls apart)."""
    record = MethodRecord(
        qid=item.qid,
        index_key=item.index_key,
        question=item.question,
        reference=item.reference,
        method=method,
        evidence=item.evidence,
        searched_with=run.spec.search_digest(method, item.index_key),
        groups=dict(item.groups),
        epoch=epoch,
    )
    try:
        with answering_epoch(epoch):
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
        with answering_epoch(record.epoch):
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


ProgressHook = Callable[[MethodRecord | PairRecord], None]


async def run_evaluation_async(
    run: EvalRun,
    on_record: ProgressHook | None = None,
    on_scheduled: Callable[[int], None] | None = None,
) -> EvalRun:
    """Run what is left of `run`, appending each record to the checkpoint as it finishes.

    With pairwise judging, each question's comparisons start as soon as both answers are
    in; `on_scheduled(n)` is told of them (a progress bar's total grows), `on_record` of
    each record that lands (answers and comparisons). Raises `FatalRunError` (after the
    finished records are safe on disk) when the run must stop; `run.stopped` says why.
    """
    await check_vector_sizes(run)  # (done by the caller already, as a rule: then a no-op)
    path = run.output_dir / CHECKPOINT_NAME
    if run.mode in ("resume", "rescore", "complete"):
        checkpoint = Checkpoint.reopen(path, run.intact_bytes, run.spec)
    else:
        checkpoint = Checkpoint.create(path, run.spec)
    engines = Engines(run)
    concurrency = run.options.concurrency or run.config.concurrency
    limit = asyncio.Semaphore(concurrency)
    loop = asyncio.get_running_loop()
    todo, to_judge = run.todo, run.to_judge
    guard = Guard(parse_budget(run.options.max_errors, len(todo) + len(to_judge)))
    items = {q.qid: q for q in run.items}
    redo = {answer_key(q.qid, m, e) for q, m, e in todo} | {r.key for r in to_judge}
    kept = [r for r in run.done if r.key not in redo]
    schedule = IndexSchedule(run, engines, todo)  # index by index: see schedule.py

    pair_queue = PairQueue(run)
    pairs_kept = {r.key: r for r in run.pairs_done}
    group_of: list[asyncio.TaskGroup] = []

    def compare_later(record: MethodRecord) -> None:
        wanted = pair_queue.add(record) if record.qid in items else []
        for criterion, a, b in wanted:
            group_of[0].create_task(compare_one(items[record.qid], criterion, a, b))
        if wanted and on_scheduled is not None:
            on_scheduled(len(wanted))

    async def compare_one(item: QAItem, criterion: str, a: str, b: str) -> None:
        async with limit:
            with answering_epoch(max(compared_epochs(a, b, run.spec.epochs))):
                pair = await _compare(run, pair_queue, item, criterion, a, b)
        pairs_kept[pair.key] = pair
        await loop.run_in_executor(None, checkpoint.append, pair)
        if on_record is not None:
            on_record(pair)

    async def finish(record: MethodRecord) -> None:
        # kept first: a Ctrl-C while the write is in its thread (which finishes it) must
        # not leave the record out of the results written on the way out
        kept.append(record)
        # the write is fsynced: off the event loop, so other questions go on meanwhile
        await loop.run_in_executor(None, checkpoint.append, record)
        if on_record is not None:
            on_record(record)
        guard.observe(record)
        if record.method in run.methods:
            compare_later(record)

    async def search_one(item: QAItem, method: str, epoch: int) -> None:
        queued = time.perf_counter()
        async with limit:
            waited = time.perf_counter() - queued
            engine = await schedule.engine(item, method)
            record = await _evaluate_one(run, item, method, engine, epoch)
        if record.efficiency is not None:
            record.efficiency.queue_wait = waited
        await finish(record)
        schedule.done(item, method)

    async def judge_one(record: MethodRecord) -> None:
        async with limit:
            rejudged = await _rejudge_one(run, items[record.qid], record)
        await finish(rejudged)

    run.status = "interrupted"  # until the loop ends: Ctrl-C, a crash or a cancel
    try:
        with _run_environment(loop, concurrency), context_threads(), embeddings_ahead(run.ahead):
            async with asyncio.TaskGroup() as group:
                group_of.append(group)
                for r in list(kept):
                    if r.method in run.methods and not searched_elsewhere(run.spec, r):
                        compare_later(r)
                for r in to_judge:
                    group.create_task(judge_one(r))
                for q, m, e in schedule.pairs:  # index by index: see schedule.py
                    group.create_task(search_one(q, m, e))
        run.status = "complete"
    except* FatalRunError as errors:
        fatal = errors.exceptions[0]
        run.stopped = run.redactor(str(fatal))
        run.status = f"stopped: {run.stopped}"
        raise FatalRunError(run.stopped) from None
    finally:
        engines.close()
        checkpoint.close()
        if run.ahead:
            logger.info("%d preflight embedding(s) taken by no search", len(run.ahead))
        old = {r.key for r in kept}
        run.done = kept + [r for r in run.done if r.key in redo and r.key not in old]
        run.pairs_done = list(pairs_kept.values())
    return run


async def _compare(
    run: EvalRun, queue: PairQueue, item: QAItem, criterion: str, a: str, b: str
) -> PairRecord:
    """One comparison's record; an unexpected exception is its error, never a verdict."""
    try:
        pair = await queue.compare(item, criterion, a, b)
    except FatalRunError:
        raise
    except Exception as exc:
        if fatal_reason(exc) is not None:
            raise
        logger.exception("unexpected error comparing %s / %s / %s-%s", item.qid, criterion, a, b)
        epochs = compared_epochs(a, b, run.spec.epochs)
        pair = PairRecord(
            qid=item.qid,
            index_key=item.index_key,
            criterion=criterion,
            a=a,
            b=b,
            judgement=PairJudgement(error=f"internal error: {describe_exception(exc)}"),
            judged_with=run.spec.pairwise_digest(item.index_key),
            groups=dict(item.groups),
            epoch_a=epochs[0],
            epoch_b=epochs[1],
        )
    j = pair.judgement
    j.error = run.redactor.optional(j.error)
    for call in j.calls:
        call.error, call.reason = (
            run.redactor.optional(call.error),
            run.redactor.optional(call.reason),
        )
    return pair


@contextmanager
def _run_environment(loop: asyncio.AbstractEventLoop, concurrency: int) -> Iterator[None]:
    """A default executor sized to the run and a frozen heap; both restored afterwards.

    LiteLLM prepares every call in the loop's default executor (min(32, cores + 4)
    threads, 6 on 2 cores), where the checkpoint writes also go. The imports, configs and
    judges are never garbage: frozen, they are spared the collector's full passes, which
    otherwise stall every question for a third of a second (the indexes, loaded later, are
    released as the run goes). A caller that froze its heap itself keeps it frozen.
    """
    pool = ThreadPoolExecutor(max_workers=2 * concurrency + 4, thread_name_prefix="gtog-eval")
    previous = getattr(loop, "_default_executor", None)  # asyncio has no public getter
    loop.set_default_executor(pool)
    freeze = gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    try:
        yield
    finally:
        if freeze:
            gc.unfreeze()
        loop._default_executor = previous  # type: ignore[attr-defined]
        pool.shutdown(wait=False)


def run_evaluation(options: EvalOptions, on_record: ProgressHook | None = None) -> EvalRun:
    """Prepare, run and write results (blocking); the output folder is released after."""
    run = prepare(options)
    try:
        if run.mode != "complete":
            run_sync(check_vector_sizes(run))
            try:
                run_sync(run_evaluation_async(run, on_record))
            finally:
                if run.done:
                    write_results(run)
    finally:
        run.close()
    return run
