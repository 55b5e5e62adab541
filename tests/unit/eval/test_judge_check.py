"""gtog.eval.run._judge_check: case validation and agreement figures (pure parts)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from gtog._errors import InputError
from gtog.eval.run._judge_check import JudgeCase, agreement, load_cases
from gtog.eval.scoring import Judgement


def write(tmp_path: Path, cases: object) -> Path:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases))
    return path


GOOD = {"metric": "correctness", "question": "Q?", "ground_truth": "G", "answer": "A", "label": 1}


def test_load_cases_maps_fields_to_prompt_placeholders(tmp_path: Path) -> None:
    faithful = {"metric": "faithfulness", "context": "C", "answer": "A", "label": 0, "id": "f1"}
    cases = load_cases(write(tmp_path, {"cases": [GOOD, faithful]}))
    assert cases[0] == JudgeCase(
        "0", "correctness", 1, {"question": "Q?", "ground_truth": "G", "predicted": "A"}
    )
    assert cases[1].id == "f1" and cases[1].values == {"context": "C", "answer": "A"}


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ({**GOOD, "metric": "fluency"}, "cases[0].metric: 'fluency' is not one of"),
        # a graded judge has no 0/1 label to agree with
        (
            {**GOOD, "metric": "correctness_graded"},
            "cases[0].metric: 'correctness_graded' is not one",
        ),
        ({**GOOD, "label": 2}, "cases[0].label: must be 0 or 1"),
        ({**GOOD, "label": True}, "cases[0].label: must be 0 or 1"),
        ({k: v for k, v in GOOD.items() if k != "answer"}, "cases[0].answer: a string is required"),
        ("text", "cases[0]: expected an object"),
    ],
)
def test_bad_cases_name_file_and_field(tmp_path: Path, case: object, message: str) -> None:
    path = write(tmp_path, [case])
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("]", r"\]")) as exc:
        load_cases(path)
    assert str(path) in str(exc.value)


def test_missing_empty_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cases file not found"):
        load_cases(tmp_path / "nope.json")
    with pytest.raises(InputError, match="non-empty list"):
        load_cases(write(tmp_path, []))
    (tmp_path / "bad.json").write_text("[{")
    with pytest.raises(InputError, match="malformed JSON"):
        load_cases(tmp_path / "bad.json")


def test_agreement_counts_confusion_kappa_and_leaves_failures_unscored() -> None:
    labels = [1] * 25 + [0] * 25
    scores = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    cases = [JudgeCase(str(i), "correctness", lab, {}) for i, lab in enumerate(labels)]
    verdicts = [Judgement(score=s) for s in scores]
    cases.append(JudgeCase("x", "correctness", 1, {}))
    verdicts.append(Judgement(error="tie: 1 of 2 scored trials said 1, 1 said 0", votes=[1, 0]))
    r = agreement(cases, verdicts)["correctness"]
    assert r["n"] == 51 and r["scored"] == 50 and r["unscored"] == 1
    assert r["accuracy"] == pytest.approx(0.7) and r["kappa"] == pytest.approx(0.4)
    se = math.sqrt(0.21 / 12.5)
    assert r["kappa_ci95"] == pytest.approx([0.4 - 1.959964 * se, 0.4 + 1.959964 * se], abs=1e-6)
    assert r["kappa_ci95_method"] == "analytic_se"
    assert r["confusion"] == {
        "label_1_judge_1": 20,
        "label_1_judge_0": 5,
        "label_0_judge_1": 10,
        "label_0_judge_0": 15,
    }
    assert r["always_majority_label_accuracy"] == 0.5
    assert r["unanimous"] == 0.0  # the one case with trials split
