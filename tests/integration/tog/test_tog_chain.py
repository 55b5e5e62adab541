"""ToG on a hand-built chain graph against the scripted server: paths, stops, usage, fallbacks."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from gtog.tog._reasoning import NO_EVIDENCE
from tests.integration.tog.chain import CHAIN_FACT, chain_engine, write_chain_project
from tests.support.scripted_server import Rule, ScriptedServer
from tests.support.tog_rules import TOG_MARKERS, garbage_pruning_rules, tog_rules

pytestmark = pytest.mark.integration

STAGES = ("entity_linking", "relation_pruning", "entity_pruning", "reasoning", "answer")


@pytest.fixture
def server(llm_server: ScriptedServer) -> ScriptedServer:
    """The session server answering ToG prompts about the chain graph."""
    llm_server.rules[0:0] = tog_rules([CHAIN_FACT])
    return llm_server


def _explored(result) -> dict[int, list[str]]:
    rows = result.context_data["exploration"]
    return {int(d): list(g["entity"]) for d, g in rows.groupby("depth")}


def _status(result) -> dict:
    return result.context_data["status"].iloc[0].to_dict()


def _server_split(server: ScriptedServer) -> dict[str, tuple[int, int, int]]:
    split = {}
    for stage in STAGES:
        entries = [e for e in server.chat_log() if e.rule == f"tog:{stage}"]
        split[stage] = (
            len(entries),
            sum(e.prompt_tokens for e in entries),
            sum(e.output_tokens for e in entries),
        )
    return split


async def test_chain_walk_stops_early_at_depth_two(server: ScriptedServer, tmp_path: Path) -> None:
    root = write_chain_project(tmp_path, server.base_url)
    engine = chain_engine(root, width=2, depth=3)
    result = await engine.search(CHAIN_FACT.question)

    assert _explored(result) == {1: ["ALDER VOSS"], 2: ["BRIGHTWATER MILL", "ELNA VOSS"]}
    status = _status(result)
    assert status["topic_entities"] == "ALDER VOSS"
    assert status["linked_by"] == "llm"
    assert (status["depth_reached"], status["stop_reason"]) == (2, "sufficient")
    paths = result.context_data["paths"]
    assert list(paths["entities"]) == [
        "ALDER VOSS -> BRIGHTWATER MILL -> CORVIN HALE",
        "ALDER VOSS -> ELNA VOSS -> MARTA QUELL",
    ]
    assert paths["path"][0] == (
        "ALDER VOSS -[Alder Voss founded Brightwater Mill]-> BRIGHTWATER MILL"
        " <-[Corvin Hale bought Brightwater Mill]- CORVIN HALE"
    )
    assert result.response == "Corvin Hale bought it."
    assert result.context_data["fallbacks"].empty
    assert server.unscripted == []


async def test_usage_equals_what_the_server_saw(server: ScriptedServer, tmp_path: Path) -> None:
    root = write_chain_project(tmp_path, server.base_url)
    result = await chain_engine(root, width=2, depth=3).search(CHAIN_FACT.question)

    log = server.chat_log()
    assert result.llm_calls == len(log) == 8
    assert result.llm_calls <= 2 * 2 * 3 + 3 + 1
    assert result.prompt_tokens == sum(e.prompt_tokens for e in log)
    assert result.output_tokens == sum(e.output_tokens for e in log)
    split = _server_split(server)
    assert result.llm_calls_categories == {s: split[s][0] for s in STAGES}
    assert result.prompt_tokens_categories == {s: split[s][1] for s in STAGES}
    assert result.output_tokens_categories == {s: split[s][2] for s in STAGES}
    assert result.llm_calls_categories == {
        "entity_linking": 1,
        "relation_pruning": 2,
        "entity_pruning": 2,
        "reasoning": 2,
        "answer": 1,
    }
    temps = {e.rule: e.temperature for e in log}
    assert temps["tog:relation_pruning"] == temps["tog:entity_pruning"] == 0.4
    assert temps["tog:reasoning"] == temps["tog:answer"] == temps["tog:entity_linking"] == 0.0
    assert result.completion_time > 0


async def test_context_text_is_exactly_the_answer_evidence(
    server: ScriptedServer, tmp_path: Path
) -> None:
    root = write_chain_project(tmp_path, server.base_url)
    engine = chain_engine(root, width=2, depth=3, use_text_units=True)
    result = await engine.search(CHAIN_FACT.question)

    answer_prompt = next(e.prompt for e in server.chat_log() if e.rule == "tog:answer")
    assert f"Evidence:\n{result.context_text}\n\nQuestion:" in answer_prompt
    assert "-----Sources-----" in result.context_text
    assert "Chronicle 5: Corvin Hale bought Brightwater Mill." in result.context_text
    reasoning_prompts = [e.prompt for e in server.chat_log() if e.rule == "tog:reasoning"]
    assert all("Chronicle" not in p for p in reasoning_prompts)
    assert set(result.context_data["relationships"]["description"]) >= {
        "Alder Voss founded Brightwater Mill",
        "Corvin Hale bought Brightwater Mill",
    }
    assert "CORVIN HALE" in set(result.context_data["entities"]["entity"])


async def test_max_depth_answers_without_a_last_reasoning_call(
    server: ScriptedServer, tmp_path: Path
) -> None:
    root = write_chain_project(tmp_path, server.base_url)
    result = await chain_engine(root, width=2, depth=1).search(CHAIN_FACT.question)

    assert _explored(result) == {1: ["ALDER VOSS"]}
    assert (_status(result)["depth_reached"], _status(result)["stop_reason"]) == (1, "max_depth")
    assert result.llm_calls_categories["reasoning"] == 0
    assert result.llm_calls == len(server.chat_log()) == 4
    assert result.response == "I do not know."


async def test_garbage_pruning_replies_fall_back_to_weight_order(
    server: ScriptedServer, tmp_path: Path
) -> None:
    server.rules[0:0] = garbage_pruning_rules()
    root = write_chain_project(tmp_path, server.base_url)
    result = await chain_engine(root, width=2, depth=3).search(CHAIN_FACT.question)

    # relation fallback keeps the two heaviest edges (married 9, sailed 7)
    assert list(result.context_data["paths"]["entities"]) == [
        "ALDER VOSS -> ELNA VOSS -> MARTA QUELL",
        "ALDER VOSS -> MARIGOLD",
    ]
    assert list(result.context_data["paths"]["score"]) == [0.2812, 0.2188]
    fallbacks = result.context_data["fallbacks"]
    assert list(fallbacks["stage"]) == ["relation_pruning", "entity_pruning"]
    assert list(fallbacks["depth"]) == [1, 1]
    status = _status(result)
    assert (status["relation_pruning_fallbacks"], status["entity_pruning_fallbacks"]) == (1, 1)
    assert status["stop_reason"] == "exhausted"
    assert bool(result.context_data["exploration"]["relation_fallback"].iloc[0])
    assert result.response == "I do not know."
    assert result.llm_calls == len(server.chat_log()) == 6


async def test_garbage_reasoning_reply_keeps_exploring(
    server: ScriptedServer, tmp_path: Path
) -> None:
    server.rules.insert(
        0, Rule("tog:reasoning", lambda r: TOG_MARKERS["reasoning"] in r.prompt, lambda r: "???")
    )
    root = write_chain_project(tmp_path, server.base_url)
    result = await chain_engine(root, width=2, depth=3).search(CHAIN_FACT.question)

    status = _status(result)
    assert status["reasoning_fallbacks"] == 2
    assert status["stop_reason"] in ("max_depth", "exhausted")
    assert result.response == "Corvin Hale bought it."


async def test_no_topic_entity_answers_without_paths(
    server: ScriptedServer, tmp_path: Path
) -> None:
    root = write_chain_project(tmp_path, server.base_url)
    result = await chain_engine(root).search("Who painted the Silent Harbour?")

    status = _status(result)
    assert (status["stop_reason"], status["linked_by"], status["topic_entities"]) == (
        "no_topic_entity",
        "none",
        "",
    )
    assert "no topic entity found" in status["note"]
    assert result.context_text == NO_EVIDENCE
    assert result.context_data["paths"].empty
    assert result.llm_calls_categories == {
        "entity_linking": 1,
        "relation_pruning": 0,
        "entity_pruning": 0,
        "reasoning": 0,
        "answer": 1,
    }
    assert result.response == "I do not know."


async def test_unparsable_linking_falls_back_to_titles_in_the_question(
    server: ScriptedServer, tmp_path: Path
) -> None:
    server.rules.insert(
        0,
        Rule(
            "tog:entity_linking",
            lambda r: TOG_MARKERS["entity_linking"] in r.prompt,
            lambda r: "sorry",
        ),
    )
    root = write_chain_project(tmp_path, server.base_url)
    engine = chain_engine(root, width=2)
    result = await engine.search("Who bought the mill that alder voss founded?")

    status = _status(result)
    assert (status["linked_by"], status["topic_entities"]) == ("title_scan", "ALDER VOSS")
    assert status["entity_linking_fallbacks"] == 1


async def test_worst_case_calls_stay_within_the_bound(
    server: ScriptedServer, tmp_path: Path
) -> None:
    def spread(key: str):
        def reply(r) -> str:
            n = r.last_user.count("\n[")
            return json.dumps({key: [{"id": i, "score": 1} for i in range(1, n + 1)]})

        return reply

    server.rules[0:0] = [
        Rule(
            "tog:relation_pruning",
            lambda r: TOG_MARKERS["relation_pruning"] in r.prompt,
            spread("relations"),
        ),
        Rule(
            "tog:entity_pruning",
            lambda r: TOG_MARKERS["entity_pruning"] in r.prompt,
            spread("entities"),
        ),
        Rule(
            "tog:reasoning",
            lambda r: TOG_MARKERS["reasoning"] in r.prompt,
            lambda r: '{"sufficient": false}',
        ),
        Rule(
            "tog:entity_linking",
            lambda r: TOG_MARKERS["entity_linking"] in r.prompt,
            lambda r: '{"entities": ["Alder Voss", "Brightwater Mill", "Corvin Hale"]}',
        ),
    ]
    root = write_chain_project(tmp_path, server.base_url)
    for width, depth in ((1, 1), (2, 2), (3, 3)):
        server.clear_log()
        result = await chain_engine(root, width=width, depth=depth).search(CHAIN_FACT.question)
        assert result.llm_calls == len(server.chat_log())
        assert result.llm_calls <= 2 * width * depth + depth + 1
        assert _status(result)["llm_call_bound"] == 2 * width * depth + depth + 1
    # width 3: three topic paths at depth 1; the small graph runs dry at depth 3
    assert result.llm_calls_categories == {
        "entity_linking": 1,
        "relation_pruning": 4,
        "entity_pruning": 4,
        "reasoning": 2,
        "answer": 1,
    }
    assert _status(result)["stop_reason"] == "exhausted"


async def test_one_engine_serves_concurrent_queries(server: ScriptedServer, tmp_path: Path) -> None:
    root = write_chain_project(tmp_path, server.base_url)
    engine = chain_engine(root, width=2, depth=3)
    results = await asyncio.gather(*(engine.search(CHAIN_FACT.question) for _ in range(3)))

    assert [r.llm_calls for r in results] == [8, 8, 8]
    assert len(server.chat_log()) == 24
    assert {r.response for r in results} == {"Corvin Hale bought it."}
    assert all(len(r.context_data["exploration"]) == 3 for r in results)
