"""People's labels against the judge: calibration figures and prediction-powered means,
hand-computed, and checked against ppi-python's own figures (tests/fixtures)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from gtog.eval.results._calibration import (
    MIN_LABELS,
    calibration,
    labels_for_width,
    ppi_difference,
    ppi_mean,
)
from gtog.eval.results._labels import (
    SKIP,
    Label,
    answer_hash,
    append_labels,
    current_labels,
    label_sample,
    read_labels,
)
from gtog.eval.results._records import MethodRecord
from gtog.eval.scoring import Judgement

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def answer(i: int, method: str, judge: int) -> MethodRecord:
    r = MethodRecord(
        qid=f"q{i:02d}",
        index_key="k",
        question=f"Q{i}?",
        reference="R",
        method=method,
        response=f"{method} answer {i}",
    )
    r.judgements["correctness"] = Judgement(score=judge)
    return r


def label(r: MethodRecord, value: int | str | None, who: str = "ann") -> Label:
    return Label(r.qid, r.method, r.epoch, "correctness", value, who, "t", answer_hash(r.response))


def lenient_judge() -> tuple[list[MethodRecord], list[Label]]:
    """20 answers, the judge right-says 14; people label 10: 5 agree right, 2 FP, 2 agree
    wrong, 1 FN."""
    records = [answer(i, "tog", 1 if i < 14 else 0) for i in range(20)]
    people = {0: 1, 1: 1, 2: 1, 3: 1, 4: 1, 5: 0, 6: 0, 14: 0, 15: 0, 16: 1}
    return records, [label(records[i], v) for i, v in people.items()]


def test_calibration_and_the_corrected_mean_by_hand() -> None:
    records, labels = lenient_judge()
    b = calibration(records, labels, ["correctness"], ["tog"])["calibration"]["correctness"]["tog"]
    assert b["n_labels"] == 10 and b["n_answers"] == 20
    assert b["agreement"] == pytest.approx(0.7)
    assert b["fpr"] == pytest.approx(2 / 4) and b["fnr"] == pytest.approx(1 / 6)
    # chance agreement 0.7 * 0.6 + 0.3 * 0.4 = 0.54
    assert b["kappa"] == pytest.approx((0.7 - 0.54) / 0.46)
    assert b["mean_judge"] == pytest.approx(0.7)
    assert b["mean_ppi"] == pytest.approx(0.7 - 0.1)
    # var(judge) = 0.21 over 20; var(label - judge) = 0.3 - 0.01 = 0.29 over 10
    half = 1.959964 * math.sqrt(0.21 / 20 + 0.29 / 10)
    assert b["ci95_ppi"] == pytest.approx([0.6 - half, 0.6 + half], abs=1e-5)
    low, high = b["fpr_ci95"]
    assert low < 0.5 < high  # Wilson, 2 of 4


@pytest.mark.parametrize("case", json.loads((FIXTURES / "ppi_reference.json").read_text()))
def test_the_ppi_mean_is_ppi_pythons(case: dict) -> None:
    mean, ci, _ = ppi_mean(
        np.array(case["Y"], float), np.array(case["Yhat"], float), np.array(case["all"], float)
    )
    assert mean == pytest.approx(case["mean"], abs=1e-12)
    assert ci == pytest.approx([max(0.0, case["ci"][0]), min(1.0, case["ci"][1])], abs=1e-9)


def test_a_paired_difference_adds_the_three_variances() -> None:
    paired = np.array([1.0, 0.0, 0.0, -1.0])  # mean 0, var 0.5
    rect_a = np.array([0.0, -1.0])  # mean -0.5, var 0.25
    rect_b = np.array([0.0, 0.0, 0.0])  # mean 0, var 0
    diff, ci, p = ppi_difference(paired, rect_a, rect_b)
    se = math.sqrt(0.5 / 4 + 0.25 / 2)
    assert diff == pytest.approx(-0.5)
    assert ci == pytest.approx([-0.5 - 1.959964 * se, -0.5 + 1.959964 * se], abs=1e-5)
    assert p == pytest.approx(2 * (1 - 0.5 * (1 + math.erf(0.5 / se / math.sqrt(2)))))


def test_too_few_labels_give_no_corrected_mean_and_say_why() -> None:
    records, labels = lenient_judge()
    b = calibration(records, labels[:4], ["correctness"], ["tog"])["calibration"]["correctness"]
    assert b["tog"]["mean_ppi"] is None and b["tog"]["ci95_ppi"] is None
    assert b["tog"]["reason"] == f"4 labels: at least {MIN_LABELS} needed for a corrected mean"


def test_stale_skipped_and_undone_labels_do_not_count() -> None:
    records, labels = lenient_judge()
    changed = records[0].model_copy(update={"response": "searched again: another answer"})
    live = [changed, *records[1:]]
    more = [label(records[1], None), label(records[2], SKIP)]  # undo; skip
    got, stale = current_labels([*labels, *more], live)
    assert stale == 1  # the label of the answer that changed since
    assert len(got) == 10 - 3


def test_several_labellers_count_with_their_mean_and_their_alpha() -> None:
    records, labels = lenient_judge()
    other = [
        label(records[i], 1 - x.label if i in (5, 6) else x.label, "bo")  # type: ignore[operator]
        for i, x in zip((0, 1, 2, 3, 4, 5, 6, 14, 15, 16), labels, strict=True)
    ]
    out = calibration(records, [*labels, *other], ["correctness"], ["tog"])
    assert out["calibration_labels"]["labellers"] == ["ann", "bo"]
    alpha = out["calibration_labels"]["alpha"]["correctness"]
    assert alpha is not None and 0 < alpha < 1  # they disagree on 2 of 10
    b = out["calibration"]["correctness"]["tog"]
    assert b["n_labels"] == 10  # answers, not lines
    # answers 5 and 6: people split (0.5); the corrected mean uses the mean label
    assert b["mean_ppi"] == pytest.approx(0.7 + (0 - 0 + (0.5 - 1) * 2 + 0 + 1) / 10)


def test_the_sample_is_seeded_stratified_and_interleaved() -> None:
    records = [answer(i, m, i % 2) for m in ("tog", "basic") for i in range(30)]
    a = label_sample(records, "correctness", per_method=5, seed=3)
    assert a == label_sample(list(reversed(records)), "correctness", per_method=5, seed=3)
    assert [r.method for r in a] == ["basic", "tog"] * 5
    assert label_sample(records, "correctness", per_method=5, seed=4) != a


def test_labels_append_and_read_back_past_a_torn_line(tmp_path: Path) -> None:
    _, labels = lenient_judge()
    append_labels(tmp_path, labels[:3])
    with (tmp_path / "labels.jsonl").open("a") as f:
        f.write('{"question_id": "q0')  # a torn last line
    assert read_labels(tmp_path) == labels[:3]


def test_labels_needed_for_a_width() -> None:
    # half width 0.05: (0.05/1.96)^2 = 6.5e-4; judge term 0.21/1000 = 2.1e-4
    n = labels_for_width(0.1, 0.21, 1000, 0.1)
    assert n == math.ceil(0.1 / ((0.05 / 1.959964) ** 2 - 0.21 / 1000))
    assert labels_for_width(0.1, 0.25, 10, 0.1) is None  # the judge's own term is wider


def test_the_plan_says_how_many_labels_a_corrected_mean_needs() -> None:
    from gtog.cli._plan import label_plan

    (before,) = label_plan(None, 0.1)
    assert "about 50 labels per method" in before  # 10% judge errors, 400 answers, +/-0.1
    records, labels = lenient_judge()
    records += [answer(i, "tog", 1) for i in range(20, 400)]
    summary = calibration(records, labels, ["correctness"], ["tog"])
    b = summary["calibration"]["correctness"]["tog"]
    need = labels_for_width(b["error_var"], b["judge_var"], 400, 0.2)
    assert label_plan(summary, 0.1)[1] == f"  correctness: tog 10 now, {need} needed"
