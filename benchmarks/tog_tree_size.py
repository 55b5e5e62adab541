"""How many bytes ToG's exploration tree adds to an eval record, on a screenplay-sized index.

Generates a graphrag 3.3 index the size of a screenplay (tests/support/synthetic.py: 2,000
entities, 4,000 relationships, 300 text units), answers questions about its entities with
ToG against the scripted server (its ToG rules: every stage answered, pruning by word
overlap), with the paper's width 3 / depth 3 and with `pruning: edges`, and measures the
record's `exploration` and `paths` as the detailed JSON stores them (UTF-8 bytes of their
JSON). Also the bound: the largest tree the caps allow (`MAX_SHOWN` candidates per
expanded path and depth, relations cut at `RELATION_CHARS`) at width 3, depth 3.

    python benchmarks/tog_tree_size.py            # -> benchmarks/out/tog_tree_size.json
    python benchmarks/tog_tree_size.py --record   # -> benchmarks/results/tog_tree_size.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from recording import add_record_flag, write_results

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

BUDGET = 20_000


def _size(exploration: object, paths: object) -> int:
    return len(
        json.dumps({"exploration": exploration, "paths": paths}, ensure_ascii=False).encode()
    )


def _bound(width: int, depth: int) -> int:
    """Bytes of the largest tree the caps allow (long names, every slot filled)."""
    from gtog.tog._trace import MAX_SHOWN, PATH_CHARS, RELATION_CHARS

    name = "X" * 40
    nodes = [
        {"id": "0.1", "parent": None, "relation": None, "entity": name, "score": None,
         "kept": True, "pruned_by": None}
        for _ in range(width)
    ]  # fmt: skip
    tree = [{"depth": 0, "candidates": nodes, "verdict": "linked", "omitted": 0,
             "linked_by": "embedding"}]  # fmt: skip
    for d in range(1, depth + 1):
        cands = [
            {"id": f"{d}.{i:03d}", "parent": f"{d - 1}.{i:03d}", "relation": "r" * RELATION_CHARS,
             "entity": name, "score": 0.1234, "kept": False, "pruned_by": "relation_pruning"}
            for i in range(width * MAX_SHOWN)
        ]  # fmt: skip
        tree.append({"depth": d, "candidates": cands, "verdict": "go_deeper", "omitted": 999})
    entities = [name] * (depth + 1)
    paths = [
        {"node": "3.001", "path": "p" * PATH_CHARS, "entities": entities, "score": 0.1234}
        for _ in range(width)
    ]
    return _size(tree, paths)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=12)
    add_record_flag(parser)
    args = parser.parse_args()

    from gtog._project import load_project
    from gtog.llm._models import run_sync
    from gtog.search import build_engine, run_search
    from gtog.tog._trace import exploration_json
    from tests.support.projects import subprocess_env
    from tests.support.scripted_server import ScriptedServer
    from tests.support.synthetic import synthetic_index, synthetic_question
    from tests.support.tog_rules import tog_rules

    os.environ.update(subprocess_env())  # the test key, offline
    server = ScriptedServer(tog_rules([])).start()
    results: dict[str, object] = {"budget_bytes": BUDGET, "bound_3x3_bytes": _bound(3, 3)}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = synthetic_index(Path(tmp) / "screenplay", server.base_url)
            for label, tog in (
                ("paper_3x3", {"width": 3, "depth": 3}),
                ("edges_3x3", {"width": 3, "depth": 3, "pruning": "edges"}),
            ):
                project = load_project(root)

                async def answers(project=project, tog=tog) -> list[tuple[int, int, int]]:
                    engine = await build_engine("tog", project, {"tog_search": tog})
                    out = []
                    for i in range(args.questions):
                        outcome = await run_search(engine, synthetic_question(i * 37))
                        found = exploration_json(outcome.result.context_data)
                        assert found is not None
                        nodes = sum(len(d["candidates"]) for d in found[0])
                        omitted = sum(d["omitted"] for d in found[0])
                        out.append((_size(*found), nodes, omitted))
                    return out

                rows = run_sync(answers())
                sizes = [s for s, _, _ in rows]
                results[label] = {
                    "questions": len(rows),
                    "bytes_max": max(sizes),
                    "bytes_mean": round(statistics.fmean(sizes)),
                    "nodes_max": max(n for _, n, _ in rows),
                    "omitted_max": max(o for _, _, o in rows),
                }
    finally:
        server.stop()
    path = write_results("tog_tree_size.json", results, args.record)
    print(json.dumps(results, indent=2))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
