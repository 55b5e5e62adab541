"""Is routing worth it? (issue 48) A scripted agent over HTTP that routes by keyword and
answers a known set of questions wrongly, beside the two methods it routes between: its
regret, confusion table and misrouted questions equal the hand-computed ones."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from tests.integration.eval.helpers import load_results, make_eval_root
from tests.support.http_service import SearchService
from tests.support.projects import gtog, subprocess_env
from tests.support.scripted_server import ScriptedServer
from tests.support.world import EXAMPLE_QA

pytestmark = pytest.mark.integration

TOKEN = "agent-token-4b1d"
WRONG = frozenset({"lh-03", "or-02", "or-04"})
"""The agent's wrong answers: lh-03 and or-02 routed to graph, or-04 to vector."""
RIGHT = {
    "graph": {"lh-01", "lh-02", "lh-04", "or-01", "or-05"},
    "vector": {"lh-02", "lh-05", "or-02", "or-03"},
}
"""Which questions each method the agent routes between answers rightly."""
COST = {"graph": 0.002, "vector": 0.001}


@pytest.fixture
def agent() -> Iterator[SearchService]:
    svc = SearchService(token=TOKEN, wrong=WRONG, routes=("graph", "vector")).start()
    yield svc
    svc.stop()


def test_a_keyword_router_s_regret_and_confusion(
    llm_server: ScriptedServer,
    example_indexes: dict[str, Path],
    agent: SearchService,
    tmp_path: Path,
) -> None:
    url = f"{agent.base_url}/api/collections/{{index_key}}/search/agent/stream"
    root = make_eval_root(
        tmp_path,
        example_indexes,
        methods=("graph", "vector", "agent"),
        extra=(
            "answers: {graph: graph.jsonl, vector: vector.jsonl}\n"
            "http_methods:\n  agent:\n"
            f'    url: "{url}"\n'
            '    body: {query: "{question}", question_id: "{question_id}"}\n'
            '    headers: {Authorization: "Bearer ${AGENT_TOKEN}"}\n'
            "    stream: {answer: content.delta, done: done, route: done.method_used,"
            " error: error.message}\n"
            "metrics: [token_recall]\n"
        ),
    )
    refs = {q["id"]: q["answer"] for q in json.loads(EXAMPLE_QA.read_text())}
    for name, right in RIGHT.items():
        lines = [
            {
                "question_id": qid,
                "answer": ref if qid in right else "I do not know",
                "cost_usd": COST[name],
            }
            for qid, ref in refs.items()
        ]
        (root / f"{name}.jsonl").write_text("\n".join(json.dumps(line) for line in lines))
    result = gtog("eval", "--root", str(root), env={**subprocess_env(), "AGENT_TOKEN": TOKEN})
    assert result.returncode == 0, result.stderr
    detailed, summary = load_results(root)
    # the index's entities each question names: known before answering, on every answer
    linked = {
        q["question_id"]: {m: e.get("linked_entities") for m, e in q["methods"].items()}
        for q in detailed["results"]
    }
    assert all(len(set(v.values())) == 1 for v in linked.values()), linked
    assert linked["lh-03"]["agent"] >= 2  # "Who gave Maren Holt the brass compass?"
    assert linked["lh-01"]["graph"] >= 1  # "... on Varn Island?"
    routing = summary["routing"]
    # the oracle: right wherever a method is (8 of 10); graph is the best single (5 of 10)
    assert routing["methods"] == ["graph", "vector"] and routing["n"] == 10
    assert routing["oracle"]["mean"] == pytest.approx(0.8)
    assert routing["best_single"]["method"] == "graph"
    assert routing["best_single"]["mean"] == pytest.approx(0.5)
    assert routing["headroom"]["mean"] == pytest.approx(0.3)
    assert routing["only_one_right"]["by_method"] == {"graph": 4, "vector": 3}
    assert routing["cheapest_right"]["chosen"] == {"graph": 4, "vector": 4, "(none)": 2}
    # the agent: right but on lh-03, or-02, or-04 (7 of 10)
    a = routing["routers"]["agent"]
    assert a["mean"]["mean"] == pytest.approx(0.7)
    assert a["regret"]["mean"] == pytest.approx(0.1)
    assert a["vs_best_single"]["mean"] == pytest.approx(0.2)
    assert a["routes_known"] == 10
    graph, vector = a["confusion"]["graph"], a["confusion"]["vector"]
    # "Who" questions went to graph: lh-01, lh-03, lh-04, or-01, or-02, or-05
    assert (graph["chosen"], graph["right"], graph["wrong"], graph["wrong_other_right"]) == (
        6,
        4,
        2,
        1,
    )
    assert graph["best"] == {"graph": 4, "(none)": 1, "vector": 1}
    assert graph["direct_mean"] == pytest.approx(4 / 6)
    assert (vector["chosen"], vector["right"], vector["wrong"], vector["wrong_other_right"]) == (
        4,
        3,
        1,
        0,
    )
    assert vector["best"] == {"vector": 3, "(none)": 1}
    assert vector["direct_mean"] == pytest.approx(0.75)
    assert a["misrouted"] == ["or-02"]  # wrong while vector was right
    # shown: the terminal's line, the report's section, the CSV's route column
    assert (
        "routing (token_recall, 10 questions): oracle 0.80 vs best single graph 0.50, "
        "headroom +0.30" in " ".join(result.stdout.split())
    )
    assert "agent regret 0.10" in " ".join(result.stdout.split())
    html = (root / "results" / "report.html").read_text()
    assert 'id="routing"' in html and "Router agent" in html
    csv = pd.read_csv(root / "results" / "eval_results.csv")
    routes = csv[csv["method"] == "agent"].set_index("question_id")["route"].to_dict()
    assert routes["lh-01"] == "graph" and routes["lh-02"] == "vector"
