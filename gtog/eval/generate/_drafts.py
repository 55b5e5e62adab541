"""Prompts, replies and candidates of question generation (pure functions).

A generation prompt (`local`, `global`, `linked`) asks for up to `count` questions from one
`Source`, each with an answer, evidence quoted from the source's text units and 3-6
assertions; the `check` prompt asks a second time whether a candidate is answerable from
its evidence and not from the question alone. Prompts are packaged files, each replaceable
by `<prompts_dir>/<name>.txt` (its placeholders are checked).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from gtog._errors import InputError
from gtog._prompts import placeholders, render_prompt
from gtog.eval.generate._evidence import Evidence, locate
from gtog.eval.generate._sources import Source
from gtog.eval.scoring._base import PromptSet
from gtog.llm._replies import exact_choice, optional_text

__all__ = [
    "MAX_ASSERTIONS",
    "MIN_ASSERTIONS",
    "PROMPT_FIELDS",
    "Candidate",
    "Check",
    "Drafted",
    "Drafts",
    "GenerationPrompts",
    "candidates_from",
    "check_prompt",
    "draft_prompt",
    "load_generation_prompts",
    "local_model_prompts_dir",
]

MIN_ASSERTIONS, MAX_ASSERTIONS = 3, 6
REPORT_CHARS = 4000
"""A community report is cut to this many characters in the global prompt."""
PASSAGES_CHARS = 6000
"""The passages shown with a report (global), together, are cut to this many characters."""

PROMPT_FIELDS: dict[str, tuple[str, ...]] = {
    "local": ("passage", "count"),
    "global": ("report", "passages", "count"),
    "linked": ("passage_1", "passage_2", "count"),
    "check": ("question", "answer", "evidence"),
}
"""The placeholders each generation prompt must use (others it may: `title`, `entity`,
`entity_description`)."""


@dataclass(frozen=True)
class GenerationPrompts(PromptSet):
    """The generation prompt templates, and a hash that identifies them (`fingerprint`)."""


def local_model_prompts_dir() -> Path:
    """The prompts worded for the 1.5B local model (`gtog eval generate --local`): its own
    check.txt (one plain yes/no per verdict, the reason first); the others built in."""
    return Path(str(resources.files("gtog.local") / "generate_prompts"))


def load_generation_prompts(prompts_dir: Path | None = None) -> GenerationPrompts:
    """Built-in prompts, each replaced by `<prompts_dir>/<name>.txt` where present."""
    if prompts_dir is not None and not prompts_dir.is_dir():
        raise InputError(f"{prompts_dir}: --prompts is not a folder")
    builtin = resources.files("gtog.eval.generate") / "prompts"
    templates = {}
    for name, fields in PROMPT_FIELDS.items():
        custom = prompts_dir / f"{name}.txt" if prompts_dir else None
        if custom is not None and custom.is_file():
            text = custom.read_text(encoding="utf-8")
            missing = [f for f in fields if f not in placeholders(text)]
            if missing:
                raise InputError(f"{custom}: prompt lacks placeholder {{{missing[0]}}}")
        else:
            text = (builtin / f"{name}.txt").read_text(encoding="utf-8")
        templates[name] = text
    return GenerationPrompts(templates)


class Drafted(BaseModel):
    """One question as the model wrote it."""

    question: str
    answer: str
    evidence: list[str] = Field(default_factory=list)
    assertions: list[str] = Field(default_factory=list)
    kind: str | None = None

    @field_validator("evidence", "assertions", mode="before")
    @classmethod
    def _listed(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class Drafts(BaseModel):
    """A generation reply: the questions written from one source."""

    questions: list[Drafted]


class Check(BaseModel):
    """The second call's verdicts on one candidate."""

    answerable: Literal[0, 1]
    guessable: Literal[0, 1]
    reason: str | None = None

    @field_validator("answerable", "guessable", mode="before")
    @classmethod
    def _exact(cls, value: Any) -> Any:
        return exact_choice(value, (0, 1), "verdict")

    @field_validator("reason", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return optional_text(value)


@dataclass
class Candidate:
    """A generated question whose evidence was found in the index's text units."""

    kind: str
    index_key: str
    source: str
    question: str
    answer: str
    evidence: list[Evidence]
    assertions: list[str]
    linked_kind: str | None = None
    check: Check | None = None
    notes: list[str] = field(default_factory=list)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " ..."


def draft_prompt(prompts: GenerationPrompts, source: Source, count: int) -> str:
    """The generation prompt for `source`, asking for up to `count` questions."""
    values: dict[str, object] = {"count": count, "title": source.title or ""}
    if source.kind == "local":
        values["passage"] = source.units[0].text
    elif source.kind == "global":
        each = PASSAGES_CHARS // max(1, len(source.units))
        values["report"] = _cut(source.report or "", REPORT_CHARS)
        values["passages"] = "\n\n".join(f'"""\n{_cut(u.text, each)}\n"""' for u in source.units)
    else:
        values.update(
            entity=source.title or "",
            entity_description=_cut(source.entity or "", 300),
            passage_1=source.units[0].text,
            passage_2=source.units[1].text,
        )
    return render_prompt(prompts.templates[source.kind], values)


def check_prompt(prompts: GenerationPrompts, candidate: Candidate) -> str:
    """The second call's prompt for `candidate`."""
    evidence = "\n".join(f"- {e.text}" for e in candidate.evidence)
    values = {"question": candidate.question, "answer": candidate.answer, "evidence": evidence}
    return render_prompt(prompts.templates["check"], values)


def _clean(texts: list[str]) -> list[str]:
    out = [" ".join(str(t).split()) for t in texts]
    return list(dict.fromkeys(t for t in out if t))


def candidates_from(
    source: Source, drafts: Drafts, count: int
) -> tuple[list[Candidate], list[tuple[str, str]]]:
    """The usable candidates of a reply, and the others: (why dropped, question).

    A candidate needs a question and an answer, at least `MIN_ASSERTIONS` assertions (more
    than `MAX_ASSERTIONS` are cut), evidence found in the source's text units, and for a
    linked question evidence from both of them.
    """
    kept: list[Candidate] = []
    dropped: list[tuple[str, str]] = []
    for d in drafts.questions[:count]:
        question, answer = " ".join(d.question.split()), " ".join(d.answer.split())
        assertions = _clean(d.assertions)
        found = [e for q in _clean(d.evidence) if (e := locate(q, source.units)) is not None]
        found = list({(e.unit_id, e.text): e for e in found}.values())
        why = None
        if not question or not answer:
            why = "no question or answer"
        elif len(assertions) < MIN_ASSERTIONS:
            why = f"fewer than {MIN_ASSERTIONS} assertions"
        elif not found:
            why = "evidence not found in the text units"
        elif source.kind == "linked" and len({e.unit_id for e in found}) < 2:
            why = "evidence not from both text units"
        if why is not None:
            dropped.append((why, question))
            continue
        kind = (d.kind or "").strip().lower() or None
        kept.append(
            Candidate(
                kind=source.kind,
                index_key=source.index_key,
                source=source.ref,
                question=question,
                answer=answer,
                evidence=found,
                assertions=assertions[:MAX_ASSERTIONS],
                linked_kind=kind if source.kind == "linked" else None,
            )
        )
    return kept, dropped
