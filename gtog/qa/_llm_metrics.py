"""LLM-judged metrics: answer correctness, answer relevance and retrieval quality.

Each metric asks the judge for one JSON object (prompts in `gtog/qa/prompts/`) through
the shared structured-reply helper `gtog.llm._replies.ask_json`: strict validation against a
pydantic schema, never a value the reply does not state, one retry on a bad reply. Every
metric returns the output keys of graphrag-eval; a failure becomes an `*_error` key,
never an exception. Costs are USD from the real token usage of every attempt and
LiteLLM's price map, and None (null) when a model's price is unknown.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field, create_model, field_validator, model_validator

from gtog._errors import describe_exception
from gtog._prompts import render_prompt as fill_template
from gtog.llm._models import ChatModel, EmbeddingModel
from gtog.llm._replies import ask_json
from gtog.llm._usage import model_cost_usd
from gtog.qa._retrieval import f1_score

__all__ = [
    "JudgeError",
    "add_costs",
    "answer_correctness",
    "answer_relevance",
    "claims_scores",
    "context_average_precision",
    "cosine",
    "render_prompt",
    "retrieval_metrics",
]

PROMPTS = Path(__file__).parent / "prompts"
S = TypeVar("S", bound=BaseModel)


class JudgeError(RuntimeError):
    """The judge failed or kept replying in a shape that cannot be used."""

    def __init__(self, message: str, cost: float | None) -> None:
        super().__init__(message)
        self.cost = cost


@cache
def _template(name: str) -> str:
    return (PROMPTS / f"{name}.txt").read_text(encoding="utf-8")


def render_prompt(name: str, **values: object) -> str:
    """The prompt `name` with each `{{key}}` replaced by its value, in one pass (gtog's one
    renderer: a value holding `{{other_key}}` is never filled in again)."""
    return fill_template(_template(name), values)


def add_costs(*costs: float | None) -> float | None:
    """Sum of costs; None when any is unknown."""
    if any(c is None for c in costs):
        return None
    return float(sum(c for c in costs if c is not None))


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity (0.0 for a zero vector)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def claims_scores(
    reference_count: int, actual_count: int, matching_count: int
) -> tuple[float | None, float | None, float | None]:
    """Recall, precision and F1 from claim counts (None where a count is zero)."""
    recall = matching_count / reference_count if reference_count else None
    precision = matching_count / actual_count if actual_count else None
    return recall, precision, f1_score(recall, precision)


def context_average_precision(verdicts: Sequence[bool]) -> float:
    """RAGAS context precision: mean precision@k over the ranks of useful contexts."""
    hits, total = 0, 0.0
    for rank, useful in enumerate(verdicts, start=1):
        if useful:
            hits += 1
            total += hits / rank
    return total / hits if hits else 0.0


async def _ask_json(model: ChatModel, prompt: str, schema: type[S]) -> tuple[S, float | None]:
    """The validated reply and the cost of all attempts (gtog.llm._replies.ask_json: one retry)."""
    try:
        reply = await ask_json(model, prompt, schema, temperature=0.0)
    except Exception as exc:
        raise JudgeError(f"judge call failed: {describe_exception(exc, 300)}", None) from exc
    cost: float | None = add_costs(0.0, *(r.cost_usd for r in reply.replies))
    if reply.value is None:
        raise JudgeError(f"unusable judge reply: {reply.error}", cost)
    return reply.value, cost


class Claims(BaseModel):
    """The claims-matching reply of answer correctness."""

    reference_claims: list[Any]
    actual_claims: list[Any]
    matching_claims_count: int
    reason: str = ""

    @field_validator("matching_claims_count", mode="before")
    @classmethod
    def _count(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError("'matching_claims_count' must be an integer")
        return int(value)

    @model_validator(mode="after")
    def _counts(self) -> Claims:
        n_ref, n_act, n = (
            len(self.reference_claims),
            len(self.actual_claims),
            self.matching_claims_count,
        )
        if n_ref < 1 or n_act < 1 or not 0 <= n <= min(n_ref, n_act):
            raise ValueError(f"invalid claim counts {n_ref}/{n_act}/{n}")
        return self


def _strict_bool(value: Any) -> bool:
    """A JSON boolean, or the text "true"/"false"; anything else ("yes", 1) is no verdict."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ValueError(f"must be true or false, not {value!r}")


class Questions(BaseModel):
    """The regenerated questions of answer relevance."""

    questions: list[Any]
    noncommittal: bool | str = False

    @model_validator(mode="after")
    def _some(self) -> Questions:
        if not self.texts() and not self.is_noncommittal:
            raise ValueError("no questions generated")
        return self

    def texts(self) -> list[str]:
        """The non-empty questions."""
        return [str(q).strip() for q in self.questions if str(q).strip()]

    @property
    def is_noncommittal(self) -> bool:
        """The judge found the answer noncommittal."""
        value = self.noncommittal
        return value.strip().lower() in ("true", "1", "yes") if isinstance(value, str) else value


class Statement(BaseModel):
    """One reference statement and whether a context supports it."""

    attributed: bool

    _check = field_validator("attributed", mode="before")(
        classmethod(lambda cls, v: _strict_bool(v))
    )

    @property
    def supported(self) -> bool:
        """True when the statement is attributed to a context."""
        return self.attributed


class Statements(BaseModel):
    """The retrieval-recall reply."""

    statements: list[Statement] = Field(min_length=1)
    reason: str = ""


class Usefulness(BaseModel):
    """One context and whether it helps."""

    useful: bool

    @field_validator("useful", mode="before")
    @classmethod
    def _strict(cls, value: Any) -> bool:
        return _strict_bool(value)


def _verdicts_schema(count: int) -> type[BaseModel]:
    """The retrieval-precision reply: exactly one verdict per context."""
    return create_model(
        f"Verdicts{count}",
        verdicts=(list[Usefulness], Field(min_length=count, max_length=count)),
        reason=(str, ""),
    )


async def answer_correctness(
    model: ChatModel | None, question: str, reference_answer: str, actual_answer: str
) -> dict[str, Any]:
    """Claims-based recall/precision/F1 of an answer against the reference answer."""
    if model is None:
        return {"answer_eval_error": "no judge chat model configured"}
    if not all(str(s).strip() for s in (question, reference_answer, actual_answer)):
        return {"answer_eval_error": "question, reference answer or actual answer is blank"}
    prompt = render_prompt(
        "answer_correctness",
        question=question,
        reference_answer=reference_answer,
        actual_answer=actual_answer,
    )
    try:
        claims, _ = await _ask_json(model, prompt, Claims)
    except JudgeError as exc:
        return {"answer_eval_error": str(exc)}
    n_ref, n_act = len(claims.reference_claims), len(claims.actual_claims)
    n_match, reason = claims.matching_claims_count, claims.reason
    recall, precision, f1 = claims_scores(n_ref, n_act, n_match)
    result: dict[str, Any] = {
        "answer_reference_claims_count": n_ref,
        "answer_actual_claims_count": n_act,
        "answer_matching_claims_count": n_match,
        "answer_correctness_reason": reason,
    }
    scores = {"answer_recall": recall, "answer_precision": precision, "answer_f1": f1}
    result.update({k: v for k, v in scores.items() if v is not None})
    return result


async def _embed_with_cost(
    model: EmbeddingModel, texts: list[str]
) -> tuple[list[list[float]], float | None]:
    response = await model.embedding.embedding_async(input=texts)
    vectors = [list(d.embedding) for d in sorted(response.data, key=lambda d: d.index)]
    usage = getattr(response, "usage", None)
    tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    if not tokens:
        tokens = sum(len(model.embedding.tokenizer.encode(t)) for t in texts)
    return vectors, model_cost_usd(model.config, tokens, 0)


async def answer_relevance(
    chat: ChatModel | None,
    embedding: EmbeddingModel | None,
    question: str,
    answer: str,
    n_questions: int = 3,
) -> dict[str, Any]:
    """RAGAS answer relevance: mean cosine of the question to questions regenerated
    from the answer; 0 for a noncommittal answer. Cost covers chat and embeddings."""
    if chat is None or embedding is None:
        return {"answer_relevance_error": "no judge chat and embedding models configured"}
    if not str(answer).strip():
        return {"answer_relevance_error": "actual answer is blank"}
    prompt = render_prompt("answer_relevance", n=n_questions, answer=answer)
    try:
        reply, cost = await _ask_json(chat, prompt, Questions)
    except JudgeError as exc:
        return {"answer_relevance_error": str(exc), "answer_relevance_cost": exc.cost}
    questions, noncommittal = reply.texts()[:n_questions], reply.is_noncommittal
    if noncommittal or not questions:
        return {"answer_relevance": 0.0, "answer_relevance_cost": cost}
    try:
        vectors, embed_cost = await _embed_with_cost(embedding, [question, *questions])
    except Exception as exc:
        return {
            "answer_relevance_error": f"embedding failed: {describe_exception(exc, 300)}",
            "answer_relevance_cost": cost,
        }
    score = sum(cosine(vectors[0], v) for v in vectors[1:]) / len(questions)
    return {"answer_relevance": score, "answer_relevance_cost": add_costs(cost, embed_cost)}


def _format_contexts(contexts: Sequence[str]) -> str:
    return "\n".join(
        f'<context index="{i}">\n{text}\n</context>' for i, text in enumerate(contexts, start=1)
    )


def _recall(reply: Statements) -> float:
    return sum(st.supported for st in reply.statements) / len(reply.statements)


async def retrieval_metrics(
    model: ChatModel | None,
    prefix: str,
    question: str,
    reference: str,
    contexts: Sequence[str],
) -> dict[str, Any]:
    """`{prefix}_recall/precision/f1` with `_reason`, `_error` and `_cost` keys:
    how well retrieved contexts cover (recall) and stick to (precision) a reference."""
    result: dict[str, Any] = {}
    if model is None:
        for metric in ("recall", "precision"):
            result[f"{prefix}_{metric}_error"] = "no judge chat model configured"
        return result
    if not contexts:
        for metric in ("recall", "precision"):
            result[f"{prefix}_{metric}"] = 0.0
            result[f"{prefix}_{metric}_cost"] = 0.0
        result[f"{prefix}_f1"] = 0.0
        result[f"{prefix}_f1_cost"] = 0.0
        return result
    shown = _format_contexts(contexts)
    jobs: list[tuple[str, str, type[BaseModel]]] = [
        ("recall", "retrieval_recall", Statements),
        ("precision", "retrieval_precision", _verdicts_schema(len(contexts))),
    ]
    for metric, prompt_name, schema in jobs:
        prompt = render_prompt(
            prompt_name, question=question, reference=reference, contexts=shown, count=len(contexts)
        )
        try:
            reply, cost = await _ask_json(model, prompt, schema)
        except JudgeError as exc:
            result[f"{prefix}_{metric}_error"] = str(exc)
            result[f"{prefix}_{metric}_cost"] = exc.cost
            continue
        if isinstance(reply, Statements):
            value = _recall(reply)
        else:
            value = context_average_precision([v.useful for v in reply.verdicts])  # type: ignore[attr-defined]
        result[f"{prefix}_{metric}"] = value
        result[f"{prefix}_{metric}_reason"] = str(getattr(reply, "reason", ""))
        result[f"{prefix}_{metric}_cost"] = cost
    f1 = f1_score(result.get(f"{prefix}_recall"), result.get(f"{prefix}_precision"))
    if f1 is not None:
        result[f"{prefix}_f1"] = f1
        result[f"{prefix}_f1_cost"] = add_costs(
            result[f"{prefix}_recall_cost"], result[f"{prefix}_precision_cost"]
        )
    return result
