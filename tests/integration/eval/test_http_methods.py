"""A running service's endpoints and another benchmark's answers file, evaluated beside
graphrag's local and basic search (issue 36): real HTTP on localhost, the scripted model for
graphrag's engines and the judges."""

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

TOKEN = "svc-token-SECRET-7f3a9c21e5"
METHODS = ("agent", "local", "basic", "flaky", "slow", "broken", "streamed", "bench", "router")


@pytest.fixture
def service() -> Iterator[SearchService]:
    svc = SearchService(token=TOKEN).start()
    yield svc
    svc.stop()


def _endpoint(svc: SearchService, name: str, path: str | None = None, extra: str = "") -> str:
    url = f"{svc.base_url}/api/collections/{{index_key}}/search/{path or name}"
    return (
        f"  {name}:\n"
        f'    url: "{url}"\n'
        f'    body: {{query: "{{question}}", question_id: "{{question_id}}"{extra}}}\n'
        '    headers: {Authorization: "Bearer ${SVC_TOKEN}"}\n'
        "    answer: response\n"
        "    context: context_data\n"
        "    usage: {llm_calls: stats.llm_calls, prompt_tokens: stats.prompt_tokens}\n"
        "    timeout: 2\n"
    )


def _bench_file(path: Path) -> None:
    """A GraphRAG-Bench prediction file (`[{id, question, question_type, ...}]`) for the
    lighthouse questions, one per question type."""
    items = [q for q in json.loads(EXAMPLE_QA.read_text()) if q["imdb_key"] == "lighthouse"]
    path.write_text(
        json.dumps(
            [
                {
                    "id": q["id"],
                    "question": q["question"],
                    "source": "Novel-1",
                    "context": [f"passage about {q['answer']}", "another passage"],
                    "evidence": "",
                    "question_type": "Fact Retrieval" if i % 2 == 0 else "Complex Reasoning",
                    "generated_answer": q["answer"],
                    "ground_truth": q["answer"],
                }
                for i, q in enumerate(items)
            ],
            indent=2,
        )
    )


def test_http_methods_and_a_benchmark_file_are_scored_beside_local_and_basic(
    llm_server: ScriptedServer,
    example_indexes: dict[str, Path],
    service: SearchService,
    tmp_path: Path,
) -> None:
    http = "".join(_endpoint(service, n) for n in ("agent", "flaky", "slow", "broken")) + _endpoint(
        service, "streamed", "agent", ", stream: true"
    )
    # the backend's streaming agent (issue 46 item 4): its events read by `stream:` paths
    http += _endpoint(service, "router", "agent/stream").replace(
        "    answer: response\n    context: context_data\n",
        "    stream: {answer: content.delta, done: done, route: done.method_used,"
        " error: error.message}\n    context: done.sources\n",
    )
    root = make_eval_root(
        tmp_path,
        {"lighthouse": example_indexes["lighthouse"]},
        methods=METHODS,
        extra=(
            f"http_methods:\n{http}"
            "answers:\n  bench: {path: bench.json, format: graphrag-bench}\n"
            "metrics: [correctness, token_recall]\n"
        ),
    )
    _bench_file(root / "bench.json")
    env = {**subprocess_env(), "SVC_TOKEN": TOKEN}
    args = ("eval", "--root", str(root), "--index-key", "lighthouse", "--limit", "2")
    result = gtog(*args, env=env)
    assert result.returncode == 0, result.stderr
    assert "match no question" not in result.stderr  # the bench file: 0 unmatched lines
    detailed, summary = load_results(root)
    by_q = {q["question_id"]: q["methods"] for q in detailed["results"]}
    assert sorted(by_q) == ["lh-01", "lh-02"]
    refs = {q["id"]: q["answer"] for q in json.loads(EXAMPLE_QA.read_text())}
    for qid, methods in by_q.items():
        # the service's answers, asked with the question, its id and the index key
        for m in ("agent", "flaky", "streamed", "bench", "router"):
            assert methods[m].get("error") is None, (qid, m, methods[m].get("error"))
            assert methods[m]["response"] == refs[qid], (qid, m)
        assert methods["agent"]["context_text"].startswith("context of lighthouse")
        assert methods["streamed"]["context_text"].startswith("context of lighthouse")
        assert methods["bench"]["context_text"] == f"passage about {refs[qid]}\n\nanother passage"
        # the route the streaming agent chose, kept on its answer (and on no other)
        assert methods["router"]["route"] == {"lh-01": "local", "lh-02": "basic"}[qid]
        assert methods["router"]["context_text"] == "source of lighthouse"
        assert "route" not in methods["agent"] and "route" not in methods["local"]
        # the timeout and the reply without `response` are errors, of their kind; never scored
        assert methods["slow"]["error"].endswith("timed out after 2 s (http_methods.slow.timeout)")
        assert "answer path 'response'" in methods["broken"]["error"]
        assert not methods["slow"].get("scores") and not methods["broken"].get("scores")
    asked = [r for r in service.requests if r.path.endswith("/agent")]
    assert {r.body["question_id"] for r in asked} == {"lh-01", "lh-02"}
    assert all(r.authorized for r in service.requests)
    # 503 twice, then the answer: three requests per question, retried by the model's policy
    assert sum(r.path.endswith("/flaky") for r in service.requests) == 6
    # and each retry is a line in eval.log, as the docs say
    log = (root / "results" / "eval.log").read_text()
    retries = [line for line in log.splitlines() if "http_methods.flaky on lighthouse" in line]
    assert len(retries) == 4 and all("after http 503" in line for line in retries), retries
    kinds = {e["kind"]: e["count"] for e in summary["metadata"]["errors"]}
    assert kinds.get("search: timeout") == 2 and kinds.get("search: no answer in reply") == 2
    # scored, compared and paired-tested beside local and basic
    assert list(summary["by_method"]) == list(METHODS)
    for m in ("agent", "flaky", "streamed", "bench"):
        assert summary["by_method"][m]["scored"]["correctness"] == 2, m
    pairs = {(c["a"], c["b"]) for c in summary["comparisons"] if c["metric"] == "correctness"}
    assert ("agent", "local") in pairs and ("local", "bench") in pairs
    # what the service said it spent; what it did not say is unknown, never 0
    eff = summary["efficiency"]["agent"]
    assert eff["total_llm_calls"] == 6 and eff["total_prompt_tokens"] == 240
    assert eff["total_output_tokens"] is None and eff["usd_total"] is None
    assert eff["stated"]["llm_calls"] == 2 and eff["stated"]["output_tokens"] == 0
    assert eff["avg_latency"] is not None and eff["stated"]["latency"] == 2
    assert summary["efficiency"]["slow"]["total_llm_calls"] is None
    # the file's question type groups the results
    groups = summary["by_group"]["question_type"]
    assert set(groups) == {"Fact Retrieval", "Complex Reasoning"}
    assert {q["question_id"]: q["groups"]["question_type"] for q in detailed["results"]} == {
        "lh-01": "Fact Retrieval",
        "lh-02": "Complex Reasoning",
    }
    # (same-question means: slow and broken answer no question, so every group's n is 0)
    assert set(groups["Fact Retrieval"]) == set(METHODS)
    # the endpoint's url, body and paths are in the spec; its headers are not
    spec = summary["metadata"]["spec"]["method_settings"]["agent"]["lighthouse"]["http"]
    assert spec["url"].endswith("/api/collections/{index_key}/search/agent")
    assert "headers" not in spec and "SVC_TOKEN" not in json.dumps(summary["metadata"])
    csv = pd.read_csv(root / "results" / "eval_results.csv")
    agent_rows = csv[csv["method"] == "agent"]
    assert agent_rows["llm_calls"].tolist() == [3, 3]
    assert agent_rows["output_tokens"].isna().all()  # unknown: empty, not 0
    routes = csv[csv["method"] == "router"].set_index("question_id")["route"]
    assert routes.to_dict() == {"lh-01": "local", "lh-02": "basic"}
    assert csv[csv["method"] != "router"]["route"].isna().all()
    # the token is in no file and no output
    for path in root.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path
    assert TOKEN not in result.stdout + result.stderr
    # a changed endpoint refuses --resume
    config = root / "eval_config.yaml"
    config.write_text(config.read_text().replace("search/agent", "search/plain", 1))
    refused = gtog(*args, "--resume", env=env)
    assert refused.returncode == 2, refused.stderr
    assert "agent settings for 'lighthouse' changed" in refused.stderr
    # `gtog query -m` asks the endpoint too
    config.write_text(config.read_text().replace("search/plain", "search/agent", 1))
    query = gtog(
        "query",
        "--root",
        str(example_indexes["lighthouse"]),
        "--config",
        str(config),
        "-m",
        "agent",
        "Who keeps the lighthouse on Varn Island?",
        env=env,
    )
    assert query.returncode == 0, query.stderr
    assert query.stdout.strip() == "Maren Holt"


def test_gtog_query_masks_a_token_the_service_echoes(
    service: SearchService, tmp_path: Path
) -> None:
    """`gtog query -m` prints errors through the redactor `gtog eval` uses (issue 44)."""
    key = "x-api-key-0f9e8d7c6b5a"
    config = tmp_path / "eval_config.yaml"
    config.write_text(
        "dataset: {path: qa.json}\n"
        "indexes: {lighthouse: lighthouse}\n"
        "http_methods:\n"
        "  echo:\n"
        f'    url: "{service.base_url}/api/collections/{{index_key}}/search/echo"\n'
        '    headers: {Authorization: "Bearer ${SVC_TOKEN}", X-API-Key: "${SVC_KEY}"}\n'
    )
    env = {**subprocess_env(), "SVC_TOKEN": TOKEN, "SVC_KEY": key}
    args = ("query", "--root", str(tmp_path), "--config", str(config), "--index-key", "x")
    result = gtog(*args, "-m", "echo", "Who keeps the lighthouse?", env=env)
    assert result.returncode == 1, result.stderr
    assert "HTTP 500" in result.stderr and "invalid credentials: [REDACTED]" in result.stderr
    assert TOKEN not in result.stdout + result.stderr and key not in result.stderr


def test_gtog_query_masks_a_key_a_model_server_echoes(
    llm_server: ScriptedServer, example_indexes: dict[str, Path]
) -> None:
    """The same redactor for gtog's own methods: a 401 that quotes the key (issue 44)."""
    from tests.support.projects import TEST_API_KEY
    from tests.support.scripted_server import Fail, Rule

    llm_server.rules.insert(
        0, Rule("401", lambda r: True, lambda r: Fail(401, "Incorrect API key: {api_key}"))
    )
    root = str(example_indexes["lighthouse"])
    result = gtog("query", "--root", root, "-m", "tog", "Who keeps the lighthouse?")
    assert result.returncode != 0
    assert "answered 401: the key was refused" in result.stderr, result.stderr
    assert TEST_API_KEY not in result.stdout + result.stderr
    assert "Traceback" not in result.stderr  # LiteLLM's tracebacks: in the project's log
    log = example_indexes["lighthouse"] / "logs" / "gtog-query.log"
    assert "AuthenticationError" in log.read_text()
    assert TEST_API_KEY not in log.read_text()
