"""Write a run's files: detailed and summary JSON, qa/ files, report.html and CSV."""

from __future__ import annotations

from pathlib import Path

from gtog._files import write_json_atomic
from gtog.eval.results._labels import read_labels
from gtog.eval.results._records import MethodRecord, PairRecord, answer_key
from gtog.eval.results._spec import DETAILED_NAME, SUMMARY_NAME, EvalSpec
from gtog.eval.results._spend import cost_context
from gtog.eval.results._verdict import plural
from gtog.eval.run._state import EvalRun

__all__ = [
    "import_writers",
    "narrowed_by",
    "requested_summary",
    "write_outputs",
    "write_results",
]


def write_outputs(
    output_dir: Path,
    spec: EvalSpec,
    records: list[MethodRecord],
    methods: list[str],
    *,
    keep_intermediate: bool = True,
    qa_files: bool = True,
    stopped: str | None = None,
    status: str | None = None,
    pairs: list[PairRecord] | None = None,
) -> tuple[Path, Path]:
    """Write a run's detailed and summary JSON, qa/ files, report.html and CSV, atomically."""
    from gtog.eval.results._views import QA_DIR, qa_reference, qa_responses, result_views

    detailed_data, summary = result_views(
        spec,
        records,
        methods,
        keep_intermediate=keep_intermediate,
        stopped=stopped,
        status=status,
        pairs=pairs,
        cost=cost_context(output_dir),
        labels=read_labels(output_dir),
    )
    detailed = output_dir / DETAILED_NAME
    summary_path = output_dir / SUMMARY_NAME
    write_json_atomic(detailed, detailed_data)
    write_json_atomic(summary_path, summary)
    if qa_files:
        qa_dir = output_dir / QA_DIR
        write_json_atomic(qa_dir / "reference.json", qa_reference(records))
        for method in methods:
            write_json_atomic(qa_dir / f"responses_{method}.json", qa_responses(records, method))
    from gtog.eval.report._publish import write_report  # (Jinja2, SVG: only when written)

    write_report(output_dir)  # report.html + eval_results.csv, from the files just written
    return detailed, summary_path


def import_writers() -> None:
    """Import what `write_outputs` needs and compile the report's templates (about a second
    of CPU on 2 cores: the statistics, scipy's among them, and Jinja2's compiling), for a
    caller to do in a worker thread while its run waits on model calls, so that the writing
    starts at once when the run ends. Writing does the same by itself when nothing did."""
    import scipy.stats  # noqa: F401  (the statistics import it where one is computed)

    from gtog.eval.report._html import ENVIRONMENT
    from gtog.eval.report._publish import write_report  # noqa: F401
    from gtog.eval.results._views import result_views  # noqa: F401

    for name in ENVIRONMENT.list_templates(extensions=["html"]):
        ENVIRONMENT.get_template(name)


def write_results(run: EvalRun) -> tuple[Path, Path]:
    """Write everything for the records of `run` so far (see `write_outputs`)."""
    return write_outputs(
        run.output_dir,
        run.spec,
        [r for r in run.done if r.method in run.methods],
        run.methods,
        keep_intermediate=run.config.output.save_intermediate,
        qa_files=run.config.output.qa_responses,
        stopped=run.stopped,
        status=run.status,
        pairs=[p for p in run.pairs_done if p.a in run.methods and p.b in run.methods],
    )


def narrowed_by(run: EvalRun) -> str:
    """The command's filters as it was given them: `--methods local, --limit 2`."""
    o = run.options
    parts = []
    if o.methods:
        parts.append(f"--methods {','.join(run.methods)}")
    if o.index_keys:
        parts.append(f"--index-key {','.join(o.index_keys)}")
    if o.limit is not None:
        parts.append(f"--limit {o.limit}")
    if o.shard is not None:
        parts.append(f"--shard {o.shard.label}")
    return ", ".join(parts) or "this command's config"


def requested_summary(run: EvalRun) -> tuple[dict, str] | None:
    """The summary of just the (question, method) pairs this command asked for, and a line
    saying so, when the output folder holds more (a narrower request into a finished or
    bigger run); None when the folder holds only what was asked for.

    Built in memory: the files in the folder are left as they are.
    """
    wanted = {answer_key(q.qid, m, e) for q, m, e in run.pairs}
    if all(r.key in wanted for r in run.done):
        return None
    asked = [r for r in run.done if r.key in wanted]
    methods = {(q.qid, m) for q, m, _ in run.pairs}
    pairs = [p for p in run.pairs_done if (p.qid, p.a) in methods and (p.qid, p.b) in methods]
    from gtog.eval.results._views import result_views  # (the statistics: only when narrower)

    _, summary = result_views(
        run.spec, asked, run.methods, stopped=run.stopped, status=run.status, pairs=pairs
    )
    held = len({r.key for r in run.done})
    note = (
        f"the table shows the {plural(len(asked), '(question, method) pair')} asked for "
        f"({narrowed_by(run)}), of the {held} held in {run.output_dir}"
    )
    return summary, note
