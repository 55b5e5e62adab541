"""Is routing worth it? (issue 48): headroom, a router, and a rule learned from the run,
on a scripted dataset whose numbers are computed by hand here."""

from __future__ import annotations

import pytest

from gtog.eval.report._html import render_page
from gtog.eval.report._page import page_data
from gtog.eval.results._inference import Clusters
from gtog.eval.results._records import MethodRecord, unknown_efficiency
from gtog.eval.results._routing import question_features, routers_of, routing_summary
from gtog.eval.results._summary import summarize
from gtog.eval.results._views import detailed_results
from gtog.eval.scoring._base import Judgement
from gtog.eval.terminal._routing import routing_line

KEYS = [f"k{i}" for i in range(6)]
# per index: three multi-hop questions, two single-hop; wh-words shared by both types
QUESTIONS = [
    ("q1", "multi-hop", "Who met the friend of Ann?"),
    ("q2", "multi-hop", "What did Ann's sister find?"),
    ("q3", "multi-hop", "Which town did Ann's son visit?"),
    ("q4", "single-hop", "Who is Ann's teacher?"),
    ("q5", "single-hop", "What does Ann sell?"),
]
COST = {"tog": 0.01, "basic": 0.001, "local": 0.0005, "agent": 0.002}
WRONG_AGENT = {("k0", "k0-q5")}
"""The agent routes k0-q5 rightly (to basic, right there) but answers it wrongly."""


def _route(question: str) -> str:
    return "tog" if question.startswith("Who") else "basic"


def _right(method: str, kind: str) -> bool:
    return (method, kind) in {("tog", "multi-hop"), ("basic", "single-hop")}


def _record(key: str, qid: str, kind: str, question: str, method: str) -> MethodRecord:
    route = None
    if method == "agent":
        route = _route(question)
        right = _right(route, kind) and (key, qid) not in WRONG_AGENT
    else:
        right = _right(method, kind)
    eff = unknown_efficiency(1.0).model_copy(update={"cost_usd": COST[method]})
    return MethodRecord(
        qid=qid,
        index_key=key,
        question=question,
        reference="x",
        method=method,
        response="an answer",
        groups={"question_type": kind},
        judgements={"correctness": Judgement(score=int(right))},
        efficiency=eff,
        route=route,
    )


def _records() -> list[MethodRecord]:
    return [
        _record(key, f"{key}-{q}", kind, text, m)
        for key in KEYS
        for q, kind, text in QUESTIONS
        for m in ("tog", "basic", "local", "agent")
    ]


@pytest.fixture(scope="module")
def routing() -> dict:
    records = _records()
    out = routing_summary(
        records,
        ["tog", "basic", "local", "agent"],
        ["correctness"],
        fields=["question_type"],
        labels=Clusters.of("index_key").labels(records),
    )
    assert out is not None
    return out


def test_headroom_equals_the_hand_computed_figures(routing: dict) -> None:
    assert routing["metric"] == "correctness" and routing["n"] == 30
    assert routing["methods"] == ["tog", "basic", "local"]  # the agent is a router
    assert routing["oracle"]["mean"] == 1.0
    assert routing["oracle"]["chosen"] == {"tog": 18, "basic": 12}
    assert routing["oracle"]["cost"] == pytest.approx((18 * 0.01 + 12 * 0.001) / 30)
    best = routing["best_single"]
    assert best["method"] == "tog" and best["mean"] == pytest.approx(0.6) and best["mean"] < 0.7
    assert best["cost"] == pytest.approx(0.01)
    head = routing["headroom"]
    assert head["mean"] == pytest.approx(0.4) and head["n"] == 30 and head["clusters"] == 6
    low, high = head["ci95"]
    assert 0 < low < 0.4 < high <= 1 and head["ci95_method"] == "newcombe_clustered"
    assert head["discordance"] == pytest.approx(0.4)
    assert routing["only_one_right"] == {
        "share": 1.0,
        "n": 30,
        "by_method": {"tog": 18, "basic": 12},
    }
    assert routing["none_right"] == 0.0
    cheap = routing["cheapest_right"]
    assert cheap["mean"] == 1.0 and cheap["chosen"] == {"tog": 18, "basic": 12}
    assert cheap["cost"] == pytest.approx(0.0064)
    groups = routing["by_group"]["question_type"]
    assert groups["multi-hop"]["best_single"]["method"] == "tog"
    assert groups["single-hop"]["best_single"]["method"] == "basic"
    for value, n in (("multi-hop", 18), ("single-hop", 12)):
        assert groups[value]["n"] == n and groups[value]["headroom"]["mean"] == 0.0


def test_the_learned_per_type_rule_is_right_held_out(routing: dict) -> None:
    rule = routing["learned_rule"]
    assert rule["feature"] == "question_type"
    rows = [(r["value"], r["method"], r["n"], r["mean"], r["fallback"]) for r in rule["rule"]]
    assert rows == [("multi-hop", "tog", 18, 1.0, False), ("single-hop", "basic", 12, 1.0, False)]
    assert rule["folds"] == 5 and rule["folds_by"] == "cluster"
    assert rule["chosen_per_fold"] == {"question_type": 5}
    assert rule["held_out"]["mean"] == 1.0 >= 0.9
    assert rule["gain"]["mean"] == pytest.approx(0.4)
    assert rule["cost"] == pytest.approx(0.0064) and rule["best_single_cost"] == 0.01


def test_the_router_s_regret_and_confusion_equal_the_hand_computed_ones(routing: dict) -> None:
    agent = routing["routers"]["agent"]
    # per index: q1 (Who, multi) -> tog right; q2, q3 (multi) -> basic wrong; q4 (Who,
    # single) -> tog wrong; q5 (single) -> basic right, but wrong on k0
    assert agent["n"] == 30 and agent["routes_known"] == 30
    assert agent["mean"]["mean"] == pytest.approx(11 / 30)
    assert agent["oracle"] == 1.0 and agent["best_single"] == {"method": "tog", "mean": 0.6}
    assert agent["regret"]["mean"] == pytest.approx(19 / 30)
    assert agent["vs_best_single"]["mean"] == pytest.approx(11 / 30 - 0.6)
    assert agent["vs_direct"]["mean"] == pytest.approx(-1 / 30)
    assert agent["confusion"] == {
        "basic": {
            "chosen": 18,
            "share": 0.6,
            "mean": pytest.approx(5 / 18),
            "right": 5,
            "wrong": 13,
            "wrong_other_right": 12,
            "best": {"tog": 12, "basic": 6},
            "direct_mean": pytest.approx(6 / 18),
        },
        "tog": {
            "chosen": 12,
            "share": 0.4,
            "mean": 0.5,
            "right": 6,
            "wrong": 6,
            "wrong_other_right": 6,
            "best": {"basic": 6, "tog": 6},
            "direct_mean": 0.5,
        },
    }
    expected = sorted(f"{k}-{q}" for k in KEYS for q in ("q2", "q3", "q4"))
    assert sorted(agent["misrouted"]) == expected
    assert agent["cost"] == pytest.approx(0.002)


def test_routers_are_named_or_known_by_their_routes() -> None:
    records = _records()
    assert routers_of(records) == ["agent"]
    assert routers_of(records, ["local"]) == ["local", "agent"]
    plain = [r for r in records if r.method != "agent"]
    named = routing_summary(plain, ["tog", "basic", "local"], ["correctness"], routers=["local"])
    assert named is not None and named["methods"] == ["tog", "basic"]
    # local routes nothing: its confusion table has only the unknown route
    assert named["routers"]["local"]["confusion"]["(none)"]["chosen"] == 30
    assert named["routers"]["local"]["routes_known"] == 0
    # one method left: nothing to route between
    assert routing_summary(plain, ["tog", "local"], ["correctness"], routers=["local"]) is None


def test_question_features_are_known_before_answering() -> None:
    r = _record("k0", "k0-q1", "multi-hop", "From whom does Maren buy whale oil?", "tog")
    assert question_features(r, ["question_type", "lang"]) == {
        "question_type": "multi-hop",
        "lang": "(none)",
        "length": "medium (7-12 words)",
        "wh": "who",
        "entities": "unknown",
    }
    two = r.model_copy(update={"linked_entities": 3, "question": "Why " + "very " * 12})
    assert question_features(two, [])["entities"] == "2+"
    assert question_features(two, [])["length"] == "long (13+ words)"
    assert question_features(two, [])["wh"] == "why"


def test_the_terminal_line_and_the_report_section(routing: dict) -> None:
    line = routing_line({"routing": routing})
    assert line is not None
    assert line.startswith(
        "routing (correctness, 30 questions): oracle 1.00 vs best single tog 0.60, headroom +0.40 ["
    )
    assert "; agent regret 0.63 [" in line
    assert "; learned rule (by question_type) held-out 1.00, +0.40 [" in line
    assert line.endswith(" over tog.")
    assert routing_line({}) is None and routing_line({"routing": None}) is None

    records = _records()
    methods = ["tog", "basic", "local", "agent"]
    meta = {"methods": methods, "metrics": ["correctness"], "index_keys": KEYS}
    detailed = detailed_results(records, methods, meta, keep_intermediate=False)
    summary = {"metadata": meta, **summarize(records, methods, ["correctness"]), "routing": routing}
    data = page_data(detailed, summary)
    assert data.routing is not None and data.routing.line == line
    (agent,) = data.routing.routers
    assert [(c.route, c.chosen, c.wrong_other_right) for c in agent.routes] == [
        ("basic", 18, 12),
        ("tog", 12, 6),
    ]
    html = render_page(data)
    assert 'id="routing"' in html and 'href="#routing"' in html
    assert "Router agent" in html and "Misrouted (18)" in html
    assert "<th>multi-hop</th><td>tog</td>" in html
    # an older summary: no section, no link
    del summary["routing"]
    assert page_data(detailed, summary).routing is None
    assert 'id="routing"' not in render_page(page_data(detailed, summary))


def test_the_plan_says_how_many_questions_show_a_headroom(routing: dict) -> None:
    from gtog.eval.results._plan import Assumptions, plan_rows
    from gtog.eval.results._power import questions_needed

    records = _records()
    labels = Clusters.of("index_key").labels(records)
    summary = summarize(records, ["tog", "basic", "local"], ["correctness"])
    summary["routing"] = routing
    rows, _ = plan_rows(0.2, summary, Assumptions())
    row = rows[0]  # the headroom first: the question of this study
    assert (row.metric, row.pair, row.n, row.clusters) == (
        "correctness headroom",
        "oracle vs tog",
        30,
        6,
    )
    icc = max(0.0, routing["headroom"]["icc"] or 0.0)
    need = questions_needed(0.2, discordance=0.4, cluster_size=5.0, icc=icc)
    assert row.questions == need.questions and row.spread == "0.40"
    assert len({labels[q] for q in labels}) == 6
    assert [r.pair for r in rows[1:]] == ["tog vs basic", "tog vs local", "basic vs local"]


def test_a_graded_judge_s_scores_are_read_on_0_to_1() -> None:
    graded = []
    for r in _records():
        if r.method == "agent":
            continue
        score = r.judgements["correctness"].score
        # 1-5: a right answer 5, a wrong one 2 (0.25 on 0-1: wrong)
        j = Judgement(score=5 if score else 2, scale=[1, 5])
        graded.append(r.model_copy(update={"judgements": {"correctness": j}}))
    out = routing_summary(graded, ["tog", "basic", "local"], ["correctness"])
    assert out is not None
    assert out["oracle"]["mean"] == 1.0 and out["best_single"]["mean"] == pytest.approx(0.7)
    assert out["only_one_right"]["by_method"] == {"tog": 18, "basic": 12}
