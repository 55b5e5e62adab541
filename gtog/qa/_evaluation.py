"""`run_evaluation`: graphrag-eval's per-question evaluation, concurrent and non-mutating.

Two entry points, one job each:

* `run_evaluation(...)` (the seed's call) blocks and returns the list of records. It
  works in scripts and where an event loop is already running in the thread
  (Jupyter): there the evaluation runs on its own loop in a worker thread while the
  caller waits, so it never needs `nest_asyncio`.
* `run_evaluation_async(...)` is a coroutine function for async code; `gtog.qa.aio`
  exports it as `run_evaluation`, so code written for graphrag-eval 6.x
  (`await run_evaluation(...)`, `asyncio.run(run_evaluation(...))`) runs unchanged
  after changing its import to `from gtog.qa.aio import ...`.

Both return a plain `list[dict]`; neither result is a hybrid of value and awaitable.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict, TypeVar, Unpack

from gtog.llm._models import run_sync
from gtog.qa._ge6_records import run_evaluation_ge6
from gtog.qa._io import input_problems, responses_by_id, validate_reference, validate_responses
from gtog.qa._llm_metrics import answer_correctness, answer_relevance, retrieval_metrics
from gtog.qa._models import JudgeModels, load_judge_models
from gtog.qa._semantics import GE6, SEED, Semantics, check_semantics
from gtog.qa._steps import RETRIEVAL, match_steps, parse_contexts, steps_score

__all__ = [
    "EvaluationOptions",
    "evaluate_question",
    "run_blocking",
    "run_evaluation",
    "run_evaluation_async",
]
T = TypeVar("T")

log = logging.getLogger(__name__.replace("._", "."))  # eval.log names the module as before
USAGE_KEYS = ("input_tokens", "output_tokens", "total_tokens", "elapsed_sec")


def _is_error(response: Mapping[str, Any]) -> bool:
    return response.get("status") == "error" or "error" in response


def _usage(response: Mapping[str, Any]) -> dict[str, Any]:
    usage = {k: response[k] for k in USAGE_KEYS if response.get(k) is not None}
    if "total_tokens" not in usage and "input_tokens" in usage and "output_tokens" in usage:
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    return {k: usage[k] for k in USAGE_KEYS if k in usage}


async def _all(jobs: list[Awaitable[T]], models: JudgeModels) -> list[T]:
    """The jobs' results: at once when a model will be called, else one after the other
    (without models every metric returns at once; tasks would only cost time)."""
    if models.chat is None and models.embedding is None:
        return [await job for job in jobs]
    return list(await asyncio.gather(*jobs))


async def _retrieval_step_metrics(
    step: dict[str, Any],
    reference_step: Mapping[str, Any] | None,
    question: Mapping[str, Any],
    models: JudgeModels,
) -> None:
    """Add the retrieval metrics to a successful actual retrieval step (in place)."""
    try:
        contexts = [str(c.get("text", "")) for c in parse_contexts(step.get("output"))]
    except ValueError as exc:
        prefixes = [
            prefix
            for prefix, wanted in (
                ("retrieval_answer", bool(question.get("reference_answer"))),
                ("retrieval_context", reference_step is not None),
            )
            if wanted
        ]
        for prefix in prefixes:
            for metric in ("recall", "precision"):
                step[f"{prefix}_{metric}_error"] = str(exc)
        return
    jobs = []
    if question.get("reference_answer"):
        jobs.append(
            retrieval_metrics(
                models.chat,
                "retrieval_answer",
                question["question_text"],
                question["reference_answer"],
                contexts,
            )
        )
    if reference_step is not None:
        try:
            reference_contexts = parse_contexts(reference_step.get("output"))
            reference_texts = [str(c.get("text", "")) for c in reference_contexts]
        except ValueError as exc:
            step["retrieval_context_recall_error"] = f"reference output: {exc}"
            step["retrieval_context_precision_error"] = f"reference output: {exc}"
        else:
            jobs.append(
                retrieval_metrics(
                    models.chat,
                    "retrieval_context",
                    question["question_text"],
                    "\n".join(reference_texts),
                    contexts,
                )
            )
    for result in await _all(jobs, models):
        step.update(result)


async def evaluate_question(
    template_id: Any,
    question: Mapping[str, Any],
    response: Mapping[str, Any] | None,
    models: JudgeModels,
    *,
    relevance_questions: int = 3,
) -> dict[str, Any]:
    """The output record of one question under the seed's rules. Inputs are never
    changed: the steps that gain keys are copies (their values are shared with the
    inputs). An error response gets an error record, with its usage."""
    record: dict[str, Any] = {
        "template_id": template_id,
        "question_id": question["id"],
        "question_text": question["question_text"],
    }
    if "reference_answer" in question:
        record["reference_answer"] = question["reference_answer"]
    reference_steps = question.get("reference_steps")
    if reference_steps is not None:
        record["reference_steps"] = reference_steps  # replaced by a copy if steps match
    if response is None:
        record.update(status="error", error="no response for this question")
        return record
    if _is_error(response):
        record.update(status="error", error=str(response.get("error") or "error response"))
        record.update(_usage(response))
        return record
    record["status"] = "success"
    answer = response.get("actual_answer")
    if answer is not None:
        record["actual_answer"] = answer
        text = question["question_text"]
        jobs = []
        if question.get("reference_answer") is not None and models.answer_correctness:
            jobs.append(
                answer_correctness(
                    models.chat, question["question_text"], question["reference_answer"], answer
                )
            )
        if models.answer_relevance:
            jobs.append(
                answer_relevance(models.chat, models.embedding, text, answer, relevance_questions)
            )
        for result in await _all(jobs, models):
            record.update(result)
    actual_steps = list(response.get("actual_steps") or [])
    if "actual_steps" in response:
        record["actual_steps"] = actual_steps
    matched_reference: dict[int, Mapping[str, Any]] = {}
    if reference_steps is not None:
        matches = match_steps(reference_steps, actual_steps)
        if matches:  # copies of the groups and steps that gain `matches`
            reference_steps = [list(group) for group in reference_steps]
            record["reference_steps"] = reference_steps
        for m in matches:
            ref_step = dict(reference_steps[m.group][m.reference_index])
            reference_steps[m.group][m.reference_index] = ref_step
            ref_step["matches"] = actual_steps[m.actual_index].get("id")
            if ref_step.get("name") == RETRIEVAL:
                matched_reference[m.actual_index] = ref_step
        record["steps_score"] = steps_score(reference_steps, matches)
    retrieval = [
        i
        for i, step in enumerate(actual_steps)
        if step.get("name") == RETRIEVAL and step.get("status", "success") == "success"
    ]
    for i in retrieval:  # these gain the retrieval metrics: copies
        actual_steps[i] = dict(actual_steps[i])
    await _all(
        [
            _retrieval_step_metrics(actual_steps[i], matched_reference.get(i), question, models)
            for i in retrieval
        ],
        models,
    )
    record.update(_usage(response))
    return record


def _judge_models(
    models: JudgeModels | None,
    config_file_path: str | Path | None,
    config: str | Path | None,
    *,
    env_default: bool = True,
) -> JudgeModels:
    """`models`, else those of the config; without either, the seed's `OPENAI_API_KEY`
    default (`env_default`) or none (graphrag-eval 6.x reads no environment)."""
    if config_file_path is not None and config is not None:
        raise TypeError("pass either config_file_path or config, not both")
    if models is not None:
        return models
    path = config_file_path if config_file_path is not None else config
    if path is None and not env_default:
        return JudgeModels()
    return load_judge_models(path)


async def run_evaluation_async(
    reference_qas: Sequence[Mapping[str, Any]],
    chat_responses: Mapping[str, Any] | Sequence[Mapping[str, Any]],
    config_file_path: str | Path | None = None,
    *,
    semantics: Semantics = SEED,
    models: JudgeModels | None = None,
    config: str | Path | None = None,
    concurrency: int = 4,
    relevance_questions: int = 3,
    progress: bool = True,
    sources: tuple[str, str] = ("reference", "responses"),
) -> list[dict[str, Any]]:
    """Evaluate every reference question against its response, `concurrency` at a time.

    Judge models come from `models`, else from `config_file_path` (alias `config`; a
    graphrag settings file, a judge-model YAML or graphrag-eval 6.x's config, see
    `gtog.qa._models`), else from graphrag-eval's defaults when `OPENAI_API_KEY` is set.
    `semantics="graphrag-eval-6"` gives graphrag-eval 6.6.1's records (see
    `gtog.qa._ge6_records`; no judge models unless configured). A malformed
    question or response becomes that question's error record (the message names the
    source in `sources` and the field); a malformed structure raises `InputError`.
    Results are in the reference's question order.
    """
    semantics = check_semantics(semantics)
    if semantics == GE6:
        return await run_evaluation_ge6(
            reference_qas,
            chat_responses,
            _judge_models(models, config_file_path, config, env_default=False),
            concurrency=concurrency,
            relevance_questions=relevance_questions,
            sources=sources,
        )
    validate_reference(reference_qas, sources[0])
    validate_responses(chat_responses, sources[1])
    models = _judge_models(models, config_file_path, config)
    problems = input_problems(list(reference_qas), chat_responses, sources)  # type: ignore[arg-type]
    responses = responses_by_id(chat_responses)  # type: ignore[arg-type]
    items = [(t["template_id"], q) for t in reference_qas for q in t["questions"]]
    known = {str(q["id"]) for _, q in items}
    for qid in responses:
        if qid not in known:
            log.warning("response for unknown question id %r ignored", qid)
    semaphore = asyncio.Semaphore(max(1, concurrency))
    judged = models.chat is not None or models.embedding is not None

    def failed(template_id: Any, question: Mapping[str, Any], error: str) -> dict[str, Any]:
        record = {"template_id": template_id, "question_id": question["id"]}
        if isinstance(question.get("question_text"), str):
            record["question_text"] = question["question_text"]
        return {**record, "status": "error", "error": error}

    async def one(template_id: Any, question: Mapping[str, Any]) -> dict[str, Any]:
        problem = problems.get(str(question["id"]))
        if problem:
            return failed(template_id, question, f"invalid input: {problem}")
        async with semaphore if judged else contextlib.nullcontext():
            try:
                return await evaluate_question(
                    template_id,
                    question,
                    responses.get(str(question["id"])),
                    models,
                    relevance_questions=relevance_questions,
                )
            except Exception as exc:  # one question never aborts the run
                log.exception("evaluation of question %r failed", question["id"])
                error = f"evaluation failed: {type(exc).__name__}: {exc}"
                return failed(template_id, question, error)

    if not judged:  # no model calls: nothing to wait for, no tasks
        return [await one(t, q) for t, q in items]
    tasks = [asyncio.ensure_future(one(t, q)) for t, q in items]
    if progress and tasks:
        from rich.console import Console
        from rich.progress import Progress

        console = Console(stderr=True)
        with Progress(console=console, transient=True, disable=not console.is_terminal) as bar:
            task_id = bar.add_task("Evaluating questions", total=len(tasks))
            for future in asyncio.as_completed(tasks):
                await future
                bar.advance(task_id)
    return list(await asyncio.gather(*tasks))


def run_blocking(make: Callable[[], Awaitable[T]]) -> T:
    """Run the coroutine `make()` to completion and return its value, also when an event
    loop is already running in this thread (then on a private loop in a worker thread)."""

    box: list[T] = []

    async def main() -> None:
        # The value is passed in `box`, not as the task's result: asyncio.run's SIGINT
        # bookkeeping formats the finished task with its result (~1 ms for a run's records).
        box.append(await make())

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        run_sync(main())
    else:
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            pool.submit(run_sync, main()).result()
    return box[0]


class EvaluationOptions(TypedDict, total=False):
    """The keyword options of `run_evaluation_async` (and so of `run_evaluation`)."""

    semantics: Semantics
    models: JudgeModels | None
    config: str | Path | None
    concurrency: int
    relevance_questions: int
    progress: bool
    sources: tuple[str, str]


def run_evaluation(
    reference_qas: Sequence[Mapping[str, Any]],
    chat_responses: Mapping[str, Any] | Sequence[Mapping[str, Any]],
    config_file_path: str | Path | None = None,
    **options: Unpack[EvaluationOptions],
) -> list[dict[str, Any]]:
    """The seed's blocking call: `run_evaluation(reference_qas, chat_responses)`.

    Same arguments as `run_evaluation_async`; works with or without a running event
    loop in the thread (Jupyter). In async code, `await run_evaluation_async(...)`.
    """
    return run_blocking(
        lambda: run_evaluation_async(reference_qas, chat_responses, config_file_path, **options)
    )
