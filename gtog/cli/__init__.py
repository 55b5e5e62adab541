"""The `gtog` command: graphrag's commands plus gtog's, loaded only when one is run.

`gtog --help` and argument errors must be fast, so the top level is a click group that
knows every command's name and one-line help without importing anything heavy: graphrag's
commands (init, index, update, prompt-tune) are loaded from graphrag's typer app, and
gtog's from their own modules, only when that command runs or shows its own help.
`gtog.cli.app` is the full typer app (graphrag's, with gtog's commands added).
"""

from __future__ import annotations

import gc
import importlib
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

import gtog  # (sets offline defaults before graphrag imports litellm)

__all__ = ["app", "main"]

HELP = (
    "gtog: GraphRAG with Think-on-Graph search and an evaluation harness. graphrag's own "
    "commands (init, index, update, prompt-tune, query) work as in graphrag; gtog adds "
    "Think-on-Graph search (query --method tog), `eval` (every search method on a QA set, "
    "LLM judges, cost, resume), `qa-eval` and `answer-correctness` (graphrag-eval "
    "compatible), and `local-model` (an offline CPU model for the demo; --local)."
)

_GRAPHRAG = "graphrag"
_COMMANDS: dict[str, tuple[str, str]] = {
    "init": (
        _GRAPHRAG,
        "Generate a project's settings and the Think-on-Graph prompts (--local: for the "
        "bundled local model).",
    ),
    "index": (_GRAPHRAG, "Build a knowledge graph index (--local: with the bundled local model)."),
    "update": (_GRAPHRAG, "Update an existing knowledge graph index."),
    "prompt-tune": (_GRAPHRAG, "Generate custom graphrag prompts with your own data."),
    "query": ("gtog.cli._query", "Query an index: graphrag's methods or Think-on-Graph (tog)."),
    "eval": ("gtog.cli._eval", "Evaluate search methods on a QA dataset with LLM judges."),
    "qa-eval": ("gtog.cli._qa", "Evaluate any QA system's answers (graphrag-eval format)."),
    "answer-correctness": ("gtog.cli._qa", "Claims-based correctness of answers in a TSV."),
    "judge-check": ("gtog.cli._judge_check", "How well the judges agree with human labels."),
    "local-model": ("gtog.cli._local", "The offline demo's local model server (gtog[local])."),
    "settings": ("gtog.cli._settings", "Write a graphrag 2.x settings file in 3.3's shape."),
}
"""Command -> (module that registers it, one-line help shown by `gtog --help`)."""

_EXTENSIONS = (
    "gtog.cli._eval",
    "gtog.cli._query",
    "gtog.cli._init",
    "gtog.cli._index",
    "gtog.cli._qa",
    "gtog.cli._judge_check",
    "gtog.cli._local",
    "gtog.cli._settings",
)


def _register(target: typer.Typer, name: str) -> None:
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        return
    module.register(target)


def _full_app() -> typer.Typer:
    from graphrag.cli.main import app as graphrag_app

    for name in _EXTENSIONS:
        _register(graphrag_app, name)
    graphrag_app.info.help = HELP
    return graphrag_app


_app: typer.Typer | None = None


def __getattr__(name: str) -> Any:
    if name == "app":
        global _app
        if _app is None:
            _app = _full_app()
        return _app
    raise AttributeError(name)


def _plain(command: Any) -> Any:
    """`command` (and its subcommands) with click's plain help, like `gtog --help`: one
    style for every help screen, wrapped (never cut) at the terminal's width."""
    if command is not None:
        command.rich_markup_mode = None
        for sub in (getattr(command, "commands", None) or {}).values():
            _plain(sub)
    return command


class _LazyGroup(TyperGroup):
    """Lists commands from `_COMMANDS`; builds a command only when it is used."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(_COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in _COMMANDS:
            return None
        module = _COMMANDS[cmd_name][0]
        if module == _GRAPHRAG:
            group = typer.main.get_command(__getattr__("app"))
        else:
            own = typer.Typer()
            _register(own, module)
            own.command("_placeholder", hidden=True)(lambda: None)  # keeps `own` a group
            group = typer.main.get_command(own)
        return _plain(group.get_command(ctx, cmd_name))  # type: ignore[attr-defined]

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, text) for name, (_, text) in _COMMANDS.items()])


def _version(value: bool) -> None:
    """`gtog --version`: gtog's, graphrag's and Python's versions (nothing heavy imported)."""
    if not value:
        return
    import importlib.metadata
    import platform

    try:
        graphrag = importlib.metadata.version("graphrag")
    except importlib.metadata.PackageNotFoundError:
        graphrag = "not installed"
    typer.echo(f"gtog {gtog.__version__} (graphrag {graphrag}, Python {platform.python_version()})")
    raise typer.Exit()


_top = typer.Typer(
    cls=_LazyGroup, help=HELP, rich_markup_mode=None, add_completion=False, no_args_is_help=True
)


@_top.callback()
def _gtog(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version,
            is_eager=True,
            help="Show gtog's, graphrag's and Python's versions and exit.",
        ),
    ] = False,
) -> None:
    """gtog's top level: only --version; each command loads when it runs."""


cli = typer.main.get_command(_top)


def main() -> None:
    """Entry point of the `gtog` console script.

    When the command is done, the heap is frozen (`gc.freeze`): what it imported (LiteLLM,
    scipy, LanceDB: hundreds of thousands of objects) is then skipped by the collections of
    the interpreter's shutdown, which otherwise take 1-3 s after the last file is written.
    The command has closed its files by then (logging's own exit hook still flushes its
    handlers); what is left in reference cycles is freed with the process.
    """
    try:
        cli(prog_name="gtog")
    finally:
        gc.freeze()
