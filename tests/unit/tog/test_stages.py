"""ToG's stages one at a time: linking, relation and entity pruning, one exploration depth,
paths and their evidence. The LLM is an in-process stand-in that replies per stage."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from graphrag.data_model.entity import Entity
from graphrag.data_model.relationship import Relationship
from graphrag.data_model.text_unit import TextUnit

from gtog.llm._models import ChatModel
from gtog.llm._usage import ChatReply
from gtog.tog._exploration import explore_depth
from gtog.tog._graph import KnowledgeGraph
from gtog.tog._linking import link_topic_entities
from gtog.tog._paths import ReasoningPath, evidence_tables, evidence_text
from gtog.tog._pruning import prune_entities, prune_relations
from gtog.tog._run import QueryRun
from gtog.tog._settings import ToGSettings
from gtog.tog._templates import load_prompts

STAGES = (
    "entity linking",
    "relation pruning",
    "entity pruning",
    "edge pruning",
    "reasoning",
    "answer",
)


class StageModel(ChatModel):
    """Replies with `replies[stage](prompt)`; records (stage, prompt, kwargs) of each call."""

    def __init__(self, **replies: Callable[[str], str]) -> None:
        self.replies = replies
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    async def chat(self, messages: Any, **kwargs: Any) -> ChatReply:
        prompt = str(messages)
        stage = next(s for s in STAGES if s in prompt).replace(" ", "_")
        self.calls.append((stage, prompt, kwargs))
        return ChatReply(self.replies[stage](prompt), 7, 3, True, 0.001)


def graph() -> KnowledgeGraph:
    """Maren -keeps-> Lighthouse; Maren -sister of-> Tobias; Ilse -gave compass to-> Maren;
    Ilse -captains-> Grey Heron; a weak distractor Maren -met-> Oskar."""
    entities = [
        Entity(id=t, short_id=t, title=t, type="PERSON", description=f"{t} description")
        for t in ("MAREN HOLT", "LIGHTHOUSE", "TOBIAS HOLT", "ILSE DUNMORE", "GREY HERON", "OSKAR")
    ]
    rel = [
        ("r1", "MAREN HOLT", "LIGHTHOUSE", "keeps", 5.0, ["t1"]),
        ("r2", "MAREN HOLT", "TOBIAS HOLT", "sister of", 3.0, ["t1"]),
        ("r3", "ILSE DUNMORE", "MAREN HOLT", "gave compass to", 4.0, ["t2"]),
        ("r4", "ILSE DUNMORE", "GREY HERON", "captains", 2.0, ["t2"]),
        ("r5", "MAREN HOLT", "OSKAR", "met", 0.5, []),
    ]
    relationships = [
        Relationship(
            id=i, short_id=i, source=s, target=t, description=d, weight=w, text_unit_ids=units
        )
        for i, s, t, d, w, units in rel
    ]
    units = [
        TextUnit(id="t1", short_id="1", text="Maren keeps the light; Tobias is her brother."),
        TextUnit(id="t2", short_id="2", text="Captain Ilse gave Maren a brass compass."),
    ]
    return KnowledgeGraph(entities, relationships, units)


def run_for(model: StageModel, question: str = "Who gave Maren Holt the compass?", **s: Any):
    settings = ToGSettings(**{"width": 2, "depth": 2, **s})
    return QueryRun(question, model, settings, load_prompts(settings))


async def test_linking_matches_mentions_then_falls_back_to_titles() -> None:
    g = graph()
    model = StageModel(entity_linking=lambda p: '{"entities": ["maren holt", "the compass"]}')
    run = run_for(model)
    linking = await link_topic_entities(run, g, None, None)
    assert (linking.titles, linking.method) == (["MAREN HOLT"], "llm")
    assert run.tally.llm_calls["entity_linking"] == 1 and not run.fallbacks

    echo = StageModel(entity_linking=lambda p: '{"entities": ["name", ...]}')  # the template
    run = run_for(echo, "What did Ilse Dunmore captain?")
    linking = await link_topic_entities(run, g, None, None)
    assert (linking.titles, linking.method) == (["ILSE DUNMORE"], "title_scan")

    garbage = StageModel(entity_linking=lambda p: "I cannot help")
    run = run_for(garbage, "Who is there?")
    linking = await link_topic_entities(run, g, None, None)
    assert (linking.titles, linking.method) == ([], "none")
    assert [f.stage for f in run.fallbacks] == ["entity_linking"]


async def test_relation_pruning_keeps_the_scored_top_width_and_normalises() -> None:
    g = graph()
    edges = g.candidate_edges("MAREN HOLT", set(), {"MAREN HOLT"}, 20)
    assert [e.relationship.id for e in edges] == ["r1", "r3", "r2", "r5"]  # by weight
    reply = {"relations": [{"id": 2, "score": 0.6}, {"id": 4, "score": 0.3}, {"id": 9, "score": 1}]}
    model = StageModel(relation_pruning=lambda p: json.dumps(reply))
    run = run_for(model)
    kept = await prune_relations(run, 1, ReasoningPath("MAREN HOLT"), edges)
    assert [(e.relationship.id, round(s, 3)) for e, s in kept] == [("r3", 0.667), ("r5", 0.333)]
    [(_, prompt, kwargs)] = model.calls
    assert "[2] ILSE DUNMORE -> MAREN HOLT: gave compass to (weight 4)" in prompt
    assert kwargs["temperature"] == 0.4 and kwargs["category"] == "relation_pruning"


async def test_relation_pruning_falls_back_to_weights_on_an_echo() -> None:
    g = graph()
    edges = g.candidate_edges("MAREN HOLT", set(), {"MAREN HOLT"}, 20)
    echo = '{"relations": [{"id": <relation number>, "score": <0 to 1>}, ...]}'
    run = run_for(StageModel(relation_pruning=lambda p: echo))
    kept = await prune_relations(run, 1, ReasoningPath("MAREN HOLT"), edges)
    assert [e.relationship.id for e, _ in kept] == ["r1", "r3"]
    assert [round(s, 3) for _, s in kept] == [round(5 / 9, 3), round(4 / 9, 3)]
    assert [(f.stage, f.depth) for f in run.fallbacks] == [("relation_pruning", 1)]


async def test_a_single_candidate_needs_no_call() -> None:
    g = graph()
    edge = g.candidate_edges("GREY HERON", set(), set(), 20)
    run = run_for(StageModel())
    kept = await prune_relations(run, 1, ReasoningPath("GREY HERON"), edge)
    extended = await prune_entities(run, g, 1, ReasoningPath("GREY HERON"), kept)
    assert [p.end for p in extended] == ["ILSE DUNMORE"] and run.tally.total_calls == 0


async def test_entity_pruning_scores_paths_by_product() -> None:
    g = graph()
    edges = g.candidate_edges("MAREN HOLT", set(), {"MAREN HOLT"}, 20)[:2]  # r1, r3
    relations = [(edges[0], 0.25), (edges[1], 0.75)]
    model = StageModel(
        entity_pruning=lambda p: '{"entities": [{"id": 1, "score": 0.2}, {"id": 2, "score": 0.8}]}'
    )
    run = run_for(model)
    paths = await prune_entities(run, g, 1, ReasoningPath("MAREN HOLT"), relations)
    assert [(p.end, round(p.score, 3)) for p in paths] == [
        ("LIGHTHOUSE", 0.05),
        ("ILSE DUNMORE", 0.6),
    ]
    assert '[2] ILSE DUNMORE (PERSON), via "gave compass to"' in model.calls[0][1]


async def test_one_depth_keeps_the_global_top_width_and_excludes_used_edges() -> None:
    g = graph()

    def relations(prompt: str) -> str:
        return json.dumps([{"id": i, "score": 1} for i in range(1, 5)])

    model = StageModel(relation_pruning=relations, entity_pruning=relations)
    run = run_for(model)
    beam, grew = await explore_depth(run, g, 1, [ReasoningPath("ILSE DUNMORE")])
    assert grew and sorted(p.end for p in beam) == ["GREY HERON", "MAREN HOLT"]
    beam2, grew2 = await explore_depth(run, g, 2, beam)
    assert grew2 and len(beam2) == 2
    for p in beam2:  # no edge walked twice, no entity visited twice on a path
        assert len(set(p.relationship_ids)) == len(p.relationship_ids)
        assert len(set(p.entities)) == len(p.entities)
    assert [r["depth"] for r in run.exploration] == [1, 2, 2]


def test_paths_read_both_ways_and_evidence_holds_their_text_units() -> None:
    g = graph()
    [r3] = [
        e for e in g.candidate_edges("MAREN HOLT", set(), set(), 20) if e.relationship.id == "r3"
    ]
    path = ReasoningPath("MAREN HOLT").extend(r3, 0.5, 0.5)
    assert path.chain() == "MAREN HOLT <-[gave compass to]- ILSE DUNMORE" and path.score == 0.25
    tables = evidence_tables(g, [path], text_units=5)
    assert set(tables) == {"paths", "entities", "relationships", "sources"}
    assert list(tables["sources"]["text"]) == ["Captain Ilse gave Maren a brass compass."]
    text = evidence_text(tables)
    assert "gave compass to" in text and "brass compass" in text
    assert "sources" not in evidence_tables(g, [path])


@pytest.mark.parametrize("width", [1, 3])
async def test_exploration_never_exceeds_width(width: int) -> None:
    g = graph()
    everything = lambda p: json.dumps([{"id": i, "score": 1} for i in range(1, 6)])  # noqa: E731
    run = run_for(StageModel(relation_pruning=everything, entity_pruning=everything), width=width)
    beam, _ = await explore_depth(run, g, 1, [ReasoningPath("MAREN HOLT")])
    assert len(beam) == min(width, 4)


async def test_the_tree_records_scores_what_pruning_kept_and_what_cut_it() -> None:
    g = graph()

    def top_two(prompt: str) -> str:  # relation pruning keeps [1] and [2], entity pruning [1]
        return json.dumps([{"id": 1, "score": 0.75}, {"id": 2, "score": 0.25}])

    def first(prompt: str) -> str:
        return json.dumps({"entities": [{"id": 1, "score": 1}, {"id": 2, "score": 0}]})

    run = run_for(StageModel(relation_pruning=top_two, entity_pruning=first), width=2)
    start = [ReasoningPath("MAREN HOLT")]
    run.trace.topics(start)
    beam, _ = await explore_depth(run, g, 1, start)
    rows = {r["entity"]: r for r in run.trace.rows if r["depth"] == 1}
    # MAREN HOLT's edges by weight: LIGHTHOUSE 5, ILSE DUNMORE 4, TOBIAS HOLT 3, OSKAR 1
    [path] = beam
    assert rows["LIGHTHOUSE"]["kept"] and path.end == "LIGHTHOUSE"
    assert rows["LIGHTHOUSE"]["score"] == round(path.score, 4) > 0  # the hop's score
    assert rows["LIGHTHOUSE"]["parent"] == "0.1" and rows["LIGHTHOUSE"]["pruned_by"] is None
    assert rows["ILSE DUNMORE"]["pruned_by"] == "entity_pruning"
    assert rows["ILSE DUNMORE"]["score"] == 0.0 and not rows["ILSE DUNMORE"]["kept"]
    assert rows["TOBIAS HOLT"]["pruned_by"] == "relation_pruning"
    assert rows["TOBIAS HOLT"]["score"] is None
    assert [run.trace.node_of(p) for p in beam] == [rows["LIGHTHOUSE"]["id"]]


def test_the_tree_keeps_at_most_max_shown_candidates_per_path() -> None:
    from gtog.tog._trace import MAX_SHOWN, Candidate, ExplorationTrace

    g = graph()
    edges = g.candidate_edges("MAREN HOLT", set(), set(), 20)
    root = ReasoningPath("MAREN HOLT")
    grown = root.extend(edges[-1], 0.5, 1.0)
    many = [Candidate(edges[i % len(edges)], None, None, "relation_pruning") for i in range(11)]
    many.append(Candidate(edges[-1], 0.5, grown, None))  # the last one is kept: recorded
    trace = ExplorationTrace()
    trace.topics([root])
    trace.frontier(1, root, many)
    trace.beam(1, [grown])
    depth1 = [r for r in trace.rows if r["depth"] == 1]
    assert len(depth1) == MAX_SHOWN and trace.omitted == {1: 12 - MAX_SHOWN}
    assert [r["kept"] for r in depth1].count(True) == 1 and depth1[-1]["kept"]
    assert all(len(r["relation"]) <= 72 for r in depth1)
