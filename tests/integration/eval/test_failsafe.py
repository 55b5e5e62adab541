"""Fail-safe evaluation (issue 9), through the CLI against the scripted server.

No failure becomes a number, no record is lost, fatal errors stop at once with one line,
hung calls end, and no key reaches the terminal, the log, the checkpoint or the results.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.integration.eval.helpers import (
    checkpoint_keys,
    load_results,
    make_eval_root,
    search_method,
)
from tests.support.projects import TEST_API_KEY, gtog, start_gtog
from tests.support.scripted_server import (
    DROP,
    Fail,
    Faults,
    Hang,
    LogEntry,
    Rule,
    ScriptedServer,
)
from tests.support.world import judge_rules

pytestmark = pytest.mark.integration

ECHO = '{"score": 0 or 1, "reason": "brief explanation"}'


def copy_project(src: Path, dst: Path, **settings: dict) -> Path:
    """A copy of an indexed project with some top-level settings blocks updated."""
    import shutil

    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("logs", "cache"))
    data = yaml.safe_load((dst / "settings.yaml").read_text())
    for key, value in settings.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key].update(value)
        else:
            data[key] = value
    (dst / "settings.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return dst


def judged(llm_server: ScriptedServer, metric: str) -> list:
    return [e for e in llm_server.chat_log() if metric in (e.rule or "")]


def test_an_echoed_template_is_unscored_after_one_retry_never_zero(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    llm_server.rules[:0] = [
        Rule(
            "echo:correctness",
            lambda r: "judge if the prediction is correct" in r.prompt,
            lambda r: ECHO,
        )
    ]
    root = make_eval_root(
        tmp_path, {"lighthouse": example_indexes["lighthouse"]}, methods=("local",)
    )
    result = gtog("eval", "--root", str(root), "-k", "lighthouse", "--limit", "2", "-q")
    assert result.returncode == 0, result.stderr
    detailed, summary = load_results(root)
    for q in detailed["results"]:
        entry = q["methods"]["local"]
        assert entry["scores"]["correctness"] is None  # not the 0 the echo seems to say
        assert "no explicit 0/1 score" in entry["judge_errors"]["correctness"]
        assert entry["scores"]["completeness"] == 1
    assert len(judged(llm_server, "echo:correctness")) == 2 * 2  # asked once more each
    local = summary["by_method"]["local"]
    assert local["correctness"] is None and local["scored"]["correctness"] == 0
    assert local["judge_errors"]["correctness"] == 2
    assert "judge correctness: unparseable reply" in result.stderr  # one line per kind


def test_a_search_error_graphrag_swallows_is_the_pairs_error(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    project = copy_project(
        example_indexes["lighthouse"],
        tmp_path / "lighthouse",
        local_search={"prompt": "prompts/bad_local.txt"},
    )
    (project / "prompts").mkdir(exist_ok=True)
    (project / "prompts" / "bad_local.txt").write_text("Data: {context_data}\n{no_such_field}\n")
    root = make_eval_root(tmp_path, {"lighthouse": project})
    result = gtog("eval", "--root", str(root), "-k", "lighthouse", "--limit", "2", "-q")
    assert result.returncode == 0, result.stderr
    detailed, summary = load_results(root)
    for q in detailed["results"]:
        local = q["methods"]["local"]
        assert local["response"] is None and "KeyError" in local["error"], local
        assert local["scores"] == {}
        assert q["methods"]["basic"]["scores"]["correctness"] == 1
    searches = [search_method(e) for e in llm_server.chat_log()]
    assert "local" not in searches  # it failed before any LLM call...
    assert summary["by_method"]["local"]["search_errors"] == 2  # ...and was not judged as ""
    assert summary["by_method"]["local"]["scored"]["correctness"] == 0


def test_a_failed_search_reports_what_it_spent_and_missing_retrieval_is_left_out(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    from tests.support.tog_rules import add_tog_rules

    add_tog_rules(llm_server)
    llm_server.rules[:0] = [
        Rule(
            "fail:tog-answer",
            lambda r: "Think-on-Graph answer" in r.prompt and "Grey Heron" not in r.prompt,
            lambda r: Fail(400, "scripted bad request"),
        )
    ]
    root = make_eval_root(
        tmp_path,
        {"lighthouse": example_indexes["lighthouse"]},
        methods=("tog", "basic"),
        extra="tog_search:\n  width: 2\n  depth: 2\n",
    )
    result = gtog("eval", "--root", str(root), "-k", "lighthouse", "--limit", "3", "-q")
    assert result.returncode == 0, result.stderr
    detailed, summary = load_results(root)
    tog_calls = [e for e in llm_server.chat_log() if (e.rule or "").startswith("tog:")]
    failed = [q["methods"]["tog"] for q in detailed["results"] if q["methods"]["tog"].get("error")]
    assert failed, "some ToG answers failed"
    for entry in failed:
        assert "BadRequest" in entry["error"]
        spent = entry["efficiency"]
        assert spent["llm_calls"] >= 1  # linking (and pruning) happened before the failure
        assert sum(spent["llm_calls_categories"].values()) == spent["llm_calls"]
    eff = summary["efficiency"]["tog"]
    assert eff["total_llm_calls"] == len(tog_calls)  # failed searches' calls are counted
    assert eff["failed_llm_calls"] == sum(e["efficiency"]["llm_calls"] for e in failed)

    qa = root / "results" / "qa"
    tog = json.loads((qa / "responses_tog.json").read_text())
    basic = json.loads((qa / "responses_basic.json").read_text())
    assert all("actual_steps" not in r for r in tog)  # ToG saved no sources: no step
    assert all(r["actual_steps"][0]["name"] == "retrieval" for r in basic)

    from gtog.qa import run_evaluation

    reference = json.loads((qa / "reference.json").read_text())
    scored = run_evaluation(reference, [r for r in tog if r.get("status") != "error"])
    assert all("retrieval_context_recall" not in s for s in scored)  # not a 0.0


WEIRD = "Ilse\u2028Dunmore\u2029 gave it\x85 🙂 שלום عالم"


def test_answers_with_any_text_survive_the_checkpoint(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    llm_server.rules.insert(
        len(judge_rules()),
        Rule("weird:answer", lambda r: "---Role---" in r.system, lambda r: WEIRD),
    )
    root = make_eval_root(tmp_path, {"lighthouse": example_indexes["lighthouse"]})
    assert (
        gtog("eval", "--root", str(root), "-k", "lighthouse", "--limit", "1", "-q").returncode == 0
    )
    resumed = gtog(
        "eval", "--root", str(root), "-k", "lighthouse", "--limit", "2", "--resume", "-q"
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "2 to run, 2 already done" in resumed.stderr
    detailed, _ = load_results(root)
    assert {m["response"] for q in detailed["results"] for m in q["methods"].values()} == {WEIRD}


def test_resume_refuses_what_changed_and_names_it(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    project = copy_project(example_indexes["lighthouse"], tmp_path / "lighthouse")
    root = make_eval_root(tmp_path, {"lighthouse": project}, methods=("local",))
    config = root / "eval_config.yaml"
    base = config.read_text()
    assert (
        gtog("eval", "--root", str(root), "-k", "lighthouse", "--limit", "1", "-q").returncode == 0
    )

    def refused(needle: str) -> None:
        result = gtog(
            "eval", "--root", str(root), "-k", "lighthouse", "--limit", "1", "--resume", "-q"
        )
        assert result.returncode == 2, result.stderr
        assert needle in result.stderr and "--force" in result.stderr, result.stderr

    config.write_text(base + "response_type: Two words\n")
    refused("the local settings for 'lighthouse' changed (response_type")
    config.write_text(base + "judge:\n  max_tokens: 50\n")
    refused("judge.max_tokens changed (300 -> 50)")
    config.write_text(base)
    entities = project / "output" / "entities.parquet"
    table = pd.read_parquet(entities)
    table.loc[0, "description"] = "changed"
    table.to_parquet(entities)
    refused("the index 'lighthouse' changed")
    forced = gtog(
        "eval", "--root", str(root), "-k", "lighthouse", "--limit", "1", "--resume", "--force", "-q"
    )
    assert forced.returncode == 0, forced.stderr


def test_one_output_folder_one_run(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    hang = Rule(
        "hang:lh-03",
        lambda r: "---Role---" in r.system and "brass compass" in r.last_user,
        lambda r: Hang(60),
    )
    llm_server.rules.insert(0, hang)
    root = make_eval_root(tmp_path, {"lighthouse": example_indexes["lighthouse"]})
    checkpoint = root / "results" / "eval_checkpoint.jsonl"
    cmd = ["eval", "--root", str(root), "-k", "lighthouse"]
    first = start_gtog(*cmd, "--limit", "3", "-j", "1")  # a forked process
    try:
        deadline = time.time() + 120
        while time.time() < deadline and not (
            checkpoint.exists() and checkpoint.read_text().count("\n") >= 3
        ):
            time.sleep(0.05)
        assert first.poll() is None  # still running: lh-03's search hangs
        second = gtog(*cmd, "--limit", "3", "--resume", "-q")
        assert second.returncode == 2, second.stderr
        assert "another gtog eval is running" in second.stderr
        assert f"pid {first.pid}" in second.stderr
        assert len(second.stderr.strip().splitlines()) == 1
    finally:
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
    llm_server.rules.remove(hang)
    third = gtog(*cmd, "--limit", "3", "--resume", "-q")
    assert third.returncode == 0, third.stderr  # the killed run's lock is taken over


def test_a_refused_key_stops_the_run_in_one_line_and_never_shows_the_key(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    refuse = Rule(
        "fail:401",
        lambda r: True,
        lambda r: Fail(401, "Incorrect API key provided: {api_key}. Find your key at ..."),
    )
    llm_server.rules.insert(0, refuse)
    root = make_eval_root(tmp_path, example_indexes)
    result = gtog("eval", "--root", str(root), "--limit", "4", "-j", "2")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "default_completion_model" in output and "401" in output and "api_key" in output
    assert len(output.strip().splitlines()) <= 12, output
    assert len(llm_server.chat_log()) <= 6  # stopped within a few calls
    out = root / "results"
    for path in [*out.rglob("*.json*"), out / "eval.log"]:
        assert TEST_API_KEY not in path.read_text(), path
    assert TEST_API_KEY not in output
    assert (
        TEST_API_KEY[:12] not in output and TEST_API_KEY[:12] not in (out / "eval.log").read_text()
    )

    llm_server.rules.remove(refuse)  # the key is fixed
    resumed = gtog("eval", "--root", str(root), "--limit", "4", "--resume", "-q")
    assert resumed.returncode == 0, resumed.stderr
    _, summary = load_results(root)
    assert summary["by_method"]["local"]["n"] == 8 and summary["by_method"]["basic"]["n"] == 8


def test_the_error_budget_stops_the_run(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    llm_server.rules[:0] = [
        Rule(
            "fail:basic",
            lambda r: "---Role---" in r.system and "-----Entities-----" not in r.system,
            lambda r: Fail(400, "scripted bad request"),
        )
    ]
    root = make_eval_root(tmp_path, {"lighthouse": example_indexes["lighthouse"]})
    result = gtog(
        "eval",
        "--root",
        str(root),
        "-k",
        "lighthouse",
        "--limit",
        "4",
        "-j",
        "1",
        "--max-errors",
        "1",
        "-q",
    )
    assert result.returncode == 1, result.stderr
    assert "error budget spent: 2 searches failed (--max-errors allows 1)" in result.stderr
    detailed, _ = load_results(root)  # results are still written
    # one call at a time, two pairs going, in dataset order: q1 local and basic (failed),
    # then q2 local and basic (failed: the budget is spent); q2 local lands if it finished
    # first, and a pair of q3 it let start is abandoned with the run: never in the results
    assert [q["question_id"] for q in detailed["results"]] == ["lh-01", "lh-02"]
    landed = checkpoint_keys(root / "results" / "eval_checkpoint.jsonl")
    assert len(landed) == len(set(landed))
    assert {("lh-01", "local"), ("lh-01", "basic"), ("lh-02", "basic")} <= set(landed)
    assert set(landed) <= {
        ("lh-01", "local"),
        ("lh-01", "basic"),
        ("lh-02", "local"),
        ("lh-02", "basic"),
    }


def test_hung_calls_end_and_retry_errors_reruns_only_what_failed(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    hangs = [
        Rule(
            "hang:judge",
            lambda r: (
                "judge if the prediction is correct" in r.prompt and "Varn Island" in r.prompt
            ),
            lambda r: Hang(30),
        ),
        Rule(
            "hang:search",
            lambda r: "-----Entities-----" in r.system and "brass compass" in r.last_user,
            lambda r: Hang(30),
        ),
    ]
    llm_server.rules[:0] = hangs
    root = make_eval_root(
        tmp_path,
        {"lighthouse": example_indexes["lighthouse"]},
        extra="timeouts:\n  search: 6\n  judge: 4\n",
    )
    result = gtog("eval", "--root", str(root), "-k", "lighthouse", "--limit", "3", "-q")
    assert result.returncode == 0, result.stderr
    detailed, _ = load_results(root)
    errors = {
        (q["question_id"], m): (e.get("error"), (e.get("judge_errors") or {}).get("correctness"))
        for q in detailed["results"]
        for m, e in q["methods"].items()
    }
    timed_out_search = [k for k, (err, _) in errors.items() if err == "timed out after 6 s"]
    timed_out_judge = [k for k, (_, j) in errors.items() if j == "timed out after 4 s"]
    assert timed_out_search and timed_out_judge, errors

    for rule in hangs:
        llm_server.rules.remove(rule)
    llm_server.clear_log()
    retried = gtog(
        "eval",
        "--root",
        str(root),
        "-k",
        "lighthouse",
        "--limit",
        "3",
        "--resume",
        "--retry-errors",
        "-q",
    )
    assert retried.returncode == 0, retried.stderr
    searched = [e for e in llm_server.chat_log() if e.rule == "search:answer"]
    assert len(searched) == len(timed_out_search)  # only the failed search runs again
    detailed, _ = load_results(root)
    for q in detailed["results"]:
        for entry in q["methods"].values():
            assert entry.get("error") is None and entry["scores"]["correctness"] is not None


def _models_with(project: Path, dst: Path, **settings: object) -> Path:
    """A copy whose completion and embedding models all get `settings`."""
    data = yaml.safe_load((project / "settings.yaml").read_text())
    for group in ("completion_models", "embedding_models"):
        for model in data[group].values():
            model.update(settings)
    return copy_project(
        project,
        dst,
        completion_models=data["completion_models"],
        embedding_models=data["embedding_models"],
    )


def _faults_change_no_score(
    server: ScriptedServer, projects: dict[str, Path], tmp_path: Path, faults: Faults
) -> None:
    """A run with `faults` injected gives every answer and score of a run without."""
    (tmp_path / "clean").mkdir()
    (tmp_path / "faulty").mkdir()
    clean = make_eval_root(tmp_path / "clean", projects)
    assert gtog("eval", "--root", str(clean), "--limit", "3", "-q").returncode == 0
    server.faults = faults
    faulty = make_eval_root(tmp_path / "faulty", projects)
    result = gtog("eval", "--root", str(faulty), "--limit", "3", "-q", timeout=600)
    assert result.returncode == 0, result.stderr
    (a, _), (b, _) = load_results(clean), load_results(faulty)
    scores = lambda d: {  # noqa: E731
        (q["question_id"], m): (e["response"], e["scores"], e.get("error"))
        for q in d["results"]
        for m, e in q["methods"].items()
    }
    assert scores(b) == scores(a)
    assert all(err is None for _, _, err in scores(b).values())


def test_random_faults_change_no_score(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    """With graphrag's default retry settings (`gtog init`'s)."""
    retry = {"type": "exponential_backoff"}
    projects = {k: _models_with(p, tmp_path / k, retry=retry) for k, p in example_indexes.items()}
    _faults_change_no_score(
        llm_server, projects, tmp_path, Faults(rate=0.2, statuses=(429, 500), seed=7)
    )
    assert len(llm_server.injected) >= 10, llm_server.injected


def test_an_overloaded_provider_loses_no_score(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    """503s, 502s, 504s and dropped connections on a share of calls (searches, judges,
    embeddings) ride through graphrag_llm's retry (here at once, up to 8 times, with the
    OpenAI SDK's own retries off: every retry is graphrag_llm's)."""
    projects = {
        k: _models_with(
            p,
            tmp_path / k,
            retry={"type": "immediate", "max_retries": 8},
            call_args={"max_retries": 0},
        )
        for k, p in example_indexes.items()
    }
    faults = Faults(rate=0.15, statuses=(503, 503, 502, 504, DROP), seed=11)
    _faults_change_no_score(llm_server, projects, tmp_path, faults)
    assert {s for _, s in llm_server.injected} == {503, 502, 504, DROP}, llm_server.injected


def test_twenty_kills_and_resumes_land_every_pair_once(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    """... and pay again only for the calls in flight at a kill: the finished calls of a
    killed pair are in the model-call cache, and no run sends a request twice
    (benchmarks/kill_waste.py: with the cache, this run paid 1.31x an uninterrupted run's
    requests, 1.08x of them in flight at the kills, the rest replies written in the last
    ms before a kill and not yet stored; the five-method study, killed mid-reply, 1.096x,
    all of it in flight)."""
    import time

    (tmp_path / "whole").mkdir()
    whole = make_eval_root(tmp_path / "whole", example_indexes)
    llm_server.delay = 0.05
    done = gtog("eval", "--root", str(whole), "-j", "2", "-q")
    assert done.returncode == 0, done.stderr
    uninterrupted = len(llm_server.log)
    assert len({e.identity for e in llm_server.log}) == uninterrupted  # each sent once
    llm_server.clear_log()

    root = make_eval_root(tmp_path, example_indexes)
    checkpoint = root / "results" / "eval_checkpoint.jsonl"
    base = ["eval", "--root", str(root), "-j", "2", "-q"]

    def landed() -> int:
        return len(set(checkpoint_keys(checkpoint))) if checkpoint.exists() else 0

    # Kill points the test controls, whatever the machine's speed: in even rounds once
    # the run has sent a new model request (mid-reply: nothing more lands), in odd rounds
    # once one more record has landed.
    kills = 0
    started: list[float] = []  # when each process was started
    killed: set[int] = set()  # the rounds whose process was killed
    for round_ in range(40):
        if landed() == 20 or kills == 20:
            break
        before, requests = landed(), len(llm_server.chat_log())
        cmd = base + (["--resume"] if checkpoint.exists() else [])
        started.append(time.time())
        proc = start_gtog(*cmd)  # a forked process, SIGKILLed like any other
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if round_ % 2 == 0 and len(llm_server.chat_log()) > requests:
                break
            if round_ % 2 == 1 and landed() > before:
                break
            time.sleep(0.005)
        if proc.poll() is None:
            proc.kill()
            kills += 1
            killed.add(round_)
        proc.wait(timeout=30)
    assert kills >= 10, kills
    started.append(time.time())
    final = gtog(*base, "--resume")
    assert final.returncode == 0, final.stderr
    keys = checkpoint_keys(checkpoint)
    assert len(keys) == len(set(keys)) == 20  # every (question, method) exactly once
    detailed, _ = load_results(root)
    assert sum(len(q["methods"]) for q in detailed["results"]) == 20
    time.sleep(4 * llm_server.delay)  # the replies a killed run left open are logged
    paid = len(llm_server.log)  # every request of every round, the killed ones' included
    repeated = paid - len({e.identity for e in llm_server.log})
    # a kill loses what is in flight: one request by construction in the even rounds, the
    # other pair's in the odd ones (measured: 20 for 20 kills; without the cache, 118)
    assert repeated <= 2 * kills, (paid, repeated, uninterrupted, kills)

    # a request is sent again only by a later process, after the one that sent it was
    # killed: never twice by one process, never after a process that ended by itself
    def process(entry: LogEntry) -> int:
        return sum(1 for t in started if t <= entry.start) - 1

    last: dict[str, int] = {}
    for entry in sorted(llm_server.log, key=lambda e: e.start):
        sent = process(entry)
        if entry.identity in last:
            before = last[entry.identity]
            assert before < sent and before in killed, (entry.rule, before, sent, killed)
        last[entry.identity] = sent


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("an answer that cannot be turned into text")


def test_one_unexpected_exception_is_that_items_error(
    llm_server: ScriptedServer,
    example_indexes: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A method added through the public registry whose engine misbehaves on one question."""
    from graphrag.query.structured_search.base import SearchResult

    from gtog.eval import EvalOptions, run_evaluation
    from gtog.search import METHODS

    class OddEngine:
        async def search(self, query: str) -> SearchResult:
            response = _Unprintable() if "brass compass" in query else "Maren Holt"
            return SearchResult(response, {}, "context", 0.0, 0, 0, 0)  # type: ignore[arg-type]

    async def build_odd(project, options):
        return OddEngine()

    monkeypatch.setitem(METHODS, "odd", build_odd)
    root = make_eval_root(
        tmp_path,
        {"lighthouse": example_indexes["lighthouse"]},
        methods=("odd",),
        extra="metrics: [token_recall]\n",
    )
    run = run_evaluation(EvalOptions(root=root, index_keys=["lighthouse"], limit=3))
    by_id = {r.qid: r for r in run.done}
    assert by_id["lh-03"].error is not None and by_id["lh-03"].error.startswith("internal error")
    assert by_id["lh-03"].error_kind == "internal"
    assert by_id["lh-01"].error is None and by_id["lh-01"].judgements["token_recall"].score == 1.0
    detailed, summary = load_results(root)  # the results are still written
    assert len(detailed["results"]) == 3 and summary["by_method"]["odd"]["search_errors"] == 1
