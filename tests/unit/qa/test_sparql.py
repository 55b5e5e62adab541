"""SPARQL result comparison: term types, numbers, row semantics, column matching."""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gtog.qa._sparql import (
    compare_sparql_results,
    match_columns,
    match_columns_bruteforce,
    match_sparql_columns,
)

XSD = "http://www.w3.org/2001/XMLSchema#"


def uri(v: str) -> dict[str, str]:
    return {"type": "uri", "value": v}


def lit(v: str, datatype: str | None = None, lang: str | None = None) -> dict[str, str]:
    term = {"type": "literal", "value": v}
    if datatype:
        term["datatype"] = datatype
    if lang:
        term["xml:lang"] = lang
    return term


def result(columns: list[str], rows: list[list[dict[str, str] | None]]) -> dict[str, Any]:
    bindings = [{c: t for c, t in zip(columns, row, strict=True) if t is not None} for row in rows]
    return {"head": {"vars": columns}, "results": {"bindings": bindings}}


REF = result(["s", "name"], [[uri("u:1"), lit("A")], [uri("u:2"), lit("B")]])


def test_renamed_and_reordered_columns_match() -> None:
    actual = result(
        ["label", "x", "iri"], [[lit("B"), lit("9"), uri("u:2")], [lit("A"), lit("8"), uri("u:1")]]
    )
    assert compare_sparql_results(REF, actual, required_columns=["s", "name"]) == 1.0
    assert match_sparql_columns(REF, actual) == {"s": "iri", "name": "label"}


def test_json_strings_are_accepted() -> None:
    assert compare_sparql_results(json.dumps(REF), json.dumps(REF)) == 1.0


def test_required_columns_restrict_the_comparison() -> None:
    reference = result(["s", "name"], [[uri("u:1"), lit("A")]])
    actual = result(["s"], [[uri("u:1")]])
    assert compare_sparql_results(reference, actual, required_columns=["s"]) == 1.0
    assert compare_sparql_results(reference, actual) == 0.0  # all columns required


def test_rdf_term_type_is_respected() -> None:
    reference = result(["x"], [[uri("http://a")]])
    assert compare_sparql_results(reference, result(["x"], [[lit("http://a")]])) == 0.0
    tagged = result(["x"], [[lit("chat", lang="fr")]])
    assert compare_sparql_results(tagged, result(["x"], [[lit("chat", lang="FR")]])) == 1.0
    assert compare_sparql_results(tagged, result(["x"], [[lit("chat", lang="en")]])) == 0.0
    assert compare_sparql_results(tagged, result(["x"], [[lit("chat")]])) == 0.0
    plain = result(["x"], [[lit("v")]])
    assert compare_sparql_results(plain, result(["x"], [[lit("v", XSD + "string")]])) == 1.0
    assert compare_sparql_results(plain, result(["x"], [[lit("v", XSD + "token")]])) == 0.0


def test_numbers_compare_within_1e8_across_numeric_types() -> None:
    reference = result(["n"], [[lit("0.3", XSD + "double")]])
    close = result(["n"], [[lit(repr(0.1 + 0.2), XSD + "decimal")]])
    assert compare_sparql_results(reference, close) == 1.0
    near = result(["n"], [[lit("0.300000005", XSD + "float")]])
    assert compare_sparql_results(reference, near) == 1.0
    far = result(["n"], [[lit("0.3000001", XSD + "double")]])
    assert compare_sparql_results(reference, far) == 0.0
    integer = result(["n"], [[lit("3", XSD + "integer")]])
    assert compare_sparql_results(integer, result(["n"], [[lit("3.0", XSD + "double")]])) == 1.0
    assert compare_sparql_results(integer, result(["n"], [[lit("3")]])) == 0.0  # plain string


def test_numbers_have_no_relative_tolerance() -> None:
    # "up to 8 decimal points": absolute 1e-8, also for large values.
    big = result(["n"], [[lit("10000000000", XSD + "double")]])
    assert compare_sparql_results(big, result(["n"], [[lit("1e10", XSD + "double")]])) == 1.0
    off = result(["n"], [[lit("10000000000.001", XSD + "double")]])
    assert compare_sparql_results(big, off) == 0.0


def test_empty_required_columns_require_no_column() -> None:
    reference = result(["s", "name"], [[uri("u:1"), lit("A")]])
    other = result(["x"], [[lit("anything")], [lit("else")]])
    assert compare_sparql_results(reference, other, []) == 1.0
    assert compare_sparql_results(reference, result(["x"], []), []) == 0.0
    assert compare_sparql_results(result(["s"], []), result(["x"], []), []) == 1.0


def test_graphrag_eval_positional_call_shape() -> None:
    # compare_sparql_results(reference, actual, required_vars, results_are_ordered,
    #                        ignore_duplicates)
    swapped = result(["s", "name"], [[uri("u:2"), lit("B")], [uri("u:1"), lit("A")]])
    assert compare_sparql_results(REF, swapped, ["s", "name"], True) == 0.0
    assert compare_sparql_results(REF, swapped, ["s", "name"], False, False) == 1.0


def test_booleans_and_ask_results() -> None:
    reference = result(["b"], [[lit("true", XSD + "boolean")]])
    assert compare_sparql_results(reference, result(["b"], [[lit("1", XSD + "boolean")]])) == 1.0
    assert compare_sparql_results({"boolean": True}, {"head": {}, "boolean": True}) == 1.0
    assert compare_sparql_results({"boolean": True}, {"head": {}, "boolean": False}) == 0.0
    assert compare_sparql_results({"boolean": True}, REF) == 0.0


def test_unbound_values_must_match_unbound() -> None:
    reference = result(["a", "b"], [[uri("u:1"), None]])
    assert compare_sparql_results(reference, result(["a", "b"], [[uri("u:1"), None]])) == 1.0
    assert compare_sparql_results(reference, result(["a", "b"], [[uri("u:1"), lit("x")]])) == 0.0


def test_ordered_results_need_the_same_row_order() -> None:
    swapped = result(["s", "name"], [[uri("u:2"), lit("B")], [uri("u:1"), lit("A")]])
    assert compare_sparql_results(REF, swapped, ordered=False) == 1.0
    assert compare_sparql_results(REF, swapped, ordered=True) == 0.0
    assert compare_sparql_results(REF, REF, ordered=True) == 1.0


def test_duplicates_count_only_when_not_ignored() -> None:
    doubled = result(
        ["s", "name"], [[uri("u:1"), lit("A")], [uri("u:1"), lit("A")], [uri("u:2"), lit("B")]]
    )
    assert compare_sparql_results(REF, doubled, ignore_duplicates=True) == 1.0
    assert compare_sparql_results(REF, doubled, ignore_duplicates=False) == 0.0


def test_empty_results() -> None:
    empty_ref = result(["a"], [])
    assert compare_sparql_results(empty_ref, result(["x", "y"], [])) == 1.0
    assert compare_sparql_results(empty_ref, result([], [])) == 0.0
    assert compare_sparql_results(REF, result(["s", "name"], [])) == 0.0
    assert compare_sparql_results(empty_ref, REF) == 0.0


def test_more_required_columns_than_actual_columns() -> None:
    assert compare_sparql_results(REF, result(["s"], [[uri("u:1")], [uri("u:2")]])) == 0.0


def test_columns_with_equal_value_sets_are_told_apart_by_rows() -> None:
    # Both actual columns hold {1, 2}; only one pairing reproduces the reference rows.
    reference = result(["a", "b"], [[lit("1"), lit("x")], [lit("2"), lit("y")]])
    actual = result(
        ["p", "q", "r"],
        [[lit("2"), lit("1"), lit("x")], [lit("1"), lit("2"), lit("y")]],
    )
    assert match_sparql_columns(reference, actual) == {"a": "q", "b": "r"}


def test_no_pairing_reproduces_the_rows() -> None:
    reference = result(["a", "b"], [[lit("1"), lit("x")], [lit("2"), lit("y")]])
    actual = result(["p", "q"], [[lit("1"), lit("y")], [lit("2"), lit("x")]])
    assert compare_sparql_results(reference, actual) == 0.0


# -- properties -----------------------------------------------------------------------------

values = st.sampled_from(["a", "b", "c", "1", "2"])
tables = st.integers(min_value=1, max_value=4).flatmap(
    lambda n_cols: st.lists(st.tuples(*[values] * n_cols), min_size=1, max_size=6)
)


def as_result(rows: list[tuple[str, ...]], names: list[str]) -> dict[str, Any]:
    return result(names, [[lit(v) for v in row] for row in rows])


@settings(max_examples=150, deadline=None)
@given(rows=tables, seed=st.integers(0, 10_000), extra=st.integers(0, 2))
def test_column_order_and_extra_columns_do_not_matter(
    rows: list[tuple[str, ...]], seed: int, extra: int
) -> None:
    rng = random.Random(seed)
    n = len(rows[0])
    reference = as_result(rows, [f"r{i}" for i in range(n)])
    widened = [(*row, *(rng.choice("xyz") for _ in range(extra))) for row in rows]
    order = list(range(n + extra))
    rng.shuffle(order)
    actual_rows = [tuple(row[i] for i in order) for row in widened]
    actual = as_result(actual_rows, [f"c{i}" for i in range(n + extra)])
    for ordered in (False, True):
        # Extra columns may split duplicate rows, so multiset semantics are not invariant.
        assert compare_sparql_results(reference, actual, ordered=ordered) == 1.0


@settings(max_examples=150, deadline=None)
@given(rows=tables, seed=st.integers(0, 10_000))
def test_row_order_does_not_matter_when_unordered(rows: list[tuple[str, ...]], seed: int) -> None:
    names = [f"r{i}" for i in range(len(rows[0]))]
    shuffled = list(rows)
    random.Random(seed).shuffle(shuffled)
    reference, actual = as_result(rows, names), as_result(shuffled, names)
    for ignore_duplicates in (True, False):
        assert compare_sparql_results(reference, actual, ignore_duplicates=ignore_duplicates) == 1.0


@settings(max_examples=150, deadline=None)
@given(rows=tables, picks=st.lists(st.integers(0, 100), min_size=1, max_size=4))
def test_duplicates_do_not_matter_when_ignored(
    rows: list[tuple[str, ...]], picks: list[int]
) -> None:
    names = [f"r{i}" for i in range(len(rows[0]))]
    duplicated = list(rows)
    for p in picks:
        duplicated.append(rows[p % len(rows)])
    reference, actual = as_result(rows, names), as_result(duplicated, names)
    assert compare_sparql_results(reference, actual, ignore_duplicates=True) == 1.0
    assert compare_sparql_results(reference, actual, ordered=True, ignore_duplicates=True) == 1.0
    assert compare_sparql_results(reference, actual, ignore_duplicates=False) == 0.0


@settings(max_examples=200, deadline=None)
@given(
    ref=st.lists(st.tuples(values, values), min_size=1, max_size=5),
    act=st.lists(st.tuples(values, values, values), min_size=1, max_size=5),
    semantics=st.sampled_from(["ordered", "ordered_set", "multiset", "set"]),
)
def test_pruned_matcher_agrees_with_brute_force(
    ref: list[tuple[str, ...]], act: list[tuple[str, ...]], semantics: Any
) -> None:
    fast = match_columns(list(ref), list(act), semantics, try_all_up_to=0)  # the pruned search
    slow = match_columns_bruteforce(list(ref), list(act), semantics)
    assert (fast is None) == (slow is None)
    assert (match_columns(list(ref), list(act), semantics) is None) == (slow is None)
