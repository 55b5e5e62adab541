"""The `assertions` scorer: per-assertion verdicts, the share passed, unscored on failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gtog._errors import InputError
from gtog._project import load_graphrag_config
from gtog.eval._dataset import QAItem, dataset_fingerprint, load_dataset
from gtog.eval.report._html import render_page
from gtog.eval.report._page import page_data
from gtog.eval.results._assertions import assertion_summary
from gtog.eval.results._flat import flat_frame
from gtog.eval.results._records import MethodRecord
from gtog.eval.results._views import detailed_results
from gtog.eval.scoring import SCORERS, Judgement
from gtog.eval.scoring._assertions import assertion_verdict, load_assertion_prompt, share_passed
from gtog.eval.scoring._base import AssertionVerdict, ScoringSetup
from gtog.llm._models import chat_model_from_config, run_sync
from tests.support.projects import write_project
from tests.support.scripted_server import Fail, Rule, ScriptedServer
from tests.support.world import judge_rules


def _trials(*scores: int | None) -> list[Judgement]:
    return [
        Judgement(score=s, reason=f"said {s}") if s is not None else Judgement.unscored("bad")
        for s in scores
    ]


@pytest.mark.parametrize(
    ("scores", "threshold", "passed"),
    [
        ((1,), 0.5, True),
        ((0,), 0.5, False),
        ((1, 1, 0), 0.5, True),  # 2/3 > 0.5
        ((1, 0, 0), 0.5, False),  # 1/3
        ((1, 1, 0), 0.7, False),  # 2/3 is not above 0.7
        ((1, 0), 0.4, True),  # 1/2 > 0.4
        ((1, 0), 0.5, False),  # 1/2 is not above 0.5
        ((1, None, 1), 0.5, True),  # two of three trials answered: 2/2
        ((1, None, 0), 0.5, False),  # 1/2
    ],
)
def test_an_assertion_passes_above_the_threshold_of_the_trials_that_answered(
    scores: tuple[int | None, ...], threshold: float, passed: bool
) -> None:
    verdict = assertion_verdict("claim", _trials(*scores), threshold)
    assert verdict.passed is passed and verdict.votes == list(scores)
    assert verdict.reason == f"said {int(passed)}"


@pytest.mark.parametrize("scores", [(None,), (1, None), (None, None, 1), (None, None)])
def test_an_assertion_most_of_whose_trials_failed_is_unscored(
    scores: tuple[int | None, ...],
) -> None:
    verdict = assertion_verdict("claim", _trials(*scores))
    assert verdict.passed is None and "bad" in (verdict.error or "")


def test_the_score_is_the_share_passed_and_unscored_when_any_assertion_is() -> None:
    ok = AssertionVerdict(assertion="a", passed=True)
    no = AssertionVerdict(assertion="b", passed=False)
    lost = AssertionVerdict(assertion="c", error="timed out")
    assert share_passed([ok, no, ok]) == (pytest.approx(2 / 3), None)
    assert share_passed([no, no]) == (0.0, None)
    score, why = share_passed([ok, lost, no])
    assert score is None and why == "1 of 3 assertions unscored: timed out"
    assert share_passed([]) == (None, "the question has no assertions")


def test_assertions_are_read_as_strings_or_benchmarkqed_statements(tmp_path: Path) -> None:
    p = tmp_path / "k.json"
    p.write_text(
        json.dumps(
            [
                {"question": "Who?", "answer": "Ann", "assertions": ["Names Ann", " Says when "]},
                {"question": "Why?", "answer": "Rain", "assertions": [{"statement": "Rain"}]},
                {"question": "How?", "answer": "By boat"},
            ]
        )
    )
    items = load_dataset(p, ["k"]).items
    assert [i.assertions for i in items] == [("Names Ann", "Says when"), ("Rain",), None]
    p.write_text(json.dumps([{"question": "Q", "answer": "A", "assertions": ["ok", 3]}]))
    with pytest.raises(InputError, match=r"k.json: item 1: assertions\[1\] must be"):
        load_dataset(p, ["k"])
    p.write_text(json.dumps([{"question": "Q", "answer": "A", "assertions": "one claim"}]))
    with pytest.raises(InputError, match=r"k.json: item 1: field 'assertions' must be a list"):
        load_dataset(p, ["k"])


def test_a_dataset_without_assertions_keeps_its_fingerprint() -> None:
    """Runs made before assertions existed resume: their dataset hash is unchanged."""
    item = QAItem(qid="q1", index_key="k", question="Who?", reference="Ann", evidence="Ann did.")
    assert dataset_fingerprint([item]) == "5c4cf999a0ac9750"  # computed before the change
    claims = item.model_copy(update={"assertions": ("Ann did it",)})
    assert dataset_fingerprint([claims]) != "5c4cf999a0ac9750"


def test_the_scorer_judges_each_assertion_over_real_http(tmp_path: Path) -> None:
    with ScriptedServer(judge_rules()) as server:
        server.rules.insert(
            0,
            Rule(
                "broken",
                lambda r: "Assertion: The harbour is frozen" in r.prompt,
                lambda r: Fail(400, "bad request"),
            ),
        )
        config = load_graphrag_config(write_project(tmp_path / "p", "lighthouse", server.base_url))
        model = chat_model_from_config(config, "default_completion_model")
        scorer = SCORERS["assertions"](ScoringSetup(model=model, assertion_prompt=None))
        item = QAItem(
            qid="q1",
            index_key="k",
            question="Who keeps the lighthouse?",
            reference="Maren Holt",
            assertions=("Maren Holt keeps the lighthouse", "Tobias fishes from Kelport", "Varn"),
        )
        answer = "Maren Holt keeps the lighthouse on Varn Island."
        judged = run_sync(scorer.score(item, answer, None))
        none = run_sync(scorer.score(item.model_copy(update={"assertions": None}), answer, None))
        broken = item.model_copy(update={"assertions": ("Varn", "The harbour is frozen")})
        failed = run_sync(scorer.score(broken, answer, None))
        calls = len(server.log)
    assert judged.score == pytest.approx(2 / 3) and judged.llm_calls == 3
    assert [v.passed for v in judged.assertions or []] == [True, False, True]
    assert judged.reason == "2 of 3 assertions supported; missed: Tobias fishes from Kelport"
    assert none.score is None and none.error == "the question has no assertions"
    assert none.llm_calls == 0
    assert failed.score is None and failed.error is not None
    assert failed.error.startswith("1 of 2 assertions unscored:")
    assert [v.passed for v in failed.assertions or []] == [True, None]
    assert calls >= 5


def test_the_trials_are_asked_per_assertion(tmp_path: Path) -> None:
    replies = iter([1, 0, 1, 0, 0, 1])  # claim a: 1,0,1 -> 2/3; claim b: 0,0,1 -> 1/3

    with ScriptedServer() as server:
        server.rules.append(
            Rule("judge", lambda r: True, lambda r: json.dumps({"score": next(replies)}))
        )
        config = load_graphrag_config(write_project(tmp_path / "p", "lighthouse", server.base_url))
        model = chat_model_from_config(config, "default_completion_model")
        prompt = "{question}{answer}{assertion}"
        setup = ScoringSetup(model=model, trials=3, assertion_prompt=prompt)
        scorer = SCORERS["assertions"](setup)
        item = QAItem(qid="q", index_key="k", question="Q", reference="A", assertions=("a", "b"))
        # one assertion at a time, so the replies go to the claims in order (the trials of
        # one assertion run at once: their order is the server's)
        judged_a = run_sync(scorer.score(item.model_copy(update={"assertions": ("a",)}), "x", None))
        judged_b = run_sync(scorer.score(item.model_copy(update={"assertions": ("b",)}), "x", None))
    assert judged_a.assertions is not None and sorted(judged_a.assertions[0].votes) == [0, 1, 1]
    assert judged_a.score == 1.0 and judged_a.llm_calls == 3
    assert judged_b.assertions is not None and sorted(judged_b.assertions[0].votes) == [0, 0, 1]
    assert judged_b.score == 0.0


def test_a_custom_prompt_needs_its_placeholders(tmp_path: Path) -> None:
    assert "{assertion}" in load_assertion_prompt()
    (tmp_path / "assertions.txt").write_text("Claim: {assertion}\nAnswer: {answer}")
    with pytest.raises(InputError, match=r"assertions.txt: prompt lacks placeholder \{question\}"):
        load_assertion_prompt(tmp_path)
    (tmp_path / "assertions.txt").write_text("{question} {answer} {assertion} JSON")
    assert load_assertion_prompt(tmp_path).startswith("{question}")


def _record(qid: str, method: str, verdicts: list[tuple[str, bool | None]]) -> MethodRecord:
    parts = [AssertionVerdict(assertion=a, passed=p) for a, p in verdicts]
    score, error = share_passed(parts)
    return MethodRecord(
        qid=qid,
        index_key="k",
        question=f"{qid}?",
        reference="r",
        method=method,
        response="an answer",
        judgements={"assertions": Judgement(score=score, error=error, assertions=parts)},
    )


RECORDS = [
    _record("q1", "tog", [("a1", True), ("a2", False), ("a3", True)]),
    _record("q2", "tog", [("b1", True), ("b2", True)]),
    _record("q1", "local", [("a1", False), ("a2", False), ("a3", True)]),
    _record("q2", "local", [("b1", True), ("b2", None)]),
]


def test_the_summary_counts_and_lists_what_each_method_missed() -> None:
    out = assertion_summary(RECORDS, ["tog", "local"])
    tog, local = out["tog"], out["local"]
    assert (tog["answers"], tog["assertions"], tog["passed"], tog["missed"]) == (2, 5, 4, 1)
    assert tog["pass_rate"] == pytest.approx(4 / 5) and tog["all_supported"] == 1
    assert tog["missed_assertions"] == [{"question_id": "q1", "index_key": "k", "assertion": "a2"}]
    assert (local["passed"], local["missed"], local["unscored"]) == (2, 2, 1)
    assert local["pass_rate"] == pytest.approx(2 / 4) and local["all_supported"] == 0
    assert [m["assertion"] for m in local["missed_assertions"]] == ["a1", "a2"]


def test_csv_and_report_show_the_missed_assertions() -> None:
    detailed = detailed_results(
        RECORDS, ["tog", "local"], {"metrics": ["assertions"]}, keep_intermediate=False
    )
    frame = flat_frame(detailed).set_index(["question_id", "method"])
    assert frame.loc[("q1", "local"), "assertions_missed"] == 2
    assert frame.loc[("q1", "local"), "missed_assertions"] == "a1 | a2"
    assert frame.loc[("q2", "tog"), "assertions_missed"] == 0
    assert frame.loc[("q2", "local"), "assertions"] != frame.loc[("q2", "local"), "assertions"]
    summary = {
        "by_method": {},
        "assertions": assertion_summary(RECORDS, ["tog", "local"]),
        "metadata": {"methods": ["tog", "local"], "metrics": ["assertions"]},
    }
    data = page_data(detailed, summary)
    assert [s.missed for s in data.assertions] == [1, 2]
    html = render_page(data)
    assert 'id="assertions"' in html and "local missed 2" in html
    assert "Assertions: 2 of 3 supported" in html and "✗ missed" in html


def test_the_terminal_table_says_how_many_assertions_each_method_supported() -> None:
    from gtog.eval.results._table import assertion_line

    line = assertion_line({"assertions": assertion_summary(RECORDS, ["tog", "local"])})
    assert line == (
        "assertions supported: tog 4/5, local 2/4 (1 unscored) (which ones each missed: "
        "report.html)"
    )
    assert assertion_line({}) is None
