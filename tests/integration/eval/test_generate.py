"""`gtog eval generate` on the example indexes, then `gtog eval` on what it wrote."""

from __future__ import annotations

import csv
import json
import unicodedata
from pathlib import Path

import pandas as pd
import pytest

from tests.support.generation_rules import generated_answer_rule, generation_rules
from tests.support.projects import gtog
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.integration


def _norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def test_generate_writes_checked_questions_that_gtog_eval_scores_by_type(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    llm_server.rules[:0] = [*generation_rules(), generated_answer_rule()]
    root = tmp_path / "study"
    root.mkdir()
    lines = "\n".join(f"  {k}: {p}" for k, p in example_indexes.items())
    (root / "eval_config.yaml").write_text(
        "dataset:\n  path: questions.json\n  group_by: [type]\n"
        f"indexes:\n{lines}\nmethods: [local, basic]\n"
        "metrics: [correctness, assertions, evidence_recall]\noutput:\n  dir: results\n"
    )
    args = ["eval", "generate", "--root", str(root), "--index", "lighthouse,orchard", "--n", "2"]
    result = gtog(*args, "--per-source", "5", "-q")
    assert result.returncode == 0, result.stderr
    items = json.loads((root / "questions.json").read_text())
    assert sorted(i["type"] for i in items) == ["global"] * 2 + ["linked"] * 2 + ["local"] * 2
    assert len({i["id"] for i in items}) == len(items)
    for item in items:
        units = pd.read_parquet(
            example_indexes[item["index_key"]] / "output" / "text_units.parquet"
        )
        texts = dict(zip(units["id"], units["text"], strict=True))
        assert set(item["evidence_text_units"]) <= set(texts), item
        for sentence in item["context"]:
            assert any(_norm(sentence) in _norm(texts[u]) for u in item["evidence_text_units"])
        assert 3 <= len(item["assertions"]) <= 6
    linked = [i for i in items if i["type"] == "linked"]
    assert all(len(i["evidence_text_units"]) == 2 and i["linked_kind"] == "bridge" for i in linked)
    # the scripted model's bad candidates were each caught, once per local source
    for reason in (
        "evidence not found in the text units",
        "answerable from the question alone",
    ):
        assert reason in result.stderr, result.stderr
    log = (root / "generate.log").read_text()
    assert "near-duplicates" in log and "exactly?" not in json.dumps(items)
    asked = len(llm_server.chat_log())
    assert asked > 6

    llm_server.clear_log()  # the file exists: refused without --force, nothing asked
    refused = gtog(*args, "--per-source", "5", "-q")
    assert refused.returncode == 2 and "--force" in refused.stderr, refused.stderr
    assert llm_server.chat_log() == []
    written = (root / "questions.json").read_text()
    # with --force, a second run asks nothing, writes the same questions, keeps the old file
    again = gtog(*args, "--per-source", "5", "-q", "--force")
    assert again.returncode == 0, again.stderr
    assert llm_server.chat_log() == [] and "0 model calls" in again.stderr
    assert json.loads((root / "questions.json").read_text()) == items
    [kept] = root.glob("questions.json.*.bak")
    assert kept.read_text() == written and "is kept as" in again.stderr

    run = gtog("eval", "--root", str(root), "--build-indexes", "-q")
    assert run.returncode == 0, run.stderr
    assert "nothing to build: all 2 indexes are complete" in run.stderr
    summary = json.loads((root / "results" / "eval_results_summary.json").read_text())
    assert sorted(summary["by_group"]["type"]) == ["global", "linked", "local"]
    assert summary["by_method"]["local"]["scored"]["assertions"] == 6
    claims = summary["assertions"]["basic"]
    assert claims["answers"] == 6 and claims["passed"] + claims["missed"] == claims["assertions"]
    assert "assertions supported: local" in run.stdout
    rows = list(csv.DictReader((root / "results" / "eval_results.csv").open()))
    assert {r["type"] for r in rows} == {"local", "global", "linked"}
    assert all(r["assertions_missed"] != "" for r in rows)
    page = (root / "results" / "report.html").read_text()
    assert 'id="assertions"' in page and "Results by type" in page
