"""A cost nobody stated is unknown, with the count of those who stated it, never 0: in the
summary, the terminal table, the CSV and the report (issue 31 item 6)."""

from __future__ import annotations

from rich.console import Console

from gtog.eval.report._html import render_page
from gtog.eval.report._page import page_data
from gtog.eval.results._flat import flat_frame
from gtog.eval.results._records import Efficiency, MethodRecord
from gtog.eval.results._summary import summarize
from gtog.eval.results._table import summary_table
from gtog.eval.results._views import detailed_results
from gtog.eval.scoring import Judgement

METHODS = ["local", "mine"]
METRICS = ["correctness"]


def _record(qid: str, method: str, eff: Efficiency | None) -> MethodRecord:
    r = MethodRecord(
        qid=qid, index_key="a", question=f"Q{qid}", reference="R", method=method, response="A"
    )
    r.efficiency = eff
    r.judgements["correctness"] = Judgement(score=1, reason="ok")
    return r


def _costed(calls: int, usd: float) -> Efficiency:
    return Efficiency(
        latency=1.0, llm_calls=calls, prompt_tokens=100, output_tokens=10, cost_usd=usd
    )


# an answers file: one line states its cost, two state none
RECORDS = [
    *(_record(q, "local", _costed(2, 0.01)) for q in ("1", "2", "3")),
    _record("1", "mine", _costed(5, 0.02)),
    _record("2", "mine", None),
    _record("3", "mine", None),
]


def test_the_summary_says_unknown_with_the_count_never_a_partial_sum() -> None:
    s = summarize(RECORDS, METHODS, METRICS)
    mine, local = s["efficiency"]["mine"], s["efficiency"]["local"]
    for key in ("total_llm_calls", "total_prompt_tokens", "usd_total", "avg_llm_calls"):
        assert mine[key] is None, key  # not 5, not 0.02: two lines did not say
    assert mine["p50_latency"] is None and mine["usd_per_answer"] is None
    assert mine["stated"]["llm_calls"] == 1 and mine["stated"]["cost_usd"] == 1
    assert mine["searches"] == 3 and mine["n"] == 3
    assert (
        s["cost"]["by_method"]["mine"]["search_usd"] is None
        and s["cost"]["by_method"]["mine"]["total_usd"] is None
    )
    # gtog's own searches know every figure
    assert local["total_llm_calls"] == 6 and local["stated"]["llm_calls"] == 3
    assert local["usd_total"] == 0.03


def test_the_table_the_csv_and_the_report_show_unknown_not_zero() -> None:
    summary = summarize(RECORDS, METHODS, METRICS)
    console = Console(width=100, record=True, color_system=None)
    console.print(summary_table(summary, METRICS))
    text = console.export_text()
    assert (
        "mine: latency, LLM calls, prompt tokens, output tokens, cost stated by 1 of 3 "
        "searches: unknown (-), not 0" in " ".join(text.split())
    ), text
    costs = text.split("cost per answer")[1].split("why answers fail")[0]
    row = [line for line in costs.splitlines() if line.split()[:1] == ["mine"]][-1]
    assert row.split()[-4:] == ["-", "-", "-", "-"], row  # sec p95, calls, tokens, $/answer
    meta = {"methods": METHODS, "metrics": METRICS, "index_keys": ["a"]}
    detailed = detailed_results(RECORDS, METHODS, meta, keep_intermediate=True)
    frame = flat_frame(detailed, METRICS)
    mine = frame[frame["method"] == "mine"].set_index("question_id")
    assert mine.loc["1", "llm_calls"] == 5
    assert mine.loc[["2", "3"], ["llm_calls", "cost_usd", "latency"]].isna().all().all()
    data = page_data(detailed, {"metadata": meta, **summary})
    point = next(p for p in data.costs if p.method == "mine")
    assert point.llm_calls is None and point.cost_usd is None and point.tokens is None
    assert point.unstated("llm_calls") == "stated by 1 of 3"
    html = render_page(data)
    assert html.count("unknown (stated by 1 of 3)") == 4  # tokens, seconds, calls, USD


def test_a_run_without_metrics_prints_no_empty_scores_table() -> None:
    """Head-to-head judging alone (`metrics: []`): no scores table of n = 0 questions; the
    cost table stays."""
    summary = summarize(RECORDS, METHODS, [])
    console = Console(width=100, record=True, color_system=None)
    console.print(summary_table(summary, []))
    text = console.export_text()
    assert "scores" not in text and "Mean over" not in text, text
    assert "cost per answer" in text
