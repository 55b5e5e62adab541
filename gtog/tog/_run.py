"""Per-question state of one ToG search: the question, usage, fallbacks, and its LLM calls."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel

from gtog.llm._models import ChatModel, EmbeddingModel
from gtog.llm._replies import JsonReply, ask_json
from gtog.llm._usage import ChatReply, UsageTally
from gtog.tog._settings import ToGSettings
from gtog.tog._templates import PROMPT_NAMES, ToGPrompts
from gtog.tog._trace import ExplorationTrace

__all__ = ["CATEGORIES", "Fallback", "QueryRun"]

T = TypeVar("T", bound=BaseModel)

logger = logging.getLogger(__name__.replace("._", "."))  # eval.log names the module as before

CATEGORIES = PROMPT_NAMES
"""Every usage category; a search reports those of its variant (`ToGSettings.stages`)."""

_EXPLORING = ("relation_pruning", "entity_pruning", "edge_pruning")


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
    trace: ExplorationTrace = field(default_factory=ExplorationTrace)
    """The tree of candidates explored (`gtog.tog._trace`)."""
    embedder: EmbeddingModel | None = None
    scorer: Any = None
    """The LLM-free pruning scorer (`gtog.tog._free.FreeScorer`) of `prune_strategy`
    semantic or bm25; None: the LLM prunes."""
    question_error: str = ""
    """Why the question has no vector (empty while it has one or was not asked for)."""
    _vector: asyncio.Future[np.ndarray | None] | None = field(default=None, repr=False)

    def start_question_vector(self) -> None:
        """Start embedding the question (one embedding call per search, shared by linking
        and ranking; it runs beside the linking call)."""
        if self._vector is None:
            self._vector = asyncio.ensure_future(self._embed_question())

    async def question_vector(self) -> np.ndarray | None:
        """The question's unit vector; None (with `question_error`) if it cannot be had."""
        self.start_question_vector()
        assert self._vector is not None
        return await self._vector

    async def _embed_question(self) -> np.ndarray | None:
        from gtog.tog._similarity import unit_vector

        if self.embedder is None:
            self.question_error = "no embedding model"
            return None
        try:
            [vector] = await self.embedder.embed([self.question])
        except Exception as exc:  # ranking falls back; the search goes on
            logger.warning("ToG: the question could not be embedded", exc_info=True)
            self.question_error = f"embedding failed: {type(exc).__name__}"
            return None
        unit = unit_vector(vector)
        if unit is None:
            self.question_error = "the embedding model returned an unusable vector"
        return unit

    def _sampling(self, stage: str) -> dict[str, Any]:
        s = self.settings
        exploring = stage in _EXPLORING
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
