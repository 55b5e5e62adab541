"""ToG reasoning: is the evidence so far sufficient, and the final answer from it."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, field_validator, model_validator

from gtog.llm._replies import parse_json_reply
from gtog.tog._run import QueryRun
from gtog.tog._settings import EVIDENCE_LINES

__all__ = ["Sufficiency", "answer", "is_sufficient", "parse_sufficient"]

NO_EVIDENCE = "(No entity of the knowledge graph matched the question, so no paths were explored.)"
"""The evidence text when linking found no topic entity."""


class Sufficiency(BaseModel):
    """The reasoning reply: `{"sufficient": true|false}` (`answerable`, yes/no accepted)."""

    sufficient: bool

    @model_validator(mode="before")
    @classmethod
    def _alias(cls, data: Any) -> Any:
        if isinstance(data, dict) and "sufficient" not in data and "answerable" in data:
            return {**data, "sufficient": data["answerable"]}
        return data

    @field_validator("sufficient", mode="before")
    @classmethod
    def _words(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() in ("yes", "true", "no", "false"):
            return value.strip().lower() in ("yes", "true")
        if not isinstance(value, bool):
            raise ValueError("expected true or false")
        return value


def _yes_no(text: str) -> bool | None:
    match = re.match(r"\W*(yes|no)\b", text.strip(), re.I)
    return match.group(1).lower() == "yes" if match else None


def parse_sufficient(text: str) -> bool | None:
    """`{"sufficient": bool}` (or a reply starting Yes/No) -> bool; None if unclear."""
    value, _ = parse_json_reply(text, Sufficiency)
    return value.sufficient if value is not None else _yes_no(text)


async def is_sufficient(run: QueryRun, depth: int, evidence: str) -> bool:
    """One reasoning call; an unclear reply counts as "not sufficient" and as a fallback."""
    reply = await run.ask("reasoning", Sufficiency, evidence=evidence, depth=depth)
    verdict = reply.value.sufficient if reply.value is not None else _yes_no(reply.text or "")
    if verdict is None:
        run.fallback(depth, "reasoning", "", "unusable reply: treated as not sufficient")
        return False
    return verdict


async def answer(run: QueryRun, evidence: str) -> str:
    """The final answer from `evidence` (exactly the text passed here); with
    `evidence_lines`, followed by the edges it relies on (`A --[relation]--> B`)."""
    response_type = run.settings.response_type
    if run.settings.evidence_lines:
        response_type += EVIDENCE_LINES
    reply = await run.call("answer", evidence=evidence, response_type=response_type)
    return reply.text.strip()
