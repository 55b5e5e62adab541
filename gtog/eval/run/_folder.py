"""The output folder a run opens: resume, rescore, refuse, or back up what it holds."""

from __future__ import annotations

from pathlib import Path

from gtog._errors import InputError
from gtog._files import backup as _backup
from gtog.eval.results._log import read_checkpoint_contents
from gtog.eval.results._spec import (
    CHECKPOINT_NAME,
    DETAILED_NAME,
    QA_DIR,
    SUMMARY_NAME,
    search_changes,
    spec_changes,
)
from gtog.eval.results._spend import SPEND_NAME
from gtog.eval.run._pairwise import pairs_todo
from gtog.eval.run._state import EvalRun

__all__ = ["open_output"]


def _refusal(path: Path, changes: list[str], judge_only: bool) -> InputError:
    hint = "use --force to resume anyway, or a new --output"
    if judge_only:
        hint = "use --rescore to re-judge the saved answers, --force to resume anyway"
    return InputError(f"{path}: cannot resume: {'; '.join(changes)} ({hint})")


def open_output(run: EvalRun) -> None:
    """Check the output folder against the options: resume, rescore, refuse or back up."""
    options, out = run.options, run.output_dir
    checkpoint = out / CHECKPOINT_NAME
    existing = [
        p for p in (checkpoint, out / DETAILED_NAME, out / SUMMARY_NAME, out / QA_DIR) if p.exists()
    ]
    if options.rescore or options.resume:
        c = read_checkpoint_contents(checkpoint)
        if options.rescore:  # the saved answers, judged by the current judge
            run.spec = c.spec.model_copy(
                update={
                    "judge": run.spec.judge,
                    "pairwise": run.spec.pairwise,
                    "group_by": run.spec.group_by,
                }
            )
        else:
            changes = spec_changes(c.spec, run.spec)
            if changes and not options.force:
                only_judge = not search_changes(c.spec, run.spec)
                raise _refusal(checkpoint, changes, only_judge)
        run.done, run.pairs_done, run.intact_bytes = c.records, c.pairs, c.intact
        run.mode = "rescore" if options.rescore else "resume"
        return
    if not existing or (options.dry and options.force):  # an estimate of a fresh start
        return
    if not options.force:
        if checkpoint.is_file():
            c = read_checkpoint_contents(checkpoint)
            if not spec_changes(c.spec, run.spec):
                run.done, run.pairs_done, run.intact_bytes = c.records, c.pairs, c.intact
                run.mode = "resume"
                if not run.todo and not run.to_judge and not pairs_todo(run):
                    run.mode = "complete"
                    return
        raise InputError(
            f"{out}: already holds results ({existing[0].name}); use --resume to "
            "continue that run or --force to start over (old files are kept as *.bak)"
        )
    for p in [*existing, out / SPEND_NAME]:  # a new run has spent nothing yet
        if p.exists():
            _backup(p)
