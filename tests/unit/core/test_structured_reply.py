"""The one structured-reply parser: syntax may be repaired, values are never invented."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from gtog._project import load_graphrag_config
from gtog.eval._dataset import QAItem
from gtog.eval.scoring._base import ScoringSetup
from gtog.eval.scoring._judges import Verdict, judge, load_prompts
from gtog.eval.scoring._pairwise import PairVerdict, PairwiseJudge
from gtog.llm._models import chat_model_from_config, run_sync
from gtog.llm._replies import parse_json_reply
from gtog.qa._llm_metrics import Statements
from gtog.tog._reasoning import Sufficiency
from tests.support.projects import write_project
from tests.support.scripted_server import Rule, ScriptedServer


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


@pytest.mark.parametrize(
    ("text", "schema", "stated"),
    [
        ("score: 1\nscore: 0", Verdict, "score: 1, score: 0"),
        ("Score: 1 ... Actually, score: 0", Verdict, "score: 1, score: 0"),
        ("Score: 1\n... Actually, score: 0", Verdict, "score: 1, score: 0"),
        ('{"score": 1, "reason": "right", "score": 0}', Verdict, "score: 1, score: 0"),
        (
            '{"score": "1", "reason": "x"}\nOn reflection, **Score:** 0',
            Verdict,
            "score: 1, score: 0",
        ),
        ("score = 0; score = 1", Verdict, "score: 0, score: 1"),
        ("winner: 1\nwinner: 2", PairVerdict, "winner: 1, winner: 2"),
        ('{"winner": 2, "winner": 0, "reason": "tie"}', PairVerdict, "winner: 2, winner: 0"),
        ('{"sufficient": true}\nsufficient: no', Sufficiency, "sufficient: true, sufficient: no"),
    ],
)
def test_two_different_verdicts_in_any_form_are_unscored_with_the_reason(
    text: str, schema: type[BaseModel], stated: str
) -> None:
    value, why = parse_json_reply(text, schema)
    assert value is None
    assert why is not None and why.startswith(f"2 different verdicts ({stated}) in one reply")


def test_a_repeated_key_deeper_in_the_reply_is_two_verdicts_too() -> None:
    one_each = '{"statements": [{"attributed": true}, {"attributed": false}]}'
    value, why = parse_json_reply(one_each, Statements)
    assert why is None and value is not None
    value, why = parse_json_reply(
        '{"statements": [{"attributed": true, "attributed": false}]}', Statements
    )
    assert value is None and why is not None and "attributed: true, attributed: false" in why


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("score: 1\nscore: 1", 1),
        ('{"score": 0, "reason": "wrong"}\nFinal verdict: score: 0.', 0),
        ('{"score": 1, "score": 1.0, "reason": "same twice"}', 1),
        ('{"score": 1, "reason": "one", "reason": "two"}', 1),  # two reasons, one verdict
        ('{"score": 0 or 1}\n{"score": 1, "reason": "echo, then the verdict"}', 1),
    ],
)
def test_the_same_verdict_restated_still_scores(text: str, score: int) -> None:
    value, why = parse_json_reply(text, Verdict)
    assert why is None and value is not None and value.score == score


def test_the_judges_record_two_verdicts_as_unscored_with_the_reason(tmp_path: Path) -> None:
    """Real HTTP: the judge asks once more, then records the reason; so does a pair call."""
    with ScriptedServer() as server:
        server.rules += [
            Rule("pair", lambda r: "answer_1" in r.prompt, lambda r: "winner: 1\nwinner: 2"),
            Rule("judge", lambda r: True, lambda r: "Score: 1 ... Actually, score: 0"),
        ]
        config = load_graphrag_config(write_project(tmp_path / "p", "lighthouse", server.base_url))
        model = chat_model_from_config(config, "default_completion_model")
        values = {"question": "Q?", "ground_truth": "G", "predicted": "P"}
        judged = run_sync(judge("correctness", model, load_prompts(), values))
        setup = ScoringSetup(model=model)
        template = (
            "{question} {criterion} {criterion_description}\nanswer_1: {answer_1}\n{answer_2}"
        )
        pair = PairwiseJudge(setup, "directness", "how plainly", template, trials=1)
        item = QAItem(qid="q1", index_key="k", question="Q?", reference="G")
        compared = run_sync(pair.score_pair(item, "A", "B"))
    assert judged.score is None and judged.llm_calls == 2
    assert "2 different verdicts (score: 1, score: 0)" in (judged.error or "")
    assert compared.winner is None and compared.score is None
    assert all(
        "2 different verdicts (winner: 1, winner: 2)" in (c.error or "") for c in compared.calls
    )
    assert "2 different verdicts" in (compared.error or "")
