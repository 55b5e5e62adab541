"""Shared fixtures: one scripted LLM server and two real graphrag indexes per session."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ["NO_PROXY"] = "127.0.0.1,localhost"

from tests.support.projects import TEST_API_KEY, index_project, retarget, write_project
from tests.support.scripted_server import ScriptedServer
from tests.support.world import default_rules

os.environ.setdefault("GTOG_TEST_API_KEY", TEST_API_KEY)

EXAMPLE_KEYS = ("lighthouse", "orchard")


@pytest.fixture(scope="session")
def _session_server() -> Iterator[ScriptedServer]:
    server = ScriptedServer(default_rules()).start()
    yield server
    server.stop()


@pytest.fixture
def llm_server(_session_server: ScriptedServer) -> Iterator[ScriptedServer]:
    """The session's scripted server with an empty log; rules a test adds are undone after it."""
    saved = list(_session_server.rules)
    dims = _session_server.embedding_dims
    _session_server.clear_log()
    _session_server.delay = 0.0
    _session_server.embedding_delay = 0.0
    _session_server.faults = None
    _session_server.injected.clear()
    yield _session_server
    _session_server.rules[:] = saved
    _session_server.accepts = None
    _session_server.report_usage = True
    _session_server.delay = 0.0
    _session_server.embedding_delay = 0.0
    _session_server.faults = None
    _session_server.embedding_dims = dims


@pytest.fixture(scope="session")
def example_indexes(
    _session_server: ScriptedServer, tmp_path_factory: pytest.TempPathFactory, worker_id: str
) -> dict[str, Path]:
    """Real graphrag projects of the two example stories, indexed against the server.

    Indexed once per test run: the first xdist worker builds them (the others wait on a
    lock), each worker copies them and points the copy at its own server (the server's
    rules are the same, so are the indexes).
    """
    base = tmp_path_factory.mktemp("indexes")
    if worker_id == "master":
        return _built_examples(base, _session_server.base_url)
    shared = tmp_path_factory.getbasetemp().parent / "example-indexes"
    shared.mkdir(exist_ok=True)
    with open(shared / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (shared / ".built").exists():
            _built_examples(shared, _session_server.base_url)
            (shared / ".built").touch()
    projects = {}
    for key in EXAMPLE_KEYS:
        shutil.copytree(shared / key, base / key)
        retarget(base / key, _session_server.base_url)
        projects[key] = base / key
    return projects


def _built_examples(base: Path, api_base: str) -> dict[str, Path]:
    """Both stories indexed at once (two `gtog index` processes: the other workers wait)."""
    from concurrent.futures import ThreadPoolExecutor

    projects = {key: write_project(base / key, key, api_base) for key in EXAMPLE_KEYS}
    with ThreadPoolExecutor(len(projects)) as pool:
        list(pool.map(index_project, projects.values()))
    return projects
