"""ToG's variants on real graphrag indexes of the example stories (scripted server):
`pruning: edges`, `text_guided` and both, against the paper's ToG, on generated multi-hop
questions whose gold evidence spans two text units."""

from __future__ import annotations

import shutil
import statistics
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from gtog._project import load_project
from gtog.eval.scoring._lexical import evidence_recall
from gtog.search import build_engine, method_entry
from gtog.tog import ToGSettings
from tests.integration.tog.chain import CHAIN_FACT, chain_engine, write_chain_project
from tests.support.projects import STORIES
from tests.support.scripted_server import ScriptedServer
from tests.support.tog_rules import garbage_edge_rules, multihop_facts, multihop_items, tog_rules

pytestmark = pytest.mark.integration

VARIANTS = {
    "paper": {},
    "edges": {"pruning": "edges"},
    "paper+text": {"text_guided": True},
    "edges+text": {"pruning": "edges", "text_guided": True},
}


def _items(root: Path, key: str) -> list[dict]:
    units = pd.read_parquet(root / "output" / "text_units.parquet")
    return multihop_items(key, (STORIES / f"{key}.txt").read_text(), list(units["text"]))


def _stage_calls(server: ScriptedServer, stage: str) -> int:
    return sum(1 for e in server.chat_log() if e.rule == f"tog:{stage}")


async def test_variants_on_the_scripted_example(
    llm_server: ScriptedServer, example_indexes: dict[str, Path]
) -> None:
    rows: dict[str, list[tuple[int, float]]] = {v: [] for v in VARIANTS}
    for key, root in example_indexes.items():
        items = _items(root, key)
        assert len(items) >= 4, key  # questions whose evidence spans two text units
        llm_server.rules[0:0] = tog_rules(multihop_facts(items))
        project = load_project(root)
        for name, variant in VARIANTS.items():
            engine = await build_engine("tog", project, {"tog_search": variant})
            settings = ToGSettings(**variant)
            for item in items:
                llm_server.clear_log()
                result = await engine.search(str(item["question"]))
                assert result.llm_calls == len(llm_server.chat_log()) <= settings.max_llm_calls
                status = result.context_data["status"].iloc[0]
                assert status["llm_call_bound"] == settings.max_llm_calls
                assert status["variant"] == name
                if name != "paper":
                    assert _stage_calls(llm_server, "entity_pruning") == 0
                    assert _stage_calls(llm_server, "relation_pruning") == 0
                    assert result.llm_calls_categories["edge_pruning"] == _stage_calls(
                        llm_server, "edge_pruning"
                    )
                gold = " ".join(str(c) for c in item["context"])  # type: ignore[union-attr]
                rows[name].append((result.llm_calls, evidence_recall(gold, result.context_text)))
    assert llm_server.unscripted == []
    calls = {v: statistics.mean(c for c, _ in r) for v, r in rows.items()}
    recall = {v: statistics.mean(e for _, e in r) for v, r in rows.items()}
    assert max(c for c, _ in rows["edges"]) <= 3 * 3 + 3 + 1
    for name in ("paper+text", "edges+text"):
        assert recall[name] > recall["paper"], recall
        assert calls[name] < calls["paper"], calls


async def test_text_guided_records_its_text_units_and_works_without_their_table(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = shutil.copytree(example_indexes["orchard"], tmp_path / "orchard")
    items = _items(root, "orchard")
    llm_server.rules[0:0] = tog_rules(multihop_facts(items))
    question = str(items[0]["question"])

    engine = await build_engine("tog", load_project(root), {"tog_search": {"text_guided": True}})
    result = await engine.search(question)
    units = result.context_data["text_units"]
    assert units["used"].any() and units["similarity"].notna().all()
    assert set(units["reason"]) <= {"most similar to the question"}
    assert "-----Sources-----" in result.context_text
    reasoning = [e.prompt for e in llm_server.chat_log() if e.rule == "tog:reasoning"]
    assert all("-----Sources-----" in p for p in reasoning)  # the check sees them too
    assert set(result.context_data["exploration"]["text_source"]) == {"text_units"}
    assert result.context_data["status"].iloc[0]["ranking_fallbacks"] == 0

    shutil.rmtree(root / "output" / "lancedb" / "text_unit_text.lance")
    engine = await build_engine("tog", load_project(root), {"tog_search": {"text_guided": True}})
    result = await engine.search(question)
    assert set(result.context_data["exploration"]["text_source"]) == {"entity_description"}
    fallbacks = result.context_data["fallbacks"]
    ranking = fallbacks[fallbacks["stage"] == "ranking"]["reason"].iloc[0]
    assert "no text_unit_text vector store" in ranking
    units = result.context_data["text_units"]
    assert units["similarity"].isna().all() and units["used"].any()
    assert result.response and result.response != "UNSCRIPTED"


def test_the_spec_covers_the_variant_settings(example_indexes: dict[str, Path]) -> None:
    project = load_project(example_indexes["lighthouse"])
    entry = method_entry("tog")
    paper = entry.settings(project, entry.options({}, None))
    edges = entry.settings(project, entry.options({"pruning": "edges"}, None))
    text = entry.settings(project, entry.options({"text_guided": True, "min_relevance": 0.3}, None))
    assert "pruning" not in paper["tog_search"] and edges["tog_search"]["pruning"] == "edges"
    assert text["tog_search"]["min_relevance"] == 0.3 and text["tog_search"]["text_guided"]
    assert paper["prompts"] != edges["prompts"]


def test_cli_query_prints_the_variants_bound(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    from graphrag.cli.main import app

    from gtog.cli._query import register

    register(app)
    llm_server.rules[0:0] = tog_rules()
    root = shutil.copytree(example_indexes["orchard"], tmp_path / "orchard")
    with (root / "settings.yaml").open("a") as f:
        f.write("tog_search:\n  pruning: edges\n")
    args = ["query", "--root", str(root), "--method", "tog", "--verbose"]
    result = CliRunner().invoke(app, [*args, "Who is Edda Lorne's apprentice?"])
    assert result.exit_code == 0, result.output
    assert "-- variant edges: at most N·D + D + 1 LLM calls\n" in result.output
    assert "(bound 13):" in result.output
    assert "edge_pruning" in result.output and "entity_pruning" not in result.output


async def test_chain_without_vector_stores_degrades_and_garbage_falls_back(
    llm_server: ScriptedServer, tmp_path: Path
) -> None:
    llm_server.rules[0:0] = tog_rules([CHAIN_FACT])
    root = write_chain_project(tmp_path, llm_server.base_url)

    def engine(**settings: object):
        return chain_engine(root, width=2, depth=3, **settings)

    result = await engine(text_guided=True).search(CHAIN_FACT.question)
    assert result.response == "Corvin Hale bought it."
    assert result.llm_calls <= 2 * 3 + 1
    units = result.context_data["text_units"]
    assert set(units[units["used"]]["reason"]) == {"question not embedded: path order"}
    assert set(result.context_data["exploration"]["text_source"]) == {"none"}
    assert result.context_data["status"].iloc[0]["ranking_fallbacks"] >= 1

    llm_server.rules[0:0] = garbage_edge_rules()
    result = await engine(pruning="edges").search(CHAIN_FACT.question)
    status = result.context_data["status"].iloc[0]
    assert status["edge_pruning_fallbacks"] >= 1
    first = result.context_data["exploration"].iloc[0]
    assert first["relation_fallback"] and first["reached"] == "ELNA VOSS, MARIGOLD"  # by weight
    assert result.llm_calls <= 2 * 3 + 3 + 1


async def test_python_api_opens_the_text_unit_store(
    llm_server: ScriptedServer, example_indexes: dict[str, Path]
) -> None:
    import os

    from graphrag.config.load_config import load_config

    from gtog.tog import tog_search

    root = example_indexes["orchard"]
    items = _items(root, "orchard")
    llm_server.rules[0:0] = tog_rules(multihop_facts(items))
    cwd = os.getcwd()
    try:
        config = load_config(root_dir=root)
        out = root / "output"
        _, context = await tog_search(
            config,
            pd.read_parquet(out / "entities.parquet"),
            pd.read_parquet(out / "relationships.parquet"),
            pd.read_parquet(out / "text_units.parquet"),
            str(items[0]["question"]),
            settings=ToGSettings(text_guided=True),
            root=root,
        )
    finally:
        os.chdir(cwd)
    usage = context["usage"].set_index("stage")
    assert list(usage.index) == ["entity_linking", "edge_pruning", "reasoning", "answer"]
    assert int(usage["llm_calls"].sum()) == len(llm_server.chat_log()) <= 7
    assert set(context["exploration"]["text_source"]) == {"text_units"}
    assert context["text_units"]["used"].any()
