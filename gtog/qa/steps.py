"""Match reference step groups to executed steps and score them (pure functions).

Reference steps come in groups: a group's steps may run in any order, after every
step of the previous group. Groups are matched from the last one backwards; each
group is matched against the successful actual steps that ran before the earliest
step matched to the following group, by a maximum-score assignment (not the first
hit). Empty groups are skipped.

Seed rules (default): only steps of the same name match; a group without any match
ends the matching; `steps_score` looks only at the last group: the sum of its match
scores over its size, where a SPARQL, JSON or exact-output match scores 1 and a
retrieval match scores recall@k. Unknown media types compare as text.

graphrag-eval 6.x rules (`semantics="graphrag-eval-6"`): a step of another name can
match (by equal output, or an `iri_discovery` reference by the IRI it found);
`retrieve_time_series` and `retrieve_data_points` compare their args; the matching
stops at the first group that is not fully matched; `steps_score` is the mean over
all groups of (sum of match scores / group size).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gtog.qa.assignment import best_assignment
from gtog.qa.retrieval import recall_at_k, recall_at_k_ge6
from gtog.qa.semantics import GE6, SEED, Semantics
from gtog.qa.sparql import compare_sparql_results
from gtog.qa.timeseries import data_points_equal, time_series_equal

__all__ = [
    "JSON",
    "SPARQL_JSON",
    "StepMatch",
    "compare_step_outputs",
    "iri_discovered",
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


def _retrieval_k(actual: Step, retrieved: Sequence[Any]) -> int:
    args = actual.get("args") or {}
    try:
        return int(args.get("k")) if isinstance(args, Mapping) else len(retrieved)
    except (TypeError, ValueError):
        return len(retrieved)


def compare_step_outputs(reference: Step, actual: Step, semantics: Semantics = SEED) -> float:
    """Score in [0, 1] of an actual step against a reference step (see the module doc).

    Malformed outputs score 0.0 (graphrag-eval raises on most of them).
    """
    if semantics == GE6:
        try:
            return _compare_ge6(reference, actual)
        except (ValueError, TypeError, KeyError, AttributeError):
            return 0.0
    if "output" not in actual or "output" not in reference:
        return 0.0
    media_type = reference.get("output_media_type")
    try:
        if media_type == SPARQL_JSON:
            return compare_sparql_results(
                _as_json(reference.get("output")),
                _as_json(actual["output"]),
                reference.get("required_columns") or [],
                bool(reference.get("ordered", False)),
                bool(reference.get("ignore_duplicates", True)),
            )
        if media_type == JSON:
            return float(_as_json(reference.get("output")) == _as_json(actual["output"]))
        if reference.get("name") == actual.get("name") == RETRIEVAL:
            relevant = [d.get("id") for d in parse_contexts(reference.get("output"))]
            retrieved = [d.get("id") for d in parse_contexts(actual["output"])]
            return recall_at_k(relevant, retrieved, _retrieval_k(actual, retrieved))
    except ValueError:
        return 0.0
    return float(_as_text(reference.get("output")) == _as_text(actual["output"]))


def iri_discovered(reference: Step, actual: Step) -> bool:
    """graphrag-eval 6.x's `iri_discovery` check: the reference output (an IRI) is a
    `uri` value of an `autocomplete_search` result, or occurs in a `sparql_query` output."""
    iri = reference.get("output")
    output = actual.get("output")
    if actual.get("name") == "autocomplete_search":
        bindings = _as_json(output).get("results", {}).get("bindings", [])
        return any(
            isinstance(term, Mapping) and term.get("type") == "uri" and term.get("value") == iri
            for binding in bindings
            for term in binding.values()
        )
    if actual.get("name") == "sparql_query":
        return isinstance(iri, str) and isinstance(output, str) and iri in output
    return False


def _compare_ge6(reference: Step, actual: Step) -> float:
    ref_name, act_name = reference.get("name"), actual.get("name")
    ref_out, act_out = reference.get("output"), actual.get("output")
    media_type = reference.get("output_media_type")
    if ref_name == act_name == "sparql_query" and media_type == SPARQL_JSON:
        return compare_sparql_results(
            _as_json(ref_out),
            _as_json(act_out),
            reference.get("required_columns") or [],
            bool(reference.get("ordered", False)),
            bool(reference.get("ignore_duplicates", True)),
        )
    if ref_name == act_name == RETRIEVAL and ref_out:
        relevant = [d.get("id") for d in parse_contexts(ref_out)]
        retrieved = [d.get("id") for d in parse_contexts(act_out)]
        return recall_at_k_ge6(relevant, retrieved, _retrieval_k(actual, retrieved))
    if ref_name == act_name == "retrieve_time_series":
        return float(time_series_equal(reference, actual))
    if ref_name == act_name == "retrieve_data_points":
        return float(data_points_equal(reference, actual, actual.get("execution_timestamp")))
    if ref_name == "iri_discovery":
        return float(iri_discovered(reference, actual))
    if ref_name == act_name and media_type == JSON:
        return float(_as_json(ref_out) == _as_json(act_out))
    return float("output" in actual and ref_out == act_out)


def _succeeded(step: Step) -> bool:
    return step.get("status", "success") == "success"


def _match_group(
    group_index: int,
    group: Sequence[Step],
    actual_steps: Sequence[Step],
    search_upto: int,
    semantics: Semantics,
) -> list[StepMatch]:
    any_name = semantics == GE6
    names = {step.get("name") for step in group}
    candidates = [
        j
        for j in range(search_upto)
        if _succeeded(actual_steps[j]) and (any_name or actual_steps[j].get("name") in names)
    ]
    scores = [
        [
            compare_step_outputs(ref, actual_steps[j], semantics)
            if any_name or ref.get("name") == actual_steps[j].get("name")
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
    matches: list[StepMatch] = []
    search_upto = len(actual_steps)
    for group_index in range(len(reference_groups) - 1, -1, -1):
        group = reference_groups[group_index]
        if not group:
            continue
        found = _match_group(group_index, group, actual_steps, search_upto, semantics)
        matches.extend(found)
        if not found or (semantics == GE6 and len(found) < len(group)):
            break
        search_upto = min(m.actual_index for m in found)
    return matches


def steps_score(
    reference_groups: Sequence[Sequence[Step]],
    matches: Sequence[StepMatch],
    semantics: Semantics = SEED,
) -> float:
    """Seed: the last group's match scores over its size. graphrag-eval 6.x: the mean
    over the non-empty groups of that ratio. 0.0 without groups."""
    if semantics == GE6:
        ratios = [
            sum(m.score for m in matches if m.group == g) / len(group)
            for g, group in enumerate(reference_groups)
            if group
        ]
        return sum(ratios) / len(ratios) if ratios else 0.0
    if not reference_groups or not reference_groups[-1]:
        return 0.0
    last = len(reference_groups) - 1
    total = sum(m.score for m in matches if m.group == last)
    return total / len(reference_groups[-1])
