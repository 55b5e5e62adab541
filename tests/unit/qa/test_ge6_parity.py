"""`semantics="graphrag-eval-6"` gives graphrag-eval 6.6.1's outputs (issue 26, point 1).

Replays tests/fixtures/qa/ge6_parity.json.gz: seeded random cases of every category and
the calls graphrag-eval's own test suite makes, each with the outcome graphrag-eval
6.6.1 gave (recorded by `python benchmarks/qa_differential.py --write-fixture 60`, which
runs graphrag-eval in a throwaway venv; it is never a dependency). Every outcome must be
equal, types included; where graphrag-eval raised, gtog must raise too, or (for
`run_evaluation`) give exactly those questions an error record and the others
graphrag-eval's records.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.qa_parity import CATEGORIES, decode, parity, run_gtog

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "qa" / "ge6_parity.json.gz"


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    return json.loads(gzip.decompress(FIXTURE.read_bytes()))


def test_the_fixture_is_graphrag_eval_6_6_1s(recorded: dict[str, Any]) -> None:
    assert recorded["graphrag_eval_version"] == "6.6.1"
    categories = {case["category"] for case in recorded["cases"]}
    assert categories == set(CATEGORIES)
    assert sum("raised" in case["expected"] for case in recorded["cases"]) > 10


@pytest.mark.parametrize("category", CATEGORIES)
def test_graphrag_eval_6_mode_equals_graphrag_eval_6_6_1(
    recorded: dict[str, Any], category: str
) -> None:
    failures = []
    cases = [c for c in recorded["cases"] if c["category"] == category]
    for i, entry in enumerate(cases):
        case, expected = decode(entry["case"]), decode(entry["expected"])
        got = run_gtog(category, case, "graphrag-eval-6")
        if parity(category, case, expected, got) not in ("identical", "raised"):
            failures.append((i, expected, got))
    assert not failures, f"{len(failures)} of {len(cases)} differ; first: {failures[0]}"


def test_the_default_rules_are_not_graphrag_eval_6(recorded: dict[str, Any]) -> None:
    """The fixture tells the modes apart (so the test above cannot pass by accident)."""
    differing = 0
    for entry in recorded["cases"]:
        if entry["category"] in ("records", "aggregates"):
            case, expected = decode(entry["case"]), decode(entry["expected"])
            got = run_gtog(entry["category"], case, "seed")
            differing += parity(entry["category"], case, expected, got) == "differing"
    assert differing > 50
