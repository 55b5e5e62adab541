"""Step output comparison, best-assignment matching and the steps_score rules."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gtog.qa.assignment import best_assignment
from gtog.qa.steps import compare_step_outputs, match_steps, steps_score

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
    ref = {"name": "retrieval", "output": docs("d1", "d2")}
    act = step("retrieval", docs("d1", "x", "d2"), args={"k": 2})
    assert compare_step_outputs(ref, act) == 0.5
    assert compare_step_outputs(ref, {**act, "args": {}}) == 1.0  # k defaults to all


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
        {"name": "q", "output": sparql(["a"], [["1"]]), "output_media_type": SPARQL},
        {"name": "q", "output": sparql(["a", "b"], [["1", "3"]]), "output_media_type": SPARQL},
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
