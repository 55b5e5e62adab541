"""The report's data, page and flat table, built from real records through results.py."""

from __future__ import annotations

import io
import json
import math
import os
from pathlib import Path

import pandas as pd
import pytest

from gtog._errors import InputError
from gtog._files import write_json_atomic
from gtog.eval.report._html import render_page
from gtog.eval.report._page import error_kind, page_data, primary_metric, tog_paths
from gtog.eval.report._publish import load_run, write_report
from gtog.eval.results._errors import error_kinds
from gtog.eval.results._flat import flat_frame
from gtog.eval.results._records import Efficiency, MethodRecord, PairRecord
from gtog.eval.results._spec import (
    CHECKPOINT_NAME,
    DETAILED_NAME,
    SUMMARY_NAME,
    DatasetSpec,
    EvalSpec,
    JudgeSpec,
    PairwiseSpec,
)
from gtog.eval.results._summary import summarize
from gtog.eval.results._views import detailed_results, result_views
from gtog.eval.run._checkpoint import Checkpoint
from gtog.eval.scoring import Judgement
from gtog.eval.scoring._pairwise import PairJudgement

METHODS = ["tog", "local"]
METRICS = ["correctness", "faithfulness", "token_recall"]
XSS = '<script>alert("x")</script><img src=x onerror=alert(1)> Maren'
TOG_CONTEXT = (
    "-----Paths-----\nid|score|path\n"
    "1|0.5|MAREN HOLT -[keeps the lighthouse on]-> VARN ISLAND\n"
    "2|0.25|MAREN HOLT <-[sister of]- TOBIAS HOLT\n\n"
    "-----Entities-----\nid|entity|type|description\n0|MAREN HOLT|PERSON|keeper"
)


def rec(
    qid: str,
    key: str,
    method: str,
    scores: dict[str, float] | None = None,
    *,
    response: str = "An answer",
    error: str | None = None,
    judge_errors: dict[str, str] | None = None,
    eff: tuple[float, int, int, int] = (1.0, 1, 100, 10),
    stages: dict[str, int] | None = None,
    context: str | None = None,
) -> MethodRecord:
    r = MethodRecord(
        qid=qid, index_key=key, question=f"Question {qid}?", reference=f"Ref {qid}", method=method
    )
    r.efficiency = Efficiency(
        latency=eff[0],
        llm_calls=eff[1],
        prompt_tokens=eff[2],
        output_tokens=eff[3],
        llm_calls_categories=stages or {"response": eff[1]},
    )
    if error:
        r.error = error
        return r
    r.response = response
    r.context_text = context
    r.sources = [{"id": "7", "text": "unit seven"}]
    for m, s in (scores or {}).items():
        r.judgements[m] = Judgement(score=s, reason=f"reason {m} {qid}")
    for m, e in (judge_errors or {}).items():
        r.judgements[m] = Judgement(error=e)
    return r


TOG_STAGES = {"entity_linking": 1, "reasoning": 2, "answer": 1}
RECORDS = [
    rec(
        "a1", "alpha", "tog", {"correctness": 1, "faithfulness": 1, "token_recall": 1.0},
        eff=(2.0, 4, 400, 40), stages=TOG_STAGES, context=TOG_CONTEXT,
    ),
    rec("a1", "alpha", "local", {"correctness": 1, "faithfulness": 1, "token_recall": 0.5},
        response=XSS, context="<b>ctx</b>"),
    rec("a2", "alpha", "tog", {"correctness": 0, "faithfulness": 1, "token_recall": 0.0},
        eff=(4.0, 6, 600, 60), stages={"entity_linking": 1, "reasoning": 4, "answer": 1}),
    rec("a2", "alpha", "local", {"correctness": 1, "token_recall": 1.0},
        judge_errors={"faithfulness": "unparseable judge reply: no score"}),
    rec("b1", "beta", "tog", error="RateLimitError: slow down"),
    rec("b1", "beta", "local", {"correctness": 1, "faithfulness": 0, "token_recall": 1.0},
        eff=(3.0, 1, 300, 30)),
]  # fmt: skip


def _plain(summary: dict) -> dict:
    """A summary as gtog wrote it before intervals, comparisons, same-question means and
    prices existed."""
    out = {
        k: v
        for k, v in summary.items()
        if not k.startswith(("comparisons", "cost", "question_sets"))
    }
    for groups in [out["by_method"], *out["by_movie"].values()]:
        for g in groups.values():
            for key in [k for k in g if k.startswith(("ci95", "same_questions", "strict"))]:
                del g[key]
    for eff in out["efficiency"].values():
        for key in [k for k in eff if k.startswith("usd")]:
            del eff[key]
    return out


def run_json(records=RECORDS, *, current: bool = False, **extra_meta):
    """Detailed and summary JSON of `records`: as this gtog writes them with `current`,
    else as an older gtog did (see `_plain`)."""
    meta = {"methods": METHODS, "metrics": METRICS, "index_keys": ["alpha", "beta"]}
    meta.update(extra_meta)
    detailed = detailed_results(records, METHODS, meta, keep_intermediate=True)
    summary = summarize(records, METHODS, METRICS)
    summary = {"metadata": meta, **(summary if current else _plain(summary))}
    return detailed, summary


def test_page_data_of_an_older_summary_shows_own_answer_means_and_counts() -> None:
    detailed, summary = run_json()
    data = page_data(detailed, summary)
    assert data.primary == "correctness" and not data.has_intervals and data.comparisons == []
    assert not data.same_questions and data.common == {}  # no same-question means: fall back
    score = {(s.method, s.metric): s for s in data.scores}
    assert all(s.same is None and s.headline is s.own for s in data.scores)
    assert score["local", "correctness"].own.value == pytest.approx(1.0)
    local_faithful = score["local", "faithfulness"]
    assert local_faithful.own.value == pytest.approx(0.5)  # the judge error is not a 0
    assert (local_faithful.own.n, local_faithful.errors) == (2, 1)
    assert score["tog", "correctness"].own.value == pytest.approx(0.5)
    assert score["tog", "correctness"].own.n == 2 and score["tog", "correctness"].answers == 3
    assert all(s.own.ci95 is None for s in data.scores)

    h = data.header
    assert (h.answers, h.search_failed, h.judge_failed, h.unscored_judgements) == (6, 1, 1, 1)
    assert h.fully_scored == 4 and not h.partial
    assert h.indexes == ["alpha", "beta"] and h.methods == METHODS

    heat = {(c.index_key, c.method): c for c in data.heat}
    assert heat["alpha", "tog"].mean == pytest.approx(0.5)
    assert heat["beta", "tog"].mean is None and heat["beta", "tog"].n == 1  # unscored, not 0
    assert heat["beta", "local"].mean == pytest.approx(1.0)

    cost = {p.method: p for p in data.costs}
    assert cost["tog"].tokens == pytest.approx((440 + 660) / 2)  # successful searches only
    assert cost["tog"].latency == pytest.approx(3.0)
    assert cost["tog"].quality == pytest.approx(0.5) and cost["tog"].cost_usd is None
    assert data.stage_calls["tog"] == {"entity_linking": 1.0, "reasoning": 3.0, "answer": 1.0}
    assert data.stage_calls["local"] == {"response": 1.0}
    latency = {s.method: s for s in data.latency}
    assert latency["tog"].values == [2.0, 4.0] and latency["tog"].p50 == pytest.approx(3.0)

    kinds = {(e.method, e.where, e.kind): e.count for e in data.errors}
    assert kinds == {
        ("tog", "search", "RateLimitError"): 1,
        ("local", "judge: faithfulness", "unparseable reply"): 1,
    }


def test_failures_by_kind_read_the_recorded_kind_with_the_summarys_classifier() -> None:
    """One classifier: timeouts of different lengths are one kind, and a kind the run
    recorded (not visible in the message) is the one the report counts."""
    slow = [
        rec(q, "alpha", "tog", error=f"timed out after {s} s")
        for q, s in (("t1", 600), ("t2", 180))
    ]
    odd = rec("t3", "alpha", "local", error="the connection dropped")
    odd.error_kind = "APIConnectionError"
    records = [*slow, odd]
    detailed, summary = run_json(records, current=True)
    kinds = {(e.method, e.where, e.kind): e.count for e in page_data(detailed, summary).errors}
    assert kinds == {("tog", "search", "timeout"): 2, ("local", "search", "APIConnectionError"): 1}
    recorded = {e["kind"]: e["count"] for e in error_kinds(records)}
    assert recorded == {"search: timeout": 2, "search: APIConnectionError": 1}


def test_headline_means_are_the_summarys_same_question_means() -> None:
    """One rule everywhere: bars, table, heat map and quality axis use the same questions."""
    detailed, summary = run_json(current=True)
    data = page_data(detailed, summary)
    assert data.same_questions and data.has_intervals
    # b1: tog's search failed, a2: local's faithfulness judge failed
    assert data.common == {"correctness": 2, "faithfulness": 1, "token_recall": 2}
    for s in data.scores:
        same = summary["by_method"][s.method]["same_questions"]
        assert s.headline is s.same and s.same.value == same[s.metric]  # what the terminal shows
        assert s.same.n == same["scored"][s.metric] == data.common[s.metric]
        ci = same["ci95"][s.metric]  # local's token_recall: 2 fractional scores, too few
        assert s.same.ci95 == (tuple(ci) if ci is not None else None)
        assert (ci is None) == ((s.method, s.metric) == ("local", "token_recall"))
    score = {(s.method, s.metric): s for s in data.scores}
    recall = score["local", "token_recall"]
    assert (recall.same.value, recall.own.value) == (pytest.approx(0.75), pytest.approx(2.5 / 3))
    assert (recall.same.n, recall.own.n, recall.answers) == (2, 3, 3)
    faithful = score["local", "faithfulness"]
    assert (faithful.same.value, faithful.own.value) == (1.0, 0.5)  # own: 1 of 2 scored

    heat = {(c.index_key, c.method): c for c in data.heat}
    assert (heat["alpha", "tog"].mean, heat["alpha", "tog"].scored) == (0.5, 2)
    assert (heat["alpha", "local"].mean, heat["alpha", "local"].scored) == (1.0, 2)
    # beta: tog failed its only question, so no question there has every method's score
    assert heat["beta", "local"].mean is None and heat["beta", "local"].scored == 0
    assert heat["beta", "local"].n == 1

    cost = {p.method: p for p in data.costs}
    tog_same = summary["by_method"]["tog"]["same_questions"]
    assert cost["tog"].quality == tog_same["correctness"] == 0.5
    assert cost["tog"].quality_ci95 == tuple(tog_same["ci95"]["correctness"])
    assert (cost["tog"].quality_n, cost["tog"].n) == (2, 2)


def test_run_status_is_read_tolerantly() -> None:
    detailed, summary = run_json(current=True)
    assert page_data(detailed, summary).header.run is None  # older summaries: no status
    summary["metadata"]["run"] = {"status": "interrupted", "pairs_done": 4, "pairs_total": 6}
    run = page_data(detailed, summary).header.run
    assert run is not None and (run.status, run.pairs_done, run.pairs_total) == (
        "interrupted",
        4,
        6,
    )
    assert not run.complete
    summary["metadata"]["run"] = {"status": "complete", "pairs_done": 6, "pairs_total": 6}
    assert page_data(detailed, summary).header.run.complete
    for junk in ("interrupted", {"status": 3}, {"pairs_done": 1}, None):
        summary["metadata"]["run"] = junk
        assert page_data(detailed, summary).header.run is None
    summary["metadata"]["run"] = {"status": "stopped: budget", "pairs_done": "x"}
    run = page_data(detailed, summary).header.run
    assert (run.status, run.pairs_done, run.pairs_total) == ("stopped: budget", None, None)


def test_question_flags_paths_and_answers() -> None:
    data = page_data(*run_json())
    q = {x.qid: x for x in data.questions}
    assert [x.qid for x in data.questions] == ["a1", "a2", "b1"]
    assert (q["a1"].disagree, q["a1"].failed, q["a1"].wrong) == (False, False, False)
    assert (q["a2"].disagree, q["a2"].failed, q["a2"].wrong) == (True, True, True)
    assert (q["b1"].disagree, q["b1"].failed, q["b1"].wrong) == (False, True, False)
    tog = q["a1"].answers[0]
    assert tog.method == "tog" and tog.paths == [
        "0.5  MAREN HOLT -[keeps the lighthouse on]-> VARN ISLAND",
        "0.25  MAREN HOLT <-[sister of]- TOBIAS HOLT",
    ]
    local = q["a1"].answers[1]
    assert local.response == XSS and local.source_ids == ["7"] and local.paths == []
    assert local.reasons["correctness"] == "reason correctness a1"
    assert q["a2"].answers[1].scores["faithfulness"] is None
    assert q["b1"].answers[0].error == "RateLimitError: slow down"


def test_page_data_reads_intervals_comparisons_and_costs_when_present() -> None:
    detailed, summary = run_json()
    summary["by_method"]["tog"]["ci95"] = {"correctness": [0.1, 0.9], "faithfulness": "bad"}
    summary["comparisons"] = [
        {"metric": "correctness", "a": "tog", "b": "local", "n": 2, "a_mean": 0.5,
         "b_mean": 1.0, "diff": -0.5, "ci95": [-1.0, 0.0], "p_value": 0.01, "p_holm": 0.03,
         "test": "exact McNemar"},
        {"metric": "faithfulness", "a": "tog", "b": "local", "p_value": 0.01, "p_holm": 0.2},
        {"metric": "correctness", "a": "tog"},  # incomplete: skipped
        "junk",
    ]  # fmt: skip
    for q in detailed["results"]:
        for entry in q["methods"].values():
            if entry["efficiency"]:
                entry["efficiency"]["cost_usd"] = 0.002
    data = page_data(detailed, summary)
    assert data.has_intervals
    score = {(s.method, s.metric): s for s in data.scores}
    assert score["tog", "correctness"].headline.ci95 == (0.1, 0.9)
    assert score["tog", "faithfulness"].headline.ci95 is None  # malformed: ignored, no crash
    assert [(c.metric, c.significant) for c in data.comparisons] == [
        ("correctness", True),
        ("faithfulness", False),  # p 0.01 but Holm-adjusted 0.2
    ]
    assert data.comparisons[0].test == "exact McNemar" and data.comparisons[0].ci95 == (-1, 0)
    cost = {p.method: p for p in data.costs}
    assert cost["local"].cost_usd == pytest.approx(0.002)
    assert cost["tog"].quality_ci95 == (0.1, 0.9)

    html = render_page(data)
    assert "[0.10, 0.90]" in html and "exact McNemar" in html and "significant" in html
    assert "USD unknown" not in html


def test_page_data_tolerates_a_bare_detailed_file() -> None:
    detailed = {
        "results": [
            {"question_id": "q", "imdb_key": "k", "question": "Q", "ground_truth": "G",
             "evidence": "the gold passage",
             "methods": {"basic": {"response": "A", "scores": {"token_recall": 0.4}}}},
        ]
    }  # fmt: skip
    data = page_data(detailed, {})
    assert data.header.methods == ["basic"] and data.primary == "token_recall"
    assert data.questions[0].wrong and data.questions[0].gold_evidence == "the gold passage"
    assert data.heat[0].mean == pytest.approx(0.4)
    assert "the gold passage" in render_page(data)


def test_helpers() -> None:
    assert primary_metric(["faithfulness", "correctness"]) == "correctness"
    assert primary_metric(["token_recall"]) == "token_recall"
    assert error_kind("APIConnectionError: refused") == "APIConnectionError"
    assert error_kind("litellm.RateLimitError: slow") == "RateLimitError"
    assert error_kind("could not build the tog engine: KeyError: 'x'") == "engine build: KeyError"
    assert error_kind("unparseable judge reply: no score") == "unparseable reply"
    assert error_kind("the reference has no content words") == "the reference has no content words"
    assert tog_paths(None) == [] and tog_paths("-----Entities-----\nid|x") == []


def test_flat_frame_one_row_per_answer_missing_is_missing() -> None:
    detailed, _ = run_json()
    frame = flat_frame(detailed)
    assert list(frame.columns) == [
        "index_key", "question_id", "method", *METRICS,
        "latency", "llm_calls", "prompt_tokens", "output_tokens", "cost_usd", "route", "error",
        "current",
    ]  # fmt: skip
    assert len(frame) == 6
    row = frame.set_index(["question_id", "method"])
    assert math.isnan(row.loc[("a2", "local"), "faithfulness"])  # judge error: empty, not 0
    assert (
        row.loc[("a2", "local"), "error"] == "judge faithfulness: unparseable judge reply: no score"
    )
    assert row.loc[("b1", "tog"), "error"] == "RateLimitError: slow down"
    assert math.isnan(row.loc[("b1", "tog"), "correctness"])
    assert (
        row.loc[("a1", "tog"), "llm_calls"] == 4 and row.loc[("a1", "local"), "token_recall"] == 0.5
    )

    back = pd.read_csv(io.StringIO(frame.to_csv(index=False)))
    assert list(back.columns) == list(frame.columns) and len(back) == 6
    assert back["cost_usd"].isna().all()
    assert pd.isna(back.loc[0, "error"])


def test_the_csv_marks_out_of_date_rows_and_its_current_mean_is_the_summarys() -> None:
    """The review's reproduction: one current answer scored 1, one judged by an earlier
    judge and one searched with earlier settings, both scored 0. The summary's mean is 1.0;
    a pandas mean over the CSV's current rows must be too (over every row it is 0.33)."""
    spec = EvalSpec(
        dataset=DatasetSpec(path="qa.json", hash="d", questions=3),
        methods=["local", "basic"],
        method_settings={m: {"alpha": {"k": 1}} for m in ("local", "basic")},
        indexes={"alpha": "h"},
        judge=JudgeSpec(models={"alpha": "m@T0"}, prompts="p", metrics=["correctness"]),
        pairwise=PairwiseSpec(criteria={"relevance": "r"}, pairs=[("local", "basic")]),
    )
    now, judge = spec.search_digest("local", "alpha"), spec.judge.digest("alpha")
    made = [("q1", now, judge, 1), ("q2", now, "an earlier judge", 0), ("q3", "earlier", judge, 0)]
    records = []
    for qid, searched, judged, score in made:
        for method in ("local", "basic"):
            r = rec(qid, "alpha", method, {"correctness": score}, response=f"{method} {qid}")
            r.searched_with = spec.search_digest(method, "alpha") if searched == now else searched
            r.judged_with = judged
            records.append(r)
    pair = PairRecord(
        qid="q1", index_key="alpha", criterion="relevance", a="local", b="basic",
        judgement=PairJudgement(winner="a", orders_agree=True),
        judged_with=spec.pairwise_digest("alpha"), answers="answers searched before",
    )  # fmt: skip
    detailed, summary = result_views(spec, records, ["local", "basic"], pairs=[pair])
    frame = flat_frame(detailed)
    assert list(frame.columns[-2:]) == ["error", "current"]
    assert frame["correctness"].mean() == pytest.approx(1 / 3)  # every row: old scores mixed in
    current = frame[frame["current"]]
    assert list(current["question_id"]) == ["q1", "q1"]
    for method in ("local", "basic"):
        mean = current.loc[current["method"] == method, "correctness"].mean()
        assert mean == summary["by_method"][method]["correctness"] == 1.0
    back = pd.read_csv(io.StringIO(frame.to_csv(index=False)))
    assert back["current"].dtype == bool and back["current"].sum() == 2

    # the report's question list marks the same answers, and they flag nothing
    data = page_data(detailed, summary)
    q = {x.qid: x for x in data.questions}
    assert [a.stale for a in q["q1"].answers] == [None, None]
    assert "not judged by the current judge" in (q["q2"].answers[0].stale or "")
    assert "earlier settings" in (q["q3"].answers[0].stale or "")
    assert not q["q2"].wrong and not q["q3"].wrong  # out-of-date 0s are not wrong answers
    [verdict] = q["q1"].pairs[0].verdicts
    assert verdict.stale == "made on answers searched again since: left out of the win rates"
    assert summary["pairwise"][0]["n"] == 0
    html = render_page(data)
    assert html.count("out of date</span>") == 4 and "Out of date, not in the summary" in html


def _checkpoint(out: Path, records: list[MethodRecord]) -> None:
    fp = EvalSpec(
        dataset=DatasetSpec(path="qa.json", hash="d", questions=2),
        methods=["tog", "local"],
        judge=JudgeSpec(models={"alpha": "m@T0"}, prompts="p", metrics=METRICS),
    )
    cp = Checkpoint.create(out / CHECKPOINT_NAME, fp)
    for r in records:
        cp.append(r)
    cp.close()


def test_write_report_from_results_and_from_a_newer_checkpoint(tmp_path: Path) -> None:
    out = tmp_path / "results"
    records = [RECORDS[0].model_copy(update={"evidence": "gold for a1"}), *RECORDS[1:]]
    _checkpoint(out, records[:4])
    detailed, summary = run_json(records[:4])
    write_json_atomic(out / DETAILED_NAME, detailed)
    write_json_atomic(out / SUMMARY_NAME, summary)
    html_path, csv_path = write_report(out)
    html = html_path.read_text()
    assert "Partial results" not in html and "gold for a1" in html
    assert len(pd.read_csv(csv_path)) == 4

    # the run goes on: the checkpoint is newer than the JSON
    cp_path = out / CHECKPOINT_NAME
    with cp_path.open("a") as f:
        for r in RECORDS[4:]:
            f.write(r.model_dump_json() + "\n")
    later = (out / DETAILED_NAME).stat().st_mtime_ns + 10**9
    os.utime(cp_path, ns=(later, later))
    d2, s2, partial = load_run(out)
    assert partial and len(d2["results"]) == 3 and s2["by_method"]["tog"]["search_errors"] == 1
    html = write_report(out)[0].read_text()
    assert "Partial results" in html and "6 (question, method) answers" in html
    assert "gold for a1" in html  # the evidence travels with the checkpoint's records
    assert len(pd.read_csv(csv_path)) == 6
    assert not list(out.glob(".*"))  # no temp files left


def test_write_report_from_a_checkpoint_alone(tmp_path: Path) -> None:
    out = tmp_path / "results"
    _checkpoint(out, RECORDS)
    html_path, _ = write_report(out)
    assert "Partial results" in html_path.read_text()


def test_write_report_bad_input(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="output folder not found"):
        write_report(tmp_path / "missing")
    with pytest.raises(InputError, match=r"no eval_results_detailed\.json"):
        write_report(tmp_path)
    (tmp_path / DETAILED_NAME).write_text("{not json")
    (tmp_path / SUMMARY_NAME).write_text(json.dumps({}))
    with pytest.raises(InputError, match=f"{DETAILED_NAME}: line 1: malformed JSON"):
        write_report(tmp_path)
    assert not (tmp_path / "report.html").exists()
