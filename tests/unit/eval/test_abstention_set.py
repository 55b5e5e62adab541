"""The abstention classifier on a labelled set (tests/fixtures/abstentions.yaml): half
declines, half answers that look like one; at least 95% right, the misses listed."""

from __future__ import annotations

from pathlib import Path

import yaml

from gtog.eval.results._abstention import AbstentionRules

SET = Path(__file__).parents[2] / "fixtures" / "abstentions.yaml"


def test_the_labelled_set_is_large_and_balanced() -> None:
    items = yaml.safe_load(SET.read_text(encoding="utf-8"))
    declines = [i for i in items if i["declines"]]
    assert len(items) >= 60
    assert len(declines) == len(items) - len(declines)
    assert len({i["text"] for i in items}) == len(items)


def test_the_classifier_is_right_on_95_percent_of_the_labelled_set() -> None:
    items = yaml.safe_load(SET.read_text(encoding="utf-8"))
    rules = AbstentionRules()
    wrong = [i for i in items if rules.abstains(i["text"]) != i["declines"]]
    accuracy = 1 - len(wrong) / len(items)
    listed = "\n".join(f"  declines={i['declines']}: {i['text']!r}" for i in wrong)
    assert accuracy >= 0.95, f"accuracy {accuracy:.3f}; misclassified:\n{listed}"
