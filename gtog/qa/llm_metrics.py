"""LLM-judged metrics: answer correctness, answer relevance and retrieval quality.

Each metric asks the judge for one JSON object (prompts in `gtog/qa/prompts/`),
parses it with `json_repair`, validates it, and retries once on a bad reply. Every
metric returns the output keys of graphrag-eval; a failure becomes an `*_error` key,
never an exception. Costs are USD from the real token usage of every attempt and
LiteLLM's price map, and None (null) when a model's price is unknown.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import json_repair

from gtog.llm import ChatModel, EmbeddingModel, model_cost_usd
from gtog.qa.retrieval import f1_score

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
T = TypeVar("T")


class JudgeError(RuntimeError):
    """The judge failed or kept replying in a shape that cannot be used."""

    def __init__(self, message: str, cost: float | None) -> None:
        super().__init__(message)
        self.cost = cost


@cache
def _template(name: str) -> str:
    return (PROMPTS / f"{name}.txt").read_text(encoding="utf-8")


def render_prompt(name: str, **values: object) -> str:
    """The prompt `name` with each `{{key}}` replaced by its value."""
    text = _template(name)
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", str(value))
    return text


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


async def _ask_json(
    model: ChatModel, prompt: str, parse: Callable[[Any], T]
) -> tuple[T, float | None]:
    """The parsed JSON reply and the cost of all attempts (one retry on a bad reply)."""
    cost: float | None = 0.0
    last_error = ""
    for _ in range(2):
        try:
            reply = await model.chat(prompt, temperature=0.0, json_mode=True)
        except Exception as exc:
            raise JudgeError(f"judge call failed: {_short(exc)}", cost) from exc
        cost = add_costs(cost, reply.cost_usd)
        try:
            data = json_repair.loads(reply.text)
            return parse(data), cost
        except (ValueError, TypeError, KeyError) as exc:
            last_error = f"unusable judge reply: {exc}"
    raise JudgeError(last_error, cost)


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:300]


def _require_dict(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")
    return data


def _parse_claims(data: Any) -> tuple[int, int, int, str]:
    obj = _require_dict(data)
    ref, act = obj.get("reference_claims"), obj.get("actual_claims")
    if not isinstance(ref, list) or not isinstance(act, list):
        raise ValueError("'reference_claims' and 'actual_claims' must be lists")
    matching = obj.get("matching_claims_count")
    if isinstance(matching, bool) or not isinstance(matching, int | float):
        raise ValueError("'matching_claims_count' must be an integer")
    n_ref, n_act, n_match = len(ref), len(act), int(matching)
    if n_ref < 1 or n_act < 1 or not 0 <= n_match <= min(n_ref, n_act):
        raise ValueError(f"invalid claim counts {n_ref}/{n_act}/{n_match}")
    return n_ref, n_act, n_match, str(obj.get("reason", ""))


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
        (n_ref, n_act, n_match, reason), _ = await _ask_json(model, prompt, _parse_claims)
    except JudgeError as exc:
        return {"answer_eval_error": str(exc)}
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


def _parse_questions(n: int) -> Callable[[Any], tuple[list[str], bool]]:
    def parse(data: Any) -> tuple[list[str], bool]:
        obj = _require_dict(data)
        questions = obj.get("questions")
        if not isinstance(questions, list):
            raise ValueError("'questions' must be a list")
        questions = [str(q).strip() for q in questions if str(q).strip()][:n]
        noncommittal = obj.get("noncommittal", False)
        if isinstance(noncommittal, str):
            noncommittal = noncommittal.strip().lower() in ("true", "1", "yes")
        if not questions and not noncommittal:
            raise ValueError("no questions generated")
        return questions, bool(noncommittal)

    return parse


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
        parse = _parse_questions(n_questions)
        (questions, noncommittal), cost = await _ask_json(chat, prompt, parse)
    except JudgeError as exc:
        return {"answer_relevance_error": str(exc), "answer_relevance_cost": exc.cost}
    if noncommittal or not questions:
        return {"answer_relevance": 0.0, "answer_relevance_cost": cost}
    try:
        vectors, embed_cost = await _embed_with_cost(embedding, [question, *questions])
    except Exception as exc:
        return {
            "answer_relevance_error": f"embedding failed: {_short(exc)}",
            "answer_relevance_cost": cost,
        }
    score = sum(cosine(vectors[0], v) for v in vectors[1:]) / len(questions)
    return {"answer_relevance": score, "answer_relevance_cost": add_costs(cost, embed_cost)}


def _format_contexts(contexts: Sequence[str]) -> str:
    return "\n".join(
        f'<context index="{i}">\n{text}\n</context>' for i, text in enumerate(contexts, start=1)
    )


def _parse_statements(data: Any) -> tuple[float, str]:
    obj = _require_dict(data)
    statements = obj.get("statements")
    if not isinstance(statements, list) or not statements:
        raise ValueError("'statements' must be a non-empty list")
    flags = []
    for s in statements:
        if not isinstance(s, dict) or "attributed" not in s:
            raise ValueError("each statement needs 'attributed'")
        flags.append(s["attributed"] is True or str(s["attributed"]).lower() == "true")
    return sum(flags) / len(flags), str(obj.get("reason", ""))


def _parse_verdicts(count: int) -> Callable[[Any], tuple[float, str]]:
    def parse(data: Any) -> tuple[float, str]:
        obj = _require_dict(data)
        verdicts = obj.get("verdicts")
        if not isinstance(verdicts, list) or len(verdicts) != count:
            raise ValueError(f"expected {count} verdicts")
        flags = []
        for v in verdicts:
            if not isinstance(v, dict) or "useful" not in v:
                raise ValueError("each verdict needs 'useful'")
            flags.append(v["useful"] is True or str(v["useful"]).lower() == "true")
        return context_average_precision(flags), str(obj.get("reason", ""))

    return parse


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
    jobs: list[tuple[str, str, Callable[[Any], tuple[float, str]]]] = [
        ("recall", "retrieval_recall", _parse_statements),
        ("precision", "retrieval_precision", _parse_verdicts(len(contexts))),
    ]
    for metric, prompt_name, parse in jobs:
        prompt = render_prompt(
            prompt_name, question=question, reference=reference, contexts=shown, count=len(contexts)
        )
        try:
            (value, reason), cost = await _ask_json(model, prompt, parse)
        except JudgeError as exc:
            result[f"{prefix}_{metric}_error"] = str(exc)
            result[f"{prefix}_{metric}_cost"] = exc.cost
            continue
        result[f"{prefix}_{metric}"] = value
        result[f"{prefix}_{metric}_reason"] = reason
        result[f"{prefix}_{metric}_cost"] = cost
    f1 = f1_score(result.get(f"{prefix}_recall"), result.get(f"{prefix}_precision"))
    if f1 is not None:
        result[f"{prefix}_f1"] = f1
        result[f"{prefix}_f1_cost"] = add_costs(
            result[f"{prefix}_recall_cost"], result[f"{prefix}_precision_cost"]
        )
    return result
