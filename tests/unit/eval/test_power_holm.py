"""The minimum detectable difference is for the test the summary runs and the Holm family
its table adjusts over (issue 44, item 6). Hand-checkable cases; the achieved power at the
reported mde is checked by simulation in benchmarks/power.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rich.console import Console
from scipy import stats

from gtog.eval.results._power import (
    detectable,
    mcnemar_power,
    sign_flip_power,
    smallest_sign_flip_p,
)
from gtog.eval.results._records import MethodRecord
from gtog.eval.results._summary import summarize
from gtog.eval.results._table import summary_table
from gtog.eval.scoring import Judgement

METRICS = ["correctness", "faithfulness", "relevance", "completeness"]


def test_six_clusters_cannot_pass_holm_over_40_tests_and_the_reason_says_why() -> None:
    codes = np.repeat(np.arange(6), 10)
    d = np.where(np.arange(60) % 3 == 0, 1.0, 0.0)  # a right where b is wrong on a third
    alone = detectable(d, codes, binary=True, tests=1, icc=0.0)
    assert alone.mde is not None  # one test: 2 / 2^6 = 0.031 < 0.05 can be reached
    held = detectable(d, codes, binary=True, tests=40, icc=0.0)
    assert held.mde is None and held.tests == 40
    assert held.reason == (
        "no difference is detectable: with 6 clusters the smallest p the test can give is "
        "0.0312, above 0.05/40 = 0.00125 (Holm over 40 tests)"
    )
    assert smallest_sign_flip_p(6) == 2 / 64 and smallest_sign_flip_p(14) == 2 / 10_000


def test_mcnemar_power_is_exact() -> None:
    # 6 questions, all discordant, each going to a with probability 3/4: the exact test
    # rejects only when all 6 go one way (p = 2/64); 5 questions can never reject (2/32)
    assert mcnemar_power(0.5, 6, 1.0) == pytest.approx(0.75**6 + 0.25**6)
    assert mcnemar_power(1.0, 5, 1.0) == 0.0
    assert mcnemar_power(1.0, 6, 1.0) == pytest.approx(1.0)
    assert mcnemar_power(1.0, 6, 1.0, tests=2) == 0.0  # 2/64 > 0.025
    # checked against the test itself: 20 discordant of 20, delta 0.5 -> q = 0.75
    level = 0.05
    exact = sum(
        stats.binom.pmf(x, 20, 0.75)
        for x in range(21)
        if stats.binomtest(x, 20, 0.5).pvalue <= level
    )
    assert mcnemar_power(0.5, 20, 1.0) == pytest.approx(exact, abs=1e-12)


def test_the_mde_of_a_mcnemar_test_has_80_percent_power_at_its_level() -> None:
    d = np.array([1.0] * 25 + [-1.0] * 15 + [0.0] * 80)  # n 120, discordance 1/3
    one, ten = (detectable(d, None, binary=True, tests=t) for t in (1, 10))
    assert one.mde is not None and ten.mde is not None
    assert mcnemar_power(one.mde, 120, 1 / 3) == pytest.approx(0.8, abs=1e-4)
    assert mcnemar_power(ten.mde, 120, 1 / 3, tests=10) == pytest.approx(0.8, abs=1e-4)
    assert ten.mde > one.mde  # Holm over 10 tests asks for more


def test_a_sign_flip_of_six_clusters_rejects_only_when_all_agree() -> None:
    # one question per cluster: power = P(all 6 differences share a sign) = Phi(r)^6 +
    # Phi(-r)^6 (the only patterns with p = 2/64 < 0.05)
    for r in (0.5, 1.0, 2.0):
        expected = stats.norm.cdf(r) ** 6 + stats.norm.cdf(-r) ** 6
        assert sign_flip_power(r, (1,) * 6, 0.0) == pytest.approx(expected, abs=0.02)


def test_fractional_scores_of_many_questions_follow_the_t_test() -> None:
    rng = np.random.default_rng(7)
    d = rng.normal(0.0, 0.3, 400)
    sd = float(np.std(d, ddof=1))
    for tests in (1, 10):
        z = stats.norm.ppf(1 - 0.025 / tests) + stats.norm.ppf(0.8)
        got = detectable(d, None, binary=False, tests=tests).mde
        assert got == pytest.approx(z * sd / math.sqrt(400), rel=0.01)


def _rec(qid: str, key: str, method: str, scores: dict[str, int]) -> MethodRecord:
    r = MethodRecord(
        qid=qid, index_key=key, question="Q", reference="R", method=method, response="A"
    )
    r.judgements = {m: Judgement(score=s) for m, s in scores.items()}
    return r


def test_the_table_says_after_holm_over_its_40_tests_and_that_6_clusters_detect_nothing() -> None:
    methods = ["a", "b", "c", "d", "e"]  # 10 pairs x 4 metrics = 40 tests
    records = [
        _rec(f"q{g}-{i}", f"k{g}", m, {x: (g + i + j + len(x)) % 2 for x in METRICS})
        for g in range(6)
        for i in range(8)
        for j, m in enumerate(methods)
    ]
    s = summarize(records, methods, METRICS)
    assert len(s["comparisons"]) == 40
    assert {c["mde_tests"] for c in s["comparisons"]} == {40}
    assert all(c["mde"] is None for c in s["comparisons"])
    console = Console(width=400, record=True)
    console.print(summary_table(s, METRICS))
    text = " ".join(console.export_text().split())
    assert (
        "no difference" in text
        and "can be told apart (80% power, p < 0.05 after Holm over 40 tests)" in text
    )
    assert "with 6 clusters the smallest p the test can give is 0.0312" in text
