"""Scripted replies to gtog's Think-on-Graph prompts (keyed on the prompt files' wording).

The scripted model is deliberately simple and deterministic:
- linking: the capitalised names in the question;
- pruning: each numbered candidate scored by how many content words it shares with the
  question (plus a small bonus for `keywords`), top `width` kept, scores summing to 1;
- edge pruning (absolute scores): each candidate's share of the question's content words
  that its path does not already cover (plus the bonus), every candidate above 0 listed;
- reasoning: sufficient when a fact's evidence names are in the knowledge paths;
- answer: the fact's answer when its evidence is in the evidence text, else "I do not know."
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from tests.support.scripted_server import ChatRequest, Rule, ScriptedServer
from tests.support.world import ENTITIES, RELATIONSHIPS, Fact, example_facts

__all__ = [
    "TOG_MARKERS",
    "candidate_lines",
    "garbage_edge_rules",
    "garbage_pruning_rules",
    "multihop_facts",
    "multihop_items",
    "question_of",
    "tog_rules",
    "world_tog_facts",
]

TOG_MARKERS = {
    "entity_linking": "(Think-on-Graph entity linking)",
    "relation_pruning": "(Think-on-Graph relation pruning)",
    "entity_pruning": "(Think-on-Graph entity pruning)",
    "edge_pruning": "(Think-on-Graph edge pruning)",
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


def _edge_reply(keywords: Iterable[str]):
    bonus = {k.lower() for k in keywords}

    def reply(request: ChatRequest) -> str:
        question = _words(question_of(request))
        scored, open_words = [], question
        for line in request.last_user.splitlines():
            if line.startswith("Path "):  # what the path already covers is not asked again
                open_words = question - _words(line.split(": ", 1)[-1])
            elif re.match(r"^\[\d+\] ", line):
                number, text = line[1:].split("] ", 1)
                words = _words(text)
                hits = len(open_words & words) + 0.5 * len(bonus & words)
                score = min(1.0, hits / max(len(open_words), 1))
                if score > 0:
                    scored.append({"id": int(number), "score": round(score, 4)})
        return json.dumps({"edges": scored})

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


_HOP = re.compile(r"\s*(?:-\[(?P<out>[^\]]*)\]->|<-\[(?P<back>[^\]]*)\]-)\s*")


def evidence_lines(evidence: str) -> list[str]:
    """The edges of ToG's evidence paths as `A --[relation]--> B` lines (what an answer
    asked for `evidence_lines` states)."""
    lines: list[str] = []
    paths = _section(evidence, "-----Paths-----", "\n\n").strip().splitlines()[1:]
    for row in paths:
        chain = row.split("|")[-1]
        nodes, hops = _HOP.split(chain)[0::3], list(_HOP.finditer(chain))
        for i, hop in enumerate(hops):
            a, b = nodes[i].strip(), nodes[i + 1].strip()
            if hop.group("back") is not None:
                a, b = b, a
            lines.append(f"{a} --[{hop.group('out') or hop.group('back')}]--> {b}")
    return list(dict.fromkeys(lines))


def _answer_reply(facts: list[Fact]):
    def reply(request: ChatRequest) -> str:
        # (the last `Evidence:`: an answer format asking for evidence lines names it too)
        evidence = request.last_user.rsplit("\nEvidence:\n", 1)[-1].split("\nQuestion: ")[0]
        fact = _fact_for(facts, request)
        text = f"{fact.answer}." if fact and _has_evidence(fact, evidence) else "I do not know."
        if "write a line `Evidence:`" in request.last_user:  # tog_search.evidence_lines
            text += "\nEvidence:\n" + "\n".join(evidence_lines(evidence))
        return text

    return reply


def _marked(stage: str):
    return lambda r: TOG_MARKERS[stage] in r.prompt


def tog_rules(facts: list[Fact] | None = None, keywords: Iterable[str] = ()) -> list[Rule]:
    """The ToG stages, answered as described in the module docstring."""
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
        Rule("tog:edge_pruning", _marked("edge_pruning"), _edge_reply(keywords)),
        Rule("tog:reasoning", _marked("reasoning"), _reasoning_reply(facts)),
        Rule("tog:answer", _marked("answer"), _answer_reply(facts)),
    ]


def add_tog_rules(server: ScriptedServer) -> None:
    """Answer ToG's stages on `server` too (after the judge rules, which quote answers)."""
    from tests.support.world import judge_rules

    at = len(judge_rules())
    server.rules[at:at] = tog_rules()


def garbage_edge_rules() -> list[Rule]:
    """An unreadable reply to the edge-pruning stage (to put in front of `tog_rules`)."""
    return [
        Rule("tog:garbage_edges", _marked("edge_pruning"), lambda r: "[3] looks best, then [1]")
    ]


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


# -- a generated multi-hop set over the example stories ------------------------------------


def _sentences(text: str) -> list[str]:
    """The sentences of a story (its title line is a sentence of its own)."""
    out = []
    for paragraph in re.split(r"\n\s*\n", text):
        flat = " ".join(paragraph.split())
        out += [s.strip() for s in re.split(r"(?<=[.!?])\s+", flat) if s.strip()]
    return out


def _mentions(title: str, text: str) -> bool:
    return any(m.lower() in text.lower() for m in ENTITIES[title][2])


_BEHIND = {
    "Edda Lorne made the Moon Regulator": "finest work",
    "Maren Holt saved the Grey Heron during the storm": "kept the lamp burning all night",
}
"""Relationships whose story sentence shares no telling word with their description."""


def _evidence_sentence(source: str, target: str, description: str, sentences: list[str]):
    """The story sentence behind a relationship: it names one of its entities and shares
    most of the description's other content words (None when no sentence does)."""
    if description in _BEHIND:
        return next(s for s in sentences if _BEHIND[description] in s)
    names = _words(" ".join([source, target, *ENTITIES[source][2], *ENTITIES[target][2]]))
    wanted = _words(description) - names
    scored = [
        (len(wanted & _words(s)), _mentions(source, s) + _mentions(target, s), -i, s)
        for i, s in enumerate(sentences)
        if _mentions(source, s) or _mentions(target, s)
    ]
    best = max(scored, default=None)
    return best[3] if best is not None and best[0] >= 1 else None


def _hide(text: str, titles: Iterable[str]) -> str:
    """`text` without the names (titles and mentions) of `titles`."""
    for title in titles:
        for name in sorted({title.title(), *ENTITIES[title][2]}, key=len, reverse=True):
            text = re.sub(rf"\b{re.escape(name)}('s)?\b", " ", text, flags=re.I)
    return " ".join(text.split()).strip(" ,.")


def _chains(edges: list[tuple[str, str, str]], hops: int) -> list[list[tuple[str, str, str]]]:
    """Walks of `hops` edges (either direction) visiting no entity twice, as (from, to, desc)."""
    out: list[list[tuple[str, str, str]]] = []

    def walk(chain: list[tuple[str, str, str]], seen: list[str]) -> None:
        if len(chain) == hops:
            out.append(chain)
            return
        for s, t, d in edges:
            for a, b in ((s, t), (t, s)):
                if a == seen[-1] and b not in seen:
                    walk([*chain, (a, b, d)], [*seen, b])

    for start in dict.fromkeys(e for s, t, _ in edges for e in (s, t)):
        walk([], [start])
    return out


def multihop_items(
    key: str, story: str, units: list[str], per_hops: int = 6
) -> list[dict[str, object]]:
    """Two- and three-hop questions over one example story, from the world's relationships.

    Each question starts at an entity it names, describes the hops by their relationship
    descriptions with the other entities' names removed, and asks for the entity at the
    end. Its gold evidence (`context`) is the story sentence behind each hop; a question is
    kept only when every sentence lies whole in some text unit of `units` and no single
    unit holds them all (the evidence spans at least two text units). At most `per_hops`
    questions per hop count, in a fixed order.
    """
    text = story.lower()
    present = {t for t, (_, _, ms) in ENTITIES.items() if any(m.lower() in text for m in ms)}
    sentences = _sentences(story)
    behind = {
        d: _evidence_sentence(s, t, d, sentences)
        for s, t, d, _ in RELATIONSHIPS
        if s in present and t in present
    }
    edges = [(s, t, d) for s, t, d, _ in RELATIONSHIPS if behind.get(d)]
    flat_units = [" ".join(u.split()) for u in units]
    items: list[dict[str, object]] = []
    for hops in (2, 3):
        kept, ends = 0, set()
        for chain in _chains(edges, hops):
            wanted = list(dict.fromkeys(str(behind[d]) for _, _, d in chain))
            if len(wanted) < 2:
                continue
            holders = [{i for i, u in enumerate(flat_units) if s in u} for s in wanted]
            if not all(holders) or set.intersection(*holders):
                continue
            start, end = chain[0][0], chain[-1][1]
            if (start, end) in ends:
                continue
            hidden = [b for _, b, _ in chain]
            steps = " and then ".join(f"'{_hide(d, hidden)}'" for _, _, d in chain)
            items.append(
                {
                    "id": f"{key}-{hops}hop-{kept + 1}",
                    "imdb_key": key,
                    "question": f"From {start.title()}, which entity do you reach by "
                    f"following {steps}?",
                    "answer": end.title(),
                    "context": wanted,
                    "hops": hops,
                }
            )
            ends.add((start, end))
            kept += 1
            if kept == per_hops:
                break
    return items


def multihop_facts(items: list[dict[str, object]]) -> list[Fact]:
    """What the scripted model answers to `multihop_items` questions (gated on the answer)."""
    return [Fact(str(i["question"]), str(i["answer"]), (str(i["answer"]),)) for i in items]
