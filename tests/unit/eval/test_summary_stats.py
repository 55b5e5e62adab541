"""The summary's intervals, same-question and strict means, comparisons, cost, and table."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from gtog.eval.results._records import Efficiency, MethodRecord
from gtog.eval.results._statistics import paired_comparison, wilson_interval
from gtog.eval.results._summary import summarize
from gtog.eval.results._table import summary_table
from gtog.eval.scoring import Judgement

METRICS = ["correctness", "token_recall"]


def rec(
    qid: str,
    method: str,
    correct: int | None,
    *,
    key: str = "a",
    recall: float | None = None,
    error: str | None = None,
    latency: float = 1.0,
    cost: float | None = 0.001,
    judge_cost: float | None = 0.0001,
    votes: list[int | None] | None = None,
) -> MethodRecord:
    r = MethodRecord(qid=qid, index_key=key, question="Q", reference="R", method=method)
    if error:
        r.error = error
        return r
    r.response = "A"
    r.efficiency = Efficiency(
        latency=latency, llm_calls=2, prompt_tokens=100, output_tokens=10, cost_usd=cost
    )
    r.judgements["correctness"] = Judgement(
        score=correct,
        error=None if correct is not None else "unparseable",
        llm_calls=1,
        prompt_tokens=5,
        output_tokens=1,
        cost_usd=judge_cost,
        votes=votes,
    )
    if recall is not None:
        r.judgements["token_recall"] = Judgement(score=recall)
    return r


def test_intervals_per_method_and_per_key_are_json_safe() -> None:
    records = [rec(str(i), "local", int(i < 7), recall=i / 10) for i in range(10)]
    s = summarize(records, ["local"], METRICS)
    local = s["by_method"]["local"]
    assert local["ci95"]["correctness"] == pytest.approx(wilson_interval(7, 10).as_list())
    assert local["ci95_method"] == {"correctness": "wilson", "token_recall": "skew_t"}
    lo, hi = local["ci95"]["token_recall"]
    assert lo < 0.45 < hi
    assert s["by_movie"]["a"]["local"]["ci95"] == local["ci95"]
    text = json.dumps(s, allow_nan=False)  # no NaN anywhere
    assert "NaN" not in text


def test_too_few_scores_give_null_interval_and_reason() -> None:
    records = [rec("1", "local", None, recall=0.5), rec("2", "local", None, recall=0.5)]
    s = summarize(records, ["local"], METRICS)
    local = s["by_method"]["local"]
    assert local["correctness"] is None and local["ci95"]["correctness"] is None
    assert local["ci95_reason"]["correctness"] == "no scored answers"
    assert local["ci95"]["token_recall"] is None
    assert local["ci95_reason"]["token_recall"].startswith("n too small: 2 fractional score(s)")


def test_same_question_and_strict_means_compare_like_with_like() -> None:
    # tog fails the two hard questions (3, 4) that local gets wrong
    records = [
        rec("1", "tog", 1),
        rec("2", "tog", 1),
        rec("3", "tog", None, error="SearchFailed: boom"),
        rec("4", "tog", None, error="SearchFailed: boom"),
        rec("1", "local", 1),
        rec("2", "local", 1),
        rec("3", "local", 0),
        rec("4", "local", 0),
    ]
    s = summarize(records, ["tog", "local"], ["correctness"])
    tog, local = s["by_method"]["tog"], s["by_method"]["local"]
    assert tog["correctness"] == 1.0 and local["correctness"] == 0.5  # each over what it scored
    assert tog["same_questions"]["correctness"] == 1.0
    assert local["same_questions"]["correctness"] == 1.0  # questions 1 and 2 only
    assert tog["same_questions"]["scored"]["correctness"] == 2
    assert tog["strict"]["correctness"] == 0.5  # failed searches count as wrong
    assert local["strict"]["correctness"] == 0.5
    assert tog["strict"]["scored"]["correctness"] == 4
    assert set(s["question_sets"]) >= {"by_method.<m>.strict", "comparisons"}


def test_an_unscored_judge_call_counts_as_wrong_in_strict_means() -> None:
    """Issue 44: leaving it out let a gate pass on the judge's failures."""
    records = [
        rec("1", "tog", None),
        rec("1", "local", 1),
        rec("2", "tog", 1),
        rec("2", "local", 1),
    ]
    s = summarize(records, ["tog", "local"], ["correctness"])
    strict = s["by_method"]["tog"]["strict"]
    assert strict["scored"]["correctness"] == 2 and strict["correctness"] == 0.5
    assert strict["failed"]["correctness"] == {"search_errors": 0, "judge_errors": 1}
    assert s["by_method"]["tog"]["same_questions"]["scored"]["correctness"] == 1


def test_comparisons_are_paired_and_holm_adjusted() -> None:
    a = [1] * 12 + [0, 1]
    b = [0] * 12 + [0, 1]
    records = [rec(str(i), "tog", a[i]) for i in range(14)]
    records += [rec(str(i), "local", b[i]) for i in range(14)]
    records += [rec(str(i), "basic", b[i]) for i in range(14)]
    s = summarize(records, ["tog", "local", "basic"], ["correctness"])
    comps = {(c["a"], c["b"]): c for c in s["comparisons"]}
    assert list(comps) == [("tog", "local"), ("tog", "basic"), ("local", "basic")]
    tl = comps[("tog", "local")]
    expected = paired_comparison(a, b)
    assert tl["n"] == 14 and tl["diff"] == pytest.approx(12 / 14)
    assert tl["p_value"] == pytest.approx(expected.p_value) and tl["test"] == "mcnemar_exact"
    assert tl["ci95"] == pytest.approx(expected.ci95.as_list())
    assert tl["p_holm"] == pytest.approx(min(1.0, 3 * tl["p_value"]))  # smallest of 3
    lb = comps[("local", "basic")]
    assert lb["diff"] == 0.0 and lb["p_value"] == 1.0 and lb["p_holm"] == 1.0
    assert set(s["comparisons_by_movie"]) == {"a"}
    assert len(s["comparisons_by_movie"]["a"]) == 3


def test_comparisons_use_only_questions_both_scored() -> None:
    records = [
        rec("1", "tog", 1),
        rec("2", "tog", None, error="boom"),
        rec("1", "local", 0),
        rec("2", "local", 1),
    ]
    (c,) = summarize(records, ["tog", "local"], ["correctness"])["comparisons"]
    assert c["n"] == 1 and c["a_mean"] == 1.0 and c["b_mean"] == 0.0


def test_efficiency_percentiles_and_cost() -> None:
    records = [rec(str(i), "local", 1, latency=float(i)) for i in range(1, 11)]
    s = summarize(records, ["local"], ["correctness"])
    eff = s["efficiency"]["local"]
    assert eff["p50_latency"] == pytest.approx(5.5)
    assert eff["p95_latency"] == pytest.approx(9.55)
    assert eff["p50_tokens"] == 110 and eff["p95_llm_calls"] == 2
    assert eff["usd_total"] == pytest.approx(0.01)
    assert eff["usd_per_answer"] == pytest.approx(0.001)
    assert s["judge_usage"]["local"]["usd_total"] == pytest.approx(0.001)
    cost = s["cost"]["by_method"]["local"]
    assert cost["total_usd"] == pytest.approx(0.011)
    assert cost["judge_usd_per_answer"] == pytest.approx(0.0001)


def test_unpriced_model_is_null_cost_not_zero() -> None:
    records = [rec("1", "local", 1), rec("2", "local", 1, cost=None, judge_cost=None)]
    s = summarize(records, ["local"], ["correctness"])
    assert s["efficiency"]["local"]["usd_total"] is None
    assert s["efficiency"]["local"]["usd_per_answer"] is None
    assert s["judge_usage"]["local"]["usd_total"] is None
    assert s["cost"]["by_method"]["local"]["total_usd"] is None


def test_unanimous_share_of_judge_trials() -> None:
    records = [
        rec("1", "local", 1, votes=[1, 1, 1]),
        rec("2", "local", 1, votes=[1, 0, 1]),
        rec("3", "local", None, votes=[1, 0, None]),
        rec("4", "local", 0, votes=[0, 0, 0]),
    ]
    s = summarize(records, ["local"], ["correctness"])
    assert s["by_method"]["local"]["unanimous"]["correctness"] == pytest.approx(0.5)
    single = summarize([rec("1", "local", 1)], ["local"], ["correctness"])
    assert single["by_method"]["local"]["unanimous"]["correctness"] is None


def _render(summary: dict, metrics: list[str], width: int = 200) -> str:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(summary_table(summary, metrics, width=width))
    return console.export_text()


def _rows(text: str) -> dict[str, str]:
    """First word -> that line and the next (a score cell stacks its interval below)."""
    lines = text.splitlines()
    out: dict[str, str] = {}
    for i, line in enumerate(lines):
        if line.strip() and line.split()[0] not in out:
            out[line.split()[0]] = line + "\n" + (lines[i + 1] if i + 1 < len(lines) else "")
    return out


def test_table_shows_interval_marks_significance_and_question_set() -> None:
    a = [1] * 12 + [0, 1]
    b = [0] * 12 + [0, 1]
    records = [rec(str(i), "tog", a[i]) for i in range(14)]
    records += [rec(str(i), "local", b[i]) for i in range(14)]
    records += [rec(str(i), "basic", a[i]) for i in range(14)]
    s = summarize(records, ["tog", "local", "basic"], ["correctness"])
    text = _render(s, ["correctness"])
    lo, hi = s["by_method"]["tog"]["same_questions"]["ci95"]["correctness"]
    rows = _rows(text)
    assert "0.93" in rows["tog"] and f"[{lo:.2f}, {hi:.2f}]" in rows["tog"]  # not ± a half
    assert "±" not in text and "*" not in rows["tog"]
    assert "0.07*" in rows["local"]  # worse than the best, Holm p<.05
    assert "*" not in rows["basic"]  # identical to the best
    assert "the 14 questions every method answered" in " ".join(text.split())
    cost_part = text.split("cost per answer")[1].split("why answers fail")[0]
    cost_rows = {line.split()[0]: line for line in cost_part.splitlines() if line.strip()}
    assert "$0.0011" in cost_rows["tog"]


def test_asymmetric_interval_is_printed_as_it_is() -> None:
    records = [rec(str(i), "tog", 1) for i in range(12)]
    s = summarize(records, ["tog"], ["correctness"])
    lo, hi = s["by_method"]["tog"]["same_questions"]["ci95"]["correctness"]
    assert hi == 1.0 and lo < 0.8  # Wilson at 12/12: [0.76, 1.00]
    text = _render(s, ["correctness"])
    assert f"[{lo:.2f}, 1.00]" in text and "±" not in text


def test_table_fits_80_columns_and_never_cuts_a_number() -> None:
    metrics = ["correctness", "faithfulness", "relevance", "completeness", "token_recall",
               "evidence_recall"]  # fmt: skip
    records = []
    for method in ("tog", "local", "basic"):
        for i in range(10):
            r = rec(str(i), method, i % 2)
            for m in metrics[1:]:
                r.judgements[m] = r.judgements["correctness"].model_copy()
            records.append(r)
    s = summarize(records, ["tog", "local", "basic"], metrics)
    text = _render(s, metrics, width=80)
    assert max(len(line) for line in text.splitlines()) <= 80
    means = {f"{s['by_method'][m]['same_questions'][x]:.2f}" for m in s["by_method"]
             for x in metrics}  # fmt: skip
    lo, hi = s["by_method"]["tog"]["same_questions"]["ci95"]["correctness"]
    assert all(v in text for v in means) and f"[{lo:.2f}, {hi:.2f}]" in text
    assert "…" not in text and "..." not in text
    for name in ("tog", "local", "basic", "n"):
        assert name in text


def test_partial_run_says_so_above_the_table() -> None:
    s = summarize([rec("1", "tog", 1)], ["tog"], ["correctness"])
    s["metadata"] = {"run": {"status": "interrupted", "pairs_done": 1, "pairs_total": 6}}
    text = _render(s, ["correctness"])
    assert text.splitlines()[0].strip() == "partial: 1 of 6 pairs (interrupted)"


def test_the_terminal_and_the_report_show_the_same_labelled_token_and_call_figures() -> None:
    from gtog.eval.report._html import render_page
    from gtog.eval.report._page import page_data
    from gtog.eval.results._views import detailed_results

    records = [rec(str(i), "local", 1) for i in range(4)]
    for r, tokens, calls in zip(records, (100, 100, 100, 1700), (1, 1, 1, 9), strict=True):
        assert r.efficiency is not None
        r.efficiency.prompt_tokens, r.efficiency.output_tokens = tokens, 10
        r.efficiency.llm_calls = calls
    summary = summarize(records, ["local"], ["correctness"])
    eff = summary["efficiency"]["local"]
    assert eff["p50_tokens"] == 110 and eff["p50_llm_calls"] == 1  # the median: not shown
    text = _render(summary, ["correctness"])
    header = next(line for line in text.splitlines() if "errors" in line)
    assert header.split() == [
        "method", "errors", "sec", "p50", "sec", "p95", "calls", "mean", "tokens", "mean",
        "$/answer",
    ]  # fmt: skip
    row = next(line for line in text.splitlines() if line.split()[:2] == ["local", "0+0"])
    assert row.split()[4:6] == ["3.0", "510"]  # (1+1+1+9)/4 calls; (3x110 + 1710)/4 tokens
    assert "calls, tokens (in + out): mean per answer" in text
    meta = {"methods": ["local"], "metrics": ["correctness"], "index_keys": ["a"]}
    detailed = detailed_results(records, ["local"], meta, keep_intermediate=True)
    data = page_data(detailed, {"metadata": meta, **summary})
    (point,) = data.costs
    assert (point.tokens, point.llm_calls) == (510, 3.0)
    html = render_page(data)
    assert "mean tokens / answer (in + out)" in html and "mean LLM calls / answer" in html


def test_results_by_group_without_peoples_labels_write_no_calibration() -> None:
    """`by_group`'s cluster labels once took the place of people's labels (a run with
    `dataset.group_by` crashed writing its results: 'tuple' object has no attribute 'key')."""
    from gtog.eval.results._spec import DatasetSpec, EvalSpec, JudgeSpec
    from gtog.eval.results._views import result_views

    spec = EvalSpec(
        dataset=DatasetSpec(path="qa.json", hash="h", questions=4),
        methods=["local"],
        judge=JudgeSpec(metrics=["correctness"]),
        group_by=["type"],
    )
    records = [rec(str(i), "local", i % 2) for i in range(4)]
    for r in records:
        r.groups = {"type": "who"}
    _, summary = result_views(spec, records, ["local"])
    assert summary["by_group"]["type"]["who"]["local"]["correctness"]["n"] == 4
    assert "calibration" not in summary
