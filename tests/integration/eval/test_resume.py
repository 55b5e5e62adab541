"""Kill a run with SIGKILL, resume it, and check nothing landed is asked again."""

from __future__ import annotations

import json
import os
import signal
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.integration.eval.helpers import (
    add_judge_prompts,
    checkpoint_keys,
    load_results,
    make_eval_root,
    question_of,
    search_method,
    start_eval,
)
from tests.support.projects import gtog
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.integration


def test_resume_after_sigkill_runs_only_what_is_missing(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = make_eval_root(tmp_path, example_indexes)
    checkpoint = root / "results" / "eval_checkpoint.jsonl"
    qa = {q["question"]: q["id"] for q in json.loads((root / "qa.json").read_text())}
    llm_server.delay = 0.2
    proc = start_eval(root)
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            if checkpoint.exists() and len(checkpoint_keys(checkpoint)) >= 5:
                break
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    landed = set(checkpoint_keys(checkpoint))
    assert 5 <= len(landed) < 16, "the run was killed part-way"
    assert not (root / "results" / "eval_results_summary.json").exists()

    time.sleep(4 * llm_server.delay)  # let the server finish replies the killed run left open
    llm_server.delay = 0.0
    llm_server.clear_log()
    result = gtog("eval", "--root", str(root), "--no-cache", "--limit", "4", "--resume", "-q")
    assert result.returncode == 0, result.stderr
    assert f"{16 - len(landed)} to run, {len(landed)} already done" in result.stderr

    keys = checkpoint_keys(checkpoint)
    assert Counter(keys) == {k: 1 for k in keys} and len(keys) == 16
    detailed, summary = load_results(root)
    assert sum(len(q["methods"]) for q in detailed["results"]) == 16
    assert summary["by_method"]["local"]["n"] == 8

    searches = [
        (qa[question_of(e)], search_method(e)) for e in llm_server.chat_log() if search_method(e)
    ]
    assert not set(searches) & landed, "a landed record was searched again"
    assert sorted(searches) == sorted({(q, m) for q, m in keys} - landed)
    judge_calls = [e for e in llm_server.chat_log() if (e.rule or "").startswith("judge:")]
    assert len(judge_calls) == 4 * (16 - len(landed))

    # resuming a finished run asks the model nothing
    llm_server.clear_log()
    again = gtog("eval", "--root", str(root), "--no-cache", "--limit", "4", "--resume", "-q")
    assert again.returncode == 0, again.stderr
    assert llm_server.chat_log() == []
    assert "0 to run, 16 already done" in again.stderr


def test_resume_refuses_a_changed_dataset_or_judge_prompts_unless_forced(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = make_eval_root(tmp_path, {"lighthouse": example_indexes["lighthouse"]})
    args = ("eval", "--root", str(root), "-k", "lighthouse", "--limit", "1", "-m", "basic", "-q")
    assert gtog(*args).returncode == 0
    summary_before = (root / "results" / "eval_results_summary.json").read_bytes()

    original = (root / "qa.json").read_text()
    qa = json.loads(original)
    qa[0]["answer"] = "Someone else"
    (root / "qa.json").write_text(json.dumps(qa))
    refused = gtog(*args, "--resume")
    assert refused.returncode == 2
    assert "dataset changed" in refused.stderr and "--force" in refused.stderr
    assert (root / "results" / "eval_results_summary.json").read_bytes() == summary_before
    (root / "qa.json").write_text(original)

    add_judge_prompts(root)
    refused = gtog(*args, "--resume")
    assert refused.returncode == 2
    assert "judge prompts changed" in refused.stderr
    llm_server.clear_log()
    forced = gtog(*args, "--resume", "--force")
    assert forced.returncode == 0, forced.stderr
    # --force keeps the answer and asks the changed judge again: no search, one verdict set
    assert "0 to run, 1 to re-judge" in " ".join(forced.stderr.split())
    assert not [e for e in llm_server.chat_log() if e.rule == "search:answer"]
    assert [e.rule for e in llm_server.chat_log() if e.rule == "judge:completeness"]
