"""Run folders written the way `gtog eval` writes them, from records a test chooses.

`write_run(folder, records)` writes the checkpoint (gtog's own `Checkpoint`) and, when the
run is finished, the detailed and summary JSON from the same records (gtog's own
`result_views`), as a run that ended does. `verdict_records(table)` makes the records of a
table of 0/1 correctness verdicts (question -> method -> verdict, None: the search failed).
"""

from __future__ import annotations

from pathlib import Path

from gtog._files import write_json_atomic
from gtog.eval.results._records import Efficiency, MethodRecord
from gtog.eval.results._spec import (
    CHECKPOINT_NAME,
    DETAILED_NAME,
    SUMMARY_NAME,
    DatasetSpec,
    EvalSpec,
    JudgeSpec,
)
from gtog.eval.results._views import result_views
from gtog.eval.run._checkpoint import Checkpoint
from gtog.eval.scoring import Judgement

__all__ = ["run_spec", "verdict_records", "write_run"]

METRICS = ["correctness"]


def run_spec(methods: list[str], questions: int, metrics: list[str] | None = None) -> EvalSpec:
    return EvalSpec(
        dataset=DatasetSpec(path="qa.json", hash="d", questions=questions),
        methods=methods,
        judge=JudgeSpec(
            models={"judge": "judge-model@T0"}, prompts="p", metrics=metrics or METRICS
        ),
    )


def verdict_records(
    table: dict[str, dict[str, int | None]], index_of: dict[str, str] | None = None
) -> list[MethodRecord]:
    out = []
    for qid, verdicts in table.items():
        for method, verdict in verdicts.items():
            r = MethodRecord(
                qid=qid,
                index_key=(index_of or {}).get(qid, "alpha"),
                question=f"What about {qid}?",
                reference=f"the answer to {qid}",
                method=method,
            )
            r.efficiency = Efficiency(latency=1.0, llm_calls=1, prompt_tokens=10, output_tokens=2)
            if verdict is None:
                r.error = "RateLimitError: slow down"
                r.error_kind = "rate_limit"
            else:
                r.response = f"{method} says {'yes' if verdict else 'no'} about {qid}"
                r.judgements["correctness"] = Judgement(score=verdict, reason="scripted")
            out.append(r)
    return out


def write_run(
    folder: Path,
    records: list[MethodRecord],
    *,
    finished: bool = True,
    questions: int | None = None,
) -> Path:
    """A run folder holding `records` (finished: with its detailed and summary JSON)."""
    methods = list(dict.fromkeys(r.method for r in records))
    spec = run_spec(methods, questions or len({r.qid for r in records}))
    folder.mkdir(parents=True, exist_ok=True)
    cp = Checkpoint.create(folder / CHECKPOINT_NAME, spec)
    for r in records:
        cp.append(r)
    cp.close()
    if finished:
        detailed, summary = result_views(spec, records, methods)
        write_json_atomic(folder / DETAILED_NAME, detailed)
        write_json_atomic(folder / SUMMARY_NAME, summary)
    return folder
