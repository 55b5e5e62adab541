"""The first hour (issue 10): each common mistake gets one line that points at the fix."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.eval.helpers import make_eval_root
from tests.integration.eval.test_failsafe import copy_project
from tests.support.projects import REPO, gtog, retarget, subprocess_env
from tests.support.scripted_server import Fail, Rule, ScriptedServer

pytestmark = pytest.mark.integration


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    return (result.stdout + result.stderr).strip().splitlines()


def test_a_typo_under_tog_search_names_the_eval_config(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = make_eval_root(
        tmp_path, example_indexes, methods=("tog", "local"), extra="tog_search:\n  widht: 2\n"
    )
    result = gtog("eval", "--root", str(root), "-q")
    assert result.returncode == 2
    [line] = lines(result)
    assert "eval_config.yaml: tog_search.widht: unknown key" in line, line
    assert llm_server.chat_log() == [] and not (root / "results").exists()


def test_an_unreachable_model_is_one_line_before_any_work(
    example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    project = copy_project(example_indexes["lighthouse"], tmp_path / "lighthouse")
    retarget(project, url)
    root = make_eval_root(tmp_path, {"lighthouse": project})
    result = gtog("eval", "--root", str(root), "-k", "lighthouse", "-q")
    assert result.returncode == 2
    [line] = lines(result)
    assert "'default_completion_model'" in line and url in line and "cannot be reached" in line
    query = gtog("query", "--root", str(project), "--method", "tog", "Who keeps the lighthouse?")
    assert query.returncode == 2 and len(lines(query)) == 1, query.stderr
    assert url in query.stderr


def test_the_bundled_example_without_a_server_suggests_local(tmp_path: Path) -> None:
    result = gtog("eval", "--root", str(REPO), "--output", str(tmp_path / "out"), "-q")
    assert result.returncode == 2
    [line] = lines(result)
    assert "cannot be reached" in line and "--local" in line
    assert not (tmp_path / "out").exists()  # refused before any work: nothing left behind
    query = gtog("query", "--root", str(REPO / "eval/indexes/lighthouse"), "-m", "basic", "Who?")
    assert query.returncode == 2 and "--local" in query.stderr and len(lines(query)) == 1


def test_every_search_failing_never_exits_0(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    llm_server.rules.insert(
        0, Rule("fail:search", lambda r: "---Role---" in r.system, lambda r: Fail(400, "no"))
    )
    root = make_eval_root(tmp_path, {"lighthouse": example_indexes["lighthouse"]})
    result = gtog("eval", "--root", str(root), "-k", "lighthouse", "--limit", "2", "-q")
    assert result.returncode == 1, result.stderr
    assert "every search failed" in result.stderr
    assert "Task was destroyed" not in result.stderr


def test_running_the_same_command_again_shows_the_results_with_no_calls(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = make_eval_root(tmp_path, {"lighthouse": example_indexes["lighthouse"]})
    args = ("eval", "--root", str(root), "-k", "lighthouse", "--limit", "2", "-q")
    first = gtog(*args)
    assert first.returncode == 0, first.stderr
    llm_server.clear_log()
    again = gtog(*args)
    assert again.returncode == 0, again.stderr
    assert "nothing to run" in again.stderr and "0 LLM calls" in again.stderr
    assert "local" in again.stdout and "basic" in again.stdout  # the table again
    assert llm_server.log == []
    # a narrower request into the finished folder: the table of what was asked for
    narrower = gtog(*args[:-3], "--limit", "1", "--methods", "local", "-q")
    assert narrower.returncode == 0, narrower.stderr
    said = " ".join(narrower.stderr.split())
    assert "the 1 (question, method) pair asked for is done" in said
    assert (
        "the table shows the 1 (question, method) pair asked for (--methods local, --index-key "
        "lighthouse, --limit 1), of the 4 held in" in said
    )
    rows = [line.split()[0] for line in narrower.stdout.splitlines() if line.strip()]
    assert "local" in rows and "basic" not in rows
    assert llm_server.log == []
    other = gtog(*args[:-1], "--methods", "local", "-q", "--limit", "3")
    assert other.returncode == 2 and "already holds results" in other.stderr


def test_local_validates_before_starting_the_server(
    example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = make_eval_root(tmp_path, example_indexes, extra="tog_search:\n  widht: 2\n")
    result = gtog("eval", "--root", str(root), "--local", "--methods", "tog", "-q")
    assert result.returncode == 2
    [line] = lines(result)
    assert "tog_search.widht" in line and "local model server" not in result.stderr


def test_query_local_without_method_says_what_it_uses(tmp_path: Path) -> None:
    result = gtog("query", "--root", str(tmp_path), "--local", "Who?")  # not a project
    assert result.returncode == 2 and "no settings.yaml" in result.stderr
    assert "using local" in result.stderr and "global" not in result.stderr
    bad = gtog(
        "query", "--root", str(REPO / "eval/indexes/lighthouse"), "--local", "-m", "magic", "?"
    )
    assert bad.returncode == 2 and "--method magic: unknown" in bad.stderr
    assert all(m in bad.stderr for m in ("local", "global", "drift", "basic", "tog"))


def test_help_says_what_gtog_adds_and_imports_no_graphrag() -> None:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gtog", "--help"],
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0
    for word in ("eval", "Think-on-Graph", "qa-eval", "local-model", "init", "index"):
        assert word in result.stdout
    imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines()}
    assert not {m for m in imported if m.split(".")[0] in ("graphrag", "litellm")}
    error = gtog("eval", "--no-such-flag")
    assert error.returncode == 2 and "No such option" in error.stderr


def test_the_same_model_at_another_address_is_the_same_run(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    """--local picks a new port every run: a model's address is not part of the spec."""
    project = copy_project(example_indexes["lighthouse"], tmp_path / "lighthouse")
    root = make_eval_root(tmp_path, {"lighthouse": project})
    args = ("eval", "--root", str(root), "-k", "lighthouse", "--limit", "1", "-q")
    assert gtog(*args).returncode == 0
    retarget(project, llm_server.base_url.replace("127.0.0.1", "localhost"))
    again = gtog(*args)
    assert again.returncode == 0, again.stderr
    assert "nothing to run" in again.stderr
