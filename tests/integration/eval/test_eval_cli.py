"""`gtog eval` end to end: real graphrag indexes and engines, scripted model over HTTP."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from tests.integration.eval.helpers import (
    load_results,
    make_eval_root,
    question_of,
    search_method,
)
from tests.support.projects import TEST_API_KEY, gtog, subprocess_env
from tests.support.scripted_server import Fail, Rule, ScriptedServer

pytestmark = pytest.mark.integration

# The scripted model answers a question only when its evidence is in the context. For
# or-04 the evidence is the whole phrase "Ashby, at the Saturday market", which no context
# contains verbatim, so both methods answer "I do not know." and are judged incorrect.
WRONG = {"or-04"}


def test_eval_runs_local_and_basic_and_writes_both_files(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = make_eval_root(tmp_path, example_indexes)
    env = {**subprocess_env(), "GTOG_PROGRESS_SECONDS": "0"}  # no terminal: a line per answer
    result = gtog("eval", "--root", str(root), "--no-cache", "--limit", "4", env=env)
    assert result.returncode == 0, result.stderr
    assert "local" in result.stdout and "basic" in result.stdout  # the summary table
    lines = [x for x in result.stderr.splitlines() if x.startswith("evaluating ")]
    assert len(lines) == 16 + 1, result.stderr  # 8 questions x 2 methods, and the end
    assert re.match(r"evaluating 1/16 \(6%\), \d+:\d\d:\d\d elapsed, eta \d+:\d\d:\d\d", lines[0])
    assert lines[-1].startswith("evaluating 16/16 (100%)")
    detailed, summary = load_results(root)

    assert detailed["metadata"]["total_questions"] == 8
    assert detailed["metadata"]["methods"] == ["local", "basic"]
    qids = [q["question_id"] for q in detailed["results"]]
    assert sorted(qids) == sorted(
        [f"lh-0{i}" for i in range(1, 5)] + [f"or-0{i}" for i in range(1, 5)]
    )
    for q in detailed["results"]:
        assert set(q["methods"]) == {"local", "basic"}
        for method, entry in q["methods"].items():
            assert entry["response"], (q["question_id"], method)  # basic really answers
            expected = 0 if q["question_id"] in WRONG else 1
            assert entry["scores"]["correctness"] == expected, (q["question_id"], method)
            assert entry["scores"]["completeness"] == expected
            assert entry["efficiency"]["llm_calls"] == 1
            assert entry["context_text"]
            assert entry["sources"], "retrieved text units are kept"

    for method in ("local", "basic"):
        group = summary["by_method"][method]
        assert group["correctness"] == pytest.approx(7 / 8)
        assert group["n"] == 8 and group["search_errors"] == 0
        assert group["scored"]["correctness"] == 8
        assert sum(group["judge_errors"].values()) == 0
        assert set(summary["by_movie"]) == {"lighthouse", "orchard"}
        assert summary["by_movie"]["orchard"][method]["correctness"] == pytest.approx(3 / 4)

    # efficiency figures are the server's own usage numbers, per method
    chat = llm_server.chat_log()
    assert llm_server.unscripted == []
    for method in ("local", "basic"):
        served = [e for e in chat if search_method(e) == method]
        assert len(served) == 8
        eff = summary["efficiency"][method]
        assert eff["total_llm_calls"] == 8
        assert eff["total_prompt_tokens"] == sum(e.prompt_tokens for e in served)
        assert eff["total_output_tokens"] == sum(e.output_tokens for e in served)
        assert eff["avg_prompt_tokens"] > 0 and eff["avg_latency"] > 0
        per_question = {
            q["question"]: q["methods"][method]["efficiency"]["prompt_tokens"]
            for q in detailed["results"]
        }
        assert per_question == {question_of(e): e.prompt_tokens for e in served}
    judge_calls = [e for e in chat if (e.rule or "").startswith("judge:")]
    assert Counter(e.rule for e in judge_calls) == {
        f"judge:{m}": 16 for m in ("correctness", "faithfulness", "relevance", "completeness")
    }
    judged_tokens = sum(u["prompt_tokens"] for u in summary["judge_usage"].values())
    assert judged_tokens == sum(e.prompt_tokens for e in judge_calls)
    assert all(e.temperature == 0.0 for e in judge_calls)
    formats = [e.request["response_format"] for e in judge_calls]
    assert all(f["type"] == "json_schema" for f in formats), formats[0]  # structured output
    assert all(f["json_schema"]["name"] == "Verdict" for f in formats)
    assert all(e.request["max_completion_tokens"] == 300 for e in judge_calls)

    # the API key is never written anywhere
    for path in (root / "results").rglob("*.json*"):
        assert TEST_API_KEY not in path.read_text(), path

    # the same records in graphrag-eval's format, scored by gtog.qa
    check_qa_export(root / "results" / "qa", detailed)


def check_qa_export(qa_dir: Path, detailed: dict) -> None:
    """reference.json + responses_<method>.json run through gtog.qa's metrics."""
    import json

    from gtog.qa import compute_aggregates, run_evaluation
    from gtog.qa._models import models_from_model_configs
    from tests.support.qa_rules import qa_rules

    reference = json.loads((qa_dir / "reference.json").read_text())
    assert {t["template_id"] for t in reference} == {"lighthouse", "orchard"}
    assert sum(len(t["questions"]) for t in reference) == 8
    responses = json.loads((qa_dir / "responses_basic.json").read_text())
    assert len(responses) == 8
    by_id = {q["question_id"]: q for q in detailed["results"]}
    for response in responses:
        step = response["actual_steps"][0]
        assert step["name"] == "retrieval"
        texts = [d["text"] for d in json.loads(step["output"])]
        assert texts == [
            s["text"] for s in by_id[response["question_id"]]["methods"]["basic"]["sources"]
        ]
        assert (
            response["input_tokens"]
            == (by_id[response["question_id"]]["methods"]["basic"]["efficiency"]["prompt_tokens"])
        )
    with ScriptedServer(qa_rules()) as qa_server:
        cfg = {"model_provider": "openai", "api_base": qa_server.base_url, "api_key": "k"}
        judges = models_from_model_configs(
            {**cfg, "model": "gpt-4o-mini"}, {**cfg, "model": "text-embedding-3-small"}
        )
        results = run_evaluation(reference, responses, models=judges, progress=False)
    assert len(results) == 8
    for r in results:
        assert r["status"] == "success"
        assert "answer_f1" in r or "answer_eval_error" in r
        assert "retrieval_answer_recall" in r["actual_steps"][0] or (
            "retrieval_answer_recall_error" in r["actual_steps"][0]
        )
    aggregates = compute_aggregates(results)
    assert aggregates["micro"]["number_of_success_samples"] == 8


def test_one_failed_search_or_judge_does_not_stop_the_run(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    def basic_ship_search(r) -> bool:
        return (
            r.last_user.startswith("Which ship")
            and "-----Entities-----" not in r.system
            and "---Role---" in r.system
        )

    llm_server.rules[:0] = [
        Rule("fail:basic-search", basic_ship_search, lambda r: Fail(400, "scripted bad request")),
        Rule(
            "garbage:correctness",
            lambda r: (
                "judge if the prediction is correct" in r.prompt and "brass compass" in r.prompt
            ),
            lambda r: "I am not sure what you mean.",
        ),
    ]
    root = make_eval_root(tmp_path, {"lighthouse": example_indexes["lighthouse"]})
    result = gtog(
        "eval", "--root", str(root), "--no-cache", "--imdb-key", "lighthouse", "--limit", "3", "-q"
    )
    assert result.returncode == 0, result.stderr
    detailed, summary = load_results(root)
    by_id = {q["question_id"]: q["methods"] for q in detailed["results"]}

    failed = by_id["lh-02"]["basic"]
    assert "BadRequest" in failed["error"] and failed["response"] is None
    assert failed["scores"] == {}
    assert by_id["lh-02"]["local"]["scores"]["correctness"] == 1

    for method in ("local", "basic"):
        compass = by_id["lh-03"][method]
        assert compass["scores"]["correctness"] is None  # an error, not a made-up 0
        assert "unparseable" in compass["judge_errors"]["correctness"]
        assert compass["scores"]["completeness"] == 1
    garbage = [e for e in llm_server.chat_log() if e.rule == "garbage:correctness"]
    assert len(garbage) == 4  # asked once more after the unreadable reply, per method

    assert summary["by_method"]["basic"]["search_errors"] == 1
    assert summary["by_method"]["basic"]["correctness"] == pytest.approx(1.0)  # lh-01 only
    assert summary["by_method"]["basic"]["scored"]["correctness"] == 1
    assert summary["by_method"]["local"]["judge_errors"]["correctness"] == 1
    assert summary["efficiency"]["basic"]["n"] == 2


def test_eval_runs_tog_beside_local_and_basic(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    from tests.support.tog_rules import add_tog_rules

    add_tog_rules(llm_server)
    root = make_eval_root(
        tmp_path,
        example_indexes,
        methods=("tog", "local", "basic"),
        extra="tog_search:\n  width: 2\n  depth: 2\n"
        "metrics: [correctness, faithfulness, relevance, completeness, token_recall]\n",
    )
    result = gtog("eval", "--root", str(root), "--limit", "2", "-q")
    assert result.returncode == 0, result.stderr
    assert "tog" in result.stdout
    detailed, summary = load_results(root)
    assert list(summary["by_method"]) == ["tog", "local", "basic"]
    tog_stages = [e for e in llm_server.chat_log() if (e.rule or "").startswith("tog:")]
    assert llm_server.unscripted == []
    bound = 2 * 2 * 2 + 2 + 1
    for q in detailed["results"]:
        entry = q["methods"]["tog"]
        assert entry["response"] and entry["scores"]["correctness"] == 1, q["question_id"]
        assert entry["scores"]["token_recall"] == 1.0  # every reference word is in the answer
        eff = entry["efficiency"]
        assert 2 <= eff["llm_calls"] <= bound
        assert sum(eff["llm_calls_categories"].values()) == eff["llm_calls"]
        assert set(eff["llm_calls_categories"]) >= {"entity_linking", "reasoning", "answer"}
    eff = summary["efficiency"]["tog"]
    assert eff["total_llm_calls"] == len(tog_stages)
    assert eff["total_prompt_tokens"] == sum(e.prompt_tokens for e in tog_stages)
    assert eff["total_output_tokens"] == sum(e.output_tokens for e in tog_stages)
    assert summary["by_method"]["tog"]["correctness"] == 1.0
    assert summary["by_method"]["tog"]["token_recall"] == 1.0
    assert summary["by_method"]["tog"]["scored"]["token_recall"] == 4
