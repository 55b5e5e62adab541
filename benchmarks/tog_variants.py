#!/usr/bin/env python
"""ToG's variants compared by `gtog eval` itself, as named variants of one method.

    python benchmarks/tog_variants.py scripted        # generated multi-hop set, scripted server
    python benchmarks/tog_variants.py local           # bundled example, local model (gtog[local])
    python benchmarks/tog_variants.py local -- --limit 3

Both run `gtog eval` with four variants of `tog` (`tog_paper`, `tog_edges`, `tog_text`,
`tog_edges_text`) on the same questions and read its summary: LLM calls (mean and max per
question, against each variant's bound), tokens, seconds, correctness and evidence_recall
with gtog's 95% intervals, and its paired tests of each variant against the paper's ToG
(`p_holm`; a difference is called real only below 0.05, otherwise the report says the
questions cannot tell the two apart).

- `scripted`: indexes the two example stories with real graphrag against the scripted
  server (tests/support) in small chunks (40 tokens, about ten per story), generates two-
  and three-hop questions over them whose gold evidence spans two text units
  (`tests.support.tog_rules.multihop_items`), and evaluates with the scripted ToG rules
  and judges. It measures the mechanics (calls, bounds, what reaches the context), not
  a model: token counts are the scripted server's.
- `local`: the bundled example (eval/indexes, eval_config.yaml's ToG width and depth) with
  the local 1.5B model, on benchmarks/data/tog_variants_example.json (eval/qa_eval.json's
  questions with their gold evidence sentences from the stories).

Writes benchmarks/out/tog_variants_<mode>.json (with `--record`: benchmarks/results/).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from recording import add_record_flag, results_path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

EXAMPLE_QA = REPO / "benchmarks" / "data" / "tog_variants_example.json"
KEYS = ("lighthouse", "orchard")
VARIANTS: dict[str, dict[str, Any]] = {
    "tog_paper": {"pruning": "paper"},
    "tog_edges": {"pruning": "edges"},
    "tog_text": {"text_guided": True},
    "tog_edges_text": {"pruning": "edges", "text_guided": True},
}
METRICS = ["correctness", "token_recall", "evidence_recall"]
CHUNK_TOKENS = 40


def eval_config(dataset: Path, indexes: dict[str, Path], tog: dict[str, Any], **extra: Any) -> str:
    """The eval config: the four variants, the same questions, the metrics compared."""
    config = {
        "dataset": {"path": str(dataset)},
        "indexes": {k: str(v) for k, v in indexes.items()},
        "methods": list(VARIANTS),
        "variants": {name: {"method": "tog", "tog_search": v} for name, v in VARIANTS.items()},
        "metrics": METRICS,
        "output": {"dir": "results", "save_intermediate": True},
        "tog_search": tog,
        **extra,
    }
    return yaml.safe_dump(config, sort_keys=False)


def run_eval(work: Path, env: dict[str, str], extra: list[str]) -> float:
    """`gtog eval` in `work`; its wall time in seconds."""
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "gtog", "eval", "--root", str(work), "-q", *extra],
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"gtog eval failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return time.perf_counter() - started


def scripted(work: Path) -> dict[str, Any]:
    """Index the stories (scripted server), generate the multi-hop set, run the eval."""
    import pandas as pd

    from tests.support.projects import index_project, subprocess_env, write_project
    from tests.support.scripted_server import ScriptedServer
    from tests.support.tog_rules import multihop_facts, multihop_items, tog_rules
    from tests.support.world import default_rules, judge_rules

    with ScriptedServer(default_rules()) as server:
        items: list[dict[str, Any]] = []
        indexes = {}
        for key in KEYS:
            root = write_project(work / key, key, server.base_url)
            settings = root / "settings.yaml"
            text = settings.read_text().replace("size: 250", f"size: {CHUNK_TOKENS}")
            settings.write_text(text.replace("overlap: 20", "overlap: 10"))
            index_project(root)
            units = pd.read_parquet(root / "output" / "text_units.parquet")
            story = (REPO / "eval" / "stories" / f"{key}.txt").read_text()
            items += multihop_items(key, story, list(units["text"]))
            indexes[key] = root
        at = len(judge_rules())
        server.rules[at:at] = tog_rules(multihop_facts(items))
        dataset = work / "multihop.json"
        dataset.write_text(json.dumps([{k: v for k, v in i.items() if k != "hops"} for i in items]))
        (work / "eval_config.yaml").write_text(eval_config(dataset, indexes, {}))
        server.clear_log()
        wall = run_eval(work, subprocess_env(), [])
        unscripted = len(server.unscripted)
    hops = {str(i["id"]): int(i["hops"]) for i in items}
    return {
        "source": "scripted server (tests/support), example stories indexed by graphrag in "
        f"{CHUNK_TOKENS}-token chunks",
        "questions": {
            "n": len(items),
            "two_hop": sum(1 for h in hops.values() if h == 2),
            "three_hop": sum(1 for h in hops.values() if h == 3),
            "text_units": {
                k: len(pd.read_parquet(indexes[k] / "output" / "text_units.parquet")) for k in KEYS
            },
        },
        "tog_search": {"width": 3, "depth": 3},
        "wall_seconds": round(wall, 1),
        "unscripted_requests": unscripted,
        "items": items,
    }


def local(work: Path, extra: list[str]) -> dict[str, Any]:
    """The bundled example with the local model (`gtog eval --local`)."""
    base = yaml.safe_load((REPO / "eval_config.yaml").read_text())
    tog = base.get("tog_search") or {}
    indexes = {k: (REPO / v).resolve() for k, v in base["indexes"].items()}
    judge = dict(base.get("judge") or {})
    if judge.get("prompts_dir") and not str(judge["prompts_dir"]).startswith("builtin:"):
        judge["prompts_dir"] = str((REPO / judge["prompts_dir"]).resolve())
    config = eval_config(
        EXAMPLE_QA, indexes, tog, judge=judge, concurrency=base.get("concurrency", 1)
    )
    (work / "eval_config.yaml").write_text(config)
    env = dict(os.environ, HF_HUB_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True")
    env["NO_PROXY"] = "127.0.0.1,localhost"
    wall = run_eval(work, env, ["--local", *extra])
    return {
        "source": "local model (Qwen2.5-Coder-1.5B-Instruct Q4_K_M, llama.cpp CPU; "
        "all-MiniLM-L6-v2 embeddings), bundled example indexes",
        "tog_search": tog,
        "eval_args": ["--local", *extra],
        "wall_seconds": round(wall, 1),
        "machine": {"cpus": os.cpu_count()},
    }


def _records(detailed: dict[str, Any], method: str) -> list[dict[str, Any]]:
    return [
        r["methods"][method]
        for r in detailed.get("results", [])
        if method in (r.get("methods") or {})
    ]


def report(summary: dict[str, Any], detailed: dict[str, Any]) -> dict[str, Any]:
    """Per variant: cost and scores with intervals; paired tests against the paper."""
    rows: dict[str, Any] = {}
    for name, variant in VARIANTS.items():
        eff = summary["efficiency"].get(name, {})
        by = summary["by_method"].get(name, {})
        records = _records(detailed, name)
        calls = [r["efficiency"]["llm_calls"] for r in records if r.get("efficiency")]
        stages: dict[str, int] = {}
        for r in records:
            for stage, n in (r.get("efficiency") or {}).get("llm_calls_categories", {}).items():
                stages[stage] = stages.get(stage, 0) + n
        same = by.get("same_questions") or {}
        rows[name] = {
            "settings": variant,
            "n": by.get("n"),
            "avg_llm_calls": eff.get("avg_llm_calls"),
            "max_llm_calls": max(calls, default=None),
            "llm_calls_by_stage": stages,
            "avg_prompt_tokens": eff.get("avg_prompt_tokens"),
            "avg_output_tokens": eff.get("avg_output_tokens"),
            "avg_seconds": eff.get("avg_latency"),
            **{m: by.get(m) for m in METRICS},
            "same_questions": {m: same.get(m) for m in METRICS},
            "ci95": {m: (by.get("ci95") or {}).get(m) for m in METRICS},
        }
    comparisons = [
        c
        for c in summary.get("comparisons", [])
        if "tog_paper" in (c.get("a"), c.get("b")) and c.get("metric") in METRICS
    ]
    verdicts = []
    for c in comparisons:
        flip = c["a"] == "tog_paper"  # report variant minus paper
        other = c["b"] if flip else c["a"]
        c["variant_minus_paper"] = (-c["diff"] if flip else c["diff"]) + 0.0
        p = c.get("p_holm")
        real = p is not None and p < 0.05
        verdicts.append(
            f"{other} vs tog_paper on {c['metric']} (n={c.get('n')}): "
            f"{c['variant_minus_paper']:+.3f}, p_holm={p if p is None else round(p, 4)}: "
            + ("a real difference" if real else f"{c.get('n')} questions cannot tell them apart")
        )
    return {"variants": rows, "comparisons_with_paper": comparisons, "verdicts": verdicts}


def _bounds(tog: dict[str, Any]) -> dict[str, dict[str, Any]]:
    from gtog.tog._settings import ToGSettings

    out = {}
    for name, variant in VARIANTS.items():
        s = ToGSettings(**{**tog, **variant})
        out[name] = {"llm_call_bound": s.max_llm_calls, "rule": s.call_bound_rule}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["scripted", "local"])
    parser.add_argument("extra", nargs="*", help="extra `gtog eval` arguments (after --)")
    parser.add_argument("--keep", type=Path, help="keep the run's folder here")
    add_record_flag(parser)
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="gtog-tog-variants-"))
    try:
        meta = scripted(work) if args.mode == "scripted" else local(work, args.extra)
        out = work / "results"
        summary = json.loads((out / "eval_results_summary.json").read_text())
        detailed = json.loads((out / "eval_results_detailed.json").read_text())
        result = {
            "command": f"python benchmarks/tog_variants.py {args.mode} " + " ".join(args.extra),
            **{k: v for k, v in meta.items() if k != "items"},
            "bounds": _bounds(meta["tog_search"]),
            **report(summary, detailed),
            "summary": summary,
        }
        if "items" in meta:
            result["dataset"] = meta["items"]
        path = results_path(f"tog_variants_{args.mode}.json", args.record)
        path.write_text(json.dumps(result, indent=2, default=str) + "\n")
        for name, row in result["variants"].items():
            print(
                f"{name:15} calls {row['avg_llm_calls']:.2f} (max {row['max_llm_calls']}, bound "
                f"{result['bounds'][name]['llm_call_bound']})  correctness {row['correctness']}"
                f"  evidence_recall {row['evidence_recall']}  s {row['avg_seconds']:.2f}"
            )
        print("\n".join(result["verdicts"]))
        print(f"wrote {path}")
        if args.keep:
            shutil.copytree(work, args.keep, dirs_exist_ok=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
