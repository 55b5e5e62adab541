"""A run's calls in flight: at most its concurrency out at once (issue 45).

Real HTTP to the scripted server (replies after a delay, so that calls overlap), models built
from a settings.yaml as every gtog command builds them; the server's log says how many
requests it was serving at once.
"""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

import pytest
from graphrag.query.structured_search.base import SearchResult

from gtog._project import load_graphrag_config
from gtog.llm._cache import CallStore
from gtog.llm._gate import RunCalls, model_calls
from gtog.llm._models import chat_model_from_config, embedding_model_from_config, gated_completion
from gtog.llm._slots import call_slot, call_slots, questions_at_once
from gtog.search import run_search
from gtog.search._outcome import SearchFailed
from tests.support.projects import write_project
from tests.support.scripted_server import Rule, ScriptedServer

pytestmark = pytest.mark.integration


def _config(tmp_path: Path, url: str):
    return load_graphrag_config(write_project(tmp_path / "p", "lighthouse", url))


def peak(server: ScriptedServer) -> int:
    """The most requests the server was serving at one time."""
    edges = sorted(
        [(e.start, 1) for e in server.log] + [(e.end, -1) for e in server.log],
        key=lambda edge: (edge[0], edge[1]),  # (an end before a start at the same time)
    )
    most = now = 0
    for _, step in edges:
        now += step
        most = max(most, now)
    return most


def test_a_run_keeps_a_quarter_more_questions_than_calls() -> None:
    assert [questions_at_once(n) for n in (1, 3, 4, 8, 16, 20)] == [2, 4, 5, 10, 20, 25]


@pytest.mark.parametrize("cache", [True, False])
def test_no_more_calls_are_out_than_the_slots(tmp_path: Path, cache: bool) -> None:
    rules = [Rule("a", lambda r: True, lambda r: "the keeper")]
    with ScriptedServer(rules, delay=0.2, embedding_delay=0.1) as server:
        config = _config(tmp_path, server.base_url)
        chat = chat_model_from_config(config, "default_completion_model")
        embed = embedding_model_from_config(config, "default_embedding_model")

        async def main() -> list:
            store = CallStore(tmp_path / "c") if cache else None
            with model_calls(RunCalls(store)), call_slots(2):
                return await asyncio.gather(
                    *(chat.chat([{"role": "user", "content": f"Question {i}?"}]) for i in range(5)),
                    *(embed.embed([f"text {i}"]) for i in range(3)),
                )

        replies = asyncio.run(main())
        assert [r.text for r in replies[:5]] == ["the keeper"] * 5
        assert len(server.log) == 8
        assert peak(server) == 2

        server.clear_log()  # outside a run: no slots, every call at once
        asyncio.run(chat.chat([{"role": "user", "content": "Warm?"}]))
        server.clear_log()

        async def free() -> None:
            await asyncio.gather(
                *(chat.chat([{"role": "user", "content": f"Again {i}?"}]) for i in range(4))
            )

        asyncio.run(free())
        assert peak(server) == 4


def test_a_streamed_reply_keeps_its_slot_until_read_or_dropped(tmp_path: Path) -> None:
    rules = [Rule("a", lambda r: True, lambda r: "the keeper of the light")]
    with ScriptedServer(rules, delay=0.2) as server:
        model = gated_completion(
            _config(tmp_path, server.base_url).get_completion_model_config(
                "default_completion_model"
            )
        )
        ask = [{"role": "user", "content": "Who?"}]
        order: list[str] = []

        async def main() -> None:
            with call_slots(1):
                stream = await model.completion_async(messages=ask, stream=True)
                first = await anext(aiter(stream))  # one chunk read: the slot is still held
                assert first is not None
                waiting = asyncio.ensure_future(
                    model.completion_async(messages=[{"role": "user", "content": "Next?"}])
                )
                await asyncio.sleep(0.4)
                order.append(f"second sent: {server.arrived.get('chat', 0) > 1}")
                async for _ in stream:  # read to its end: the slot is given back
                    pass
                await waiting
                order.append(f"second sent: {server.arrived.get('chat', 0) > 1}")

                stream = await model.completion_async(messages=ask, stream=True)
                await anext(aiter(stream))
                del stream  # dropped half read: given back all the same
                gc.collect()
                async with asyncio.timeout(5):
                    async with call_slot():
                        order.append("a slot again")

        asyncio.run(main())
    assert order == ["second sent: False", "second sent: True", "a slot again"]


class _SlotEngine:
    """A search engine whose one call is a call slot held for `own` seconds."""

    def __init__(self, own: float) -> None:
        self.own = own

    async def search(self, query: str) -> SearchResult:
        async with call_slot():
            await asyncio.sleep(self.own)
        return SearchResult(
            response="an answer",
            context_data={},
            context_text="",
            completion_time=0,
            llm_calls=0,
            prompt_tokens=0,
            output_tokens=0,
        )


def test_time_held_back_by_the_slots_is_not_the_searchs_nor_its_timeouts() -> None:
    async def main() -> tuple:
        with call_slots(1):
            other = asyncio.ensure_future(_SlotEngine(1.0).search("first"))
            await asyncio.sleep(0)  # (it takes the slot)
            outcome = await run_search(_SlotEngine(0.0), "second", timeout=0.5)
            await other
            other = asyncio.ensure_future(_SlotEngine(1.0).search("first"))
            await asyncio.sleep(0)
            with pytest.raises(SearchFailed, match="timed out") as slow:
                await run_search(_SlotEngine(1.0), "slow on its own", timeout=0.5)
            await other
        return outcome, slow.value

    outcome, slow = asyncio.run(main())
    # it waited about the other's second, which its own half second of timeout did not count
    assert outcome.held >= 0.5
    assert outcome.seconds < outcome.held
    # a search slow on its own still times out, after its own half second, not before
    assert slow.held >= 0.5
    assert slow.seconds >= 0.5


class _OwnTimeout:
    """An engine that raises a TimeoutError of its own (a client's read timeout)."""

    async def search(self, query: str) -> SearchResult:
        raise TimeoutError("read timed out")


@pytest.mark.parametrize("timeout", [None, 30.0])
def test_an_engines_own_timeout_is_its_error_not_the_searchs_timeout(timeout) -> None:
    with pytest.raises(SearchFailed) as failed:
        asyncio.run(run_search(_OwnTimeout(), "q", timeout=timeout))
    assert "read timed out" in str(failed.value)
    assert "timed out after" not in str(failed.value)


def test_a_reply_replayed_from_the_cache_waits_for_no_slot(tmp_path: Path) -> None:
    rules = [Rule("a", lambda r: True, lambda r: "the keeper")]
    with ScriptedServer(rules, delay=0.2) as server:
        chat = chat_model_from_config(
            _config(tmp_path, server.base_url), "default_completion_model"
        )
        ask = [{"role": "user", "content": "Who keeps the lighthouse?"}]

        async def main() -> list[str]:
            with model_calls(RunCalls(CallStore(tmp_path / "c"))), call_slots(1):
                first = await chat.chat(ask)  # sent, and stored
                taken = asyncio.Event()

                async def hold() -> None:
                    async with call_slot():
                        taken.set()
                        await asyncio.sleep(30)

                holder = asyncio.ensure_future(hold())
                await taken.wait()
                async with asyncio.timeout(10):  # the only slot is held: replayed all the same
                    again = await chat.chat(ask)
                holder.cancel()
                return [first.text, again.text, str(again.cached)]

        assert asyncio.run(main()) == ["the keeper", "the keeper", "True"]
        assert server.arrived.get("chat") == 1
