"""Match reference step groups to executed steps and score them (pure functions).

Reference steps come in groups: a group's steps may run in any order, after every
step of the previous group. Groups are matched from the last one backwards; each
group is matched against the successful actual steps of the same name that ran
before the earliest step matched to the following group, by a maximum-score
assignment (not the first hit). `steps_score` looks only at the last group, as in
graphrag-eval: the sum of its match scores divided by its size, where a SPARQL,
JSON or exact-output match scores 1 and a retrieval match scores recall@k.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gtog.qa.assignment import best_assignment
from gtog.qa.retrieval import recall_at_k
from gtog.qa.sparql import compare_sparql_results

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


def _as_json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def parse_contexts(output: Any) -> list[dict[str, Any]]:
    """The documents of a retrieval step's output: a JSON list of {id, text} objects.

    Raises `ValueError` when the output is not such a list.
    """
    data = _as_json(output)
    if not isinstance(data, list) or not all(isinstance(d, Mapping) for d in data):
        raise ValueError("retrieval output must be a JSON list of objects with 'id' and 'text'")
    return [dict(d) for d in data]


def compare_step_outputs(reference: Step, actual: Step) -> float:
    """Score in [0, 1] of an actual step's output against a reference step's output."""
    if "output" not in actual:
        return 0.0
    media_type = reference.get("output_media_type")
    try:
        if media_type == SPARQL_JSON:
            return compare_sparql_results(
                _as_json(reference.get("output")),
                _as_json(actual["output"]),
                required_columns=reference.get("required_columns"),
                ordered=bool(reference.get("ordered", False)),
                ignore_duplicates=bool(reference.get("ignore_duplicates", True)),
            )
        if media_type == JSON:
            return float(_as_json(reference.get("output")) == _as_json(actual["output"]))
        if reference.get("name") == actual.get("name") == RETRIEVAL:
            relevant = [d.get("id") for d in parse_contexts(reference.get("output"))]
            retrieved = [d.get("id") for d in parse_contexts(actual["output"])]
            args = actual.get("args") or {}
            try:
                k = int(args.get("k")) if isinstance(args, Mapping) else len(retrieved)
            except (TypeError, ValueError):
                k = len(retrieved)
            return recall_at_k(relevant, retrieved, k)
    except ValueError:
        return 0.0
    return float(_as_text(reference.get("output")) == _as_text(actual["output"]))


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
        if actual_steps[j].get("status", "success") == "success"
        and actual_steps[j].get("name") in names
    ]
    scores = [
        [
            compare_step_outputs(ref, actual_steps[j])
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
    reference_groups: Sequence[Sequence[Step]], actual_steps: Sequence[Step]
) -> list[StepMatch]:
    """Matches of reference steps to actual steps, last group first."""
    matches: list[StepMatch] = []
    search_upto = len(actual_steps)
    for group_index in range(len(reference_groups) - 1, -1, -1):
        group = reference_groups[group_index]
        if not group:
            continue
        found = _match_group(group_index, group, actual_steps, search_upto)
        if not found:
            break
        matches.extend(found)
        search_upto = min(m.actual_index for m in found)
    return matches


def steps_score(reference_groups: Sequence[Sequence[Step]], matches: Sequence[StepMatch]) -> float:
    """Sum of the last group's match scores over its size (0.0 without matches)."""
    if not reference_groups or not reference_groups[-1]:
        return 0.0
    last = len(reference_groups) - 1
    total = sum(m.score for m in matches if m.group == last)
    return total / len(reference_groups[-1])
