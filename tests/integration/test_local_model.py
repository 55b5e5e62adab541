"""The local model server (gtog[local]): start it, chat and embed through gtog.llm, stop it.

The server tests need the `gtog[local]` extra (llama-cpp-python compiled from source,
~6 min) and its 1.1 GB of weights, so they are skipped with the reason when those are
absent (as in CI). The tests of the missing-extra message and of the config overrides
always run.
"""

from __future__ import annotations

import asyncio
import importlib.util
import math
import time
from pathlib import Path

import pytest

from gtog.local import LocalExtraMissingError, local_model_overrides
from gtog.local._weights import (
    CHAT_MODEL_NAME,
    EMBEDDING_DIMS,
    EMBEDDING_MODEL_NAME,
    missing_packages,
    require_local_extra,
)

REPO = Path(__file__).resolve().parents[2]

_missing = missing_packages()
needs_local = pytest.mark.skipif(
    bool(_missing),
    reason=(
        "gtog[local] extra not installed (missing: "
        + ", ".join(_missing[:3])
        + ("..." if len(_missing) > 3 else "")
        + "); install with: pip install -e '.[local]'"
    ),
)


def test_missing_extra_names_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "llama_cpp" else real(name, *a),
    )
    with pytest.raises(LocalExtraMissingError) as info:
        require_local_extra()
    message = str(info.value)
    assert "llama-cpp-python" in message
    assert "pip install -e '.[local]'" in message
    assert "\n" not in message


def test_overrides_point_every_model_id_at_the_server(tmp_path: Path) -> None:
    (tmp_path / "settings.yaml").write_text(
        "completion_models:\n"
        "  a:\n"
        "    model_provider: azure\n"
        "    model: gpt-4o\n"
        "    api_key: ${NOPE}\n"
        "    azure_deployment_name: d\n"
        "    api_base: https://x\n"
        "  b: {model_provider: openai, model: m}\n"
        "embedding_models:\n"
        "  e: {model_provider: openai, model: text-embedding-3-small}\n"
    )
    o = local_model_overrides("http://127.0.0.1:9/v1", tmp_path)
    assert set(o["completion_models"]) == {"a", "b"}
    assert set(o["embedding_models"]) == {"e"}
    for m in o["completion_models"].values():
        assert m["model"] == CHAT_MODEL_NAME and m["api_base"] == "http://127.0.0.1:9/v1"
        assert m["model_provider"] == "openai" and m["azure_deployment_name"] is None
    assert o["embedding_models"]["e"]["model"] == EMBEDDING_MODEL_NAME
    assert o["vector_store"]["vector_size"] == EMBEDDING_DIMS


def test_index_overrides_give_room_for_whole_replies_unless_the_settings_set_it(
    tmp_path: Path,
) -> None:
    from gtog.local._overrides import local_index_overrides
    from gtog.local._project import LOCAL_MAX_TOKENS

    (tmp_path / "settings.yaml").write_text(
        "completion_models:\n"
        "  a: {model_provider: openai, model: gpt-4.1, call_args: {max_tokens: 500}}\n"
        "  b: {model_provider: openai, model: gpt-4.1}\n"
        "embedding_models:\n"
        "  e: {model_provider: openai, model: text-embedding-3-small}\n"
    )
    o = local_index_overrides("http://127.0.0.1:9/v1", tmp_path)
    assert "max_tokens" not in o["completion_models"]["a"]["call_args"]  # the user's 500 stays
    assert o["completion_models"]["b"]["call_args"]["max_tokens"] == LOCAL_MAX_TOKENS == 3000
    assert "local_search" not in o  # search budgets are left to the settings at index time


def test_overrides_load_into_a_graphrag_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphrag.config.load_config import load_config

    from tests.support.projects import write_project

    monkeypatch.chdir(tmp_path)
    root = write_project(tmp_path / "p", "lighthouse", "http://example.invalid/v1")
    config = load_config(root, cli_overrides=local_model_overrides("http://127.0.0.1:9/v1", root))
    chat = config.get_completion_model_config("default_completion_model")
    assert (chat.model, chat.api_base) == (CHAT_MODEL_NAME, "http://127.0.0.1:9/v1")
    assert (
        config.get_embedding_model_config("default_embedding_model").model == EMBEDDING_MODEL_NAME
    )


@pytest.mark.local_model
@needs_local
def test_local_server_chat_and_embeddings_through_gtog_llm() -> None:
    from gtog.local._clients import local_chat_model, local_embedding_model
    from gtog.local._lifecycle import LocalModelServer

    server = LocalModelServer()
    started = time.monotonic()
    with server as info:
        assert server.running
        assert info.base_url.startswith("http://127.0.0.1:")
        ready_s = time.monotonic() - started

        chat = local_chat_model(info)
        reply = asyncio.run(
            chat.chat(
                "What is the capital of France? Answer with one word.",
                temperature=0,
                max_tokens=16,
            )
        )
        assert "paris" in reply.text.lower()
        assert reply.usage_reported and reply.prompt_tokens > 0 and reply.output_tokens > 0

        vectors = local_embedding_model(info).embed_sync(
            [
                "The keeper lights the lamp.",
                "A lighthouse keeper tends the light.",
                "Stock prices fell.",
            ]
        )
        assert [len(v) for v in vectors] == [EMBEDDING_DIMS] * 3
        assert math.isclose(sum(x * x for x in vectors[0]), 1.0, rel_tol=1e-3)
        near = sum(a * b for a, b in zip(vectors[0], vectors[1], strict=True))
        far = sum(a * b for a, b in zip(vectors[0], vectors[2], strict=True))
        assert near > far
    assert not server.running
    assert ready_s < 120


@pytest.mark.local_model
@needs_local
def test_example_index_settings_load_with_local_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphrag.config.load_config import load_config

    root = REPO / "eval" / "indexes" / "lighthouse"
    if not (root / "output" / "entities.parquet").exists():
        pytest.skip("example indexes not built (python scripts/build_example_indexes.py)")
    monkeypatch.chdir(REPO)
    config = load_config(root, cli_overrides=local_model_overrides("http://127.0.0.1:9/v1", root))
    assert config.vector_store.vector_size == EMBEDDING_DIMS


@needs_local
def test_query_local_tog_verbose_prints_paths_and_the_call_split() -> None:
    """`gtog query --local --method tog -v` answers on the bundled index and shows its work."""
    import re

    from tests.support.projects import gtog

    root = REPO / "eval" / "indexes" / "orchard"
    question = "Who is Edda Lorne's apprentice?"
    proc = gtog(
        "query", "--local", "--root", str(root), "--method", "tog", "-v", question, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert lines[0] and not lines[0].startswith("--")  # the answer comes first
    assert any(line.startswith("-- ToG: topic entities [") for line in lines)
    total = re.search(r"^-- LLM calls (\d+) \(bound (\d+)\):$", proc.stdout, re.M)
    assert total and 0 < int(total.group(1)) <= int(total.group(2))
    stages = re.findall(r"^  (\w+)\s+calls\s+(\d+)\s+prompt tokens\s+(\d+)", proc.stdout, re.M)
    assert {s for s, _, _ in stages} >= {"entity_linking", "answer"}
    assert sum(int(c) for _, c, _ in stages) == int(total.group(1))
    assert all(int(p) > 0 for _, c, p in stages if int(c) > 0)


@pytest.mark.local_model
@needs_local
def test_local_server_replies_repeat_whatever_came_before() -> None:
    """A request sampled at temperature 0.8 gets the same reply after any other request."""
    import json
    import urllib.request

    from gtog.local._lifecycle import LocalModelServer

    def ask(base_url: str, text: str) -> str:
        body = {
            "model": CHAT_MODEL_NAME,
            "messages": [
                {"role": "system", "content": "You retell stories in one sentence."},
                {"role": "user", "content": text},
            ],
            "temperature": 0.8,
            "max_tokens": 24,
        }
        request = urllib.request.Request(
            f"{base_url}/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(request, timeout=300) as reply:
            return json.load(reply)["choices"][0]["message"]["content"]

    story = "A keeper on a rock island lights a lamp each night and writes down the ships."
    with LocalModelServer() as info:
        first = ask(info.base_url, story)
        ask(info.base_url, "A baker in a small town bakes bread before dawn for the mayor.")
        again = ask(info.base_url, story)
    assert first and again == first
