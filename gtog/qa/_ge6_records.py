"""graphrag-eval 6.6.1's per-question records (`semantics="graphrag-eval-6"`).

A record holds, in this order: `template_id`, the response's `question_id`,
`question_text`, the response's usage keys as given (`total_tokens` is not derived),
`actual_answer`, `reference_answer`, `reference_steps` (matched steps gain `matches`),
`status` ("error" exactly when the response has an `error` key, which is copied),
`actual_steps` (the response's, `[]` when it has none), `steps_score` (when the
question has reference steps), then the LLM metrics. Error responses are evaluated
like the others.

The LLM metrics run only with judge models from a config (graphrag-eval 6.x's config
or any `gtog.qa._models` config; `OPENAI_API_KEY` alone selects none): answer
relevance and correctness when the response has an answer, `retrieval_answer_*` on
every retrieval step with an output when the question has a reference answer,
`retrieval_context_*` on matched retrieval steps. Their values come from gtog's judges;
their keys are graphrag-eval's (`answer_correctness_error`, no `*_cost` or
`*_reason` keys but `answer_correctness_reason`). Without judge models there are no
LLM keys at all.

Inputs are never modified: a reference step that gains `matches` is copied (once per
object, so steps shared between positions or questions show the same final
`matches`, as graphrag-eval's in-place writes do); everything else is shared with the
inputs, as in graphrag-eval.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from gtog.qa._ge6_steps import match_groups_ge6, steps_score_ge6
from gtog.qa._models import JudgeModels

__all__ = ["Annotations", "evaluate_question_ge6", "with_annotations"]

FAILED = "graphrag-eval 6.6.1 cannot evaluate it"
USAGE_KEYS = ("input_tokens", "output_tokens", "total_tokens", "elapsed_sec")
_ANSWER_KEYS = ("recall", "precision", "f1", "relevance", "relevance_error", "correctness_error")
_CLAIMS = ("reference", "actual", "matching")
_LLM_KEYS = frozenset(
    (
        *(f"answer_{key}" for key in _ANSWER_KEYS),
        *(f"answer_{kind}_claims_count" for kind in _CLAIMS),
        "answer_correctness_reason",
        *(
            f"{prefix}_{metric}{suffix}"
            for prefix in ("retrieval_answer", "retrieval_context")
            for metric in ("recall", "precision", "f1")
            for suffix in ("", "_error")
            if (metric, suffix) != ("f1", "_error")
        ),
    )
)


class Annotations:
    """`matches` written to reference steps during a run, by step object (identity)."""

    def __init__(self) -> None:
        self.values: dict[int, tuple[Any, Any]] = {}

    def commit(self, pending: dict[int, tuple[Any, Any]]) -> None:
        self.values.update(pending)


def with_annotations(value: Any, annotations: Annotations, memo: dict[int, Any]) -> Any:
    """`value` (a record's reference steps) with the run's `matches` applied to copies."""
    if not annotations.values:
        return value
    found = annotations.values.get(id(value))
    if found is not None and found[0] is value:
        if id(value) not in memo:
            copy = dict(value)
            copy["matches"] = found[1]
            memo[id(value)] = copy
        return memo[id(value)]
    if isinstance(value, list):
        items = [with_annotations(v, annotations, memo) for v in value]
        if any(a is not b for a, b in zip(items, value, strict=True)):
            return items
    return value


def _keep(result: Mapping[str, Any]) -> dict[str, Any]:
    renamed = {
        ("answer_correctness_error" if k == "answer_eval_error" else k): v
        for k, v in result.items()
    }
    return {k: v for k, v in renamed.items() if k in _LLM_KEYS}


async def _retrieval_metrics(
    models: JudgeModels, prefix: str, question: Mapping[str, Any], reference: str, output: Any
) -> dict[str, Any]:
    from gtog.qa._llm_metrics import retrieval_metrics

    texts = [c["text"] for c in json.loads(output)]
    result = await retrieval_metrics(
        models.chat, prefix, question["question_text"], reference, texts
    )
    return _keep(result)


async def evaluate_question_ge6(
    template_id: Any,
    question: Mapping[str, Any],
    response: Mapping[str, Any],
    models: JudgeModels,
    pending: dict[int, tuple[Any, Any]],
    *,
    relevance_questions: int = 3,
) -> dict[str, Any]:
    """The record of one question; `matches` writes go to `pending` (see `Annotations`).

    Raises where graphrag-eval 6.6.1 raises."""
    record: dict[str, Any] = {
        "template_id": template_id,
        "question_id": response["question_id"],
        "question_text": question["question_text"],
    }
    for key in USAGE_KEYS:
        if key in response:
            record[key] = response[key]
    if "actual_answer" in response:
        record["actual_answer"] = response["actual_answer"]
    if "reference_answer" in question:
        record["reference_answer"] = question["reference_answer"]
    if "reference_steps" in question:
        record["reference_steps"] = question["reference_steps"]
    if "error" in response:
        record.update(status="error", error=response["error"])
    else:
        record["status"] = "success"
    actual_steps = response.get("actual_steps", [])
    judged = models.chat is not None
    if judged:
        actual_steps = [dict(s) for s in actual_steps]
        for step in actual_steps:
            if step["name"] == "retrieval" and "output" in step and "reference_answer" in question:
                step.update(
                    await _retrieval_metrics(
                        models,
                        "retrieval_answer",
                        question,
                        question["reference_answer"],
                        step["output"],
                    )
                )
    record["actual_steps"] = actual_steps
    if "reference_steps" in question:
        groups = question["reference_steps"]
        matches = match_groups_ge6(groups, actual_steps)
        for m in matches:  # graphrag-eval writes `matches` into the reference step
            written = actual_steps[m.actual_index]["id"]
            step = groups[m.group][m.reference_index]
            pending[id(step)] = (step, written)
        record["steps_score"] = steps_score_ge6(groups, matches)
        for m in matches if judged else ():
            reference, actual = groups[m.group][m.reference_index], actual_steps[m.actual_index]
            if reference["name"] == "retrieval" and "output" in actual:
                texts = [c["text"] for c in json.loads(reference["output"])]
                actual.update(
                    await _retrieval_metrics(
                        models, "retrieval_context", question, "\n".join(texts), actual["output"]
                    )
                )
    if "actual_answer" in response:
        record.update(await _answer_metrics(question, response, models, relevance_questions))
    return record


async def _answer_metrics(
    question: Mapping[str, Any],
    response: Mapping[str, Any],
    models: JudgeModels,
    relevance_questions: int,
) -> dict[str, Any]:
    result: dict[str, Any] = {}
    if models.chat is None:
        return result
    from gtog.qa._llm_metrics import answer_correctness, answer_relevance

    answer, text = response["actual_answer"], question["question_text"]
    if models.answer_relevance and models.embedding is not None:
        result.update(
            _keep(
                await answer_relevance(
                    models.chat, models.embedding, text, answer, relevance_questions
                )
            )
        )
    if models.answer_correctness and "reference_answer" in question:
        result.update(
            _keep(await answer_correctness(models.chat, text, question["reference_answer"], answer))
        )
    return result


def _items(reference_qas: Any, source: str) -> list[tuple[Any, Any]]:
    """(template id, question) pairs; `InputError` where graphrag-eval cannot iterate."""
    from gtog.qa._io import InputError

    items: list[tuple[Any, Any]] = []
    if not isinstance(reference_qas, list | tuple):
        raise InputError(f"{source}: (top level): must be a list of templates")
    for t, template in enumerate(reference_qas):
        try:
            template_id = template["template_id"]
            questions = list(template["questions"])
        except (KeyError, TypeError, IndexError) as exc:
            problem = f"{source}: [{t}]: needs 'template_id' and 'questions' ({exc!r})"
            raise InputError(problem) from exc
        for q, question in enumerate(questions):
            try:
                question["id"]
            except (KeyError, TypeError, IndexError) as exc:
                problem = f"{source}: [{t}].questions[{q}].id: required ({exc!r})"
                raise InputError(problem) from exc
            items.append((template_id, question))
    return items


def _lookup(responses: Any, question_id: Any) -> Any:
    """graphrag-eval's `responses_dict[question["id"]]`; a list is gtog's extension."""
    try:
        return responses[question_id]
    except (KeyError, TypeError, IndexError):
        return None


async def run_evaluation_ge6(
    reference_qas: Any,
    chat_responses: Any,
    models: JudgeModels,
    *,
    concurrency: int = 4,
    relevance_questions: int = 3,
    sources: tuple[str, str] = ("reference", "responses"),
) -> list[dict[str, Any]]:
    """Every question's record in reference order (see the module doc). A question
    graphrag-eval 6.6.1 cannot evaluate (it raises and stops) gets an error record."""
    import asyncio

    items = _items(reference_qas, sources[0])
    if isinstance(chat_responses, list):
        chat_responses = {r["question_id"]: r for r in chat_responses if isinstance(r, Mapping)}
    semaphore = asyncio.Semaphore(max(1, concurrency))

    async def one(template_id: Any, question: Any) -> tuple[dict[str, Any], dict]:
        response = _lookup(chat_responses, question["id"])
        if response is None:
            return _failed(template_id, question, f"{FAILED}: no response for this question"), {}
        pending: dict[int, tuple[Any, Any]] = {}
        try:
            async with semaphore:
                record = await evaluate_question_ge6(
                    template_id,
                    question,
                    response,
                    models,
                    pending,
                    relevance_questions=relevance_questions,
                )
        except Exception as exc:  # graphrag-eval 6.6.1 raises here: this question's error
            return _failed(template_id, question, f"{FAILED}: {type(exc).__name__}: {exc}"), {}
        return record, pending

    if models.chat is None:  # nothing to wait for: one after the other, no tasks
        outcomes = [await one(t, q) for t, q in items]
    else:
        outcomes = list(await asyncio.gather(*(one(t, q) for t, q in items)))
    annotations = Annotations()
    for _, pending in outcomes:  # in question order: a later write wins, as there
        annotations.commit(pending)
    records = [record for record, _ in outcomes]
    if annotations.values:
        memo: dict[int, Any] = {}
        for record in records:
            if "reference_steps" in record:
                steps = with_annotations(record["reference_steps"], annotations, memo)
                record["reference_steps"] = steps
    return records


def _failed(template_id: Any, question: Any, error: str) -> dict[str, Any]:
    record: dict[str, Any] = {"template_id": template_id, "question_id": question["id"]}
    text = question.get("question_text") if isinstance(question, Mapping) else None
    if isinstance(text, str):
        record["question_text"] = text
    return {**record, "status": "error", "error": error}
