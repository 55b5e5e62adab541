"""Head-to-head judging and results by question type (issue 24), through the CLI against the
scripted server: a judge that reads the answers, and a judge that only follows the position.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from tests.integration.eval.helpers import load_results, make_eval_root
from tests.support.projects import gtog
from tests.support.scripted_server import ChatRequest, Rule, ScriptedServer
from tests.support.world import EXAMPLE_QA

pytestmark = pytest.mark.integration

PAIRWISE = "You compare two answers to the same question on one criterion."


def _answers(r: ChatRequest) -> tuple[str, str]:
    m = re.search(r"Answer 1:\n(.*?)\n\nAnswer 2:\n(.*?)\n\nWhich answer", r.prompt, re.S)
    assert m, r.prompt
    return m.group(1).strip(), m.group(2).strip()


def reading_judge(r: ChatRequest) -> str:
    """Prefers an answer over "I do not know"; equal answers are a tie."""
    one, two = _answers(r)
    if one == two or ("do not know" in one) == ("do not know" in two):
        return '{"winner": 0, "reason": "equally good"}'
    better = 2 if "do not know" in one else 1
    return json.dumps({"winner": better, "reason": f"answer {better} answers the question"})


def first_judge(r: ChatRequest) -> str:
    """Always prefers whatever it read first."""
    return '{"winner": 1, "reason": "the first one reads better"}'


def _root(tmp_path: Path, index: Path, methods: str, extra: str) -> Path:
    root = make_eval_root(tmp_path, {"lighthouse": index}, methods=tuple(methods.split(",")))
    qa = json.loads(EXAMPLE_QA.read_text())
    for i, item in enumerate(qa):  # a question type on some questions; none on the others
        if i % 5 < 2:
            item["type"] = "who" if i % 5 == 0 else "which"
    (root / "qa.json").write_text(json.dumps(qa))
    dunno = "".join(
        json.dumps({"question": q["question"], "answer": "I do not know."}) + "\n" for q in qa
    )
    (root / "dunno.jsonl").write_text(dunno)
    with (root / "eval_config.yaml").open("a") as f:
        f.write(extra)
    return root


def _against_dunno(
    tmp_path: Path, index: Path, pairwise: str, limit: int
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """`local` against `dunno` (an answers file that never answers) on the first `limit`
    questions, judged head to head on relevance (`pairwise`: more of its settings)."""
    root = _root(
        tmp_path,
        index,
        "local,dunno",
        "answers: {dunno: dunno.jsonl}\nmetrics: [correctness]\n"
        f"pairwise: {{criteria: [relevance], trials: 1{pairwise}}}\n",
    )
    result = gtog("eval", "--root", str(root), "-k", "lighthouse", "--limit", str(limit), "-q")
    assert result.returncode == 0, result.stderr
    return root, result


def test_a_method_that_never_answers_loses_every_comparison_and_results_group_by_type(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    llm_server.rules[:0] = [Rule("pairwise", lambda r: PAIRWISE in r.prompt, reading_judge)]
    root = _root(
        tmp_path,
        example_indexes["lighthouse"],
        "local,dunno",
        "answers: {dunno: dunno.jsonl}\nmetrics: [correctness]\n"
        "pairwise: {criteria: [comprehensiveness], trials: 1}\n"
        "dataset:\n  path: qa.json\n  group_by: [type]\n",
    )
    args = ("eval", "--root", str(root), "--no-cache", "-k", "lighthouse", "--limit", "4", "-q")
    result = gtog(*args)
    assert result.returncode == 0, result.stderr
    detailed, summary = load_results(root)
    answered = [
        q for q in detailed["results"] if "do not know" not in q["methods"]["local"]["response"]
    ]
    assert len(answered) == 4  # local answers all four; dunno never does
    [entry] = summary["pairwise"]
    assert (entry["criterion"], entry["a"], entry["b"]) == ("comprehensiveness", "local", "dunno")
    assert (entry["n"], entry["wins_a"], entry["wins_b"], entry["ties"]) == (4, 4, 0, 0)
    assert entry["win_rate_a"] == 1.0 and entry["position_consistency"] == 1.0
    assert entry["p_value"] == pytest.approx(2 / 16)  # 4 of 4 decisive: 2 x (1/2)^4
    checks = {e["a"]: e for e in summary["pairwise_aa"]}
    assert set(checks) == {"local", "dunno"}
    assert all(c["win_rate_a"] == 0.5 and c["passes"] for c in checks.values())
    calls = [e for e in llm_server.chat_log() if e.rule == "pairwise"]
    assert len(calls) == 4 * 3 * 2  # 4 questions x (local-dunno + 2 A/A) x 2 orders x 1
    usage = summary["pairwise_usage"]
    assert usage["llm_calls"] == len(calls) and usage["comparisons"] == 12
    assert summary["judge_usage"]["local"]["llm_calls"] == 4  # the correctness judge, apart
    # each comparison's calls and reasons are in the detailed results
    q = detailed["results"][0]
    compared = {(c["a"], c["b"]): c for c in q["pairwise"]}
    calls0 = compared[("local", "dunno")]["judgement"]["calls"]
    assert [c["order"] for c in calls0] == ["ab", "ba"]
    assert {c["said"] for c in calls0} == {1, 2} and all(c["winner"] == "a" for c in calls0)
    assert all("answers the question" in c["reason"] for c in calls0)

    # by question type: items 0 and 1 have a type, 2 and 3 none
    groups = summary["by_group"]["type"]
    assert set(groups) == {"who", "which", "(none)"}
    assert groups["(none)"]["local"]["correctness"]["n"] == 2
    assert groups["who"]["dunno"]["correctness"]["mean"] == 0.0
    assert summary["pairwise_by_group"]["type"]["(none)"][0]["n"] == 2
    frame = pd.read_csv(root / "results" / "eval_results.csv")
    assert list(frame.columns[:4]) == ["index_key", "question_id", "method", "type"]
    assert sorted(frame["type"].fillna("").unique()) == ["", "which", "who"]

    # resume keeps every comparison; rescore asks the pairwise judge again, never searching
    llm_server.clear_log()
    assert gtog(*args).returncode == 0  # the same command again: nothing to do
    assert not llm_server.chat_log()
    rescored = gtog(*args, "--rescore")
    assert rescored.returncode == 0, rescored.stderr
    rules = {e.rule for e in llm_server.chat_log()}
    assert rules == {"pairwise", "judge:correctness"}
    assert len([e for e in llm_server.chat_log() if e.rule == "pairwise"]) == 24

    # the report: the win-rate matrix, each question's verdicts with reasons, by type
    page = (root / "results" / "report.html").read_text()
    assert "Head to head" in page and "comprehensiveness" in page
    assert "answer 1 answers the question" in page or "answer 2 answers the question" in page
    assert "Results by type" in page
    assert 'class="wr wr8"' in page  # local against dunno: won every comparison
    assert "The pairwise judge failed" not in page  # both A/A checks pass


def test_a_judge_that_always_prefers_the_first_answer_gives_ties_between_equals(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    llm_server.rules[:0] = [Rule("pairwise", lambda r: PAIRWISE in r.prompt, first_judge)]
    root = _root(
        tmp_path,
        example_indexes["lighthouse"],
        "local,local_again",
        "variants: {local_again: {method: local}}\nmetrics: [correctness]\n"
        "pairwise: {criteria: [comprehensiveness, directness], trials: 2, aa_check: false}\n"
        "judge: {temperature: 0.7}\n",
    )
    result = gtog("eval", "--root", str(root), "-k", "lighthouse", "--limit", "3", "-q")
    assert result.returncode == 0, result.stderr
    _, summary = load_results(root)
    assert summary["pairwise_aa"] == []
    entries = {e["criterion"]: e for e in summary["pairwise"]}
    assert set(entries) == {"comprehensiveness", "directness"}
    for e in entries.values():  # counterbalanced: both orders, opposite winners, a tie
        assert (e["n"], e["ties"], e["win_rate_a"]) == (3, 3, 0.5)
        assert e["position_consistency"] == 0.0 and e["p_value"] == 1.0
    assert "head to head" in result.stdout and "0-0-3" in result.stdout
    page = (root / "results" / "report.html").read_text()
    assert page.count('class="wr wr4"') == 4  # even, both ways, on both criteria
    assert "made no A/A checks" in page and "(the orders disagreed)" in page


def test_the_aa_check_fails_a_judge_that_picks_answer_1_on_most_questions(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    """At temperature 0 both orders of an A/A comparison send one prompt; a judge naming
    answer 1 on 4 questions of 5 (answer 2 on the other) ties every time, with a win rate of
    0.5 and a sign test of 1: the check fails it on position consistency, and says so."""
    qa = json.loads(EXAMPLE_QA.read_text())
    second = qa[2]["question"]

    def slot_picker(r: ChatRequest) -> str:
        slot = 2 if second in r.prompt else 1
        return json.dumps({"winner": slot, "reason": f"answer {slot} reads better"})

    llm_server.rules[:0] = [Rule("pairwise", lambda r: PAIRWISE in r.prompt, slot_picker)]
    root, result = _against_dunno(tmp_path, example_indexes["lighthouse"], "", 5)
    _, summary = load_results(root)
    checks = {c["a"]: c for c in summary["pairwise_aa"]}
    assert set(checks) == {"local", "dunno"}
    for check in checks.values():
        assert (check["n"], check["ties"], check["win_rate_a"]) == (5, 5, 0.5)
        assert check["p_value"] == 1.0 and check["position_consistency"] == 0.0
        assert check["passes"] is False and check["fails"] == ["position_consistency"]
    said = " ".join(result.stdout.split())
    assert "A/A check failed: local against itself on relevance: position consistency 0.00" in said
    page = (root / "results" / "report.html").read_text()
    assert "The pairwise judge failed 2 of 2 A/A checks" in page
    assert page.count("fails: position bias") == 2 and "fails: slot bias" not in page


def test_failed_comparisons_are_unscored_never_a_win_or_a_tie(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    llm_server.rules[:0] = [
        Rule(
            "pairwise",
            lambda r: PAIRWISE in r.prompt,
            lambda r: '{"winner": 1 or 2 or 0, "reason": "brief explanation"}',  # an echo
        )
    ]
    root, _ = _against_dunno(tmp_path, example_indexes["lighthouse"], ", aa_check: false", 2)
    detailed, summary = load_results(root)
    [entry] = summary["pairwise"]
    assert entry["n"] == 0 and entry["unscored"] == 2 and entry["win_rate_a"] is None
    for q in detailed["results"]:
        [c] = q["pairwise"]
        assert c["judgement"]["winner"] is None
        assert c["judgement"]["error"].startswith("order ab: 1 of 1 trials failed")
    page = (root / "results" / "report.html").read_text()
    assert page.count(">unscored (2)</td>") == 2  # the matrix: local-dunno and its mirror
    assert '<b class="err">unscored</b>' in page and "no usable reply" in page
