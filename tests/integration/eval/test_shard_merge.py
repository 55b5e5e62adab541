"""`gtog eval --shard i/n` + `merge_runs`: the merged run equals an unsharded one, head-to-head
comparisons included; shards split the old way (by (question, method)) never lose any."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from gtog._errors import InputError
from gtog.eval.results._log import read_log
from gtog.eval.results._spec import CHECKPOINT_NAME, ShardSpec
from gtog.eval.run._checkpoint import Checkpoint
from gtog.eval.run._merge import merge_runs
from tests.integration.eval.helpers import make_eval_root
from tests.support.projects import gtog
from tests.support.scripted_server import ChatRequest, Rule, ScriptedServer

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


PAIRWISE = "You compare two answers to the same question on one criterion."


def longer_judge(r: ChatRequest) -> str:
    """Prefers the longer answer (a tie between equals): a verdict from the answers alone."""
    m = re.search(r"Answer 1:\n(.*?)\n\nAnswer 2:\n(.*?)\n\nWhich answer", r.prompt, re.S)
    assert m, r.prompt
    one, two = len(m.group(1).strip()), len(m.group(2).strip())
    winner = 0 if one == two else (1 if one > two else 2)
    return json.dumps({"winner": winner, "reason": f"lengths {one} and {two}"})


def _comparisons(folder: Path) -> dict[tuple, tuple]:
    """Each comparison's key -> what must not depend on sharding."""
    return {
        p.key: (p.judgement.winner, p.judgement.orders_agree, p.answers, p.judged_with)
        for p in read_log(folder / CHECKPOINT_NAME).pairs
    }


def _pair_of_old(qid: str, method: str, count: int) -> int:
    """The shard of a (question, method) pair as gtog before issue 31 computed it."""
    digest = hashlib.sha256(f"{qid}\x1f{method}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % count


def _old_shards(whole: Path, out: Path, count: int) -> list[Path]:
    """The shard folders an older gtog made of the same run: pairs split by (question,
    method); a comparison exists only in a shard holding both its answers."""
    log = read_log(whole / CHECKPOINT_NAME)
    folders = []
    for i in range(count):
        records = [r for r in log.records if _pair_of_old(r.qid, r.method, count) == i]
        held = {r.key for r in records}
        pairs = [p for p in log.pairs if {(p.qid, p.a), (p.qid, p.b)} <= held]
        spec = log.spec.model_copy(
            update={"shard": ShardSpec(index=i, count=count, pairs=len(records))}
        )
        folder = out / f"shard-{i}-of-{count}"
        checkpoint = Checkpoint.create(folder / CHECKPOINT_NAME, spec)
        for r in [*records, *pairs]:
            checkpoint.append(r)
        checkpoint.close()
        path = folder / CHECKPOINT_NAME  # an older gtog's header has no `split`
        header, rest = path.read_text().split("\n", 1)
        data = json.loads(header)
        del data["spec"]["shard"]["split"]
        path.write_text(json.dumps(data) + "\n" + rest)
        folders.append(folder)
    return folders


def test_sharded_and_merged_run_equals_unsharded_run(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    llm_server.rules[:0] = [Rule("pairwise", lambda r: PAIRWISE in r.prompt, longer_judge)]
    root = make_eval_root(
        tmp_path, example_indexes, extra="pairwise: {criteria: [relevance], trials: 1}\n"
    )
    whole = gtog("eval", "--root", str(root), "--limit", "3", "-q", "-o", "whole")
    assert whole.returncode == 0, whole.stderr

    shard_dirs = []
    for i in range(4):
        limit = ("--max-usd", "5") if i == 0 else ()  # a limit far above what a shard pays
        run = gtog("eval", "--root", str(root), "--limit", "3", "-q", "--shard", f"{i}/4", *limit)
        assert run.returncode == 0, run.stderr
        note = "the run's limits are per shard: each of the 4 shards may spend $5.0000 (up to"
        assert (note in " ".join(run.stderr.split())) == (i == 0), run.stderr
        folder = root / "results" / f"shard-{i}-of-4"
        header = read_log(folder / CHECKPOINT_NAME).spec.shard
        assert header is not None and header.index == i and header.count == 4
        assert header.split == "question"
        assert f"shard {i}/4: {header.pairs} pairs" in run.stderr
        shard_dirs.append(folder)

    sizes = [read_log(d / CHECKPOINT_NAME).spec.shard.pairs for d in shard_dirs]  # type: ignore[union-attr]
    assert sum(sizes) == 12 and all(s % 2 == 0 for s in sizes)  # whole questions, 2 methods

    merged = merge_runs(tmp_path / "merged", shard_dirs)
    assert merged.shards == 4 and len(merged.records) == 12 and merged.missing == {}
    assert merged.missing_comparisons == 0
    # every comparison, as the unsharded run made it: 6 questions x (local-basic + 2 A/A)
    assert _comparisons(tmp_path / "merged") == _comparisons(root / "whole")
    assert len(_comparisons(root / "whole")) == 18
    assert (tmp_path / "merged" / CHECKPOINT_NAME).is_file()
    assert (tmp_path / "merged" / "qa" / "responses_basic.json").is_file()

    whole_detailed, whole_summary = _load(root / "whole")
    merged_detailed, merged_summary = _load(tmp_path / "merged")
    assert _answers(merged_detailed) == _answers(whole_detailed)
    assert len(_answers(merged_detailed)) == 12
    assert _counts(merged_summary) == _counts(whole_summary)
    assert merged_summary["by_method"]["local"]["n"] == 6
    for key in ("pairwise", "pairwise_aa", "pairwise_usage"):
        assert merged_summary[key] == whole_summary[key], key
    assert merged_summary["pairwise"][0]["n"] == 6

    # the same through the CLI: `gtog eval merge OUT DIR...`
    cli = gtog("eval", "merge", str(tmp_path / "merged-cli"), *map(str, shard_dirs))
    assert cli.returncode == 0, cli.stderr
    assert "merged 4 shards, 12 records" in cli.stderr and "local" in cli.stdout
    assert _answers(_load(tmp_path / "merged-cli")[0]) == _answers(whole_detailed)
    refused = gtog("eval", "merge", str(tmp_path / "m1"), str(shard_dirs[0]))
    assert refused.returncode == 2 and "missing shard(s) 1/4, 2/4, 3/4" in refused.stderr

    # shards missing, given twice, or already merged into the same folder are refused
    with pytest.raises(InputError, match=r"missing shard\(s\) 3/4"):
        merge_runs(tmp_path / "m2", shard_dirs[:3])
    with pytest.raises(InputError, match="shard 1/4 given twice"):
        merge_runs(tmp_path / "m3", [*shard_dirs, shard_dirs[1]])
    with pytest.raises(InputError, match="already holds results"):
        merge_runs(tmp_path / "merged", shard_dirs)
    assert not (tmp_path / "m2").exists() and not (tmp_path / "m3").exists()

    # the same run as an older gtog sharded it: a question's methods in different shards,
    # so most comparisons were never made; the merge says so instead of merging without them
    old = _old_shards(root / "whole", tmp_path / "old", 4)
    kept = sum(len(read_log(d / CHECKPOINT_NAME).pairs) for d in old)
    assert kept < 18
    with pytest.raises(InputError) as info:
        merge_runs(tmp_path / "old-merged", old)
    message = str(info.value)
    assert f"{18 - kept} comparison(s) the run asks for are in no shard" in message
    assert "older gtog" in message and "\n" not in message
    assert not (tmp_path / "old-merged").exists()
    # --partial merges them, and resuming the merged folder judges what is missing (no search)
    partial = merge_runs(tmp_path / "old-merged", old, partial=True)
    assert partial.missing_comparisons == 18 - kept and partial.missing == {}
    llm_server.clear_log()
    resumed = gtog(
        "eval", "--root", str(root), "--limit", "3", "-q", "--resume", "-o",
        str(tmp_path / "old-merged"),
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    rules = [e.rule for e in llm_server.chat_log()]
    assert rules == ["pairwise"] * 2 * (18 - kept)  # both orders of each missing comparison
    assert _comparisons(tmp_path / "old-merged") == _comparisons(root / "whole")
    completed = _load(tmp_path / "old-merged")[1]
    for key in ("pairwise", "pairwise_aa"):
        assert completed[key] == whole_summary[key], key
    # an older shard's folder is not resumed under the new split
    again = gtog(
        "eval", "--root", str(root), "--limit", "3", "-q", "--shard", "0/4", "--resume",
        "-o", str(tmp_path / "old"),
    )  # fmt: skip
    assert again.returncode == 2
    assert "the shards split the run by pair and now by question" in again.stderr


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
