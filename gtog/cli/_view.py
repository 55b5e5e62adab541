"""`gtog eval view`: serve the viewer over some output folders (registered by gtog.cli._eval)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from gtog.cli._say import error

__all__ = ["view_command"]

err = Console(stderr=True)
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def view_command(
    folders: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Folders to look in for runs, recursively (default: the current folder)."
        ),
    ] = None,
    port: Annotated[
        int, typer.Option("--port", help="Port to serve on (0: any free port).")
    ] = 7575,
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="Address to bind (default loopback only; another address requires the "
            "random token in the printed URL).",
        ),
    ] = "127.0.0.1",
) -> None:
    """Browse runs in a web page: each run's state, verdict and table, its questions with
    filters, a running run followed live, two runs compared.

    Serves only the runs found under FOLDERS (read-only; no file of a run is served as
    such); stops with Ctrl-C.
    """
    import socket

    import uvicorn

    from gtog.eval.view._app import ViewConfig, allowed_hosts, make_app, new_token

    roots = [f.resolve() for f in folders or [Path.cwd()]]
    for root in roots:
        if not root.is_dir():
            error(err, f"{root}: not a folder")
            raise typer.Exit(2)
    token = None if host in _LOOPBACK else new_token()
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        error(err, f"--host {host} --port {port}: cannot listen there ({exc.strerror})")
        raise typer.Exit(2) from None
    bound = sock.getsockname()[1]
    config = ViewConfig(roots=tuple(roots), hosts=allowed_hosts(host), token=token)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{bound}/" + (f"?token={token}" if token else "")
    err.print(f"gtog eval view: {url}  (Ctrl-C stops)", highlight=False, markup=False)
    server = uvicorn.Server(
        uvicorn.Config(make_app(config), log_level="warning", access_log=False, lifespan="off")
    )
    server.run(sockets=[sock])
