"""The one-line verdict (best per metric, significance, caveats) and the table's n column."""

from __future__ import annotations

from gtog.eval.results._summary import summarize
from gtog.eval.results._verdict import verdict
from tests.unit.eval.test_summary_stats import _render, _rows, rec

METHODS = ["tog", "local", "basic"]


def _demo_like(status: str = "complete", judge: str = "openai/qwen2.5-coder-1.5b@T0") -> dict:
    """Six questions, every method right on 4 of them: nothing to tell apart."""
    scores = {"tog": [1, 1, 1, 1, 0, 0], "local": [1, 1, 0, 0, 1, 1], "basic": [0, 1, 1, 1, 1, 0]}
    records = [
        rec(str(i), m, s, recall=0.5 + 0.05 * i * (m == "local"))
        for m, values in scores.items()
        for i, s in enumerate(values)
    ]
    s = summarize(records, METHODS, ["correctness", "token_recall"])
    s["metadata"] = {
        "metrics": ["correctness", "token_recall"],
        "judge_models": {"a": judge},
        "run": {"status": status, "pairs_done": 18, "pairs_total": 18},
    }
    return s


def test_verdict_when_nothing_is_significant_names_the_caveats() -> None:
    s = _demo_like()
    # hand-computed: correctness 4/6 = 0.67 for all three; token recall: local
    # 0.5 + 0.05 * mean(0..5) = 0.625, the others 0.50
    assert verdict(s) == (
        "Highest correctness: tog, local and basic tie at 0.67; highest token recall: local "
        "(0.62). No method is significantly better on these 6 questions (paired tests, Holm "
        "p < 0.05). Caveats: only 6 questions compared; a small judge (1.5B parameters)."
    )
    s["metadata"]["run"] = {"status": "interrupted", "pairs_done": 4, "pairs_total": 18}
    s["metadata"]["judge_models"] = {"a": "openai/gpt-4o@T0"}
    assert verdict(s).endswith(
        "Caveats: only 6 questions compared; partial run: 4 of 18 pairs (interrupted)."
    )
    # a run judged by no LLM (token recall only) has no judge to call small
    s["metadata"]["judge_models"] = {"a": "openai/qwen2.5-coder-1.5b@T0"}
    assert "small judge" not in (verdict(s, ["token_recall"]) or "")


def test_verdict_names_significant_differences_and_ties() -> None:
    a = [1] * 12 + [0, 1]
    b = [0] * 12 + [0, 1]
    records = [rec(str(i), "tog", a[i]) for i in range(14)]
    records += [rec(str(i), "local", b[i]) for i in range(14)]
    records += [rec(str(i), "basic", a[i]) for i in range(14)]
    s = summarize(records, METHODS, ["correctness"])
    # McNemar: 12 discordant pairs all one way, p = 2 * 0.5**12 = 0.00049; Holm x3 < 0.05
    line = verdict(s, ["correctness"])
    assert line == (
        "Highest correctness: tog and basic (0.93). On these 14 questions, tog is "
        "significantly better than local on correctness, and basic is significantly better "
        "than local on correctness (paired tests, Holm p < 0.05). Caveats: only 14 questions "
        "compared."
    )
    text = " ".join(_render(s, ["correctness"]).split())
    assert line in text  # the terminal prints the same line under its table


def test_interrupted_table_n_and_caption_agree() -> None:
    """tog answered 2 questions, local and basic 1: the means cover the 1 question all
    answered, and the n column, the caption and the plural say so."""
    records = [rec("1", "tog", 1), rec("2", "tog", 0), rec("1", "local", 1), rec("1", "basic", 0)]
    s = summarize(records, METHODS, ["correctness"])
    text = _render(s, ["correctness"])
    rows = _rows(text)
    for method in METHODS:
        assert rows[method].split()[1] == "1", rows[method]  # n: the mean's questions
    flat = " ".join(text.split())
    assert "Mean over the 1 question every method answered" in flat
    assert "1 questions" not in flat and "question(s)" not in flat  # the noise lines too
    assert "answers per method: tog 2, local 1, basic 1" in flat
