"""Repeated answers, the true A/A check and judge panels (issue 34), through the CLI against
the scripted server: one method whose answers are right or wrong at random (seeded), one
that always answers alike, a judge that only follows the slot, and a contrarian judge.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from tests.integration.eval.helpers import LOCAL_MARKER, load_results, make_eval_root
from tests.integration.eval.test_pairwise import PAIRWISE, first_judge, reading_judge
from tests.support.projects import gtog
from tests.support.scripted_server import ChatRequest, Rule, ScriptedServer
from tests.support.world import example_facts, judge_correctness, search_answer

pytestmark = pytest.mark.integration

SEED = "issue-34"


def coin_rule() -> Rule:
    """Local search answers right or "I do not know" at random: the n-th request for a
    question draws from a hash of (seed, question, n), so a run's draws are fixed whatever
    order its requests come in."""
    answer = search_answer(example_facts())
    calls: Counter[str] = Counter()
    lock = threading.Lock()

    def reply(r: ChatRequest) -> str:
        question = r.last_user.strip()
        with lock:
            calls[question] += 1
            n = calls[question]
        heads = hashlib.sha256(f"{SEED}:{question}:{n}".encode()).digest()[0] % 2 == 0
        return answer(r) if heads else "I do not know."

    return Rule("search:coin", lambda r: LOCAL_MARKER in r.system, reply)


def _root(tmp_path: Path, index: Path, extra: str) -> Path:
    return make_eval_root(
        tmp_path,
        {"lighthouse": index},
        methods=("local", "basic"),
        extra=f"metrics: [correctness]\n{extra}",
    )


def _set_config(root: Path, old: str, new: str) -> None:
    path = root / "eval_config.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def _searches(server: ScriptedServer) -> list[str]:
    return [e.rule for e in server.chat_log() if e.rule and e.rule.startswith("search:")]


def test_repeats_give_pass_at_k_and_flips_for_a_random_method_and_resume_adds_epochs(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    llm_server.rules.insert(0, coin_rule())
    root = _root(tmp_path, example_indexes["lighthouse"], "epochs: 2\n")
    args = ("eval", "--root", str(root), "-k", "lighthouse", "--limit", "5", "-q")
    first = gtog(*args)
    assert first.returncode == 0, first.stderr
    assert len(_searches(llm_server)) == 5 * 2 * 2  # 5 questions x 2 methods x 2 epochs

    # raising k and resuming adds the third answers only
    _set_config(root, "epochs: 2", "epochs: 3")
    llm_server.clear_log()
    resumed = gtog(*args, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert len(_searches(llm_server)) == 5 * 2  # epoch 3 of each pair, nothing redone
    detailed, summary = load_results(root)
    assert summary["metadata"]["run"] == {"status": "complete", "pairs_done": 30, "pairs_total": 30}
    assert all(set(q["repeats"]) == {"2", "3"} for q in detailed["results"])

    coin = summary["by_method"]["local"]
    rep = coin["epochs"]["correctness"]
    assert (rep["k"], rep["n"]) == (3, 5)
    assert rep["pass_hat_k"] <= rep["mean"] <= rep["pass_at_k"]
    assert rep["flip_rate"] > 0 and rep["pass_hat_k"] < rep["pass_at_k"]
    assert coin["n"] == 5 and coin["answers"] == 15  # means over questions, errors per answer
    assert coin["correctness"] == pytest.approx(rep["mean"])  # every epoch was scored
    steady = summary["by_method"]["basic"]["epochs"]["correctness"]
    assert steady["flip_rate"] == 0.0
    assert steady["pass_hat_k"] == steady["mean"] == steady["pass_at_k"]
    # the paired test reads a mean per question, not 0/1 verdicts
    [comparison] = summary["comparisons"]
    assert comparison["n"] == 5 and comparison["test"] != "mcnemar_exact"
    frame = pd.read_csv(root / "results" / "eval_results.csv")
    assert list(frame.columns[:4]) == ["index_key", "question_id", "method", "epoch"]
    assert len(frame) == 30 and sorted(frame["epoch"].unique()) == [1, 2, 3]
    assert "repeated answers" in resumed.stdout and "flip" in resumed.stdout
    page = (root / "results" / "report.html").read_text()
    assert "Repeated answers" in page and "pass^k" in page


def test_with_repeats_the_aa_check_compares_two_answers_and_fails_a_slot_biased_judge(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    llm_server.rules[:0] = [
        coin_rule(),
        Rule("pairwise", lambda r: PAIRWISE in r.prompt, reading_judge),
    ]
    root = _root(
        tmp_path,
        example_indexes["lighthouse"],
        "epochs: 2\npairwise: {criteria: [relevance], trials: 1}\n",
    )
    args = ("eval", "--root", str(root), "-k", "lighthouse", "--limit", "5", "-q")
    result = gtog(*args)
    assert result.returncode == 0, result.stderr
    detailed, summary = load_results(root)
    checks = {c["a"]: c for c in summary["pairwise_aa"]}
    assert set(checks) == {"local", "basic"}
    # two answers of the random method: some differ, and the reading judge then decides
    local = [p for q in detailed["results"] for p in q["pairwise"] if p["a"] == p["b"] == "local"]
    assert len(local) == 5 and all((p["epoch_a"], p["epoch_b"]) == (1, 2) for p in local)
    decisive = [p for p in local if p["judgement"]["winner"] != "tie"]
    assert decisive and checks["local"]["passes"] is True
    assert checks["basic"]["passes"] is True  # the same answer twice: ties that agree

    # a judge that always names the answer it read first: rescored, it fails on position
    llm_server.rules[1] = Rule("pairwise", lambda r: PAIRWISE in r.prompt, first_judge)
    llm_server.clear_log()
    # the judge changed behind the same model name: the model-call cache cannot know it
    rescored = gtog(*args, "--rescore", "--no-cache")
    assert rescored.returncode == 0, rescored.stderr
    assert not _searches(llm_server)
    rejudged = [e for e in llm_server.chat_log() if e.rule == "judge:correctness"]
    assert len(rejudged) == 5 * 2 * 2  # every epoch's answer judged again
    _, summary = load_results(root)
    for check in summary["pairwise_aa"]:
        assert check["passes"] is False and check["fails"] == ["position_consistency"]
        assert check["position_consistency"] == 0.0
    said = " ".join(rescored.stdout.split())
    assert "A/A check failed: local against itself on relevance" in said


def coin_judge_rule() -> Rule:
    """A correctness judge that says 1 or 0 at random: the n-th request for one prompt draws
    from a hash of (seed, prompt, n), so the same answer judged again may get a new verdict."""
    calls: Counter[str] = Counter()
    lock = threading.Lock()

    def reply(r: ChatRequest) -> str:
        with lock:
            calls[r.prompt] += 1
            n = calls[r.prompt]
        score = hashlib.sha256(f"{SEED}:{r.prompt}:{n}".encode()).digest()[0] % 2
        return json.dumps({"score": score, "reason": "a coin"})

    return Rule("judge:coin", lambda r: "judge if the prediction is correct" in r.prompt, reply)


def test_an_answers_file_with_repeats_is_judged_again_each_epoch_and_flips_with_the_judge(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    llm_server.rules.insert(0, coin_judge_rule())
    root = make_eval_root(
        tmp_path,
        {"lighthouse": example_indexes["lighthouse"]},
        methods=("mine",),
        extra="answers: {mine: mine.jsonl}\nmetrics: [correctness]\nepochs: 3\n",
    )
    lines = [{"question_id": f"lh-0{i}", "answer": "Maren Holt"} for i in range(1, 6)]
    (root / "mine.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    result = gtog("eval", "--root", str(root), "-k", "lighthouse", "--limit", "5", "-q")
    assert result.returncode == 0, result.stderr
    assert not _searches(llm_server)  # an answers file searches nothing
    judged = [e for e in llm_server.chat_log() if e.rule == "judge:coin"]
    assert len(judged) == 5 * 3  # its one answer per question, judged in each epoch
    detailed, summary = load_results(root)
    for q in detailed["results"]:
        answers = [q["methods"]["mine"], *(q["repeats"][e]["mine"] for e in ("2", "3"))]
        assert {a["response"] for a in answers} == {"Maren Holt"}
    rep = summary["by_method"]["mine"]["epochs"]["correctness"]
    assert (rep["k"], rep["n"]) == (3, 5)
    assert rep["flip_rate"] > 0  # the answers are alike: the flips are the judge's own noise
    assert rep["pass_hat_k"] <= rep["mean"] <= rep["pass_at_k"]


def contrarian_rule() -> Rule:
    """The correctness judge, reversed, for requests naming the model `contrarian`."""

    def reply(r: ChatRequest) -> str:
        verdict = json.loads(judge_correctness(r))
        return json.dumps({"score": 1 - verdict["score"], "reason": "I disagree"})

    return Rule(
        "judge:contrarian",
        lambda r: (
            r.body.get("model") == "contrarian" and "judge if the prediction is correct" in r.prompt
        ),
        reply,
    )


def test_a_judge_panel_takes_the_majority_and_its_agreement_drops_with_a_contrarian(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    llm_server.rules[:0] = [coin_rule(), contrarian_rule()]
    panel = "judge: {models: [openai/judge-a, openai/judge-b]}\n"
    root = _root(tmp_path, example_indexes["lighthouse"], panel)
    args = ("eval", "--root", str(root), "-k", "lighthouse", "--limit", "5", "-q")
    result = gtog(*args)
    assert result.returncode == 0, result.stderr
    sent = {
        m: [
            e.prompt for e in llm_server.chat_log() if "judge" in e.rule and e.request["model"] == m
        ]
        for m in ("judge-a", "judge-b")
    }  # 5 questions x 2 methods, each model; two equal answers are judged once (the cache:
    # a LiteLLM-named panel model passes the call gate like every model, issue 44)
    assert 5 <= len(sent["judge-a"]) <= 10 and set(sent["judge-a"]) == set(sent["judge-b"])
    assert all(len(prompts) == len(set(prompts)) for prompts in sent.values())
    _, summary = load_results(root)
    agree = summary["judge_agreement"]["correctness"]
    assert agree["models"] == ["openai/judge-a", "openai/judge-b"]
    assert (agree["krippendorff_alpha"], agree["n"], agree["split"]) == (1.0, 10, 0)

    # the contrarian joins: a judge change, so --rescore (no search) asks all three
    _set_config(root, "openai/judge-b]", "openai/judge-b, openai/contrarian]")
    llm_server.clear_log()
    rescored = gtog(*args, "--rescore")
    assert rescored.returncode == 0, rescored.stderr
    assert not _searches(llm_server)
    detailed, summary = load_results(root)
    after = summary["judge_agreement"]["correctness"]
    assert after["krippendorff_alpha"] < agree["krippendorff_alpha"]
    assert (after["n"], after["split"]) == (10, 10)
    for method in ("local", "basic"):
        entry = summary["by_method"][method]
        judges = entry["judges"]
        assert set(judges) == {"openai/judge-a", "openai/judge-b", "openai/contrarian"}
        a, c = judges["openai/judge-a"]["correctness"], judges["openai/contrarian"]["correctness"]
        assert c == pytest.approx(1 - a)
        assert entry["correctness"] == pytest.approx(a)  # the majority: a and b agree
    votes = detailed["results"][0]["methods"]["local"]["panel"]["correctness"]
    assert votes["openai/contrarian"]["reason"] == "I disagree"
    assert votes["openai/judge-a"]["score"] == 1 - votes["openai/contrarian"]["score"]
    assert "judge panel" in rescored.stdout
    page = (root / "results" / "report.html").read_text()
    assert "Judge panel" in page and "I disagree" in page


def test_one_model_name_at_two_servers_is_two_judges_with_the_cache_on(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    """Issue 44 item 3, the reviewer's panel: `judge_b` is the index's model name served by
    another server (which disagrees on every answer). With the cache on it used to be one
    judge: every request went to the first server, alpha None."""
    import yaml

    from tests.integration.eval.test_failsafe import copy_project

    def contrary(r: ChatRequest) -> str:
        verdict = json.loads(judge_correctness(r))
        return json.dumps({"score": 1 - verdict["score"], "reason": "elsewhere"})

    is_judge = lambda r: "judge if the prediction is correct" in r.prompt  # noqa: E731
    with ScriptedServer([Rule("judge:elsewhere", is_judge, contrary)]) as other:
        index = example_indexes["lighthouse"]
        entry = yaml.safe_load((index / "settings.yaml").read_text())["completion_models"]
        judge_b = {**entry["default_completion_model"], "api_base": other.base_url}
        project = copy_project(index, tmp_path / "p", completion_models={"judge_b": judge_b})
        panel = "judge: {models: [default_completion_model, judge_b]}\n"
        root = make_eval_root(
            tmp_path, {"lighthouse": project}, methods=("basic",),
            extra=f"metrics: [correctness]\n{panel}",
        )  # fmt: skip
        result = gtog("eval", "--root", str(root), "-k", "lighthouse", "--limit", "4", "-q")
        assert result.returncode == 0, result.stderr
        assert len(other.chat_log()) == 4  # every verdict asked of the second server too
    _, summary = load_results(root)
    agree = summary["judge_agreement"]["correctness"]
    assert agree["models"] == ["default_completion_model", "judge_b"]
    assert (agree["n"], agree["split"]) == (4, 4) and agree["krippendorff_alpha"] < 0
