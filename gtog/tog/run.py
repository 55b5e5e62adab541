"""Per-question state of one ToG search: the question, usage, fallbacks, and its LLM calls."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import json_repair

from gtog.llm import ChatModel, ChatReply, UsageTally
from gtog.tog.settings import ToGSettings
from gtog.tog.templates import PROMPT_NAMES, ToGPrompts

__all__ = ["CATEGORIES", "Fallback", "QueryRun", "parse_json"]

CATEGORIES = PROMPT_NAMES
"""Usage categories: entity_linking, relation_pruning, entity_pruning, reasoning, answer."""


def parse_json(text: str) -> Any:
    """The JSON value in an LLM reply (fences and small syntax slips tolerated), else None."""
    cleaned = text.strip()
    if cleaned.startswith("```"):
        cleaned = cleaned.strip("`")
        cleaned = cleaned.split("\n", 1)[1] if "\n" in cleaned else ""
    try:
        return json.loads(cleaned)
    except json.JSONDecodeError:
        pass
    try:
        value = json_repair.loads(cleaned)
    except Exception:  # json_repair may raise on pathological input
        return None
    return value if isinstance(value, dict | list) and value else None


@dataclass(frozen=True)
class Fallback:
    """A reply that could not be used and the documented rule applied instead."""

    depth: int
    stage: str
    entity: str
    reason: str


@dataclass
class QueryRun:
    """Everything one `search()` call owns; the engine itself stays stateless."""

    question: str
    model: ChatModel
    settings: ToGSettings
    prompts: ToGPrompts
    tally: UsageTally = field(default_factory=UsageTally)
    fallbacks: list[Fallback] = field(default_factory=list)
    exploration: list[dict[str, Any]] = field(default_factory=list)

    async def call(self, stage: str, **values: object) -> ChatReply:
        """Render stage `stage`'s prompt, send it, and count the reply under `stage`."""
        s = self.settings
        exploring = stage in ("relation_pruning", "entity_pruning")
        answering = stage == "answer"
        reply = await self.model.chat(
            self.prompts.render(stage, question=self.question, **values),
            temperature=s.temperature_exploration if exploring else s.temperature_reasoning,
            max_tokens=s.answer_max_tokens if answering else s.pruning_max_tokens,
            json_mode=s.json_mode and not answering,
        )
        self.tally.add(stage, reply)
        return reply

    def fallback(self, depth: int, stage: str, entity: str, reason: str) -> None:
        """Record that `stage` fell back to its rule."""
        self.fallbacks.append(Fallback(depth, stage, entity, reason))

    def fallback_count(self, stage: str) -> int:
        """How many times `stage` fell back."""
        return sum(1 for f in self.fallbacks if f.stage == stage)
