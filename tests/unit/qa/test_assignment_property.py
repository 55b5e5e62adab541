"""The default rules' step matching is the best one for their own score (issue 26, point 2).

The seed's `steps_score` is the last reference group's matched score over its size, so
the best matching is a maximum-score assignment of that group's steps to distinct
successful actual steps of the same name. Checked against an exhaustive search over
every assignment, and against graphrag-eval's greedy first hit (latest actual step
first) scored by the same rules, which it must never fall below.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gtog.qa.assignment import best_assignment
from gtog.qa.steps import compare_step_outputs, match_steps, steps_score

NAMES = ("retrieval", "calc")
IDS = ("d1", "d2", "d3")


def _docs(ids: Sequence[str]) -> str:
    return json.dumps([{"id": i, "text": i} for i in ids])


@st.composite
def _step(draw: st.DrawFn, reference: bool) -> dict[str, Any]:
    name = draw(st.sampled_from(NAMES))
    if name == "retrieval":
        ids = draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=3, unique=True))
        step: dict[str, Any] = {"name": name, "output": _docs(ids)}
        if not reference:
            step["args"] = {"k": draw(st.integers(1, 3))}
    else:
        step = {"name": name, "output": draw(st.sampled_from(("7", "8")))}
    if not reference:
        step["status"] = draw(st.sampled_from(("success", "success", "success", "error")))
    return step


@st.composite
def _cases(draw: st.DrawFn) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]:
    groups = draw(st.lists(st.lists(_step(True), min_size=1, max_size=3), min_size=1, max_size=2))
    actual = draw(st.lists(_step(False), max_size=6))
    for i, step in enumerate(actual):
        step["id"] = f"a{i}"
    return groups, actual


def _score(reference: dict[str, Any], actual: dict[str, Any]) -> float:
    if reference["name"] != actual["name"] or actual["status"] != "success":
        return 0.0
    return compare_step_outputs(reference, actual)


def _exhaustive_best(group: list[dict[str, Any]], actual: list[dict[str, Any]]) -> Fraction:
    """The highest sum of match scores over every assignment of the group (exact)."""
    scores = [[Fraction(_score(r, a)).limit_denominator(100) for a in actual] for r in group]

    def best(i: int, used: frozenset[int]) -> Fraction:
        if i == len(group):
            return Fraction(0)
        options = [best(i + 1, used)]
        for j, s in enumerate(scores[i]):
            if s > 0 and j not in used:
                options.append(s + best(i + 1, used | {j}))
        return max(options)

    return best(0, frozenset())


def _greedy(group: list[dict[str, Any]], actual: list[dict[str, Any]]) -> float:
    """graphrag-eval's first hit (latest step first) for one group, under the seed's scores."""
    used: set[int] = set()
    total = 0.0
    for reference in reversed(group):
        for j in range(len(actual) - 1, -1, -1):
            score = _score(reference, actual[j])
            if j not in used and score > 0:
                used.add(j)
                total += score
                break
    return total


@settings(max_examples=300, deadline=None)
@given(_cases())
def test_the_match_is_the_best_for_the_seed_score(
    case: tuple[list[list[dict[str, Any]]], list[dict[str, Any]]],
) -> None:
    groups, actual = case
    score = steps_score(groups, match_steps(groups, actual))
    last = groups[-1]
    best = _exhaustive_best(last, actual) / len(last)
    assert Fraction(score).limit_denominator(1000) == best
    assert score >= _greedy(last, actual) / len(last) - 1e-12


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from((0.0, 0.0, 0.25, 1 / 3, 0.5, 2 / 3, 1.0)), min_size=4, max_size=4),
        min_size=1,
        max_size=4,
    ),
    st.integers(1, 4),
)
def test_best_assignment_agrees_with_exhaustive_search(rows: list[list[float]], width: int) -> None:
    scores = [row[:width] for row in rows]
    assignment = best_assignment(scores)
    columns = [c for c in assignment if c is not None]
    assert len(columns) == len(set(columns))
    assert all(c is None or scores[i][c] > 0 for i, c in enumerate(assignment))
    exact = [[Fraction(v).limit_denominator(12) for v in row] for row in scores]

    def best(i: int, used: frozenset[int]) -> Fraction:
        if i == len(exact):
            return Fraction(0)
        options = [best(i + 1, used)]
        options += [
            v + best(i + 1, used | {j}) for j, v in enumerate(exact[i]) if v > 0 and j not in used
        ]
        return max(options)

    got = sum((exact[i][c] for i, c in enumerate(assignment) if c is not None), Fraction(0))
    assert got == best(0, frozenset())


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from((0.0, 0.25, 1 / 3, 0.5, 1.0)), min_size=7, max_size=7),
        min_size=5,
        max_size=5,
    )
)
def test_the_hungarian_algorithm_agrees_with_the_search(rows: list[list[float]]) -> None:
    """Beyond 4 rows best_assignment uses the Hungarian algorithm: same best total."""
    from gtog.qa.assignment import _search

    columns = list(range(7))
    hungarian = best_assignment(rows)
    searched = _search(rows, columns, 1e-9 / 8)

    def total(assignment: list[int | None]) -> float:
        return sum(rows[i][c] for i, c in enumerate(assignment) if c is not None)

    assert abs(total(hungarian) - total(searched)) < 1e-9
