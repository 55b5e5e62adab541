"""`run_evaluation`: graphrag-eval's per-question evaluation, concurrent and non-mutating."""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gtog.qa.io import responses_by_id, validate_reference, validate_responses
from gtog.qa.llm_metrics import answer_correctness, answer_relevance, retrieval_metrics
from gtog.qa.models import JudgeModels, load_judge_models
from gtog.qa.steps import RETRIEVAL, match_steps, parse_contexts, steps_score

__all__ = ["evaluate_question", "run_evaluation", "run_evaluation_async"]

log = logging.getLogger(__name__)
USAGE_KEYS = ("input_tokens", "output_tokens", "total_tokens", "elapsed_sec")


def _is_error(response: Mapping[str, Any]) -> bool:
    return response.get("status") == "error" or "error" in response


def _usage(response: Mapping[str, Any]) -> dict[str, Any]:
    usage = {k: response[k] for k in USAGE_KEYS if response.get(k) is not None}
    if "total_tokens" not in usage and "input_tokens" in usage and "output_tokens" in usage:
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    return {k: usage[k] for k in USAGE_KEYS if k in usage}


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
    for result in await asyncio.gather(*jobs):
        step.update(result)


async def evaluate_question(
    template_id: Any,
    question: Mapping[str, Any],
    response: Mapping[str, Any] | None,
    models: JudgeModels,
    *,
    relevance_questions: int = 3,
) -> dict[str, Any]:
    """The output record of one question (inputs are copied, never changed)."""
    record: dict[str, Any] = {
        "template_id": template_id,
        "question_id": question["id"],
        "question_text": question["question_text"],
    }
    if "reference_answer" in question:
        record["reference_answer"] = question["reference_answer"]
    reference_steps = copy.deepcopy(question.get("reference_steps"))
    if reference_steps is not None:
        record["reference_steps"] = reference_steps
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
        jobs = [answer_relevance(models.chat, models.embedding, text, answer, relevance_questions)]
        if question.get("reference_answer") is not None:
            jobs.insert(
                0,
                answer_correctness(
                    models.chat, question["question_text"], question["reference_answer"], answer
                ),
            )
        for result in await asyncio.gather(*jobs):
            record.update(result)
    actual_steps = copy.deepcopy(list(response.get("actual_steps") or []))
    if "actual_steps" in response:
        record["actual_steps"] = actual_steps
    matched_reference: dict[int, Mapping[str, Any]] = {}
    if reference_steps is not None:
        matches = match_steps(reference_steps, actual_steps)
        for m in matches:
            ref_step = reference_steps[m.group][m.reference_index]
            ref_step["matches"] = actual_steps[m.actual_index].get("id")
            if ref_step.get("name") == RETRIEVAL:
                matched_reference[m.actual_index] = ref_step
        record["steps_score"] = steps_score(reference_steps, matches)
    await asyncio.gather(
        *(
            _retrieval_step_metrics(step, matched_reference.get(i), question, models)
            for i, step in enumerate(actual_steps)
            if step.get("name") == RETRIEVAL and step.get("status", "success") == "success"
        )
    )
    record.update(_usage(response))
    return record


async def run_evaluation_async(
    reference_qas: Sequence[Mapping[str, Any]],
    chat_responses: Mapping[str, Any] | Sequence[Mapping[str, Any]],
    *,
    models: JudgeModels | None = None,
    config: str | Path | None = None,
    concurrency: int = 4,
    relevance_questions: int = 3,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Evaluate every reference question against its response, `concurrency` at a time.

    Judge models come from `models`, else from `config` (see `gtog.qa.models`), else
    from graphrag-eval's defaults when `OPENAI_API_KEY` is set. Results are in the
    reference's question order.
    """
    validate_reference(reference_qas)
    validate_responses(chat_responses)
    if models is None:
        models = load_judge_models(config)
    responses = responses_by_id(chat_responses)  # type: ignore[arg-type]
    items = [(t["template_id"], q) for t in reference_qas for q in t["questions"]]
    known = {str(q["id"]) for _, q in items}
    for qid in responses:
        if qid not in known:
            log.warning("response for unknown question id %r ignored", qid)
    semaphore = asyncio.Semaphore(max(1, concurrency))

    async def one(template_id: Any, question: Mapping[str, Any]) -> dict[str, Any]:
        async with semaphore:
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
                return {
                    "template_id": template_id,
                    "question_id": question["id"],
                    "question_text": question["question_text"],
                    "status": "error",
                    "error": f"evaluation failed: {type(exc).__name__}: {exc}",
                }

    tasks = [asyncio.ensure_future(one(t, q)) for t, q in items]
    if progress and tasks:
        from rich.progress import Progress

        with Progress(transient=True) as bar:
            task_id = bar.add_task("Evaluating questions", total=len(tasks))
            for future in asyncio.as_completed(tasks):
                await future
                bar.advance(task_id)
    return list(await asyncio.gather(*tasks))


def run_evaluation(
    reference_qas: Sequence[Mapping[str, Any]],
    chat_responses: Mapping[str, Any] | Sequence[Mapping[str, Any]],
    *,
    models: JudgeModels | None = None,
    config: str | Path | None = None,
    concurrency: int = 4,
    relevance_questions: int = 3,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Blocking `run_evaluation_async` (graphrag-eval's signature plus options)."""
    return asyncio.run(
        run_evaluation_async(
            reference_qas,
            chat_responses,
            models=models,
            config=config,
            concurrency=concurrency,
            relevance_questions=relevance_questions,
            progress=progress,
        )
    )
