"""Step output comparison, best-assignment matching and the steps_score rules."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gtog.qa._assignment import best_assignment
from gtog.qa._semantics import GE6
from gtog.qa._steps import compare_step_outputs, match_steps, steps_score

SPARQL = "application/sparql-results+json"


def sparql(columns: list[str], rows: list[list[str]]) -> str:
    bindings = [
        {c: {"type": "literal", "value": v} for c, v in zip(columns, r, strict=True)} for r in rows
    ]
    return json.dumps({"head": {"vars": columns}, "results": {"bindings": bindings}})


def docs(*ids: str) -> str:
    return json.dumps([{"id": i, "text": f"text of {i}"} for i in ids])


def step(
    name: str, output: Any, sid: str = "", status: str = "success", **extra: Any
) -> dict[str, Any]:
    return {"name": name, "id": sid or name, "status": status, "output": output, **extra}


def test_sparql_comparison_uses_step_flags() -> None:
    ref = {
        "name": "q",
        "output": sparql(["a"], [["1"], ["2"]]),
        "output_media_type": SPARQL,
        "ordered": True,
        "required_columns": ["a"],
    }
    assert compare_step_outputs(ref, step("q", sparql(["x"], [["1"], ["2"]]))) == 1.0
    assert compare_step_outputs(ref, step("q", sparql(["x"], [["2"], ["1"]]))) == 0.0
    ref_no_dupes = {**ref, "ordered": False, "ignore_duplicates": False}
    assert (
        compare_step_outputs(ref_no_dupes, step("q", sparql(["x"], [["1"], ["2"], ["2"]]))) == 0.0
    )


def test_sparql_comparison_of_malformed_output_is_zero() -> None:
    ref = {"name": "q", "output": sparql(["a"], [["1"]]), "output_media_type": SPARQL}
    assert compare_step_outputs(ref, step("q", "Error: not JSON")) == 0.0


def test_json_media_type_compares_parsed_values() -> None:
    ref = {"name": "t", "output": '{"a": 1, "b": [1, 2]}', "output_media_type": "application/json"}
    assert compare_step_outputs(ref, step("t", '{"b": [1, 2],   "a": 1}')) == 1.0
    assert compare_step_outputs(ref, step("t", '{"b": [2, 1], "a": 1}')) == 0.0
    assert compare_step_outputs(ref, step("t", "{broken")) == 0.0


def test_retrieval_is_scored_by_recall_at_k_of_document_ids() -> None:
    ref = {"name": "retrieval", "output": docs("d1", "d2", "d3")}
    act = step("retrieval", docs("d1", "x", "d2"), args={"k": 2})
    assert compare_step_outputs(ref, act) == 0.5  # 1 hit over min(2, 3)
    assert compare_step_outputs(ref, {**act, "args": {"k": 1}}) == 1.0  # over min(1, 3)
    assert compare_step_outputs(ref, {**act, "args": {}}) == 2 / 3  # k defaults to all


def test_other_steps_need_exact_output() -> None:
    ref = {"name": "calc", "output": "42"}
    assert compare_step_outputs(ref, step("calc", "42")) == 1.0
    assert compare_step_outputs(ref, step("calc", "42 ")) == 0.0
    assert compare_step_outputs(ref, {"name": "calc", "status": "error", "error": "x"}) == 0.0


def test_best_assignment_beats_greedy_first_hit() -> None:
    # Greedy takes column 1 for row 0 (its first hit) and leaves row 1 unmatched.
    assert best_assignment([[1.0, 1.0], [0.0, 1.0]]) == [0, 1]
    assert best_assignment([[0.0, 0.0]]) == [None]
    assert best_assignment([[1.0, 1.0]]) == [1]  # ties go to the latest step
    assert best_assignment([[0.5], [1.0]]) == [None, 0]


def test_group_matching_uses_best_assignment() -> None:
    # Reference 0 matches both actual steps, reference 1 only the later one. Taking the
    # latest hit first (graphrag-eval's greedy order) would leave reference 1 unmatched.
    group = [
        {
            "name": "q",
            "output": sparql(["a"], [["1"]]),
            "output_media_type": SPARQL,
            "required_columns": ["a"],
        },
        {
            "name": "q",
            "output": sparql(["a", "b"], [["1", "3"]]),
            "output_media_type": SPARQL,
            "required_columns": ["a", "b"],
        },
    ]
    actual = [
        step("q", sparql(["a"], [["1"]]), "s1"),
        step("q", sparql(["a", "b"], [["1", "3"]]), "s2"),
    ]
    matches = match_steps([group], actual)
    assert {(m.reference_index, m.actual_index) for m in matches} == {(0, 0), (1, 1)}
    assert steps_score([group], matches) == 1.0


def test_steps_score_rules() -> None:
    retrieval_ref = {"name": "retrieval", "output": docs("d1", "d2")}
    calc_ref = {"name": "calc", "output": "7"}
    # 1. no match -> 0
    assert steps_score([[calc_ref]], match_steps([[calc_ref]], [step("calc", "8")])) == 0.0
    # 2. retrieval in the last group -> recall@k
    actual = [step("retrieval", docs("d1", "z"), args={"k": 2})]
    assert steps_score([[retrieval_ref]], match_steps([[retrieval_ref]], actual)) == 0.5
    # 3. otherwise matched steps / group size
    group = [calc_ref, {"name": "calc", "output": "9"}]
    assert steps_score([group], match_steps([group], [step("calc", "7")])) == 0.5
    assert steps_score([], []) == 0.0


def test_only_successful_steps_match() -> None:
    ref = {"name": "calc", "output": "7"}
    assert match_steps([[ref]], [step("calc", "7", status="error")]) == []


def test_earlier_groups_match_steps_before_the_later_group() -> None:
    first = {"name": "find", "output": "x"}
    last = {"name": "calc", "output": "7"}
    actual = [step("find", "x", "f1"), step("calc", "7", "c1"), step("find", "x", "f2")]
    matches = match_steps([[first], [last]], actual)
    by_group = {m.group: m.actual_index for m in matches}
    assert by_group == {1: 1, 0: 0}  # f2 ran after the last group's match


@pytest.mark.parametrize("bad", ["[1, 2]", '{"id": "d1"}', "nope"])
def test_malformed_retrieval_output_scores_zero(bad: str) -> None:
    ref = {"name": "retrieval", "output": docs("d1")}
    assert compare_step_outputs(ref, step("retrieval", bad)) == 0.0


def test_absent_or_empty_required_columns_require_no_column() -> None:
    ref = {"name": "q", "output": sparql(["a", "b"], [["1", "2"]]), "output_media_type": SPARQL}
    other = step("q", sparql(["z"], [["9"], ["8"]]))
    assert compare_step_outputs(ref, other) == 1.0
    assert compare_step_outputs({**ref, "required_columns": []}, other) == 1.0
    assert compare_step_outputs(ref, step("q", sparql(["z"], []))) == 0.0
    assert compare_step_outputs({**ref, "required_columns": ["a"]}, other) == 0.0


def test_unknown_media_type_compares_as_text() -> None:
    ref = {"name": "iri_discovery", "output": "urn:uuid:s1", "output_media_type": "text/uri"}
    assert compare_step_outputs(ref, step("iri_discovery", "urn:uuid:s1")) == 1.0
    assert compare_step_outputs(ref, step("iri_discovery", "urn:uuid:s2")) == 0.0


def test_a_reference_step_without_output_matches_nothing_under_seed_rules() -> None:
    ref = {"name": "retrieve_time_series", "args": {"mrid": "m1"}}
    act = step("retrieve_time_series", "[]", args={"mrid": "m1"})
    assert compare_step_outputs(ref, act) == 0.0
    assert compare_step_outputs(ref, act, GE6) == 1.0


def test_steps_with_other_statuses_are_not_matched() -> None:
    ref = {"name": "calc", "output": "7"}
    for status in ("timeout", "cancelled", "error"):
        assert match_steps([[ref]], [step("calc", "7", status=status)], GE6) == []
    assert len(match_steps([[ref]], [{"name": "calc", "output": "7"}])) == 1  # default success


# -- graphrag-eval 6.x rules ------------------------------------------------------------------


def test_ge6_steps_score_is_the_mean_over_groups() -> None:
    groups = [[{"name": "find", "output": "x"}], [{"name": "calc", "output": "7"}]]
    actual = [step("find", "x", "f"), step("calc", "7", "c")]
    assert steps_score(groups, match_steps(groups, actual, GE6), GE6) == 1.0
    wrong_find = [step("find", "y", "f"), step("calc", "7", "c")]
    assert steps_score(groups, match_steps(groups, wrong_find, GE6), GE6) == 0.5
    assert steps_score(groups, match_steps(groups, wrong_find)) == 0.5  # seed: the mean too


def test_ge6_matching_stops_at_the_first_group_not_fully_matched() -> None:
    groups = [
        [{"name": "find", "output": "x"}],
        [{"name": "calc", "output": "7"}, {"name": "calc", "output": "8"}],
    ]
    actual = [step("find", "x", "f"), step("calc", "7", "c")]
    ge6 = match_steps(groups, actual, GE6)
    assert [(m.group, m.actual_index) for m in ge6] == [(1, 1)]
    assert steps_score(groups, ge6, GE6) == (0 + 0.5) / 2
    seed = match_steps(groups, actual)
    assert sorted((m.group, m.actual_index) for m in seed) == [(0, 0), (1, 1)]
    assert steps_score(groups, seed) == (1 + 0.5) / 2  # a partly matched group goes on


def test_the_matching_is_the_best_over_all_groups_together() -> None:
    """Issue 31: a retrieval step that fits the first group better. Matching the last
    group alone first takes it there (2/3) and leaves the first group nothing (0.333);
    graphrag-eval's greedy first hit scores 0.75; the best over both groups is 0.75."""
    groups = [
        [{"name": "retrieval", "output": docs("d1")}],
        [{"name": "retrieval", "output": docs("d1", "d2", "d3")}],
    ]
    actual = [
        step("calc", "7", "c1"),
        step("retrieval", docs("d1", "d3"), "r1", args={"k": 3}),  # 1 for group 0, 2/3 for 1
        step("retrieval", docs("d1"), "r2", args={"k": 2}),  # 1 for group 0, 1/2 for 1
    ]
    matches = match_steps(groups, actual)
    assert sorted((m.group, m.actual_index, m.score) for m in matches) == [(0, 1, 1.0), (1, 2, 0.5)]
    assert steps_score(groups, matches) == 0.75
    assert steps_score(groups, match_steps(groups, actual, GE6), GE6) == 0.75


def test_ge6_steps_of_other_names_match_by_equal_output() -> None:
    ref = {"name": "lookup", "output": "Oslo"}
    assert compare_step_outputs(ref, step("search", "Oslo"), GE6) == 1.0
    assert len(match_steps([[ref]], [step("search", "Oslo")], GE6)) == 1
    assert match_steps([[ref]], [step("search", "Oslo")]) == []  # seed: same name only


def test_ge6_iri_discovery() -> None:
    ref = {"name": "iri_discovery", "output": "urn:s1", "output_media_type": "text/uri"}
    found = json.dumps(
        {"head": {"vars": ["iri"]}, "results": {"bindings": [{"iri": uri_term("urn:s1")}]}}
    )
    assert compare_step_outputs(ref, step("autocomplete_search", found), GE6) == 1.0
    as_literal = found.replace('"uri"', '"literal"')
    assert compare_step_outputs(ref, step("autocomplete_search", as_literal), GE6) == 0.0
    assert compare_step_outputs(ref, step("sparql_query", "... urn:s1 ..."), GE6) == 1.0
    assert compare_step_outputs(ref, step("other", "urn:s1"), GE6) == 0.0
    with pytest.raises(json.JSONDecodeError):  # graphrag-eval 6.6.1 raises too
        compare_step_outputs(ref, step("autocomplete_search", "not json"), GE6)


def test_ge6_retrieval_uses_graphrag_eval_recall() -> None:
    ref = {"name": "retrieval", "output": docs("d1", "d2")}
    act = step("retrieval", docs("d2"), args={"k": 1})
    assert compare_step_outputs(ref, act, GE6) == 0.0
    assert compare_step_outputs(ref, act) == 1.0


def test_ge6_sparql_needs_the_sparql_query_name() -> None:
    ref = {
        "name": "q",
        "output": sparql(["a"], [["1"]]),
        "output_media_type": SPARQL,
        "required_columns": ["a"],
    }
    act = step("q", sparql(["b"], [["1"]]))
    assert compare_step_outputs(ref, act) == 1.0
    assert compare_step_outputs(ref, act, GE6) == 0.0  # text comparison: outputs differ
    named = ({**ref, "name": "sparql_query"}, {**act, "name": "sparql_query"})
    assert compare_step_outputs(*named, GE6) == 1.0
    with pytest.raises(KeyError):  # graphrag-eval 6.6.1 requires required_columns
        compare_step_outputs(
            {k: v for k, v in named[0].items() if k != "required_columns"}, named[1], GE6
        )


def test_ge6_sparql_output_that_is_not_json_scores_false() -> None:
    ref = {"name": "sparql_query", "output": sparql(["a"], [["1"]]), "output_media_type": SPARQL}
    score = compare_step_outputs(ref, step("sparql_query", "Error: timeout"), GE6)
    assert score is False  # graphrag-eval 6.6.1's value, not 0.0


def test_empty_groups_are_skipped_by_the_seed_rules_and_raise_under_ge6() -> None:
    calc: list[dict[str, Any]] = [{"name": "calc", "output": "7"}]
    actual = [step("calc", "7")]
    matches = match_steps([[], calc], actual)
    assert [(m.group, m.actual_index) for m in matches] == [(1, 0)]
    assert steps_score([[], calc], matches) == 1.0
    assert [m.group for m in match_steps([calc, []], actual)] == [0]  # the empty one skipped
    with pytest.raises(ValueError):  # min() of no matches, as in graphrag-eval 6.6.1
        match_steps([calc, []], actual, GE6)
    with pytest.raises(ZeroDivisionError):
        steps_score([calc, []], [], GE6)


def test_ge6_matching_is_greedy_latest_step_first() -> None:
    """graphrag-eval 6.6.1 takes the latest step scoring above 0 for each reference
    step (last reference step first), even where another choice would score more."""
    ref = [[{"name": "retrieval", "output": docs("d1", "d2")}, {"name": "calc", "output": "7"}]]
    actual = [
        step("retrieval", docs("d1", "d2"), "full", args={"k": 2}),
        step("retrieval", docs("d1"), "half", args={"k": 2}),
        step("calc", "7", "c"),
    ]
    matches = match_steps(ref, actual, GE6)
    assert [(m.reference_index, actual[m.actual_index]["id"]) for m in matches] == [
        (1, "c"),
        (0, "half"),
    ]
    assert steps_score(ref, matches, GE6) == (0.5 + 1) / 2
    best = match_steps(ref, actual)  # seed rules: the best assignment
    assert {actual[m.actual_index]["id"] for m in best} == {"full", "c"}


def uri_term(value: str) -> dict[str, str]:
    return {"type": "uri", "value": value}
