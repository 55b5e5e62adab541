"""`gtog eval --shard i/n` + `merge_runs`: the merged run equals an unsharded one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gtog.errors import InputError
from gtog.eval.results.log import read_log
from gtog.eval.results.spec import CHECKPOINT_NAME
from gtog.eval.run.merge import merge_runs
from tests.integration.eval.helpers import make_eval_root
from tests.support.projects import gtog
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.integration


def _load(folder: Path) -> tuple[dict, dict]:
    return (
        json.loads((folder / "eval_results_detailed.json").read_text()),
        json.loads((folder / "eval_results_summary.json").read_text()),
    )


def _answers(detailed: dict) -> dict[tuple[str, str], tuple]:
    """(qid, method) -> what must not depend on sharding: answer, scores, calls, tokens."""
    out = {}
    for q in detailed["results"]:
        for method, e in q["methods"].items():
            eff = e["efficiency"]
            out[(q["question_id"], method)] = (
                e["response"],
                e["scores"],
                e.get("error"),
                eff["llm_calls"],
                eff["prompt_tokens"],
                eff["output_tokens"],
                e["sources"],
            )
    return out


def _counts(summary: dict) -> dict:
    keep = ("avg_llm_calls", "total_llm_calls", "total_prompt_tokens", "total_output_tokens", "n")
    return {
        "by_method": summary["by_method"],
        "by_movie": summary["by_movie"],
        "judge_usage": summary["judge_usage"],
        "efficiency": {
            m: {k: v for k, v in e.items() if k in keep} for m, e in summary["efficiency"].items()
        },
    }


def test_sharded_and_merged_run_equals_unsharded_run(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = make_eval_root(tmp_path, example_indexes)
    whole = gtog("eval", "--root", str(root), "--limit", "3", "-q", "-o", "whole")
    assert whole.returncode == 0, whole.stderr

    shard_dirs = []
    for i in range(3):
        run = gtog("eval", "--root", str(root), "--limit", "3", "-q", "--shard", f"{i}/3")
        assert run.returncode == 0, run.stderr
        folder = root / "results" / f"shard-{i}-of-3"
        header = read_log(folder / CHECKPOINT_NAME).spec.shard
        assert header is not None and header.index == i and header.count == 3
        assert f"shard {i}/3: {header.pairs} pairs" in run.stderr
        shard_dirs.append(folder)

    sizes = [read_log(d / CHECKPOINT_NAME).spec.shard.pairs for d in shard_dirs]  # type: ignore[union-attr]
    assert sum(sizes) == 12 and all(sizes)  # 6 questions x 2 methods, split three ways

    merged = merge_runs(tmp_path / "merged", shard_dirs)
    assert merged.shards == 3 and len(merged.records) == 12 and merged.missing == {}
    assert (tmp_path / "merged" / CHECKPOINT_NAME).is_file()
    assert (tmp_path / "merged" / "qa" / "responses_basic.json").is_file()

    whole_detailed, whole_summary = _load(root / "whole")
    merged_detailed, merged_summary = _load(tmp_path / "merged")
    assert _answers(merged_detailed) == _answers(whole_detailed)
    assert len(_answers(merged_detailed)) == 12
    assert _counts(merged_summary) == _counts(whole_summary)
    assert merged_summary["by_method"]["local"]["n"] == 6

    # the same through the CLI: `gtog eval merge OUT DIR...`
    cli = gtog("eval", "merge", str(tmp_path / "merged-cli"), *map(str, shard_dirs))
    assert cli.returncode == 0, cli.stderr
    assert "merged 3 shards, 12 records" in cli.stderr and "local" in cli.stdout
    assert _answers(_load(tmp_path / "merged-cli")[0]) == _answers(whole_detailed)
    refused = gtog("eval", "merge", str(tmp_path / "m1"), str(shard_dirs[0]))
    assert refused.returncode == 2 and "missing shard(s) 1/3, 2/3" in refused.stderr

    # shards missing, given twice, or already merged into the same folder are refused
    with pytest.raises(InputError, match=r"missing shard\(s\) 2/3"):
        merge_runs(tmp_path / "m2", shard_dirs[:2])
    with pytest.raises(InputError, match="shard 1/3 given twice"):
        merge_runs(tmp_path / "m3", [*shard_dirs, shard_dirs[1]])
    with pytest.raises(InputError, match="already holds results"):
        merge_runs(tmp_path / "merged", shard_dirs)
    assert not (tmp_path / "m2").exists() and not (tmp_path / "m3").exists()


def test_merge_refuses_shards_of_different_specs(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = make_eval_root(tmp_path, example_indexes)
    first = gtog("eval", "--root", str(root), "--limit", "2", "-q", "--shard", "0/2")
    other = gtog("eval", "--root", str(root), "--limit", "2", "-q", "--shard", "1/2", "-m", "local")
    assert first.returncode == 0, first.stderr
    assert other.returncode == 0, other.stderr
    dirs = [root / "results" / "shard-0-of-2", root / "results" / "shard-1-of-2"]
    with pytest.raises(InputError) as info:
        merge_runs(tmp_path / "merged", dirs)
    message = str(info.value)
    assert "\n" not in message
    assert "shard-1-of-2" in message and "shard 1/2" in message
    assert "methods: ['local', 'basic'] -> ['local']" in message
    assert not (tmp_path / "merged").exists()

    # resuming a shard's folder as an unsharded run is refused (it would run every pair)
    wrong = gtog("eval", "--root", str(root), "--limit", "2", "-q", "--resume", "-o", str(dirs[0]))
    assert wrong.returncode == 2
    assert "the shard changed (--shard 0/2 -> None)" in wrong.stderr
