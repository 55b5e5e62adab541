"""`gtog index`: graphrag's index command, plus `--local`, a model check that fails in
seconds, and a count of the replies cut at max_tokens (gtog.indexing does the work).

Exit codes: 0 indexed; 1 a workflow failed; 2 bad input (settings, an empty input folder, a
model that cannot answer); 130 interrupted.
"""

from __future__ import annotations

import inspect
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from gtog.cli._say import error, say, warning

__all__ = ["LOCAL_PROBE_TIMEOUT_S", "register", "run_index"]

err = Console(stderr=True)

LOCAL_PROBE_TIMEOUT_S = 300.0
"""The local server's first answer may wait behind its model loading on a busy machine."""


def _summary(outcome: Any) -> str:
    """`model replies: extraction 8, description summaries 12; none cut at max_tokens`."""
    from gtog.indexing._finishes import LLM_STEPS

    counts = ", ".join(f"{LLM_STEPS[s.step]} {s.replies}" for s in outcome.steps if s.replies)
    cut = sum(s.cut_total for s in outcome.steps)
    tail = "none cut at max_tokens" if not cut else f"{cut} cut (see the warnings above)"
    return f"model replies: {counts or 'none (all from the cache)'}; {tail}"


def run_index(
    root: Path,
    *,
    method: Any,
    verbose: bool,
    cache: bool,
    dry_run: bool,
    skip_validation: bool,
    local: bool,
) -> None:
    """Index the project at `root` (with the bundled local model when `local`)."""
    from graphrag.callbacks.console_workflow_callbacks import ConsoleWorkflowCallbacks

    from gtog._errors import InputError
    from gtog.indexing._build import index_project, load_index_config
    from gtog.indexing._probe import PROBE_TIMEOUT_S

    with ExitStack() as stack:
        overrides = None
        if local:
            from gtog.cli._local_support import plan_local_server
            from gtog.local._overrides import local_index_overrides

            plan = plan_local_server()
            overrides = local_index_overrides(plan.base_url, root)
            try:  # a typo is reported before the server (seconds to start) is launched
                load_index_config(root, overrides)
            except InputError as exc:
                error(err, exc)
                raise typer.Exit(2) from None
            stack.enter_context(plan.running(err))
        try:
            outcome = index_project(
                root,
                overrides=overrides,
                method=str(getattr(method, "value", method)),
                verbose=verbose,
                cache=cache,
                dry_run=dry_run,
                skip_validation=skip_validation,
                callbacks=[ConsoleWorkflowCallbacks(verbose=verbose)],
                probe_timeout=LOCAL_PROBE_TIMEOUT_S if local else PROBE_TIMEOUT_S,
                on_warning=lambda line: warning(err, line),
            )
        except InputError as exc:
            error(err, exc)
            raise typer.Exit(2) from None
        except KeyboardInterrupt:
            err.print("interrupted: rerun the same command to index again", highlight=False)
            raise typer.Exit(130) from None
    if outcome.dry_run:
        say(err, f"dry run: the settings and every model of {root} answer; nothing indexed")
        return
    say(err, _summary(outcome))
    for line in outcome.errors:
        error(err, line, label="workflow failed")
    if not outcome.ok:
        say(err, f"details in {root / 'logs'}")
        raise typer.Exit(1)
    flag = " --local" if local else ""
    say(
        err,
        f"indexed {root} in {outcome.seconds:.0f} s; next: gtog query --root {root}{flag} "
        '--method tog "your question"',
    )


def register(app: typer.Typer) -> None:
    """Wrap `app`'s `index` command: same options, plus `--local`."""
    original = next(
        c
        for c in app.registered_commands
        if (c.name or (c.callback.__name__ if c.callback else "")) == "index"
    )
    graphrag_index = original.callback
    if graphrag_index is None or getattr(graphrag_index, "_gtog", False):
        return
    signature = inspect.signature(graphrag_index)
    local = inspect.Parameter(
        "local",
        inspect.Parameter.KEYWORD_ONLY,
        default=typer.Option(
            False,
            "--local",
            help="Index with the bundled local model: start its server and point every "
            "model of the project at it, in memory (settings.yaml is not changed; needs "
            "gtog[local]).",
        ),
        annotation=bool,
    )

    def _index(**kwargs: Any) -> None:
        run_index(
            Path(str(kwargs["root"])),
            method=kwargs["method"],
            verbose=bool(kwargs["verbose"]),
            cache=bool(kwargs["cache"]),
            dry_run=bool(kwargs["dry_run"]),
            skip_validation=bool(kwargs["skip_validation"]),
            local=bool(kwargs["local"]),
        )

    _index.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*signature.parameters.values(), local]
    )
    _index.__doc__ = (
        "Build a knowledge graph index (graphrag's pipeline; --local: the bundled local model)."
    )
    _index._gtog = True  # type: ignore[attr-defined]
    original.callback = _index
