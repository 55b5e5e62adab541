"""Gemini, Azure OpenAI and a local OpenAI-compatible server, each on its own wire format.

Real HTTP from LiteLLM (through graphrag_llm, models built from a settings.yaml as every
gtog command builds them) to the scripted server speaking each provider's REST shape:
Gemini's `models/{model}:generateContent` / `:streamGenerateContent?alt=sse` /
`:batchEmbedContents` with `x-goog-api-key`, Azure's `openai/deployments/{name}/...?
api-version=` with `api-key`, and a local server that reports no usage.
"""

from __future__ import annotations

import itertools
import threading
from pathlib import Path

import pytest
import yaml

from gtog._project import load_graphrag_config
from gtog.llm._errors import ModelFatalError
from gtog.llm._models import chat_model_from_config, embedding_model_from_config, run_sync
from gtog.llm._retry import server_delay
from gtog.llm._usage import metering, token_prices
from tests.support.projects import PROVIDERS, TEST_API_KEY, write_project
from tests.support.scripted_server import Cut, Fail, Rule, ScriptedServer, count_tokens

CHAT, EMBED = "default_completion_model", "default_embedding_model"


@pytest.fixture
def server():
    with ScriptedServer() as s:
        yield s


def _config(tmp_path: Path, server: ScriptedServer, provider: str, retry: dict | None = None):
    root = write_project(tmp_path / provider, "lighthouse", server.base_url)
    data = yaml.safe_load((root / "settings.yaml").read_text())
    base = {"gemini": server.gemini_base, "azure": server.azure_base}.get(provider, server.base_url)
    for group, entry in PROVIDERS[provider].items():
        for model in data[group].values():
            model.update(
                entry, api_base=base, retry=retry or {"type": "immediate", "max_retries": 3}
            )
    (root / "settings.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return load_graphrag_config(root)


def _first_failing(n: int, reply: Fail | Cut) -> Rule:
    count = itertools.count()
    lock = threading.Lock()

    def answer(_request):
        with lock:
            i = next(count)
        return reply if i < n else "ok"

    return Rule("flaky", lambda r: True, answer)


def test_gemini_chat_and_embeddings_on_googles_wire(server: ScriptedServer, tmp_path) -> None:
    server.rules.append(Rule("echo", lambda r: True, lambda r: f"you said {r.last_user}"))
    config = _config(tmp_path, server, "gemini")
    chat = chat_model_from_config(config, CHAT)
    with metering() as meter:
        reply = run_sync(
            chat.chat(
                [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
                json_mode=True,
                temperature=0.0,
            )
        )
        vectors = run_sync(embedding_model_from_config(config, EMBED).embed(["one two", "three"]))
    assert reply.text == "you said hi" and reply.usage_reported
    [entry, embedded] = server.log
    assert entry.path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert entry.auth == "x-goog-api-key" and entry.wire == "gemini"
    assert entry.request["messages"][0] == {"role": "system", "content": "be brief"}
    assert entry.request["response_format"] == {"type": "json_object"}  # responseMimeType
    assert entry.temperature == 0.0
    # usageMetadata is the usage; the price is LiteLLM's for gemini/gemini-2.5-flash
    assert (reply.prompt_tokens, reply.output_tokens) == (entry.prompt_tokens, entry.output_tokens)
    prompt_price, output_price = token_prices(chat.config)
    assert prompt_price > 0 and output_price > 0
    assert reply.cost_usd == pytest.approx(
        entry.prompt_tokens * prompt_price + entry.output_tokens * output_price
    )
    assert embedded.path == "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    assert len(vectors) == 2 and len(vectors[0]) == server.embedding_dims
    # batchEmbedContents reports no usage: LiteLLM counts the tokens itself
    assert meter.tally.embedding_calls == 1 and meter.tally.embedding_tokens > 0


def test_gemini_streams_with_alt_sse(server: ScriptedServer, tmp_path) -> None:
    server.rules.append(Rule("words", lambda r: True, lambda r: "one two three"))
    chat = chat_model_from_config(_config(tmp_path, server, "gemini"), CHAT)

    async def stream() -> str:
        chunks = await chat.completion.completion_async(
            messages=[{"role": "user", "content": "count"}], stream=True
        )
        return "".join([c.choices[0].delta.content or "" async for c in chunks if c.choices])

    assert run_sync(stream()) == "one two three"
    [entry] = server.log
    assert entry.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"


@pytest.mark.parametrize(
    ("reply", "finish"),
    [(Cut("", "content_filter"), "content_filter"), (Cut("it was a", "length"), "length")],
    ids=["SAFETY", "MAX_TOKENS"],
)
def test_gemini_cut_replies_keep_their_finish_reason(
    server: ScriptedServer, tmp_path, reply: Cut, finish: str
) -> None:
    server.rules.append(Rule("cut", lambda r: True, lambda r: reply))
    chat = chat_model_from_config(_config(tmp_path, server, "gemini"), CHAT)
    assert run_sync(chat.chat("tell me")).finish_reason == finish


@pytest.mark.parametrize("provider", ["gemini", "azure", "local"])
def test_a_refused_key_is_one_fatal_line_naming_the_model(
    server: ScriptedServer, tmp_path, provider: str
) -> None:
    server.accepts = lambda key: key == "another key"
    config = _config(tmp_path, server, provider)
    for model in (
        chat_model_from_config(config, CHAT).chat("hi"),
        embedding_model_from_config(config, EMBED).embed(["hi"]),
    ):
        with pytest.raises(ModelFatalError) as raised:
            run_sync(model)
        message = str(raised.value)
        assert "\n" not in message and TEST_API_KEY not in message
        assert "the key was refused" in message
        assert ("400 API_KEY_INVALID" if provider == "gemini" else "answered 401") in message
    assert repr(CHAT) in str(raised.value) or repr(EMBED) in str(raised.value)
    assert [e.status for e in server.log] == [400, 400] if provider == "gemini" else [401, 401]


def test_gemini_permission_denied_is_fatal(server: ScriptedServer, tmp_path) -> None:
    denied = Fail(403, "Permission denied on resource project x.", reason="PERMISSION_DENIED")
    server.rules.append(Rule("403", lambda r: True, lambda r: denied))
    chat = chat_model_from_config(_config(tmp_path, server, "gemini"), CHAT)
    with pytest.raises(ModelFatalError, match="answered 403 PERMISSION_DENIED"):
        run_sync(chat.chat("hi"))
    assert len(server.log) == 1


@pytest.mark.parametrize("provider", ["gemini", "azure"])
def test_a_429_waits_the_delay_the_server_states(
    server: ScriptedServer, tmp_path, provider: str
) -> None:
    """Gemini says `retryDelay` in the body, Azure `Retry-After`; an immediate retry waits
    for it (the OpenAI SDK's own retries are off: graphrag_llm's are the ones counted)."""
    exhausted = Fail(429, "Resource has been exhausted (e.g. check quota).", retry_after=0.6)
    server.rules.append(_first_failing(1, exhausted))
    config = _config(tmp_path, server, provider)
    config.completion_models[CHAT].call_args["max_retries"] = 0
    chat = chat_model_from_config(config, CHAT)
    assert run_sync(chat.chat("hi")).text == "ok"
    first, second = server.log
    assert (first.status, second.status) == (429, 200)
    assert second.start - first.start >= 0.6


def test_a_fatal_error_is_not_retried_nor_waited_for(server: ScriptedServer, tmp_path) -> None:
    refused = Fail(400, "API key not valid.", reason="API_KEY_INVALID", retry_after=30)
    server.rules.append(_first_failing(5, refused))
    chat = chat_model_from_config(_config(tmp_path, server, "gemini"), CHAT)
    with pytest.raises(ModelFatalError):
        run_sync(chat.chat("hi"))
    assert len(server.log) == 1


def test_server_delay_reads_headers_and_googles_retry_info() -> None:
    import httpx

    class Exc(Exception):
        def __init__(self, text: str, headers: dict[str, str] | None = None) -> None:
            super().__init__(text)
            request = httpx.Request("POST", "http://x")
            self.response = httpx.Response(429, headers=headers or {}, request=request)

    assert server_delay(Exc("no", {"retry-after": "7"})) == 7.0
    assert server_delay(Exc("no", {"retry-after-ms": "250"})) == 0.25
    body = '{"error": {"details": [{"@type": "x.RetryInfo", "retryDelay": "13s"}]}}'
    assert server_delay(Exc(body)) == 13.0
    assert server_delay(Exc("nothing said")) is None


def test_azure_sends_its_deployment_version_and_key_header(
    server: ScriptedServer, tmp_path
) -> None:
    server.rules.append(Rule("echo", lambda r: True, lambda r: "fine"))
    config = _config(tmp_path, server, "azure")
    chat = chat_model_from_config(config, CHAT)
    reply = run_sync(chat.chat("hi"))
    run_sync(embedding_model_from_config(config, EMBED).embed(["hi"]))
    chat_entry, embedding_entry = server.log
    assert (
        chat_entry.path
        == "/openai/deployments/chat-deployment/chat/completions?api-version=2024-10-21"
    )
    assert embedding_entry.path.startswith("/openai/deployments/embedding-deployment/embeddings?")
    assert {chat_entry.auth, embedding_entry.auth} == {"api-key"}
    # priced as the model it deploys (azure/gpt-4o-mini), from the server's usage
    assert reply.usage_reported and reply.cost_usd is not None and reply.cost_usd > 0


def test_a_local_server_without_usage_is_counted_by_tokenizer_and_unpriced(
    server: ScriptedServer, tmp_path
) -> None:
    server.report_usage = False
    server.rules.append(Rule("echo", lambda r: True, lambda r: "the answer is forty two"))
    config = _config(tmp_path, server, "local")
    with metering() as meter:
        reply = run_sync(chat_model_from_config(config, CHAT).chat("hi there"))
        run_sync(embedding_model_from_config(config, EMBED).embed(["one two three"]))
    assert not reply.usage_reported  # estimated, not the server's
    assert reply.prompt_tokens > 0 and reply.output_tokens == count_tokens(reply.text)
    assert reply.cost_usd is None  # no price: unknown, never $0
    assert meter.tally.cost_usd is None and meter.tally.embedding_tokens > 0
    assert server.log[0].request.get("stream") in (None, False)
