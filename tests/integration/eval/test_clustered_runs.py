"""Clustered statistics on real runs (issue 34): answers files right on every question of
some indexes and wrong on every question of others, judged by the scripted server; a
`statistics.cluster_by` field outside `group_by`; `gtog eval --plan` with and without a
run (no model call, nothing written)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gtog.cli import app
from tests.support.projects import gtog
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.integration

KEYS = 12
PER_KEY = 5
RIGHT, WRONG = "Maren Holt", "Oskar Venn"


def _root(tmp_path: Path, index: Path, book: bool = False) -> Path:
    """12 index keys (one real index behind them all), 5 questions each; `left` right on
    every question of keys 0-5 and wrong on 6-11, `right` the other way round, `third`
    right on every other question."""
    root = tmp_path / "clustered"
    root.mkdir()
    items, answers = [], {"left": [], "right": [], "third": []}
    for g in range(KEYS):
        for i in range(PER_KEY):
            qid = f"k{g}-{i}"
            item = {"id": qid, "imdb_key": f"k{g}", "question": "Who keeps the lighthouse?"}
            item["answer"] = RIGHT
            if book:
                item["book"] = f"book{g // 2}"
            items.append(item)
            verdicts = {"left": g < KEYS // 2, "right": g >= KEYS // 2, "third": i != 1}
            for method, ok in verdicts.items():
                answers[method].append({"question_id": qid, "answer": RIGHT if ok else WRONG})
    (root / "qa.json").write_text(json.dumps(items))
    for method, lines in answers.items():
        (root / f"{method}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    index_lines = "".join(f"  k{g}: {index}\n" for g in range(KEYS))
    (root / "eval_config.yaml").write_text(
        f"dataset:\n  path: qa.json\nindexes:\n{index_lines}methods: [left, right, third]\n"
        "answers:\n  left: left.jsonl\n  right: right.jsonl\n  third: third.jsonl\n"
        "output:\n  dir: results\nmetrics: [correctness]\n"
    )
    return root


def _in_process(*args: str) -> tuple[int, str]:
    """`gtog eval ARGS` in this process (quick: no model is called before these return)."""
    result = CliRunner().invoke(app, ["eval", *args])
    return result.exit_code, result.output


def _summary(root: Path) -> dict:
    return json.loads((root / "results" / "eval_results_summary.json").read_text())


def _pair(summary: dict, a: str, b: str) -> dict:
    return next(c for c in summary["comparisons"] if (c["a"], c["b"]) == (a, b))


def _width(ci: list[float]) -> float:
    return ci[1] - ci[0]


def test_whole_indexes_right_or_wrong_clusters_by_index_or_field_and_plan(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = _root(tmp_path, example_indexes["lighthouse"], book=True)
    code, out = _in_process("--plan", "--root", str(root))  # no run yet: the dataset's
    assert code == 0, out
    assert "5 questions per cluster" in out and not (root / "results").exists()
    result = gtog("eval", "--root", str(root), "-q")
    assert result.returncode == 0, result.stderr
    summary = _summary(root)
    assert summary["statistics"]["cluster_by"] == "index_key"
    assert summary["statistics"]["clusters"] == KEYS
    assert summary["statistics"]["questions"] == KEYS * PER_KEY
    assert summary["statistics"]["clustered"] is True
    c = _pair(summary, "left", "right")
    assert c["diff"] == 0.0 and c["discordance"] == 1.0 and c["test"] == "cluster_sign_flip"
    assert _width(c["ci95"]) > 2 * _width(c["ci95_naive"])
    assert summary["by_method"]["left"]["icc"]["correctness"] == pytest.approx(1.0)
    assert summary["omnibus"]["correctness"]["methods"] == ["left", "right", "third"]
    assert summary["omnibus"]["correctness"]["test"] == "cochran_q_cluster_permutation"
    assert f"{KEYS * PER_KEY} questions in {KEYS} clusters (index_key)" in result.stdout
    assert "Do the 3 methods differ at all?" in result.stdout

    before = sorted(p.name for p in (root / "results").iterdir())
    llm_server.clear_log()
    code, out = _in_process("--plan", "--root", str(root), "--mde", "0.2")
    assert code == 0, out
    assert f"from the run: {KEYS * PER_KEY} questions in {KEYS} clusters" in out
    assert "left vs right" in out
    assert llm_server.log == [] and sorted(p.name for p in (root / "results").iterdir()) == before

    # a field outside group_by: two indexes per book, 6 books (MIN_CLUSTERS)
    config = root / "eval_config.yaml"
    config.write_text(config.read_text() + "statistics:\n  cluster_by: book\n")
    result = gtog("eval", "--root", str(root), "-q", "--resume")
    assert result.returncode == 0, result.stderr
    summary = _summary(root)
    assert summary["statistics"]["cluster_by"] == "book"
    assert summary["statistics"]["clusters"] == KEYS // 2
    assert summary["statistics"]["clustered"] is True
    assert "by_group" not in summary  # clustered by it, not grouped by it
    assert llm_server.log == []  # a new reading of the same answers and verdicts

    config.write_text(config.read_text().replace("cluster_by: book", "cluster_by: shelf"))
    code, out = _in_process("--root", str(root), "-q", "--resume")
    assert code == 2
    assert "statistics.cluster_by: no question of" in out and "'shelf'" in out
