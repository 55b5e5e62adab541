"""The model-call cache's keys and store, the call gate, and spending budgets (issue 33)."""

from __future__ import annotations

import asyncio
import json
import math
import multiprocessing
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from graphrag_llm.config import ModelConfig

from gtog.llm._budget import Budget, LimitReached, Limits, charge, pair_budget, run_budget
from gtog.llm._cache import CallStore, call_key, draw
from gtog.llm._gate import CALL_GATE, RunCalls, model_calls
from gtog.llm._repeat import answering_epoch


def _config(**kw: object) -> ModelConfig:
    base = {"model_provider": "openai", "model": "gpt-4o-mini", "api_key": "sk-1"}
    return ModelConfig(**{**base, **kw})


REQUEST = {"messages": [{"role": "user", "content": "Who keeps the lighthouse?"}]}


def test_the_key_is_what_reaches_the_provider() -> None:
    key = call_key("chat", _config(), REQUEST)
    same = [
        call_key("chat", _config(api_key="sk-2"), REQUEST),
        call_key("chat", _config(), {**REQUEST, "timeout": 30, "metrics": {}, "stream": False}),
        call_key("chat", _config(call_args={"max_retries": 0}), REQUEST),
    ]
    assert same == [key] * 3
    with answering_epoch(1), draw("trial", 1):  # the first repeat and draw add nothing
        assert call_key("chat", _config(), REQUEST) == key
    different = [
        call_key("embedding", _config(), REQUEST),
        call_key("chat", _config(model="gpt-4o"), REQUEST),
        call_key("chat", _config(api_base="http://elsewhere/v1"), REQUEST),  # another server
        call_key("chat", _config(call_args={"temperature": 0.5}), REQUEST),
        call_key("chat", _config(), {**REQUEST, "temperature": 0.2}),
        call_key("chat", _config(), {**REQUEST, "response_format": {"type": "json_object"}}),
        call_key("chat", _config(), {"messages": [{"role": "user", "content": "Who?"}]}),
    ]
    with answering_epoch(2):
        different.append(call_key("chat", _config(), REQUEST))
    with draw("trial", 2):
        different.append(call_key("chat", _config(), REQUEST))
        with draw("attempt", 2):
            different.append(call_key("chat", _config(), REQUEST))
    assert len({key, *different}) == len(different) + 1


def test_a_pydantic_response_format_is_keyed_by_its_schema() -> None:
    from pydantic import BaseModel

    class A(BaseModel):
        score: int

    class B(BaseModel):
        score: str

    B.__name__ = "A"
    keys = {call_key("chat", _config(), {**REQUEST, "response_format": m}) for m in (A, B)}
    assert len(keys) == 2


def test_the_store_keeps_whole_entries_and_misses_broken_ones(tmp_path: Path) -> None:
    store = CallStore(tmp_path / "cache")
    assert store.get("ab" * 32) is None
    store.put("ab" * 32, {"response": {"x": 1}})
    assert store.get("ab" * 32) == {"response": {"x": 1}}
    assert store.path("ab" * 32).parent.name == "ab"
    assert store.path("ab" * 32).stat().st_mode & 0o777 == 0o600  # (prompts: the owner's)
    store.path("cd" * 32).parent.mkdir(parents=True)
    store.path("cd" * 32).write_text('{"result": {"resp')  # torn by a power cut
    assert store.get("cd" * 32) is None
    assert not list(store.root.rglob("*.tmp"))


def test_an_entry_gives_back_what_was_stored(tmp_path: Path) -> None:
    """Numbers exactly (an embedding's), text beyond ASCII as written, an integer beyond 64
    bits and a value JSON has no type for (as its text); an entry with `NaN`, which Python's
    json writes and reads, is read too."""
    store = CallStore(tmp_path)
    embedding = [0.1 + i / 7 for i in range(384)] + [1e-300, -0.0, 123456789.123456789]
    value = {
        "response": {"data": [{"embedding": embedding}], "text": "Ünïcode — 東京 \u2028"},
        "when": Path("/a"),
        "1": 1,
    }
    for key, extra in (("ab" * 32, {}), ("ef" * 32, {"big": 2**70})):
        store.put(key, {**value, **extra})
        back = store.get(key)
        assert back == {**value, **extra, "when": "/a"}
        assert back["response"]["data"][0]["embedding"] == embedding  # (bit for bit)
        assert "東京".encode() in store.path(key).read_bytes()  # (UTF-8, not \u escapes)
    store.put("cd" * 32, {"response": {"data": [{"embedding": [0.5]}]}})
    raw = store.path("cd" * 32).read_text().replace("0.5", "NaN")
    store.path("cd" * 32).write_text(raw)  # (as `json.dumps` wrote a NaN before orjson)
    got = store.get("cd" * 32)
    assert got is not None and math.isnan(got["response"]["data"][0]["embedding"][0])


def _hammer(root: str, n: int, worker: int) -> int:
    """Write one key `n` times and read it between writes; count torn reads."""
    return _hammer_with(CallStore(Path(root)), n, worker)


def test_many_processes_write_one_key_and_no_reader_sees_half(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(4) as pool:
        torn = pool.starmap(_hammer, [(str(tmp_path), 60, w) for w in range(4)])
    assert torn == [0, 0, 0, 0]
    entry = json.loads(CallStore(tmp_path).path("ee" * 32).read_text())
    assert entry["result"]["response"]["i"] == 59


def test_threads_and_two_stores_of_one_process_write_one_key_side_by_side(
    tmp_path: Path,
) -> None:
    stores = [CallStore(tmp_path), CallStore(tmp_path)]  # (their temp files: one numbering)
    with ThreadPoolExecutor(4) as pool:
        torn = list(pool.map(lambda w: _hammer_with(stores[w % 2], 40, w), range(4)))
    assert torn == [0, 0, 0, 0]
    assert not list(tmp_path.rglob("*.tmp"))


def _hammer_with(store: CallStore, n: int, worker: int) -> int:
    """`_hammer` with a given store."""
    torn = 0
    for i in range(n):
        store.put("ee" * 32, {"response": {"text": "x" * 20_000, "by": worker, "i": i}})
        value = store.get("ee" * 32)
        if value is None or len(value["response"]["text"]) != 20_000:
            torn += 1
    return torn


def test_a_write_makes_its_folder_again_if_it_was_removed(tmp_path: Path) -> None:
    store = CallStore(tmp_path / "cache")
    store.put("ab" * 32, {"response": {"x": 1}})
    shutil.rmtree(tmp_path / "cache")  # (a user clearing the cache mid-run)
    store.put("ab" * 32, {"response": {"x": 2}})
    assert store.get("ab" * 32) == {"response": {"x": 2}}


def test_the_gate_replays_stored_replies_only_during_a_run(tmp_path: Path) -> None:
    async def main() -> None:
        key, value = "f0" * 32, {"response": {"content": "hi"}, "metrics": {}}
        await CALL_GATE.set(key, value)  # no run: nothing kept
        assert await CALL_GATE.get(key) is None
        with model_calls(RunCalls(CallStore(tmp_path))):
            assert await CALL_GATE.get(key) is None
            await CALL_GATE.set(key, value)
            replay = await CALL_GATE.get(key)
            assert replay["response"] == {"content": "hi", "gtog_cached": True}
        with model_calls(RunCalls(None)):  # --no-cache: nothing read
            assert await CALL_GATE.get(key) is None

    asyncio.run(main())


def test_a_reached_limit_refuses_new_requests_but_not_replays(tmp_path: Path) -> None:
    async def main() -> None:
        store = CallStore(tmp_path)
        store.put("aa" * 32, {"response": {"content": "kept"}})
        budget = Budget(Limits(usd=0.01))
        with model_calls(RunCalls(store), budget):
            charge(1, 100, 0.004, cached=False)
            assert await CALL_GATE.get("bb" * 32) is None  # under the limit: goes out
            charge(1, 100, 0.007, cached=False)
            assert (await CALL_GATE.get("aa" * 32))["response"]["content"] == "kept"
            with pair_budget(Limits()) as pair, pytest.raises(LimitReached) as refused:
                await CALL_GATE.get("bb" * 32)
            assert refused.value.scope == "run" and refused.value.what == "usd"
            assert pair.run_refused and budget.refused == "usd"

    asyncio.run(main())


def test_budgets_charge_the_pair_always_and_the_run_only_for_what_was_sent() -> None:
    run = Budget(Limits(calls=3))
    with run_budget(run), pair_budget(Limits(tokens=150)) as pair:
        charge(1, 100, 0.5, cached=True)
        charge(1, 40, None, cached=False)
        assert (pair.calls, pair.tokens, pair.usd, pair.usd_unknown) == (2, 140, 0.5, True)
        assert (run.calls, run.tokens, run.usd, run.usd_unknown) == (1, 40, 0.0, True)
        assert (run.cached_calls, run.saved_usd) == (1, 0.5)
        assert pair.reached() is None and pair.over() is None
        charge(1, 10, 0.0, cached=True)
        assert pair.reached() == "tokens" and pair.over() is None  # at the limit: no more
        charge(1, 1, 0.0, cached=False)
        assert pair.over() == "tokens" and run.reached() is None
    assert run.describe("calls") == "2 calls of 3"
    assert Budget(Limits(usd=0.5), usd=0.25).describe("usd") == "$0.2500 spent of $0.5000"


def test_after_its_first_lookup_a_miss_needs_no_disk_and_a_write_is_read_back_at_once(
    tmp_path: Path,
) -> None:
    store = CallStore(tmp_path)
    store.put("aa" * 32, {"response": {"content": "kept"}})
    fresh = CallStore(tmp_path)
    assert not fresh.absent("bb" * 32)  # (not listed yet: it cannot know)
    assert fresh.get("aa" * 32) == {"response": {"content": "kept"}}  # lists the folder
    assert fresh.absent("bb" * 32) and not fresh.absent("aa" * 32)
    failures: list[BaseException] = []
    fresh.put_later("bb" * 32, {"response": {"content": "later"}}, failures.append)
    assert not fresh.absent("bb" * 32)  # asked again before it is on disk: not sent twice
    assert fresh.get("bb" * 32) == {"response": {"content": "later"}}
    fresh.flush()
    assert CallStore(tmp_path).get("bb" * 32) == {"response": {"content": "later"}}
    assert not failures and not fresh.absent("bb" * 32)
    fresh.put_later("dd" * 32, {"response": {"content": "after"}})  # (a new writer thread)
    fresh.flush()
    assert CallStore(tmp_path).get("dd" * 32) == {"response": {"content": "after"}}


def test_a_write_that_fails_in_the_writer_thread_is_reported(tmp_path: Path) -> None:
    (tmp_path / "cc").write_text("a file where the entry's folder should be")
    store = CallStore(tmp_path)
    failures: list[BaseException] = []
    store.put_later("cc" * 32, {"response": {"content": "lost"}}, failures.append)
    store.flush()
    assert len(failures) == 1 and isinstance(failures[0], OSError)


def test_the_writes_left_are_done_before_the_process_exits(tmp_path: Path) -> None:
    code = (
        "import sys; from pathlib import Path; from gtog.llm._cache import CallStore\n"
        "s = CallStore(Path(sys.argv[1]))\n"
        "for i in range(200): s.put_later(f'{i:064x}', {'i': i})\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], timeout=60)
    assert done.returncode == 0
    store = CallStore(tmp_path)
    assert [store.get(f"{i:064x}") for i in range(200)] == [{"i": i} for i in range(200)]
