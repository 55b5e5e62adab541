"""The scripted "world": what the fake LLM knows about the example stories.

Rules here play the parts a real model plays for gtog:
- graphrag indexing: entity/relationship extraction (from the entities that a text
  chunk really mentions), gleaning replies, description summaries, community reports;
- local/basic search answers: the right answer only when the evidence for it is in the
  context the engine put in the prompt, otherwise "I do not know";
- the four LLM judges, deterministic functions of the judged texts.

Other tests add their own rules in front of these (ToG prompts, qa metrics, failures).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from tests.support.scripted_server import ChatRequest, Rule

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_QA = REPO / "eval" / "qa_eval.json"

# title -> (type, description, mentions that reveal it in a text chunk)
ENTITIES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "MAREN HOLT": ("PERSON", "Maren Holt keeps the lighthouse on Varn Island.", ("Maren",)),
    "TOBIAS HOLT": (
        "PERSON",
        "Tobias Holt is Maren's brother, a fisherman of Kelport.",
        ("Tobias",),
    ),
    "VARN ISLAND": (
        "GEO",
        "Varn Island is a rock three miles off Kelport with a lighthouse.",
        ("Varn Island",),
    ),
    "KELPORT": ("GEO", "Kelport is a harbour town.", ("Kelport",)),
    "OSKAR VENN": (
        "PERSON",
        "Oskar Venn is a merchant in Kelport who sells whale oil.",
        ("Oskar Venn",),
    ),
    "GREY HERON": (
        "ORGANIZATION",
        "The Grey Heron is a cargo ship carrying timber.",
        ("Grey Heron",),
    ),
    "ILSE DUNMORE": ("PERSON", "Ilse Dunmore is the captain of the Grey Heron.", ("Ilse",)),
    "PELL DUNMORE": (
        "PERSON",
        "Admiral Pell Dunmore is Ilse Dunmore's grandfather.",
        ("Pell Dunmore",),
    ),
    "BRASS COMPASS": (
        "EVENT",
        "A brass compass given to Maren Holt as thanks.",
        ("brass compass",),
    ),
    "EDDA LORNE": ("PERSON", "Edda Lorne is a clockmaker in Fenwick.", ("Edda",)),
    "BRAM OSK": ("PERSON", "Bram Osk is Edda Lorne's apprentice.", ("Bram Osk",)),
    "FENWICK": ("GEO", "Fenwick is a village with an orchard lane.", ("Fenwick",)),
    "ROSA LORNE": ("PERSON", "Rosa Lorne is Edda Lorne's mother.", ("Rosa Lorne",)),
    "SILVER PEAR TREE": (
        "EVENT",
        "The silver pear tree stands behind Edda's house.",
        ("silver pear tree",),
    ),
    "MOON REGULATOR": (
        "EVENT",
        "The Moon Regulator is Edda Lorne's finest clock.",
        ("Moon Regulator",),
    ),
    "JORY QUILL": ("PERSON", "Jory Quill is a pedlar and thief.", ("Jory Quill",)),
    "ASHBY": ("GEO", "Ashby is a market town across the river.", ("Ashby",)),
    "HUGO TAMSIN": ("PERSON", "Hugo Tamsin is the mayor of Fenwick.", ("Hugo Tamsin",)),
}

# (source, target, description, weight)
RELATIONSHIPS: list[tuple[str, str, str, float]] = [
    ("MAREN HOLT", "VARN ISLAND", "Maren Holt keeps the lighthouse on Varn Island", 9),
    ("MAREN HOLT", "TOBIAS HOLT", "Tobias Holt is the brother of Maren Holt", 6),
    ("TOBIAS HOLT", "KELPORT", "Tobias Holt fishes out of Kelport", 4),
    ("VARN ISLAND", "KELPORT", "Varn Island lies three miles off Kelport", 3),
    ("MAREN HOLT", "OSKAR VENN", "Maren Holt buys whale oil from Oskar Venn", 7),
    ("OSKAR VENN", "KELPORT", "Oskar Venn has a shop in Kelport", 5),
    ("MAREN HOLT", "GREY HERON", "Maren Holt saved the Grey Heron during the storm", 8),
    ("ILSE DUNMORE", "GREY HERON", "Ilse Dunmore is the captain of the Grey Heron", 8),
    ("ILSE DUNMORE", "BRASS COMPASS", "Ilse Dunmore gave the brass compass to Maren Holt", 8),
    ("PELL DUNMORE", "BRASS COMPASS", "The brass compass belonged to Admiral Pell Dunmore", 7),
    ("PELL DUNMORE", "ILSE DUNMORE", "Admiral Pell Dunmore is Ilse Dunmore's grandfather", 6),
    ("EDDA LORNE", "BRAM OSK", "Bram Osk is the apprentice of Edda Lorne", 9),
    ("EDDA LORNE", "FENWICK", "Edda Lorne mends clocks in Fenwick", 7),
    ("ROSA LORNE", "SILVER PEAR TREE", "Rosa Lorne planted the silver pear tree", 8),
    ("ROSA LORNE", "EDDA LORNE", "Rosa Lorne is Edda Lorne's mother", 6),
    ("EDDA LORNE", "MOON REGULATOR", "Edda Lorne made the Moon Regulator", 8),
    ("JORY QUILL", "MOON REGULATOR", "Jory Quill stole the Moon Regulator", 9),
    ("MOON REGULATOR", "ASHBY", "The Moon Regulator was found for sale at the market in Ashby", 7),
    ("HUGO TAMSIN", "MOON REGULATOR", "Hugo Tamsin returned the Moon Regulator to Edda", 8),
    ("HUGO TAMSIN", "FENWICK", "Hugo Tamsin is the mayor of Fenwick", 6),
    ("BRAM OSK", "JORY QUILL", "Bram Osk followed the cart tracks of Jory Quill", 3),
]


@dataclass(frozen=True)
class Fact:
    """What the scripted model answers to a question, and what must be in context."""

    question: str
    answer: str
    evidence: tuple[str, ...]


def example_facts() -> list[Fact]:
    """One fact per example question: the reference answer, gated on its key names."""
    items = json.loads(EXAMPLE_QA.read_text())
    facts = []
    for item in items:
        names = re.findall(r"[A-Z][a-z]+ [A-Z][a-z]+", item["answer"]) or [item["answer"]]
        facts.append(Fact(item["question"], item["answer"], (names[0],)))
    return facts


def _lower(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower())


# -- graphrag indexing -------------------------------------------------------------------
def _extraction_text(prompt: str) -> str:
    part = prompt.split("-Real Data-", 1)[-1]
    part = part.split("Text:", 1)[-1]
    return part.split("######################", 1)[0]


def extraction_reply(request: ChatRequest) -> str:
    """Tuples for the entities the chunk mentions and the relations among them."""
    text = _lower(_extraction_text(request.last_user))
    found = [t for t, (_, _, ms) in ENTITIES.items() if any(m.lower() in text for m in ms)]
    records = [f'("entity"<|>{t}<|>{ENTITIES[t][0]}<|>{ENTITIES[t][1]})' for t in found]
    records += [
        f'("relationship"<|>{s}<|>{t}<|>{d}<|>{w:g})'
        for s, t, d, w in RELATIONSHIPS
        if s in found and t in found
    ]
    return "\n##\n".join(records) + "\n<|COMPLETE|>"


def summary_reply(request: ChatRequest) -> str:
    """Join the description list the summariser was given."""
    m = re.search(r"Description List:\s*(\[.*\])", request.last_user, re.S)
    try:
        descriptions = json.loads(m.group(1)) if m else []
    except json.JSONDecodeError:
        descriptions = []
    return " ".join(dict.fromkeys(descriptions)) or "No description."


def community_report_reply(request: ChatRequest) -> str:
    """A JSON community report naming the entities in the community's context."""
    text = request.last_user.split("-Real Data-", 1)[-1]
    names = [t for t in ENTITIES if t in text]
    title = " and ".join(n.title() for n in names[:2]) or "Community"
    return json.dumps(
        {
            "title": title,
            "summary": f"This community involves {', '.join(n.title() for n in names)}.",
            "findings": [{"summary": n.title(), "explanation": ENTITIES[n][1]} for n in names[:5]],
            "rating": 5.0,
            "rating_explanation": "Scripted report.",
        }
    )


# -- search answers ------------------------------------------------------------------------
def search_answer(facts: list[Fact]):
    """Answer a known question when its evidence is in the system prompt's context."""
    by_question = {_lower(f.question): f for f in facts}

    def reply(request: ChatRequest) -> str:
        fact = by_question.get(_lower(request.last_user).strip())
        context = _lower(request.system)
        if fact and all(e.lower() in context for e in fact.evidence):
            return f"{fact.answer}."
        return "I do not know."

    return reply


# -- judges --------------------------------------------------------------------------------
_STOP = {"the", "and", "was", "for", "who", "what", "which", "with", "from", "that", "his", "her"}


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 3 and w not in _STOP}


def _field(prompt: str, name: str, following: str) -> str:
    m = re.search(rf"{name}: (.*?)\n{following}:", prompt, re.S)
    return m.group(1).strip() if m else ""


def _verdict(score: int, reason: str) -> str:
    return json.dumps({"score": score, "reason": reason})


def judge_correctness(request: ChatRequest) -> str:
    """1 when at least half the ground truth's words are in the prediction."""
    p = request.last_user
    truth = _words(_field(p, "Ground Truth", "Predicted"))
    predicted_m = re.search(r"Predicted: (.*?)\n\nScore 1", p, re.S)
    predicted = _words(predicted_m.group(1) if predicted_m else "")
    ok = bool(truth) and len(truth & predicted) * 2 >= len(truth)
    return _verdict(int(ok), "matches the ground truth" if ok else "differs from the ground truth")


def judge_correctness_local(request: ChatRequest) -> str:
    """The local model's correctness prompt (`builtin:local`): the same rule as above."""
    p = request.last_user
    truth_m = re.search(r"Reference answer: (.*?)\n", p)
    truth = _words(truth_m.group(1) if truth_m else "")
    predicted = _words(_field(p, "Candidate answer", "Reference answer"))
    ok = bool(truth) and len(truth & predicted) * 2 >= len(truth)
    return _verdict(int(ok), "contains the reference" if ok else "lacks the reference")


def judge_faithfulness(request: ChatRequest) -> str:
    """1 when every capitalised name in the answer occurs in the context."""
    p = request.last_user
    context = _field(p, "Context", "Answer")
    m = re.search(r"Answer: (.*?)\n\nScore 1", p, re.S)
    answer = m.group(1) if m else ""
    names = re.findall(r"\b[A-Z][a-z]{2,}\b", answer)
    ok = all(n.lower() in context.lower() for n in names)
    return _verdict(int(ok), "supported" if ok else "unsupported names")


def judge_relevance(request: ChatRequest) -> str:
    """1 when a content word of the question occurs in the context."""
    p = request.last_user
    question = _words(_field(p, "Question", "Context"))
    m = re.search(r"Context: (.*?)\n\nScore 1", p, re.S)
    context = _words(m.group(1) if m else "")
    ok = bool(question & context)
    return _verdict(int(ok), "relevant" if ok else "unrelated")


def judge_completeness(request: ChatRequest) -> str:
    """0 for an "I do not know" answer, else 1 (fenced, to exercise the parser)."""
    ok = "do not know" not in request.last_user.split("Answer:", 1)[-1]
    return "```json\n" + _verdict(int(ok), "answers" if ok else "no answer") + "\n```"


def judge_assertion(request: ChatRequest) -> str:
    """1 when at least half the assertion's words are in the answer (the assertions scorer)."""
    p = request.last_user
    answer = _words(_field(p, "Answer", "Assertion"))
    m = re.search(r"Assertion: (.*?)\n\nScore 1", p, re.S)
    claim = _words(m.group(1) if m else "")
    ok = bool(claim) and len(claim & answer) * 2 >= len(claim)
    return _verdict(int(ok), "the answer makes the claim" if ok else "the claim is missing")


_CITATION = re.compile(r"\[[^\]]*\]")


def split_claims(request: ChatRequest) -> str:
    """`faithfulness_claims`' split: each sentence of the answer (before any `Evidence:`
    lines, citations removed) is one claim."""
    m = re.search(r"\nAnswer: (.*?)\n\nReturn JSON", request.last_user, re.S)
    text = _CITATION.sub("", (m.group(1) if m else "").split("Evidence:", 1)[0])
    claims = [c.strip(" .\n") for c in re.split(r"(?<=[.!?])\s+", text)]
    return json.dumps({"claims": [c for c in claims if re.search(r"[A-Za-z]", c)]})


def check_claims(request: ChatRequest) -> str:
    """`faithfulness_claims`' check: a claim is supported when every capitalised name in
    it occurs in the context (as the faithfulness judge)."""
    p = request.last_user
    context = _field(p, "Context", "\nClaims").lower()
    m = re.search(r"Claims:\n(.*?)\n\nFor each claim", p, re.S)
    claims = [re.sub(r"^\d+\.\s*", "", line) for line in (m.group(1) if m else "").splitlines()]
    said = [
        int(all(n.lower() in context for n in re.findall(r"\b[A-Z][a-z]{2,}\b", c)))
        for c in claims
        if c.strip()
    ]
    return json.dumps({"supported": said, "reason": f"{sum(said)} of {len(said)} in the context"})


def judge_citation_support(request: ChatRequest) -> str:
    """`citation_support`: 1 when every capitalised name of the sentence is in the record."""
    p = request.last_user
    record = _field(p, "Record", "Sentence").lower()
    m = re.search(r"Sentence: (.*?)\n\nScore 1", p, re.S)
    sentence = _CITATION.sub("", m.group(1) if m else "")
    names = re.findall(r"\b[A-Z][a-z]{2,}\b", sentence)
    ok = all(n.lower() in record for n in names)
    return _verdict(int(ok), "the record says it" if ok else "not in the record")


def judge_graded(request: ChatRequest) -> str:
    """The graded judges: 10 x the share of the ground truth's words in the answer."""
    p = request.last_user
    truth = _words(_field(p, "Ground Truth", "(?:Predicted|Answer)"))
    m = re.search(r"(?:Predicted|Answer): (.*?)\n\nRubric", p, re.S)
    predicted = _words(m.group(1) if m else "")
    score = round(10 * len(truth & predicted) / len(truth)) if truth else 0
    return json.dumps(
        {"rationale": f"{len(truth & predicted)} of {len(truth)} words", "score": score}
    )


def judge_rules() -> list[Rule]:
    """The judges, keyed on the design's prompt wording (and gtog's assertion prompt)."""
    return [
        Rule(
            "judge:claims-split",
            lambda r: "Split the answer into atomic claims" in r.prompt,
            split_claims,
        ),
        Rule(
            "judge:claims-check",
            lambda r: "Judge whether the context supports each numbered claim" in r.prompt,
            check_claims,
        ),
        Rule(
            "judge:citation-support",
            lambda r: "Judge whether the record supports the sentence" in r.prompt,
            judge_citation_support,
        ),
        Rule(
            "judge:graded",
            lambda r: "Grade how co" in r.prompt and "Rubric:" in r.prompt,
            judge_graded,
        ),
        Rule(
            "judge:assertion",
            lambda r: "judge whether the answer supports the assertion" in r.prompt,
            judge_assertion,
        ),
        Rule(
            "judge:correctness",
            lambda r: "judge if the prediction is correct" in r.prompt,
            judge_correctness,
        ),
        Rule(
            "judge:correctness-local",
            lambda r: "contained in, or clearly meant by, the candidate answer" in r.prompt,
            judge_correctness_local,
        ),
        Rule(
            "judge:faithfulness",
            lambda r: "judge if the answer is supported by the context" in r.prompt,
            judge_faithfulness,
        ),
        Rule(
            "judge:relevance",
            lambda r: "judge if the context is relevant" in r.prompt,
            judge_relevance,
        ),
        Rule(
            "judge:completeness",
            lambda r: "judge if the answer fully addresses" in r.prompt,
            judge_completeness,
        ),
    ]


def indexing_rules() -> list[Rule]:
    """What graphrag's `index` command asks."""
    return [
        Rule("index:hello", lambda r: "connectivity test" in r.prompt, lambda r: "Hello World"),
        Rule("index:probe", lambda r: r.last_user == "Reply with the word OK.", lambda r: "OK"),
        Rule(
            "index:extract",
            lambda r: (
                "-Real Data-" in r.prompt and "Entity_types:" in r.prompt and len(r.messages) == 1
            ),
            extraction_reply,
        ),
        Rule(
            "index:glean",
            lambda r: r.last_user.startswith("MANY entities"),
            lambda r: "<|COMPLETE|>",
        ),
        Rule(
            "index:loop",
            lambda r: r.last_user.startswith("It appears some entities"),
            lambda r: "N",
        ),
        Rule("index:summarize", lambda r: "comprehensive summary" in r.prompt, summary_reply),
        Rule(
            "index:community_report",
            lambda r: "community" in r.prompt.lower() and "findings" in r.prompt,
            community_report_reply,
        ),
    ]


def search_rules(facts: list[Fact] | None = None) -> list[Rule]:
    """graphrag local/basic search answers (system prompt carries the context)."""
    facts = example_facts() if facts is None else facts
    return [
        Rule(
            "search:answer",
            lambda r: "---Data tables---" in r.system or "---Role---" in r.system,
            search_answer(facts),
        ),
    ]


# -- graphrag's global and DRIFT searches ----------------------------------------------------
def _known(facts: list[Fact], question: str, context: str) -> Fact | None:
    """The fact a question asks for, when its evidence is in `context`."""
    fact = {_lower(f.question): f for f in facts}.get(_lower(question).strip())
    if fact and all(e.lower() in _lower(context) for e in fact.evidence):
        return fact
    return None


def _answered(facts: list[Fact], question: str, context: str) -> Fact | None:
    """The fact a question asks for, when its answer is already in `context`."""
    fact = {_lower(f.question): f for f in facts}.get(_lower(question).strip())
    return fact if fact and fact.answer.lower() in _lower(context) else None


_DETAIL = "In detail: "
"""How the scripted DRIFT primer words its follow-up query (a new query, not the question)."""


def global_drift_rules(facts: list[Fact] | None = None) -> list[Rule]:
    """global's map (JSON points) and reduce; DRIFT's HyDE expansion, primer (JSON),
    local actions (JSON) and reduce, each in the shape graphrag parses."""
    facts = example_facts() if facts is None else facts

    def global_map(r: ChatRequest) -> str:
        fact = _known(facts, r.last_user, r.system)
        points = (
            [{"description": f"{fact.answer} [Data: Reports (1)]", "score": 90}] if fact else []
        )
        return json.dumps({"points": points})

    def answer_from_reports(r: ChatRequest) -> str:
        fact = _answered(facts, r.last_user, r.system)
        return f"{fact.answer}." if fact else "I do not know."

    def primer(r: ChatRequest) -> str:
        m = re.search(
            r"For the query:\s*(.*?)\s*The top-ranked community summaries:", r.prompt, re.S
        )
        query = m.group(1).strip() if m else ""
        fact = _known(facts, query, r.prompt)
        answer = f"# Answer\n{fact.answer}." if fact else "# Answer\nNot in these reports."
        return json.dumps(
            {"intermediate_answer": answer, "score": 60, "follow_up_queries": [f"{_DETAIL}{query}"]}
        )

    def action(r: ChatRequest) -> str:
        fact = _known(facts, r.last_user.removeprefix(_DETAIL), r.system)
        response = f"{fact.answer}." if fact else "I do not know."
        return json.dumps(
            {"response": response, "score": 80 if fact else 10, "follow_up_queries": []}
        )

    return [
        Rule("global:map", lambda r: '"points": [' in r.system, global_map),
        Rule("global:reduce", lambda r: "multiple analysts" in r.system, answer_from_reports),
        Rule(
            "drift:hyde",
            lambda r: "Create a hypothetical answer to the following query" in r.prompt,
            lambda r: "A hypothetical answer about the people of the story.",
        ),
        Rule("drift:primer", lambda r: "'intermediate_answer': str" in r.prompt, primer),
        Rule("drift:action", lambda r: "'follow_up_queries': List[str]" in r.system, action),
        Rule(
            "drift:reduce",
            lambda r: "questions about data in the reports provided" in r.system,
            answer_from_reports,
        ),
    ]


def default_rules() -> list[Rule]:
    """Everything above, judges first (their prompts quote answers and contexts)."""
    return [*judge_rules(), *indexing_rules(), *global_drift_rules(), *search_rules()]
