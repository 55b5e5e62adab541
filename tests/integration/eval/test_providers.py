"""Gemini, Azure OpenAI and a local server without usage, each on its own wire format.

The example index (built once per run) is copied with its models switched to one provider;
the scripted server answers in that provider's REST shape (see tests/support/
scripted_server.py) with the same rules, so the searches, judges and embeddings are the
usual ones and only the wire differs. One question each, to stay fast.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gtog._project import load_graphrag_config
from gtog.llm._usage import token_prices
from tests.integration.eval.helpers import load_results, make_eval_root
from tests.support.projects import TEST_API_KEY, gtog, provider_copy
from tests.support.scripted_server import Cut, Fail, Rule, ScriptedServer
from tests.support.tog_rules import tog_rules

pytestmark = pytest.mark.integration

FIVE = ("local", "basic", "global", "drift", "tog")
JUDGES = ("correctness", "faithfulness", "relevance", "completeness")
GEMINI_PATH = re.compile(
    r"^/v1beta/models/(gemini-2\.5-flash:generateContent|gemini-embedding-001:batchEmbedContents)$"
)


def _root(tmp_path: Path, project: Path, methods: tuple[str, ...], extra: str = "") -> Path:
    return make_eval_root(tmp_path, {"lighthouse": project}, methods=methods, extra=extra)


def _eval(root: Path, *flags: str):
    return gtog("eval", "--root", str(root), "-k", "lighthouse", "--limit", "1", "-q", *flags)


def _prices(project: Path) -> tuple[float, float, float]:
    config = load_graphrag_config(project)
    chat = token_prices(config.completion_models["default_completion_model"])
    embedding = token_prices(config.embedding_models["default_embedding_model"])
    assert chat is not None and embedding is not None
    return chat[0], chat[1], embedding[0]


def test_a_gemini_study_runs_every_method_and_judge_priced_from_litellms_table(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    """Five methods, four judges, embeddings, a 429 retried after its `retryDelay`, prices
    from LiteLLM's table, the estimate and the model-call cache, all on Google's wire."""
    first = [True]

    def exhausted(_request) -> Fail:  # once: Google's 429 with the delay it wants
        first[0] = False
        return Fail(429, "Resource has been exhausted (e.g. check quota).", retry_after=0.5)

    quota = Rule("quota", lambda r: first[0] and "-----Entities-----" in r.system, exhausted)
    llm_server.rules[0:0] = [quota, *tog_rules()]
    project = provider_copy(example_indexes["lighthouse"], tmp_path / "g", "gemini", llm_server)
    root = _root(tmp_path, project, FIVE, extra="tog_search: {width: 2, depth: 2}\n")

    estimate = _eval(root, "--estimate")  # bounds: no model call, priced for Gemini
    assert estimate.returncode == 0, estimate.stderr
    bounds = json.loads((root / "results" / "estimate.json").read_text())
    assert llm_server.log == [] and bounds["total"]["usd"] > 0
    assert set(bounds["methods"]) == set(FIVE)

    result = _eval(root, "--force")
    assert result.returncode == 0, result.stderr
    refused = [e for e in llm_server.log if e.status == 429]
    assert len(refused) == 1  # retried after the retryDelay Google stated
    [retried] = [e for e in llm_server.log if e.identity == refused[0].identity and e.status == 200]
    assert retried.start - refused[0].start >= 0.5
    sent = [e for e in llm_server.log if e.status == 200]
    assert sent and all(e.wire == "gemini" and GEMINI_PATH.match(e.path) for e in sent)
    assert {e.auth for e in sent} == {"x-goog-api-key"}
    assert llm_server.unscripted == []
    judged = [e for e in sent if (e.rule or "").startswith("judge:")]
    assert {e.rule for e in judged} == {f"judge:{m}" for m in JUDGES}
    assert all(e.request.get("response_format") for e in judged)  # responseMimeType JSON

    detailed, summary = load_results(root)
    [question] = detailed["results"]
    prompt_price, output_price, embedding_price = _prices(project)
    for method in FIVE:
        record = question["methods"][method]
        assert record.get("error") is None, (method, record.get("error"))
        assert set(record["scores"]) == set(JUDGES) and None not in record["scores"].values()
        eff = record["efficiency"]
        assert eff["prompt_tokens"] > 0 and eff["output_tokens"] > 0
        # USD is LiteLLM's price for the tokens recorded (usageMetadata; embeddings counted)
        assert eff["cost_usd"] == pytest.approx(
            eff["prompt_tokens"] * prompt_price
            + eff["output_tokens"] * output_price
            + eff["embedding_tokens"] * embedding_price
        )
        judge_usd = 0.0
        for metric, usage in record["judge_usage"].items():
            assert usage["cost_usd"] == pytest.approx(
                usage["prompt_tokens"] * prompt_price + usage["output_tokens"] * output_price
            ), metric
            judge_usd += usage["cost_usd"]
        cost = summary["cost"]["by_method"][method]
        assert cost["search_usd"] == pytest.approx(eff["cost_usd"])
        assert cost["total_usd"] == pytest.approx(eff["cost_usd"] + judge_usd)
    # every request sent is one the run counted as a miss; nothing was sent twice
    assert summary["cost"]["cache"]["misses"] == len(sent)
    assert len({e.identity for e in sent}) == len(sent)

    # the model-call cache: the same study from nothing sends nothing, scores the same
    llm_server.clear_log()
    again = _eval(root, "--force")
    assert again.returncode == 0, again.stderr
    assert llm_server.log == []
    replay, _ = load_results(root)
    for method in FIVE:
        assert (
            replay["results"][0]["methods"][method]["scores"]
            == question["methods"][method]["scores"]
        )


def test_gemini_blocked_and_cut_answers_are_the_pairs_errors_never_scores(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    """A safety block (`finishReason: SAFETY`) and a cut answer (`MAX_TOKENS`) are the
    pair's errors, kind named; neither is scored."""
    project = provider_copy(example_indexes["lighthouse"], tmp_path / "g", "gemini", llm_server)
    llm_server.rules[0:0] = [
        Rule(
            "safety",
            lambda r: "-----Entities-----" in r.system,
            lambda r: Cut("", "content_filter"),
        ),
        Rule("cut", lambda r: "---Role---" in r.system, lambda r: Cut("Maren", "length")),
    ]
    root = _root(tmp_path, project, ("local", "basic"), extra="metrics: [correctness]\n")
    result = _eval(root)
    assert result.returncode == 1, result.stderr  # every search failed
    detailed, summary = load_results(root)
    local, basic = (detailed["results"][0]["methods"][m] for m in ("local", "basic"))
    assert "content filter" in local["error"], local["error"]
    assert "cut at max_tokens" in basic["error"] and "length" in basic["error"], basic["error"]
    for record in (local, basic):
        assert all(v is None for v in record["scores"].values()), record["scores"]
    for method in ("local", "basic"):
        counted = summary["by_method"][method]
        assert counted["search_errors"] == 1 and counted["scored"]["correctness"] == 0
        assert counted["correctness"] is None
    kinds = [line for line in result.stderr.splitlines() if line.lstrip().startswith("1 x")]
    assert len(kinds) == 2, result.stderr  # one line per kind
    assert "content filter" in kinds[0] + kinds[1] and "truncated" in kinds[0] + kinds[1]


@pytest.mark.parametrize("provider", ["gemini", "azure"])
def test_a_refused_key_is_one_line_naming_the_model(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path, provider: str
) -> None:
    project = provider_copy(example_indexes["lighthouse"], tmp_path / "p", provider, llm_server)
    llm_server.accepts = lambda key: False
    try:
        root = _root(tmp_path, project, ("local", "basic"))
        outputs = [_eval(root)] if provider == "gemini" else []  # (Azure: its query only)
        for method in ("local", "global") if provider == "gemini" else ("local",):
            outputs.append(gtog("query", "--root", str(project), "--method", method, "Who?"))
    finally:
        llm_server.accepts = None
    said = "answered 400 API_KEY_INVALID" if provider == "gemini" else "answered 401"
    for out in outputs:
        text = (out.stdout + out.stderr).strip()
        assert out.returncode == 1, text
        lines = [line for line in text.splitlines() if "key was refused" in line]
        assert len(lines) == 1 and said in lines[0], text
        assert "Traceback" not in text and TEST_API_KEY not in text
        assert len(text.splitlines()) <= 2, text  # (a global answer printed before it)
        assert "default_embedding_model" in text or "default_completion_model" in text
    assert "Traceback" in (project / "logs" / "gtog-query.log").read_text()  # in the log
    if provider == "gemini":
        assert "Traceback" in (root / "results" / "eval.log").read_text()


def test_azure_openai_sends_deployment_version_and_api_key(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    project = provider_copy(example_indexes["lighthouse"], tmp_path / "a", "azure", llm_server)
    root = _root(tmp_path, project, ("local", "basic"), extra="metrics: [correctness]\n")
    result = _eval(root)
    assert result.returncode == 0, result.stderr
    sent = llm_server.log
    assert sent and all(e.wire == "azure" and e.auth == "api-key" for e in sent)
    assert all("api-version=2024-10-21" in e.path for e in sent)
    assert {e.path.split("?")[0] for e in sent} == {
        "/openai/deployments/chat-deployment/chat/completions",
        "/openai/deployments/embedding-deployment/embeddings",
    }
    detailed, _ = load_results(root)
    prompt_price, output_price, embedding_price = _prices(project)
    for method in ("local", "basic"):
        record = detailed["results"][0]["methods"][method]
        assert record.get("error") is None and record["scores"]["correctness"] is not None
        eff = record["efficiency"]
        assert eff["cost_usd"] == pytest.approx(
            eff["prompt_tokens"] * prompt_price
            + eff["output_tokens"] * output_price
            + eff["embedding_tokens"] * embedding_price
        )


def test_a_local_server_without_usage_is_counted_never_zero_and_unpriced(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    """An OpenAI-compatible local server (llama.cpp, vLLM, Ollama) that sends `usage: null`,
    in replies and in streams: tokens are counted by tokenizer (never 0), USD is unknown
    (null, never $0)."""
    project = provider_copy(example_indexes["lighthouse"], tmp_path / "l", "local", llm_server)
    llm_server.report_usage = False
    try:
        root = _root(tmp_path, project, ("local", "basic"), extra="metrics: [correctness]\n")
        result = _eval(root)
        streamed = gtog("query", "--root", str(project), "--method", "local", "--streaming", "Who?")
    finally:
        llm_server.report_usage = True
    assert result.returncode == 0, result.stderr
    assert streamed.returncode == 0 and streamed.stdout.strip(), streamed.stderr
    assert any(e.stream for e in llm_server.chat_log())  # graphrag's own streamed query
    detailed, summary = load_results(root)
    for method in ("local", "basic"):
        record = detailed["results"][0]["methods"][method]
        assert record.get("error") is None, record.get("error")
        eff = record["efficiency"]
        assert eff["prompt_tokens"] > 0 and eff["output_tokens"] > 0
        assert eff["cost_usd"] is None
        assert record["judge_usage"]["correctness"]["prompt_tokens"] > 0
        assert record["judge_usage"]["correctness"]["cost_usd"] is None
        assert summary["cost"]["by_method"][method]["total_usd"] is None
