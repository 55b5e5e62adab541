"""The summary's clustered statistics (issue 34): `statistics`, clustered `ci95` beside
`ci95_naive`, `icc` / `design_effect`, the cluster sign-flip test, `omnibus`, `mde`; the
threshold of too few clusters; the terminal lines and the report."""

from __future__ import annotations

import pytest
from rich.console import Console

from gtog.eval.report._html import render_page
from gtog.eval.report._page import page_data
from gtog.eval.results._clustered import MIN_CLUSTERS
from gtog.eval.results._diff import diff_runs
from gtog.eval.results._groups import by_group
from gtog.eval.results._inference import Clusters
from gtog.eval.results._log import EvalLog
from gtog.eval.results._records import MethodRecord
from gtog.eval.results._spec import AnalysisSpec, DatasetSpec, EvalSpec, JudgeSpec
from gtog.eval.results._summary import summarize
from gtog.eval.results._table import summary_table
from gtog.eval.scoring import Judgement


def rec(
    qid: str, key: str, method: str, score: float, groups: dict[str, str] | None = None
) -> MethodRecord:
    r = MethodRecord(
        qid=qid, index_key=key, question="Q", reference="R", method=method, response="A"
    )
    r.judgements["correctness"] = Judgement(score=score)
    r.groups = groups or {}
    return r


def split_indexes(keys: int, per_key: int = 5, methods: tuple[str, ...] = ("a", "b")):
    """Method a right on every question of the first half of the indexes and wrong on the
    rest; b the other way round; c (if asked) right on every other question."""
    out = []
    for g in range(keys):
        for i in range(per_key):
            qid, key = f"q{g}-{i}", f"k{g}"
            out.append(rec(qid, key, "a", int(g < keys // 2)))
            out.append(rec(qid, key, "b", int(g >= keys // 2)))
            if "c" in methods:
                out.append(rec(qid, key, "c", (g + i) % 2))
    return out


def only(summary: dict, a: str = "a", b: str = "b") -> dict:
    return next(c for c in summary["comparisons"] if (c["a"], c["b"]) == (a, b))


def test_whole_indexes_right_or_wrong_widen_the_difference_and_name_the_clusters() -> None:
    s = summarize(split_indexes(12), ["a", "b"], ["correctness"])
    assert s["statistics"] == {
        "cluster_by": "index_key",
        "clusters": 12,
        "questions": 60,
        "clustered": True,
        "min_clusters": MIN_CLUSTERS,
        "reason": None,
    }
    c = only(s)
    naive, clustered = c["ci95_naive"], c["ci95"]
    assert c["diff"] == 0.0 and c["test"] == "cluster_sign_flip"
    assert clustered[1] - clustered[0] > 2 * (naive[1] - naive[0])
    assert c["clusters"] == 12 and c["icc"] == pytest.approx(1.0)
    # the method's own mean: every question of an index alike, ICC 1, design effect ~5
    a = s["by_method"]["a"]
    assert a["icc"]["correctness"] == pytest.approx(1.0)
    assert a["design_effect"]["correctness"] > 4.5
    low, high = a["ci95"]["correctness"]
    naive_low, naive_high = a["ci95_naive"]["correctness"]
    assert low < naive_low and high > naive_high
    assert a["ci95_method"]["correctness"] == "wilson_skew_t_clustered"
    assert a["same_questions"]["ci95"]["correctness"] == a["ci95"]["correctness"]


def test_a_clustered_difference_is_significant_only_when_the_clusters_say_so() -> None:
    # a right and b wrong on 2 questions of each of 12 indexes, agreeing on the 8 others:
    # consistent in every cluster, so significant clustered as well as naive
    records = []
    for g in range(12):
        for i in range(10):
            records.append(rec(f"q{g}-{i}", f"k{g}", "a", 1))
            records.append(rec(f"q{g}-{i}", f"k{g}", "b", int(i >= 2)))
    c = only(summarize(records, ["a", "b"], ["correctness"]))
    assert c["p_value"] == pytest.approx(2 / 2**12) and c["p_holm"] == c["p_value"]
    assert c["p_value_naive"] < 1e-6
    # all 24 questions where they differ sit in 3 of the 12 indexes: naive McNemar says
    # significant, the clusters do not
    records = []
    for g in range(12):
        for i in range(10):
            records.append(rec(f"q{g}-{i}", f"k{g}", "a", 1))
            records.append(rec(f"q{g}-{i}", f"k{g}", "b", int(g >= 3 or i >= 8)))
    c = only(summarize(records, ["a", "b"], ["correctness"]))
    assert c["p_value_naive"] < 1e-6 and c["p_value"] > 0.1


def test_below_min_clusters_the_naive_figures_are_shown_and_the_summary_says_why() -> None:
    few = summarize(split_indexes(MIN_CLUSTERS - 1), ["a", "b"], ["correctness"])
    st = few["statistics"]
    assert st["clusters"] == MIN_CLUSTERS - 1 and st["clustered"] is False
    assert st["reason"].startswith(f"{MIN_CLUSTERS - 1} clusters (index_key): too few")
    c = only(few)
    assert c["ci95"] == c["ci95_naive"] and c["test"] == "mcnemar_exact"
    assert c["icc"] is not None  # still estimated, for what it is worth
    a = few["by_method"]["a"]
    assert a["ci95"] == a["ci95_naive"] and a["ci95_method"]["correctness"] == "wilson"
    enough = summarize(split_indexes(MIN_CLUSTERS), ["a", "b"], ["correctness"])
    assert enough["statistics"]["clustered"] is True
    assert only(enough)["test"] == "cluster_sign_flip"
    one = summarize(split_indexes(1), ["a", "b"], ["correctness"])["statistics"]
    assert one["clusters"] == 1 and "these questions' cluster only" in one["reason"]


def test_cluster_by_none_or_a_field() -> None:
    records = split_indexes(12)
    none = summarize(records, ["a", "b"], ["correctness"], AnalysisSpec(cluster_by=None))
    assert none["statistics"]["clusters"] is None and none["statistics"]["clustered"] is False
    assert only(none)["test"] == "mcnemar_exact" and only(none)["ci95"] == only(none)["ci95_naive"]
    assert none["by_method"]["a"]["icc"]["correctness"] is None
    # a field: six "books" of two indexes each, one question without the field
    for r in records:
        if r.qid != "q0-0":
            r.groups = {"book": f"b{int(r.index_key[1:]) // 2}"}
    by_book = summarize(records, ["a", "b"], ["correctness"], AnalysisSpec(cluster_by="book"))
    st = by_book["statistics"]
    assert st["cluster_by"] == "book" and st["clusters"] == 7 and st["without_field"] == 1
    assert only(by_book)["clusters"] == 7


def test_omnibus_before_the_pairs_with_three_methods() -> None:
    s = summarize(split_indexes(12, methods=("a", "b", "c")), ["a", "b", "c"], ["correctness"])
    o = s["omnibus"]["correctness"]
    assert o["test"] == "cochran_q_cluster_permutation" and o["methods"] == ["a", "b", "c"]
    assert o["statistic"] == pytest.approx(0.0) and o["p_value"] == 1.0  # 30 right each
    assert set(o) >= {"test", "statistic", "p_value", "methods"}
    assert summarize(split_indexes(12), ["a", "b"], ["correctness"])["omnibus"] == {}
    graded = [
        rec(r.qid, r.index_key, r.method, 0.5 * float(r.judgements["correctness"].score or 0) + 0.2)
        for r in split_indexes(12, methods=("a", "b", "c"))
    ]
    assert summarize(graded, ["a", "b", "c"], ["correctness"])["omnibus"]["correctness"][
        "test"
    ].startswith("friedman")


def test_mde_shrinks_with_more_clusters() -> None:
    small = only(summarize(split_indexes(8), ["a", "b"], ["correctness"]))
    large = only(summarize(split_indexes(32), ["a", "b"], ["correctness"]))
    assert small["mde"] is not None and large["mde"] is not None
    assert large["mde"] < small["mde"] and small["discordance"] == 1.0


def test_terminal_and_report_show_clusters_omnibus_and_power() -> None:
    s = summarize(split_indexes(12, methods=("a", "b", "c")), ["a", "b", "c"], ["correctness"])
    console = Console(width=80, record=True)
    console.print(summary_table(s, ["correctness"]))
    text = console.export_text()
    assert "60 questions in 12 clusters (index_key)" in text
    assert "Do the 3 methods differ at all? correct: Cochran's Q 0.00" in text
    assert "With these 60 questions in 12 clusters, differences under" in text
    few = summarize(split_indexes(2), ["a", "b"], ["correctness"])
    console = Console(width=80, record=True)
    console.print(summary_table(few, ["correctness"]))
    assert "2 clusters (index_key): too few" in console.export_text()
    meta = {"methods": ["a", "b", "c"], "metrics": ["correctness"]}
    html = render_page(page_data({"metadata": meta, "results": []}, s))
    assert "Cochran&#39;s Q, within-cluster permutation" in html
    assert "if independent" in html and "cannot be told apart" in html


def test_a_metric_where_no_difference_is_detectable_is_named_under_the_table() -> None:
    """4 questions, a and b disagreeing on 2: McNemar cannot reach p < 0.05 on them."""
    records = [
        rec(f"q{i}", "k", m, int(i == 0 if m == "a" else i == 1)) for i in range(4) for m in "ab"
    ]
    s = summarize(records, ["a", "b"], ["correctness"])
    assert only(s)["mde"] is None
    assert only(s)["mde_reason"] == (
        "no difference is detectable: with 4 questions the smallest p the test can give is "
        "0.125, above 0.05"  # 2 / 2^4: all four discordant the same way
    )
    console = Console(width=200, record=True)
    console.print(summary_table(s, ["correctness"]))
    assert "With these 4 questions, no difference (correct) can be told apart (80% power, " in (
        console.export_text()
    )


def test_diff_between_runs_is_clustered() -> None:
    spec = EvalSpec(
        dataset=DatasetSpec(path="qa.json", hash="h", questions=120),
        methods=["m"],
        judge=JudgeSpec(metrics=["correctness"]),
    )
    before, after = [], []
    for g in range(12):
        for i in range(10):
            before.append(rec(f"q{g}-{i}", f"k{g}", "m", 1))
            after.append(rec(f"q{g}-{i}", f"k{g}", "m", int(g >= 3 or i >= 8)))
    diff = diff_runs(EvalLog(spec=spec, records=before), EvalLog(spec=spec, records=after))
    e = diff["methods"]["m"]["correctness"]
    assert e["test"] == "cluster_sign_flip" and e["clusters"] == 12
    assert e["p_value_naive"] < 1e-6 and e["p_value"] > 0.1 and e["regression"] is False


def test_by_group_means_are_clustered_too() -> None:
    records = split_indexes(12)
    for r in records:
        r.groups = {"type": "who"}
    labels = Clusters().labels(records)
    entry = by_group(records, ["a", "b"], ["correctness"], ["type"], labels)["type"]["who"]
    a = entry["a"]["correctness"]
    assert a["n"] == 60 and a["ci95"][0] < a["ci95_naive"][0]
    plain = by_group(records, ["a", "b"], ["correctness"], ["type"])["type"]["who"]["a"]
    assert plain["correctness"]["ci95"] == plain["correctness"]["ci95_naive"]
