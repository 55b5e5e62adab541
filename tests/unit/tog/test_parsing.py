"""Parsing of linking, pruning and reasoning replies."""

from __future__ import annotations

import pytest

from gtog.tog._linking import parse_mentions
from gtog.tog._pruning import parse_scores
from gtog.tog._reasoning import parse_sufficient


def test_scores_from_json_list() -> None:
    text = '{"relations": [{"id": 2, "score": 0.7}, {"id": 1, "score": 0.3}]}'
    assert parse_scores(text, "relations", 3) == {1: 0.7, 0: 0.3}


def test_scores_tolerate_fences_mapping_and_bad_entries() -> None:
    text = '```json\n{"entities": {"1": 0.5, "[3]": 2, "9": 0.4, "2": 0}}\n```'
    assert parse_scores(text, "entities", 3) == {0: 0.5, 2: 1.0}
    text = '{"relations": [{"id": "x", "score": 1}, {"id": 1, "score": "high"}, {"id": 2}]}'
    assert parse_scores(text, "relations", 2) is None


@pytest.mark.parametrize(
    "text", ["", "no idea", "{'entities': oops", '{"relations": []}', "[1, 2]", '{"x": 1}']
)
def test_unusable_scores_are_none(text: str) -> None:
    assert parse_scores(text, "relations", 3) is None


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ('{"sufficient": true, "reason": "x"}', True),
        ('{"sufficient": false}', False),
        ('{"sufficient": "Yes"}', True),
        ("Yes, the paths answer it.", True),
        ("No.", False),
        ("???", None),
        ('{"reason": "hmm"}', None),
    ],
)
def test_sufficient(text: str, verdict: bool | None) -> None:
    assert parse_sufficient(text) is verdict


def test_mentions() -> None:
    assert parse_mentions('{"entities": ["Maren Holt", " ", "Varn"]}') == ["Maren Holt", "Varn"]
    assert parse_mentions('["Kelport"]') == ["Kelport"]
    assert parse_mentions("Maren") is None
    assert parse_mentions('{"entities": []}') is None
