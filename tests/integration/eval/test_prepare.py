"""`gtog eval prepare`: from documents and QA files to indexes, with graphrag's pipeline."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.projects import SETTINGS, STORIES, gtog, subprocess_env
from tests.support.scripted_server import Fail, Rule, ScriptedServer
from tests.support.world import EXAMPLE_QA

pytestmark = pytest.mark.integration

BROKEN = "Zorblax the wanderer crossed the salt flats alone. Nobody in Quarry Town saw him go.\n"


def _study(tmp_path: Path, api_base: str) -> Path:
    """Two stories and a third that breaks extraction, each beside its QA file; a template
    project; no index projects."""
    root = tmp_path / "study"
    questions = json.loads(EXAMPLE_QA.read_text())
    for key in ("lighthouse", "orchard", "broken"):
        folder = root / "eval" / key
        folder.mkdir(parents=True)
        text = BROKEN if key == "broken" else (STORIES / f"{key}.txt").read_text()
        (folder / f"{key}.txt").write_text(text)
        items = [
            {"question": q["question"], "answer": q["answer"]}
            for q in questions
            if q["imdb_key"] == key
        ] or [{"question": "Who crossed the salt flats?", "answer": "Zorblax"}]
        (folder / f"{key}.json").write_text(json.dumps(items))
    (root / "template").mkdir()
    (root / "template" / "settings.yaml").write_text(
        SETTINGS.format(api_base=api_base, dims=64).replace(
            "cache:\n  type: none", "cache:\n  type: json\n  storage:\n    base_dir: cache"
        )
    )
    (root / "eval_config.yaml").write_text(
        "dataset:\n  path: eval\nindexes:\n  lighthouse: indexes/lighthouse\n"
        "  orchard: indexes/orchard\n  broken: indexes/broken\nindexes_template: template\n"
        "methods: [basic]\nmetrics: [token_recall]\noutput:\n  dir: results\nconcurrency: 2\n"
    )
    return root


def test_prepare_builds_the_missing_indexes_and_reports_the_one_that_fails(
    llm_server: ScriptedServer, tmp_path: Path
) -> None:
    llm_server.rules.insert(
        0,
        Rule(
            "fail:broken-extraction",
            lambda r: "-Real Data-" in r.prompt and "Zorblax" in r.prompt,
            lambda r: Fail(400, "scripted: this story cannot be extracted"),
        ),
    )
    root = _study(tmp_path, llm_server.base_url)
    asked = gtog("eval", "prepare", "--root", str(root))  # no terminal to confirm on
    assert asked.returncode == 2 and "confirm the estimate with --yes" in asked.stderr
    assert "4 + ~17" in asked.stderr  # lighthouse: 2 chunks x (1 + 1 gleaning) extraction calls
    assert not (root / "indexes").exists() and llm_server.chat_log() == []

    env = {**subprocess_env(), "GTOG_PROGRESS_SECONDS": "0"}  # no terminal: a line per key
    built = gtog("eval", "prepare", "--root", str(root), "--yes", env=env)
    assert built.returncode == 1, built.stderr
    lines = [x for x in built.stderr.splitlines() if re.match(r"indexing \d+/3 ", x)]
    assert len(lines) == 3 + 1, built.stderr  # one per key, and the end
    assert lines[-1].startswith("indexing 3/3 (100%)")
    assert {x.rsplit("last: ", 1)[1] for x in lines[:3]} == {
        "lighthouse built",
        "orchard built",
        "broken failed",
    }
    for key in ("lighthouse", "orchard"):
        assert f"built {key} in" in built.stderr
        project = root / "indexes" / key
        assert (project / "output" / "community_reports.parquet").is_file()
        assert (project / "input" / f"{key}.txt").read_text() == (
            STORIES / f"{key}.txt"
        ).read_text()
        assert (project / "cache").is_dir()  # graphrag's own cache, in the project
    failure = next(line for line in built.stderr.splitlines() if "'broken'" in line)
    assert "extract_graph" in failure and "No entities" in failure, built.stderr
    log = Path(failure.rsplit("(log: ", 1)[1].rstrip(")"))
    assert log.is_file() and "Zorblax" not in failure
    extracted = [e for e in llm_server.chat_log() if e.rule == "index:extract"]
    assert len(extracted) == 4  # 2 chunks per story, as estimated (gleanings apart)

    llm_server.clear_log()
    evaluated = gtog(
        "eval", "--root", str(root), "--index-key", "lighthouse,orchard", "--limit", "1", "-q"
    )
    assert evaluated.returncode == 0, evaluated.stderr
    again = gtog("eval", "prepare", "--root", str(root), "--index-key", "lighthouse,orchard")
    assert again.returncode == 0, again.stderr
    assert "nothing to build: all 2 indexes are complete" in again.stderr
    assert not [e for e in llm_server.chat_log() if (e.rule or "").startswith("index:")]
    plan = gtog("eval", "prepare", "--root", str(root))  # what failed is planned again
    assert "2 complete, 1 to build" in plan.stderr
    assert "broken: no entities, relationships, communities, community_reports" in plan.stderr
