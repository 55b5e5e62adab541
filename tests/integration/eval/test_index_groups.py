"""A run goes index by index: each index is loaded for its questions and released after.

(Memory and time to first answer over 4/40/200 indexes: benchmarks/many_indexes.py.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.integration.eval.helpers import load_results, make_eval_root, question_of
from tests.support.projects import gtog
from tests.support.scripted_server import Fail, Rule, ScriptedServer
from tests.support.world import EXAMPLE_QA

pytestmark = pytest.mark.integration

INDEX_OF = {q["question"]: q["imdb_key"] for q in json.loads(EXAMPLE_QA.read_text())}


def _events(log: Path) -> list[tuple[str, str]]:
    """(index, "built" | "released") in the order eval.log says they happened."""
    pattern = re.compile(r"gtog\.eval\.run\.engines: index (\w+): (?:.* )?(built|released)")
    return [m.groups() for m in pattern.finditer(log.read_text())]  # type: ignore[misc]


def test_questions_run_index_by_index_and_each_index_is_released(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = make_eval_root(tmp_path, example_indexes)
    result = gtog("eval", "--root", str(root), "--limit", "3", "-j", "1", "-q")
    assert result.returncode == 0, result.stderr
    searched = [
        INDEX_OF[question_of(e)] for e in llm_server.chat_log() if e.rule == "search:answer"
    ]
    assert searched == ["lighthouse"] * 6 + ["orchard"] * 6, searched
    assert _events(root / "results" / "eval.log") == [
        ("lighthouse", "built"),
        ("lighthouse", "released"),
        ("orchard", "built"),
        ("orchard", "released"),
    ]
    _, summary = load_results(root)
    assert sorted(summary["by_movie"]) == ["lighthouse", "orchard"]


def test_an_index_released_after_its_questions_is_not_rebuilt_on_resume(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    refuse = Rule(
        "fail:orchard-basic",
        lambda r: (
            "---Role---" in r.system
            and "-----Entities-----" not in r.system
            and INDEX_OF.get(r.last_user) == "orchard"
        ),
        lambda r: Fail(400, "scripted bad request"),
    )
    llm_server.rules.insert(0, refuse)
    root = make_eval_root(tmp_path, example_indexes)
    args = ("eval", "--root", str(root), "--limit", "2", "-j", "1", "-q")
    first = gtog(*args, "--max-errors", "1")
    assert first.returncode == 1 and "error budget spent" in first.stderr, first.stderr
    log = root / "results" / "eval.log"
    assert _events(log) == [
        ("lighthouse", "built"),
        ("lighthouse", "released"),
        ("orchard", "built"),
    ]

    llm_server.rules.remove(refuse)
    llm_server.clear_log()
    resumed = gtog(*args, "--resume", "--retry-errors")
    assert resumed.returncode == 0, resumed.stderr
    later = _events(log)[3:]
    assert later == [("orchard", "built"), ("orchard", "released")]  # lighthouse is done
    assert {
        INDEX_OF[question_of(e)] for e in llm_server.chat_log() if e.rule == "search:answer"
    } == {"orchard"}
    detailed, summary = load_results(root)
    entries = [e for q in detailed["results"] for e in q["methods"].values()]
    assert len(entries) == 8 and all(e.get("error") is None for e in entries)
    assert summary["by_movie"]["lighthouse"] and summary["by_movie"]["orchard"]
