"""MkDocs hooks (mkdocs.yml `hooks:`): the command-line reference, built from the code.

`docs/reference/cli.md` holds the marker below; at build time it becomes every command's
help — the same click tree `gtog --help` shows, every subcommand with its arguments and
options — rendered by typer's own documentation generator (what `typer MODULE utils docs`
prints). Built from the code on every build, it cannot go stale. (mkdocs-click cannot read
typer's commands: typer ships its own click, whose options are not `click.Option`s.)
"""

from __future__ import annotations

from typing import Any

MARKER = "<!-- gtog-cli-reference -->"
"""Where the generated reference goes in docs/reference/cli.md."""


def cli_reference() -> str:
    """Every `gtog` command's help as Markdown, headings from level 2 down."""
    import typer
    from typer.cli import get_docs_for_click

    from gtog.cli import cli

    ctx = typer.Context(cli, info_name="gtog")
    return get_docs_for_click(obj=cli, ctx=ctx, name="gtog", indent=1)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """Put the generated reference where the page has the marker."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, cli_reference())
