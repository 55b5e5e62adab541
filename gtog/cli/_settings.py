"""`gtog settings migrate`: a graphrag 2.x settings file written out in graphrag 3.3's shape.

gtog reads graphrag 2.x files as they are (translated in memory, `gtog.compat._settings`);
this command is for users who want to move: it writes the translation beside the original,
never over it, and `--check` prints it instead. `${VAR}` references stay as written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["register", "settings_app"]

settings_app = typer.Typer(
    help="graphrag settings files: `migrate` a graphrag 2.x file to graphrag 3.3's shape.",
    no_args_is_help=True,
)


def _target(settings: Path) -> Path:
    """The first free name beside `settings`: `settings.graphrag3.yaml`, then `...-2`, ..."""
    suffix = ".json" if settings.suffix == ".json" else ".yaml"
    candidate = settings.with_name(f"{settings.stem}.graphrag3{suffix}")
    n = 2
    while candidate.exists():
        candidate = settings.with_name(f"{settings.stem}.graphrag3-{n}{suffix}")
        n += 1
    return candidate


def migrated_text(settings: Path, data: dict) -> str:
    """The translated settings as the file `migrate` writes (YAML; JSON for a .json file)."""
    if settings.suffix == ".json":
        import json

        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    from gtog.compat._settings import render_settings

    return render_settings(data)


@settings_app.command("migrate")
def migrate_command(
    root: Annotated[Path, typer.Option("--root", "-r", help="The graphrag project folder.")],
    check: Annotated[
        bool,
        typer.Option("--check", help="Print the graphrag 3.3 translation; write nothing."),
    ] = False,
) -> None:
    """Write a graphrag 2.x settings file's graphrag 3.3 translation beside it (never over
    it; the new file's name is printed). gtog itself reads 2.x files as they are."""
    from rich.console import Console

    from gtog._errors import InputError
    from gtog._project import read_settings, settings_file
    from gtog.cli._say import error, say

    err = Console(stderr=True)
    settings = settings_file(root)
    if settings is None:
        error(err, f"{root}: no settings.yaml (is this a graphrag project folder?)")
        raise typer.Exit(2)
    try:
        read = read_settings(settings)
    except InputError as exc:
        error(err, exc)
        raise typer.Exit(2) from None
    if read.translation is None:
        say(err, f"{settings}: already graphrag 3.x settings; nothing to migrate", label="note")
        raise typer.Exit(0)
    text = migrated_text(settings, read.data)
    say(err, read.translation.note(settings), label="note")
    if check:
        typer.echo(text, nl=False)
        return
    target = _target(settings)
    target.write_text(text, encoding="utf-8")
    typer.echo(str(target))


def register(app: typer.Typer) -> None:
    """Add the `settings` group (`settings migrate`) to a typer app."""
    app.add_typer(settings_app, name="settings")
