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
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress

from gtog._errors import FatalRunError, describe_exception
from gtog._heap import heap_frozen
from gtog._internals import swapped_default_executor
from gtog.eval._dataset import QAItem
from gtog.eval.results._currency import searched_elsewhere
from gtog.eval.results._records import MethodRecord, PairRecord, answer_key, compared_epochs
from gtog.eval.results._spec import CHECKPOINT_NAME
from gtog.eval.run._checkpoint import Checkpoint
from gtog.eval.run._engines import Engines, import_engines
from gtog.eval.run._features import linked_entities
from gtog.eval.run._guard import Guard, parse_budget
from gtog.eval.run._landing import Lander
from gtog.eval.run._manifest import remember
from gtog.eval.run._outputs import write_results
from gtog.eval.run._pairwise import PairQueue
from gtog.eval.run._preparation import check_vector_sizes, prepare
from gtog.eval.run._schedule import IndexSchedule, open_first_index
from gtog.eval.run._searching import Engine, search_into
from gtog.eval.run._spending import (
    Abandoned,
    LimitStop,
    pair_spending,
    save_spend,
    settle_pair,
    spending,
)
from gtog.eval.run._state import EvalOptions, EvalRun
from gtog.eval.scoring._base import Judgement
from gtog.eval.scoring._pairwise import PairJudgement
from gtog.eval.scoring._score import score_answer
from gtog.llm._ahead import embeddings_ahead
from gtog.llm._budget import Limits, pair_budget
from gtog.llm._errors import fatal_reason
from gtog.llm._models import import_clients, run_sync
from gtog.llm._repeat import answering_epoch
from gtog.llm._slots import call_slots, questions_at_once
from gtog.search._context_process import ContextProcess, wants_context_process
from gtog.search._offloop import context_threads, use_context_process

__all__ = ["ProgressHook", "run_evaluation", "run_evaluation_async", "spawn_context_process"]

logger = logging.getLogger(__name__.replace("._", "."))  # eval.log names the module as before


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
        if j.flagged:
            j.flagged = [r(x) for x in j.flagged]
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
    record.linked_entities = await linked_entities(run, item)
    with pair_spending(run) as budget:  # the pair's limits (and the run's)
        try:
            with answering_epoch(epoch):
                context = await search_into(run, item, record, engine)
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
    settle_pair(record, budget)  # over a limit: the pair's error; stopped by the run's: none
    return _redact(run, record)


async def _rejudge_one(run: EvalRun, item: QAItem, record: MethodRecord) -> MethodRecord:
    record = record.model_copy(deep=True)
    with pair_spending(run) as budget:
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
    settle_pair(record, budget)
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
    ahead, run.engines = run.engines, None  # (the first index opened ahead: taken)
    engines = ahead if isinstance(ahead, Engines) else Engines(run)
    concurrency = run.concurrency  # calls in flight; a few more questions (gtog.llm._slots)
    limit = asyncio.Semaphore(questions_at_once(concurrency))
    loop = asyncio.get_running_loop()
    todo, to_judge = run.todo, run.to_judge
    guard = Guard(parse_budget(run.options.max_errors, len(todo) + len(to_judge)))
    items = {q.qid: q for q in run.items}
    redo = {answer_key(q.qid, m, e) for q, m, e in todo} | {r.key for r in to_judge}
    kept = [r for r in run.done if r.key not in redo]
    schedule = IndexSchedule(run, engines, todo)  # index by index: see there

    pair_queue = PairQueue(run)
    pairs_kept = {r.key: r for r in run.pairs_done}
    group_of: list[asyncio.TaskGroup] = []

    def compare_later(record: MethodRecord) -> None:
        held = record.qid in items and (run.subset is None or record.qid in run.subset)
        wanted = pair_queue.add(record) if held else []
        for criterion, a, b in wanted:
            group_of[0].create_task(compare_one(items[record.qid], criterion, a, b))
        if wanted and on_scheduled is not None:
            on_scheduled(len(wanted))

    left: list[object] = []  # pairs and comparisons a run limit kept from finishing

    def stopping() -> bool:
        """The run reached a limit of its own: take no new pair."""
        return run.budget is not None and run.budget.reached() is not None

    def land(records: Sequence[MethodRecord | PairRecord]) -> None:
        if run.calls is not None and run.calls.store is not None:
            run.calls.store.wait_written()  # (a landed record's replies are in the cache)
        checkpoint.append_many(records)
        save_spend(run, changed=True)
        for record in records:
            if isinstance(record, MethodRecord):
                remember(run, record)  # what the cache now holds of it, for estimates

    lander: Lander[MethodRecord | PairRecord] = Lander(land)

    async def compare_one(item: QAItem, criterion: str, a: str, b: str) -> None:
        async with limit:
            if stopping():
                left.append((item.qid, criterion, a, b))
                return
            epoch = max(compared_epochs(a, b, run.spec.epochs))
            with pair_budget(Limits()) as budget, answering_epoch(epoch):
                pair = await _compare(run, pair_queue, item, criterion, a, b)
            if budget.run_refused:  # its calls are cached: a resume replays them
                left.append(pair.key)
                return
        pairs_kept[pair.key] = pair
        await lander.land(pair)
        if on_record is not None:
            on_record(pair)

    async def finish(record: MethodRecord) -> None:
        # kept first: a Ctrl-C while the write is in its thread (which finishes it) must
        # not leave the record out of the results written on the way out
        kept.append(record)
        # counted before the write's await: once the error budget is spent no other pair
        # starts (`guard.stop`), however long the write takes; raised once it is written
        with suppress(FatalRunError):
            guard.observe(record)
        # the write is fsynced: off the event loop, so other questions go on meanwhile,
        # with the records that finish while it is on its way (one fsync for them all)
        await lander.land(record)
        if on_record is not None:
            on_record(record)
        if guard.stop is not None:
            raise guard.stop
        if record.method in run.methods:
            compare_later(record)

    async def search_one(item: QAItem, method: str, epoch: int) -> None:
        queued = time.perf_counter()
        async with limit:
            waited = time.perf_counter() - queued
            if guard.stop is not None:  # the error budget is spent: the run is ending
                schedule.done(item, method)
                return
            if stopping():
                left.append(answer_key(item.qid, method, epoch))
                schedule.done(item, method)
                return
            engine = await schedule.engine(item, method)
            try:
                record = await _evaluate_one(run, item, method, engine, epoch)
            except Abandoned:
                left.append(answer_key(item.qid, method, epoch))
                schedule.done(item, method)
                return
        if record.efficiency is not None:  # (its search's wait for call slots, and this)
            record.efficiency.queue_wait = waited + (record.efficiency.queue_wait or 0.0)
        await finish(record)
        schedule.done(item, method)

    async def judge_one(record: MethodRecord) -> None:
        async with limit:
            if guard.stop is not None:
                return
            if stopping():
                left.append(record.key)
                return
            try:
                rejudged = await _rejudge_one(run, items[record.qid], record)
            except Abandoned:
                left.append(record.key)
                return
        await finish(rejudged)

    process, run.context_process = run.context_process, None  # (spawned ahead: taken)
    if process is None and todo and wants_context_process(concurrency, _builds(run)):
        process = ContextProcess()
    run.status = "interrupted"  # until the loop ends: Ctrl-C, a crash or a cancel
    try:
        if process is not None:  # (its imports on the other core, meanwhile)
            await process.attach()
        if todo or to_judge:  # calls to make: the clients' imports off the loop, before them
            await loop.run_in_executor(None, import_clients)
            await loop.run_in_executor(None, import_engines, run)
        with (
            _run_environment(loop, concurrency),
            call_slots(concurrency),
            context_threads(),
            use_context_process(process),
            embeddings_ahead(run.ahead),
            spending(run),
        ):
            async with asyncio.TaskGroup() as group:
                group_of.append(group)
                for r in list(kept):
                    if r.method in run.methods and not searched_elsewhere(run.spec, r):
                        compare_later(r)
                for r in to_judge:
                    group.create_task(judge_one(r))
                for q, m, e in schedule.pairs:  # index by index: see schedule.py
                    group.create_task(search_one(q, m, e))
        if left and run.budget is not None and run.budget.reached() is not None:
            raise LimitStop(run.budget.reached() or "", run.budget, _raise_flag(run))
        run.status = "complete"
    except* FatalRunError as errors:
        fatal = errors.exceptions[0]
        run.stopped = getattr(fatal, "reason", None) or run.redactor(str(fatal))
        run.status = f"stopped: {run.stopped}"
        raise FatalRunError(run.redactor(str(fatal))) from None
    finally:
        await loop.run_in_executor(None, lander.close)  # (records whose waiter was cancelled)
        schedule.close()
        engines.close()
        await loop.run_in_executor(None, save_spend, run)
        if run.calls is not None and run.calls.store is not None:  # (its replies' writes)
            await loop.run_in_executor(None, run.calls.store.flush)
        checkpoint.close()
        if run.ahead:
            logger.info("%d preflight embedding(s) taken by no search", len(run.ahead))
        old = {r.key for r in kept}
        run.done = kept + [r for r in run.done if r.key in redo and r.key not in old]
        run.pairs_done = list(pairs_kept.values())
        if process is not None:  # (last: what the run keeps is safe first)
            n = max(process.built, 1)
            logger.info(
                "context process: %d context(s) built, %.0f ms each (%.0f ms of its CPU)",
                process.built,
                1000 * process.waited / n,
                1000 * process.cpu / n,
            )
            await process.close()
    return run


def spawn_context_process(run: EvalRun) -> None:
    """Start the run's context process now, if it wants one (`wants_context_process`), so
    that its imports run while the run's own are done; the loop takes it."""
    if run.context_process is None and wants_context_process(run.concurrency, _builds(run)):
        process = ContextProcess()
        process.spawn()
        run.context_process = process


_CONTEXT_BUILT = ("local", "drift")  # (graphrag's local context: 5-10 ms of CPU; basic's: 3)


def _builds(run: EvalRun) -> int:
    """Local search contexts (local's, drift's) the run's pairs still to do will build."""
    built = {
        m
        for m, plan in run.run_methods.items()
        if plan.http is None and plan.base in _CONTEXT_BUILT
    }
    return sum(1 for _, m, _ in run.todo if m in built)


def _raise_flag(run: EvalRun) -> str:
    """What to raise to go on: `--max-usd` when it set the USD limit, else the config key."""
    what = run.budget.reached() if run.budget is not None else None
    if what == "usd" and run.options.max_usd is not None:
        return "--max-usd"
    return f"limits.run.{what} in {run.config_path.name}"


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
    freeze = not heap_frozen()
    if freeze:
        gc.freeze()
    try:
        with swapped_default_executor(loop, pool):
            yield
    finally:
        if freeze:
            gc.unfreeze()
        pool.shutdown(wait=False)


def run_evaluation(options: EvalOptions, on_record: ProgressHook | None = None) -> EvalRun:
    """Prepare, run and write results (blocking); the output folder is released after."""
    run = prepare(options)
    try:
        if run.mode != "complete":
            open_first_index(run)  # built while the check's embedding is awaited
            run_sync(check_vector_sizes(run))
            try:
                run_sync(run_evaluation_async(run, on_record))
            finally:
                if run.done:
                    write_results(run)
    finally:
        run.close()
    return run
