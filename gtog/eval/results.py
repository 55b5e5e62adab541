"""Detailed and summary results: pure functions of records, plus atomic file writes."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gtog.eval.records import MethodRecord

__all__ = [
    "DETAILED_NAME",
    "QA_DIR",
    "SUMMARY_NAME",
    "detailed_results",
    "group_summary",
    "qa_reference",
    "qa_responses",
    "summarize",
    "write_json_atomic",
    "write_run_files",
]

DETAILED_NAME = "eval_results_detailed.json"
SUMMARY_NAME = "eval_results_summary.json"
QA_DIR = "qa"


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def group_summary(records: Iterable[MethodRecord], metrics: list[str]) -> dict[str, Any]:
    """Mean score per metric over the answers the judge scored, with counts.

    `n` questions; `search_errors` failed searches; per metric, `scored` answers and
    judge `errors`. A failed search or judge is left out of the mean, not counted as 0.
    """
    records = list(records)
    out: dict[str, Any] = {}
    scored: dict[str, int] = {}
    errors: dict[str, int] = {}
    for metric in metrics:
        values = [
            float(r.judgements[metric].score)  # type: ignore[arg-type]
            for r in records
            if metric in r.judgements and r.judgements[metric].score is not None
        ]
        out[metric] = _mean(values)
        scored[metric] = len(values)
        errors[metric] = sum(
            1 for r in records if metric in r.judgements and r.judgements[metric].error
        )
    out["n"] = len(records)
    out["search_errors"] = sum(1 for r in records if r.error)
    out["scored"] = scored
    out["judge_errors"] = errors
    return out


def efficiency_summary(records: Iterable[MethodRecord]) -> dict[str, Any]:
    """Average search cost over successful searches."""
    effs = [r.efficiency for r in records if r.error is None and r.efficiency is not None]

    def avg(attr: str) -> float | None:
        return _mean([float(getattr(e, attr)) for e in effs])

    waits = [e.queue_wait for e in effs if e.queue_wait is not None]
    return {
        "avg_latency": avg("latency"),
        "avg_queue_wait": _mean(waits),
        "avg_llm_calls": avg("llm_calls"),
        "avg_prompt_tokens": avg("prompt_tokens"),
        "avg_output_tokens": avg("output_tokens"),
        "total_llm_calls": sum(e.llm_calls for e in effs),
        "total_prompt_tokens": sum(e.prompt_tokens for e in effs),
        "total_output_tokens": sum(e.output_tokens for e in effs),
        "n": len(effs),
    }


def judge_usage(records: Iterable[MethodRecord]) -> dict[str, int]:
    """LLM calls and tokens spent by the judges."""
    js = [j for r in records for j in r.judgements.values()]
    return {
        "llm_calls": sum(j.llm_calls for j in js),
        "prompt_tokens": sum(j.prompt_tokens for j in js),
        "output_tokens": sum(j.output_tokens for j in js),
    }


def _ordered(records: Iterable[MethodRecord], methods: list[str]) -> list[MethodRecord]:
    rank = {m: i for i, m in enumerate(methods)}
    return sorted(records, key=lambda r: (r.index_key, r.qid, rank.get(r.method, 99)))


def summarize(
    records: list[MethodRecord], methods: list[str], metrics: list[str]
) -> dict[str, Any]:
    """`by_method`, `by_movie` (per index key) and `efficiency`, as in the design."""
    present = [m for m in methods if any(r.method == m for r in records)]
    keys = sorted({r.index_key for r in records})
    return {
        "by_method": {
            m: group_summary((r for r in records if r.method == m), metrics) for m in present
        },
        "by_movie": {
            k: {
                m: group_summary(
                    (r for r in records if r.method == m and r.index_key == k), metrics
                )
                for m in present
            }
            for k in keys
        },
        "efficiency": {m: efficiency_summary(r for r in records if r.method == m) for m in present},
        "judge_usage": {m: judge_usage(r for r in records if r.method == m) for m in present},
    }


def _method_entry(r: MethodRecord, keep_intermediate: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "response": r.response,
        "scores": r.scores(),
        "reasons": {m: j.reason for m, j in r.judgements.items()},
        "efficiency": r.efficiency.model_dump() if r.efficiency else None,
    }
    judge_errors = {m: j.error for m, j in r.judgements.items() if j.error}
    if r.error:
        entry["error"] = r.error
    if judge_errors:
        entry["judge_errors"] = judge_errors
    if keep_intermediate:
        entry["context_text"] = r.context_text
        entry["sources"] = r.sources
    return entry


def detailed_results(
    records: list[MethodRecord],
    methods: list[str],
    metadata: dict[str, Any],
    *,
    keep_intermediate: bool,
) -> dict[str, Any]:
    """One entry per question with every method's response, scores and efficiency."""
    questions: dict[str, dict[str, Any]] = {}
    for r in _ordered(records, methods):
        q = questions.setdefault(
            r.qid,
            {
                "question_id": r.qid,
                "imdb_key": r.index_key,
                "question": r.question,
                "ground_truth": r.reference,
                "methods": {},
            },
        )
        q["methods"][r.method] = _method_entry(r, keep_intermediate)
    return {"metadata": metadata, "results": list(questions.values())}


def qa_reference(records: Iterable[MethodRecord]) -> list[dict[str, Any]]:
    """The run's questions as graphrag-eval reference data (one template per index key)."""
    templates: dict[str, dict[str, dict[str, Any]]] = {}
    for r in sorted(records, key=lambda r: (r.index_key, r.qid)):
        templates.setdefault(r.index_key, {})[r.qid] = {
            "id": r.qid,
            "question_text": r.question,
            "reference_answer": r.reference,
        }
    return [
        {"template_id": key, "questions": list(questions.values())}
        for key, questions in templates.items()
    ]


def qa_responses(records: Iterable[MethodRecord], method: str) -> list[dict[str, Any]]:
    """One method's answers as graphrag-eval responses (retrieval as a `retrieval` step)."""
    from gtog.qa.bridge import eval_record_to_response

    out = []
    for r in sorted(records, key=lambda r: (r.index_key, r.qid)):
        if r.method != method:
            continue
        eff = r.efficiency
        out.append(
            eval_record_to_response(
                question_id=r.qid,
                answer=r.response,
                error=r.error,
                input_tokens=eff.prompt_tokens if eff else 0,
                output_tokens=eff.output_tokens if eff else 0,
                elapsed_sec=eff.latency if eff else 0.0,
                retrieved=r.sources or [],
                query=r.question,
            )
        )
    return out


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON to a temp file beside `path`, then rename it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2, ensure_ascii=False, default=str)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_run_files(
    out: Path,
    records: list[MethodRecord],
    methods: list[str],
    metrics: list[str],
    metadata: dict[str, Any],
    *,
    keep_intermediate: bool,
    qa_files: bool,
) -> tuple[Path, Path]:
    """Write the detailed and summary JSON (and `qa/` when `qa_files`) of a run into `out`."""
    detailed = out / DETAILED_NAME
    summary_path = out / SUMMARY_NAME
    write_json_atomic(
        detailed,
        detailed_results(records, methods, metadata, keep_intermediate=keep_intermediate),
    )
    write_json_atomic(summary_path, {"metadata": metadata, **summarize(records, methods, metrics)})
    if qa_files:
        qa_dir = out / QA_DIR
        write_json_atomic(qa_dir / "reference.json", qa_reference(records))
        for method in methods:
            write_json_atomic(qa_dir / f"responses_{method}.json", qa_responses(records, method))
    return detailed, summary_path
