"""CI gates that cannot pass on failures (issue 44 item 2): `--fail-under` counts unscored
judge calls as wrong and refuses thresholds off the metric's scale; `eval diff`'s gate
fails a shrunk question set, refuses differently-judged runs, says when n is too small for
significance, and has a threshold mode (`--max-drop`). The reviewer's cases, by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from gtog._errors import InputError
from gtog.eval.results._diff import diff_runs, smallest_p
from gtog.eval.results._diff_gate import check_diff
from gtog.eval.results._gate import Gate, check_gates, check_scale, gates_passed, parse_gate
from gtog.eval.results._log import EvalLog, checkpoint_header
from gtog.eval.results._records import MethodRecord
from gtog.eval.results._spec import DatasetSpec, EvalSpec, JudgeSpec
from gtog.eval.results._summary import summarize
from gtog.eval.scoring import Judgement


def rec(qid: str, score: float | None, *, error: str | None = None, judge: str | None = None):
    r = MethodRecord(qid=qid, index_key="k", question=f"Q {qid}?", reference=f"R {qid}", method="m")
    if error is not None:
        r.error = error
        return r
    r.response = f"answer {qid}"
    if judge is not None:
        r.judgements["correctness"] = Judgement.unscored(judge)
    elif score is not None:
        r.judgements["correctness"] = Judgement(score=score)
    return r


def spec(n: int = 10, **judge: object) -> EvalSpec:
    judge = {"metrics": ["correctness"], "models": {"k": "openai/judge"}, **judge}
    return EvalSpec(
        dataset=DatasetSpec(path="qa.json", hash="h", questions=n),
        methods=["m"],
        judge=JudgeSpec(**judge),
    )


def run(records: list[MethodRecord], **judge: object) -> EvalLog:
    """A run of `records`, each judged under its spec (a copy of each record)."""
    made = spec(len(records), **judge)
    digest = made.judge.digest("k")
    return EvalLog(
        spec=made, records=[r.model_copy(update={"judged_with": digest}) for r in records]
    )


UNREADABLE = "unparseable judge reply (no explicit 0/1 score): no JSON in reply"
ALL_RIGHT = [rec(f"q{i}", 1) for i in range(10)]


# -- --fail-under ------------------------------------------------------------------------


def test_fail_under_counts_an_unscored_judge_call_as_wrong() -> None:
    """The reviewer's run: 1 right answer, and the judge's replies unreadable on the 9
    wrong ones. It passed with `n 1, correct 1.00`."""
    records = [rec("q0", 1)] + [rec(f"q{i}", None, judge=UNREADABLE) for i in range(1, 10)]
    summary = summarize(records, ["m"], ["correctness"])
    strict = summary["by_method"]["m"]["strict"]
    assert strict["correctness"] == pytest.approx(0.1) and strict["scored"]["correctness"] == 10
    assert strict["failed"]["correctness"] == {"search_errors": 0, "judge_errors": 9}
    [line] = check_gates(summary, [parse_gate("correctness=0.9")])
    assert line == (
        "m correctness: 0.100 < 0.9 (strict mean, n 10; counted as wrong: 0 failed searches, "
        "9 unscored judge calls)"
    )
    # the plain mean still leaves the failures out (shown, not scored)
    assert summary["by_method"]["m"]["correctness"] == 1.0


def test_fail_under_says_one_line_when_it_passes() -> None:
    summary = summarize([*ALL_RIGHT[:9], rec("q9", None, error="boom")], ["m"], ["correctness"])
    gates = [Gate("correctness", 0.85)]
    assert check_gates(summary, gates) == []
    line = gates_passed(summary, gates)
    assert line.startswith("gate passed: correctness >= 0.85: m 0.900 (n 10)")
    assert "\n" not in line


@pytest.mark.parametrize("value", ["70", "-0.1", "1.5"])
def test_fail_under_refuses_a_threshold_off_the_scale(value: str) -> None:
    with pytest.raises(InputError) as bad:
        check_scale(parse_gate(f"correctness={value}"))
    message = str(bad.value)
    assert message.startswith(f"--fail-under correctness={float(value):g}: correctness is ")
    assert "scored from 0 to 1" in message and "\n" not in message
    if value == "70":
        assert "did you mean 0.7?" in message
    check_scale(parse_gate("correctness=0.7"))  # on the scale: fine
    check_scale(parse_gate("correctness=7"), scales={"correctness": [0, 10]})  # a graded judge
    check_scale(parse_gate("correctness=0.05", "--max-drop"), "--max-drop", drop=True)


# -- eval diff ---------------------------------------------------------------------------


def _gate(a: EvalLog, b: EvalLog, **kw: object):
    kw.setdefault("significance", True)
    kw.setdefault("max_drops", [])
    return check_diff(diff_runs(a, b), **kw)  # type: ignore[arg-type]


def test_b_with_four_failed_searches_fails_the_gate_with_the_counts() -> None:
    b = run(
        [rec(f"q{i}", 1) for i in range(6)] + [rec(f"q{i}", None, error="x") for i in (6, 7, 8, 9)]
    )
    diff = diff_runs(run(ALL_RIGHT), b)
    entry = diff["methods"]["m"]["correctness"]
    assert entry["n"] == 6 and diff["questions"]["b_search_errors"] == 4
    assert entry["coverage"] == {
        "a": 10, "compared": 6, "missing": 0, "changed": 0, "search_errors": 4, "judge_errors": 0
    }  # fmt: skip
    verdict = check_diff(diff, significance=True, max_drops=[])
    assert verdict.exit_code == 1 and verdict.passed is None
    assert verdict.failures == [
        "m correctness: B covers 6 of the 10 questions A scored (4 failed searches in B)"
    ]


def test_b_covering_two_of_a_s_ten_questions_fails_the_gate() -> None:
    verdict = _gate(run(ALL_RIGHT), run(ALL_RIGHT[:2]))
    assert verdict.failures == [
        "m correctness: B covers 2 of the 10 questions A scored (8 missing in B)"
    ]
    verdict = _gate(run(ALL_RIGHT), run(ALL_RIGHT[:2]), significance=False,
                    max_drops=[Gate("correctness", 0.05)])  # fmt: skip
    assert verdict.exit_code == 1
    # unscored judge calls in B are lost questions too
    b = [*ALL_RIGHT[:8], rec("q8", None, judge=UNREADABLE), rec("q9", None, judge=UNREADABLE)]
    assert _gate(run(ALL_RIGHT), run(b)).failures == [
        "m correctness: B covers 8 of the 10 questions A scored (2 unscored judge calls in B)"
    ]


def test_differently_judged_runs_are_named_and_the_gate_refuses_unless_told() -> None:
    a = run(ALL_RIGHT)
    judged = {"prompts": "other", "temperature": 0.7, "models": {"k": "openai/other-judge"}}
    b = run([rec(f"q{i}", 1) for i in range(10)], **judged)
    diff = diff_runs(a, b)
    assert diff["judges"] == [
        "judge model openai/judge -> openai/other-judge (k)",
        "judge prompts changed",
        "judge temperature 0.0 -> 0.7",
    ]
    verdict = check_diff(diff, significance=True, max_drops=[])
    assert verdict.exit_code == 2 and verdict.refusal is not None
    assert "judged differently" in verdict.refusal and "--allow-judge-change" in verdict.refusal
    assert any("judged differently" in n for n in verdict.notes)
    allowed = check_diff(diff, significance=False, max_drops=[Gate("correctness", 0.1)],
                         allow_judge_change=True)  # fmt: skip
    assert allowed.exit_code == 0 and allowed.passed is not None
    assert any("judged differently" in n for n in allowed.notes)  # still said
    assert diff_runs(a, run(ALL_RIGHT))["judges"] == []
    # a judge setting added later is named too
    from gtog.eval.results._diff import judge_changes

    later = JudgeSpec(citations_max_checked=3)
    assert judge_changes(JudgeSpec(), later, []) == ["judge citations_max_checked None -> 3"]


def test_six_questions_all_zero_cannot_be_significant_and_max_drop_fails() -> None:
    """The reviewer's copy of a 6-question run with every score set to 0."""
    a = run(ALL_RIGHT[:6])
    b = run([rec(f"q{i}", 0) for i in range(6)])
    diff = diff_runs(a, b)
    e = diff["methods"]["m"]["correctness"]
    assert e["test"] == "mcnemar_exact" and e["p_value"] == pytest.approx(2 * 0.5**6)
    assert e["p_floor_holm"] == pytest.approx(0.03125) and e["can_be_significant"] is True
    assert e["regression"] is True  # one test: 0.031 < 0.05

    # with f1 too (two tests), Holm makes 0.031 at best 0.0625: no drop can be significant
    def two(records: list[MethodRecord], f1: float) -> EvalLog:
        scored = [r.model_copy(deep=True) for r in records]
        for r in scored:
            r.judgements["f1"] = Judgement(score=f1)
        return run(scored, metrics=["correctness", "f1"])

    diff = diff_runs(two(ALL_RIGHT[:6], 1.0), two([rec(f"q{i}", 0) for i in range(6)], 0.0))
    entries = diff["methods"]["m"]
    assert [entries[x]["p_floor_holm"] for x in ("correctness", "f1")] == [0.0625, 0.0625]
    assert not any(e["regression"] or e["can_be_significant"] for e in entries.values())
    verdict = check_diff(diff, significance=True, max_drops=[])
    assert verdict.exit_code == 2 and "cannot fail here" in (verdict.refusal or "")
    assert "m correctness (n 6, smallest p after Holm 0.0625)" in verdict.refusal
    assert any(n.startswith("n too small for any drop") for n in verdict.notes)
    dropped = check_diff(diff, significance=True, max_drops=[Gate("correctness", 0.05)])
    assert dropped.exit_code == 1 and dropped.failures == [
        "--max-drop m correctness: 1.000 -> 0.000, a drop of 1.000 > 0.05 (n 6)"
    ]


def test_max_drop_is_a_threshold_whatever_the_p_value() -> None:
    a = run(ALL_RIGHT * 1)
    b = run([rec(f"q{i}", int(i != 0)) for i in range(10)])  # one flip: p 1.0
    assert _gate(a, b, significance=False, max_drops=[Gate("correctness", 0.1)]).exit_code == 0
    over = _gate(a, b, significance=False, max_drops=[Gate("correctness", 0.05)])
    assert over.failures == [
        "--max-drop m correctness: 1.000 -> 0.900, a drop of 0.100 > 0.05 (n 10)"
    ]
    assert _gate(a, b, significance=False, max_drops=[Gate("correctness", 0.1, "m")]).passed
    nothing = _gate(a, b, significance=False, max_drops=[Gate("correctness", 0.1, "other")])
    assert nothing.failures == ["--max-drop other correctness: nothing compared"]


def test_a_diff_with_nothing_in_common_fails_the_gate() -> None:
    other = run(ALL_RIGHT, metrics=["f1"])
    verdict = _gate(run(ALL_RIGHT), other)
    assert verdict.exit_code == 1 and verdict.failures == [
        "nothing compared: no method and metric both runs scored"
    ]


def test_smallest_p_by_test() -> None:
    assert smallest_p("mcnemar_exact", 6) == pytest.approx(0.03125)
    assert smallest_p("paired_permutation", 3) == pytest.approx(0.25)
    assert smallest_p("paired_permutation", 40) == pytest.approx(1e-4)
    assert smallest_p("cluster_sign_flip", 400, clusters=6) == pytest.approx(0.03125)
    assert smallest_p(None, 6) is None


# -- the command ---------------------------------------------------------------------------


def _write(path: Path, log: EvalLog) -> Path:
    lines = [checkpoint_header(log.spec)] + [r.model_dump_json() for r in log.records]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_diff_command_exit_codes_and_lines(tmp_path: Path) -> None:
    from gtog.cli._eval_tools import diff_command

    app = typer.Typer()
    app.command("diff")(diff_command)
    app.command("other")(lambda: None)
    a = _write(tmp_path / "a.jsonl", run(ALL_RIGHT[:6]))
    b = _write(tmp_path / "b.jsonl", run([rec(f"q{i}", 0) for i in range(6)]))
    short = _write(tmp_path / "short.jsonl", run(ALL_RIGHT[:2]))

    def diff(*args: str):
        return CliRunner().invoke(app, ["diff", *args])

    plain = diff(str(a), str(b))
    assert plain.exit_code == 0
    dropped = diff(str(a), str(b), "--max-drop", "correctness=0.05")
    assert dropped.exit_code == 1 and "a drop of 1.000 > 0.05" in dropped.output
    kept = diff(str(a), str(a), "--max-drop", "correctness=0.05")
    assert kept.exit_code == 0 and "gate passed" in kept.output, kept.output
    lost = diff(str(a), str(short), "--fail-on-regression")
    assert lost.exit_code == 1 and "B covers 2 of the 6 questions A scored" in lost.output
    off = diff(str(a), str(b), "--max-drop", "correctness=5")
    assert off.exit_code == 2 and "outside its scale" in off.output
    out = tmp_path / "d.json"
    assert diff(str(a), str(b), "--json", str(out)).exit_code == 0
    assert json.loads(out.read_text())["methods"]["m"]["correctness"]["coverage"]["a"] == 6


def test_strict_means_count_a_failure_as_the_bottom_of_a_graded_scale() -> None:
    """A graded judge (1-5): a failed search or unscored judge call is its 1, not 0, in the
    strict mean; with repeats (epochs) too."""

    def graded(qid: str, score: int | None, epoch: int = 1, **kw: object) -> MethodRecord:
        r = rec(qid, None, **kw)  # type: ignore[arg-type]
        r.epoch = epoch
        if score is not None:
            r.judgements["correctness"] = Judgement(score=score, scale=[1, 5])
        return r

    records = [graded("q0", 5), graded("q1", None, error="boom"), graded("q2", None, judge="x")]
    summary = summarize(records, ["m"], ["correctness"])
    assert summary["by_method"]["m"]["strict"]["correctness"] == pytest.approx(7 / 3)
    repeated = [graded("q0", 5), graded("q0", None, epoch=2, judge="x")]
    summary = summarize(repeated, ["m"], ["correctness"], epochs=2)
    assert summary["by_method"]["m"]["strict"]["correctness"] == pytest.approx(3.0)
