"""`gtog init`: graphrag's project init, plus the ToG prompts and a `tog_search` block;
`--local` writes settings for the bundled local model, `--yes` (or no terminal) asks
nothing, and it ends with the commands to run next."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any

import typer

from gtog.tog._templates import add_tog_to_project, tog_settings_block

__all__ = ["add_tog_to_project", "init_project", "next_steps", "register", "tog_settings_block"]


def next_steps(root: Path, local: bool) -> str:
    """What to run after `gtog init`: the two or three commands that follow."""
    flag = " --local" if local else ""
    lines = [f"initialized {root}: settings.yaml, prompts/ (graphrag's and Think-on-Graph's)"]
    if local:
        lines.append("models: the bundled local model (needs gtog[local]; no API key)")
    else:
        lines.append(
            f"models: as settings.yaml names them; put your key in {root / '.env'} "
            "(GRAPHRAG_API_KEY=...), or add --local below to use the bundled local model"
        )
    lines += [
        "next steps:",
        f"  1. put your documents (.txt) in {root / 'input'}",
        f"  2. gtog index --root {root}{flag}",
        f'  3. gtog query --root {root}{flag} --method tog "your question"',
    ]
    return "\n".join(lines)


def init_project(
    root: Path,
    *,
    model: str | None,
    embedding_model: str | None,
    force: bool,
    local: bool,
    yes: bool,
) -> None:
    """graphrag's init, then the ToG prompts; with `local`, settings for the local model.

    The model names are asked only at a terminal, and not with `yes`: else graphrag's
    defaults (or the flags) are used.
    """
    from graphrag.cli.initialize import initialize_project_at
    from graphrag.config.defaults import DEFAULT_COMPLETION_MODEL, DEFAULT_EMBEDDING_MODEL

    from gtog._errors import InputError

    if local and (model or embedding_model):
        raise InputError("--model/--embedding: not with --local (the local model is fixed)")
    ask = not (local or yes) and sys.stdin.isatty()
    if model is None:
        model = DEFAULT_COMPLETION_MODEL
        if ask:
            model = typer.prompt("Specify the default chat model to use", default=model)
    if embedding_model is None:
        embedding_model = DEFAULT_EMBEDDING_MODEL
        if ask:
            embedding_model = typer.prompt(
                "Specify the default embedding model to use", default=embedding_model
            )
    try:
        initialize_project_at(path=root, force=force, model=model, embedding_model=embedding_model)
    except ValueError as exc:  # "Project already initialized at ..."
        raise InputError(f"{exc} (--force writes it again)") from None
    if local:
        from gtog.local._project import write_local_settings

        write_local_settings(root)
    add_tog_to_project(root, force=force)


def register(app: typer.Typer) -> None:
    """Wrap `app`'s `init` command so that it also sets up ToG, asks nothing without a
    terminal, takes `--local` and `--yes`, and says what to do next."""
    original = next(
        c
        for c in app.registered_commands
        if (c.name or (c.callback.__name__ if c.callback else "")) == "init"
    )
    graphrag_init = original.callback
    if graphrag_init is None or getattr(graphrag_init, "_gtog", False):
        return
    signature = inspect.signature(graphrag_init)
    params = dict(signature.parameters)
    params["model"] = params["model"].replace(
        default=typer.Option(
            None,
            "--model",
            "-m",
            help="Default chat model (asked at a terminal; default: graphrag's, gpt-4.1).",
        ),
        annotation=str | None,
    )
    params["embedding_model"] = params["embedding_model"].replace(
        default=typer.Option(
            None,
            "--embedding",
            "-e",
            help="Default embedding model (asked at a terminal; default: graphrag's).",
        ),
        annotation=str | None,
    )
    params["local"] = inspect.Parameter(
        "local",
        inspect.Parameter.KEYWORD_ONLY,
        default=typer.Option(
            False,
            "--local",
            help="Write settings for the bundled local model (no API key; gtog[local]): "
            "then gtog index/query/eval --local.",
        ),
        annotation=bool,
    )
    params["yes"] = inspect.Parameter(
        "yes",
        inspect.Parameter.KEYWORD_ONLY,
        default=typer.Option(
            False, "--yes", "-y", help="Ask nothing: the defaults or the flags' models."
        ),
        annotation=bool,
    )

    def _init(**kwargs: Any) -> None:
        from gtog._errors import InputError

        root = Path(str(kwargs["root"]))
        try:
            init_project(
                root,
                model=kwargs.get("model"),
                embedding_model=kwargs.get("embedding_model"),
                force=bool(kwargs.get("force")),
                local=bool(kwargs.get("local")),
                yes=bool(kwargs.get("yes")),
            )
        except InputError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        typer.echo(next_steps(root, bool(kwargs.get("local"))))

    _init.__signature__ = signature.replace(parameters=list(params.values()))  # type: ignore[attr-defined]
    _init.__doc__ = (
        "Generate a project's settings and the Think-on-Graph prompts (--local: for the "
        "bundled local model)."
    )
    _init._gtog = True  # type: ignore[attr-defined]
    original.callback = _init
