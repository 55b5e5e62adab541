"""Every method in one comparison: global, drift, a named variant and an answers file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.eval.helpers import load_results, make_eval_root
from tests.support.projects import gtog
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.integration

SEVEN = ["tog", "local", "basic", "global", "drift", "tog_narrow", "mine"]


def _answers(path: Path, lines: list[dict | str]) -> Path:
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return path


def test_one_run_compares_seven_methods(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = make_eval_root(
        tmp_path,
        {"lighthouse": example_indexes["lighthouse"]},
        methods=tuple(SEVEN),
        extra=(
            "variants:\n  tog_narrow: {method: tog, tog_search: {width: 1, depth: 1}}\n"
            "answers:\n  mine: mine.jsonl\n"
            "metrics: [correctness, token_recall]\n"
        ),
    )
    _answers(
        root / "mine.jsonl",
        [
            {
                "question_id": "lh-01",
                "answer": "Maren Holt",
                "latency": 1.5,
                "llm_calls": 2,
                "prompt_tokens": 100,
                "output_tokens": 10,
                "cost_usd": 0.001,
            },
            {"question": "  who GAVE maren holt the brass compass? ", "answer": "Ilse"},
            {"question_id": "nope-99", "answer": "matches no question"},
        ],
    )
    result = gtog("eval", "--root", str(root), "--index-key", "lighthouse", "--limit", "3", "-q")
    assert result.returncode == 0, result.stderr
    assert "1 answer(s) match no question" in result.stderr
    detailed, summary = load_results(root)
    assert detailed["metadata"]["methods"] == SEVEN
    by_q = {q["question_id"]: q["methods"] for q in detailed["results"]}
    assert sorted(by_q) == ["lh-01", "lh-02", "lh-03"]
    for qid, methods in by_q.items():
        assert list(methods) == SEVEN
        for m in SEVEN[:-1]:
            assert methods[m].get("error") is None, (qid, m, methods[m].get("error"))
    # per-stage efficiency, split as graphrag's engines work
    glob = by_q["lh-01"]["global"]["efficiency"]["llm_calls_categories"]
    assert glob.get("map", 0) >= 1 and glob.get("reduce") == 1, glob
    drift = by_q["lh-01"]["drift"]["efficiency"]["llm_calls_categories"]
    assert drift.get("primer", 0) >= 2 and drift.get("action", 0) >= 1, drift
    assert drift.get("reduce") == 1, drift
    # the variant's settings reach the engine: width 1, depth 1 -> at most 2*1*1 + 1 + 1 calls
    for methods in by_q.values():
        assert methods["tog_narrow"]["efficiency"]["llm_calls"] <= 4
    # answers read, matched by id and by text; a missing one is the pair's error
    assert by_q["lh-01"]["mine"]["response"] == "Maren Holt"
    assert by_q["lh-01"]["mine"]["efficiency"]["latency"] == 1.5
    assert by_q["lh-01"]["mine"]["efficiency"]["cost_usd"] == 0.001
    mine_q = [q for q in detailed["results"] if "brass compass" in q["question"]]
    assert mine_q and mine_q[0]["methods"]["mine"]["response"] == "Ilse"
    unstated = mine_q[0]["methods"]["mine"]["efficiency"]  # unknown cost, never 0
    assert [unstated[f] for f in ("latency", "llm_calls", "cost_usd")] == [None, None, None]
    missing = [m["mine"] for m in by_q.values() if m["mine"].get("error")]
    assert [m["error"] for m in missing] == ["no answer in mine.jsonl"]
    assert "scores" not in missing[0] or not missing[0]["scores"]
    # every table, comparison, chart and CSV row has all seven
    assert list(summary["by_method"]) == SEVEN
    pairs = {(c["a"], c["b"]) for c in summary["comparisons"]}
    assert len({m for p in pairs for m in p}) == 7
    assert (
        summary["metadata"]["spec"]["method_settings"]["tog_narrow"]["lighthouse"]["tog_search"][
            "width"
        ]
        == 1
    )
    html = (root / "results" / "report.html").read_text()
    csv = (root / "results" / "eval_results.csv").read_text()
    for m in SEVEN:
        assert m in html and f",{m}," in csv, m


def _narrow_and_mine(tmp_path: Path, index: Path, metrics: str) -> Path:
    """A root comparing the ToG variant `tog_narrow` with the answers file `mine.jsonl`."""
    return make_eval_root(
        tmp_path,
        {"lighthouse": index},
        methods=("tog_narrow", "mine"),
        extra=(
            "variants:\n  tog_narrow: {method: tog, tog_search: {width: 1, depth: 1}}\n"
            f"answers:\n  mine: mine.jsonl\nmetrics: [{metrics}]\n"
        ),
    )


def test_a_changed_variant_or_answers_file_is_a_spec_change(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = _narrow_and_mine(tmp_path, example_indexes["lighthouse"], "token_recall")
    _answers(root / "mine.jsonl", [{"question_id": "lh-01", "answer": "Maren Holt"}])
    assert (
        gtog(
            "eval", "--root", str(root), "--index-key", "lighthouse", "--limit", "1", "-q"
        ).returncode
        == 0
    )
    config = root / "eval_config.yaml"
    config.write_text(config.read_text().replace("depth: 1", "depth: 2"))
    result = gtog(
        "eval", "--root", str(root), "--index-key", "lighthouse", "--limit", "1", "--resume", "-q"
    )
    assert result.returncode == 2
    assert "tog_narrow settings for 'lighthouse' changed" in result.stderr, result.stderr
    config.write_text(config.read_text().replace("depth: 2", "depth: 1"))
    _answers(root / "mine.jsonl", [{"question_id": "lh-01", "answer": "Someone else"}])
    result = gtog(
        "eval", "--root", str(root), "--index-key", "lighthouse", "--limit", "1", "--resume", "-q"
    )
    assert result.returncode == 2 and "mine settings for 'lighthouse' changed" in result.stderr


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            "methods: [narrow]\nvariants:\n  narrow: {method: tog, tog_search: {widht: 1}}\n",
            "variants.narrow: tog_search.widht: unknown key",
        ),
        (
            "methods: [narrow]\nvariants:\n  narrow: {method: local, local_search: {top_kk: 3}}\n",
            "variants.narrow: local_search.top_kk: unknown key",
        ),
        (
            "methods: [narrow]\nvariants:\n  narrow: {method: tog, local_search: {top_k: 3}}\n",
            "variants.narrow.local_search: unknown key for a tog variant",
        ),
        (
            "methods: [narrow]\nvariants:\n  narrow: {method: magic}\n",
            "variants.narrow.method: unknown method 'magic'",
        ),
        ("methods: [mine]\nanswers:\n  mine: nowhere.jsonl\n", "answers.mine:"),
    ],
)
def test_bad_variants_and_answers_are_one_line_naming_the_config(
    llm_server: ScriptedServer,
    example_indexes: dict[str, Path],
    tmp_path: Path,
    extra: str,
    message: str,
) -> None:
    root = make_eval_root(tmp_path, {"lighthouse": example_indexes["lighthouse"]})
    config = root / "eval_config.yaml"
    config.write_text(config.read_text().replace("methods: [local, basic]\n", "") + extra)
    result = gtog("eval", "--root", str(root), "--index-key", "lighthouse", "-q")
    assert result.returncode == 2, result.stderr
    [line] = [x for x in result.stderr.splitlines() if x.strip()]
    assert "eval_config.yaml" in line and message in line, line
    assert llm_server.chat_log() == [] and not (root / "results").exists()


def test_a_malformed_answers_line_names_the_file_and_line(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = make_eval_root(
        tmp_path,
        {"lighthouse": example_indexes["lighthouse"]},
        methods=("mine",),
        extra="answers:\n  mine: mine.jsonl\n",
    )
    _answers(root / "mine.jsonl", [{"question_id": "lh-01", "answer": "x"}, "{not json"])
    result = gtog("eval", "--root", str(root), "--index-key", "lighthouse", "-q")
    assert result.returncode == 2 and "mine.jsonl: line 2: not JSON" in result.stderr
    _answers(root / "mine.jsonl", [{"question_id": "lh-01", "answer": 3}])
    result = gtog("eval", "--root", str(root), "--index-key", "lighthouse", "-q")
    assert result.returncode == 2 and "mine.jsonl: line 1: answer:" in result.stderr
    assert llm_server.chat_log() == []


PLUGIN = Path(__file__).resolve().parents[2] / "support" / "plugin"


def test_a_method_from_another_package_runs_in_eval_and_query(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    import subprocess
    import sys

    from tests.support.projects import subprocess_env

    env = {**subprocess_env(), "PYTHONPATH": str(PLUGIN)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "gtog", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    root = make_eval_root(
        tmp_path,
        {"lighthouse": example_indexes["lighthouse"]},
        methods=("echo", "local"),
        extra="metrics: [token_recall]\n",
    )
    result = run("eval", "--root", str(root), "--index-key", "lighthouse", "--limit", "2", "-q")
    assert result.returncode == 0, result.stderr
    detailed, summary = load_results(root)
    answers = [q["methods"]["echo"]["response"] for q in detailed["results"]]
    assert answers[0] == "VARN ISLAND", answers  # the titles the question names
    assert summary["by_method"]["echo"]["n"] == 2 and "echo" in summary["efficiency"]
    query = run(
        "query",
        "--root",
        str(example_indexes["lighthouse"]),
        "-m",
        "echo",
        "What did Maren Holt keep?",
    )
    assert query.returncode == 0, query.stderr
    assert query.stdout.strip() == "MAREN HOLT"
    without = gtog("query", "--root", str(example_indexes["lighthouse"]), "-m", "echo", "?")
    assert without.returncode == 2 and "--method echo: unknown" in without.stderr


def test_variants_and_answers_shard_merge_and_rescore(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = _narrow_and_mine(tmp_path, example_indexes["lighthouse"], "token_recall, correctness")
    _answers(
        root / "mine.jsonl",
        [{"question_id": q, "answer": "Maren Holt"} for q in ("lh-01", "lh-02")],
    )
    args = (
        "eval",
        "--root",
        str(root),
        "--no-cache",
        "--index-key",
        "lighthouse",
        "--limit",
        "2",
        "-q",
    )
    for i in range(2):
        shard = gtog(*args, "--shard", f"{i}/2")
        assert shard.returncode == 0, shard.stderr
    shards = [str(root / "results" / f"shard-{i}-of-2") for i in range(2)]
    merged = gtog("eval", "merge", str(tmp_path / "merged"), *shards)
    assert merged.returncode == 0, merged.stderr
    summary = json.loads((tmp_path / "merged" / "eval_results_summary.json").read_text())
    assert set(summary["by_method"]) == {"tog_narrow", "mine"}
    assert (
        summary["by_method"]["mine"]["n"] == 2
        and summary["by_method"]["mine"]["search_errors"] == 0
    )
    # --rescore re-judges the saved answers of both: no search call, no answers file read
    assert gtog(*args).returncode == 0
    llm_server.clear_log()
    rescored = gtog(*args, "--rescore")
    assert rescored.returncode == 0, rescored.stderr
    assert llm_server.chat_log() and all(
        e.rule and e.rule.startswith("judge") for e in llm_server.chat_log()
    ), {e.rule for e in llm_server.chat_log()}
