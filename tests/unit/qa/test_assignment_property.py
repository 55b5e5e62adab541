"""The default rules' step matching is the best one for their own score (issue 26, point 2;
issue 31, item 10).

The default `steps_score` is the mean over the reference groups of each group's matched
score over its size; a matching pairs reference steps with distinct successful actual
steps of the same name, each group's steps before the earliest step of the next group's
match, and a group without any match ends it. Checked against an exhaustive search over
every such matching of small multi-group cases, and against graphrag-eval's greedy first
hit (latest actual step first, stopping at the first group not fully matched) scored by
the same rules, which it must never fall below.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gtog.qa._assignment import best_assignment
from gtog.qa._steps import _Search, compare_step_outputs, match_steps, steps_score

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
    groups = draw(st.lists(st.lists(_step(True), min_size=1, max_size=3), min_size=1, max_size=3))
    actual = draw(st.lists(_step(False), max_size=6))
    for i, step in enumerate(actual):
        step["id"] = f"a{i}"
    return groups, actual


def _score(reference: dict[str, Any], actual: dict[str, Any]) -> float:
    if reference["name"] != actual["name"] or actual["status"] != "success":
        return 0.0
    return compare_step_outputs(reference, actual)


def _exact(value: float) -> Fraction:
    return Fraction(value).limit_denominator(100)


def _exhaustive_best(groups: list[list[dict[str, Any]]], actual: list[dict[str, Any]]) -> Fraction:
    """The highest mean over the groups of every matching the rules allow (exact)."""
    scores = [[[_exact(_score(r, a)) for a in actual] for r in group] for group in groups]

    def assignments(k: int, bound: int) -> list[tuple[Fraction, int]]:
        """(sum, earliest step) of every non-empty assignment of group k before `bound`."""
        out: list[tuple[Fraction, int]] = []

        def walk(i: int, used: tuple[int, ...], total: Fraction) -> None:
            if i == len(groups[k]):
                if used:
                    out.append((total, min(used)))
                return
            walk(i + 1, used, total)
            for j in range(bound):
                if scores[k][i][j] > 0 and j not in used:
                    walk(i + 1, (*used, j), total + scores[k][i][j])

        walk(0, (), Fraction(0))
        return out

    def best(k: int, bound: int) -> Fraction:
        if k < 0:
            return Fraction(0)
        options = [Fraction(0)]  # no match: the matching ends here
        for total, earliest in assignments(k, bound):
            options.append(total / len(groups[k]) + best(k - 1, earliest))
        return max(options)

    return best(len(groups) - 1, len(actual)) / len(groups)


def _greedy(groups: list[list[dict[str, Any]]], actual: list[dict[str, Any]]) -> float:
    """graphrag-eval's greedy first hit, scored by the default rules (the mean)."""
    totals = [0.0] * len(groups)
    bound = len(actual)
    for k in range(len(groups) - 1, -1, -1):
        used: list[int] = []
        for reference in reversed(groups[k]):
            for j in range(bound - 1, -1, -1):
                score = _score(reference, actual[j])
                if j not in used and score > 0:
                    used.append(j)
                    totals[k] += score
                    break
        if len(used) != len(groups[k]):
            break
        bound = min(used)
    return sum(t / len(g) for t, g in zip(totals, groups, strict=True)) / len(groups)


@settings(max_examples=400, deadline=None)
@given(_cases())
def test_the_match_is_the_best_over_all_groups(
    case: tuple[list[list[dict[str, Any]]], list[dict[str, Any]]],
) -> None:
    groups, actual = case
    matches = match_steps(groups, actual)
    score = steps_score(groups, matches)
    best = _exhaustive_best(groups, actual)
    assert abs(score - best) < 1e-9
    if len(groups) > 1:  # the other search (for groups of many steps) finds it too
        total, _ = _Search(groups, actual, subset_rows=0).best(len(groups) - 1, len(actual))
        assert abs(total / len(groups) - best) < 1e-9
    assert score >= _greedy(groups, actual) - 1e-12
    # a valid matching: distinct successful steps, the groups in order
    assert len({m.actual_index for m in matches}) == len(matches)
    for m in matches:
        assert _score(groups[m.group][m.reference_index], actual[m.actual_index]) == m.score > 0
    for m in matches:
        later = [n.actual_index for n in matches if n.group > m.group]
        assert all(m.actual_index < j for j in later)


def _best_total(exact: list[list[Fraction]]) -> Fraction:
    """The highest total of any assignment of rows to distinct columns (exhaustive)."""

    def best(i: int, used: frozenset[int]) -> Fraction:
        if i == len(exact):
            return Fraction(0)
        options = [best(i + 1, used)]
        options += [
            v + best(i + 1, used | {j}) for j, v in enumerate(exact[i]) if v > 0 and j not in used
        ]
        return max(options)

    return best(0, frozenset())


def _total(exact: list[list[Fraction]], assignment: list[int | None]) -> Fraction:
    return sum((exact[i][c] for i, c in enumerate(assignment) if c is not None), Fraction(0))


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

    assert _total(exact, assignment) == _best_total(exact)


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
    from gtog.qa._assignment import _search

    columns = list(range(7))
    hungarian = best_assignment(rows)
    searched = _search(rows, columns, 1e-9 / 8)

    def total(assignment: list[int | None]) -> float:
        return sum(rows[i][c] for i, c in enumerate(assignment) if c is not None)

    assert abs(total(hungarian) - total(searched)) < 1e-9


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from((0.0, 0.0, 0.25, 0.5, 1.0)), min_size=12, max_size=12),
        min_size=2,
        max_size=3,
    )
)
def test_a_few_rows_over_many_columns_keep_the_best_total(rows: list[list[float]]) -> None:
    """More columns than rows squared: only each row's best few are searched."""
    assignment = best_assignment(rows)
    exact = [[Fraction(v) for v in row] for row in rows]

    assert _total(exact, assignment) == _best_total(exact)
