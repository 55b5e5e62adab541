"""Limits (issue 33), through the CLI against the scripted server: a run stops at its USD
limit with only the calls in flight beyond it, says so, and a resume with a raised limit
finishes it with every pair once; a pair over its own limit is that pair's error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.integration.eval.helpers import checkpoint_keys, load_results, make_eval_root
from tests.support.projects import gtog
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.integration

EXTRA = "metrics: [correctness]\n"


def _root(tmp_path: Path, name: str, indexes: dict[str, Path], extra: str = EXTRA) -> Path:
    (tmp_path / name).mkdir()
    return make_eval_root(tmp_path / name, {"lighthouse": indexes["lighthouse"]}, extra=extra)


def _eval(root: Path, *extra: str) -> tuple[int, str]:
    result = gtog("eval", "--root", str(root), "-k", "lighthouse", "-j", "2", "-q", *extra)
    return result.returncode, result.stderr


def _costs(detailed: dict) -> list[float]:
    """What each unit of work of a run cost: every search and every verdict."""
    out = []
    for q in detailed["results"]:
        for entry in q["methods"].values():
            out.append(entry["efficiency"]["cost_usd"])
            out += [u["cost_usd"] for u in entry["judge_usage"].values()]
    return out


def test_a_usd_limit_stops_the_run_and_a_raised_one_finishes_it(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    whole = _root(tmp_path, "whole", example_indexes)
    code, err = _eval(whole, "--no-cache")
    assert code == 0, err
    detailed, summary = load_results(whole)
    full = summary["cost"]["spent_usd"]
    pairs = summary["metadata"]["run"]["pairs_total"]
    in_flight = 2 * max(_costs(detailed))  # -j 2: two pairs, one call each at a time

    root = _root(tmp_path, "limited", example_indexes)
    code, err = _eval(root, "--max-usd", str(full / 2))
    assert code == 1, err
    assert "stopped: limit usd reached" in " ".join(err.split()), err
    assert "--max-usd" in err
    _, summary = load_results(root)
    meta = summary["metadata"]
    assert meta["status"] == "stopped" and meta["stop_reason"] == "limit usd"
    assert meta["run"]["status"] == "stopped: limit usd"
    assert 0 < meta["run"]["pairs_done"] < pairs
    spent = json.loads((root / "results" / "spend.json").read_text())
    assert full / 2 <= spent["usd"] <= full / 2 + in_flight
    assert spent["limit_usd"] == pytest.approx(full / 2)
    assert summary["cost"]["limit_usd"] == pytest.approx(full / 2)
    # what it paid, the calls of pairs it left unfinished included (the records hold less)
    assert summary["cost"]["spent_usd"] == pytest.approx(spent["usd"])
    assert summary["cost"]["recorded_usd"] <= spent["usd"]
    assert f"${spent['usd']:.4f} spent" in err  # the stop line and the cost line

    code, err = _eval(root, "--resume", "--max-usd", str(full / 2))  # the same limit: no
    assert code == 1 and "limit usd reached" in err, err
    code, err = _eval(root, "--resume", "--max-usd", str(2 * full))
    assert code == 0, err
    keys = checkpoint_keys(root / "results" / "eval_checkpoint.jsonl")
    assert len(keys) == len(set(keys)) == pairs  # every pair exactly once
    _, summary = load_results(root)
    assert summary["metadata"]["status"] == "complete"
    assert summary["metadata"]["stop_reason"] is None
    spent = json.loads((root / "results" / "spend.json").read_text())
    assert spent["usd"] <= full + in_flight  # the finished calls were not paid twice


def test_a_pair_over_its_own_limit_is_its_error_never_a_score(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    whole = _root(tmp_path, "whole", example_indexes)
    code, err = _eval(whole, "--limit", "2")
    assert code == 0, err
    detailed, _ = load_results(whole)
    tokens = {
        (q["question_id"], m): e["efficiency"]["prompt_tokens"]
        + e["efficiency"]["output_tokens"]
        + e["efficiency"]["embedding_tokens"]
        + sum(u["prompt_tokens"] + u["output_tokens"] for u in e["judge_usage"].values())
        for q in detailed["results"]
        for m, e in q["methods"].items()
    }
    local = min(v for (_, m), v in tokens.items() if m == "local")
    basic = max(v for (_, m), v in tokens.items() if m == "basic")
    assert basic < local  # local's context is the larger
    limit = (basic + local) // 2
    root = _root(
        tmp_path, "pairs", example_indexes, EXTRA + f"limits:\n  pair: {{tokens: {limit}}}\n"
    )
    code, err = _eval(root, "--limit", "2")
    assert code == 0, err
    detailed, summary = load_results(root)
    for q in detailed["results"]:
        over, under = q["methods"]["local"], q["methods"]["basic"]
        assert over["error_kind"] == "limit" and over["scores"] == {}, over
        assert over["error"].startswith("pair limit tokens reached")
        assert under.get("error") is None and under["scores"]["correctness"] is not None
    assert summary["by_method"]["local"]["search_errors"] == 2
    assert "limit" in err  # one line per kind of error


def test_a_usd_limit_without_prices_names_what_set_it(
    example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    index = tmp_path / "unpriced"
    shutil.copytree(example_indexes["lighthouse"], index)
    settings = index / "settings.yaml"
    settings.write_text(settings.read_text().replace("gpt-4o-mini", "my-own-unpriced-model"))
    (tmp_path / "r").mkdir()
    root = make_eval_root(tmp_path / "r", {"lighthouse": index}, extra=EXTRA)
    code, err = _eval(root, "--max-usd", "1")
    (line,) = err.strip().splitlines()
    assert code == 2 and line.startswith("error: --max-usd: a USD limit needs the price"), err
    assert "openai/my-own-unpriced-model" in line and "limits" not in line
    with (root / "eval_config.yaml").open("a") as f:
        f.write("limits:\n  pair: {usd: 0.5}\n")
    code, err = _eval(root, "--max-usd", "1")
    assert f"error: --max-usd (and {root / 'eval_config.yaml'}: limits.pair.usd): " in err, err
    code, err = _eval(root)
    assert f"error: {root / 'eval_config.yaml'}: limits.pair.usd: a USD limit" in err, err
