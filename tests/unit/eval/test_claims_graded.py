"""`faithfulness_claims` and the graded judges over real HTTP (the scripted server), and
what the summary, the verdict line and the panel make of graded scores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gtog._project import load_graphrag_config
from gtog.eval._dataset import QAItem
from gtog.eval.results._panel import judge_agreement
from gtog.eval.results._records import MethodRecord
from gtog.eval.results._summary import comparisons, group_summary
from gtog.eval.results._verdict import verdict
from gtog.eval.scoring import SCORERS, Judgement
from gtog.eval.scoring._base import ScoringSetup
from gtog.eval.scoring._judges import EXTRA_PROMPTS, load_prompts
from gtog.llm._models import chat_model_from_config, run_sync
from tests.support.projects import write_project
from tests.support.scripted_server import Rule, ScriptedServer
from tests.support.world import judge_rules

ITEM = QAItem(
    qid="q1",
    index_key="k",
    question="Who keeps the lighthouse?",
    reference="Maren Holt keeps the lighthouse on Varn Island.",
)
CONTEXT = (
    "-----Entities-----\nid|entity|description\n"
    "1|MAREN HOLT|Maren Holt keeps the light on Varn Island.\n"
)


def _setup(tmp_path: Path, server: ScriptedServer, metric: str, **kwargs) -> ScoringSetup:
    config = load_graphrag_config(write_project(tmp_path / "p", "lighthouse", server.base_url))
    model = chat_model_from_config(config, "default_completion_model")
    return ScoringSetup(model=model, prompts=load_prompts(None, [metric]), **kwargs)


def test_two_of_three_claims_supported_is_two_thirds_and_lists_the_third(
    tmp_path: Path,
) -> None:
    answer = (
        "Maren Holt keeps the lighthouse [Data: Entities (1)]. The light stands on Varn Island."
        " Zebulon Crane owns the island."
    )
    with ScriptedServer(judge_rules()) as server:
        scorer = SCORERS["faithfulness_claims"](_setup(tmp_path, server, "faithfulness_claims"))
        j = run_sync(scorer.score(ITEM, answer, CONTEXT))
        rules = [e.rule for e in server.chat_log()]
    assert j.score == pytest.approx(2 / 3) and round(j.score, 2) == 0.67
    assert j.flagged == ["Zebulon Crane owns the island"]
    assert j.reason == "2 of 3 claims supported by the context"
    assert rules == ["judge:claims-split", "judge:claims-check"]  # one split, one batch
    assert j.llm_calls == 2


def test_claims_are_checked_in_batches_and_a_short_verdict_list_is_unscored(
    tmp_path: Path,
) -> None:
    claims = [f"Maren lit lamp {n}" for n in range(11)]
    with ScriptedServer() as server:
        server.rules += [
            Rule(
                "split",
                lambda r: "atomic claims" in r.prompt,
                lambda r: json.dumps({"claims": claims}),
            ),
            Rule(
                "check", lambda r: "numbered claim" in r.prompt, lambda r: '{"supported": [1, 1]}'
            ),
        ]
        scorer = SCORERS["faithfulness_claims"](_setup(tmp_path, server, "faithfulness_claims"))
        j = run_sync(scorer.score(ITEM, "Maren lit lamps.", CONTEXT))
        checks = [e for e in server.chat_log() if e.rule == "check"]
    # 11 claims: batches of 8 and 3, each asked once more for its unreadable reply
    assert len(checks) == 4
    assert j.score is None and "unusable claim check" in (j.error or "")
    assert "at least 3 items" in (j.error or "") or "at least 8 items" in (j.error or "")


def test_an_answer_without_claims_is_unscored(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        server.rules.append(Rule("split", lambda r: True, lambda r: '{"claims": []}'))
        scorer = SCORERS["faithfulness_claims"](_setup(tmp_path, server, "faithfulness_claims"))
        j = run_sync(scorer.score(ITEM, "I do not know.", CONTEXT))
    assert j.score is None and j.error == "the answer makes no claim"


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ('{"rationale": "most of it", "score": 7}', 7),
        ('{"rationale": "all", "score": "10"}', 10),
        ('{"rationale": "over", "score": 11}', None),
        ('{"rationale": "half", "score": 6.5}', None),
        ('{"rationale": "none", "score": -1}', None),
        ('{"rationale": "bool", "score": true}', None),
    ],
)
def test_a_graded_reply_outside_the_scale_or_not_an_integer_is_unscored(
    tmp_path: Path, reply: str, score: int | None
) -> None:
    with ScriptedServer() as server:
        server.rules.append(Rule("graded", lambda r: True, lambda r: reply))
        scorer = SCORERS["correctness_graded"](_setup(tmp_path, server, "correctness_graded"))
        j = run_sync(scorer.score(ITEM, "Maren Holt.", None))
        prompt = server.chat_log()[0].prompt if server.chat_log() else ""
    assert j.score == score
    if score is None:
        assert "no explicit integer 0-10 score" in (j.error or "")
    else:
        assert j.scale == [0, 10] and j.reason
    assert "from 0 (lowest) to 10 (highest)" in prompt  # the scale is in the prompt


def test_a_scale_from_judge_scales_is_asked_for_and_checked(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        server.rules.append(
            Rule("graded", lambda r: True, lambda r: '{"rationale": "x", "score": 0}')
        )
        setup = _setup(
            tmp_path, server, "completeness_graded", scales={"completeness_graded": (1, 10)}
        )
        j = run_sync(SCORERS["completeness_graded"](setup).score(ITEM, "Maren.", None))
        prompt = server.chat_log()[0].prompt
    assert "from 1 (lowest) to 10 (highest)" in prompt
    assert j.score is None and "outside the scale 1-10" in (j.error or "")


def test_graded_trials_and_panels_average(tmp_path: Path) -> None:
    replies = iter([7, 8, 9])
    with ScriptedServer() as server:
        server.rules.append(
            Rule(
                "graded",
                lambda r: True,
                lambda r: json.dumps({"rationale": "r", "score": next(replies)}),
            )
        )
        setup = _setup(tmp_path, server, "correctness_graded", trials=3)
        j = run_sync(SCORERS["correctness_graded"](setup).score(ITEM, "Maren.", None))
    assert j.score == pytest.approx(8.0) and sorted(j.votes or []) == [7, 8, 9]
    assert j.scale == [0, 10]


def _record(
    method: str, qid: str, score: float, panel: dict[str, float] | None = None
) -> MethodRecord:
    j = Judgement(score=score, scale=[0, 10])
    if panel:
        j.panel = {m: Judgement(score=v, scale=[0, 10]) for m, v in panel.items()}
    return MethodRecord(
        qid=qid,
        index_key="k",
        question="Q",
        reference="R",
        method=method,
        response="A",
        judgements={"correctness_graded": j},
    )


def test_graded_means_stay_on_their_scale_and_the_verdict_shows_them_as_0_to_1() -> None:
    records = [_record("local", f"q{i}", s) for i, s in enumerate([7, 7, 7, 7])]
    g = group_summary(records, ["correctness_graded"])
    assert g["correctness_graded"] == 7.0
    assert (
        g["ci95_method"]["correctness_graded"] is None
        or "wilson" not in g["ci95_method"]["correctness_graded"]
    )
    # scores of only 0 and 1 on a 0-10 scale are no 0/1 metric: the t interval, a permutation
    low = [_record("a", f"q{i}", s) for i, s in enumerate([0, 1, 1, 0, 1, 1, 0, 1, 1, 1])]
    low += [_record("b", f"q{i}", s) for i, s in enumerate([1, 1, 0, 0, 0, 1, 0, 0, 1, 0])]
    g = group_summary([r for r in low if r.method == "a"], ["correctness_graded"])
    assert g["ci95_method"]["correctness_graded"] == "skew_t"
    (c,) = comparisons(low, ["a", "b"], ["correctness_graded"])
    assert c["test"] != "mcnemar"
    summary = {
        "metadata": {"metrics": ["correctness_graded"], "scales": {"correctness_graded": [0, 10]}},
        "by_method": {
            "local": {
                "same_questions": {"correctness_graded": 7.0, "scored": {"correctness_graded": 4}}
            }
        },
    }
    line = verdict(summary) or ""
    assert "correctness graded: local (0.70, its 0-10 scale shown as 0-1)" in line


def test_a_panel_of_graded_judges_agrees_at_the_interval_level() -> None:
    records = [
        _record("local", "q1", 7, {"a": 6, "b": 8}),
        _record("local", "q2", 3, {"a": 2, "b": 4}),
        _record("local", "q3", 9, {"a": 9, "b": 9}),
    ]
    (entry,) = judge_agreement(records, ["correctness_graded"], ["a", "b"]).values()
    assert entry["level"] == "interval"
    import krippendorff
    import numpy as np

    expected = krippendorff.alpha(
        reliability_data=np.array([[6, 2, 9], [8, 4, 9]], dtype=float),
        level_of_measurement="interval",
    )
    assert entry["krippendorff_alpha"] == pytest.approx(expected)


def test_the_claims_and_graded_prompts_load_only_for_runs_that_score_them() -> None:
    assert "claims_split" not in load_prompts().templates
    assert {"claims_split", "claims_check"} <= set(
        load_prompts(None, ["faithfulness_claims"]).templates
    )
    assert set(EXTRA_PROMPTS["correctness_graded"]) == {"correctness_graded"}


def test_the_estimate_bounds_a_claims_check_at_one_to_eight_calls(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        scorer = SCORERS["faithfulness_claims"](_setup(tmp_path, server, "faithfulness_claims"))
        (bound,) = scorer.bound(ITEM, 200, 3000) or []
    assert bound.calls == (1, 8)
    low, high = bound.prompt
    assert low < 400 and high > 6 * 3000 + 2 * 200  # every check may carry the whole context
    assert bound.output == (1, 8 * 800)
