"""The call bounds hold, and are reached, on a dense graph (in-process model): 2·N·D + D + 1
for the paper's ToG, N·D + D + 1 for `pruning: edges`, 2·D + 1 for `text_guided`."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from graphrag.data_model.entity import Entity
from graphrag.data_model.relationship import Relationship

from gtog.llm._models import ChatModel
from gtog.llm._usage import ChatReply
from gtog.tog import ToGSearch, ToGSettings


class _EagerModel(ChatModel):
    """Scores every candidate, never finds the evidence sufficient; logs each call."""

    def __init__(self, garbage: bool = False) -> None:
        self.garbage = garbage
        self.prompts: list[str] = []

    async def chat(self, messages: Any, **kwargs: Any) -> ChatReply:
        prompt = str(messages)
        self.prompts.append(prompt)
        n = len(re.findall(r"\n\[\d+\] ", prompt))
        if "entity linking" in prompt:
            text = json.dumps({"entities": ["N0", "N1", "N2", "N3"]})
        elif "pruning" in prompt:
            text = (
                "garbage"
                if self.garbage
                else json.dumps([{"id": i, "score": 1} for i in range(1, n + 1)])
            )
        elif "reasoning" in prompt:
            text = '{"sufficient": false}'
        else:
            text = "an answer"
        return ChatReply(text, 10, 2, True, None)


def _dense_engine(model: ChatModel, width: int, depth: int, **variant: Any) -> ToGSearch:
    titles = [f"N{i}" for i in range(12)]
    entities = [Entity(id=t, short_id=t, title=t) for t in titles]
    relationships = [
        Relationship(id=f"{a}-{b}", short_id=None, source=a, target=b, weight=1.0 + (i * 7 + j) % 5)
        for i, a in enumerate(titles)
        for j, b in enumerate(titles)
        if i < j
    ]
    settings = ToGSettings(width=width, depth=depth, **variant)
    return ToGSearch(model, entities, relationships, settings=settings)


@pytest.mark.parametrize(("width", "depth"), [(1, 1), (2, 3), (3, 3), (4, 2)])
@pytest.mark.parametrize("garbage", [False, True])
async def test_bound_is_reached_and_never_exceeded(width: int, depth: int, garbage: bool) -> None:
    model = _EagerModel(garbage)
    result = await _dense_engine(model, width, depth).search("Which N is it?")

    bound = 2 * width * depth + depth + 1
    # with width 1 a single relation is kept, so entity pruning needs no call
    entity_calls = width * depth if width > 1 else 0
    calls = len(model.prompts)
    assert result.llm_calls == calls == bound - (width * depth - entity_calls)
    assert result.prompt_tokens == 10 * calls and result.output_tokens == 2 * calls
    assert result.llm_calls_categories == {
        "entity_linking": 1,
        "relation_pruning": width * depth,
        "entity_pruning": entity_calls,
        "reasoning": depth - 1,
        "answer": 1,
    }
    assert len(result.context_data["paths"]) == width
    assert set(result.context_data["paths"]["length"]) == {depth}


@pytest.mark.parametrize(("width", "depth"), [(1, 1), (2, 3), (3, 3), (4, 2)])
@pytest.mark.parametrize("garbage", [False, True])
@pytest.mark.parametrize(
    ("variant", "bound"),
    [
        ({"pruning": "edges"}, lambda n, d: n * d + d + 1),
        ({"text_guided": True}, lambda n, d: 2 * d + 1),
        ({"pruning": "edges", "text_guided": True}, lambda n, d: 2 * d + 1),
    ],
)
async def test_variant_bounds_are_reached_and_never_exceeded(
    width: int, depth: int, garbage: bool, variant: dict, bound
) -> None:
    model = _EagerModel(garbage)
    settings = ToGSettings(width=width, depth=depth, **variant)
    result = await _dense_engine(model, width, depth, **variant).search("Which N is it?")

    calls = len(model.prompts)
    assert result.llm_calls == calls == bound(width, depth) == settings.max_llm_calls
    assert result.llm_calls_categories == {
        "entity_linking": 1,
        "edge_pruning": calls - depth - 1,
        "reasoning": depth - 1,
        "answer": 1,
    }
    assert not any("entity pruning" in p or "relation pruning" in p for p in model.prompts)
    status = result.context_data["status"].iloc[0]
    assert status["llm_call_bound"] == bound(width, depth)
    assert status["llm_call_bound_rule"] == settings.call_bound_rule
    assert set(result.context_data["paths"]["length"]) == {depth}
