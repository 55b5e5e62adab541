"""graphrag-eval 6.6.1's step comparison, matching and `steps_score`
(`semantics="graphrag-eval-6"`); pure functions, no I/O.

Comparison of a reference step with an actual step (both need a `name`; the actual
step needs an `output`):

* both `sparql_query` with the SPARQL media type: the parsed results compared as
  `gtog.qa._ge6_sparql` does (0 when either output is not JSON);
* both `retrieval` and a reference output: recall@k of the document ids (the first
  `k` relevant ids in list order), `k` from the actual step's `args`;
* both `retrieve_time_series` / `retrieve_data_points`: their args
  (`gtog.qa._timeseries`; data points need the actual step's `execution_timestamp`);
* reference `iri_discovery`: the reference IRI is a `uri` value of an
  `autocomplete_search` result, or occurs in a `sparql_query` output;
* same name and `application/json`: the parsed outputs are equal;
* otherwise: the outputs are equal.

Matching: groups from the last one backwards; in a group, reference steps from the
last one, each taking the latest unused successful actual step (before the earliest
step matched to the following group) that scores above 0 (greedy, first hit). The
matching stops after the first group not fully matched. `steps_score` is the mean over
the groups of (sum of match scores / group size).

Where graphrag-eval 6.6.1 raises (a missing `name`, `status`, `output`, `id`,
`required_columns`, `args.k`; an empty group or no groups; malformed outputs it
parses), these functions raise too; `run_evaluation` turns that into the question's
error record.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from typing import Any, NamedTuple

from gtog.qa._ge6_sparql import compare_sparql_results_ge6
from gtog.qa._retrieval import recall_at_k_ge6
from gtog.qa._timeseries import data_points_equal, time_series_equal

__all__ = [
    "Ge6Match",
    "annotate_matches",
    "compare_steps_ge6",
    "iri_discovered",
    "match_groups_ge6",
    "steps_score_ge6",
]

SPARQL_JSON = "application/sparql-results+json"


class Ge6Match(NamedTuple):
    """Reference step `reference_index` of group `group` matched actual step `actual_index`."""

    group: int
    reference_index: int
    actual_index: int
    score: float


def iri_discovered(reference: Any, actual: Any) -> bool:
    """The `iri_discovery` check (see the module doc)."""
    if actual["name"] == "autocomplete_search":
        iri = reference["output"]
        result = json.loads(actual["output"])
        return any(
            term["type"] == "uri" and term["value"] == iri
            for binding in result["results"]["bindings"]
            for term in binding.values()
        )
    if actual["name"] == "sparql_query":
        return bool(reference["output"] in actual["output"])
    return False


def _sparql_score(reference: Any, actual_output: Any) -> float:
    """The SPARQL comparison; `False` (not 0.0) when an output is not JSON, as there."""
    try:
        actual_result = json.loads(actual_output)
    except json.JSONDecodeError:  # e.g. a DESCRIBE result's text
        return False
    try:
        reference_result = json.loads(reference.get("output"))
    except json.JSONDecodeError:
        return False
    return compare_sparql_results_ge6(
        reference_result,
        actual_result,
        reference["required_columns"],
        reference.get("ordered", False),
        reference.get("ignore_duplicates", True),
    )


def compare_steps_ge6(reference: Any, actual: Any) -> float:
    """Score of `actual` against `reference` (see the module doc)."""
    ref_name, act_name = reference["name"], actual["name"]
    ref_output, act_output = reference.get("output"), actual["output"]
    media_type = reference.get("output_media_type")
    if ref_name == act_name == "sparql_query" and media_type == SPARQL_JSON:
        return _sparql_score(reference, act_output)
    if ref_name == act_name == "retrieval" and ref_output:
        relevant = [c["id"] for c in json.loads(ref_output)]
        retrieved = [c["id"] for c in json.loads(act_output)]
        return recall_at_k_ge6(relevant, retrieved, actual["args"]["k"])
    if ref_name == act_name == "retrieve_time_series":
        return float(time_series_equal(reference, actual))
    if ref_name == act_name == "retrieve_data_points":
        return float(data_points_equal(reference, actual, actual["execution_timestamp"]))
    if ref_name == "iri_discovery":
        return float(iri_discovered(reference, actual))
    if ref_name == act_name and media_type == "application/json":
        return float(json.loads(ref_output) == json.loads(act_output))
    return float(ref_output == act_output)


def _match_group(
    group_index: int, group: Any, actual_steps: Any, search_upto: int
) -> list[Ge6Match]:
    used: set[int] = set()
    matches: list[Ge6Match] = []
    references = list(enumerate(group))
    if not references:
        return matches
    candidates = list(enumerate(actual_steps[:search_upto]))
    candidates.reverse()
    for reference_index, reference in reversed(references):
        for actual_index, actual in candidates:
            if actual_index in used or actual["status"] != "success":
                continue
            score = compare_steps_ge6(reference, actual)
            if score > 0.0:
                matches.append(Ge6Match(group_index, reference_index, actual_index, score))
                used.add(actual_index)
                break
    return matches


def match_groups_ge6(reference_groups: Any, actual_steps: Any) -> list[Ge6Match]:
    """The greedy matches, last group first (see the module doc)."""
    matches: list[Ge6Match] = []
    search_upto = len(actual_steps)
    for group_index, group in reversed(list(enumerate(reference_groups))):
        found = _match_group(group_index, reference_groups[group_index], actual_steps, search_upto)
        matches.extend(found)
        if len(found) != len(group):
            break
        search_upto = min(m.actual_index for m in found)
    return matches


def annotate_matches(reference_groups: Any, actual_steps: Any, matches: Sequence[Ge6Match]) -> None:
    """Write each matched actual step's `id` into its reference step's `matches` (in place)."""
    for m in matches:
        reference_groups[m.group][m.reference_index]["matches"] = actual_steps[m.actual_index]["id"]


def steps_score_ge6(reference_groups: Any, matches: Sequence[Ge6Match]) -> float:
    """Mean over the groups of (sum of match scores / group size)."""
    by_group: defaultdict[int, float] = defaultdict(float)
    for m in matches:
        by_group[m.group] += m.score
    total: float = 0
    for group_index in range(len(reference_groups)):
        total += by_group[group_index] / len(reference_groups[group_index])
    return total / len(reference_groups)
