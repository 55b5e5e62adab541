"""Transient provider errors ride through graphrag_llm's own retry; permanent ones do not.

Real HTTP to the scripted server, models built from a settings.yaml as every gtog command
builds them (`load_graphrag_config`, `chat_model_from_config`). The OpenAI SDK under LiteLLM
retries 429/5xx/dropped connections twice by itself; `call_args: {max_retries: 0}` turns
that off here, so that the calls counted are graphrag_llm's attempts.
"""

from __future__ import annotations

import itertools
import threading
from pathlib import Path

import pytest
import yaml

from gtog._project import load_graphrag_config
from gtog.llm._errors import PERMANENT_ERRORS, TRANSIENT_ERRORS, ModelFatalError
from gtog.llm._models import chat_model_from_config, embedding_model_from_config, run_sync
from tests.support.projects import write_project
from tests.support.scripted_server import DROP, Drop, Fail, Faults, Rule, ScriptedServer


def _project(tmp_path: Path, url: str, retry: dict) -> Path:
    root = write_project(tmp_path / "p", "lighthouse", url)
    data = yaml.safe_load((root / "settings.yaml").read_text())
    for group in ("completion_models", "embedding_models"):
        for model in data[group].values():
            model["retry"] = retry
            model["call_args"] = {"max_retries": 0}
    (root / "settings.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return root


def _failing_first(n: int, reply: Fail | Drop) -> Rule:
    """Fail the first `n` calls with `reply`, then answer "ok"."""
    count = itertools.count()
    lock = threading.Lock()

    def answer(_request):
        with lock:
            i = next(count)
        return reply if i < n else "ok"

    return Rule("flaky", lambda r: True, answer)


@pytest.fixture
def server():
    with ScriptedServer() as s:
        yield s


def test_the_skip_list_is_graphrags_default_without_the_transient_errors() -> None:
    from graphrag_llm.retry.exceptions_to_skip import _default_exceptions_to_skip

    assert set(PERMANENT_ERRORS) == set(_default_exceptions_to_skip) - set(TRANSIENT_ERRORS)
    assert {"ServiceUnavailableError", "APIConnectionError"} <= set(TRANSIENT_ERRORS)


@pytest.mark.parametrize(
    "reply",
    [Fail(429), Fail(500), Fail(502), Fail(503), Fail(504), Drop()],
    ids=["429", "500", "502", "503", "504", "dropped"],
)
def test_a_transient_error_is_retried(server: ScriptedServer, tmp_path: Path, reply) -> None:
    server.rules.append(_failing_first(2, reply))
    config = load_graphrag_config(
        _project(tmp_path, server.base_url, {"type": "immediate", "max_retries": 3})
    )
    model = chat_model_from_config(config, "default_completion_model")
    assert run_sync(model.chat("hello")).text == "ok"
    assert len(server.chat_log()) == 3  # two failures, then the answer


def test_exponential_backoff_retries_a_503_too(server: ScriptedServer, tmp_path: Path) -> None:
    """graphrag init's `retry: exponential_backoff` (delays kept short here)."""
    server.rules.append(_failing_first(1, Fail(503, "overloaded")))
    retry = {"type": "exponential_backoff", "base_delay": 1.01, "jitter": False}
    config = load_graphrag_config(_project(tmp_path, server.base_url, retry))
    model = chat_model_from_config(config, "default_completion_model")
    assert run_sync(model.chat("hello")).text == "ok"
    assert [e.status for e in server.chat_log()] == [503, 200]


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_a_permanent_error_fails_at_the_first_attempt(
    server: ScriptedServer, tmp_path: Path, status: int
) -> None:
    server.rules.append(_failing_first(5, Fail(status, "no")))
    config = load_graphrag_config(
        _project(tmp_path, server.base_url, {"type": "immediate", "max_retries": 3})
    )
    model = chat_model_from_config(config, "default_completion_model")
    with pytest.raises(Exception) as raised:
        run_sync(model.chat("hello"))
    assert len(server.chat_log()) == 1
    # the key, the permission and the model stop the run; a bad request is the pair's error
    assert isinstance(raised.value, ModelFatalError) == (status != 400)


def test_settings_that_name_their_skip_list_are_kept(
    server: ScriptedServer, tmp_path: Path
) -> None:
    server.rules.append(_failing_first(5, Fail(503)))
    retry = {
        "type": "immediate",
        "max_retries": 3,
        "exceptions_to_skip": ["ServiceUnavailableError"],
    }
    config = load_graphrag_config(_project(tmp_path, server.base_url, retry))
    model = chat_model_from_config(config, "default_completion_model")
    with pytest.raises(Exception, match="ServiceUnavailable"):
        run_sync(model.chat("hello"))
    assert len(server.chat_log()) == 1
    extra = config.completion_models["default_completion_model"].retry.model_extra
    assert extra == {"exceptions_to_skip": ["ServiceUnavailableError"]}


def test_no_retry_block_stays_without_retries(server: ScriptedServer, tmp_path: Path) -> None:
    server.rules.append(_failing_first(5, Fail(503)))
    root = _project(tmp_path, server.base_url, {})
    data = yaml.safe_load((root / "settings.yaml").read_text())
    for model in data["completion_models"].values():
        del model["retry"]
    (root / "settings.yaml").write_text(yaml.safe_dump(data))
    model = chat_model_from_config(load_graphrag_config(root), "default_completion_model")
    with pytest.raises(Exception, match="ServiceUnavailable"):
        run_sync(model.chat("hello"))
    assert len(server.chat_log()) == 1


def test_embeddings_ride_through_dropped_connections_and_503s(
    server: ScriptedServer, tmp_path: Path
) -> None:
    server.faults = Faults(rate=0.5, statuses=(503, DROP), seed=3, kinds=("embeddings",))
    config = load_graphrag_config(
        _project(tmp_path, server.base_url, {"type": "immediate", "max_retries": 10})
    )
    model = embedding_model_from_config(config, "default_embedding_model")
    vectors = [run_sync(model.embed([f"text {i}"])) for i in range(12)]
    assert all(len(v[0]) == server.embedding_dims for v in vectors)
    assert {s for _, s in server.injected} == {503, DROP}
