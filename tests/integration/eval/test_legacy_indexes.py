"""Indexes written by older graphrag versions, and indexes that cannot be read (issue 22).

A graphrag 2.x or 1.x index (tables, columns and `default-*` LanceDB tables as graphrag
wrote them; settings as `gtog init` writes them) answers like the 3.x index it came from,
in memory, its files untouched; what cannot be read stops the run before any question,
in one line per index and method.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.integration.eval.helpers import load_results, make_eval_root
from tests.support.legacy import folder_digest, legacy_index
from tests.support.projects import gtog
from tests.support.scripted_server import ScriptedServer
from tests.support.tog_rules import add_tog_rules

pytestmark = pytest.mark.integration

METHODS = ("tog", "local", "basic")


def _search_prompts(server: ScriptedServer) -> dict[tuple[str, str], list[str]]:
    """Each search request's messages, by (rule, question): what the engines retrieved."""
    out: dict[tuple[str, str], list[str]] = {}
    for e in server.chat_log():
        if e.rule and not e.rule.startswith("judge"):
            messages = e.request.get("messages") or []
            key = (e.rule, messages[-1]["content"][:200] if messages else "")
            out.setdefault(key, []).append(repr(messages))
    return {k: sorted(v) for k, v in out.items()}


def _run(root: Path, *args: str):
    return gtog("eval", "--root", str(root), "-k", "lighthouse", "--limit", "2", *args)


@pytest.mark.parametrize("era", ["2.x", "1.x"])
def test_an_older_index_answers_like_its_3x_original_and_is_not_changed(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path, era: str
) -> None:
    add_tog_rules(llm_server)
    original = example_indexes["lighthouse"]
    older = legacy_index(original, tmp_path / f"lighthouse-{era}", era)
    before = folder_digest(older)

    (tmp_path / "new").mkdir()
    result = _run(make_eval_root(tmp_path / "new", {"lighthouse": original}, methods=METHODS))
    assert result.returncode == 0, result.stderr
    expected = _search_prompts(llm_server)
    llm_server.clear_log()

    (tmp_path / "old").mkdir()
    root = make_eval_root(tmp_path / "old", {"lighthouse": older}, methods=METHODS)
    result = _run(root)
    assert result.returncode == 0, result.stderr
    assert _search_prompts(llm_server) == expected  # the same contexts, call for call
    detailed, _ = load_results(root)
    for q in detailed["results"]:
        for method in METHODS:
            entry = q["methods"][method]
            assert entry.get("error") is None and entry["response"], (method, entry)

    notes = [line for line in result.stderr.splitlines() if f"a graphrag {era} index" in line]
    assert len(notes) == 1, result.stderr  # once per index, not per question
    assert (
        "index 'lighthouse'" in notes[0] and "text_units.document_ids -> document_id" in (notes[0])
    )
    assert "default-entity-description" in notes[0] and "vector size 64" in notes[0]
    if era == "1.x":
        assert (
            "create_final_*" in notes[0] and "entities.degree from create_final_nodes" in (notes[0])
        )
    log = (root / "results" / "eval.log").read_text()
    assert f"a graphrag {era} index" in log
    assert folder_digest(older) == before  # not a byte written, no folder made

    resumed = _run(root, "-q")  # the spec records the layout: the same spec, nothing to do
    assert resumed.returncode == 0 and "nothing to run" in resumed.stderr, resumed.stderr


def test_a_0x_index_stops_before_any_question_in_one_line_per_method(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    older = legacy_index(example_indexes["lighthouse"], tmp_path / "lighthouse-0x", "0.x")
    before = folder_digest(older)
    root = make_eval_root(tmp_path, {"lighthouse": older}, methods=METHODS)
    result = _run(root, "-q")
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if "index 'lighthouse'" in line]
    assert len(lines) == 3, result.stderr  # one per method
    for line, method in zip(lines, ("basic", "local", "tog"), strict=True):
        assert f"({older}): {method}: a graphrag 0.x index" in line, line
        assert "index_migration_to_v1" in line and "gtog index --root" in line
    assert llm_server.chat_log() == []
    assert folder_digest(older) == before


def test_a_broken_index_stops_before_any_question_naming_index_method_and_fix(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    broken = tmp_path / "lighthouse-broken"
    shutil.copytree(example_indexes["lighthouse"], broken)
    (broken / "output" / "community_reports.parquet").unlink()
    shutil.rmtree(broken / "output" / "lancedb" / "text_unit_text.lance")
    root = make_eval_root(
        tmp_path, {"lighthouse": broken, "orchard": example_indexes["orchard"]}, methods=METHODS
    )
    result = gtog("eval", "--root", str(root), "--limit", "2", "-q")
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if "index '" in line]
    assert len(lines) == 2, result.stderr  # tog needs neither piece; orchard is fine
    basic, local = lines
    assert f"index 'lighthouse' ({broken}): basic: no vector table text_unit_text" in basic
    assert "embed_text" in basic and "gtog index --root" in basic
    assert f"index 'lighthouse' ({broken}): local: no community_reports table" in local
    assert llm_server.chat_log() == []
    assert not (root / "results" / "eval_checkpoint.jsonl").exists()


def test_a_vector_size_the_settings_state_wrongly_is_named(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    older = legacy_index(
        example_indexes["lighthouse"], tmp_path / "lh", "2.x", state_vector_size=True
    )
    settings = older / "settings.yaml"
    settings.write_text(settings.read_text().replace("vector_size: 64", "vector_size: 1536"))
    root = make_eval_root(tmp_path, {"lighthouse": older}, methods=("basic",))
    result = _run(root, "-q")
    assert result.returncode == 2, result.stderr
    assert (
        "basic: vector table default-text_unit-text holds 64-d vectors but the settings say "
        "vector_size: 1536; fix: set vector_store.vector_size"
    ) in result.stderr


def test_an_embedding_model_of_another_size_stops_the_run_before_any_question(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    """A 2.x index under its own prefix, queried with a model returning 32-d vectors where
    the tables hold 64: one line per table before any question is searched (the check
    embeds the first round's questions, once each, and nothing else); at the right size,
    the check's embeddings are the first searches' own (no call added)."""
    older = legacy_index(example_indexes["lighthouse"], tmp_path / "lh", "2.x", prefix="proj")
    root = make_eval_root(tmp_path, {"lighthouse": older}, methods=("local", "basic"))
    llm_server.embedding_dims = 32
    result = _run(root, "-q", "--no-cache")
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if "-d vectors, but" in line]
    assert len(lines) == 2, result.stderr  # one per table: local's and basic's
    for line, table in zip(lines, ("proj-entity-description", "proj-text_unit-text"), strict=True):
        assert f"index 'lighthouse' ({older}): vector table {table} holds 64-d vectors" in line
        assert "'default_embedding_model' (openai/text-embedding-3-small) returns 32-d" in line
        assert "; fix: " in line and "gtog index --root" in line
    assert {e.kind for e in llm_server.log} == {"embeddings"}  # no search began
    checked = [e.prompt for e in llm_server.log]
    assert len(checked) == len(set(checked)) >= 2  # the first round's questions, at once
    assert not (root / "results" / "eval_checkpoint.jsonl").exists()

    llm_server.embedding_dims = 64
    llm_server.clear_log()
    result = _run(root, "-q", "--no-cache")
    assert result.returncode == 0, result.stderr
    detailed, _ = load_results(root)
    assert all(e.get("error") is None for q in detailed["results"] for e in q["methods"].values())
    embedded = [e.prompt for e in llm_server.log if e.kind == "embeddings"]
    questions = [q["question"] for q in detailed["results"]]
    assert sorted(embedded) == sorted(questions * 2)  # local's and basic's, nothing more
