"""Judging apart from searching: --skip-judges, then --rescore with zero search requests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.eval.helpers import add_judge_prompts, load_results, make_eval_root
from tests.support.projects import gtog
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.integration


def test_skip_judges_then_rescore_makes_no_search_or_embedding_request(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = make_eval_root(tmp_path, {"lighthouse": example_indexes["lighthouse"]})
    args = ("eval", "--root", str(root), "--no-cache", "-k", "lighthouse", "--limit", "3", "-q")
    answered = gtog(*args, "--skip-judges")
    assert answered.returncode == 0, answered.stderr
    assert not [e for e in llm_server.chat_log() if (e.rule or "").startswith("judge:")]
    detailed, summary = load_results(root)
    answers = {
        (q["question_id"], m): e["response"]
        for q in detailed["results"]
        for m, e in q["methods"].items()
    }
    assert len(answers) == 6 and all(answers.values())
    assert summary["metadata"]["metrics"] == []

    refused = gtog(*args, "--resume")
    assert refused.returncode == 2 and "--rescore" in refused.stderr

    llm_server.clear_log()
    rescored = gtog(*args, "--rescore")
    assert rescored.returncode == 0, rescored.stderr
    kinds = {e.kind for e in llm_server.log}
    assert kinds == {"chat"}  # no embeddings request
    assert {e.rule for e in llm_server.log} == {
        f"judge:{m}" for m in ("correctness", "faithfulness", "relevance", "completeness")
    }
    assert len(llm_server.log) == 6 * 4
    detailed, summary = load_results(root)
    again = {
        (q["question_id"], m): e["response"]
        for q in detailed["results"]
        for m, e in q["methods"].items()
    }
    assert again == answers  # the saved answers, not new ones
    assert summary["by_method"]["local"]["correctness"] == pytest.approx(1.0)
    assert summary["by_method"]["local"]["scored"]["correctness"] == 3

    # new judge prompts: rescore again, still without a search
    add_judge_prompts(root)
    resumed = gtog(*args, "--resume")
    assert resumed.returncode == 2 and "judge prompts changed" in resumed.stderr
    llm_server.clear_log()
    assert gtog(*args, "--rescore").returncode == 0
    assert {e.kind for e in llm_server.log} == {"chat"}
    assert all((e.rule or "").startswith("judge:") for e in llm_server.log)
    assert gtog(*args, "--resume").returncode == 0  # the spec now matches: nothing to run
