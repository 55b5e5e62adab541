"""Answers made elsewhere: a JSONL file read as a method's answers (`answers:` in the config).

A line is `{question_id | question, answer}` with optional `index_key`, `context`,
`latency`, `llm_calls`, `prompt_tokens`, `output_tokens`, `cost_usd`. It is matched to a
question by id, else by the question's text (within `index_key` when the line gives one).
A malformed line is an error naming the file and line before any work; a line that matches
no question is one warning with the count; a question with no line is that pair's error.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from gtog.errors import InputError
from gtog.eval.dataset import QAItem

if TYPE_CHECKING:
    from gtog.eval.run.methods import RunMethod

__all__ = ["AnswerBook", "AnswerLine", "file_hash", "load_answers"]


class AnswerLine(BaseModel):
    """One answer of another system."""

    model_config = ConfigDict(extra="ignore", strict=True)

    question_id: str | None = None
    question: str | None = None
    index_key: str | None = None
    answer: str
    context: str | None = None
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


def file_hash(path: Path) -> str:
    """A short hash of a file's bytes (an answers file that changes is a spec change)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _read(path: Path) -> list[AnswerLine]:
    lines = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}: line {n}: not JSON ({exc.msg})") from None
        try:
            lines.append(AnswerLine.model_validate(data))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "line"
            raise InputError(f"{path}: line {n}: {where}: {err['msg']}") from None
    return lines


def _match(lines: list[AnswerLine], items: list[QAItem], path: Path) -> AnswerBook:
    book = AnswerBook(path)
    by_id: dict[str, list[QAItem]] = {}
    by_text: dict[str, list[QAItem]] = {}
    for item in items:
        by_id.setdefault(item.qid, []).append(item)
        by_text.setdefault(" ".join(item.question.split()).casefold(), []).append(item)
    for line in lines:
        if line.question_id is not None:
            found = by_id.get(line.question_id, [])
        else:
            found = by_text.get(" ".join((line.question or "").split()).casefold(), [])
        found = [i for i in found if line.index_key in (None, i.index_key)]
        if not found:
            book.unmatched += 1
        for item in found:
            book.by_question.setdefault((item.index_key, item.qid), line)
    return book


def load_answers(methods: dict[str, RunMethod], items: list[QAItem]) -> dict[str, AnswerBook]:
    """Read and match every answers file of the run (InputError on a malformed line)."""
    return {
        name: _match(_read(m.answers), items, m.answers)
        for name, m in methods.items()
        if m.answers is not None
    }
