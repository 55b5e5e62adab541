"""A streaming agent as an HTTP method (issue 46 item 4): its server-sent events read by
`stream:` paths, its route kept; against a real SSE service on localhost."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from pydantic import ValidationError

from gtog.search._endpoints import HttpEndpoint
from gtog.search._http import EndpointError, HttpResult, build_http_engine
from tests.support.http_service import SearchService

TOKEN = "stream-token-1"
STREAM = {
    "answer": "content.delta",
    "done": "done",
    "route": "done.method_used",
    "error": "error.message",
}


@pytest.fixture(scope="module")
def service() -> Iterator[SearchService]:
    svc = SearchService(token=TOKEN).start()
    yield svc
    svc.stop()


def _ask(svc: SearchService, question: str, path: str = "agent/stream", **config) -> HttpResult:
    endpoint = HttpEndpoint.model_validate(
        {
            "url": f"{svc.base_url}/api/collections/{{index_key}}/search/{path}",
            "headers": {"Authorization": "Bearer ${T}"},
            **config,
        }
    )
    engine = build_http_engine("agent", endpoint, "lighthouse", None, environ={"T": TOKEN})
    return asyncio.run(engine.search(question))


def test_the_stream_s_deltas_are_the_answer_and_done_names_the_route(
    service: SearchService,
) -> None:
    result = _ask(
        service,
        "Who keeps the lighthouse on Varn Island?",
        stream=STREAM,
        context="done.sources",
    )
    assert result.response == "Maren Holt"
    assert result.route == "local"
    assert result.context_text == "source of lighthouse"
    other = _ask(service, "Which ship did the lighthouse keeper save?", stream=STREAM)
    assert other.route == "basic" and other.response == "I do not know"
    # without a route path the route is unknown, not guessed
    assert _ask(service, "Who is there?", stream={**STREAM, "route": None}).route is None


def test_a_plain_reply_s_route_path() -> None:
    svc = SearchService(token=TOKEN).start()
    try:
        result = _ask(svc, "Who keeps the lighthouse on Varn Island?", "agent", route="method_used")
        assert (result.response, result.route) == ("Maren Holt", "local")
        assert _ask(svc, "Who keeps the lighthouse?", "agent").route is None
    finally:
        svc.stop()


def test_an_error_event_is_the_pair_s_error(service: SearchService) -> None:
    with pytest.raises(EndpointError) as caught:
        _ask(service, "Who keeps the lamp? [error]", stream=STREAM)
    assert caught.value.error_kind == "agent error"
    assert "local search failed: index not loaded" in str(caught.value)


def test_a_stream_that_ends_without_done_is_an_error(service: SearchService) -> None:
    with pytest.raises(EndpointError) as caught:
        _ask(service, "Who keeps the lighthouse on Varn Island? [cut]", stream=STREAM)
    assert caught.value.error_kind == "stream cut"
    assert "without its 'done' event" in str(caught.value)
    assert "http_methods.agent.stream.done" in str(caught.value)


def test_stream_and_route_are_in_the_spec_only_when_set() -> None:
    plain = HttpEndpoint(url="http://x/a")
    assert set(plain.spec()) == {"url", "body", "answer", "context", "usage"}
    agent = HttpEndpoint(url="http://x/a", stream=STREAM, route="method_used")
    assert agent.spec()["stream"] == STREAM and agent.spec()["route"] == "method_used"
    with pytest.raises(ValidationError, match="extra"):
        HttpEndpoint(url="http://x/a", stream={"answer": "content.delta", "reply": "x"})
