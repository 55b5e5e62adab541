"""Head-to-head judging: order verdicts, win rates, intervals, sign tests, Holm, groups.

Every expected figure here is computed by hand (the Wilson formula and binomial sums
written out), not by the functions under test.
"""

from __future__ import annotations

import math

import pytest

from gtog.eval.results._groups import by_group
from gtog.eval.results._pairwise import pairwise_entries, pairwise_summary
from gtog.eval.results._records import MethodRecord, PairRecord
from gtog.eval.scoring import Judgement
from gtog.eval.scoring._pairwise import (
    PairCall,
    PairJudgement,
    PairVerdict,
    _order_verdict,
    load_pairwise_prompt,
)
from gtog.llm._replies import parse_json_reply

Z = 1.959963984540054


def _wilson(k: int, n: int) -> tuple[float, float]:
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return centre - half, centre + half


def _tail(k: int, n: int, p: float, upper: bool) -> float:
    """P(X >= k) (upper) or P(X <= k) for X ~ Bin(n, p), the sum written out."""
    terms = range(k, n + 1) if upper else range(k + 1)
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in terms)


def _assert_clopper_pearson(ci: list[float], k: int, n: int) -> None:
    """Clopper-Pearson by its definition: P(X >= k | low) = P(X <= k | high) = 2.5%."""
    low, high = ci
    assert _tail(k, n, low, upper=True) == pytest.approx(0.025, abs=1e-9)
    assert _tail(k, n, high, upper=False) == pytest.approx(0.025, abs=1e-9)


def _binomial_two_sided(k: int, n: int) -> float:
    """2 * P(X >= max(k, n-k)) for X ~ Bin(n, 1/2), capped at 1."""
    hi = max(k, n - k)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(hi, n + 1)) / 2**n)


def _pair(qid: str, winner: str | None, agree: bool | None = True, *, a="tog", b="local",
          criterion="comprehensiveness", groups=None) -> PairRecord:  # fmt: skip
    return PairRecord(
        qid=qid,
        index_key="k",
        criterion=criterion,
        a=a,
        b=b,
        judgement=PairJudgement(
            winner=winner,  # type: ignore[arg-type]
            orders_agree=agree if winner is not None else None,
            error=None if winner is not None else "order ba: 2 of 2 trials failed",
            llm_calls=4,
            prompt_tokens=100,
            output_tokens=10,
            cost_usd=0.001,
        ),
        groups=groups or {},
    )


def _calls(order: str, *winners: str | None) -> list[PairCall]:
    return [PairCall(order=order, winner=w, error=None if w else "no JSON") for w in winners]  # type: ignore[arg-type]


def test_an_order_takes_the_majority_of_its_trials_and_a_split_is_a_tie() -> None:
    assert _order_verdict(_calls("ab", "a", "a"), 2) == ("a", None)
    assert _order_verdict(_calls("ab", "a", "tie"), 2) == ("tie", None)
    assert _order_verdict(_calls("ab", "b"), 1) == ("b", None)
    assert _order_verdict(_calls("ab", "a", "b", "a"), 3) == ("a", None)
    # failures count against the majority: unscored, never a win or a tie
    verdict, why = _order_verdict(_calls("ab", "a", None), 2)
    assert verdict is None and why == "1 of 2 trials failed: no JSON"
    verdict, why = _order_verdict(_calls("ba", None), 1)
    assert verdict is None and why.startswith("1 of 1 trials failed")


def test_the_pairwise_reply_needs_an_explicit_winner() -> None:
    assert parse_json_reply('{"winner": 2, "reason": "more detail"}', PairVerdict)[0].winner == 2
    assert parse_json_reply('{"winner": "0", "reason": "same"}', PairVerdict)[0].winner == 0
    echo = load_pairwise_prompt().strip().splitlines()[-1]  # the template's own JSON line
    for bad in (echo, '{"winner": 3}', '{"winner": true}', '{"winner": 1} {"winner": 2}'):
        assert parse_json_reply(bad, PairVerdict)[0] is None, bad


def test_win_rates_intervals_sign_tests_and_holm_by_hand() -> None:
    # tog vs local: 6 wins, 2 losses, no tie (Wilson); tog vs basic: 7 wins, 1 loss, 2 ties
    records = [_pair(str(i), "a") for i in range(6)] + [_pair(str(i), "b") for i in (6, 7)]
    records += [_pair(str(i), "a", b="basic") for i in range(7)]
    records += [_pair("7", "b", b="basic"), _pair("8", "tie", False, b="basic")]
    records += [_pair("9", "tie", True, b="basic"), _pair("10", None, b="basic")]
    comparisons, checks = pairwise_entries(
        records, [("tog", "local"), ("tog", "basic")], ["comprehensiveness"]
    )
    assert checks == []
    local, basic = comparisons
    assert (local["n"], local["wins_a"], local["wins_b"], local["ties"]) == (8, 6, 2, 0)
    assert local["win_rate_a"] == pytest.approx(0.75)
    _assert_clopper_pearson(local["ci95"], 6, 8)
    assert local["ci95_method"] == "clopper_pearson"
    assert local["p_value"] == pytest.approx(74 / 256) == _binomial_two_sided(6, 8)
    assert (basic["n"], basic["wins_a"], basic["wins_b"], basic["ties"]) == (10, 7, 1, 2)
    assert basic["unscored"] == 1  # the failed comparison is neither a win nor a tie
    assert basic["win_rate_a"] == pytest.approx((7 + 1) / 10)
    assert basic["p_value"] == pytest.approx(2 * 9 / 256)  # sign test on the 8 decisive
    _assert_clopper_pearson(basic["ci95"], 8, 10)  # 7 wins + 2 ties / 2: the same rule
    assert basic["ci95_method"] == "clopper_pearson"
    assert basic["position_consistency"] == pytest.approx(9 / 10)
    # Holm over the two: 2 x 0.0703 = 0.1406, then max(0.1406, 1 x 0.2891)
    assert basic["p_holm"] == pytest.approx(2 * 18 / 256)
    assert local["p_holm"] == pytest.approx(74 / 256)


def test_a_position_biased_judge_gives_ties_and_zero_consistency() -> None:
    # a judge that always answers "1": order ab says a, order ba says b -> tie every time
    records = [_pair(str(i), "tie", False) for i in range(8)]
    [entry], _ = pairwise_entries(records, [("tog", "local")], ["comprehensiveness"])
    assert entry["win_rate_a"] == 0.5 and entry["ties"] == 8
    assert entry["position_consistency"] == 0.0 and entry["p_value"] == 1.0
    _assert_clopper_pearson(entry["ci95"], 4, 8)  # 8 ties: 4 of 8, with its width


def test_aa_checks_are_reported_apart_and_flag_a_slot_biased_judge() -> None:
    fair = [_pair(str(i), "tie", True, a="tog", b="tog") for i in range(6)]
    slanted = [_pair(str(i), "a", True, a="local", b="local") for i in range(8)]
    out = pairwise_summary(
        fair + slanted, [("tog", "tog"), ("local", "local")], ["comprehensiveness"]
    )
    assert out["pairwise"] == []
    fair_check, slanted_check = out["pairwise_aa"]
    assert fair_check["win_rate_a"] == 0.5 and fair_check["passes"] is True
    assert fair_check["fails"] == []
    assert slanted_check["win_rate_a"] == 1.0 and slanted_check["passes"] is False
    assert slanted_check["fails"] == ["win_rate"]
    assert slanted_check["p_value"] == pytest.approx(2 / 256)
    assert out["pairwise_usage"] == {
        "comparisons": 14,
        "llm_calls": 56,
        "prompt_tokens": 1400,
        "output_tokens": 140,
        "usd_total": pytest.approx(0.014),
    }


def _aa(qid: str, first: int, second: int) -> PairRecord:
    """An A/A comparison whose judge said `first` in order ab and `second` in order ba
    (1 or 2: a slot; 0: a tie), combined as PairwiseJudge.score_pair does."""
    slots = {"ab": {1: "a", 2: "b", 0: "tie"}, "ba": {1: "b", 2: "a", 0: "tie"}}
    ab, ba = slots["ab"][first], slots["ba"][second]
    return _pair(qid, ab if ab == ba else "tie", ab == ba, a="tog", b="tog")


def test_an_aa_check_fails_a_judge_that_picks_a_slot_and_says_which_part_failed() -> None:
    """The review's reproduction: one answer in both slots, a judge at temperature 0 sends
    one prompt twice; one that names answer 1 on 80% of the questions (answer 2 on the
    rest) gets ties everywhere, a win rate of 0.5 and a sign test of 1: the check must still
    fail it, on position consistency."""
    slot_picker = [_aa(str(i), 1, 1) if i < 8 else _aa(str(i), 2, 2) for i in range(10)]
    [check] = pairwise_entries(slot_picker, [("tog", "tog")], ["comprehensiveness"])[1]
    assert (check["win_rate_a"], check["ties"], check["p_value"]) == (0.5, 10, 1.0)
    assert check["position_consistency"] == 0.0
    assert check["passes"] is False and check["fails"] == ["position_consistency"]
    # at a temperature above 0 the orders sometimes agree by chance: 3 of 10 still fails
    warm = [_aa(str(i), 1, 2) if i < 3 else _aa(str(i), 1, 1) for i in range(10)]
    [check] = pairwise_entries(warm, [("tog", "tog")], ["comprehensiveness"])[1]
    assert check["position_consistency"] == pytest.approx(0.3) and check["passes"] is False
    # a judge that reads the answers calls two copies of one answer a tie, in both orders
    fair = [_aa(str(i), 0, 0) for i in range(10)]
    [check] = pairwise_entries(fair, [("tog", "tog")], ["comprehensiveness"])[1]
    assert check["position_consistency"] == 1.0 and check["passes"] is True
    assert check["fails"] == []
    # both parts can fail; nothing scored is not tested
    both = [_aa(str(i), 1, 2) for i in range(7)] + [_aa(str(i), 1, 1) for i in range(7, 17)]
    [check] = pairwise_entries(both, [("tog", "tog")], ["comprehensiveness"])[1]
    assert check["p_value"] == pytest.approx(_binomial_two_sided(7, 7))
    assert check["fails"] == ["win_rate", "position_consistency"]
    [check] = pairwise_entries([], [("tog", "tog")], ["comprehensiveness"])[1]
    assert check["passes"] is None and check["fails"] is None


def test_groups_with_a_missing_field_go_to_none() -> None:
    pairs = [
        _pair("1", "a", groups={"type": "who"}),
        _pair("2", "b", groups={"type": "who"}),
        _pair("3", "a"),
    ]
    out = pairwise_summary(pairs, [("tog", "local")], ["comprehensiveness"], ["type"])
    groups = out["pairwise_by_group"]["type"]
    assert set(groups) == {"who", "(none)"}
    assert groups["who"][0]["win_rate_a"] == 0.5 and groups["(none)"][0]["wins_a"] == 1

    def record(qid: str, method: str, score: int, groups: dict[str, str]) -> MethodRecord:
        return MethodRecord(
            qid=qid, index_key="k", question="q", reference="r", method=method,
            response="x", judgements={"correctness": Judgement(score=score)}, groups=groups,
        )  # fmt: skip

    records = [
        record("1", "tog", 1, {"type": "who", "hops": "2"}),
        record("1", "local", 0, {"type": "who", "hops": "2"}),
        record("2", "tog", 1, {"type": "where"}),
        record("2", "local", 1, {"type": "where"}),
        record("3", "tog", 0, {}),
        record("3", "local", 1, {}),
    ]
    grouped = by_group(records, ["tog", "local"], ["correctness"], ["type", "hops"])
    assert set(grouped["type"]) == {"who", "where", "(none)"}
    assert grouped["type"]["who"]["tog"]["correctness"]["mean"] == 1.0
    assert grouped["type"]["who"]["local"]["correctness"] == {
        "mean": 0.0,
        "n": 1,
        "ci95": pytest.approx(list(_wilson(0, 1)), abs=1e-9),
        "ci95_naive": pytest.approx(list(_wilson(0, 1)), abs=1e-9),
    }
    assert set(grouped["hops"]) == {"2", "(none)"}
    assert grouped["hops"]["(none)"]["tog"]["correctness"]["n"] == 2
