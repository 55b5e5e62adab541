"""`gtog eval --estimate` (issue 33) against the scripted server: the bounds (no model
call) are never below what the run spends; a pilot of 3 questions lands within 15% of it
for every method, and the run resumes from the pilot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.eval.helpers import checkpoint_keys, load_results, make_eval_root
from tests.support.projects import gtog
from tests.support.scripted_server import ScriptedServer
from tests.support.tog_rules import tog_rules

pytestmark = pytest.mark.integration

METHODS = ("tog", "local", "basic", "global", "drift")
FIGURES = ("llm_calls", "prompt_tokens", "output_tokens", "usd")


def _actual(summary: dict, method: str) -> dict[str, float]:
    """A method's spend as the estimate counts it (embedding requests in the calls)."""
    e = summary["efficiency"][method]
    return {
        "llm_calls": e["total_llm_calls"] + e["total_embedding_calls"],
        "prompt_tokens": e["total_prompt_tokens"] + e["total_embedding_tokens"],
        "output_tokens": e["total_output_tokens"],
        "usd": e["usd_total"],
    }


def _judged(detailed: dict, metric: str) -> dict[str, float]:
    usage = [e["judge_usage"][metric] for q in detailed["results"] for e in q["methods"].values()]
    return {
        "llm_calls": sum(u["llm_calls"] for u in usage),
        "prompt_tokens": sum(u["prompt_tokens"] for u in usage),
        "output_tokens": sum(u["output_tokens"] for u in usage),
        "usd": sum(u["cost_usd"] for u in usage),
    }


def _estimate(root: Path, *flags: str) -> dict:
    result = gtog("eval", "--root", str(root), "--estimate", "-q", *flags, timeout=900)
    assert result.returncode == 0, result.stderr
    assert "to pay" in result.stdout + result.stderr
    return json.loads((root / "results" / "estimate.json").read_text())


def test_bounds_hold_and_a_pilot_lands_within_15_percent(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    llm_server.rules[0:0] = tog_rules()
    root = make_eval_root(
        tmp_path,
        example_indexes,
        methods=METHODS,
        extra="metrics: [correctness]\ntog_search: {width: 2, depth: 2}\n",
    )
    bounds = _estimate(root)
    assert llm_server.log == []  # no model call
    assert bounds["basis"] == "bounds" and set(bounds["methods"]) == set(METHODS)
    assert bounds["cached"]["llm_calls"] == 0
    assert not (root / "results" / "eval_checkpoint.jsonl").exists()
    assert bounds["total"]["usd_low"] <= bounds["total"]["usd"] == bounds["total"]["usd_high"]

    pilot = _estimate(root, "--pilot", "3")
    assert pilot["basis"] == "pilot" and len(pilot["pilot_questions"]) == 3
    kept = checkpoint_keys(root / "results" / "eval_checkpoint.jsonl")
    assert len(kept) == 3 * len(METHODS)
    assert pilot["cached"]["llm_calls"] > 0  # the pilot's own pairs, held
    low, mid, high = (pilot["total"][k] for k in ("usd_low", "usd", "usd_high"))
    assert low <= mid <= high

    sent = len(llm_server.log)
    run = gtog("eval", "--root", str(root), "-q", "--resume", timeout=900)
    assert run.returncode == 0, run.stderr
    assert "15 already done" in run.stderr  # resumed from the pilot
    detailed, summary = load_results(root)
    assert summary["metadata"]["status"] == "complete"
    assert summary["cost"]["estimate_usd"] == pytest.approx(pilot["run"]["usd"])
    for method in METHODS:
        actual, guess = _actual(summary, method), pilot["methods"][method]
        for figure in FIGURES:
            assert bounds["methods"][method][figure] >= actual[figure], (method, figure)
        # calls, tokens (prompt and output together) and USD: within 15% (output tokens
        # alone, a small share, vary more: ToG's answers run from 35 to 262 tokens here)
        pairs = [
            (guess["llm_calls"], actual["llm_calls"]),
            (
                guess["prompt_tokens"] + guess["output_tokens"],
                actual["prompt_tokens"] + actual["output_tokens"],
            ),
            (guess["usd"], actual["usd"]),
        ]
        for estimated, real in pairs:
            assert abs(estimated - real) <= 0.15 * real, (method, estimated, real)
    judged = _judged(detailed, "correctness")
    for figure in FIGURES:
        assert bounds["judges"]["correctness"][figure] >= judged[figure]
    spent = sum(_actual(summary, m)["usd"] for m in METHODS) + judged["usd"]
    assert bounds["total"]["usd"] >= spent
    assert len(llm_server.log) > sent

    # everything the run asked is held now: an estimate from nothing says so
    again = _estimate(root, "--force")
    assert again["total"]["llm_calls"] == 0 and again["total"]["usd"] == pytest.approx(0, abs=1e-12)
    assert len(checkpoint_keys(root / "results" / "eval_checkpoint.jsonl")) == 10 * len(METHODS)
