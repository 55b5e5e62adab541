"""The report's head-to-head and by-group sections, from JSON made by results.py's functions
(detailed_results, summarize, by_group, pairwise_summary) and from hand-written JSON."""

from __future__ import annotations

import copy
import html as html_lib
import re
from typing import Any

import pytest

from gtog.eval.report._html import render_page
from gtog.eval.report._page import page_data
from gtog.eval.results._groups import by_group
from gtog.eval.results._pairwise import pairwise_summary
from gtog.eval.results._records import PairRecord
from gtog.eval.results._summary import summarize
from gtog.eval.results._views import detailed_results
from gtog.eval.scoring._pairwise import PairCall, PairJudgement
from tests.unit.eval.test_page import XSS, rec

METHODS = ["tog", "local", "basic"]
METRICS = ["correctness", "token_recall"]
CRITERIA = {
    "comprehensiveness": "how fully it covers <b>everything</b>",
    "directness": "how plainly it answers",
}
PAIRS = [("tog", "local"), ("tog", "basic"), ("local", "basic")]
AA = [(m, m) for m in METHODS]
QIDS = [f"q{i:02d}" for i in range(1, 11)]
TYPES = {q: "who" if i < 3 else "which" if i < 6 else None for i, q in enumerate(QIDS)}
"""Three `who`, three `which`, four without the field."""

_ORDER = {"ab": {1: "a", 2: "b", 0: "tie"}, "ba": {1: "b", 2: "a", 0: "tie"}}


def _said(criterion: str, a: str, b: str, i: int) -> tuple[int | None, int | None]:
    """What the scripted judge answered in order ab and ba on question i (None: no reply)."""
    if (a, b) == ("tog", "local"):
        return (1, 2) if criterion == "comprehensiveness" else ((0, 0) if i < 8 else (2, 1))
    if (a, b) == ("tog", "basic"):
        return ((1, 2) if i < 6 else (2, 1)) if criterion == "comprehensiveness" else (1, 1)
    if (a, b) == ("local", "basic"):
        if i == 9:
            return (None, 1)
        return (2, 1) if i % 3 else (1, 2)
    if a == "tog":  # A/A: a slot bias (copy a always wins)
        return (1, 2)
    if a == "local":  # A/A: follows the position (both orders say answer 1)
        return (1, 1)
    return (0, 0)


def _pair(qid: str, i: int, criterion: str, a: str, b: str) -> PairRecord:
    ab, ba = _said(criterion, a, b, i)
    reason = XSS if (qid, a, b, criterion) == ("q01", "tog", "local", "comprehensiveness") else None
    calls = []
    for order, said in (("ab", ab), ("ba", ba)):
        if said is None:
            calls.append(PairCall(order=order, error="unparseable judge reply: <no json>"))
        else:
            winner = _ORDER[order][said]
            calls.append(
                PairCall(order=order, said=said, winner=winner, reason=reason or f"{order} {said}")
            )
    verdicts = [c.winner for c in calls]
    judgement = PairJudgement(calls=calls, llm_calls=2, prompt_tokens=200, output_tokens=20)
    if None in verdicts:
        judgement.error = "order ab: 1 of 1 trials failed: unparseable judge reply"
    else:
        judgement.orders_agree = verdicts[0] == verdicts[1]
        judgement.winner = verdicts[0] if judgement.orders_agree else "tie"
    groups = {"type": TYPES[qid]} if TYPES[qid] else {}
    return PairRecord(
        qid=qid,
        index_key="alpha",
        criterion=criterion,
        a=a,
        b=b,
        judgement=judgement,
        groups=groups,
    )


def run_json() -> tuple[dict[str, Any], dict[str, Any]]:
    """Detailed and summary JSON of a run with pairwise judging and `group_by: [type]`."""
    records = []
    for i, qid in enumerate(QIDS):
        for method in METHODS:
            right = method == "tog" or (method == "local" and i % 2 == 0)
            response = XSS if (qid, method) == ("q01", "local") else f"{method} answers {qid}"
            r = rec(qid, "alpha", method, {"correctness": float(right), "token_recall": 0.5})
            r.response = response
            r.groups = {"type": TYPES[qid]} if TYPES[qid] else {}
            records.append(r)
    pairs = [
        _pair(qid, i, c, a, b)
        for i, qid in enumerate(QIDS)
        for c in CRITERIA
        for a, b in PAIRS + AA
    ]
    spec = {
        "pairwise": {"criteria": CRITERIA, "pairs": PAIRS + AA, "trials": 1, "prompt": "p"},
        "group_by": ["type"],
    }
    meta = {"methods": METHODS, "metrics": METRICS, "index_keys": ["alpha"], "spec": spec}
    detailed = detailed_results(records, METHODS, meta, keep_intermediate=False, pairs=pairs)
    summary = {"metadata": meta, **summarize(records, METHODS, METRICS)}
    summary["by_group"] = by_group(records, METHODS, METRICS, ["type"])
    summary.update(pairwise_summary(pairs, PAIRS + AA, list(CRITERIA), ["type"]))
    return detailed, summary


def _text(fragment: str) -> str:
    """The text of an HTML fragment, its table cells joined by `|`."""
    cells = re.sub(r"</t[hd]><t[hd][^>]*>", "|", fragment)
    return html_lib.unescape(re.sub(r"<[^>]+>", "", cells))


def _matrix(html: str, heading: str) -> list[list[str]]:
    """The cells of the first win-rate matrix after `heading`, as text."""
    start = html.index(heading)
    table = html[html.index('<table class="matrix">', start) : html.index("</table>", start)]
    return [
        [_text(c) for c in re.findall(r"<t[hd].*?</t[hd]>", r)] for r in table.split("<tr>")[1:]
    ]


def test_win_rate_matrix_mirrors_each_stored_pair() -> None:
    detailed, summary = run_json()
    v = page_data(detailed, summary).head_to_head
    assert v is not None and [m.criterion for m in v.matrices] == list(CRITERIA)
    comp = v.matrices[0]
    assert comp.methods == METHODS and comp.description == CRITERIA["comprehensiveness"]
    tog_local, local_tog = comp.cell("tog", "local"), comp.cell("local", "tog")
    assert (tog_local.rate, tog_local.record, tog_local.mirrored) == (1.0, "10-0-0", False)
    assert (local_tog.rate, local_tog.record, local_tog.mirrored) == (0.0, "0-10-0", True)
    lo, hi = tog_local.ci95
    assert local_tog.ci95 == pytest.approx((1 - hi, 1 - lo))
    assert tog_local.significant and local_tog.significant  # 10 of 10: p 0.002, Holm x 6
    assert (tog_local.shade, local_tog.shade) == (8, 0)
    assert comp.cell("tog", "tog") is None
    tog_basic = comp.cell("tog", "basic")
    assert tog_basic.rate == pytest.approx(0.6) and not tog_basic.significant
    assert comp.cell("basic", "tog").rate == pytest.approx(0.4)
    local_basic = comp.cell("local", "basic")
    assert (local_basic.n, local_basic.unscored) == (9, 1)  # a failed call: unscored, not a tie
    direct = v.matrices[1]
    assert direct.cell("tog", "basic").rate == 0.5  # orders disagree every time: ties
    assert direct.cell("tog", "basic").position_consistency == 0.0
    assert direct.cell("local", "tog").rate == pytest.approx(0.6)  # 8 ties, 2 losses of tog


def test_a_pair_stored_both_ways_is_shown_as_stored() -> None:
    entry = {
        "criterion": "c",
        "a": "x",
        "b": "y",
        "n": 4,
        "wins_a": 3,
        "wins_b": 1,
        "ties": 0,
        "win_rate_a": 0.75,
        "ci95": [0.3, 0.95],
        "p_value": 0.6,
        "p_holm": 0.6,
    }
    back = {**entry, "a": "y", "b": "x", "win_rate_a": 0.5, "wins_a": 2, "wins_b": 2}
    junk = [{"criterion": "c", "a": "x"}, "junk", {"criterion": 3, "a": "x", "b": "y"}]
    summary = {"pairwise": [entry, back, *junk], "pairwise_aa": "junk", "pairwise_usage": 3}
    v = page_data({"results": []}, summary).head_to_head
    [m] = v.matrices
    assert m.methods == ["x", "y"] and m.description is None
    assert m.cell("x", "y").rate == 0.75 and m.cell("y", "x").rate == 0.5  # not mirrored
    assert not m.cell("y", "x").mirrored
    assert v.checks == [] and v.usage is None and v.trials is None
    mirrored = page_data({"results": []}, {"pairwise": [entry]}).head_to_head.matrices[0]
    assert mirrored.cell("y", "x").ci95 == pytest.approx((0.05, 0.7))
    assert page_data({"results": []}, {}).head_to_head is None  # no pairwise: no section


def test_aa_checks_flag_slot_and_position_bias_and_usage_is_apart() -> None:
    detailed, summary = run_json()
    v = page_data(detailed, summary).head_to_head
    checks = {(c.result.criterion, c.result.a): c for c in v.checks}
    assert len(checks) == 6
    tog = checks["comprehensiveness", "tog"]
    assert tog.slot_bias and not tog.position_bias and tog.passes is False
    local = checks["directness", "local"]
    assert (
        local.position_bias and local.passes is False and local.fails == ("position_consistency",)
    )
    assert local.result.position_consistency == 0.0 and not local.slot_bias
    basic = checks["comprehensiveness", "basic"]
    assert not basic.flagged and basic.passes
    assert len(v.flagged) == 4  # tog and local, on both criteria
    # a summary of an older gtog: `passes` was the sign test alone, and there is no `fails`
    old = [{k: e[k] for k in e if k != "fails"} for e in summary["pairwise_aa"]]
    older = page_data(detailed, {**summary, "pairwise_aa": old}).head_to_head
    checks = {(c.result.criterion, c.result.a): c for c in older.checks}
    assert checks["comprehensiveness", "tog"].slot_bias
    assert (
        checks["directness", "local"].position_bias and checks["directness", "local"].fails is None
    )
    assert v.usage.llm_calls == 2 * 10 * 2 * 6 and v.usage.comparisons == 120
    assert v.usage.usd is None  # no price known for these calls
    assert v.answer_judges is not None and v.trials == 1


def test_groups_table_has_none_last_and_win_rates_per_group() -> None:
    detailed, summary = run_json()
    [g] = page_data(detailed, summary).groups
    assert g.field == "type" and g.values == ["which", "who", "(none)"]
    assert g.questions == {"which": 3, "who": 3, "(none)": 4}
    assert g.methods == METHODS and g.metrics == METRICS
    who_local = g.mean("who", "local", "correctness")
    assert who_local.value == pytest.approx(2 / 3) and who_local.n == 3  # q01, q03 right
    assert g.mean("(none)", "tog", "correctness").value == 1.0
    assert g.mean("(none)", "tog", "correctness").ci95 is not None
    assert len(g.pairs) == len(PAIRS) * len(CRITERIA)
    assert g.rate("(none)", "comprehensiveness", "tog", "basic").rate == 0.0  # q07-q10: lost
    assert g.rate("who", "comprehensiveness", "tog", "basic").rate == 1.0
    assert g.rate("who", "comprehensiveness", "tog", "nobody") is None
    assert page_data(*run_json_without_groups()).groups == []


def run_json_without_groups() -> tuple[dict[str, Any], dict[str, Any]]:
    detailed, summary = run_json()
    summary = {k: v for k, v in summary.items() if "group" not in k}
    summary["metadata"] = copy.deepcopy(summary["metadata"])
    summary["metadata"]["spec"]["group_by"] = []
    return detailed, summary


def test_question_pairs_name_the_order_the_reply_and_the_reason() -> None:
    detailed, summary = run_json()
    q = {x.qid: x for x in page_data(detailed, summary).questions}
    q10 = q["q10"]
    assert [(p.a, p.b) for p in q10.pairs] == PAIRS + AA  # A/A checks last, methods order
    assert q10.groups == {} and q["q01"].groups == {"type": "who"}
    tog_local = q10.pairs[0]
    assert [v.criterion for v in tog_local.verdicts] == list(CRITERIA)
    comp, direct = tog_local.verdicts
    assert comp.text == "tog wins" and comp.orders_agree
    assert [(c.first, c.said, c.winner) for c in comp.calls] == [
        ("tog", "answer 1 (tog)", "tog"),
        ("local", "answer 2 (tog)", "tog"),
    ]
    assert direct.text == "local wins"
    local_basic = q10.pairs[2].verdicts[0]
    assert local_basic.text == "unscored" and local_basic.error.startswith("order ab: 1 of 1")
    assert local_basic.calls[0].said == "no usable reply" and local_basic.calls[0].winner is None
    position = q10.pairs[4].verdicts[0]  # local against itself: answer 1 both times
    assert position.text == "tie" and position.orders_agree is False
    assert [c.first for c in position.calls] == ["local (copy a)", "local (copy b)"]


def test_page_renders_the_sections_and_escapes_answers_and_reasons() -> None:
    detailed, summary = run_json()
    summary["pairwise_by_group"]["type"]["<i>odd</i>"] = summary["pairwise_by_group"]["type"]["who"]
    html = render_page(page_data(detailed, summary))
    assert '<a href="#h2h">Head to head</a>' in html and '<a href="#by-1">By type</a>' in html
    assert '<h2 id="by-1">Results by type</h2>' in html
    assert "<script>alert" not in html and "<b>everything</b>" not in html and "<i>odd" not in html
    assert "how fully it covers &lt;b&gt;everything&lt;/b&gt;" in html
    q01 = html[html.index('id="q-q01"') : html.index('id="q-q02"')]
    assert 'data-g0="who"' in q01
    # local's answer: once in the answers, once per pair it is in; the reason: once per call
    assert q01.count("&lt;script&gt;alert(") == 1 + 2 + 2
    assert "tog shown first: answer 1 (tog)" in _text(q01)
    assert "unparseable judge reply: &lt;no json&gt;" in html[html.index('id="q-q10"') :]

    comp = _matrix(html, "<h3>comprehensiveness</h3>")
    assert comp[0] == ["row's win rate against column", *METHODS]
    tog_row = comp[1]
    assert tog_row[0] == "tog" and tog_row[1] == "–"
    assert tog_row[2].startswith("1.00*[") and tog_row[2].endswith("n = 10")
    assert comp[2][1].startswith("0.00*[")  # local against tog: mirrored, significant too
    assert 'class="wr wr8"' in html and 'class="wr wr0"' in html
    checks = html[html.index("A/A checks</h3>") : html.index("What the pairwise judge cost")]
    assert checks.count("fails: slot bias") == 2 and checks.count("fails: position bias") == 2
    assert "The pairwise judge failed 4 of 6 A/A checks" in html
    rows = [_text(r) for r in re.findall(r"<tr>(.*?)</tr>", checks)]
    assert [r.split("|") for r in rows[1:3]] == [
        ["comprehensiveness", "tog", "10", "10", "0", "0", "0", "1.000", "0.0020", "1.00",
         "fails: slot bias"],
        ["comprehensiveness", "local", "10", "0", "0", "10", "0", "0.500", "1.0000", "0.00",
         "fails: position bias"],
    ]  # fmt: skip
    every = html[html.index("Every comparison (6)") : html.index("A/A checks</h3>")]
    local_basic = [_text(r) for r in re.findall(r"<tr>(.*?)</tr>", every)][3].split("|")
    assert local_basic[:9] == ["comprehensiveness", "local", "basic", "9", "3", "6", "0", "1",
                               "0.333"]  # fmt: skip
    cost = re.search(r"<th>pairwise judge</th>(.*?)</tr>", html).group(1)
    assert re.findall(r">([^<]+)<", cost) == ["120", "240", "24,000", "2,400", "unknown"]

    means = html[html.index('<h2 id="by-1">') :]
    rows = re.findall(r"<tr><th>([^<]*)</th><td class=\"num\">(\d+)</td>", means)
    assert rows[:4] == [
        ("which", "3"),
        ("who", "3"),
        ("&lt;i&gt;odd&lt;/i&gt;", "0"),
        ("(none)", "4"),
    ]  # a value only the win rates have: before (none), escaped
    assert '<option value="(none)">(none) (4)</option>' in html


def test_page_without_pairwise_or_groups_has_neither_section() -> None:
    detailed, summary = run_json_without_groups()
    for key in [k for k in summary if k.startswith("pairwise")]:
        del summary[key]
    for q in detailed["results"]:
        q.pop("pairwise")
    html = render_page(page_data(detailed, summary))
    assert "Head to head" not in html and 'href="#h2h"' not in html
    assert "Results by" not in html and "data-g0" not in html and 'class="group"' not in html


def test_a_run_without_aa_checks_says_so_and_prices_show_when_known() -> None:
    detailed, summary = run_json()
    summary["pairwise_aa"] = []
    summary["pairwise_usage"]["usd_total"] = 0.01234
    html = render_page(page_data(detailed, summary))
    assert "made no A/A checks" in html and "The pairwise judge failed" not in html
    usd = re.search(r"<th>pairwise judge</th>(.*?)</tr>", html).group(1)
    assert usd.endswith('<td class="num">0.01234</td>')
