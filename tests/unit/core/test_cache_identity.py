"""The model-call cache keys on the model entry's endpoint (two servers: two judges), and
never keeps nor replays a reply gtog rejects (issue 44 items 3 and 4).

Real HTTP to scripted servers, models built from a settings.yaml as `gtog eval` builds them.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from pathlib import Path

import pytest
import yaml

from gtog._errors import InputError
from gtog._project import load_graphrag_config
from gtog.eval.run._config import EvalConfig
from gtog.eval.run._judging import load_judge_panel
from gtog.eval.scoring import Judgement, load_prompts
from gtog.eval.scoring._judges import judge, judge_panel
from gtog.llm._cache import CallStore, call_key
from gtog.llm._gate import CALL_GATE, RunCalls, model_calls
from gtog.llm._models import chat_model_from_config
from tests.support.projects import SETTINGS, TEST_API_KEY
from tests.support.scripted_server import Cut, Rule, ScriptedServer

VALUES = {"question": "Who keeps the lighthouse?", "ground_truth": "Maren", "predicted": "Maren"}
JUDGE = "judge if the prediction is correct"


def _settings(folder: Path, api_base: str, **entries: dict) -> Path:
    """A settings.yaml whose models are at `api_base`, with more completion model entries."""
    folder.mkdir(parents=True, exist_ok=True)
    data = yaml.safe_load(SETTINGS.format(api_base=api_base, dims=8))
    data["completion_models"].update(entries)
    (folder / "settings.yaml").write_text(yaml.safe_dump(data))
    return folder


def _panel_config(*names: str) -> EvalConfig:
    return EvalConfig.model_validate(
        {"dataset": {"path": "qa.json"}, "indexes": {"k": "k"}, "judge": {"models": list(names)}}
    )


def _judge_rule(verdict: str) -> Rule:
    return Rule("judge", lambda r: JUDGE in r.prompt, lambda r: verdict)


def test_the_endpoint_is_part_of_the_key_and_the_api_key_is_not() -> None:
    from graphrag_llm.config import ModelConfig

    def key(**kw: object) -> str:
        base = {"model_provider": "openai", "model": "gpt-4o-mini", "api_key": "sk-1"}
        return call_key("chat", ModelConfig(**{**base, **kw}), {"messages": [{"content": "Q"}]})

    here = key(api_base="http://a:1/v1")
    assert key(api_base="http://a:1/v1/", api_key="sk-2") == here
    assert key(api_base="http://a:1/v1", call_args={"max_retries": 0}) == here
    others = {
        key(api_base="http://b:1/v1"),
        key(api_base="http://a:1/v2"),
        key(api_base="http://a:1/v1", api_version="2024-06-01"),
        key(api_base="http://a:1/v1", call_args={"api_base": "http://c:1/v1"}),
        key(),
    }
    assert len(others) == 5 and here not in others


def test_a_panel_of_one_model_name_at_two_servers_is_two_judges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reviewer's panel: judge_b is the same model name at another server. With the
    cache on, each server is asked (it used to be one judge: the first server's)."""
    monkeypatch.setenv("GTOG_TEST_API_KEY", TEST_API_KEY)
    right, wrong = '{"score": 1, "reason": "same"}', '{"score": 0, "reason": "differs"}'
    with (
        ScriptedServer([_judge_rule(right)]) as a,
        ScriptedServer([_judge_rule(wrong)], delay=0.2) as b,
    ):
        entry_b = {
            "model_provider": "openai",
            "model": "gpt-4o-mini",  # the same name as default_completion_model
            "api_base": b.base_url,
            "api_key": "${GTOG_TEST_API_KEY}",
        }
        folder = _settings(tmp_path / "p", a.base_url, judge_b=entry_b)
        names = ("default_completion_model", "judge_b")
        panel = load_judge_panel(
            _panel_config(*names), load_graphrag_config(folder), folder / "settings.yaml"
        )
        assert panel is not None
        store = CallStore(tmp_path / "cache")

        async def main() -> list[Judgement]:
            with model_calls(RunCalls(store)):
                return [await judge_panel("correctness", panel, load_prompts(), VALUES)]

        [first] = asyncio.run(main())
        [again] = asyncio.run(main())  # replayed: each judge from its own entries
        assert (len(a.chat_log()), len(b.chat_log())) == (1, 1)
    expected = dict(zip(names, (1, 0), strict=True))
    for verdict in (first, again):
        assert {n: v.score for n, v in verdict.panel.items()} == expected
    assert again.cached_calls == 2 and len(list(store.root.rglob("*.json"))) == 2


def test_a_panel_of_two_entries_that_are_one_model_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GTOG_TEST_API_KEY", TEST_API_KEY)
    twin = {
        "model_provider": "openai",
        "model": "gpt-4o-mini",
        "api_base": "http://127.0.0.1:9/",
        "api_key": "another-key",
    }
    folder = _settings(tmp_path / "p", "http://127.0.0.1:9", twin=twin)
    graphrag = load_graphrag_config(folder)
    with pytest.raises(InputError, match="'default_completion_model' and 'twin' are one model"):
        load_judge_panel(
            _panel_config("default_completion_model", "twin"), graphrag, folder / "settings.yaml"
        )
    hotter = {**twin, "call_args": {"temperature": 0.7}}  # other arguments: another judge
    folder = _settings(tmp_path / "q", "http://127.0.0.1:9", twin=hotter)
    panel = load_judge_panel(
        _panel_config("default_completion_model", "twin"),
        load_graphrag_config(folder),
        folder / "settings.yaml",
    )
    assert panel is not None and len(panel) == 2


def _then(first: list[object], after: str) -> Rule:
    """The judge replies `first` in turn, then `after` for ever."""
    count = itertools.count()
    lock = threading.Lock()

    def reply(_request: object) -> object:
        with lock:
            i = next(count)
        return first[i] if i < len(first) else after

    return Rule("judge", lambda r: JUDGE in r.prompt, reply)


@pytest.mark.parametrize(
    "bad",
    [
        "I think the answer is right, but I cannot give a number.",  # unreadable
        Cut('{"score": 1, "rea', "length"),  # truncated at max_tokens
        "",  # empty
    ],
    ids=["unreadable", "length", "empty"],
)
def test_a_rejected_judge_reply_is_never_replayed_and_a_retry_sends_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: object
) -> None:
    """The first judgement fails (both attempts rejected); judging again with the cache on
    (what --retry-errors does) sends the request again, and this time it succeeds."""
    monkeypatch.setenv("GTOG_TEST_API_KEY", TEST_API_KEY)
    with ScriptedServer([_then([bad, bad], '{"score": 1, "reason": "right"}')]) as server:
        folder = _settings(tmp_path / "p", server.base_url)
        model = chat_model_from_config(load_graphrag_config(folder), "default_completion_model")
        store = CallStore(tmp_path / "cache")

        async def once() -> Judgement:
            with model_calls(RunCalls(store)):
                return await judge("correctness", model, load_prompts(), VALUES)

        failed = asyncio.run(once())
        assert failed.score is None and failed.error and len(server.chat_log()) == 2
        assert not list(store.root.rglob("*.json"))  # neither rejected reply was kept
        retried = asyncio.run(once())
        assert len(server.chat_log()) == 3 and (retried.score, retried.cached_calls) == (1, 0)
        replayed = asyncio.run(once())  # the good reply is kept and replayed
        assert len(server.chat_log()) == 3 and (replayed.score, replayed.cached_calls) == (1, 1)


def test_a_rejected_reply_stored_by_an_older_gtog_is_a_miss(tmp_path: Path) -> None:
    def entry(content: str, finish: str = "stop") -> dict:
        message = {"role": "assistant", "content": content}
        return {"response": {"choices": [{"message": message, "finish_reason": finish}]}}

    store = CallStore(tmp_path)
    store.put("a1" * 32, entry('{"score": 1, "re', "length"))
    store.put("a2" * 32, entry("  "))
    store.put("a3" * 32, entry('{"score": 1}'))

    async def main() -> list[object]:
        with model_calls(RunCalls(store)):
            await CALL_GATE.set("a4" * 32, entry("cut", "content_filter"))
            return [await CALL_GATE.get(f"a{i}" * 32) for i in (1, 2, 3, 4)]

    cut, empty, kept, filtered = asyncio.run(main())
    assert (cut, empty, filtered) == (None, None, None)
    assert kept["response"]["gtog_cached"] is True
    assert "a4" * 32 not in store
