"""`gtog qa-eval` and `gtog answer-correctness`: graphrag-eval's evaluation from the shell."""

from __future__ import annotations

import asyncio
import csv
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from gtog.cli._say import error, warning
from gtog.llm._models import run_sync

__all__ = ["register"]

TSV_COLUMNS = ("Question", "Reference answer", "Actual answer")
TSV_OUTPUT = (
    "#Reference",
    "#PTarget",
    "#Matching",
    "Recall",
    "Precision",
    "F1",
    "Reasoning",
    "Error",
)

ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        help="graphrag settings.yaml (or project dir), a YAML with completion_model/"
        "embedding_model in graphrag_llm ModelConfig shape, or graphrag-eval 6.x's config "
        "(llm: generation/embedding). Default: OpenAI gpt-4o-mini when OPENAI_API_KEY is "
        "set, else the LLM metrics are skipped.",
    ),
]


def _fail(message: str) -> typer.Exit:
    error(Console(stderr=True), message)
    return typer.Exit(2)


def _fmt(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def qa_eval(
    reference: Annotated[
        Path, typer.Option("--reference", "-r", help="Reference Q&A (YAML/JSON).")
    ],
    responses: Annotated[Path, typer.Option("--responses", help="Responses (YAML/JSON).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Per-question results file.")],
    aggregates: Annotated[
        Path | None, typer.Option("--aggregates", help="Aggregates file (YAML/JSON).")
    ] = None,
    config: ConfigOption = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Questions evaluated at once.")] = 4,
    semantics: Annotated[
        str,
        typer.Option(
            help="Scoring rules: 'seed' (the graphrag-eval README gtog follows, with gtog's "
            "improvements) or 'graphrag-eval-6' (exactly graphrag-eval 6.6.1's outputs; a "
            "question it would raise on gets an error record)."
        ),
    ] = "seed",
) -> None:
    """Evaluate responses against reference Q&A data (graphrag-eval's run_evaluation).

    A malformed question or response becomes that question's error record (listed on
    stderr); a malformed file structure exits 2 and writes nothing.
    """
    from gtog.qa._aggregation import compute_aggregates
    from gtog.qa._evaluation import run_evaluation
    from gtog.qa._ge6_records import FAILED as GE6_FAILED
    from gtog.qa._io import (
        InputError,
        dump_data,
        input_problems,
        load_data,
        validate_reference,
        validate_responses,
    )
    from gtog.qa._models import ConfigError, JudgeModels, load_judge_models
    from gtog.qa._semantics import check_semantics

    try:
        rules = check_semantics(semantics)
    except ValueError as exc:
        raise _fail(f"--semantics: {exc}") from None
    sources = (str(reference), str(responses))
    ge6 = rules == "graphrag-eval-6"
    try:
        reference_data = load_data(reference)
        response_data = load_data(responses)
        if not ge6:  # graphrag-eval 6.6.1 checks nothing up front: neither does its mode
            validate_reference(reference_data, sources[0])
            validate_responses(response_data, sources[1])
        # graphrag-eval 6.x reads no environment: without --config, no judge models
        models = JudgeModels() if ge6 and config is None else load_judge_models(config)
    except (InputError, ConfigError) as exc:
        raise _fail(str(exc)) from None
    err = Console(stderr=True)
    if not ge6:
        problems = input_problems(reference_data, response_data, sources)
        for qid, problem in problems.items():
            warning(err, f"question {qid!r} not evaluated: {problem}")
    try:
        results = run_evaluation(
            reference_data,
            response_data,
            models=models,
            concurrency=concurrency,
            semantics=rules,
            sources=sources,
        )
    except InputError as exc:
        raise _fail(str(exc)) from None
    if ge6:
        for record in results:
            if str(record.get("error", "")).startswith(GE6_FAILED):
                warning(err, f"question {record['question_id']!r}: {record['error']}")
    dump_data(output, results)
    try:
        summary = compute_aggregates(results, semantics=rules)
    except ValueError as exc:  # graphrag-eval 6.6.1 cannot aggregate these records either
        error(err, f"{output}: results written, aggregates not: {exc}")
        raise typer.Exit(1) from None
    if aggregates is not None:
        dump_data(aggregates, summary)
    micro = summary["micro"]
    table = Table(title=f"QA evaluation ({len(results)} questions, {rules} rules)")
    table.add_column("metric")
    table.add_column("mean", justify="right")
    table.add_row(
        "success / error samples",
        f"{micro['number_of_success_samples']} / {micro['number_of_error_samples']}",
    )
    for key, stats in micro.items():
        if isinstance(stats, dict) and "mean" in stats:
            table.add_row(key, _fmt(stats["mean"]))
    Console().print(table)


def answer_correctness(
    input_file: Annotated[
        Path,
        typer.Option("--input", "-i", help="TSV with Question, Reference answer, Actual answer."),
    ],
    output_file: Annotated[Path, typer.Option("--output", "-o", help="Output TSV.")],
    config: ConfigOption = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Rows evaluated at once.")] = 4,
) -> None:
    """Claims-based correctness of each row's answer; exits 1 if any row failed."""
    from gtog.qa._models import ConfigError, load_judge_models

    try:
        with input_file.open(encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f, delimiter="\t")
            missing = [c for c in TSV_COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise _fail(f"{input_file}: missing column(s) {', '.join(missing)}")
            rows = list(reader)
    except OSError as exc:
        raise _fail(f"{input_file}: cannot read: {exc.strerror or exc}") from None
    try:
        models = load_judge_models(config)
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    if models.chat is None:
        raise _fail("no judge model: pass --config or set OPENAI_API_KEY")
    outcomes = run_sync(_correctness_rows(rows, models.chat, concurrency))
    output_file.parent.mkdir(parents=True, exist_ok=True)
    tmp = output_file.with_name(f".{output_file.name}.tmp")
    with tmp.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, delimiter="\t", lineterminator="\n")
        writer.writerow([*TSV_COLUMNS, *TSV_OUTPUT])
        for row, outcome in zip(rows, outcomes, strict=True):
            writer.writerow(
                [row[c] for c in TSV_COLUMNS]
                + [
                    _cell(outcome.get(k))
                    for k in (
                        "answer_reference_claims_count",
                        "answer_actual_claims_count",
                        "answer_matching_claims_count",
                        "answer_recall",
                        "answer_precision",
                        "answer_f1",
                        "answer_correctness_reason",
                        "answer_eval_error",
                    )
                ]
            )
    tmp.replace(output_file)
    failed = sum(1 for o in outcomes if "answer_eval_error" in o)
    table = Table(title="Answer correctness")
    table.add_column("rows", justify="right")
    table.add_column("failed", justify="right")
    table.add_column("mean F1", justify="right")
    f1s = [o["answer_f1"] for o in outcomes if "answer_f1" in o]
    table.add_row(str(len(rows)), str(failed), _fmt(sum(f1s) / len(f1s)) if f1s else "-")
    Console().print(table)
    if failed:
        raise typer.Exit(1)


def _cell(value: Any) -> str:
    return "" if value is None else str(value).replace("\t", " ").replace("\n", " ")


async def _correctness_rows(rows: list[dict[str, str]], chat: Any, concurrency: int) -> list[dict]:
    from gtog.qa._llm_metrics import answer_correctness as judge

    semaphore = asyncio.Semaphore(concurrency)

    async def one(row: dict[str, str]) -> dict[str, Any]:
        async with semaphore:
            return await judge(
                chat,
                row["Question"] or "",
                row["Reference answer"] or "",
                row["Actual answer"] or "",
            )

    return list(await asyncio.gather(*(one(r) for r in rows)))


def register(app: typer.Typer) -> None:
    """Add `qa-eval` and `answer-correctness` to `app`."""
    app.command("qa-eval")(qa_eval)
    app.command("answer-correctness")(answer_correctness)
