"""Scripted replies to `gtog eval generate`'s prompts, and answers to the questions it writes.

The scripted model writes, from the example stories' passages:
- local: per passage, one question per entity it mentions ("What does the story say about
  Maren Holt?"), answered by the passage's first sentence naming the entity, plus three kinds
  of bad candidate: a near-duplicate (same question, one word more), one whose evidence is not
  in the passage, and one that gives its answer away (the check calls it guessable);
- global: one question per report, on how its entities are connected, with the first
  sentence of each of the first two passages as evidence;
- linked: one bridge question per shared entity, a sentence of each passage as evidence.
The check answers `answerable` when there is evidence, `guessable` when the question holds
the answer. Searches answer "What does the story say about X?" with the sentence of the
context that names X (only when the engine retrieved it).
"""

from __future__ import annotations

import json
import re

from tests.support.scripted_server import ChatRequest, Rule
from tests.support.world import ENTITIES

__all__ = ["GENERATION_MARKERS", "generated_answer_rule", "generation_rules"]

GENERATION_MARKERS = {
    "local": "You write test questions about a document, each from one passage of it.",
    "global": "You write test questions about a whole document",
    "linked": "You write test questions that need two passages of a document together.",
    "check": "You check a test question before it is used",
}

_QUOTED = re.compile(r'"""\n(.*?)\n"""', re.S)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n\s*\n", text) if s.strip()]


def _named(text: str) -> list[tuple[str, str]]:
    """(entity title, the first sentence naming it) for each entity the text mentions."""
    out = []
    for title, (_, _, mentions) in ENTITIES.items():
        hit = next((s for s in _sentences(text) if any(m in s for m in mentions)), None)
        if hit is not None:
            out.append((title, hit))
    return out


def _claims(name: str, sentence: str) -> list[str]:
    words = sentence.rstrip(".").split()
    half = max(1, len(words) // 2)
    return [f"{name} is named", " ".join(words[:half]), " ".join(words[half:]) or name]


def _count(prompt: str) -> int:
    m = re.search(r"Write up to (\d+)", prompt)
    return int(m.group(1)) if m else 3


def local_reply(request: ChatRequest) -> str:
    passage = _QUOTED.findall(request.prompt)[0]
    named = _named(passage)
    questions = []
    for title, sentence in named:
        name = title.title()
        questions.append(
            {
                "question": f"What does the story say about {name}?",
                "answer": sentence,
                "evidence": [sentence],
                "assertions": _claims(name, sentence),
            }
        )
    if named:
        title, sentence = named[0]
        name = title.title()
        questions.insert(
            1,
            {
                "question": f"What does the story say about {name}, exactly?",
                "answer": sentence,
                "evidence": [sentence],
                "assertions": _claims(name, sentence),
            },
        )
        questions.insert(
            2,
            {
                "question": f"Which sea monster guards {name}?",
                "answer": "A kraken.",
                "evidence": ["A kraken guards the island at night."],
                "assertions": ["A kraken", "guards", "at night"],
            },
        )
        questions.insert(
            3,
            {
                "question": f"Is it true that {sentence.rstrip('.')}?",
                "answer": sentence,
                "evidence": [sentence],
                "assertions": _claims(name, sentence),
            },
        )
    return json.dumps({"questions": questions[: _count(request.prompt)]})


def global_reply(request: ChatRequest) -> str:
    title = re.search(r'part of the document, "(.*?)":', request.prompt)
    quoted = _QUOTED.findall(request.prompt)
    passages = quoted[1:]
    names = [t.title() for t in ENTITIES if t.title() in (title.group(1) if title else "")]
    evidence = [_sentences(p)[0] for p in passages[:2] if _sentences(p)]
    if not names or not evidence:
        return json.dumps({"questions": []})
    about = " and ".join(names)
    return json.dumps(
        {
            "questions": [
                {
                    "question": f"How are {about} connected across the story?",
                    "answer": f"{about} are connected. " + " ".join(evidence),
                    "evidence": evidence,
                    "assertions": [f"{n} is named" for n in names] + ["they are connected"] * 2,
                }
            ]
        }
    )


def linked_reply(request: ChatRequest) -> str:
    entity = re.search(r"Both passages mention (.*?) \(", request.prompt)
    quoted = _QUOTED.findall(request.prompt)
    title = entity.group(1) if entity else ""
    mentions = ENTITIES.get(title, ("", "", (title,)))[2]
    picks = [
        next((s for s in _sentences(p) if any(m in s for m in mentions)), None) for p in quoted
    ]
    if len(quoted) < 2 or None in picks:
        return json.dumps({"questions": []})
    name = title.title()
    return json.dumps(
        {
            "questions": [
                {
                    "kind": "bridge",
                    "question": f"What does the story say about {name} in both of its parts?",
                    "answer": " ".join(p for p in picks if p),
                    "evidence": picks,
                    "assertions": [f"{name} is named", *(p or "" for p in picks)],
                }
            ]
        }
    )


def check_reply(request: ChatRequest) -> str:
    question = re.search(r"Question: (.*?)\n", request.prompt)
    answer = re.search(r"Proposed answer: (.*?)\n", request.prompt)
    evidence = request.prompt.split("Evidence:", 1)[-1]
    q = (question.group(1) if question else "").lower()
    a = (answer.group(1) if answer else "").lower().rstrip(".")
    return json.dumps(
        {
            "answerable": int("- " in evidence),
            "guessable": int(bool(a) and a in q),
            "reason": "scripted check",
        }
    )


def generation_rules() -> list[Rule]:
    """Rules for the generation prompts (put them in front of the default rules)."""
    replies = {"local": local_reply, "global": global_reply, "linked": linked_reply}
    rules = [
        Rule(f"generate:{kind}", lambda r, m=GENERATION_MARKERS[kind]: m in r.prompt, reply)
        for kind, reply in replies.items()
    ]
    rules.append(
        Rule("generate:check", lambda r: GENERATION_MARKERS["check"] in r.prompt, check_reply)
    )
    return rules


def generated_answer_rule() -> Rule:
    """local/basic search: "What does the story say about X?" answered from the context."""
    asks = re.compile(r"What does the story say about (.*?)(?:, exactly| in both .*)?\?$")

    def reply(request: ChatRequest) -> str:
        m = asks.match(request.last_user.strip())
        if m is None:
            return "I do not know."
        name = m.group(1)
        context = request.system
        hit = next((s for s in _sentences(context) if name.split()[0] in s), None)
        return hit or "I do not know."

    return Rule(
        "search:generated",
        lambda r: (
            ("---Data tables---" in r.system or "---Role---" in r.system)
            and "What does the story say about" in r.last_user
        ),
        reply,
    )
