"""Scripted replies to gtog's Think-on-Graph prompts (keyed on the prompt files' wording).

The scripted model is deliberately simple and deterministic:
- linking: the capitalised names in the question;
- pruning: each numbered candidate scored by how many content words it shares with the
  question (plus a small bonus for `keywords`), top `width` kept, scores summing to 1;
- reasoning: sufficient when a fact's evidence names are in the knowledge paths;
- answer: the fact's answer when its evidence is in the evidence text, else "I do not know."
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from tests.support.scripted_server import ChatRequest, Rule, ScriptedServer
from tests.support.world import ENTITIES, Fact, example_facts

__all__ = [
    "TOG_MARKERS",
    "candidate_lines",
    "garbage_pruning_rules",
    "question_of",
    "tog_rules",
    "world_tog_facts",
]

TOG_MARKERS = {
    "entity_linking": "(Think-on-Graph entity linking)",
    "relation_pruning": "(Think-on-Graph relation pruning)",
    "entity_pruning": "(Think-on-Graph entity pruning)",
    "reasoning": "(Think-on-Graph reasoning)",
    "answer": "(Think-on-Graph answer)",
}
"""A phrase in each built-in ToG prompt that names its stage."""

_STOP = {
    "who",
    "what",
    "which",
    "where",
    "when",
    "why",
    "how",
    "the",
    "and",
    "that",
    "did",
    "does",
    "from",
    "for",
    "with",
    "was",
    "his",
    "her",
    "whom",
    "into",
    "this",
    "are",
}
_QUESTION_WORDS = {"Who", "What", "Which", "Where", "When", "Why", "How", "From", "In", "Did"}


def world_tog_facts() -> list[Fact]:
    """The example questions, gated on the first world entity named in each answer."""
    facts = []
    for fact in example_facts():
        names = [t.title() for t in ENTITIES if t.title().lower() in fact.answer.lower()]
        facts.append(Fact(fact.question, fact.answer, tuple(names[:1]) or fact.evidence))
    return facts


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 3 and w not in _STOP}


def question_of(request: ChatRequest) -> str:
    """The `Question:` line of a ToG prompt."""
    m = re.search(r"^Question: (.*)$", request.last_user, re.M)
    return m.group(1).strip() if m else ""


def candidate_lines(request: ChatRequest) -> list[str]:
    """The numbered candidate lines `[n] ...` of a pruning prompt, in order."""
    return re.findall(r"^\[\d+\] .*$", request.last_user, re.M)


def _section(prompt: str, start: str, end: str) -> str:
    part = prompt.split(start, 1)[-1]
    return part.split(end, 1)[0] if end in part else part


def _linking_reply(request: ChatRequest) -> str:
    names = re.findall(r"[A-Z][a-z]+(?: [A-Z][a-z]+)*", question_of(request))
    names = [n for n in names if n not in _QUESTION_WORDS]
    return json.dumps({"entities": names})


def _pruning_reply(key: str, keywords: Iterable[str]):
    bonus = {k.lower() for k in keywords}

    def reply(request: ChatRequest) -> str:
        width_m = re.search(r"Retrieve up to (\d+)", request.last_user)
        width = int(width_m.group(1)) if width_m else len(candidate_lines(request))
        question = _words(question_of(request))
        scored = []
        for i, line in enumerate(candidate_lines(request), start=1):
            words = _words(line.split("] ", 1)[1])
            score = len(question & words) + 0.5 * len(bonus & words)
            scored.append((score, -i, i))
        top = sorted(scored, reverse=True)[:width]
        total = sum(s for s, _, _ in top) or 1.0
        return json.dumps(
            {key: [{"id": i, "score": round(s / total, 4)} for s, _, i in top if s > 0]}
        )

    return reply


def _fact_for(facts: list[Fact], request: ChatRequest) -> Fact | None:
    question = question_of(request).lower()
    return next((f for f in facts if f.question.lower() == question), None)


def _has_evidence(fact: Fact | None, text: str) -> bool:
    return fact is not None and all(e.lower() in text.lower() for e in fact.evidence)


def _reasoning_reply(facts: list[Fact]):
    def reply(request: ChatRequest) -> str:
        paths = _section(request.last_user, "Knowledge paths:", "Reply with JSON only")
        ok = _has_evidence(_fact_for(facts, request), paths)
        reason = "the paths name the answer" if ok else "the answer is not in the paths"
        return json.dumps({"sufficient": ok, "reason": reason})

    return reply


def _answer_reply(facts: list[Fact]):
    def reply(request: ChatRequest) -> str:
        evidence = _section(request.last_user, "Evidence:", "\nQuestion: ")
        fact = _fact_for(facts, request)
        return f"{fact.answer}." if fact and _has_evidence(fact, evidence) else "I do not know."

    return reply


def _marked(stage: str):
    return lambda r: TOG_MARKERS[stage] in r.prompt


def tog_rules(facts: list[Fact] | None = None, keywords: Iterable[str] = ()) -> list[Rule]:
    """The five ToG stages, answered as described in the module docstring."""
    facts = world_tog_facts() if facts is None else facts
    keywords = tuple(keywords)
    return [
        Rule("tog:entity_linking", _marked("entity_linking"), _linking_reply),
        Rule(
            "tog:relation_pruning",
            _marked("relation_pruning"),
            _pruning_reply("relations", keywords),
        ),
        Rule("tog:entity_pruning", _marked("entity_pruning"), _pruning_reply("entities", keywords)),
        Rule("tog:reasoning", _marked("reasoning"), _reasoning_reply(facts)),
        Rule("tog:answer", _marked("answer"), _answer_reply(facts)),
    ]


def add_tog_rules(server: ScriptedServer) -> None:
    """Answer ToG's stages on `server` too (after the judge rules, which quote answers)."""
    from tests.support.world import judge_rules

    at = len(judge_rules())
    server.rules[at:at] = tog_rules()


def garbage_pruning_rules() -> list[Rule]:
    """Unparsable replies to both pruning stages (to put in front of `tog_rules`)."""
    return [
        Rule(
            "tog:garbage_relations",
            _marked("relation_pruning"),
            lambda r: "Hmm, hard to say -- maybe the first one?",
        ),
        Rule("tog:garbage_entities", _marked("entity_pruning"), lambda r: "{'entities': oops"),
    ]
