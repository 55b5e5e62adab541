"""Turn a `gtog eval` per-question record into a graphrag-eval response."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["eval_record_to_response"]


def eval_record_to_response(
    question_id: str,
    answer: str | None,
    error: str | None,
    input_tokens: int | None,
    output_tokens: int | None,
    elapsed_sec: float | None,
    retrieved: list[dict[str, str]] | None,
    query: str,
) -> dict[str, Any]:
    """A response in `run_evaluation`'s format for one GraphRAG method's answer.

    The method's retrieval becomes one `retrieval` step whose output lists the
    `{id, text}` of the text units it used (k = their count), so the step and
    retrieval metrics apply to GraphRAG methods too. `retrieved=None` (the method saved
    no sources) leaves the step out: nothing to score is not a score of 0. An `error`
    gives the error shape. A figure the method did not state (None: an answers file, an
    HTTP method) is left out, never written as 0.
    """
    total = None if input_tokens is None or output_tokens is None else input_tokens + output_tokens
    figures = {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "total_tokens": total,
        "elapsed_sec": elapsed_sec,
    }
    usage = {k: v for k, v in figures.items() if v is not None}
    if error is not None:
        return {"question_id": question_id, "status": "error", "error": error, **usage}
    answer_part = {"actual_answer": answer if answer is not None else ""}
    if retrieved is None:
        return {"question_id": question_id, **usage, **answer_part}
    documents = [{"id": str(d["id"]), "text": str(d.get("text", ""))} for d in retrieved]
    step = {
        "name": "retrieval",
        "args": {"query": query, "k": len(documents)},
        "id": f"{question_id}:retrieval",
        "status": "success",
        "output": json.dumps(documents, indent=2, ensure_ascii=False),
    }
    return {
        "question_id": question_id,
        **usage,
        "actual_steps": [step],
        **answer_part,
    }
