"""`benchmarks/throughput.py`'s `pair_gaps`: the time between a pair's calls, read from the
scripted server's log (hand-computed on two pairs)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from tests.support.scripted_server import LogEntry

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"


@pytest.fixture(scope="module")
def pair_gaps():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        return importlib.import_module("throughput").pair_gaps
    finally:
        sys.path.remove(str(BENCHMARKS))


def _entry(kind: str, rule: str | None, prompt: str, start: float, end: float) -> LogEntry:
    return LogEntry(kind, rule, prompt, "", 0, 0, False, 200, start=start, end=end, time=end)


def test_gtog_pairs_matched_by_question(pair_gaps) -> None:
    judge = "Given the question...\nQuestion: {q}\nGround Truth: x\nPredicted: y\n"
    log = [
        _entry("embeddings", "embeddings", "Who?", 0.0, 0.1),
        _entry("embeddings", "embeddings", "Where?", 0.0, 0.1),
        _entry("chat", "search:answer", "---Data tables---\nrows\nWho?", 0.13, 0.33),
        _entry("chat", "search:answer", "---Data tables---\nrows\nWhere?", 0.11, 0.31),
        _entry("chat", "judge:correctness", judge.format(q="Who?"), 0.35, 0.55),
        _entry("chat", "judge:correctness", judge.format(q="Where?"), 0.32, 0.52),
    ]
    gaps = pair_gaps(log, 2, 2, 1.0, 0.55)
    assert gaps["pairs_matched"] == 2
    # embedding reply -> answer request: 30 and 10 ms; answer reply -> judge: 20 and 10 ms
    assert gaps["to_answer_ms"] == {"median": 20.0, "mean": 20.0}
    assert gaps["to_judge_ms"] == {"median": 15.0, "mean": 15.0}
    # 2 slots x 0.55 s span - 1.0 s of server time = 0.1 s over 2 pairs
    assert gaps["client_ms_per_pair"] == 50.0


def test_floor_pairs_and_a_question_asked_twice(pair_gaps) -> None:
    log = [
        _entry("embeddings", None, "floor question 1", 0.0, 0.1),
        _entry("chat", None, "floor question 1", 0.104, 0.304),
        _entry("chat", None, "floor judge 1", 0.31, 0.51),
        # asked twice: not one pair, left out
        _entry("embeddings", None, "floor question 2", 0.0, 0.1),
        _entry("embeddings", None, "floor question 2", 0.0, 0.1),
    ]
    gaps = pair_gaps(log, 1, 1, 0.8, 0.51)
    assert gaps["pairs_matched"] == 1
    assert gaps["to_answer_ms"]["median"] == 4.0
    assert gaps["to_judge_ms"]["median"] == 6.0
    assert pair_gaps([], 16, 200, 0.0, 0.0) == {"pairs_matched": 0}
