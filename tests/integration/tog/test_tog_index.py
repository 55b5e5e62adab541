"""ToG on the real example indexes, through the API and the `gtog` CLI commands."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
import typer
from graphrag.config.load_config import load_config
from typer.testing import CliRunner

from gtog.cli._init import register as register_init
from gtog.cli._query import register as register_query
from gtog.tog import tog_search
from gtog.tog._settings import load_tog_settings
from gtog.tog._templates import PROMPT_NAMES, load_prompts
from tests.support.scripted_server import ScriptedServer
from tests.support.tog_rules import tog_rules

pytestmark = pytest.mark.integration

QUESTION = "Who is Edda Lorne's apprentice?"


@pytest.fixture
def server(llm_server: ScriptedServer) -> ScriptedServer:
    """The session server with the ToG rules for the example questions in front."""
    llm_server.rules[0:0] = tog_rules()
    return llm_server


@pytest.fixture
def app() -> typer.Typer:
    """graphrag's app with gtog's `query` and `init` registered."""
    from graphrag.cli.main import app

    register_query(app)
    register_init(app)
    return app


async def test_api_on_the_real_index(server: ScriptedServer, example_indexes: dict[str, Path]):
    root = example_indexes["orchard"]
    cwd = os.getcwd()
    try:
        config = load_config(root_dir=root)
        out = root / "output"
        tables = {n: pd.read_parquet(out / f"{n}.parquet") for n in ("entities", "relationships")}
        server.clear_log()
        response, context = await tog_search(
            config,
            tables["entities"],
            tables["relationships"],
            pd.read_parquet(out / "text_units.parquet"),
            QUESTION,
            root=root,
        )
    finally:
        os.chdir(cwd)
    assert response == "Bram Osk."
    status = context["status"].iloc[0]
    assert (status["topic_entities"], status["stop_reason"]) == ("EDDA LORNE", "sufficient")
    assert "BRAM OSK" in context["paths"]["entities"].iloc[0]
    usage = context["usage"].set_index("stage")
    log = server.chat_log()
    assert int(usage["llm_calls"].sum()) == len(log) <= status["llm_call_bound"]
    assert int(usage["prompt_tokens"].sum()) == sum(e.prompt_tokens for e in log)
    assert server.unscripted == []


async def test_embedding_store_links_when_names_do_not_match(
    server: ScriptedServer, example_indexes: dict[str, Path]
):
    root = example_indexes["lighthouse"]
    cwd = os.getcwd()
    try:
        config = load_config(root_dir=root)
        out = root / "output"
        response, context = await tog_search(
            config,
            pd.read_parquet(out / "entities.parquet"),
            pd.read_parquet(out / "relationships.parquet"),
            None,
            "Which ship did the lighthouse keeper save during the November storm?",
            root=root,
        )
    finally:
        os.chdir(cwd)
    status = context["status"].iloc[0]
    assert status["linked_by"] == "embedding"
    assert 1 <= len(status["topic_entities"].split(", ")) <= 3
    assert isinstance(response, str) and response


def test_cli_query_tog_verbose(server: ScriptedServer, example_indexes, app) -> None:
    root = example_indexes["orchard"]
    result = CliRunner().invoke(
        app, ["query", "--root", str(root), "--method", "tog", "--verbose", QUESTION]
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Bram Osk.\n")
    assert "path 1 (score" in result.output and "BRAM OSK" in result.output
    assert "relation_pruning" in result.output and "(bound 22)" in result.output


@pytest.mark.parametrize("method", ["local", "basic"])
def test_cli_query_graphrag_methods_still_work(
    server: ScriptedServer, example_indexes, app, method: str
) -> None:
    root = example_indexes["orchard"]
    result = CliRunner().invoke(app, ["query", "--root", str(root), "--method", method, QUESTION])
    assert result.exit_code == 0, result.output
    assert "Bram Osk" in result.output or "I do not know" in result.output
    assert os.getcwd() != str(root)


def test_cli_init_writes_tog_prompts_and_settings(app, tmp_path: Path) -> None:
    root = tmp_path / "proj"
    args = ["init", "--root", str(root), "--model", "gpt-4o-mini"]
    result = CliRunner().invoke(app, [*args, "--embedding", "text-embedding-3-small"])
    assert result.exit_code == 0, result.output
    assert (root / "prompts" / "local_search_system_prompt.txt").exists()
    for name in PROMPT_NAMES:
        assert (root / "prompts" / f"tog_{name}.txt").exists()
    settings = load_tog_settings(root)
    assert (settings.width, settings.depth) == (3, 3)
    assert settings.prompts.answer == "prompts/tog_answer.txt"
    (root / "prompts" / "tog_answer.txt").write_text("custom $question")
    assert load_prompts(settings, root).render("answer", question="q") == "custom q"
    text = (root / "settings.yaml").read_text()
    assert text.count("tog_search:") == 1
