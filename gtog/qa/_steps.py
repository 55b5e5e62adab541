"""Match reference step groups to executed steps and score them (pure functions).

Reference steps come in groups: a group's steps may run in any order, after every
step of the previous group. A matching pairs reference steps with distinct successful
actual steps of the same name, each group's steps all before the earliest step matched
to the following group; a non-empty group without any match ends it (the groups before
it match nothing). Empty groups are skipped.

Seed rules (default): a SPARQL, JSON or exact-output match scores 1 and a retrieval
match scores recall@k; unknown media types compare as text. `steps_score` is the mean
over the non-empty groups of (the group's match scores / its size), and the matching is
the one with the highest `steps_score` over all groups together (searched exactly, group
by group from the last, not group by group greedily): so never below graphrag-eval's
greedy first hit scored by the same rules, whose matching is one of those searched.
Among equally good matchings, the latest steps are preferred.

`semantics="graphrag-eval-6"` delegates to `gtog.qa._ge6_steps` (graphrag-eval 6.6.1's
greedy matching and mean-over-groups score, raising where it raises).
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gtog.qa._assignment import best_assignment
from gtog.qa._ge6_steps import compare_steps_ge6, match_groups_ge6, steps_score_ge6
from gtog.qa._retrieval import recall_at_k
from gtog.qa._semantics import GE6, SEED, Semantics, check_semantics
from gtog.qa._sparql import as_json, match_sparql_columns

__all__ = [
    "JSON",
    "SPARQL_JSON",
    "StepMatch",
    "compare_step_outputs",
    "match_steps",
    "parse_contexts",
    "steps_score",
]

SPARQL_JSON = "application/sparql-results+json"
JSON = "application/json"
RETRIEVAL = "retrieval"

Step = Mapping[str, Any]


@dataclass(frozen=True)
class StepMatch:
    """Reference step `reference_index` of group `group` matched actual step `actual_index`."""

    group: int
    reference_index: int
    actual_index: int
    score: float


_as_json = as_json


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def parse_contexts(output: Any) -> list[dict[str, Any]]:
    """The documents of a retrieval step's output: a JSON list of {id, text} objects.

    Raises `ValueError` when the output is not such a list.
    """
    data = _as_json(output)
    if not isinstance(data, list) or not all(
        type(d) is dict or isinstance(d, Mapping) for d in data
    ):
        raise ValueError("retrieval output must be a JSON list of objects with 'id' and 'text'")
    return [dict(d) for d in data]


def _retrieval_k(actual: Step, retrieved: Sequence[Any]) -> int:
    args = actual.get("args") or {}
    try:
        return int(args.get("k")) if isinstance(args, Mapping) else len(retrieved)
    except (TypeError, ValueError):
        return len(retrieved)


def compare_step_outputs(reference: Step, actual: Step, semantics: Semantics = SEED) -> float:
    """Score in [0, 1] of an actual step against a reference step (see the module doc).

    Seed rules: malformed outputs score 0.0. graphrag-eval-6 rules: graphrag-eval
    6.6.1's comparison, which raises on malformed steps.
    """
    if check_semantics(semantics) == GE6:
        return compare_steps_ge6(reference, actual)
    return _compare(reference, actual)


def _compare(reference: Step, actual: Step) -> float:
    """The seed rules' comparison (see `compare_step_outputs`)."""
    if "output" not in actual or "output" not in reference:
        return 0.0
    media_type = reference.get("output_media_type")
    try:
        if media_type == SPARQL_JSON:
            mapping = match_sparql_columns(
                reference.get("output"),
                actual["output"],
                reference.get("required_columns") or [],
                bool(reference.get("ordered", False)),
                bool(reference.get("ignore_duplicates", True)),
            )
            return 0.0 if mapping is None else 1.0
        if media_type == JSON:
            return float(_as_json(reference.get("output")) == _as_json(actual["output"]))
        if reference.get("name") == actual.get("name") == RETRIEVAL:
            relevant = [d.get("id") for d in parse_contexts(reference.get("output"))]
            retrieved = [d.get("id") for d in parse_contexts(actual["output"])]
            return recall_at_k(relevant, retrieved, _retrieval_k(actual, retrieved))
    except ValueError:
        return 0.0
    return float(_as_text(reference.get("output")) == _as_text(actual["output"]))


def _succeeded(step: Step) -> bool:
    return step.get("status", "success") == "success"


def _match_one(
    group_index: int, group: Sequence[Step], actual_steps: Sequence[Step]
) -> list[StepMatch]:
    """A one-group reference: the best assignment over every step (a one-step group: the
    latest step scoring highest, without a score matrix)."""
    names = {step.get("name") for step in group}
    candidates = [
        j for j, step in enumerate(actual_steps) if _succeeded(step) and step.get("name") in names
    ]
    if len(group) == 1:
        best, best_score = None, 0.0
        for j in reversed(candidates):
            score = _compare(group[0], actual_steps[j])
            if score > best_score:
                best, best_score = j, score
                if score >= 1.0:  # no score is higher
                    break
        return [] if best is None else [StepMatch(group_index, 0, best, best_score)]
    scores = [
        [
            _compare(ref, actual_steps[j])
            if ref.get("name") == actual_steps[j].get("name")
            else 0.0
            for j in candidates
        ]
        for ref in group
    ]
    assignment = best_assignment(scores)
    return [
        StepMatch(group_index, i, candidates[c], scores[i][c])
        for i, c in enumerate(assignment)
        if c is not None
    ]


_TIE = 1e-12
"""Matchings whose scores differ by less are equally good (sums of fractions in floats)."""

_SUBSET_ROWS = 8
"""Groups of at most this many steps are searched over subsets of their steps; larger
ones by one assignment per candidate earliest step."""

_NONE = float("-inf")


def _by_earliest(
    rows: Sequence[Sequence[float]], columns: Sequence[int]
) -> tuple[list[tuple[float, int, int] | None], list[list[float]]]:
    """For each position `p` of `columns`, the best assignment of rows to distinct columns
    from `columns[p]` on that uses `columns[p]`: (its score, the row there, the other rows
    as a bit mask), None if no row scores there; and the tables `_recover` reads.

    `tables[p][mask]`: the best score of assigning exactly the rows of `mask` to distinct
    columns from `columns[p]` on (`_NONE`: impossible).
    """
    n = len(rows)
    masks = range(1 << n)
    tables: list[list[float]] = [[]] * (len(columns) + 1)
    tables[-1] = [0.0] + [_NONE] * ((1 << n) - 1)
    out: list[tuple[float, int, int] | None] = [None] * len(columns)
    for p in range(len(columns) - 1, -1, -1):
        j, after = columns[p], tables[p + 1]
        here = list(after)
        best: tuple[float, int, int] | None = None
        for i in range(n):
            score, bit = rows[i][j], 1 << i
            if score <= 0:
                continue
            others = max((m for m in masks if not m & bit), key=lambda m: after[m])
            if best is None or score + after[others] > best[0] + _TIE:
                best = (score + after[others], i, others)
            for m in masks:
                if m & bit and after[m ^ bit] != _NONE and score + after[m ^ bit] > here[m] + _TIE:
                    here[m] = score + after[m ^ bit]
        out[p], tables[p] = best, here
    return out, tables


def _recover(
    rows: Sequence[Sequence[float]],
    columns: Sequence[int],
    tables: list[list[float]],
    p: int,
    mask: int,
) -> list[tuple[int, int]]:
    """(row, column) of the best assignment of the rows of `mask` from `columns[p]` on
    (a column is used only where it scores more than leaving it: later steps first)."""
    pairs = []
    while mask:
        here, after, j = tables[p], tables[p + 1], columns[p]
        if here[mask] > after[mask] + _TIE:
            for i in range(len(rows)):
                bit = 1 << i
                rest = after[mask ^ bit] if mask & bit else _NONE
                if rest != _NONE and rows[i][j] > 0 and rows[i][j] + rest >= here[mask] - _TIE:
                    pairs.append((i, j))
                    mask ^= bit
                    break
        p += 1
    return pairs


class _Search:
    """The matching with the highest mean over the groups, by dynamic programming.

    `best(k, bound)`: the best matching of groups `0..k` using steps before `bound`
    (the earliest step of group `k + 1`'s match), as (sum of group ratios, matches).
    For group `k`, each candidate step `t` is tried as the earliest of its match: the
    best assignment of the group's steps to steps from `t` on that uses `t`, plus the
    best of the groups before it under bound `t`. Empty groups are skipped; a group
    without a match ends the matching (its value: 0 for it and every group before).
    """

    def __init__(
        self,
        groups: Sequence[Sequence[Step]],
        actual_steps: Sequence[Step],
        subset_rows: int = _SUBSET_ROWS,
    ) -> None:
        self.groups = groups
        self.actual = actual_steps
        self.subset_rows = subset_rows
        self.rows: dict[int, tuple[list[list[float]], list[int]]] = {}
        self.memo: dict[tuple[int, int], tuple[float, tuple[StepMatch, ...]]] = {}

    def _rows(self, k: int) -> tuple[list[list[float]], list[int]]:
        """Group `k`'s scores against every actual step (0: another name, not successful),
        and the steps some of its steps score above 0 with."""
        if k not in self.rows:
            rows = [
                [
                    _compare(ref, step)
                    if _succeeded(step) and ref.get("name") == step.get("name")
                    else 0.0
                    for step in self.actual
                ]
                for ref in self.groups[k]
            ]
            columns = [j for j in range(len(self.actual)) if any(row[j] > 0 for row in rows)]
            self.rows[k] = (rows, columns)
        return self.rows[k]

    def best(self, k: int, bound: int) -> tuple[float, tuple[StepMatch, ...]]:
        while k >= 0 and not self.groups[k]:  # empty groups are skipped
            k -= 1
        if k < 0:
            return 0.0, ()
        rows, candidates = self._rows(k)
        columns = candidates[: bisect_left(candidates, bound)]
        key = (k, len(columns))  # the same columns: the same answer
        if key not in self.memo:
            self.memo[key] = self._best(k, rows, columns)
        return self.memo[key]

    def _best(
        self, k: int, rows: list[list[float]], columns: list[int]
    ) -> tuple[float, tuple[StepMatch, ...]]:
        size = len(rows)
        found: tuple[float, tuple[StepMatch, ...]] = (0.0, ())  # no match: the matching ends
        if not any(self.groups[:k]):  # nothing before it: the group's best assignment
            assignment = best_assignment([[row[j] for j in columns] for row in rows])
            pairs = [(i, columns[c]) for i, c in enumerate(assignment) if c is not None]
            mine = tuple(StepMatch(k, i, j, rows[i][j]) for i, j in pairs)
            return sum(m.score for m in mine) / size, mine
        if size <= self.subset_rows:
            starts, tables = _by_earliest(rows, columns)
            choice = None
            for p in range(len(columns) - 1, -1, -1):  # latest first: kept among equals
                start = starts[p]
                if start is None:
                    continue
                total = start[0] / size + self.best(k - 1, columns[p])[0]
                if total > found[0] + _TIE:
                    found, choice = (total, ()), (p, start)
            if choice is None:
                return found
            p, (_, row, others) = choice
            pairs = [(row, columns[p]), *_recover(rows, columns, tables, p + 1, others)]
        else:  # one assignment per candidate earliest step
            pairs = []
            for t in range(len(columns) - 1, -1, -1):
                window = columns[t:]
                assignment = best_assignment([[row[j] for j in window] for row in rows])
                these = [(i, window[c]) for i, c in enumerate(assignment) if c is not None]
                if not these:
                    continue
                value = sum(rows[i][j] for i, j in these) / size
                total = value + self.best(k - 1, min(j for _, j in these))[0]
                if total > found[0] + _TIE:
                    found, pairs = (total, ()), these
            if not pairs:
                return found
        mine = tuple(StepMatch(k, i, j, rows[i][j]) for i, j in sorted(pairs, key=lambda x: x[0]))
        earlier = self.best(k - 1, min(j for _, j in pairs))
        return found[0], mine + earlier[1]


def match_steps(
    reference_groups: Sequence[Sequence[Step]],
    actual_steps: Sequence[Step],
    semantics: Semantics = SEED,
) -> list[StepMatch]:
    """Matches of reference steps to actual steps, last group first."""
    if check_semantics(semantics) == GE6:
        return [StepMatch(*m) for m in match_groups_ge6(reference_groups, actual_steps)]
    filled = [k for k, group in enumerate(reference_groups) if group]
    if len(filled) == 1:  # one group (the usual case): its best assignment
        k = filled[0]
        return _match_one(k, reference_groups[k], actual_steps)
    _, matches = _Search(reference_groups, actual_steps).best(
        len(reference_groups) - 1, len(actual_steps)
    )
    return list(matches)


def steps_score(
    reference_groups: Sequence[Sequence[Step]],
    matches: Sequence[StepMatch],
    semantics: Semantics = SEED,
) -> float:
    """The mean over the groups of (the group's match scores / its size). Seed: over the
    non-empty groups (0.0 without any); graphrag-eval-6: over all (raises without groups
    or with an empty one)."""
    if check_semantics(semantics) == GE6:
        return steps_score_ge6(reference_groups, matches)
    filled = [k for k, group in enumerate(reference_groups) if group]
    if not filled:
        return 0.0
    total = sum(
        sum(m.score for m in matches if m.group == k) / len(reference_groups[k]) for k in filled
    )
    return total / len(filled)
