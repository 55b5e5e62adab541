"""Abstentions, failure attribution and metric agreement, on fixtures counted by hand."""

from __future__ import annotations

import pytest

from gtog.eval.results._abstention import AbstentionRules, first_sentence
from gtog.eval.results._agreement import metric_agreement
from gtog.eval.results._attribution import attribution_summary, tog_stage
from gtog.eval.results._records import MethodRecord
from gtog.eval.results._spec import AnalysisSpec
from gtog.eval.results._statistics import cohen_kappa, wilson_interval
from gtog.eval.results._summary import summarize
from gtog.eval.scoring import Judgement

DECLINING = [
    "I do not know.",
    "I don't know the answer to that.",
    "I’m unable to answer this question from the data.",
    "I am sorry but I am unable to answer this question given the provided data.",
    "The knowledge graph does not say who gave Maren the compass.",
    "The provided context does not mention a ship.",
    "There is no information about the storm in the data tables.",
    "Not enough information to answer.",
    "N/A",
    "",
    "  (no answer) ",
    "unknown",
    "?",
    "The question cannot be answered from these sources.",
]
ANSWERING = [
    "Maren Holt.",
    "Ilse Dunmore gave it to her; the data does not mention when.",
    "Jory Quill did not know the clock was valuable.",  # a subject that is not the data
    "There is no doubt: it was Bram Osk.",
    "None of the villagers but Hugo Tamsin returned it.",
    "Unknown to Edda, Bram followed the tracks.",
]


@pytest.mark.parametrize("answer", DECLINING)
def test_declining_answers_abstain(answer: str) -> None:
    assert AbstentionRules().abstains(answer)


@pytest.mark.parametrize("answer", ANSWERING)
def test_answers_do_not_abstain(answer: str) -> None:
    assert not AbstentionRules().abstains(answer)


def test_rules_are_extensible_and_can_drop_the_builtin_ones() -> None:
    own = AbstentionRules(patterns=(r"^no comment\b",))
    assert own.abstains("No comment. Ask the mayor.")
    assert own.abstains("I do not know.")
    only = AbstentionRules(patterns=(r"^no comment\b",), builtin=False)
    assert not only.abstains("I do not know.") and not only.abstains("N/A")
    assert only.abstains("no comment")


def test_first_sentence() -> None:
    assert first_sentence("Maren Holt. She keeps it.") == "Maren Holt"
    assert first_sentence("v1.2 is out\nsecond line") == "v1.2 is out"


def rec(
    qid: str,
    method: str,
    response: str | None,
    correct: int | None,
    *,
    evidence: str | None = None,
    context: str | None = None,
    recall: float | None = None,
    error: str | None = None,
    **scores: float,
) -> MethodRecord:
    r = MethodRecord(
        qid=qid,
        index_key="k",
        question="Q?",
        reference="Maren Holt",
        method=method,
        evidence=evidence,
        response=response,
        error=error,
        context_text=context,
    )
    if correct is not None:
        r.judgements["correctness"] = Judgement(score=correct)
    if recall is not None:
        r.judgements["evidence_recall"] = Judgement(score=recall)
    for name, value in scores.items():
        r.judgements[name] = Judgement(score=value)
    return r


def test_abstention_rate_and_accuracy_over_the_answered() -> None:
    records = [
        rec("1", "tog", "Maren Holt.", 1),
        rec("2", "tog", "I do not know.", 0),
        rec("3", "tog", "The knowledge graph does not say.", 0),
        rec("4", "tog", "Tobias Holt.", 0),
        rec("5", "tog", None, None, error="timed out"),  # not an answer: left out
        rec("1", "local", "Maren Holt.", 1),
        rec("2", "local", "Ilse.", 0),
        rec("3", "local", "Maren.", 1),
        rec("4", "local", "Kelport.", 0),
    ]
    s = summarize(records, ["tog", "local"], ["correctness"])
    tog, local = s["by_method"]["tog"], s["by_method"]["local"]
    assert tog["abstentions"] == 2 and tog["abstention_rate"] == pytest.approx(2 / 4)
    assert tog["abstention_ci95"] == pytest.approx(wilson_interval(2, 4).as_list())
    assert tog["correctness"] == pytest.approx(1 / 4)  # the plain mean, beside
    assert tog["answered"]["correctness"] == pytest.approx(1 / 2)  # 1 of 2 answered
    assert tog["answered_n"]["correctness"] == 2
    assert local["abstention_rate"] == 0.0
    assert local["answered"]["correctness"] == local["correctness"] == pytest.approx(1 / 2)
    custom = summarize(
        records, ["tog"], ["correctness"], AnalysisSpec(abstention_patterns=["^tobias"])
    )
    assert custom["by_method"]["tog"]["abstentions"] == 3


EVIDENCE = "Maren Holt keeps the lighthouse on Varn Island."
FOUND = "-----Entities-----\nMAREN HOLT keeps the lighthouse on VARN ISLAND"
MISSED = "-----Entities-----\nOskar Venn sells whale oil in Kelport"


def test_attribution_table_matches_a_hand_count() -> None:
    records = [
        # local: found+right x2, found+wrong x1, missed+wrong x2, missed+right x1, unknown x2
        rec("1", "local", "a", 1, evidence=EVIDENCE, recall=1.0),
        rec("2", "local", "a", 1, evidence=EVIDENCE, context=FOUND),  # computed: 1.0
        rec("3", "local", "a", 0, evidence=EVIDENCE, recall=0.75),
        rec("4", "local", "a", 0, evidence=EVIDENCE, recall=0.25),
        rec("5", "local", "a", 0, evidence=EVIDENCE, context=MISSED),  # computed: 0
        rec("6", "local", "a", 1, evidence=EVIDENCE, recall=0.1),
        rec("7", "local", "a", 0),  # no gold evidence: unknown
        rec("8", "local", "a", 0, evidence=EVIDENCE),  # no context saved: unknown
        rec("9", "local", "a", None, evidence=EVIDENCE, recall=0.0),  # no verdict: left out
        rec("10", "local", None, None, error="boom"),  # failed search: left out
    ]
    got = attribution_summary(records, ["local"])["local"]
    assert got["table"] == {"found": {"right": 2, "wrong": 1}, "missed": {"right": 1, "wrong": 2}}
    assert (got["wrong"], got["retrieval_failures"], got["generation_failures"]) == (5, 2, 1)
    assert got["unknown"] == 2
    assert got["retrieval_share"] == pytest.approx(2 / 3)
    assert got["generation_share"] == pytest.approx(1 / 3)
    assert "tog_stages" not in got
    # the threshold decides: at 0.8, question 3 (0.75) missed its evidence
    strict = attribution_summary(records, ["local"], threshold=0.8)["local"]
    assert (strict["retrieval_failures"], strict["generation_failures"]) == (3, 0)


def _tree(topics: list[str], candidates: list[tuple[str, bool]], verdicts: list[str]) -> list[dict]:
    tree = [
        {
            "depth": 0,
            "candidates": [
                {"id": f"0.{i}", "entity": t, "kept": True} for i, t in enumerate(topics)
            ],
            "verdict": "linked" if topics else "no_entity",
        }
    ]
    for d, verdict in enumerate(verdicts, start=1):
        tree.append(
            {
                "depth": d,
                "candidates": [
                    {"id": f"{d}.{i}", "entity": e, "kept": k, "score": 0.5}
                    for i, (e, k) in enumerate(candidates)
                ],
                "verdict": verdict,
            }
        )
    return tree


def _tog(qid: str, tree: list[dict], paths: list[list[str]]) -> MethodRecord:
    r = rec(qid, "tog", "Oskar Venn.", 0, evidence=EVIDENCE, recall=0.0)
    r.exploration = tree
    r.paths = [{"entities": p, "path": " -> ".join(p), "score": 0.5} for p in paths]
    return r


def test_tog_stages_from_the_exploration_tree() -> None:
    cases = {
        "no_start_entity": _tog("1", _tree([], [], []), []),
        "answered_without_paths": _tog(
            "2", _tree(["OSKAR VENN"], [], ["exhausted"]), [["OSKAR VENN"]]
        ),
        "evidence_pruned": _tog(
            "3",
            _tree(["KELPORT"], [("OSKAR VENN", True), ("VARN ISLAND", False)], ["max_depth"]),
            [["KELPORT", "OSKAR VENN"]],
        ),
        "stopped_early": _tog(
            "4", _tree(["KELPORT"], [("OSKAR VENN", True)], ["enough"]), [["KELPORT", "OSKAR VENN"]]
        ),
        "not_reached": _tog(
            "5",
            _tree(
                ["KELPORT"],
                [("OSKAR VENN", True), ("GREY HERON", False)],
                ["go_deeper", "max_depth"],
            ),
            [["KELPORT", "OSKAR VENN"]],
        ),
    }
    for stage, record in cases.items():
        assert tog_stage(record) == stage
    # a pruned evidence entity that another path reached anyway was not lost
    reached = _tog(
        "6",
        _tree(["KELPORT"], [("VARN ISLAND", True), ("VARN ISLAND", False)], ["max_depth"]),
        [["KELPORT", "VARN ISLAND"]],
    )
    assert tog_stage(reached) == "not_reached"
    found = rec("7", "tog", "Maren Holt.", 0, evidence=EVIDENCE, recall=1.0)  # generation
    found.exploration = cases["stopped_early"].exploration
    got = attribution_summary([*cases.values(), reached, found], ["tog"])["tog"]
    assert got["retrieval_failures"] == 6 and got["generation_failures"] == 1
    assert got["tog_stages"] == {
        "no_start_entity": 1,
        "answered_without_paths": 1,
        "evidence_pruned": 1,
        "stopped_early": 1,
        "not_reached": 2,
    }


def test_metric_agreement_with_the_correctness_judge() -> None:
    # (correctness, f1): right answers 0.9, 0.6, 0.4; wrong ones 0.5, 0.1
    pairs = [(1, 0.9), (1, 0.6), (1, 0.4), (0, 0.5), (0, 0.1)]
    records = [rec(str(i), "m", "a", c, f1=s) for i, (c, s) in enumerate(pairs)]
    records.append(rec("x", "m", "a", None, f1=0.7))  # no verdict: left out
    got = metric_agreement(records, ["correctness", "f1"])["f1"]
    assert got["n"] == 5
    # pairs (right, wrong) where right scores higher: 0.9>0.5,0.1; 0.6>0.5,0.1; 0.4>0.1 = 5/6
    assert got["auc"] == pytest.approx(5 / 6)
    cut = [int(s >= 0.5) for _, s in pairs]  # 1 1 0 1 0
    assert got["accuracy"] == pytest.approx(3 / 5)
    assert got["kappa"] == pytest.approx(cohen_kappa([c for c, _ in pairs], cut).kappa)
    assert metric_agreement(records, ["f1"]) == {}  # no judge, nothing to agree with
