"""An answer replayed from the model-call cache took the cache's time, not the method's:
it is left out of latency (summary, report, `eval diff`), never shown as the method's speed
(a diff against a replayed run once read `latency 62.8 -> 0.0`)."""

from __future__ import annotations

import pytest
from rich.console import Console

from gtog.eval.results._diff import diff_runs
from gtog.eval.results._diff_view import diff_table
from gtog.eval.results._log import EvalLog
from gtog.eval.results._records import Efficiency, MethodRecord, measured_latency
from gtog.eval.results._spec import DatasetSpec, EvalSpec, JudgeSpec
from gtog.eval.results._summary import summarize
from gtog.eval.scoring import Judgement
from gtog.llm._usage import ChatReply, UsageTally


def rec(qid: str, latency: float | None, cached: int = 0, embeddings: int = 1) -> MethodRecord:
    r = MethodRecord(qid=qid, index_key="k", question=f"Q{qid}?", reference="R", method="basic")
    r.response = "A"
    r.efficiency = Efficiency(
        latency=latency,
        llm_calls=1,
        prompt_tokens=100,
        output_tokens=10,
        cost_usd=0.001,
        embedding_calls=embeddings,
        cached_calls=cached,
    )
    r.judgements["correctness"] = Judgement(score=1)
    return r


def test_a_replayed_chat_call_leaves_the_answer_out_of_latency() -> None:
    records = [
        rec("1", 10.0),
        rec("2", 20.0),
        rec("3", 30.0),
        rec("4", 40.0, cached=1),  # only the query embedding replayed: a real latency
        rec("5", None, cached=2),  # this gtog: the chat call replayed, no latency recorded
        rec("6", 0.01, cached=2),  # an older gtog: the cache's wall time
    ]
    assert [measured_latency(r.efficiency) for r in records] == [10, 20, 30, 40, None, None]
    eff = summarize(records, ["basic"], ["correctness"])["efficiency"]["basic"]
    assert eff["avg_latency"] == pytest.approx(25.0)
    assert eff["p50_latency"] == pytest.approx(25.0)
    assert eff["latency_replayed"] == 2 and eff["stated"]["latency"] == 4
    assert eff["avg_llm_calls"] == 1  # the other figures are the first run's: all counted


def test_the_tally_counts_the_replayed_chat_calls_apart_from_embeddings() -> None:
    tally = UsageTally()
    for cached in (True, False):
        tally.add("answer", ChatReply("a", 5, 1, True, 0.0, cached=cached))
    tally.add_embedding(3, 0.0, cached=True)
    assert (tally.cached_calls, tally.cached_llm_calls) == (2, 1)


def test_diff_against_a_replayed_run_shows_no_cache_speed_as_the_methods() -> None:
    spec = EvalSpec(
        dataset=DatasetSpec(path="qa.json", hash="h", questions=2),
        methods=["basic"],
        judge=JudgeSpec(metrics=["correctness"]),
    )
    measured = [rec("1", 62.8), rec("2", 62.8)]
    replayed = [rec("1", 0.0, cached=2), rec("2", 0.0, cached=2)]  # as an older gtog wrote it
    diff = diff_runs(EvalLog(spec=spec, records=measured), EvalLog(spec=spec, records=replayed))
    latency = diff["efficiency"]["basic"]["latency"]
    assert (latency["a"], latency["b"], latency["n"]) == (None, None, 0)
    assert latency["replayed"] == {"a": 0, "b": 2}
    assert diff["efficiency"]["basic"]["llm_calls"]["n"] == 2
    console = Console(width=200, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(diff_table(diff, "A", "B"))
    text = console.export_text()
    row = next(line for line in text.splitlines() if "(n 0)" in line)
    assert row.split() == [
        "basic", "2", "-", "->", "-", "(n", "0)", "1.0", "->", "1.0", "110", "->", "110",
        "0.00100", "->", "0.00100",
    ]  # fmt: skip
    assert "sec leaves out the answers replayed from the model-call cache" in text
    assert "basic: 2 in B" in text
