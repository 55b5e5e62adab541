"""The model-call cache (issue 33), through the CLI against the scripted server: a run
started again from nothing sends no request and gives the same records; a changed judge
prompt or method setting re-sends only the calls it changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from gtog.eval.scoring import load_prompts
from tests.integration.eval.helpers import load_results, make_eval_root, search_method
from tests.support.projects import gtog
from tests.support.scripted_server import ScriptedServer
from tests.support.tog_rules import tog_rules

pytestmark = pytest.mark.integration

METRICS = ("correctness", "faithfulness", "relevance", "completeness")
VARYING = {"latency", "queue_wait", "cached_calls", "usd_saved"}
"""What may differ between a run and its replay."""


def _records(root: Path) -> dict[tuple[str, str], dict]:
    detailed, _ = load_results(root)
    out = {}
    for q in detailed["results"]:
        for method, entry in q["methods"].items():
            entry = dict(entry)
            entry["efficiency"] = {
                k: v for k, v in (entry["efficiency"] or {}).items() if k not in VARYING
            }
            entry["judge_usage"] = {
                m: {k: v for k, v in u.items() if k not in VARYING}
                for m, u in entry["judge_usage"].items()
            }
            out[(q["question_id"], method)] = entry
    return out


def _eval(root: Path, *extra: str) -> None:
    result = gtog("eval", "--root", str(root), "-k", "lighthouse", "--limit", "3", "-q", *extra)
    assert result.returncode == 0, result.stderr


def test_a_run_started_again_sends_nothing_and_a_change_resends_only_its_calls(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    llm_server.rules[0:0] = tog_rules()
    root = make_eval_root(
        tmp_path,
        {"lighthouse": example_indexes["lighthouse"]},
        methods=("tog", "local", "basic"),
        extra="tog_search: {width: 2, depth: 2}\njudge:\n  prompts_dir: judge_prompts\n",
    )
    prompts = root / "judge_prompts"
    prompts.mkdir()
    correctness = load_prompts(None).templates["correctness"]
    (prompts / "correctness.txt").write_text(correctness)
    _eval(root)
    first = _records(root)
    sent = len(llm_server.log)
    _, summary = load_results(root)
    cost = summary["cost"]
    # every miss is a request the server saw, and no request was sent twice: the hits are
    # the question's embedding, asked by each method with the same text, and verdicts on
    # equal answers (asked after the first: replayed; asked at once: its reply shared)
    assert cost["cache"]["misses"] == sent and cost["cache"]["hits"] > 0
    assert len({e.identity for e in llm_server.log}) == sent
    assert cost["spent_usd"] > 0
    assert (root / "results" / "cache").is_dir()

    # the same run from nothing: every reply replayed, not one request sent
    llm_server.clear_log()
    _eval(root, "--force")
    assert llm_server.log == []
    assert _records(root) == first
    _, again = load_results(root)
    hits = cost["cache"]["hits"]
    assert again["cost"]["cache"] == {
        "hits": sent + hits,
        "misses": 0,
        "usd_saved": pytest.approx(cost["spent_usd"] + cost["cached_usd_saved"]),
    }
    assert again["cost"]["spent_usd"] == 0.0
    eff = again["efficiency"]["local"]  # the figures are the first run's, not zeros
    timing = {k: eff[k] for k in eff if "latency" in k or "queue_wait" in k}
    stated = {**eff["stated"], "latency": summary["efficiency"]["local"]["stated"]["latency"]}
    assert {**eff, "stated": stated} == {**summary["efficiency"]["local"], **timing}
    # the replayed answers took the cache's time, not the methods': left out of latency
    # (the first run's answers that replayed only the question's embedding kept theirs)
    for method in ("tog", "local", "basic"):
        first_eff, again_eff = summary["efficiency"][method], again["efficiency"][method]
        assert first_eff["avg_latency"] > 0 and first_eff["latency_replayed"] == 0
        assert again_eff["avg_latency"] is None and again_eff["latency_replayed"] == 3
        assert again_eff["stated"]["latency"] == 0

    # one judge prompt changed: only that judge's calls go out, at most one per answer
    # (methods that answer a question alike share one verdict, unless asked at once)
    (prompts / "correctness.txt").write_text(correctness + "\nBe strict.\n")
    llm_server.clear_log()
    _eval(root, "--resume", "--force")
    rules = {e.rule for e in llm_server.log}
    assert rules == {"judge:correctness"}, rules
    distinct = len({(q, r["response"]) for (q, _), r in first.items()})
    assert distinct <= len(llm_server.log) <= len(first)

    # one method's setting changed: only that method's calls go out (its searches, and
    # judge calls where its answer changed); the query embedding is replayed
    with (root / "eval_config.yaml").open("a") as f:
        f.write("basic_search: {k: 1}\n")
    llm_server.clear_log()
    _eval(root, "--resume", "--force")
    chat = llm_server.chat_log()
    searches = [e for e in chat if e.rule == "search:answer"]
    assert len(searches) == 3 and {search_method(e) for e in searches} == {"basic"}
    assert {e.rule for e in chat} <= {"search:answer", *(f"judge:{m}" for m in METRICS)}
    assert not [e for e in llm_server.log if e.kind == "embeddings"]
    for q in load_results(root)[0]["results"]:
        assert q["methods"]["basic"]["efficiency"]["cached_calls"] == 1  # the embedding


def test_no_cache_sends_every_request_again(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = make_eval_root(
        tmp_path, {"lighthouse": example_indexes["lighthouse"]}, methods=("local",)
    )
    _eval(root, "--no-cache")
    sent = len(llm_server.log)
    assert not (root / "results" / "cache").exists()
    llm_server.clear_log()
    _eval(root, "--force", "--no-cache")
    assert len(llm_server.log) == sent


def test_retry_errors_re_asks_an_unreadable_verdict_with_the_cache_on(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    """Issue 44 item 4: the judge's replies were unreadable (both attempts); the reply is not
    kept, so `--resume --retry-errors` asks again (it used to replay: 0 requests sent)."""
    import threading

    from tests.support.scripted_server import Rule

    mute = {"on": True}
    lock = threading.Lock()

    def reply(_request: object) -> str:
        with lock:
            return "I would rather not say." if mute["on"] else '{"score": 1, "reason": "ok"}'

    is_judge = lambda r: "judge if the prediction is correct" in r.prompt  # noqa: E731
    llm_server.rules.insert(0, Rule("judge:mute", is_judge, reply))
    root = make_eval_root(
        tmp_path,
        {"lighthouse": example_indexes["lighthouse"]},
        methods=("basic",),
        extra="metrics: [correctness]\n",
    )
    args = ("eval", "--root", str(root), "-k", "lighthouse", "--limit", "1", "-q")
    gate = ("--fail-under", "correctness=0.9")
    first = gtog(*args, *gate)  # the CI gate does not pass on the judge's failure (item 2)
    assert first.returncode == 1, first.stderr
    assert (
        "basic correctness: 0.000 < 0.9 (strict mean, n 1; counted as wrong: 0 failed "
        "searches, 1 unscored judge calls)" in " ".join(first.stderr.split())
    )
    detailed, _ = load_results(root)
    [entry] = detailed["results"][0]["methods"].values()
    assert "unparseable judge reply" in entry["judge_errors"]["correctness"]
    assert [e.rule for e in llm_server.chat_log()].count("judge:mute") == 2  # two attempts

    mute["on"] = False
    llm_server.clear_log()
    retried = gtog(*args, "--resume", "--retry-errors", *gate)
    assert retried.returncode == 0, retried.stderr
    assert "--fail-under: gate passed: correctness >= 0.9: basic 1.000 (n 1)" in retried.stderr
    assert [e.rule for e in llm_server.chat_log()] == ["judge:mute"]  # asked, not replayed
    detailed, _ = load_results(root)
    [entry] = detailed["results"][0]["methods"].values()
    assert entry["scores"]["correctness"] == 1 and not entry.get("judge_errors")
