"""`gtog query`: graphrag's query command plus `--method tog`."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from gtog._errors import InputError
from gtog._redact import Redactor, environment_secrets
from gtog.cli._say import error

__all__ = ["register"]

GRAPHRAG_METHODS = ("local", "global", "drift", "basic")
"""Methods graphrag's own query command answers (without --local)."""


_HERE = Path(".")


def _search_methods() -> list[str]:
    """Every method gtog's search layer answers: built in and from other packages."""
    from gtog.search._methods import load_plugin_methods

    return list(load_plugin_methods())


def _in_cwd(fn: Any, **kwargs: Any) -> Any:
    """Call `fn` and restore the working directory (graphrag's load_config changes it)."""
    cwd = os.getcwd()
    try:
        return fn(**kwargs)
    finally:
        os.chdir(cwd)


def _engine_query(
    root: Path,
    method: str,
    query: str,
    *,
    data: Path | None,
    response_type: str | None,
    community_level: int,
    verbose: bool,
    overrides: dict[str, Any] | None = None,
    explain: bool = False,
) -> str:
    """Answer `query` with gtog's search layer (tog, and local/basic with --local); print it."""
    from gtog._project import load_project
    from gtog.llm._models import run_sync
    from gtog.search._methods import build_engine
    from gtog.search._outcome import run_search

    merged = dict(overrides or {})
    if data is not None:
        merged["output_storage"] = {**merged.get("output_storage", {}), "base_dir": str(data)}
    project = load_project(root, merged or None)
    options: dict[str, Any] = {"community_level": community_level}
    if response_type:
        options["response_type"] = response_type
    elif method != "tog":
        options["response_type"] = "Single Paragraph"

    async def answer() -> Any:
        engine = await build_engine(method, project, options)
        return await run_search(engine, query)

    outcome = run_sync(answer())
    result = outcome.result
    print(result.response)
    if explain:
        from rich.console import Console

        from gtog.cli._explain import explain as explain_tree

        Console().print(explain_tree(query, result.context_data))
    if verbose:
        _print_usage(method, result)
    return str(result.response)


def _http_config(config: Path | None) -> tuple[Path, Any] | None:
    """The eval config that may define HTTP methods: `--config`, else ./eval_config.yaml."""
    from gtog.eval.run._config import load_eval_config

    path = config if config is not None else Path("eval_config.yaml")
    if config is None and not path.is_file():
        return None
    return path, load_eval_config(path)


def _index_key(root: Path, config_path: Path, indexes: dict[str, str], given: str | None) -> str:
    """`--index-key`, else the key whose folder under `indexes` is `--root`."""
    if given is not None:
        return given
    base = config_path.resolve().parent
    for key, folder in indexes.items():
        path = Path(folder)
        if (path if path.is_absolute() else base / path).resolve() == root.resolve():
            return key
    raise InputError(
        f"{config_path}: no index under 'indexes' is {root}; give --index-key (the endpoint's "
        "{index_key})"
    )


def _http_query(
    name: str,
    endpoint: Any,
    root: Path,
    config_path: Path,
    indexes: dict[str, str],
    redactor: Redactor,
    **kw: Any,
) -> str:
    """Ask HTTP method `name` (from the eval config's `http_methods`); print the answer.
    Its retries are warning lines on stderr, secrets masked."""
    from gtog._logs import warnings_to_stderr
    from gtog._project import load_project
    from gtog.llm._models import run_sync
    from gtog.search._http import build_http_engine
    from gtog.search._outcome import run_search

    key = _index_key(root, config_path, indexes, kw.get("index_key"))
    try:  # the index's model retry settings, when --root is an index
        project = load_project(root)
    except InputError:
        project = None
    engine = build_http_engine(name, endpoint, key, project)
    with warnings_to_stderr(redactor):
        outcome = run_sync(run_search(engine, kw["query"]))
    result = outcome.result
    print(result.response)
    if kw.get("verbose"):
        from dataclasses import asdict

        usage = asdict(result.stated) if result.stated is not None else {}
        stated = {k: v for k, v in usage.items() if v is not None}
        said = ", ".join(f"{k} {v}" for k, v in stated.items()) or "no usage stated"
        route = f"; routed to {result.route}" if result.route else ""
        print(f"\n-- {name}: {said}; {outcome.seconds:.1f} s{route}")
    return str(result.response)


def _print_usage(method: str, result: Any) -> None:
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


def _print_tog_status(context: dict[str, Any]) -> None:
    """ToG's topic entities, stop reason and kept paths, then the call count and bound."""
    status = context["status"].iloc[0]
    print(
        f"\n-- ToG: topic entities [{status['topic_entities']}] via {status['linked_by']}, "
        f"depth {status['depth_reached']}, stop: {status['stop_reason']}"
    )
    for row in context["paths"].itertuples(index=False):
        print(f"path {row.id} (score {row.score:.4f}): {row.path}")
    if status.get("llm_call_bound_rule"):
        print(f"-- variant {status['variant']}: at most {status['llm_call_bound_rule']} LLM calls")
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
        str | None,
        typer.Option(
            "--method",
            "-m",
            help="The query algorithm: local, global, drift, basic, tog, a plug-in method, "
            "or an HTTP method of the eval config (default: global; with --local: local).",
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            help="The eval config whose http_methods -m may name (default: ./eval_config.yaml).",
            dir_okay=False,
            resolve_path=True,
        ),
    ] = None,
    index_key: Annotated[
        str | None,
        typer.Option(
            "--index-key",
            help="An HTTP method's {index_key} (default: the key of --root under 'indexes').",
        ),
    ] = None,
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
            "gtog[local]).",
        ),
    ] = False,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain",
            help="tog: print what the search explored as a tree (candidates per depth, "
            "scores, what pruning kept, each depth's verdict, the evidence paths).",
        ),
    ] = False,
) -> None:
    """Query a knowledge graph index (graphrag's methods, or Think-on-Graph)."""
    from rich.console import Console

    from gtog._errors import FatalRunError
    from gtog.search._outcome import SearchFailed

    err = Console(stderr=True)
    secrets = environment_secrets(os.environ)
    redact = Redactor(secrets)  # every error line passes it (a service may echo a key)
    chosen = method
    if chosen is None:
        chosen = "local" if local else "global"
        if local:
            err.print("--local: no --method given, using local")
    try:
        known = _search_methods()
        found = _http_config(config) if chosen not in known else None
        if found is not None and chosen in found[1].http_methods:
            path, eval_config = found
            endpoint = eval_config.http_methods[chosen]
            redact = Redactor([*secrets, *endpoint.secret_values(os.environ)])
            _http_query(
                chosen,
                endpoint,
                root,
                path,
                eval_config.indexes,
                redact,
                query=query,
                index_key=index_key,
                verbose=verbose,
            )
            return
    except InputError as exc:
        error(err, redact(str(exc)))
        raise typer.Exit(2) from None
    except SearchFailed as exc:
        error(err, redact(str(exc)))
        raise typer.Exit(1) from None
    if chosen not in known:
        error(err, f"--method {chosen}: unknown (use {', '.join(known)})")
        raise typer.Exit(2)
    if explain and chosen != "tog":
        error(err, f"--explain: only --method tog records an exploration tree (not {chosen})")
        raise typer.Exit(2)
    engine_args: dict[str, Any] = {
        "data": data,
        "response_type": response_type,
        "community_level": community_level,
        "verbose": verbose,
    }
    try:
        if local:
            from gtog._project import load_project
            from gtog.cli._local_support import plan_local_server

            plan = plan_local_server()
            load_project(root, plan.overrides(root))  # validate before the server starts
            with plan.running(err):
                _engine_query(
                    root,
                    chosen,
                    query,
                    overrides=plan.overrides(root),
                    explain=explain,
                    **engine_args,
                )
            return
        _preflight(root)
        with _query_logs(root) as swallowed:
            if chosen not in GRAPHRAG_METHODS:  # tog and plug-in methods: gtog's search layer
                _engine_query(root, chosen, query, explain=explain, **engine_args)
                return
            _graphrag_query(
                chosen,
                query,
                root=root,
                dynamic_community_selection=dynamic_community_selection,
                streaming=streaming,
                **engine_args,
            )
        if swallowed:  # graphrag's global search logs a map call's error and answers anyway
            raise swallowed[0]
    except InputError as exc:
        error(err, redact(str(exc)))
        raise typer.Exit(2) from None
    except (FatalRunError, SearchFailed) as exc:
        error(err, redact(str(exc)))
        raise typer.Exit(1) from None
    except Exception as exc:
        fatal = _fatal_provider_error(root, exc)
        if fatal is None:
            raise
        error(err, fatal)
        raise typer.Exit(1) from None


QUERY_LOG = "gtog-query.log"
"""`gtog query`'s log file, in the project's reporting folder (graphrag's `logs/`)."""


class _FatalLogged(logging.Handler):
    """Keeps the fatal provider errors that graphrag's engines log and swallow."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.errors: list[BaseException] = []

    def emit(self, record: logging.LogRecord) -> None:
        from gtog.llm._errors import fatal_in

        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None and fatal_in(exc) is not None:
            self.errors.append(exc)


@contextmanager
def _query_logs(root: Path) -> Iterator[list[BaseException]]:
    """Every library's log lines (LiteLLM's and graphrag's tracebacks) to the project's
    `logs/gtog-query.log`, keys masked, not to the terminal; yields the fatal provider
    errors logged meanwhile (graphrag's global search logs them and answers anyway)."""
    from gtog._logs import capture_logs
    from gtog._project import load_graphrag_config
    from gtog._redact import Redactor

    config = load_graphrag_config(root)
    models = [*config.completion_models.values(), *config.embedding_models.values()]
    reporting = config.reporting
    kind = str(getattr(reporting.type, "value", reporting.type))
    folder = Path(reporting.base_dir or "logs") if kind == "file" else None
    if folder is not None and not folder.is_absolute():
        folder = root / folder
    watch = _FatalLogged()
    keys = [*(m.api_key for m in models), *environment_secrets(os.environ)]
    with capture_logs(folder / QUERY_LOG if folder else None, Redactor(keys)):
        logging.getLogger().handlers.insert(0, watch)  # before the masking file handler
        try:
            yield watch.errors
        finally:
            logging.getLogger().removeHandler(watch)


def _fatal_provider_error(root: Path, exc: BaseException) -> str | None:
    """One line for a provider error no retry can fix (a refused key, permission, model)
    raised by graphrag's own query code, naming the model; None for any other error."""
    from gtog._project import load_graphrag_config
    from gtog._redact import Redactor
    from gtog.llm._errors import ModelFatalError, as_fatal, fatal_in

    found = fatal_in(exc)
    if found is None:
        return None
    if isinstance(found, ModelFatalError):
        return str(found)
    config = load_graphrag_config(root)
    models = {**config.completion_models, **config.embedding_models}
    wanted = str(getattr(found, "model", "") or "")
    model_id, model = next(
        ((k, m) for k, m in models.items() if wanted.endswith(str(m.model))),
        next(iter(config.completion_models.items())),
    )
    return Redactor(m.api_key for m in models.values())(str(as_fatal(found, model_id, model)))


def _preflight(root: Path) -> None:
    """One line naming the model whose server cannot be reached (or the blob container that
    is not there), instead of a traceback."""
    from gtog._project import load_graphrag_config, settings_file
    from gtog.compat._index import output_folder
    from gtog.compat._remote import check_remote_index
    from gtog.search._preflight import check_reachable, endpoints_of

    settings = settings_file(root) or root
    config = load_graphrag_config(root)
    check_reachable(endpoints_of(config, settings))
    if output_folder(config, root) is None:  # before graphrag's classes create a container
        check_remote_index(config, root)


def _graphrag_query(method: str, query: str, **kw: Any) -> None:
    """graphrag's own query commands, unchanged (working directory restored after)."""
    from graphrag.cli import query as gq

    rtype = kw["response_type"] or "Multiple Paragraphs"
    common: dict[str, Any] = {
        "data_dir": kw["data"],
        "root_dir": kw["root"],
        "query": query,
        "verbose": kw["verbose"],
        "response_type": rtype,
    }
    level = {"community_level": kw["community_level"]}
    match method:
        case "local":
            _in_cwd(gq.run_local_search, streaming=kw["streaming"], **level, **common)
        case "global":
            _in_cwd(
                gq.run_global_search,
                dynamic_community_selection=kw["dynamic_community_selection"],
                streaming=kw["streaming"],
                **level,
                **common,
            )
        case "drift":
            _in_cwd(gq.run_drift_search, streaming=kw["streaming"], **level, **common)
        case "basic":
            # graphrag 3.3's non-streaming BasicSearch returns "", its streaming path works
            _in_cwd(gq.run_basic_search, streaming=True, **common)


def register(app: typer.Typer) -> None:
    """Replace `app`'s `query` command with gtog's."""
    app.registered_commands[:] = [
        c
        for c in app.registered_commands
        if (c.name or (c.callback.__name__ if c.callback else "")) != "query"
    ]
    app.command("query")(_query)
