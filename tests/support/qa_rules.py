"""Scripted judges for the `gtog.qa` LLM metrics: deterministic functions of the prompt.

- answer correctness: claims are the comma/newline/"and"-separated parts of each
  answer; a reference claim matches when its text occurs in the actual answer;
- answer relevance: the regenerated questions are "What about <answer>?" variants;
  answers saying "don't know" are noncommittal;
- retrieval recall: reference statements (comma/newline parts) are attributed when
  they occur in the contexts; retrieval precision: a context is useful when it
  contains a reference statement.

Markers in the judged text script failures: GARBLED (always unparsable), FLAKY
(unparsable once, then fine), BROKEN (HTTP 500).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable

from tests.support.scripted_server import ChatRequest, Fail, Rule

__all__ = ["qa_rules", "split_claims"]


def _section(prompt: str, tag: str) -> str:
    match = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", prompt, re.S)
    return match.group(1) if match else ""


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[*`\"]", "", text).lower().split())


def split_claims(text: str) -> list[str]:
    """The scripted judges' claims of a text."""
    return [c.strip() for c in re.split(r",|\n|\band\b", text) if c.strip()]


def _marker_reply(prompt: str, seen: Counter[str], good: str) -> str | Fail:
    if "BROKEN" in prompt:
        return Fail(500, "scripted judge outage")
    if "GARBLED" in prompt:
        return "I refuse to answer in JSON."
    if "FLAKY" in prompt:
        seen[prompt] += 1
        if seen[prompt] == 1:
            return "{not json"
    return good


def qa_rules() -> list[Rule]:
    """Rules answering the four gtog.qa judge prompts."""
    seen: Counter[str] = Counter()

    def correctness(r: ChatRequest) -> str | Fail:
        reference = _section(r.prompt, "reference_answer")
        actual = _section(r.prompt, "actual_answer")
        ref_claims, act_claims = split_claims(reference), split_claims(actual)
        matching = sum(1 for c in ref_claims if _norm(c) in _norm(actual))
        reply = {
            "reference_claims": ref_claims,
            "actual_claims": act_claims,
            "matching_claims_count": min(matching, len(act_claims)),
            "reason": f"{matching} of {len(ref_claims)} reference claims are in the answer",
        }
        return _marker_reply(r.prompt, seen, json.dumps(reply))

    def relevance(r: ChatRequest) -> str | Fail:
        answer = _section(r.prompt, "answer")
        n = int(re.search(r"write (\d+) different questions", r.prompt).group(1))  # type: ignore[union-attr]
        if "don't know" in answer.lower():
            reply = {"questions": ["What is not known?"], "noncommittal": True}
        else:
            reply = {
                "questions": [f"What about {answer}? ({i})" for i in range(n)],
                "noncommittal": False,
            }
        return _marker_reply(r.prompt, seen, json.dumps(reply))

    def contexts(prompt: str) -> list[str]:
        return re.findall(r'<context index="\d+">\n(.*?)\n</context>', prompt, re.S)

    def recall(r: ChatRequest) -> str | Fail:
        statements = split_claims(_section(r.prompt, "reference"))
        shown = _norm("\n".join(contexts(r.prompt)))
        reply = {
            "statements": [{"statement": s, "attributed": _norm(s) in shown} for s in statements],
            "reason": "statements found verbatim in the contexts are attributed",
        }
        return _marker_reply(r.prompt, seen, json.dumps(reply))

    def precision(r: ChatRequest) -> str | Fail:
        statements = [_norm(s) for s in split_claims(_section(r.prompt, "reference"))]
        verdicts = [
            {"context": i, "useful": any(s in _norm(c) for s in statements)}
            for i, c in enumerate(contexts(r.prompt), start=1)
        ]
        reply = {"verdicts": verdicts, "reason": "contexts holding a reference statement help"}
        return _marker_reply(r.prompt, seen, json.dumps(reply))

    def marker(name: str) -> Callable[[ChatRequest], bool]:
        return lambda r: f"[gtog-qa:{name}]" in r.prompt

    return [
        Rule("qa-answer-correctness", marker("answer-correctness"), correctness),
        Rule("qa-answer-relevance", marker("answer-relevance"), relevance),
        Rule("qa-retrieval-recall", marker("retrieval-recall"), recall),
        Rule("qa-retrieval-precision", marker("retrieval-precision"), precision),
    ]
