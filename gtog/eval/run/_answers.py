"""Answers made elsewhere: a file read as a method's answers (`answers:` in the config).

`answers: {name: path}` reads gtog's own format: JSON lines (or one JSON list) of
`{question_id | question, answer}` with optional `index_key`, `context`, `question_type`,
`route` (the method a router chose), `latency`, `llm_calls`, `prompt_tokens`,
`output_tokens`, `cost_usd`.
`answers: {name: {path, format, fields}}` also reads other benchmarks' files
(`FORMATS`: GraphRAG-Bench's predictions, BenchmarkQED's answers) and, with `fields`
(`{answer: pred, question: q, context: ctx}`: a dotted path in the line per field), any
other shape.

A line is matched to a question by id, else by the question's text (within `index_key`
when the line gives one). A malformed line, a line that applies to questions of several
indexes (give its `index_key`), and two lines answering one question are errors naming
the file and the lines, before any work; a line that matches no question is one warning
with the count; a question with no line is that pair's error. A figure a line does not
state (its cost, its latency) is unknown, never 0. A line's `question_type` becomes the
question's group (`by_group.question_type` in the summary).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from gtog._dotted import MISSING, context_text, pick
from gtog._errors import InputError
from gtog.eval._dataset import QAItem

__all__ = [
    "FIELDS",
    "FORMATS",
    "GROUP_FIELD",
    "AnswerBook",
    "AnswerLine",
    "AnswersFile",
    "AnswersSource",
    "HasAnswers",
    "file_hash",
    "load_answers",
]

GROUP_FIELD = "question_type"
"""The field of a line that becomes its question's group (`by_group.question_type`)."""

FIELDS = (
    "question_id",
    "question",
    "index_key",
    "answer",
    "context",
    GROUP_FIELD,
    "route",
    "latency",
    "llm_calls",
    "prompt_tokens",
    "output_tokens",
    "cost_usd",
)
"""What a line can state; `fields` maps any of them to a dotted path in the line."""

FORMATS: dict[str, dict[str, tuple[str, ...]]] = {
    "gtog": {f: (f,) for f in FIELDS},
    # GraphRAG-Bench's predictions (Examples/run_*.py, read by Evaluation/generation_eval.py):
    # [{id, question, source, context, evidence, question_type, generated_answer,
    # ground_truth}]; its ground truth is the dataset's reference here
    "graphrag-bench": {
        "question_id": ("id",),
        "question": ("question",),
        "answer": ("generated_answer",),
        "context": ("context",),
        GROUP_FIELD: ("question_type",),
    },
    # BenchmarkQED's answer files (autoe's `answer_base_path`): [{question_id,
    # question_text (or question), answer, metrics: {time_seconds, input_tokens,
    # output_tokens, llm_calls, cost, ...}}]
    "benchmark-qed": {
        "question_id": ("question_id",),
        "question": ("question_text", "question"),
        "answer": ("answer",),
        "context": ("context",),
        "latency": ("metrics.time_seconds",),
        "llm_calls": ("metrics.llm_calls",),
        "prompt_tokens": ("metrics.input_tokens",),
        "output_tokens": ("metrics.output_tokens",),
        "cost_usd": ("metrics.cost",),
    },
}
"""format -> field -> where the line holds it (dotted paths, the first present wins)."""


class AnswersFile(BaseModel):
    """`answers: {name: {path, format, fields}}`: one answers file and how to read it."""

    model_config = ConfigDict(extra="forbid")

    path: str
    format: Literal["gtog", "graphrag-bench", "benchmark-qed"] = "gtog"
    fields: dict[str, str] = Field(default_factory=dict)
    """field -> a dotted path in the line (`answer: pred`, `latency: stats.seconds`)."""

    @field_validator("fields")
    @classmethod
    def _known(cls, value: dict[str, str]) -> dict[str, str]:
        for name in value:
            if name not in FIELDS:
                raise ValueError(f"unknown field {name!r} (choose from {', '.join(FIELDS)})")
        return value

    def paths(self) -> dict[str, tuple[str, ...]]:
        """field -> where a line holds it, `fields` over the format's own."""
        return {**FORMATS[self.format], **{k: (v,) for k, v in self.fields.items()}}


class AnswerLine(BaseModel):
    """One answer of another system."""

    model_config = ConfigDict(extra="ignore", strict=True)

    question_id: str | None = None
    question: str | None = None
    index_key: str | None = None
    answer: str
    context: str | None = None
    question_type: str | None = None
    route: str | None = None
    """The method a router chose for this answer (the routing analysis reads it)."""
    latency: float | None = Field(default=None, ge=0)
    llm_calls: int | None = Field(default=None, ge=0)
    prompt_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    cost_usd: float | None = Field(default=None, ge=0)

    @model_validator(mode="before")
    @classmethod
    def _numbers(cls, data: object) -> object:
        if isinstance(data, dict):  # JSON has one number type: 3 is a fine latency
            for key in ("latency", "cost_usd"):
                if isinstance(data.get(key), int) and not isinstance(data.get(key), bool):
                    data = {**data, key: float(data[key])}
        return data

    @model_validator(mode="after")
    def _names_a_question(self) -> AnswerLine:
        if self.question_id is None and self.question is None:
            raise ValueError("give question_id or question")
        return self


@dataclass
class AnswerBook:
    """The answers of one file, by (index key, question id)."""

    path: Path
    by_question: dict[tuple[str, str], AnswerLine] = field(default_factory=dict)
    unmatched: int = 0

    def get(self, item: QAItem) -> AnswerLine | None:
        """The answer to `item`, if the file has one."""
        return self.by_question.get((item.index_key, item.qid))

    def groups(self) -> dict[tuple[str, str], str]:
        """(index key, question id) -> the question type its line states."""
        return {k: line.question_type for k, line in self.by_question.items() if line.question_type}


def file_hash(path: Path) -> str:
    """A short hash of a file's bytes (an answers file that changes is a spec change)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _entries(path: Path) -> list[tuple[str, Any]]:
    """(`line n` / `item n`, parsed JSON) of a JSON-lines file or a JSON list."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read answers ({exc})") from None
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}: line {exc.lineno}: not JSON ({exc.msg})") from None
        return [(f"item {n}", raw) for n, raw in enumerate(data, start=1)]
    out = []
    for n, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            out.append((f"line {n}", json.loads(raw)))
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}: line {n}: not JSON ({exc.msg})") from None
    return out


def _line(raw: Any, paths: dict[str, tuple[str, ...]]) -> tuple[dict[str, Any], dict[str, str]]:
    """The line's fields (by `paths`), and field -> the key it was read from."""
    if not isinstance(raw, dict):
        return {}, {}
    data: dict[str, Any] = {}
    source: dict[str, str] = {}
    for name, candidates in paths.items():
        for p in candidates:
            value = pick(raw, p)
            if value is not MISSING and value is not None:
                data[name], source[name] = value, p
                break
    if "context" in data:
        data["context"] = context_text(data["context"])
    for name in ("question_id", GROUP_FIELD):  # ids and types may be numbers in JSON
        if isinstance(data.get(name), int | float) and not isinstance(data[name], bool):
            data[name] = str(data[name])
    return data, source


def _read(path: Path, how: AnswersFile) -> list[tuple[str, AnswerLine]]:
    paths = how.paths()
    lines = []
    for where, raw in _entries(path):
        if not isinstance(raw, dict):
            raise InputError(f"{path}: {where}: expected a JSON object")
        data, source = _line(raw, paths)
        try:
            lines.append((where, AnswerLine.model_validate(data)))
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = [str(p) for p in err["loc"]]
            if loc and loc[0] in paths:  # name the key as the file spells it
                loc[0] = source.get(loc[0], paths[loc[0]][0])
            raise InputError(f"{path}: {where}: {'.'.join(loc) or 'line'}: {err['msg']}") from None
    return lines


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _match(lines: list[tuple[str, AnswerLine]], items: list[QAItem], path: Path) -> AnswerBook:
    book = AnswerBook(path)
    by_id: dict[str, list[QAItem]] = {}
    by_text: dict[str, list[QAItem]] = {}
    for item in items:
        by_id.setdefault(item.qid, []).append(item)
        by_text.setdefault(_norm(item.question), []).append(item)
    where_of: dict[tuple[str, str], str] = {}
    duplicates: list[str] = []
    for where, line in lines:
        if line.question_id is not None:
            found = by_id.get(line.question_id, [])
        else:
            found = by_text.get(_norm(line.question or ""), [])
        found = [i for i in found if line.index_key in (None, i.index_key)]
        if not found:
            book.unmatched += 1
            continue
        keys = list(dict.fromkeys(i.index_key for i in found))
        if len(keys) > 1:
            what = f"question_id {line.question_id!r}" if line.question_id else "question"
            raise InputError(
                f"{path}: {where}: its {what} is asked of {len(keys)} indexes "
                f"({', '.join(keys)}); give the line's index_key"
            )
        for item in found:
            slot = (item.index_key, item.qid)
            if slot in where_of:
                duplicates.append(
                    f"{where_of[slot]} and {where} both answer {item.qid!r} of {item.index_key!r}"
                )
                continue
            where_of[slot] = where
            book.by_question[slot] = line
    if duplicates:
        more = f" (and {len(duplicates) - 1} more)" if len(duplicates) > 1 else ""
        raise InputError(f"{path}: {duplicates[0]}{more}; keep one answer per question")
    return book


def load_answers(methods: Mapping[str, HasAnswers], items: list[QAItem]) -> dict[str, AnswerBook]:
    """Read and match every answers file of the run (InputError on a malformed line)."""
    return {
        name: _match(_read(m.answers.path, m.answers.how), items, m.answers.path)
        for name, m in methods.items()
        if m.answers is not None
    }


@dataclass(frozen=True)
class AnswersSource:
    """An answers file and how to read it."""

    path: Path
    how: AnswersFile = field(default_factory=lambda: AnswersFile(path=""))

    def spec(self) -> dict[str, str]:
        """What the answers depend on (format and fields only when not gtog's own)."""
        out = {"answers": str(self.path), "hash": file_hash(self.path)}
        if self.how.format != "gtog" or self.how.fields:
            out.update(format=self.how.format, fields=dict(sorted(self.how.fields.items())))
        return out


class HasAnswers(Protocol):
    """A run's method as `load_answers` reads it: its answers file, if it has one."""

    @property
    def answers(self) -> AnswersSource | None:
        """The answers file the method's answers come from (None: not read from a file)."""
        ...
