"""An HTTP method's client against a real local service (tests/support/http_service.py):
secrets never in an error, redirects never carrying the headers to another origin, header
placeholders, the reply's charset, the size cap, Retry-After and the retry log."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gtog._redact import Redactor
from gtog.eval.results._abstention import AbstentionRules
from gtog.search._endpoints import HttpEndpoint
from gtog.search._http import build_http_engine
from gtog.search._outcome import SearchFailed, SearchOutcome, run_search
from tests.support.http_service import SearchService
from tests.support.world import EXAMPLE_QA

TOKEN = "svc-token-SECRET-7f3a9c21e5"
KEY = "lightrag-key-9b8c7d6e5f"
QUESTION = "Who keeps the lighthouse on Varn Island?"


@pytest.fixture(scope="module")
def service() -> Iterator[SearchService]:
    svc = SearchService(token=TOKEN).start()
    yield svc
    svc.stop()


@pytest.fixture(scope="module")
def other() -> Iterator[SearchService]:
    """Another origin (another port)."""
    svc = SearchService(token=TOKEN).start()
    yield svc
    svc.stop()


def endpoint(url: str, **kw: Any) -> HttpEndpoint:
    headers = {"Authorization": "Bearer ${SVC_TOKEN}", **kw.pop("headers", {})}
    retry = kw.pop("retry", {"type": "immediate", "max_retries": 2})
    return HttpEndpoint(url=url, headers=headers, retry=retry, timeout=10, **kw)


def ask(ep: HttpEndpoint, question: str = QUESTION, key: str = "lighthouse") -> SearchOutcome:
    env = {"SVC_TOKEN": TOKEN, "LR_KEY": KEY}
    engine = build_http_engine("svc", ep, key, None, environ=env)
    return asyncio.run(run_search(engine, question, question_id="lh-01"))


def failure(ep: HttpEndpoint, question: str = QUESTION) -> SearchFailed:
    with pytest.raises(SearchFailed) as caught:
        ask(ep, question)
    return caught.value


def asked(svc: SearchService, question: str) -> list[float]:
    """When the service received `question` (search endpoints only)."""
    return [
        r.at for r in svc.requests if isinstance(r.body, dict) and r.body.get("query") == question
    ]


def search_url(svc: SearchService, name: str) -> str:
    return f"{svc.base_url}/api/collections/{{index_key}}/search/{name}"


# item 7: secrets and redirects


def test_an_echoed_token_and_api_key_are_masked_in_the_error(service: SearchService) -> None:
    ep = endpoint(search_url(service, "echo"), headers={"X-API-Key": "${LR_KEY}"})
    message = str(failure(ep))
    assert "HTTP 500" in message and "invalid credentials" in message
    assert TOKEN not in message and KEY not in message
    assert message.count("[REDACTED]") == 2


def test_a_literal_secret_header_is_masked_too(service: SearchService) -> None:
    literal = "literal-api-key-0a1b2c3d4e"
    ep = HttpEndpoint(
        url=search_url(service, "echo"),
        headers={"Authorization": f"Bearer {TOKEN}", "X-API-Key": literal},
    )
    assert Redactor(ep.secret_values({}))(f"x {TOKEN} y {literal}") == "x [REDACTED] y [REDACTED]"
    assert literal not in str(failure(ep))


def test_a_cross_origin_redirect_is_refused_naming_both_origins(
    service: SearchService, other: SearchService
) -> None:
    for code in (307, 308, 302):
        target = f"{search_url(other, 'agent').replace('{index_key}', 'lighthouse')}"
        ep = endpoint(
            f"{service.base_url}/redirect/{code}?to={target}",
            headers={"X-API-Key": "${LR_KEY}", "X-Custom": "custom-value-1234"},
        )
        exc = failure(ep)
        message = str(exc)
        assert f"redirects from {service.base_url} to another origin, {other.base_url}" in message
        assert getattr(exc.__cause__, "error_kind", None) == "cross-origin redirect"
        assert "\n" not in message
    assert other.requests == []  # nothing was sent to the other origin, no header


def test_a_same_origin_307_is_followed_with_the_post(service: SearchService) -> None:
    target = search_url(service, "agent").replace("{index_key}", "lighthouse")
    outcome = ask(endpoint(f"{service.base_url}/redirect/307?to={target}"))
    assert outcome.result.response == "Maren Holt"


@pytest.mark.parametrize("code", [302, 303, 301])
def test_a_redirect_turning_the_post_into_a_get_says_so_and_where(
    service: SearchService, code: int
) -> None:
    target = search_url(service, "agent").replace("{index_key}", "lighthouse")
    exc = failure(endpoint(f"{service.base_url}/redirect/{code}?to={target}"))
    message = str(exc)
    # (not the GET's 405 it would have met; the port may hold the digits "405")
    assert f"HTTP {code}" in message and "HTTP 405" not in message
    assert f"redirects the POST from {service.base_url}/redirect/{code}" in message
    assert f"to {target}, which would turn it into a GET" in message
    assert f"set http_methods.svc.url to {target}" in message


# item 9: headers, charset, size cap, Retry-After, the retry log


def test_index_key_and_question_id_are_filled_in_the_headers(service: SearchService) -> None:
    ep = HttpEndpoint(
        url=f"{service.base_url}/query",
        body={"query": "{question}", "mode": "mix"},
        headers={"X-API-Key": "${SVC_TOKEN}", "LIGHTRAG-WORKSPACE": "{index_key}"},
        answer="response",
    )
    assert ask(ep).result.response == "Maren Holt"
    seen = [r for r in service.requests if r.path == "/query"][-1]
    assert seen.workspace == "lighthouse" and seen.authorized


def test_a_question_is_refused_in_a_header() -> None:
    with pytest.raises(ValueError, match=r"\{question\} cannot be sent in a header"):
        HttpEndpoint(url="http://x/y", headers={"X-Q": "{question}"})


def test_the_reply_charset_is_honoured(service: SearchService) -> None:
    assert ask(endpoint(search_url(service, "latin1"))).result.response == "Café Noël"


@pytest.mark.parametrize("chunked", [False, True])
def test_a_reply_over_the_size_cap_is_the_pairs_error(
    service: SearchService, chunked: bool
) -> None:
    url = search_url(service, "huge") + "?bytes=300000" + ("&chunked=1" if chunked else "")
    exc = failure(endpoint(url, max_reply_bytes=100_000))
    assert getattr(exc.__cause__, "error_kind", None) == "reply too large"
    assert "longer than 100000 bytes" in str(exc) and "max_reply_bytes" in str(exc)
    assert len(str(exc)) < 300
    under = ask(endpoint(search_url(service, "huge") + "?bytes=90000", max_reply_bytes=100_000))
    assert len(under.result.response) == 90000 - 16


def test_the_default_size_cap_is_10_mb() -> None:
    assert HttpEndpoint(url="http://x/y").max_reply_bytes == 10_000_000


@pytest.mark.parametrize("as_date", [False, True])
def test_retry_after_is_waited_out_and_logged(
    service: SearchService, caplog: pytest.LogCaptureFixture, as_date: bool
) -> None:
    question = f"Retry-After question {as_date}"
    # as a date: whole seconds, so now + 2 s is at least 1 s away
    url = search_url(service, "limited") + ("?after=2&date=1" if as_date else "?after=1")
    with caplog.at_level(logging.INFO, logger="gtog"):
        outcome = ask(endpoint(url), question)
    assert outcome.result.response == "I do not know"
    times = asked(service, question)
    assert len(times) == 2
    # immediate retry: no backoff of its own, so the gap is Retry-After's (at least 1 s; a
    # few ms go to the wait's own bookkeeping)
    assert times[1] - times[0] >= 0.9
    lines = [r for r in caplog.records if "retry 1 after http 429" in r.getMessage()]
    assert len(lines) == 1, caplog.text
    assert lines[0].name == "gtog.search.http" and lines[0].levelname == "WARNING"
    assert "http_methods.svc on lighthouse, question lh-01" in lines[0].getMessage()
    assert "Retry-After asks" in lines[0].getMessage()


def test_retry_after_is_bounded(service: SearchService) -> None:
    question = "Retry-After question, bounded"
    url = search_url(service, "limited") + "?after=3600"
    assert ask(endpoint(url, max_retry_after=0.2), question).result.response == "I do not know"
    times = asked(service, question)
    assert len(times) == 2 and 0.2 <= times[1] - times[0] < 600


def test_retries_without_retry_after_are_logged(
    service: SearchService, caplog: pytest.LogCaptureFixture
) -> None:
    """(eval.log gets every record: tests/integration/eval/test_http_methods.py reads it.)"""
    with caplog.at_level(logging.INFO, logger="gtog"):
        outcome = ask(endpoint(search_url(service, "flaky")), "A flaky question")
    assert outcome.result.response == "I do not know"
    text = caplog.text
    assert text.count("after http 503: HTTP 503 Service Unavailable") == 2, text
    assert "retry 1 " in text and "retry 2 " in text and "Retry-After" not in text


def lightrag_block() -> dict[str, Any]:
    """The worked LightRAG configuration of docs/other-systems.md, as written."""
    text = (Path(__file__).parents[3] / "docs" / "other-systems.md").read_text()
    section = text.split("### A worked example: LightRAG", 1)[1]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    return yaml.safe_load(block)


def test_the_documented_lightrag_configuration_works(service: SearchService) -> None:
    config = lightrag_block()
    assert config["methods"][0] == "lightrag"
    raw = config["http_methods"]["lightrag"]
    raw["url"] = raw["url"].replace("http://localhost:9621", service.base_url)
    ep = HttpEndpoint.model_validate(raw)
    env = {"LIGHTRAG_API_KEY": TOKEN}
    qa = {q["id"]: q for q in json.loads(EXAMPLE_QA.read_text())}
    for qid in ("lh-01", "or-01"):
        q = qa[qid]
        engine = build_http_engine("lightrag", ep, q["imdb_key"], None, environ=env)
        outcome = asyncio.run(run_search(engine, q["question"], question_id=qid))
        assert outcome.result.response == q["answer"]
        # the references' chunks are the judges' context
        assert outcome.result.context_text == (
            f"chunk of {q['imdb_key']}: {q['answer']}\n\nanother chunk"
        )
        seen = service.requests[-1]
        assert seen.path == "/query" and seen.authorized and seen.workspace == q["imdb_key"]
        assert seen.body == {
            "query": q["question"],
            "mode": "mix",
            "include_references": True,
            "include_chunk_content": True,
        }
    # a question the workspace has no context for: LightRAG's canned reply, an abstention
    engine = build_http_engine("lightrag", ep, "orchard", None, environ=env)
    outcome = asyncio.run(run_search(engine, qa["lh-01"]["question"]))
    assert outcome.result.response.endswith("[no-context]")
    assert AbstentionRules().abstains(outcome.result.response)
    # a wrong key: the pair's error, the key masked
    engine = build_http_engine("lightrag", ep, "lighthouse", None, {"LIGHTRAG_API_KEY": KEY})
    with pytest.raises(SearchFailed, match="HTTP 403"):
        asyncio.run(run_search(engine, qa["lh-01"]["question"]))
