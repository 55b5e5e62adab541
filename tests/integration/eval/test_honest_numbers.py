"""Numbers that cannot lie (issue 21): cut and filtered answers, run status, stale records,
two verdicts in one reply, and every call's spend — through the CLI, scripted server.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.integration.eval.helpers import (
    add_judge_prompts,
    checkpoint_keys,
    load_results,
    make_eval_root,
)
from tests.support.projects import gtog, start_gtog
from tests.support.scripted_server import Cut, Hang, Rule, ScriptedServer

pytestmark = pytest.mark.integration

KEEPER = "Who keeps the lighthouse on Varn Island?"
SHIP = "Which ship did the lighthouse keeper save during the November storm?"
COMPASS = "Who gave Maren Holt the brass compass?"


def _search_reply(question: str, reply: Cut) -> Rule:
    return Rule(
        f"cut:{reply.finish_reason}",
        lambda r: (
            r.last_user.strip() == question
            and ("---Data tables---" in r.system or "---Role---" in r.system)
        ),
        lambda r: reply,
    )


def test_cut_and_filtered_answers_are_errors_and_a_cut_verdict_is_no_verdict(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    llm_server.rules[:0] = [
        _search_reply(KEEPER, Cut("Maren Holt keeps the", "length")),
        _search_reply(SHIP, Cut("", "content_filter")),
        Rule(  # the correctness judge of the third answer stops mid-reply
            "judge:cut",
            lambda r: "judge if the prediction is correct" in r.prompt and "brass" in r.prompt,
            lambda r: Cut('{"score": 1, "reason": "the answer na', "length"),
        ),
    ]
    root = make_eval_root(
        tmp_path, {"lighthouse": example_indexes["lighthouse"]}, methods=("local",)
    )
    result = gtog("eval", "--root", str(root), "-k", "lighthouse", "--limit", "3", "-q")
    assert result.returncode == 0, result.stderr
    detailed, summary = load_results(root)
    entries = {q["question"]: q["methods"]["local"] for q in detailed["results"]}

    cut = entries[KEEPER]
    assert cut["error"] == "answer cut at max_tokens (finish_reason: length)"
    assert cut["error_kind"] == "truncated" and cut["finish_reason"] == "length"
    assert cut["response"] == "Maren Holt keeps the"  # kept to read, never judged
    assert cut["scores"] == {} and cut["efficiency"]["llm_calls"] == 1

    filtered = entries[SHIP]
    assert "content filter" in filtered["error"] and filtered["scores"] == {}

    judged = entries[COMPASS]
    assert judged["scores"]["correctness"] is None  # not the 1 the cut reply began with
    assert "cut at max_tokens" in judged["judge_errors"]["correctness"]
    assert judged["judge_usage"]["correctness"]["llm_calls"] == 2  # asked once more
    assert judged["scores"]["completeness"] == 1

    local = summary["by_method"]["local"]
    assert local["search_errors"] == 2 and local["scored"]["correctness"] == 0
    assert summary["efficiency"]["local"]["truncated"] == 1
    assert "search: truncated" in result.stderr

    # judged as it is when the config says so; the record and the summary still mark it
    with (root / "eval_config.yaml").open("a") as f:
        f.write("truncated_answers: score\n")
    again = gtog(
        "eval", "--root", str(root), "-k", "lighthouse", "--limit", "1", "-o", "scored", "-q"
    )
    assert again.returncode == 0, again.stderr
    scored = json.loads((root / "scored" / "eval_results_detailed.json").read_text())
    entry = scored["results"][0]["methods"]["local"]
    assert "error" not in entry and entry["finish_reason"] == "length"
    assert entry["scores"]["correctness"] is not None
    summary2 = json.loads((root / "scored" / "eval_results_summary.json").read_text())
    assert summary2["efficiency"]["local"]["truncated"] == 1


def test_two_verdicts_in_one_reply_are_unscored(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    llm_server.rules[:0] = [
        Rule(
            "judge:two",
            lambda r: "judge if the prediction is correct" in r.prompt,
            lambda r: (
                '{"score": 1, "reason": "right"}\nOn reflection: {"score": 0, "reason": "no"}'
            ),
        )
    ]
    root = make_eval_root(
        tmp_path, {"lighthouse": example_indexes["lighthouse"]}, methods=("local",)
    )
    result = gtog("eval", "--root", str(root), "-k", "lighthouse", "--limit", "1", "-q")
    assert result.returncode == 0, result.stderr
    detailed, summary = load_results(root)
    entry = detailed["results"][0]["methods"]["local"]
    assert entry["scores"]["correctness"] is None
    assert "2 different replies in one" in entry["judge_errors"]["correctness"]
    assert summary["by_method"]["local"]["judge_errors"]["correctness"] == 1


def test_a_judge_that_times_out_keeps_the_spend_of_its_first_attempt(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    asked: list[int] = []

    def first_echo_then_hang(r: object) -> str | Hang:
        asked.append(1)
        return '{"score": 0 or 1}' if len(asked) == 1 else Hang(30)

    llm_server.rules[:0] = [
        Rule(
            "judge:slow",
            lambda r: "judge if the prediction is correct" in r.prompt,
            first_echo_then_hang,
        )
    ]
    root = make_eval_root(
        tmp_path,
        {"lighthouse": example_indexes["lighthouse"]},
        methods=("local",),
        extra="timeouts: {judge: 3}\n",
    )
    result = gtog("eval", "--root", str(root), "-k", "lighthouse", "--limit", "1", "-q")
    assert result.returncode == 0, result.stderr
    detailed, _ = load_results(root)
    entry = detailed["results"][0]["methods"]["local"]
    assert entry["judge_errors"]["correctness"] == "timed out after 3 s"
    usage = entry["judge_usage"]["correctness"]
    assert usage["llm_calls"] == 1 and usage["prompt_tokens"] > 0  # the echoed attempt


def _interrupt_after(root: Path, records: int, *args: str) -> subprocess.CompletedProcess:
    """Start `gtog eval`, send Ctrl-C (SIGINT) once `records` records are on disk."""
    proc = start_gtog(
        "eval",
        "--root",
        str(root),
        "-k",
        "lighthouse",
        "-j",
        "1",
        "-q",
        "--no-cache",  # a replayed call would finish the run before the Ctrl-C
        *args,
    )  # forked from the test zygote: Python's own SIGINT handler, as in a new process
    checkpoint = root / "results" / "eval_checkpoint.jsonl"
    deadline = time.monotonic() + 120
    while len(checkpoint_keys(checkpoint)) < records and time.monotonic() < deadline:
        assert proc.poll() is None, proc.wait(timeout=5)
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGINT)
    return proc.wait(timeout=60)


def test_ctrl_c_writes_results_that_say_partial_and_never_mix_two_judges(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    llm_server.delay = 0.3  # one question at a time, slowly enough to interrupt
    root = make_eval_root(tmp_path, {"lighthouse": example_indexes["lighthouse"]})
    stopped = _interrupt_after(root, 2, "--limit", "4")
    assert stopped.returncode == 130, stopped.stderr
    _, summary = load_results(root)
    run = summary["metadata"]["run"]
    assert run["status"] == "interrupted" and run["pairs_total"] == 8
    assert 2 <= run["pairs_done"] < 8
    assert f"partial: {run['pairs_done']} of 8 pairs (interrupted)" in stopped.stdout
    resumed = gtog(
        "eval",
        "--root",
        str(root),
        "--no-cache",
        "-k",
        "lighthouse",
        "--limit",
        "4",
        "--resume",
        "-q",
    )
    assert resumed.returncode == 0, resumed.stderr
    _, summary = load_results(root)
    assert summary["metadata"]["run"] == {"status": "complete", "pairs_done": 8, "pairs_total": 8}
    assert "partial" not in resumed.stdout
    keys = checkpoint_keys(root / "results" / "eval_checkpoint.jsonl")
    assert len(keys) == len(set(keys)) == 8, keys  # nothing searched twice

    # a new judge prompt, and a rescore interrupted half-way: the summary keeps the answers
    # the new judge has not seen out of the scores, and says how many
    add_judge_prompts(root)
    stopped = _interrupt_after(root, 8 + 3, "--limit", "4", "--rescore")
    assert stopped.returncode == 130, stopped.stderr
    detailed, summary = load_results(root)
    left_out = summary["metadata"]["left_out"]["other_judge"]
    rejudged = 8 - sum(left_out.values())
    assert 3 <= rejudged < 8
    scored = sum(summary["by_method"][m]["scored"]["completeness"] for m in ("local", "basic"))
    assert scored == rejudged  # only verdicts of the current judge are counted
    stale = [e for q in detailed["results"] for e in q["methods"].values() if e.get("stale")]
    assert len(stale) == 8 - rejudged and all(e["scores"] for e in stale)  # kept, marked
    assert "not judged by the current judge are left out" in stopped.stdout
    # the CSV keeps the old scores too, marked: its current rows give the summary's means
    frame = pd.read_csv(root / "results" / "eval_results.csv")
    assert (~frame["current"]).sum() == 8 - rejudged
    current = frame[frame["current"]]
    for method, group in summary["by_method"].items():
        for metric in summary["metadata"]["metrics"]:
            mean = current.loc[current["method"] == method, metric].mean()
            want = group[metric]
            assert math.isnan(mean) if want is None else mean == pytest.approx(want)


def test_force_after_a_change_reruns_what_changed_and_keeps_the_rest(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = make_eval_root(tmp_path, {"lighthouse": example_indexes["lighthouse"]})
    args = ("eval", "--root", str(root), "--no-cache", "-k", "lighthouse", "--limit", "2", "-q")
    assert gtog(*args).returncode == 0
    before, _ = load_results(root)
    digests = {m: e["searched_with"] for q in before["results"] for m, e in q["methods"].items()}
    assert all(digests.values())
    with (root / "eval_config.yaml").open("a") as f:
        f.write("basic_search: {k: 3}\n")
    refused = gtog(*args, "--resume")
    assert refused.returncode == 2 and "basic settings" in refused.stderr
    llm_server.clear_log()
    forced = gtog(*args, "--resume", "--force")
    assert forced.returncode == 0, forced.stderr
    searched = [e for e in llm_server.chat_log() if e.rule == "search:answer"]
    assert len(searched) == 2  # basic's two answers again; local's kept
    after, summary = load_results(root)
    for q in after["results"]:
        assert q["methods"]["local"]["searched_with"] == digests["local"]
        assert q["methods"]["basic"]["searched_with"] != digests["basic"]
        assert not any(e.get("stale") for e in q["methods"].values())
    assert summary["metadata"]["left_out"] == {"other_settings": {}, "other_judge": {}}


def test_a_mistyped_prompt_path_is_an_error_not_graphrags_default(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    import shutil

    import yaml

    project = tmp_path / "lighthouse"
    shutil.copytree(example_indexes["lighthouse"], project, ignore=shutil.ignore_patterns("cache"))
    settings = yaml.safe_load((project / "settings.yaml").read_text())
    settings.setdefault("local_search", {})["prompt"] = "prompts/local_serch.txt"
    (project / "settings.yaml").write_text(yaml.safe_dump(settings))
    root = make_eval_root(tmp_path, {"lighthouse": project}, methods=("local",))
    result = gtog("eval", "--root", str(root), "-k", "lighthouse", "--limit", "1", "-q")
    assert result.returncode == 2
    assert "local_search.prompt: prompt file" in result.stderr
    assert "local_serch.txt not found" in result.stderr
    assert not llm_server.chat_log()


def test_a_library_run_leaves_the_callers_loop_and_collector_as_it_found_them(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    import asyncio
    import gc
    from concurrent.futures import ThreadPoolExecutor

    from gtog.eval import EvalOptions, prepare, run_evaluation_async

    root = make_eval_root(
        tmp_path, {"lighthouse": example_indexes["lighthouse"]}, methods=("local",)
    )
    mine = ThreadPoolExecutor(max_workers=1, thread_name_prefix="callers")

    async def caller() -> tuple[object, object]:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(mine)
        run = prepare(EvalOptions(root=root, index_keys=["lighthouse"], limit=1))
        try:
            await run_evaluation_async(run)
        finally:
            run.close()
        assert run.status == "complete" and len(run.done) == 1
        used = await loop.run_in_executor(None, lambda: __import__("threading").current_thread())
        return loop._default_executor, used  # type: ignore[attr-defined]

    frozen = gc.get_freeze_count()
    executor, thread = asyncio.run(caller())
    assert executor is mine and thread.name.startswith("callers")
    assert gc.get_freeze_count() == frozen and gc.isenabled()
