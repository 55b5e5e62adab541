"""The graphrag-fitted ToG variants: settings and bounds, the edge-pruning prompt and reply,
and one depth of their beam (finished paths, one path per entity, question pre-ranking)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from graphrag.data_model.entity import Entity
from graphrag.data_model.relationship import Relationship

from gtog._errors import InputError
from gtog.llm._models import EmbeddingModel
from gtog.tog._beam import explore_graded
from gtog.tog._edges import Frontier, edge_lines, score_edges
from gtog.tog._graph import KnowledgeGraph
from gtog.tog._paths import ReasoningPath
from gtog.tog._pruning import EdgeScores, absolute_scores
from gtog.tog._ranking import QuestionRanker
from gtog.tog._settings import ToGSettings, load_tog_settings, spec_settings
from gtog.tog._similarity import VectorLookup, unit_vector
from gtog.tog._templates import PROMPT_NAMES, default_prompt, load_prompts
from tests.support.scripted_server import hash_embedding
from tests.unit.tog.test_stages import StageModel, graph, run_for


class HashEmbedder(EmbeddingModel):
    """The scripted server's bag-of-words embedding, in process."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def embed(self, texts: list[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return [hash_embedding(t) for t in texts]


@pytest.mark.parametrize(
    ("pruning", "text_guided", "bound", "rule"),
    [
        ("paper", False, 22, "2·N·D + D + 1"),
        ("edges", False, 13, "N·D + D + 1"),
        ("paper", True, 7, "2·D + 1"),
        ("edges", True, 7, "2·D + 1"),
    ],
)
def test_each_variant_has_its_bound_and_stages(
    pruning: str, text_guided: bool, bound: int, rule: str
) -> None:
    s = ToGSettings(pruning=pruning, text_guided=text_guided)  # type: ignore[arg-type]
    assert (s.max_llm_calls, s.call_bound_rule) == (bound, rule)
    paper = not (pruning == "edges" or text_guided)
    assert ("entity_pruning" in s.stages) is paper and ("edge_pruning" in s.stages) is not paper
    assert s.variant == pruning + ("+text" if text_guided else "")


@pytest.mark.parametrize(
    ("block", "key"),
    [
        ("tog_search:\n  pruning: edge\n", "tog_search.pruning"),
        ("tog_search:\n  text_guided: maybe\n", "tog_search.text_guided"),
        ("tog_search:\n  min_relevance: 2\n", "tog_search.min_relevance"),
        ("tog_search:\n  text_unit_max_tokens: 0\n", "tog_search.text_unit_max_tokens"),
        ("tog_search:\n  prompts:\n    edge_prunning: x.txt\n", "tog_search.prompts.edge_prunning"),
    ],
)
def test_variant_settings_are_checked(tmp_path: Path, block: str, key: str) -> None:
    (tmp_path / "settings.yaml").write_text(block)
    with pytest.raises(InputError, match=rf"settings\.yaml: {key}:") as err:
        load_tog_settings(tmp_path)
    assert "\n" not in str(err.value)


def test_the_spec_records_what_each_variant_uses() -> None:
    prompts = load_prompts(ToGSettings()).__dict__
    paper = spec_settings(ToGSettings(), prompts)
    assert not {"pruning", "text_guided", "min_relevance"} & set(paper["tog_search"])
    edges = spec_settings(ToGSettings(pruning="edges"), prompts)
    assert (
        edges["tog_search"]["pruning"] == "edges"
        and "text_unit_max_tokens" not in edges["tog_search"]
    )
    text = spec_settings(ToGSettings(text_guided=True, text_unit_max_tokens=300), prompts)
    assert text["tog_search"]["text_unit_max_tokens"] == 300
    floor = spec_settings(ToGSettings(pruning="edges", min_relevance=0.3), prompts)
    assert floor != edges and edges["prompts"] != paper["prompts"]
    changed = {**prompts, "edge_pruning": "other $candidates"}
    assert spec_settings(ToGSettings(), changed) == paper  # the paper does not use it
    assert spec_settings(ToGSettings(pruning="edges"), changed) != edges


def test_edge_prompt_shows_paths_edges_and_the_entities_they_reach() -> None:
    g = graph()
    maren = ReasoningPath("MAREN HOLT")
    grey = ReasoningPath("GREY HERON")
    frontiers = [
        Frontier(1, maren, g.candidate_edges("MAREN HOLT", set(), {"MAREN HOLT"}, 2)),
        Frontier(2, grey, g.candidate_edges("GREY HERON", set(), {"GREY HERON"}, 5)),
    ]
    text = edge_lines(g, frontiers, with_entity=True)
    assert text.split("\n") == [
        "Path 1: MAREN HOLT",
        'Edges from "MAREN HOLT":',
        "[1] MAREN HOLT -> LIGHTHOUSE: keeps (weight 5); reaches LIGHTHOUSE (PERSON): "
        "LIGHTHOUSE description",
        "[2] ILSE DUNMORE -> MAREN HOLT: gave compass to (weight 4); reaches ILSE DUNMORE "
        "(PERSON): ILSE DUNMORE description",
        "",
        "Path 2: GREY HERON",
        'Edges from "GREY HERON":',
        "[3] ILSE DUNMORE -> GREY HERON: captains (weight 2); reaches ILSE DUNMORE (PERSON): "
        "ILSE DUNMORE description",
    ]
    bare = edge_lines(g, frontiers[:1], with_entity=False)
    assert "[1] MAREN HOLT -> LIGHTHOUSE: keeps (weight 5)\n" in bare and "reaches" not in bare
    prompt = default_prompt("edge_pruning")
    assert "edge_pruning" in PROMPT_NAMES and "$candidates" in prompt and "$question" in prompt


@pytest.mark.parametrize(
    ("reply", "scores"),
    [
        ({"edges": [{"id": 2, "score": 0.7}, {"id": 1, "score": 0.05}]}, {1: 0.7, 0: 0.05}),
        ({"edges": []}, {}),  # nothing here helps: a verdict, not a failure
        ({"edges": [{"id": 1, "score": 0}]}, {}),
        ({"edges": [{"id": 9, "score": 1}, {"id": "x", "score": 1}]}, None),  # unreadable
        ({"edges": [{"id": 9, "score": 1}, {"id": 2, "score": 3}]}, {1: 1.0}),
        ({"edges": ["first"]}, None),
        ([{"id": 1, "score": "high"}], None),
    ],
)
def test_absolute_scores(reply: object, scores: dict[int, float] | None) -> None:
    assert absolute_scores(EdgeScores.model_validate(reply), 3) == scores


def _frontier(g: KnowledgeGraph, title: str, cap: int = 20) -> Frontier:
    return Frontier(1, ReasoningPath(title), g.candidate_edges(title, set(), {title}, cap))


async def test_edge_scores_are_absolute_with_a_floor_and_width() -> None:
    g = graph()
    reply = {"edges": [{"id": 1, "score": 0.9}, {"id": 2, "score": 0.3}, {"id": 4, "score": 0.05}]}
    model = StageModel(edge_pruning=lambda p: json.dumps(reply))
    run = run_for(model, width=3, pruning="edges", min_relevance=0.1)
    [kept] = await score_edges(run, g, 1, [_frontier(g, "MAREN HOLT")], with_entity=True)
    assert [(e.relationship.id, s) for e, s in kept] == [("r1", 0.9), ("r3", 0.3)]
    [(stage, _, kwargs)] = model.calls
    assert stage == "edge_pruning" and kwargs["temperature"] == 0.4
    assert not run.fallbacks


async def test_a_lone_candidate_is_scored_and_can_be_rejected() -> None:
    g = graph()
    model = StageModel(edge_pruning=lambda p: '{"edges": []}')
    run = run_for(model, pruning="edges")
    [kept] = await score_edges(run, g, 1, [_frontier(g, "GREY HERON")], with_entity=True)
    assert kept == [] and len(model.calls) == 1 and not run.fallbacks


@pytest.mark.parametrize(
    "text", ["I would follow the first one.", '{"edges": [{"id": <n>, "score": <0 to 1>}]}']
)
async def test_unusable_edge_reply_falls_back_to_weight_order(text: str) -> None:
    g = graph()
    run = run_for(StageModel(edge_pruning=lambda p: text), width=2, pruning="edges")
    # shown in another order than by weight: the fallback still takes the heaviest two
    edges = g.candidate_edges("MAREN HOLT", set(), {"MAREN HOLT"}, 20)[::-1]
    [kept] = await score_edges(run, g, 1, [Frontier(1, ReasoningPath("MAREN HOLT"), edges)], True)
    assert [e.relationship.id for e, _ in kept] == ["r1", "r3"]
    assert [round(s, 3) for _, s in kept] == [round(5 / 9, 3), round(4 / 9, 3)]
    assert [(f.stage, f.entity) for f in run.fallbacks] == [("edge_pruning", "MAREN HOLT")]


def _chain_and_hub() -> KnowledgeGraph:
    """T -> CHAIN (weak, dead end); T -> HUB -> 30 leaves, one relevant LEAF-7 of weight 0.1."""
    titles = ["T", "CHAIN", "HUB", *(f"LEAF-{i}" for i in range(30))]
    entities = [Entity(id=t, short_id=t, title=t, description=f"{t} is here") for t in titles]
    entities[titles.index("LEAF-7")] = Entity(
        id="LEAF-7", short_id="LEAF-7", title="LEAF-7", description="the buried treasure chest"
    )
    rels = [("T", "CHAIN", "T knows chain", 1.0), ("T", "HUB", "T visits the hub", 2.0)]
    rels += [("HUB", f"LEAF-{i}", f"hub links leaf {i}", 0.1 if i == 7 else 5.0) for i in range(30)]
    return KnowledgeGraph(
        entities,
        [
            Relationship(id=f"r{i}", short_id=None, source=s, target=t, description=d, weight=w)
            for i, (s, t, d, w) in enumerate(rels)
        ],
    )


def _ranker(g: KnowledgeGraph, described: bool = True) -> QuestionRanker:
    vectors = {e.id: unit_vector(hash_embedding(e.description or "")) for e in g.entities.values()}
    lookup = (
        VectorLookup("entity_description", vectors)
        if described
        else VectorLookup.from_store("entity_description", None)
    )
    return QuestionRanker(g, lookup, VectorLookup.from_store("text_unit_text", None))


async def test_graded_depth_finishes_dead_ends_and_preranks_hub_edges() -> None:
    g = _chain_and_hub()

    def reply(prompt: str) -> str:  # "chain" relevant but a dead end; the treasure leaf best
        lines = [ln for ln in prompt.split("\n") if ln.startswith("[")]
        scores = [
            {"id": i, "score": 0.9 if "treasure" in ln else 0.1 if "chain" in ln else 0.5}
            for i, ln in enumerate(lines, start=1)
        ]
        return json.dumps({"edges": scores})

    model = StageModel(edge_pruning=reply)
    run = run_for(model, "Where is the buried treasure chest?", width=2, pruning="edges")
    run.embedder = HashEmbedder()
    ranker = _ranker(g)
    beam, done = await explore_graded(run, g, ranker, 1, [ReasoningPath("T")])
    assert sorted(p.end for p in beam) == ["CHAIN", "HUB"] and done == []
    run.settings = run.settings.model_copy(update={"max_candidates": 3})
    beam, done = await explore_graded(run, g, ranker, 2, beam)
    # the chain cannot grow: it finishes instead of holding a slot with its 0.1
    assert [p.end for p in done] == ["CHAIN"]
    # LEAF-7 (weight 0.1, the last by weight) was shown: ranked by the question first
    assert beam[0].end == "LEAF-7" and len(beam) == 2
    rows = run.exploration
    assert [(r["depth"], r["entity"], r["finished"], r["ranked_by"]) for r in rows[-2:]] == [
        (2, "HUB", False, "question"),
        (2, "CHAIN", True, "question"),
    ]
    assert run.embedder.texts == [run.question]  # one embedding per search


async def test_without_description_vectors_candidates_stay_in_weight_order() -> None:
    g = _chain_and_hub()
    model = StageModel(edge_pruning=lambda p: json.dumps({"edges": [{"id": 1, "score": 1}]}))
    run = run_for(model, "Where is the treasure?", pruning="edges", max_candidates=3)
    run.embedder = HashEmbedder()
    await explore_graded(run, g, _ranker(g, described=False), 1, [ReasoningPath("HUB")])
    assert "LEAF-7" not in model.calls[0][1]  # the 0.1 edge is cut, as in the paper
    assert run.exploration[0]["ranked_by"] == "weight"
    assert [f.stage for f in run.fallbacks] == ["ranking"]
    assert "no entity_description vector store" in run.fallbacks[0].reason


async def test_two_paths_reaching_one_entity_keep_one_beam_slot() -> None:
    g = graph()
    everything = json.dumps({"edges": [{"id": i, "score": 0.5 + i / 100} for i in range(1, 9)]})
    model = StageModel(edge_pruning=lambda p: everything)
    run = run_for(model, width=3, pruning="edges")
    beam = [ReasoningPath("LIGHTHOUSE"), ReasoningPath("TOBIAS HOLT")]
    nxt, _ = await explore_graded(run, g, _ranker(g, described=False), 1, beam)
    assert [p.end for p in nxt] == ["MAREN HOLT"]  # both reach MAREN HOLT: one path kept
    assert len(model.calls) == 2  # pruning: edges asks once per path


async def test_text_guided_scores_all_paths_in_one_call() -> None:
    g = graph()
    model = StageModel(edge_pruning=lambda p: json.dumps({"edges": [{"id": 1, "score": 1}]}))
    run = run_for(model, width=3, text_guided=True)
    beam = [ReasoningPath("LIGHTHOUSE"), ReasoningPath("GREY HERON")]
    await explore_graded(run, g, _ranker(g, described=False), 1, beam)
    [(stage, prompt, _)] = model.calls
    assert stage == "edge_pruning"
    assert "Path 1: LIGHTHOUSE" in prompt and "Path 2: GREY HERON" in prompt
    assert "reaches" not in prompt  # pruning: paper shows the relations alone
