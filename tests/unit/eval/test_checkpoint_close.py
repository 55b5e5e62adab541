"""The checkpoint writer closing under its lock, and backups that never overwrite each other."""

from __future__ import annotations

import threading
from pathlib import Path

from gtog.eval.results._log import read_checkpoint
from gtog.eval.results._records import MethodRecord
from gtog.eval.results._spec import DatasetSpec, EvalSpec
from gtog.eval.run._checkpoint import Checkpoint
from gtog.eval.run._folder import _backup

SPEC = EvalSpec(dataset=DatasetSpec(path="qa.json", hash="d", questions=1), methods=["local"])


def _record(qid: str) -> MethodRecord:
    return MethodRecord(
        qid=qid, index_key="a", question="q", reference="r", method="local", response="x"
    )


def test_a_record_finishing_after_close_still_lands(tmp_path: Path) -> None:
    path = tmp_path / "eval_checkpoint.jsonl"
    cp = Checkpoint.create(path, SPEC)
    cp.append(_record("1"))
    cp.close()
    late = threading.Thread(target=cp.append, args=(_record("2"),))  # a worker thread's write
    late.start()
    late.join()
    _, records, intact = read_checkpoint(path)
    assert [r.qid for r in records] == ["1", "2"] and intact == path.stat().st_size


def test_close_waits_for_a_write_in_progress(tmp_path: Path) -> None:
    path = tmp_path / "eval_checkpoint.jsonl"
    cp = Checkpoint.create(path, SPEC)
    with cp._lock:  # a write holds the lock: close must wait for it, not cut it
        closer = threading.Thread(target=cp.close)
        closer.start()
        closer.join(0.2)
        assert closer.is_alive()
        cp._handle.write(b'{"partial": ')
    closer.join(5)
    assert not closer.is_alive() and cp._handle.closed


def test_two_backups_in_the_same_second_keep_both(tmp_path: Path) -> None:
    for text in ("first", "second", "third"):
        (tmp_path / "eval_results_summary.json").write_text(text)
        _backup(tmp_path / "eval_results_summary.json")
    kept = sorted(p.read_text() for p in tmp_path.glob("eval_results_summary.json.*.bak"))
    assert kept == ["first", "second", "third"]
