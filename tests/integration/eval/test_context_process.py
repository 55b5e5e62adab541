"""Search contexts built in the context process: the same contexts as in the thread, and the
thread again whenever the process cannot (not ready, a builder it cannot hold, its death)."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from gtog._project import load_project
from gtog.search import build_engine, run_search
from gtog.search._context_process import ContextProcess, wants_context_process
from gtog.search._offloop import context_threads, use_context_process
from tests.integration.eval.helpers import make_eval_root
from tests.support.projects import gtog, subprocess_env
from tests.support.scripted_server import ScriptedServer
from tests.support.world import EXAMPLE_QA

pytestmark = pytest.mark.integration

OPTIONS = {"response_type": "Single Paragraph"}


def _questions(key: str) -> list[str]:
    return [q["question"] for q in json.loads(EXAMPLE_QA.read_text()) if q["imdb_key"] == key]


async def _contexts(engine: Any, questions: list[str]) -> dict[str, tuple[str, dict[str, Any]]]:
    with context_threads():
        outcomes = await asyncio.gather(*(run_search(engine, q) for q in questions))
    return {
        q: (str(o.result.context_text), o.result.context_data)
        for q, o in zip(questions, outcomes, strict=True)
    }


def _same(a: dict[str, tuple[str, dict[str, Any]]], b: dict[str, tuple[str, Any]]) -> None:
    assert a.keys() == b.keys()
    for q in a:
        text_a, data_a = a[q]
        text_b, data_b = b[q]
        assert text_a == text_b, q
        assert data_a.keys() == data_b.keys(), q
        for name in data_a:
            assert data_a[name].equals(data_b[name]), (q, name)


def test_the_process_builds_the_contexts_the_thread_builds_but_for_what_it_cannot_hold(
    llm_server: ScriptedServer, example_indexes: dict[str, Path]
) -> None:
    questions = _questions("orchard")

    async def run() -> None:
        project = load_project(example_indexes["orchard"])
        counted = await build_engine("basic", project, OPTIONS)
        in_thread = {"basic": await _contexts(counted, questions)}
        in_thread["local"] = await _contexts(
            await build_engine("local", project, OPTIONS), questions
        )
        # (fresh engines: basic's builder, its text units counted, would build on the loop)
        engines = {m: await build_engine(m, project, OPTIONS) for m in ("local", "basic")}
        unheld = await build_engine("basic", project, OPTIONS)
        builder = unheld.engine.context_builder.inner  # type: ignore[attr-defined]
        builder.held = threading.Lock()  # (a client, a connection: nothing to pickle)
        process = ContextProcess()
        await process.attach()
        try:
            for engine in engines.values():
                assert await process.ship(engine.engine.context_builder.inner)  # type: ignore[attr-defined]
            assert not await process.ship(builder)
            assert await process.ship(counted.engine.context_builder.inner)  # type: ignore[attr-defined]
            with use_context_process(process):
                for method, engine in engines.items():
                    _same(in_thread[method], await _contexts(engine, questions))
                assert process.built == 2 * len(questions)  # every one came from there
                _same(in_thread["basic"], await _contexts(unheld, questions))
                assert process.built == 2 * len(questions)  # (those: in the thread)
                _same(in_thread["basic"], await _contexts(counted, questions))
                assert process.built == 2 * len(questions)  # (those: on the loop, quick)
        finally:
            await process.close()

    asyncio.run(run())


def test_a_builder_goes_to_the_process_once_worth_it_and_the_next_of_its_type_at_once(
    llm_server: ScriptedServer, example_indexes: dict[str, Path]
) -> None:
    """The 6 ms rule: a builder whose first four thread builds took 6 ms of CPU or more on
    average is sent at once (no question has to ask); the next builder of its type at its
    first question, before any build of its own; a cheap builder never."""
    question = _questions("orchard")[0]

    async def run() -> None:
        built = {}
        for key, method in (("lighthouse", "local"), ("orchard", "local"), ("orchard", "basic")):
            engine = await build_engine(method, load_project(example_indexes[key]), OPTIONS)
            builder = engine.engine.context_builder.inner  # type: ignore[attr-defined]
            params = engine.engine.context_builder_params  # type: ignore[attr-defined]
            response = await builder.text_embedder.embed_async(question)
            built[key, method] = (builder, response, params)
        first, second, cheap = built.values()

        async def build(entry: tuple[Any, Any, dict[str, Any]]) -> Any:
            return await process.build(entry[0], question, entry[1], entry[2])

        async def held(builder: Any) -> None:  # the child's answer to its loading
            assert await asyncio.wait_for(process._loaded[process._ids[id(builder)]], 60)

        process = ContextProcess()
        await process.attach()
        try:
            for builder, cpu in ((first[0], 0.008), (cheap[0], 0.003)):
                assert await build((builder, None, {})) is None  # (no thread builds seen yet)
                for _ in range(4):
                    process.observe(builder, cpu)
            await asyncio.gather(*process._sending)
            assert id(first[0]) in process._ids  # sent on the fourth, with no question asking
            await held(first[0])
            assert (await build(first)) is not None and process.built == 1

            assert await build(second) is None  # its type's first was worth it: sent now
            await held(second[0])
            assert (await build(second)) is not None and process.built == 2

            assert await build(cheap) is None and id(cheap[0]) not in process._ids
            for _ in range(4):  # its own first builds, cheap: in the thread from then on
                process.observe(second[0], 0.003)
            assert await build(second) is None and process.built == 2
        finally:
            await process.close()

    asyncio.run(run())


def test_when_the_process_dies_the_thread_builds_the_rest(
    llm_server: ScriptedServer, example_indexes: dict[str, Path]
) -> None:
    questions = _questions("orchard")

    async def run() -> tuple[dict[str, Any], dict[str, Any], int]:
        engine = await build_engine("local", load_project(example_indexes["orchard"]), OPTIONS)
        in_thread = await _contexts(engine, questions)
        process = ContextProcess()
        await process.attach()
        try:
            assert await process.ship(engine.engine.context_builder.inner)  # type: ignore[attr-defined]
            with use_context_process(process):
                await _contexts(engine, questions[:1])
                assert process._popen is not None
                process._popen.kill()  # (an out-of-memory kill, say)
                await asyncio.get_running_loop().run_in_executor(None, process._popen.wait)
                after = await _contexts(engine, questions)
        finally:
            await process.close()
        return in_thread, after, process.built

    in_thread, after, built = asyncio.run(run())
    assert built == 1
    _same(in_thread, after)


def test_closing_ends_the_child(example_indexes: dict[str, Path]) -> None:
    async def run() -> int:
        process = ContextProcess()
        await process.attach()
        assert process._popen is not None
        pid = process._popen.pid
        await process.close()
        return pid

    pid = asyncio.run(run())
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # (reaped: no zombie left)


def test_the_process_is_for_runs_with_many_contexts_at_high_concurrency(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GTOG_CONTEXT_PROCESS", raising=False)
    wanted = os.cpu_count() is not None and os.cpu_count() >= 2  # type: ignore[operator]
    assert wants_context_process(16, 200) is wanted
    assert not wants_context_process(4, 200)
    assert not wants_context_process(16, 20)
    monkeypatch.setenv("GTOG_CONTEXT_PROCESS", "0")
    assert not wants_context_process(16, 200)
    monkeypatch.setenv("GTOG_CONTEXT_PROCESS", "1")
    assert wants_context_process(1, 1)


def test_a_run_with_the_process_writes_what_a_run_without_it_writes(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = make_eval_root(tmp_path, example_indexes)
    contexts = {}
    for switch in ("1", "0"):
        env = {**subprocess_env(), "GTOG_CONTEXT_PROCESS": switch}
        out = root / f"out-{switch}"
        args = ("eval", "--root", str(root), "-o", str(out), "-q", "--no-cache", "-j", "8")
        result = gtog(*args, env=env)
        assert result.returncode == 0, result.stderr
        log = (out / "eval.log").read_text()
        assert ("context process: " in log) is (switch == "1")  # attached, and closed
        detailed = json.loads((out / "eval_results_detailed.json").read_text())
        contexts[switch] = {
            (q["question_id"], m): e["context_text"]
            for q in detailed["results"]
            for m, e in q["methods"].items()
        }
    assert len(contexts["1"]) == 2 * len(json.loads(EXAMPLE_QA.read_text()))
    assert all(contexts["1"].values())
    assert contexts["1"] == contexts["0"]
