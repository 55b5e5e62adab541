"""The typed eval log (spec differences, reading any output back) and the output-folder lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gtog._errors import InputError
from gtog._files import write_json_atomic
from gtog.eval.results._log import read_log
from gtog.eval.results._records import Efficiency, MethodRecord
from gtog.eval.results._spec import DatasetSpec, EvalSpec, JudgeSpec, spec_changes
from gtog.eval.results._views import detailed_results
from gtog.eval.run._checkpoint import Checkpoint
from gtog.eval.run._lock import OutputLock
from gtog.eval.scoring import Judgement

SPEC = EvalSpec(
    dataset=DatasetSpec(path="qa.json", hash="d1", questions=2),
    methods=["tog", "local"],
    method_settings={"tog": {"a": {"tog_search": {"width": 3, "depth": 3}}}},
    indexes={"a": "i1"},
    judge=JudgeSpec(models={"a": "openai/x@T0"}, prompts="p", metrics=["correctness"]),
)


def test_changes_name_the_setting_that_changed() -> None:
    narrower = SPEC.model_copy(deep=True)
    narrower.method_settings["tog"]["a"]["tog_search"]["width"] = 2
    [change] = spec_changes(SPEC, narrower)
    assert "tog settings for 'a'" in change and "tog_search.width: 3 -> 2" in change
    reindexed = SPEC.model_copy(update={"indexes": {"a": "i2"}})
    assert spec_changes(SPEC, reindexed) == ["the index 'a' changed"]
    tokens = SPEC.model_copy(update={"judge": SPEC.judge.model_copy(update={"max_tokens": 50})})
    assert spec_changes(SPEC, tokens) == ["judge.max_tokens changed (300 -> 50)"]
    fewer = SPEC.model_copy(update={"methods": ["local"], "method_settings": {}})
    assert spec_changes(SPEC, fewer) == []  # running a subset of the methods is no change


def test_judge_digest_follows_the_judge_spec() -> None:
    other = SPEC.judge.model_copy(update={"temperature": 0.5})
    assert SPEC.judge.digest("a") != other.digest("a")
    assert SPEC.judge.model_copy(update={"skipped": True}).digest("a") == "skipped"


def _record(qid: str, method: str) -> MethodRecord:
    return MethodRecord(
        qid=qid,
        index_key="a",
        question=f"q{qid}",
        reference="r",
        method=method,
        response="ans",
        judgements={"correctness": Judgement(score=1, reason="ok", llm_calls=1, prompt_tokens=9)},
        judged_with=SPEC.judge.digest("a"),
        searched_with=SPEC.search_digest(method, "a"),
        efficiency=Efficiency(latency=1.5, llm_calls=2, prompt_tokens=30, output_tokens=4),
    )


def test_read_log_reads_checkpoint_detailed_and_folder_back(tmp_path: Path) -> None:
    records = [_record("1", "tog"), _record("1", "local"), _record("2", "local")]
    cp = Checkpoint.create(tmp_path / "eval_checkpoint.jsonl", SPEC)
    for r in records:
        cp.append(r)
    cp.close()
    from_checkpoint = read_log(tmp_path / "eval_checkpoint.jsonl")
    assert from_checkpoint.spec == SPEC and from_checkpoint.records == records

    metadata = {"spec": SPEC.model_dump()}
    detailed = detailed_results(
        records, ["tog", "local"], metadata, keep_intermediate=True, spec=SPEC
    )
    write_json_atomic(tmp_path / "d" / "eval_results_detailed.json", detailed)
    from_detailed = read_log(tmp_path / "d" / "eval_results_detailed.json")
    key = lambda r: r.key  # noqa: E731
    assert sorted(from_detailed.records, key=key) == sorted(records, key=key)
    assert read_log(tmp_path).records == records
    with pytest.raises(InputError, match="no such eval log"):
        read_log(tmp_path / "d" / "missing")


_HOLDER = """
import sys, time
from pathlib import Path
from gtog.eval.run._lock import OutputLock
lock = OutputLock(Path(sys.argv[1])).acquire()
print("held", flush=True)
time.sleep(60)
"""


def test_a_live_lock_refuses_and_a_killed_holders_lock_is_taken_over(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.perf_counter()
        with pytest.raises(InputError, match=rf"another gtog eval is running.*pid {holder.pid}"):
            OutputLock(tmp_path).acquire()
        assert time.perf_counter() - started < 1.0  # refuses at once, never waits
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
    with OutputLock(tmp_path) as lock:  # the dead holder's lock is taken over
        assert f"pid {os.getpid()}" in lock.path.read_text()


def test_a_released_lock_leaves_no_file_and_no_folder_it_made(tmp_path: Path) -> None:
    out = tmp_path / "eval" / "results"
    with OutputLock(out) as lock:
        assert lock.path.is_file()
    assert not (tmp_path / "eval").exists()  # a run refused before any work leaves nothing
    out.mkdir(parents=True)
    with OutputLock(out) as lock:
        (out / "eval_checkpoint.jsonl").write_text("{}\n")
    assert sorted(p.name for p in out.iterdir()) == ["eval_checkpoint.jsonl"]
    with OutputLock(out), pytest.raises(InputError, match="another gtog eval is running"):
        OutputLock(out).acquire()  # one holder at a time, also after a release and re-take
