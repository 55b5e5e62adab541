"""The one structured-reply parser: syntax may be repaired, values are never invented."""

from __future__ import annotations

from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from gtog.eval.scoring.judges import Verdict
from gtog.llm import parse_json_reply
from gtog.tog.reasoning import Sufficiency


@pytest.mark.parametrize(
    "text",
    [
        '{"score": 0 or 1, "reason": "brief explanation"}',  # the echoed template
        'Reply with {"score": 0 or 1, "reason": "brief explanation"}',
        "Score: 0 or 1",
        '{"score": <0 or 1>}',
        '{"score": "0 or 1", "reason": "x"}',
        '{"score": 0.5, "reason": "half"}',
        '{"score": true}',
        '{"reason": "no score at all"}',
    ],
)
def test_echoed_or_invalid_scores_are_not_verdicts(text: str) -> None:
    value, why = parse_json_reply(text, Verdict)
    assert value is None and why


def test_repaired_syntax_keeps_stated_values() -> None:
    value, why = parse_json_reply('{"score": 1, "reason": "cut off', Verdict)
    assert why is None and value is not None and value.score == 1
    value, _ = parse_json_reply("```json\n{'score': 0, 'reason': 'quotes',}\n```", Verdict)
    assert value is not None and value.score == 0


def test_booleans_are_checked_too() -> None:
    value, _ = parse_json_reply('{"sufficient": true or false, "reason": "<one>"}', Sufficiency)
    assert value is None
    value, _ = parse_json_reply('{"sufficient": true, "reason": "it says so', Sufficiency)
    assert value is not None and value.sufficient is True


class Pick(BaseModel):
    choice: Literal[0, 1]


@given(st.sampled_from([0, 1]), st.text(max_size=40))
def test_a_stated_value_in_prose_is_read_back(choice: int, prose: str) -> None:
    text = f'{prose.replace("{", "(").replace("[", "(")}\n{{"choice": {choice}}}'
    value, why = parse_json_reply(text, Pick)
    assert why is None and value is not None and value.choice == choice


@given(st.text(max_size=200))
def test_the_parser_never_raises(text: str) -> None:
    value, why = parse_json_reply(text, Verdict)
    assert (value is None) != (why is None)
