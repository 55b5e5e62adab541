"""Why a method wins or fails, on real runs of answers files with known evidence and verdicts:
reference metrics (answer_similarity over real HTTP), abstentions, failure attribution,
`gtog eval diff` with three known flips, `--fail-on-regression` and `--fail-under`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.browser import find_chromium, load_page
from tests.support.projects import gtog
from tests.support.scripted_server import ScriptedServer
from tests.support.world import EXAMPLE_QA

pytestmark = pytest.mark.integration

EVIDENCE = {
    "lh-01": "Maren Holt keeps the lighthouse on Varn Island.",
    "lh-02": "During the November storm Maren kept the lamp burning and saved the Grey Heron.",
    "lh-03": "Captain Ilse Dunmore gave Maren the brass compass.",
    "lh-04": "The compass belonged to Admiral Pell Dunmore.",
    "lh-05": "Maren buys whale oil from Oskar Venn in Kelport.",
}
NOISE = "Kelport is a harbour town where fishermen mend their nets."
# lh-01 found+right, lh-02 found+wrong (generation), lh-03 missed+wrong (retrieval),
# lh-04 missed+wrong and declines, lh-05 missed+right; or-01 has no gold evidence: wrong,
# unknown, and a placeholder answer (an abstention)
RUN_A = {
    "lh-01": ("Maren Holt", EVIDENCE["lh-01"]),
    "lh-02": ("The Dover, a fishing boat", EVIDENCE["lh-02"]),
    "lh-03": ("Tobias Holt", NOISE),
    "lh-04": ("I do not know.", NOISE),
    "lh-05": ("Oskar Venn, a merchant in Kelport", NOISE),
    "or-01": ("N/A", None),
}
# B: lh-01 and lh-05 turn wrong, lh-03 turns right: three flips
RUN_B = {
    **RUN_A,
    "lh-01": ("Oskar Venn", EVIDENCE["lh-01"]),
    "lh-03": ("Captain Ilse Dunmore", EVIDENCE["lh-03"]),
    "lh-05": ("Hugo Tamsin", NOISE),
}


def _root(tmp_path: Path, name: str, answers: dict, index: Path, extra: str = "") -> Path:
    root = tmp_path / name
    root.mkdir()
    items = [i for i in json.loads(EXAMPLE_QA.read_text()) if i["id"] in answers]
    for item in items:
        if item["id"] in EVIDENCE:
            item["context"] = EVIDENCE[item["id"]]
    (root / "qa.json").write_text(json.dumps(items))
    lines = [
        {"question_id": qid, "answer": answer, **({"context": ctx} if ctx else {})}
        for qid, (answer, ctx) in answers.items()
    ]
    (root / "mine.jsonl").write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    (root / "eval_config.yaml").write_text(
        f"dataset:\n  path: qa.json\nindexes:\n  lighthouse: {index}\n  orchard: {index}\n"
        "methods: [mine]\nanswers:\n  mine: mine.jsonl\noutput:\n  dir: results\n"
        "metrics: [correctness, evidence_recall, exact_match, f1, rouge_l, answer_similarity]\n"
        + extra
    )
    return root


def _summary(root: Path) -> dict:
    return json.loads((root / "results" / "eval_results_summary.json").read_text())


def test_attribution_abstentions_and_reference_metrics_on_an_answers_file(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = _root(tmp_path, "a", RUN_A, example_indexes["lighthouse"])
    result = gtog("eval", "--root", str(root), "-q")
    assert result.returncode == 0, result.stderr
    summary = _summary(root)
    mine = summary["by_method"]["mine"]
    scores = {
        q["question_id"]: q["methods"]["mine"]["scores"]
        for q in json.loads((root / "results" / "eval_results_detailed.json").read_text())[
            "results"
        ]
    }
    assert {q: s["correctness"] for q, s in scores.items()} == {
        "lh-01": 1, "lh-02": 0, "lh-03": 0, "lh-04": 0, "lh-05": 1, "or-01": 0,
    }  # fmt: skip
    assert scores["lh-05"]["exact_match"] == 1 and scores["lh-03"]["exact_match"] == 0
    assert scores["lh-01"]["f1"] == 1.0 and scores["lh-01"]["rouge_l"] == 1.0
    # answer_similarity: the scripted server's embeddings, over HTTP; identical texts -> 1
    assert scores["lh-05"]["answer_similarity"] == pytest.approx(1.0)
    assert 0 <= scores["lh-03"]["answer_similarity"] < 1
    embeds = [e for e in llm_server.log if e.kind == "embeddings"]
    assert embeds, "answer_similarity made no embedding request"
    assert summary["judge_usage"]["mine"]["prompt_tokens"] > 0  # embeddings metered

    # abstentions: lh-04 declines, or-01 is a placeholder; answered: lh-01,02,03,05
    assert mine["abstentions"] == 2 and mine["abstention_rate"] == pytest.approx(2 / 6)
    assert mine["correctness"] == pytest.approx(2 / 6)
    assert mine["answered"]["correctness"] == pytest.approx(2 / 4)

    # attribution, by hand (see RUN_A)
    got = summary["attribution"]["mine"]
    assert got["table"] == {"found": {"right": 1, "wrong": 1}, "missed": {"right": 1, "wrong": 2}}
    counts = ("wrong", "retrieval_failures", "generation_failures", "unknown")
    assert [got[k] for k in counts] == [4, 2, 1, 1]
    assert "tog_stages" not in got
    agreement = summary["metric_agreement"]
    assert set(agreement) == {"exact_match", "f1", "rouge_l", "answer_similarity"}
    assert agreement["f1"]["n"] == 6
    assert "why answers fail" in result.stdout and "2 (67%)" in result.stdout


def test_diff_lists_the_flipped_questions_and_gates_ci(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    index = example_indexes["lighthouse"]
    a = _root(tmp_path, "a", RUN_A, index)
    b = _root(tmp_path, "b", RUN_B, index)
    for root in (a, b):
        assert gtog("eval", "--root", str(root), "-q").returncode == 0
    out = tmp_path / "diff.json"
    result = gtog("eval", "diff", str(a / "results"), str(b / "results"), "--json", str(out))
    assert result.returncode == 0, result.stderr
    diff = json.loads(out.read_text())
    correctness = diff["methods"]["mine"]["correctness"]
    assert sorted(correctness["to_wrong"]) == ["lh-01", "lh-05"]
    assert correctness["to_right"] == ["lh-03"]
    assert correctness["n"] == 6 and correctness["delta"] == pytest.approx(-1 / 6)
    assert correctness["p_value"] == pytest.approx(1.0)  # 2 vs 1 discordant: noise
    assert set(diff["answers"]["mine"]) == {"lh-01", "lh-03", "lh-05"}
    assert diff["answers"]["mine"]["lh-03"] == {"a": "Tobias Holt", "b": "Captain Ilse Dunmore"}
    assert "lh-01 ->wrong" in result.stdout and "Captain Ilse Dunmore" in result.stdout
    # n 6: no drop could be significant after Holm, so --fail-on-regression cannot fail and
    # says so (issue 44); the threshold mode gates on the size of the drop (1/6)
    flag = gtog("eval", "diff", str(a / "results"), str(b / "results"), "--fail-on-regression")
    assert flag.returncode == 2, flag.stderr
    assert "--fail-on-regression cannot fail here" in flag.stderr
    assert "mine correctness (n 6, smallest p after Holm" in flag.stderr
    ab = (str(a / "results"), str(b / "results"))
    within = gtog("eval", "diff", *ab, "--max-drop", "correctness=0.2")
    assert within.returncode == 0 and "gate passed" in within.stderr, within.stderr
    beyond = gtog("eval", "diff", *ab, "--max-drop", "correctness=0.1", "--fail-on-regression")
    assert beyond.returncode == 1, beyond.stderr
    assert "--max-drop mine correctness: 0.333 -> 0.167, a drop of 0.167 > 0.1" in beyond.stderr

    # every answer right, then every answer wrong, on all ten questions: a regression
    items = json.loads(EXAMPLE_QA.read_text())
    right = {i["id"]: (i["answer"], None) for i in items}
    wrong = {i["id"]: ("Fenwick", None) for i in items}
    good, bad = _root(tmp_path, "good", right, index), _root(tmp_path, "bad", wrong, index)
    for root in (good, bad):
        assert gtog("eval", "--root", str(root), "-q").returncode == 0
    dropped = gtog(
        "eval", "diff", str(good / "results"), str(bad / "results"), "--fail-on-regression",
        "--json", str(tmp_path / "bad.json"),
    )  # fmt: skip
    assert dropped.returncode == 1, dropped.stdout + dropped.stderr
    assert "regression: mine correctness: 1.000 -> 0.000" in dropped.stderr
    bad_diff = json.loads((tmp_path / "bad.json").read_text())["methods"]["mine"]
    assert bad_diff["correctness"]["p_value"] == pytest.approx(2 * 0.5**10)
    assert bad_diff["correctness"]["test"] == "mcnemar_exact"
    assert bad_diff["f1"]["test"] == "paired_permutation" and bad_diff["f1"]["regression"]
    assert len(bad_diff["correctness"]["to_wrong"]) == 10
    # the report shows the diff against a baseline (in a browser: no script or CSP error)
    shown = gtog("eval", "report", str(bad / "results"), "--baseline", str(good / "results"))
    assert shown.returncode == 0, shown.stderr
    page = bad / "results" / "report.html"
    html = page.read_text(encoding="utf-8")
    assert 'id="baseline"' in html and '<span class="flag">drop</span>' in html
    assert html.count('href="#q-lh-01"') >= 1 and "10 flipped questions" in html
    chromium = find_chromium()
    if chromium is not None:
        assert load_page(chromium, page.as_uri()).console == []
    # and the other way round is no regression
    better = gtog(
        "eval", "diff", str(bad / "results"), str(good / "results"), "--fail-on-regression"
    )
    assert better.returncode == 0, better.stderr

    # the CI gate on a finished run: 2/6 correct is under 0.5, over 0.3
    gate = gtog("eval", "--root", str(a), "-q", "--fail-under", "correctness=0.5")
    assert gate.returncode == 1 and "mine correctness: 0.333 < 0.5" in gate.stderr
    passed = gtog("eval", "--root", str(a), "-q", "--fail-under", "mine:correctness=0.3")
    assert passed.returncode == 0
    assert "--fail-under: gate passed: correctness >= 0.3: mine 0.333 (n 6)" in passed.stderr
    off = gtog("eval", "--root", str(a), "-q", "--fail-under", "correctness=70")
    assert off.returncode == 2 and "outside its scale (did you mean 0.7?)" in off.stderr
    bad = gtog("eval", "--root", str(a), "-q", "--fail-under", "faithfulness=0.5")
    assert bad.returncode == 2 and "not a metric of this run" in bad.stderr
