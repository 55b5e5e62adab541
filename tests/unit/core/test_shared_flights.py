"""Identical requests in flight share one reply (issue 33: a call is paid once).

Real HTTP to the scripted server (replies after a delay, so that the requests overlap),
models built from a settings.yaml as every gtog command builds them.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from pathlib import Path

import pytest

from gtog._project import load_graphrag_config
from gtog.llm._cache import CallStore, draw
from gtog.llm._gate import RunCalls, model_calls
from gtog.llm._models import chat_model_from_config, embedding_model_from_config
from gtog.llm._usage import UsageMeter, metering
from tests.support.projects import write_project
from tests.support.scripted_server import Fail, Rule, ScriptedServer

ASK = [{"role": "user", "content": "Who keeps the lighthouse?"}]


def _models(tmp_path: Path, url: str):
    config = load_graphrag_config(write_project(tmp_path / "p", "lighthouse", url))
    return (
        chat_model_from_config(config, "default_completion_model"),
        embedding_model_from_config(config, "default_embedding_model"),
    )


def _failing_first(n: int) -> Rule:
    count = itertools.count()
    lock = threading.Lock()

    def answer(_request):
        with lock:
            i = next(count)
        return Fail(400, "scripted bad request") if i < n else "the keeper"

    return Rule("flaky", lambda r: True, answer)


@pytest.mark.parametrize("cache", [True, False])
def test_identical_requests_in_flight_are_sent_once_with_the_cache(tmp_path: Path, cache) -> None:
    with ScriptedServer([Rule("a", lambda r: True, lambda r: "the keeper")], delay=0.3) as server:
        chat, embed = _models(tmp_path, server.base_url)
        meters: list[UsageMeter] = []

        async def main() -> list:
            store = CallStore(tmp_path / "c") if cache else None
            with model_calls(RunCalls(store)), metering() as meter:
                meters.append(meter)
                return await asyncio.gather(
                    *(chat.chat(ASK) for _ in range(4)),
                    chat.chat([{"role": "user", "content": "Another question?"}]),
                    *(embed.embed(["the keeper"]) for _ in range(3)),
                )

        replies = asyncio.run(main())
    [meter] = meters
    assert [r.text for r in replies[:5]] == ["the keeper"] * 5
    assert replies[5] == replies[6] == replies[7]
    chats = [e for e in server.log if e.kind == "chat"]
    embeddings = [e for e in server.log if e.kind == "embeddings"]
    if cache:
        assert (len(chats), len(embeddings)) == (2, 1)
        assert sorted(r.cached for r in replies[:5]) == [False, False, True, True, True]
        assert meter.tally.cached_calls == 3 + 2  # three chats, two embeddings: not paid
    else:  # --no-cache: every request is sent, as asked
        assert (len(chats), len(embeddings)) == (5, 3)
        assert meter.tally.cached_calls == 0


def test_a_failure_is_never_shared_the_waiting_requests_are_sent(tmp_path: Path) -> None:
    with ScriptedServer([_failing_first(1)], delay=0.3) as server:
        chat, _ = _models(tmp_path, server.base_url)

        async def main() -> list:
            with model_calls(RunCalls(CallStore(tmp_path / "c"))):
                return await asyncio.gather(
                    *(chat.chat(ASK) for _ in range(3)), return_exceptions=True
                )

        results = asyncio.run(main())
    errors = [r for r in results if isinstance(r, BaseException)]
    texts = [r.text for r in results if not isinstance(r, BaseException)]
    assert len(errors) == 1 and "scripted bad request" in str(errors[0])
    assert texts == ["the keeper", "the keeper"]
    # the first failed; of the two waiting, one was sent and the other shared its reply
    assert [e.status for e in server.log] == [400, 200]


def test_a_second_draw_is_a_new_sample_not_a_share(tmp_path: Path) -> None:
    with ScriptedServer([Rule("a", lambda r: True, lambda r: "the keeper")], delay=0.3) as server:
        chat, _ = _models(tmp_path, server.base_url)

        async def second() -> object:
            with draw("trial", 2):
                return await chat.chat(ASK)

        async def main() -> list:
            with model_calls(RunCalls(CallStore(tmp_path / "c"))):
                return await asyncio.gather(chat.chat(ASK), second())

        asyncio.run(main())
    assert len(server.log) == 2


def test_a_structured_reply_is_shared_with_its_parsed_model(tmp_path: Path) -> None:
    from pydantic import BaseModel

    class Answer(BaseModel):
        answer: str

    reply = '{"answer": "the keeper"}'
    with ScriptedServer([Rule("a", lambda r: True, lambda r: reply)], delay=0.3) as server:
        chat, _ = _models(tmp_path, server.base_url)

        async def main() -> list:
            with model_calls(RunCalls(CallStore(tmp_path / "c"))):
                return await asyncio.gather(
                    *(chat.complete(ASK, response_format=Answer) for _ in range(2))
                )

        results = asyncio.run(main())
    assert len(server.log) == 1
    parsed = [response.formatted_response for response, _ in results]
    assert parsed == [Answer(answer="the keeper")] * 2
    assert sorted(bool(getattr(r, "gtog_cached", False)) for r, _ in results) == [False, True]
