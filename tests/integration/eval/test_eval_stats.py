"""Statistics end to end: paired tests on a real run, judge trials, and `gtog judge-check`."""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from pathlib import Path

import pytest

from tests.integration.eval.helpers import load_results
from tests.support.projects import gtog, write_project
from tests.support.scripted_server import ChatRequest, Rule, ScriptedServer
from tests.support.tog_rules import tog_rules
from tests.support.world import Fact, judge_rules, search_rules

pytestmark = pytest.mark.integration

# 14 questions over the two example stories (the ten of eval/qa_eval.json and four more)
QUESTIONS = [
    ("lh-01", "lighthouse", "Who keeps the lighthouse on Varn Island?", "Maren Holt"),
    ("lh-02", "lighthouse", "Which ship did the lighthouse keeper save during the November storm?",
     "The Grey Heron, a cargo ship captained by Ilse Dunmore"),
    ("lh-03", "lighthouse", "Who gave Maren Holt the brass compass?", "Captain Ilse Dunmore"),
    ("lh-04", "lighthouse", "Who originally owned the compass that hangs above the lamp?",
     "Admiral Pell Dunmore, Ilse Dunmore's grandfather"),
    ("lh-05", "lighthouse", "From whom does Maren buy whale oil for the lamp?",
     "Oskar Venn, a merchant in Kelport"),
    ("lh-06", "lighthouse", "Who is the brother of Maren Holt?", "Tobias Holt"),
    ("lh-07", "lighthouse", "Who sells whale oil in Kelport?", "Oskar Venn"),
    ("or-01", "orchard", "Who is Edda Lorne's apprentice?", "Bram Osk"),
    ("or-02", "orchard", "Who planted the silver pear tree?", "Rosa Lorne, Edda's mother"),
    ("or-03", "orchard", "What did Jory Quill steal?", "The Moon Regulator clock"),
    ("or-04", "orchard", "In which town was the stolen clock found for sale?",
     "Ashby, at the Saturday market"),
    ("or-05", "orchard", "Who returned the Moon Regulator to Edda?",
     "Hugo Tamsin, the mayor of Fenwick"),
    ("or-06", "orchard", "Who is the mayor of Fenwick?", "Hugo Tamsin"),
    ("or-07", "orchard", "Who is the mother of Edda Lorne?", "Rosa Lorne"),
]  # fmt: skip
TOG_RIGHT = {"lh-01", "or-01"}
NEVER = "zz-evidence-no-context-holds"


def _rules() -> list[Rule]:
    """local and basic always answer right; ToG answers only TOG_RIGHT, else 'I do not know'."""
    answered = [Fact(q, a, ()) for _, _, q, a in QUESTIONS]
    tog = [Fact(q, a, () if i in TOG_RIGHT else (NEVER,)) for i, _, q, a in QUESTIONS]
    return tog_rules(tog) + search_rules(answered)


def _price(model: str = "gpt-4o-mini") -> tuple[float, float]:
    import litellm

    costs = litellm.model_cost[model]
    return float(costs["input_cost_per_token"]), float(costs.get("output_cost_per_token") or 0)


def test_paired_tests_tell_identical_methods_from_a_worse_one(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    llm_server.rules[len(judge_rules()) : len(judge_rules())] = _rules()
    root = tmp_path / "evalroot"
    root.mkdir()
    (root / "qa.json").write_text(
        json.dumps(
            [{"id": i, "imdb_key": k, "question": q, "answer": a} for i, k, q, a in QUESTIONS]
        )
    )
    indexes = "\n".join(f"  {k}: {p}" for k, p in example_indexes.items())
    (root / "eval_config.yaml").write_text(
        f"dataset:\n  path: qa.json\nindexes:\n{indexes}\nmethods: [tog, local, basic]\n"
        "output:\n  dir: results\nconcurrency: 4\ntog_search:\n  width: 2\n  depth: 2\n"
        "metrics: [correctness, completeness, token_recall]\njudge:\n  trials: 3\n"
    )
    # without the model-call cache: local's and basic's equal answers would share verdicts
    # whenever one is asked after the other's reply is kept (the server's count below would
    # depend on timing)
    result = gtog("eval", "--root", str(root), "-q", "--no-cache", timeout=900)
    assert result.returncode == 0, result.stderr
    assert "judge.trials: 3 trials at temperature 0 measure nothing" in result.stderr
    assert llm_server.unscripted == []
    detailed, summary = load_results(root)

    # local and basic give identical answers; ToG misses 12 of 14
    assert len(detailed["results"]) == 14
    for q in detailed["results"]:
        local, basic, tog = (q["methods"][m] for m in ("local", "basic", "tog"))
        assert local["response"] == basic["response"] == f"{q['ground_truth']}."
        assert local["scores"]["correctness"] == basic["scores"]["correctness"] == 1
        assert tog["scores"]["correctness"] == (1 if q["question_id"] in TOG_RIGHT else 0)

    comps = {(c["metric"], c["a"], c["b"]): c for c in summary["comparisons"]}
    assert len(comps) == 9  # 3 metrics x 3 pairs
    for metric in ("correctness", "completeness", "token_recall"):
        same = comps[(metric, "local", "basic")]
        assert same["n"] == 14 and same["diff"] == 0.0
        assert same["p_value"] == 1.0 and same["p_holm"] == 1.0
    worse = comps[("correctness", "tog", "local")]
    assert worse["test"] == "mcnemar_exact" and worse["n"] == 14
    assert worse["diff"] == pytest.approx(2 / 14 - 1)
    assert worse["p_value"] == pytest.approx(2 * 0.5**12)
    assert worse["p_value"] < 0.01 and worse["p_holm"] < 0.01
    lo, hi = worse["ci95"]
    assert lo < worse["diff"] < hi < 0
    assert comps[("token_recall", "tog", "local")]["test"] == "paired_permutation"
    assert comps[("token_recall", "tog", "local")]["p_value"] < 0.01
    for key in ("lighthouse", "orchard"):
        per_key = {(c["metric"], c["a"], c["b"]): c for c in summary["comparisons_by_movie"][key]}
        assert per_key[("correctness", "tog", "local")]["n"] == 7
        assert per_key[("correctness", "local", "basic")]["p_value"] == 1.0

    tog = summary["by_method"]["tog"]
    assert tog["same_questions"]["correctness"] == pytest.approx(2 / 14)
    assert tog["ci95"]["correctness"][0] < 2 / 14 < tog["ci95"]["correctness"][1]
    assert tog["ci95_method"]["correctness"] == "wilson"
    assert summary["by_movie"]["orchard"]["tog"]["ci95"]["correctness"] is not None

    # judge trials: every LLM judge asked 3 times; the scripted judges always agree
    judge_calls = Counter(
        e.rule for e in llm_server.chat_log() if (e.rule or "").startswith("judge:")
    )
    assert judge_calls == {"judge:correctness": 14 * 3 * 3, "judge:completeness": 14 * 3 * 3}
    assert tog["unanimous"]["correctness"] == 1.0
    assert tog["unanimous"]["token_recall"] is None  # no LLM, no trials
    assert summary["metadata"]["spec"]["judge"]["trials"] == 3  # part of the run's spec

    # cost from LiteLLM's price map for gpt-4o-mini, per method, from the server's usage
    price_in, price_out = _price()
    price_embedding, _ = _price("text-embedding-3-small")
    for method in ("tog", "local", "basic"):
        eff = summary["efficiency"][method]
        expected = eff["total_prompt_tokens"] * price_in + eff["total_output_tokens"] * price_out
        expected += eff["total_embedding_tokens"] * price_embedding  # the query embeddings
        assert eff["usd_total"] == pytest.approx(expected) and expected > 0
        if method != "tog":  # one query embedding per question, counted and priced
            assert eff["total_embedding_calls"] == 14 and eff["total_embedding_tokens"] > 0
        assert eff["usd_per_answer"] == pytest.approx(expected / 14)
        assert eff["p50_latency"] > 0 and eff["p95_latency"] >= eff["p50_latency"]
        usage = summary["judge_usage"][method]
        judged = usage["prompt_tokens"] * price_in + usage["output_tokens"] * price_out
        assert usage["usd_total"] == pytest.approx(judged)
        assert summary["cost"]["by_method"][method]["total_usd"] == pytest.approx(expected + judged)
    assert (
        summary["efficiency"]["tog"]["p50_llm_calls"]
        > summary["efficiency"]["local"]["p50_llm_calls"]
    )

    # the table: intervals, a significance mark on ToG only, and the question set
    scores = result.stdout.split("cost per answer")[0]
    rows = {line.split()[0]: line for line in scores.splitlines() if line.strip()}
    lo, hi = tog["same_questions"]["ci95"]["correctness"]
    assert f"[{lo:.2f}, {hi:.2f}]" in scores and "±" not in scores
    assert "*" in rows["tog"]
    assert "*" not in rows["local"] and "*" not in rows["basic"]
    assert "the 14 questions every method answered" in " ".join(result.stdout.split())


def _split_judge(replies: dict[str, list[int]]) -> Rule:
    """Correctness replies taken in turn per ground truth (a judge that changes its mind)."""
    lock = threading.Lock()
    turns: Counter[str] = Counter()

    def matches(r: ChatRequest) -> bool:
        return "judge if the prediction is correct" in r.prompt and any(
            f"Ground Truth: {g}\n" in r.prompt for g in replies
        )

    def reply(r: ChatRequest) -> str:
        truth = next(g for g in replies if f"Ground Truth: {g}\n" in r.prompt)
        with lock:
            i = turns[truth]
            turns[truth] += 1
        return json.dumps({"score": replies[truth][i % len(replies[truth])], "reason": "turn"})

    return Rule("judge:split", matches, reply)


def test_judge_trials_take_the_majority_and_a_tie_is_unscored() -> None:
    from gtog.eval.scoring._judges import judge_trials, load_prompts
    from gtog.qa._models import models_from_model_configs

    rule = _split_judge({"Majority": [1, 0, 1], "Tie": [1, 0], "Fail": [1], "Lone": [1]})
    garbage = Rule(
        "judge:garbage",
        lambda r: "Ground Truth: Fail\n" in r.prompt,
        lambda r: "no verdict here",
    )
    lone_seen: list[int] = []

    def lone_fails(r: ChatRequest) -> bool:  # the first request answers 1, every later none
        if "Ground Truth: Lone\n" not in r.prompt:
            return False
        lone_seen.append(1)
        return len(lone_seen) > 1

    lone = Rule("judge:lone", lone_fails, lambda r: "no verdict here")
    with ScriptedServer([garbage, lone, rule]) as server:
        cfg = {"model_provider": "openai", "api_base": server.base_url, "api_key": "k"}
        model = models_from_model_configs({**cfg, "model": "gpt-4o-mini"}, None).chat
        unpriced = models_from_model_configs({**cfg, "model": "gtog-unpriced"}, None).chat
        prompts = load_prompts()

        def ask(truth: str, trials: int, m=model):
            values = {"question": "Q?", "ground_truth": truth, "predicted": "P"}
            return asyncio.run(judge_trials("correctness", m, prompts, values, trials=trials))

        majority = ask("Majority", 3)
        assert majority.score == 1 and sorted(majority.votes) == [0, 1, 1]
        assert majority.llm_calls == 3 and majority.error is None
        price_in, price_out = _price()
        assert majority.cost_usd == pytest.approx(
            majority.prompt_tokens * price_in + majority.output_tokens * price_out
        )
        tie = ask("Tie", 2)
        assert tie.score is None and tie.error.startswith("tie") and sorted(tie.votes) == [0, 1]
        failed = ask("Fail", 3)
        assert failed.score is None and failed.votes == [None, None, None]
        assert failed.error.startswith("all 3 trials failed: unparseable")
        one_vote = ask("Lone", 3)  # 1 of 3 trials scored: not a majority of the three asked
        assert one_vote.score is None and one_vote.error.startswith("no majority: 1 of 3")
        single = ask("Majority", 1, unpriced)
        assert single.votes is None and single.score in (0, 1)
        assert single.cost_usd is None  # no price: unknown, not 0


def test_judge_check_reports_agreement_with_labels(
    llm_server: ScriptedServer, tmp_path: Path
) -> None:
    project = write_project(tmp_path / "lighthouse", "lighthouse", llm_server.base_url)
    root = tmp_path / "root"
    root.mkdir()
    (root / "eval_config.yaml").write_text(
        f"dataset:\n  path: qa.json\nindexes:\n  lighthouse: {project}\njudge:\n  trials: 3\n"
    )
    # the scripted correctness judge says 1 when half the reference words are in the answer;
    # the completeness judge says 0 for "I do not know" answers
    right = {"metric": "correctness", "question": "Who keeps it?", "ground_truth": "Maren Holt"}
    cases = [
        {**right, "answer": "Maren Holt does.", "label": 1},  # TP
        {**right, "answer": "Maren Holt does.", "label": 1},  # TP
        {**right, "answer": "Tobias Holt does.", "label": 1},  # judge 1 (half the words): TP
        {**right, "answer": "Oskar Venn.", "label": 1},  # FN
        {**right, "answer": "Oskar Venn.", "label": 0},  # TN
        {**right, "answer": "Maren Holt, surely.", "label": 0},  # FP
        {"metric": "completeness", "question": "Who?", "answer": "I do not know.", "label": 0},
        {"metric": "completeness", "question": "Who?", "answer": "Maren.", "label": 1},
    ]
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases))
    out = tmp_path / "report.json"
    result = gtog("judge-check", "--cases", str(path), "--root", str(root), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "correctness" in result.stdout and "kappa" in result.stdout
    report = json.loads(out.read_text())
    c = report["by_metric"]["correctness"]
    assert c["confusion"] == {
        "label_1_judge_1": 3,
        "label_1_judge_0": 1,
        "label_0_judge_1": 1,
        "label_0_judge_0": 1,
    }
    assert c["n"] == 6 and c["unscored"] == 0 and c["accuracy"] == pytest.approx(4 / 6)
    # po = 4/6, pe = (4/6)(4/6) + (2/6)(2/6) = 20/36, kappa = (24/36 - 20/36) / (16/36) = 0.25
    assert c["kappa"] == pytest.approx(0.25)
    assert c["unanimous"] == 1.0
    assert report["by_metric"]["completeness"]["accuracy"] == 1.0
    judged = [e for e in llm_server.chat_log() if (e.rule or "").startswith("judge:")]
    assert len(judged) == 8 * 3
    assert report["judge_model"] == "openai/gpt-4o-mini@T0x3"

    bad = gtog("judge-check", "--cases", str(tmp_path / "missing.json"), "--root", str(root))
    assert bad.returncode == 2 and "cases file not found" in bad.stderr
