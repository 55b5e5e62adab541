"""Per-question state of one ToG search: the question, usage, fallbacks, and its LLM calls."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from gtog.llm import ChatModel, ChatReply, JsonReply, UsageTally, ask_json
from gtog.tog.settings import ToGSettings
from gtog.tog.templates import PROMPT_NAMES, ToGPrompts

__all__ = ["CATEGORIES", "Fallback", "QueryRun"]

T = TypeVar("T", bound=BaseModel)

CATEGORIES = PROMPT_NAMES
"""Usage categories: entity_linking, relation_pruning, entity_pruning, reasoning, answer."""


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

    def _sampling(self, stage: str) -> dict[str, Any]:
        s = self.settings
        exploring = stage in ("relation_pruning", "entity_pruning")
        return {
            "temperature": s.temperature_exploration if exploring else s.temperature_reasoning,
            "max_tokens": s.answer_max_tokens if stage == "answer" else s.pruning_max_tokens,
        }

    async def call(self, stage: str, **values: object) -> ChatReply:
        """Render stage `stage`'s prompt, send it, and count the reply under `stage`."""
        prompt = self.prompts.render(stage, question=self.question, **values)
        reply = await self.model.chat(prompt, category=stage, **self._sampling(stage))
        self.tally.add(stage, reply)
        return reply

    async def ask(self, stage: str, schema: type[T], **values: object) -> JsonReply[T]:
        """Like `call`, for a JSON reply in `schema` (one attempt: the call bound holds)."""
        prompt = self.prompts.render(stage, question=self.question, **values)
        reply = await ask_json(
            self.model,
            prompt,
            schema,
            structured=self.settings.json_mode,
            attempts=1,
            category=stage,
            **self._sampling(stage),
        )
        for r in reply.replies:
            self.tally.add(stage, r)
        return reply

    def fallback(self, depth: int, stage: str, entity: str, reason: str) -> None:
        """Record that `stage` fell back to its rule."""
        self.fallbacks.append(Fallback(depth, stage, entity, reason))

    def fallback_count(self, stage: str) -> int:
        """How many times `stage` fell back."""
        return sum(1 for f in self.fallbacks if f.stage == stage)
