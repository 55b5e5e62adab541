"""The detailed and summary JSON of a run, and its records in graphrag-eval's format."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gtog.eval.results._calibration import calibration
from gtog.eval.results._currency import (
    current_records,
    judged_elsewhere,
    pair_staleness,
    searched_elsewhere,
)
from gtog.eval.results._epochs import reduce_epochs
from gtog.eval.results._errors import error_kinds
from gtog.eval.results._groups import by_group
from gtog.eval.results._inference import Clusters
from gtog.eval.results._labels import Label
from gtog.eval.results._pairwise import pairwise_summary
from gtog.eval.results._panel import add_panel_entries
from gtog.eval.results._records import MethodRecord, PairRecord, metric_scales
from gtog.eval.results._routing import routing_summary
from gtog.eval.results._spec import DETAILED_NAME, QA_DIR, SUMMARY_NAME, EvalSpec
from gtog.eval.results._spend import run_cost
from gtog.eval.results._summary import summarize

__all__ = [
    "DETAILED_NAME",
    "QA_DIR",
    "RUN_STATUSES",
    "SUMMARY_NAME",
    "detailed_results",
    "qa_reference",
    "qa_responses",
    "result_views",
]


RUN_STATUSES = ("complete", "incomplete", "interrupted", "stopped: <reason>")
"""`metadata.run.status`: every pair ran; a run still going (or rebuilt mid-run); a run
cut short by Ctrl-C or a crash; a run a fatal error stopped."""


def _ordered(records: Iterable[MethodRecord], methods: list[str]) -> list[MethodRecord]:
    rank = {m: i for i, m in enumerate(methods)}
    return sorted(records, key=lambda r: (r.index_key, r.qid, r.epoch, rank.get(r.method, 99)))


def _method_entry(
    r: MethodRecord, keep_intermediate: bool, spec: EvalSpec | None
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "response": r.response,
        "scores": r.scores(),
        "reasons": {m: j.reason for m, j in r.judgements.items()},
        "efficiency": r.efficiency.model_dump() if r.efficiency else None,
        "judge_usage": {
            m: j.model_dump(include={"llm_calls", "prompt_tokens", "output_tokens", "cost_usd"})
            for m, j in r.judgements.items()
        },
        "judged_with": r.judged_with,
        "searched_with": r.searched_with,
    }
    judge_errors = {m: j.error for m, j in r.judgements.items() if j.error}
    parts = {
        m: [v.model_dump() for v in j.assertions]
        for m, j in r.judgements.items()
        if j.assertions is not None
    }
    if parts:
        entry["assertions"] = parts
    scales = {m: j.scale for m, j in r.judgements.items() if j.scale is not None}
    if scales:  # a graded judge's scale (its scores are on it)
        entry["scales"] = scales
    flagged = {m: j.flagged for m, j in r.judgements.items() if j.flagged is not None}
    if flagged:  # what each metric found wrong: invalid citations, unsupported claims, ...
        entry["flagged"] = flagged
    if "citation_validity" in flagged:  # the `citations` metric's invalid ids (a key)
        entry["citations"] = {"invalid": flagged["citation_validity"]}
    if r.error:
        entry["error"] = r.error
        entry["error_kind"] = r.error_kind
    if r.finish_reason:
        entry["finish_reason"] = r.finish_reason
    if r.route is not None:
        entry["route"] = r.route
    if r.linked_entities is not None:
        entry["linked_entities"] = r.linked_entities
    if spec is None:
        pass
    elif searched_elsewhere(spec, r):
        entry["stale"] = "answered with earlier settings: left out of the summary"
    elif judged_elsewhere(spec, r):
        entry["stale"] = "not judged by the current judge: left out of the scores"
    if judge_errors:
        entry["judge_errors"] = judge_errors
    if r.exploration is not None:
        entry["exploration"] = r.exploration
        entry["paths"] = r.paths
    if keep_intermediate:
        entry["context_text"] = r.context_text
        entry["sources"] = r.sources
    panels = {m: j.panel for m, j in r.judgements.items() if j.panel is not None}
    if panels:  # a judge panel: each model's verdict
        entry["panel"] = {
            m: {name: v.model_dump(include={"score", "reason", "error"}) for name, v in p.items()}
            for m, p in panels.items()
        }
    return entry


def _pair_entry(
    p: PairRecord, spec: EvalSpec | None, answers: dict[tuple[str, str], MethodRecord]
) -> dict[str, Any]:
    entry = p.model_dump(exclude={"type", "qid", "index_key", "groups"})
    why = pair_staleness(spec, p, answers) if spec is not None else None
    if why is not None:
        entry["stale"] = f"{why}: left out of the win rates"
    return entry


def detailed_results(
    records: list[MethodRecord],
    methods: list[str],
    metadata: dict[str, Any],
    *,
    keep_intermediate: bool,
    spec: EvalSpec | None = None,
    pairs: list[PairRecord] | None = None,
) -> dict[str, Any]:
    """One entry per question with every method's response, scores and efficiency.

    With the run's `spec`, an entry made under other settings or judged by another judge
    says so (`stale`), and so does a comparison the win rates leave out. A repeat (epoch n
    > 1 of a run with `epochs`) is in the question's `repeats[n][method]`.
    """
    questions: dict[str, dict[str, Any]] = {}
    for r in _ordered(records, methods):
        q = questions.setdefault(
            r.qid,
            {
                "question_id": r.qid,
                "index_key": r.index_key,
                "imdb_key": r.index_key,
                "question": r.question,
                "ground_truth": r.reference,
                "evidence": r.evidence,
                "groups": r.groups,
                "methods": {},
            },
        )
        entry = _method_entry(r, keep_intermediate, spec)
        if r.epoch == 1:
            q["methods"][r.method] = entry
        else:
            q.setdefault("repeats", {}).setdefault(str(r.epoch), {})[r.method] = entry
    answers = {r.key: r for r in records if spec is None or not searched_elsewhere(spec, r)}
    for p in sorted(pairs or [], key=lambda p: p.key):
        if p.qid in questions:
            questions[p.qid].setdefault("pairwise", []).append(_pair_entry(p, spec, answers))
    return {"metadata": metadata, "results": list(questions.values())}


def qa_reference(records: Iterable[MethodRecord]) -> list[dict[str, Any]]:
    """The run's questions as graphrag-eval reference data (one template per index key).

    Gold evidence goes in `reference_context`, a field graphrag-eval ignores: its own
    reference context is a `retrieval` reference step matched by document id, and gold
    evidence has no id among an index's text units (such a step would score 0 always).
    """
    templates: dict[str, dict[str, dict[str, Any]]] = {}
    for r in sorted(records, key=lambda r: (r.index_key, r.qid)):
        question: dict[str, Any] = {
            "id": r.qid,
            "question_text": r.question,
            "reference_answer": r.reference,
        }
        if r.evidence is not None:
            question["reference_context"] = r.evidence
        templates.setdefault(r.index_key, {})[r.qid] = question
    return [
        {"template_id": key, "questions": list(questions.values())}
        for key, questions in templates.items()
    ]


def qa_responses(records: Iterable[MethodRecord], method: str) -> list[dict[str, Any]]:
    """One method's answers as graphrag-eval responses (retrieval as a `retrieval` step)."""
    from gtog.qa._bridge import eval_record_to_response

    out = []
    for r in sorted(records, key=lambda r: (r.index_key, r.qid)):
        if r.method != method or r.epoch != 1:  # graphrag-eval: one answer per question
            continue
        eff = r.efficiency
        out.append(
            eval_record_to_response(
                question_id=r.qid,
                answer=r.response,
                error=r.error,
                input_tokens=eff.prompt_tokens if eff else None,
                output_tokens=eff.output_tokens if eff else None,
                elapsed_sec=eff.latency if eff else None,
                retrieved=r.sources,
                query=r.question,
            )
        )
    return out


def result_views(
    spec: EvalSpec,
    records: list[MethodRecord],
    methods: list[str],
    *,
    keep_intermediate: bool = True,
    stopped: str | None = None,
    partial: bool = False,
    status: str | None = None,
    pairs: list[PairRecord] | None = None,
    cost: dict[str, float | None] | None = None,
    labels: list[Label] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The detailed and summary results of a run's records (the JSON `gtog eval` writes).

    `cost` gives the summary's `cost.estimate_usd` and `cost.limit_usd` (`cost_context`).

    The summary uses only answers made with `spec`'s settings and verdicts of its judge
    (`currency`); `metadata.left_out` counts the others. `status` is the run's (see
    `RUN_STATUSES`); None: `complete` when every pair has an answer, else `incomplete`.
    """
    import datetime as dt

    currency = current_records(spec, records, pairs or [])
    done = len(currency.records)
    total = spec.pairs
    if status is None:
        status = f"stopped: {stopped}" if stopped else None
    if status is None:
        finished = (done >= total) if total else not partial
        status = "complete" if finished else "incomplete"
    metadata = {
        "timestamp": dt.datetime.now().isoformat(timespec="seconds"),
        "gtog_version": spec.gtog_version,
        "graphrag_version": spec.graphrag_version,
        "versions": {"gtog": spec.gtog_version, "graphrag": spec.graphrag_version},
        "total_questions": len({r.qid for r in records}),
        "methods": methods,
        "metrics": spec.judge.metrics,
        "scales": {m: list(sc) for m, sc in metric_scales(records).items()},
        "index_keys": sorted({r.index_key for r in records} | set(spec.indexes)),
        "judge_models": spec.judge.models,
        "judge_prompts": spec.judge.prompts,
        "dataset": spec.dataset.hash,
        "dataset_path": spec.dataset.path,
        "repeated_questions": spec.dataset.repeats,
        "config": spec.config_path,
        "stopped": stopped,
        "partial": partial or status != "complete",
        "run": {"status": status, "pairs_done": done, "pairs_total": total},
        "status": status.split(":", 1)[0],
        "stop_reason": status.split(":", 1)[1].strip() if ":" in status else None,
        "left_out": currency.as_dict(),
        "notes": currency.notes(),
        "errors": error_kinds(currency.records),
        "spec": spec.model_dump(),
    }
    detailed = detailed_results(
        records, methods, metadata, keep_intermediate=keep_intermediate, spec=spec, pairs=pairs
    )
    summary = {
        "metadata": metadata,
        **summarize(currency.records, methods, spec.judge.metrics, spec.analysis, spec.epochs),
    }
    summary["cost"].update(run_cost(records, pairs or [], **(cost or {})))
    add_panel_entries(summary, currency.records, spec.judge.metrics, spec.judge.panel)
    if spec.group_by:
        questions = reduce_epochs(currency.records)  # (repeats: a mean per question)
        clusters = Clusters.of(spec.analysis.cluster_by).labels(questions)
        summary["by_group"] = by_group(
            questions, methods, spec.judge.metrics, spec.group_by, clusters
        )
    routing = routing_summary(
        reduce_epochs(currency.records),
        methods,
        spec.judge.metrics,
        fields=list(spec.group_by or []),
        labels=Clusters.of(spec.analysis.cluster_by).labels(currency.records),
        routers=spec.analysis.routers,
    )
    if routing is not None:
        summary["routing"] = routing
    if spec.pairwise is not None:
        run_pairs = [(a, b) for a, b in spec.pairwise.pairs if a in methods and b in methods]
        summary.update(
            pairwise_summary(currency.pairs, run_pairs, list(spec.pairwise.criteria), spec.group_by)
        )
    if labels:  # people's labels (labels.jsonl): the judge calibrated, corrected means
        summary.update(calibration(currency.records, labels, spec.judge.metrics, methods))
    return detailed, summary
