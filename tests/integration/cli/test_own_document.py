"""A new user's own document (issue 32): `gtog init` without a terminal, `gtog index` that
stops in seconds on a model it cannot ask, the count of extraction replies cut at
max_tokens, and `--local` indexing (its overrides pointed at the scripted server)."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from tests.support.projects import STORIES, TEST_API_KEY, gtog, subprocess_env, write_project
from tests.support.scripted_server import ChatRequest, Cut, Fail, Rule, ScriptedServer
from tests.support.world import extraction_reply

pytestmark = pytest.mark.integration


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]


def test_init_asks_nothing_without_a_terminal_and_says_what_comes_next(tmp_path: Path) -> None:
    plain = gtog("init", "--root", str(tmp_path / "plain"))  # stdin is not a terminal
    assert plain.returncode == 0, plain.stderr
    assert "gtog index --root" in plain.stdout and "--method tog" in plain.stdout
    assert "GRAPHRAG_API_KEY" in plain.stdout  # where the key goes
    assert (tmp_path / "plain" / "prompts" / "tog_reasoning.txt").is_file()
    settings = (tmp_path / "plain" / "settings.yaml").read_text()
    assert "model: gpt-4.1" in settings and "tog_search:" in settings

    local = gtog("init", "--root", str(tmp_path / "mine"), "--local")
    assert local.returncode == 0, local.stderr
    assert f"gtog index --root {tmp_path / 'mine'} --local" in local.stdout
    settings = (tmp_path / "mine" / "settings.yaml").read_text()
    assert "qwen2.5-coder-1.5b-instruct-q4_k_m" in settings and "max_tokens: 3000" in settings
    assert 'prompt: "prompts/extract_graph.txt"' in settings and "tog_search:" in settings

    again = gtog("init", "--root", str(tmp_path / "mine"), "--local")
    assert again.returncode == 2 and len(_lines(again)) == 1, again.stderr
    assert "already initialized" in again.stderr and "--force" in again.stderr
    both = gtog("init", "--root", str(tmp_path / "x"), "--local", "--model", "gpt-4o")
    assert both.returncode == 2 and "not with --local" in both.stderr


def test_index_stops_at_once_on_a_model_it_cannot_ask(
    llm_server: ScriptedServer, tmp_path: Path
) -> None:
    """An unreachable server, a refused key, a key never set: one line each, naming the
    model, its endpoint and the fix, before graphrag's own (minutes-long) model check."""
    keyless = tmp_path / "keyless"
    assert gtog("init", "--root", str(keyless), "--yes").returncode == 0
    shutil.copy(STORIES / "lighthouse.txt", keyless / "input")
    result = gtog("index", "--root", str(keyless))
    assert result.returncode == 2, result.stderr
    [line] = _lines(result)
    assert "'default_completion_model' (openai/gpt-4.1) at https://api.openai.com/v1" in line
    assert "has no API key" in line and f"set GRAPHRAG_API_KEY in {keyless / '.env'}" in line
    assert "--local" in line

    url = f"http://127.0.0.1:{_closed_port()}/v1"
    gone = write_project(tmp_path / "gone", "lighthouse", url)
    result = gtog("index", "--root", str(gone))
    assert result.returncode == 2, result.stderr
    [line] = _lines(result)
    assert f"{gone / 'settings.yaml'}: model 'default_completion_model'" in line
    assert f"at {url} cannot be reached (connection refused)" in line and "--local" in line
    assert not (gone / "output" / "entities.parquet").exists()

    llm_server.rules.insert(
        0, Rule("401", lambda r: True, lambda r: Fail(401, "Incorrect API key: {api_key}"))
    )
    refused = write_project(tmp_path / "refused", "lighthouse", llm_server.base_url)
    result = gtog("index", "--root", str(refused))
    assert result.returncode == 2, result.stderr
    [line] = _lines(result)
    assert f"at {llm_server.base_url} refused the key (401" in line
    assert f"set GTOG_TEST_API_KEY in {refused / '.env'}" in line
    assert TEST_API_KEY not in result.stdout + result.stderr  # masked
    assert len(llm_server.chat_log()) == 1  # one request, no retry


def _page_study() -> tuple[list[list[str]], str, str]:
    """The own-document tutorial's commands, its qa.json and its eval_config.yaml."""
    from tests.integration.cli.test_readme_commands import REPO, page_commands

    page = REPO / "docs" / "tutorials" / "own-document.md"
    text = page.read_text(encoding="utf-8")
    [qa] = re.findall(r"```json\n(.*?)```", text, re.S)
    [config] = re.findall(r"```yaml\n(.*?)```", text, re.S)
    return page_commands(page, new_folder=True), qa, config


def test_the_tutorial_study_runs_in_a_new_folder_and_counts_cut_replies(
    llm_server: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tutorial's commands and files for a study of one's own, in a new folder: the
    scripted server stands in for the local one (the project's models are pointed at it,
    as --local does in memory), and cuts the first extraction reply at max_tokens."""
    commands, qa, config = _page_study()
    assert [c[0] for c in commands] == ["init", "index", "query", "eval"]
    assert all("--local" in c for c in commands)
    study = tmp_path / "my-study"
    study.mkdir()
    monkeypatch.chdir(study)
    init = gtog(*commands[0])
    assert init.returncode == 0, init.stderr
    project = study / "bell"
    shutil.copy(STORIES / "lighthouse.txt", project / "input")  # a text the server knows
    settings = (project / "settings.yaml").read_text()
    (project / "settings.yaml").write_text(
        settings.replace("http://127.0.0.1:8765/v1", llm_server.base_url).replace(
            "vector_size: 384", "vector_size: 64"
        )
    )

    def cut_first_chunk(r: ChatRequest) -> str | Cut:
        reply = extraction_reply(r)
        return Cut(reply.split("##")[0]) if "Maren Holt kept" in r.prompt else reply

    llm_server.rules.insert(
        0,
        Rule(
            "cut:extract",
            lambda r: "-Real Data-" in r.prompt and "Entity_types:" in r.prompt,
            cut_first_chunk,
        ),
    )
    index = gtog(*[a for a in commands[1] if a != "--local"], timeout=600)
    assert index.returncode == 0, index.stderr
    extractions = [e for e in llm_server.chat_log() if e.rule == "cut:extract"]
    assert len(extractions) >= 2 and all(e.request["max_tokens"] == 3000 for e in extractions)
    said = " ".join(index.stderr.split())
    assert (
        f"warning: extraction: 1 of {len(extractions)} replies were cut at max_tokens "
        "(finish_reason: length)" in said
    ), said
    assert "fix: raise call_args.max_tokens (3000) of completion model " in said
    assert "'default_completion_model' in settings.yaml, or lower chunking.size (300)" in said
    assert f"model replies: extraction {len(extractions)}," in said
    assert "1 cut (see the warnings above)" in said

    (study / "qa.json").write_text(qa)
    (study / "eval_config.yaml").write_text(config)
    result = gtog(*[a for a in commands[3] if a != "--local"], "-q")
    assert result.returncode == 0, result.stderr
    assert (study / "results" / "report.html").is_file()
    summary = json.loads((study / "results" / "eval_results_summary.json").read_text())
    assert summary["metadata"]["run"] == {"status": "complete", "pairs_done": 9, "pairs_total": 9}


def test_local_index_points_every_model_at_the_server_in_memory(
    llm_server: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What `gtog index --local` runs, against the scripted server standing in for the local
    one: the project `gtog init --local` wrote is indexed unchanged on disk, every model
    asked at the server, extraction given room for its whole reply."""
    from gtog.indexing._build import index_project
    from gtog.local._overrides import local_index_overrides

    root = tmp_path / "mine"
    assert gtog("init", "--root", str(root), "--local").returncode == 0
    shutil.copy(STORIES / "lighthouse.txt", root / "input")
    before = (root / "settings.yaml").read_bytes()
    monkeypatch.setenv("GTOG_TEST_API_KEY", TEST_API_KEY)
    for key, value in subprocess_env().items():
        monkeypatch.setenv(key, value)
    outcome = index_project(root, overrides=local_index_overrides(llm_server.base_url, root))
    assert outcome.ok, outcome.errors
    assert (root / "settings.yaml").read_bytes() == before
    assert (root / "output" / "entities.parquet").is_file()
    chats = llm_server.chat_log()
    assert chats and not llm_server.unscripted
    assert {e.request.get("model") for e in chats} == {"qwen2.5-coder-1.5b-instruct-q4_k_m"}
    extractions = [e for e in chats if e.rule == "index:extract"]
    assert extractions and all(e.request.get("max_tokens") == 3000 for e in extractions)
    steps = {s.step: s for s in outcome.steps}
    assert steps["extract_graph"].replies == len(extractions)
    assert outcome.warnings == [] and steps["extract_graph"].cut_total == 0
