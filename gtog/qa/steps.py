"""Match reference step groups to executed steps and score them (pure functions).

Reference steps come in groups: a group's steps may run in any order, after every
step of the previous group. Groups are matched from the last one backwards; each
group is matched against the successful actual steps that ran before the earliest
step matched to the following group, by a maximum-score assignment (not the first
hit). Empty groups are skipped.

Seed rules (default): only steps of the same name match; a group without any match
ends the matching; `steps_score` looks only at the last group: the sum of its match
scores over its size, where a SPARQL, JSON or exact-output match scores 1 and a
retrieval match scores recall@k. Unknown media types compare as text. Since the score
is the last group's, the maximum-score assignment of that group is the best matching.

`semantics="graphrag-eval-6"` delegates to `gtog.qa.ge6_steps` (graphrag-eval 6.6.1's
greedy matching and mean-over-groups score, raising where it raises).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gtog.qa.assignment import best_assignment
from gtog.qa.ge6_steps import compare_steps_ge6, match_groups_ge6, steps_score_ge6
from gtog.qa.retrieval import recall_at_k
from gtog.qa.semantics import GE6, SEED, Semantics, check_semantics
from gtog.qa.sparql import as_json, match_sparql_columns

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


def _match_group(
    group_index: int,
    group: Sequence[Step],
    actual_steps: Sequence[Step],
    search_upto: int,
) -> list[StepMatch]:
    names = {step.get("name") for step in group}
    candidates = [
        j
        for j in range(search_upto)
        if _succeeded(actual_steps[j]) and actual_steps[j].get("name") in names
    ]
    if len(group) == 1:  # the best single step: the latest one scoring highest
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
    matches = []
    for i, column in enumerate(best_assignment(scores)):
        if column is not None:
            matches.append(StepMatch(group_index, i, candidates[column], scores[i][column]))
    return matches


def match_steps(
    reference_groups: Sequence[Sequence[Step]],
    actual_steps: Sequence[Step],
    semantics: Semantics = SEED,
) -> list[StepMatch]:
    """Matches of reference steps to actual steps, last group first."""
    if check_semantics(semantics) == GE6:
        return [StepMatch(*m) for m in match_groups_ge6(reference_groups, actual_steps)]
    matches: list[StepMatch] = []
    search_upto = len(actual_steps)
    for group_index in range(len(reference_groups) - 1, -1, -1):
        group = reference_groups[group_index]
        if not group:
            continue
        found = _match_group(group_index, group, actual_steps, search_upto)
        matches.extend(found)
        if not found:
            break
        search_upto = min(m.actual_index for m in found)
    return matches


def steps_score(
    reference_groups: Sequence[Sequence[Step]],
    matches: Sequence[StepMatch],
    semantics: Semantics = SEED,
) -> float:
    """Seed: the last group's match scores over its size (0.0 without groups).
    graphrag-eval-6: the mean over all groups of that ratio (raises without groups)."""
    if check_semantics(semantics) == GE6:
        return steps_score_ge6(reference_groups, matches)
    if not reference_groups or not reference_groups[-1]:
        return 0.0
    last = len(reference_groups) - 1
    total = sum(m.score for m in matches if m.group == last)
    return total / len(reference_groups[-1])
