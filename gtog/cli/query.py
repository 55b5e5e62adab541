"""`gtog query`: graphrag's query command plus `--method tog`."""

from __future__ import annotations

import asyncio
import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

__all__ = ["QueryMethod", "register", "run_tog_query"]


_HERE = Path(".")


class QueryMethod(StrEnum):
    """graphrag's search methods and Think-on-Graph."""

    LOCAL = "local"
    GLOBAL = "global"
    DRIFT = "drift"
    BASIC = "basic"
    TOG = "tog"


def _in_cwd(fn: Any, **kwargs: Any) -> Any:
    """Call `fn` and restore the working directory (graphrag's load_config changes it)."""
    cwd = os.getcwd()
    try:
        return fn(**kwargs)
    finally:
        os.chdir(cwd)


async def _read_tables(config: Any, names: list[str]) -> dict[str, Any]:
    from graphrag.data_model.data_reader import DataReader
    from graphrag_storage import create_storage
    from graphrag_storage.tables.table_provider_factory import create_table_provider

    provider = create_table_provider(
        config.table_provider, storage=create_storage(config.output_storage)
    )
    reader = DataReader(provider)
    tables: dict[str, Any] = {}
    for name in names:
        tables[name] = await getattr(reader, name)() if await provider.has(name) else None
    return tables


def run_tog_query(
    root: Path, query: str, *, data: Path | None, response_type: str | None, verbose: bool
) -> str:
    """Answer `query` with ToG over the project at `root`; print it (and, verbose, the paths)."""
    from graphrag.config.load_config import load_config

    from gtog.tog.api import tog_search
    from gtog.tog.settings import load_tog_settings

    overrides = {"output_storage": {"base_dir": str(data)}} if data else {}
    config = _in_cwd(load_config, root_dir=root, cli_overrides=overrides)
    settings = load_tog_settings(root, {"response_type": response_type} if response_type else {})
    cwd = os.getcwd()
    try:
        os.chdir(root)
        tables = asyncio.run(_read_tables(config, ["entities", "relationships", "text_units"]))
        response, context = asyncio.run(
            tog_search(
                config,
                tables["entities"],
                tables["relationships"],
                tables["text_units"],
                query,
                settings=settings,
                root=root,
                verbose=verbose,
            )
        )
    finally:
        os.chdir(cwd)
    print(response)
    if verbose:
        _print_tog_status(context)
        for row in context["usage"].itertuples(index=False):
            _print_stage(row.stage, row.llm_calls, row.prompt_tokens, row.output_tokens)
    return response


def _print_tog_status(context: dict[str, Any]) -> None:
    """ToG's topic entities, stop reason and kept paths, then the call count and bound."""
    status = context["status"].iloc[0]
    print(
        f"\n-- ToG: topic entities [{status['topic_entities']}] via {status['linked_by']}, "
        f"depth {status['depth_reached']}, stop: {status['stop_reason']}"
    )
    for row in context["paths"].itertuples(index=False):
        print(f"path {row.id} (score {row.score:.4f}): {row.path}")
    print(f"-- LLM calls {status['llm_calls']} (bound {status['llm_call_bound']}):")


def _print_stage(stage: str, calls: int, prompt_tokens: int, output_tokens: int) -> None:
    print(
        f"  {stage:<17} calls {calls:>3}  "
        f"prompt tokens {prompt_tokens:>7}  output tokens {output_tokens:>6}"
    )


def _query(
    query: Annotated[str, typer.Argument(help="The query to execute.")],
    root: Annotated[
        Path,
        typer.Option(
            "--root",
            "-r",
            help="The project root directory.",
            exists=True,
            dir_okay=True,
            file_okay=False,
            resolve_path=True,
        ),
    ] = _HERE,
    method: Annotated[
        QueryMethod, typer.Option("--method", "-m", help="The query algorithm to use.")
    ] = QueryMethod.GLOBAL,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", "-v", help="Verbose logging; for tog also the paths and LLM usage."
        ),
    ] = False,
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            "-d",
            help="Index output directory (contains the parquet files).",
            exists=True,
            dir_okay=True,
            readable=True,
            resolve_path=True,
        ),
    ] = None,
    community_level: Annotated[
        int,
        typer.Option("--community-level", help="Leiden hierarchy level of the community reports."),
    ] = 2,
    dynamic_community_selection: Annotated[
        bool,
        typer.Option(
            "--dynamic-community-selection/--no-dynamic-selection",
            help="Use global search with dynamic community selection.",
        ),
    ] = False,
    response_type: Annotated[
        str | None,
        typer.Option(
            "--response-type",
            help="Free-form response format (default: 'Multiple Paragraphs'; tog: its settings).",
        ),
    ] = None,
    streaming: Annotated[
        bool,
        typer.Option(
            "--streaming/--no-streaming", help="Print the response in a streaming manner."
        ),
    ] = False,
    local: Annotated[
        bool,
        typer.Option(
            "--local",
            help="Answer with the bundled local model server (tog, local, basic; needs "
            "gtog\\[local]).",
        ),
    ] = False,
) -> None:
    """Query a knowledge graph index (graphrag's methods, or Think-on-Graph)."""
    from graphrag.cli import query as gq

    from gtog.errors import InputError

    if local:
        try:
            _local_query(root, method.value, query, response_type, community_level, verbose)
        except InputError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        return

    rtype = response_type or "Multiple Paragraphs"
    common: dict[str, Any] = {"data_dir": data, "root_dir": root, "query": query}
    match method:
        case QueryMethod.TOG:
            try:
                run_tog_query(root, query, data=data, response_type=response_type, verbose=verbose)
            except InputError as exc:
                typer.echo(f"error: {exc}", err=True)
                raise typer.Exit(2) from None
        case QueryMethod.LOCAL:
            _in_cwd(
                gq.run_local_search,
                community_level=community_level,
                response_type=rtype,
                streaming=streaming,
                verbose=verbose,
                **common,
            )
        case QueryMethod.GLOBAL:
            _in_cwd(
                gq.run_global_search,
                community_level=community_level,
                dynamic_community_selection=dynamic_community_selection,
                response_type=rtype,
                streaming=streaming,
                verbose=verbose,
                **common,
            )
        case QueryMethod.DRIFT:
            _in_cwd(
                gq.run_drift_search,
                community_level=community_level,
                response_type=rtype,
                streaming=streaming,
                verbose=verbose,
                **common,
            )
        case QueryMethod.BASIC:
            # graphrag 3.3's non-streaming BasicSearch returns "", its streaming path works
            _in_cwd(
                gq.run_basic_search, response_type=rtype, streaming=True, verbose=verbose, **common
            )


def _local_query(
    root: Path,
    method: str,
    query: str,
    response_type: str | None,
    community_level: int,
    verbose: bool = False,
) -> None:
    """Answer one query with gtog's engines, every model pointed at the local server."""
    from rich.console import Console

    from gtog.cli.local_support import local_overrides_context
    from gtog.errors import InputError
    from gtog.eval.engines import METHODS, build_engine, run_search
    from gtog.project import load_project

    if method not in METHODS:
        raise InputError(f"--local: method {method!r} is not supported (use {', '.join(METHODS)})")
    options = {
        "response_type": response_type or "Single Paragraph",
        "community_level": community_level,
    }

    async def answer(project: Any) -> Any:
        engine = await build_engine(method, project, options)
        return await run_search(engine, query)

    with local_overrides_context(Console(stderr=True)) as overrides:
        project = load_project(root, overrides(root))
        result = asyncio.run(answer(project))
    print(result.response)
    if verbose:
        context = result.context_data if isinstance(result.context_data, dict) else {}
        if method == "tog" and "status" in context:
            _print_tog_status(context)
        else:
            print(f"\n-- LLM calls {result.llm_calls}:")
        calls = result.llm_calls_categories or {}
        for stage in calls:
            _print_stage(
                stage,
                calls[stage],
                (result.prompt_tokens_categories or {}).get(stage, 0),
                (result.output_tokens_categories or {}).get(stage, 0),
            )
        print(f"-- {result.completion_time:.1f} s")


def register(app: typer.Typer) -> None:
    """Replace `app`'s `query` command with gtog's."""
    app.registered_commands[:] = [
        c
        for c in app.registered_commands
        if (c.name or (c.callback.__name__ if c.callback else "")) != "query"
    ]
    app.command("query")(_query)
