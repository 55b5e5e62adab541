"""`gtog eval`: run every method on every question, judge, and summarise.

The terminal shows a progress bar, the summary table and one line per kind of error;
every detail (tracebacks, retries) goes to `OUTPUT/eval.log`, with API keys masked.
Exit codes: 0 done; 1 stopped by a fatal error, or every search failed; 2 bad input.
"""

from __future__ import annotations

import contextlib
import json
import threading
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from gtog.cli._eval_tools import diff_command, merge_command, report_command
from gtog.cli._progress import LOG_NAME
from gtog.cli._say import error
from gtog.cli._say import warning as say_warning

if TYPE_CHECKING:
    from gtog.eval.results._records import MethodRecord, PairRecord
    from gtog.eval.run._state import EvalRun

__all__ = [
    "diff_command",
    "eval_app",
    "eval_command",
    "merge_command",
    "register",
    "report_command",
]

err = Console(stderr=True)

eval_app = typer.Typer(name="eval", invoke_without_command=True, no_args_is_help=False)
"""`gtog eval` runs an evaluation; `gtog eval report DIR` writes a run's page and CSV."""


def _fail(message: str, code: int, label: str = "error") -> typer.Exit:
    error(err, message, label=label)
    return typer.Exit(code)


def _print_errors(run: EvalRun) -> None:
    from gtog.eval.results._errors import error_kinds

    kinds = error_kinds([r for r in run.done if r.method in run.methods])
    if not kinds:
        return
    err.print(f"errors (details in {run.output_dir / LOG_NAME}):", highlight=False, markup=False)
    for entry in kinds:
        ex = entry["example"]
        err.print(
            f"  {entry['count']:>4} x {entry['kind']}  e.g. {ex['question_id']} / {ex['method']}: "
            f"{ex['message'][:100]}",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )


def _show_summary(run: EvalRun, summary_path: Path) -> dict:
    """Print the table of what this command asked for: the saved summary, or, when the
    folder holds more pairs than were asked for, the asked-for pairs' own (with a line)."""
    from gtog.eval.results._table import print_summary
    from gtog.eval.run._outputs import requested_summary

    narrowed = requested_summary(run)
    if narrowed is None:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
    else:
        summary, note = narrowed
        err.print(note, highlight=False, soft_wrap=True, markup=False)
    print_summary(summary, run.spec.judge.metrics)
    return summary


def _print_cost(summary: dict) -> None:
    """One line: what the run paid, what the cache saved, its estimate and limit."""
    from gtog.eval.results._spend import cost_line

    line = cost_line(summary.get("cost") or {})
    if line:
        err.print(line, highlight=False, markup=False, soft_wrap=True)


def _gate(summary: dict, gates: list) -> int:
    """1 (and one line per failure) when a `--fail-under` gate is not met, else 0."""
    from gtog.eval.results._gate import check_gates, gates_passed

    failures = check_gates(summary, gates)
    for line in failures:
        err.print(f"--fail-under: {line}", highlight=False, markup=False, style="red")
    if not failures:
        err.print(f"--fail-under: {gates_passed(summary, gates)}", highlight=False, markup=False)
    return 1 if failures else 0


def _check_gates(run: EvalRun, gates: list) -> None:
    """A gate naming a metric or method the run does not have, or a threshold outside its
    metric's scale, is bad input."""
    from gtog._errors import InputError
    from gtog.eval.results._gate import check_scale

    for g in gates:
        if g.metric not in run.spec.judge.metrics:
            raise InputError(
                f"--fail-under {g.metric}: not a metric of this run "
                f"({', '.join(run.spec.judge.metrics) or 'none'})"
            )
        if g.method is not None and g.method not in run.methods:
            raise InputError(f"--fail-under {g.method}: not a method of this run")
        check_scale(g, scales=run.spec.judge.scales)


def _execute(run: EvalRun, quiet: bool, gates: list | None = None) -> int:
    """Run with logs captured and a progress bar; write results; return the exit code."""
    from gtog.cli._progress import run_with_progress
    from gtog.eval.results._records import PairRecord
    from gtog.eval.run._outputs import import_writers, write_results
    from gtog.eval.run._pairwise import pairs_todo

    todo, to_judge, to_compare = run.todo, run.to_judge, pairs_todo(run)
    judging = f", {len(to_judge)} to re-judge" if to_judge else ""
    if to_compare:
        judging += f", {len(to_compare)} comparisons ready"
    shard = run.options.shard
    part = f", shard {shard.label}: {len(run.pairs)} pairs" if shard else ""
    repeats = f" x {run.spec.epochs} answers each" if run.spec.epochs > 1 else ""
    err.print(
        f"gtog eval: {len(run.items)} questions x {len(run.methods)} methods "
        f"({', '.join(run.methods)}){repeats}{part}; {len(todo)} to run{judging}, "
        f"{len(run.done)} already done -> {run.output_dir}",
        highlight=False,
    )
    if shard is not None:
        from gtog.eval.run._spending import run_limits, shard_limit_note

        note = shard_limit_note(run_limits(run), shard.count)
        if note:
            err.print(note, highlight=False)
    written: list[tuple[Path, Path]] = []

    def import_ahead() -> None:  # (a failure here is met again, and said, by the writing)
        from gtog._heap import gc_paused

        with contextlib.suppress(Exception), gc_paused():  # (no full passes over scipy's)
            import_writers()

    # the statistics' and the report's imports (a second of CPU) while the last calls are
    # awaited: once what is left fits in one round of the run's concurrency (a record that
    # made model calls landed). Not earlier: competing for Python's lock with the questions'
    # context building and calls, they cut the calls in flight by a sixth in a 200-pair run
    # (local, -j 16: 10.5-10.8 against 12.5-12.8 without them).
    ahead = threading.Thread(target=import_ahead, name="gtog-import-writers", daemon=True)

    def landed(record: MethodRecord | PairRecord, left: int) -> None:
        called = isinstance(record, PairRecord) or record.method not in run.answers
        if ahead.ident is None and (called or record.judgements) and left <= run.concurrency:
            ahead.start()

    def write() -> None:
        if ahead.ident is not None:
            ahead.join()
        if run.done:
            from gtog._heap import gc_paused

            with gc_paused():  # (what is left of those imports, then the writing)
                written.append(write_results(run))

    code = run_with_progress(run, quiet, err, on_exit=write, on_record=landed)
    if not run.done:  # nothing finished: a failure, unless there was nothing to do (an empty shard)
        return code or (1 if run.pairs else 0)
    from gtog.eval.report._publish import REPORT_NAME
    from gtog.eval.results._flat import CSV_NAME

    detailed, summary_path = written[0]
    summary = _show_summary(run, summary_path)
    _print_cost(summary)
    _print_errors(run)
    written = (detailed, summary_path, run.output_dir / REPORT_NAME, run.output_dir / CSV_NAME)
    err.print("\n".join(f"wrote {p}" for p in written), highlight=False, markup=False)
    searched = [r for r in run.done if r.method in run.methods]
    if code == 0 and searched and all(r.error for r in searched):
        err.print("[red]every search failed[/red]: see the errors above", highlight=False)
        code = 1
    if code == 0 and gates:
        code = _gate(summary, gates)
    return code


@eval_app.callback(invoke_without_command=True)
def eval_command(
    ctx: typer.Context,
    root: Annotated[
        Path,
        typer.Option(
            "--root", "-r", help="Folder with eval_config.yaml, the dataset and the index projects."
        ),
    ] = Path("."),
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="Eval config (default ROOT/eval_config.yaml)."),
    ] = None,
    methods: Annotated[
        str | None,
        typer.Option("--methods", "-m", help="Comma list of methods, e.g. tog,local,basic."),
    ] = None,
    index_key: Annotated[
        str | None,
        typer.Option("--index-key", "--imdb-key", "-k", help="Only these index keys (comma list)."),
    ] = None,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="Continue the run in the output folder; only missing (question, method) "
            "pairs run.",
        ),
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Start over in a folder with results (old files kept as *.bak); with "
            "--resume, continue after a change: what it changed is run or judged again.",
        ),
    ] = False,
    retry_errors: Annotated[
        bool,
        typer.Option(
            "--retry-errors",
            help="With --resume, also rerun failed searches and failed judge calls.",
        ),
    ] = False,
    rescore: Annotated[
        bool,
        typer.Option(
            "--rescore",
            help="Re-judge the saved answers of the output folder with the current metrics, "
            "prompts and judge model; no search is run.",
        ),
    ] = False,
    skip_judges: Annotated[
        bool,
        typer.Option("--skip-judges", help="Run the searches only; judge later with --rescore."),
    ] = False,
    max_errors: Annotated[
        str | None,
        typer.Option(
            "--max-errors",
            help="Stop when more searches than this fail: a count (10) or a share (5%).",
        ),
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency",
            "-j",
            min=1,
            help="Model calls in flight at once (a quarter more questions going).",
        ),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", "-n", min=1, help="First N questions per index (smoke runs)."),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Output folder (overrides output.dir).")
    ] = None,
    local: Annotated[
        bool,
        typer.Option(
            "--local",
            help="Start the bundled local model server and use it for every model of the "
            "run (needs gtog[local]).",
        ),
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    build_indexes: Annotated[
        bool,
        typer.Option(
            "--build-indexes",
            help="First build the indexes that are missing, as `gtog eval prepare` does.",
        ),
    ] = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="With --build-indexes: build without asking.")
    ] = False,
    shard: Annotated[
        str | None,
        typer.Option(
            "--shard",
            help="Run only shard I/N of the questions (0 <= I < N), each with all its methods "
            "and comparisons, into OUTPUT/shard-I-of-N; combine the shards with "
            "`gtog eval merge`.",
        ),
    ] = None,
    no_cache: Annotated[
        bool,
        typer.Option(
            "--no-cache",
            help="Send every model request: the model-call cache (cache.dir, default "
            "OUTPUT/cache) is neither read nor written.",
        ),
    ] = False,
    max_usd: Annotated[
        float | None,
        typer.Option(
            "--max-usd",
            min=0.0,
            help="Stop taking new pairs once the run has spent this many USD (over "
            "limits.run.usd); --resume with a higher limit goes on.",
        ),
    ] = None,
    estimate: Annotated[
        bool,
        typer.Option(
            "--estimate",
            help="Print and write OUTPUT/estimate.json: what the run will cost (calls, "
            "tokens, USD per method and judge), from bounds (no model call) or --pilot.",
        ),
    ] = False,
    pilot: Annotated[
        int | None,
        typer.Option(
            "--pilot",
            min=1,
            help="With --estimate: run K questions per method for real and extrapolate "
            "their spend; the run resumes from them.",
        ),
    ] = None,
    fail_under: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-under",
            metavar="[METHOD:]METRIC=VALUE",
            help="Exit 1 when a method's strict mean (a failed search or an unscored judge "
            "call counts as wrong) is below this, e.g. correctness=0.7 (every method) or "
            "tog:correctness=0.7; repeatable. For CI.",
        ),
    ] = None,
    plan: Annotated[
        bool,
        typer.Option(
            "--plan",
            help="Print how many questions (and clusters) a paired comparison needs to "
            "detect --mde with 80% power, from the run in the output folder if there is one, "
            "else from --discordance, --icc and --cluster-size; no model call, nothing written.",
        ),
    ] = False,
    mde: Annotated[
        float, typer.Option("--mde", help="With --plan: the difference to detect (0-1).")
    ] = 0.1,
    discordance: Annotated[
        float | None,
        typer.Option(
            "--discordance",
            help="With --plan: share of questions two methods disagree on (default: the "
            "run's, else 0.3).",
        ),
    ] = None,
    icc: Annotated[
        float | None,
        typer.Option(
            "--icc",
            help="With --plan: intra-cluster correlation of the paired differences "
            "(default: the run's, else 0.1).",
        ),
    ] = None,
    cluster_size: Annotated[
        float | None,
        typer.Option(
            "--cluster-size",
            help="With --plan: questions per cluster (default: the run's, else the dataset's).",
        ),
    ] = None,
) -> None:
    """Evaluate search methods on a QA dataset with LLM judges; writes JSON, report.html, CSV."""
    if ctx.invoked_subcommand is not None:
        return
    from gtog._errors import InputError

    if plan:
        from gtog.cli._plan import print_plan

        try:
            print_plan(
                Console(), root=root, config=config, output=output, delta=mde,
                discordance=discordance, icc=icc, cluster_size=cluster_size,
            )  # fmt: skip
        except InputError as exc:
            raise _fail(str(exc), 2) from None
        return
    from gtog._heap import gc_paused, thaw_after

    ctx.call_on_close(thaw_after())  # (a caller's heap as it was when the command ends)
    with gc_paused():  # (seconds of imports: see gtog._heap)
        from gtog.eval.results._gate import parse_gate
        from gtog.eval.run._preparation import prepare
        from gtog.eval.run._shard import parse_shard
        from gtog.eval.run._state import EvalOptions

    try:
        gates = [parse_gate(g) for g in fail_under or []]
    except InputError as exc:
        raise _fail(str(exc), 2) from None

    options = EvalOptions(
        root=root,
        config_path=config,
        methods=[methods] if methods else None,
        index_keys=[index_key] if index_key else None,
        resume=resume,
        force=force,
        retry_errors=retry_errors,
        rescore=rescore,
        skip_judges=skip_judges,
        concurrency=concurrency,
        limit=limit,
        output_dir=output,
        max_errors=max_errors,
        no_cache=no_cache,
        max_usd=max_usd,
        dry=estimate and pilot is None,
    )
    if pilot is not None and not estimate:
        raise _fail("--pilot: only with --estimate", 2)
    with ExitStack() as stack:
        server = None
        if local:
            from gtog.cli._local_support import plan_local_server

            server = plan_local_server()
            options.model_overrides = server.overrides
        if build_indexes:
            from gtog.cli._prepare import build_missing

            if server is not None:  # one local server for the build and the run
                stack.enter_context(server.running(err))
            built = build_missing(
                root,
                config=config,
                index_keys=[index_key] if index_key else None,
                yes=yes,
                quiet=quiet,
                local=server,
                start_server=False,
            )
            if built:
                raise _fail("--build-indexes: not every index was built; nothing evaluated", built)
        try:
            options.shard = parse_shard(shard) if shard is not None else None
            run = prepare(options)
        except InputError as exc:
            raise _fail(str(exc), 2) from None
        stack.callback(run.close)
        try:
            _check_gates(run, gates)
        except InputError as exc:
            raise _fail(str(exc), 2) from None
        for warning in run.dataset_warnings:
            say_warning(err, warning)
        if estimate and pilot is None:
            from gtog.cli._estimate import show_bounds

            show_bounds(run, err)
            return
        if run.mode == "complete":
            from gtog.eval.results._spec import SUMMARY_NAME

            if not (run.output_dir / SUMMARY_NAME).is_file():
                from gtog.eval.run._outputs import write_results  # (the report: Jinja2, SVG)

                write_results(run)
            from gtog.eval.results._verdict import plural

            n = len(run.pairs)
            asked = f"{'the' if n == 1 else 'all'} {plural(n, '(question, method) pair')} asked for"
            err.print(
                f"gtog eval: nothing to run: {asked} {'is' if n == 1 else 'are'} done in "
                f"{run.output_dir} with this spec; showing the saved results (0 LLM calls; "
                "--force starts over)",
                highlight=False,
                soft_wrap=True,
                markup=False,
            )
            summary = _show_summary(run, run.output_dir / SUMMARY_NAME)
            if gates and _gate(summary, gates):
                raise typer.Exit(1)
            return
        if server is not None:
            if not build_indexes:
                stack.enter_context(server.running(err))
        else:
            from gtog.search._preflight import check_reachable, endpoints_of

            try:
                check_reachable(
                    [
                        e
                        for p in run.projects.values()
                        for e in endpoints_of(p.config, p.settings_path)
                    ]
                )
            except InputError as exc:
                raise _fail(str(exc), 2) from None
        from gtog._errors import FatalRunError
        from gtog._logs import capture_logs
        from gtog.cli._progress import LOG_NAME
        from gtog.eval.run._engines import import_engines
        from gtog.eval.run._loop import spawn_context_process
        from gtog.eval.run._preparation import check_vector_sizes
        from gtog.eval.run._schedule import open_first_index
        from gtog.llm._models import import_clients, run_sync

        if not estimate:  # (its own imports, on another core, while these are done)
            spawn_context_process(run)
        with gc_paused():  # calls are due: the clients' and engines' imports (seconds), here
            import_clients()
            import_engines(run)
        try:  # the one check that asks a model: after the servers answer (its log: eval.log)
            with capture_logs(run.output_dir / LOG_NAME, run.redactor):
                if not estimate:  # (built while the check's embedding is awaited)
                    open_first_index(run)
                run_sync(check_vector_sizes(run))
        except InputError as exc:
            raise _fail(str(exc), 2) from None
        except FatalRunError as exc:  # a refused key: one line naming the model
            raise _fail(str(exc), 1, label="stopped") from None
        if estimate:
            from gtog.cli._estimate import run_pilot

            code = run_pilot(run, pilot or 1, quiet, err)
        else:
            code = _execute(run, quiet, gates)
    if code:
        raise typer.Exit(code)


_TOOLS = {
    "report": (report_command, "Write a run's report.html and CSV (also mid-run)."),
    "diff": (diff_command, "Compare two runs: paired tests, flipped questions, cost."),
    "merge": (merge_command, "Merge the shards of a sharded run."),
}
for _name, (_command, _help) in _TOOLS.items():
    eval_app.command(_name, short_help=_help)(_command)


def _build_commands() -> None:
    """`eval generate` (and `eval prepare`): their own modules, on this group."""
    from gtog.cli._generate import generate_command
    from gtog.cli._label import label_command
    from gtog.cli._prepare import prepare_command
    from gtog.cli._view import view_command

    eval_app.command(
        "generate", short_help="Generate questions, answers, evidence and assertions."
    )(generate_command)
    eval_app.command("prepare", short_help="Build the indexes that are missing (estimate first).")(
        prepare_command
    )
    eval_app.command("view", short_help="Browse runs in a web page, live, side by side.")(
        view_command
    )
    eval_app.command("label", short_help="Import or export people's labels of answers.")(
        label_command
    )


_build_commands()


def register(app: typer.Typer) -> None:
    """Add the `eval` group (run an evaluation; `eval report`) to a typer app."""
    app.add_typer(eval_app, name="eval")
