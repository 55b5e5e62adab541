"""One search's record: the answer, its cost and its context, from an engine, an answers
file or an HTTP method; every failure is the record's error, never an answer."""

from __future__ import annotations

from typing import Any

from gtog._errors import describe_exception
from gtog.eval._dataset import QAItem
from gtog.eval.results._errors import error_kind
from gtog.eval.results._records import Efficiency, MethodRecord, unknown_efficiency
from gtog.eval.run._answers import AnswerBook
from gtog.eval.run._state import EvalRun
from gtog.llm._errors import fatal_reason
from gtog.llm._usage import CUT_REASONS
from gtog.search._endpoints import USAGE_FIELDS
from gtog.search._http import HttpEngine
from gtog.search._outcome import SearchEngine, SearchFailed, retrieved_sources, run_search

__all__ = ["Engine", "search_into"]

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
    record.route = line.route
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


async def search_into(
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
        record.efficiency.queue_wait = failed.held  # (the loop adds the pair's own wait)
        return None
    result = outcome.result
    record.response = result.response if isinstance(result.response, str) else str(result.response)
    record.route = getattr(result, "route", None)
    record.efficiency = (
        _stated_efficiency(outcome.seconds, result)
        if http
        else _efficiency(outcome.usage, outcome.seconds, result)
    )
    record.efficiency.queue_wait = outcome.held  # (the loop adds the pair's own wait)
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
    if not isinstance(context_data, dict) or "tree" not in context_data:
        return  # (no tree: not ToG's; its module, and ToG's, not imported on the loop for it)
    from gtog.tog._trace import exploration_json

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
        # a replayed chat call took the cache's time, not the model's: no latency to show
        latency=None if usage.cached_llm_calls else seconds,
        llm_calls=usage.total_calls,
        prompt_tokens=usage.total_prompt_tokens,
        output_tokens=usage.total_output_tokens,
        llm_calls_categories=calls,
        prompt_tokens_categories=prompt,
        output_tokens_categories=output,
        cost_usd=usage.cost_usd,
        embedding_calls=usage.embedding_calls,
        embedding_tokens=usage.embedding_tokens,
        cached_calls=usage.cached_calls,
        usd_saved=usage.cached_usd,
    )
