"""`gtog eval --estimate`: what a run will cost before it is paid (`OUTPUT/estimate.json`).

Two bases: *bounds* (no model call: each method's call bound and context budgets, the
judges' and comparisons' calls, the dataset's texts; `bounded`) and *pilot* (K questions
per method run for real, their spend extrapolated; `pilot`). Either way, what the
checkpoint and the model-call cache already hold is counted as `cached` and left out of
the total (`plan`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from gtog._files import write_json_atomic
from gtog.eval.estimate._bounded import BoundsBasis, load_bounds
from gtog.eval.estimate._figures import Figures, Range
from gtog.eval.estimate._pilot import PilotBasis, pilot_questions
from gtog.eval.estimate._plan import Estimate, build_estimate
from gtog.eval.results._records import answer_key
from gtog.eval.results._spend import ESTIMATE_NAME

if TYPE_CHECKING:
    from gtog.eval.run._state import EvalRun

__all__ = [
    "ESTIMATE_NAME",
    "Estimate",
    "Figures",
    "Range",
    "estimate_bounds",
    "estimate_pilot",
    "pilot_questions",
    "price_sources",
    "write_estimate",
]


def price_sources(run: EvalRun) -> dict[str, str | None]:
    """`provider/model` -> where its price comes from (None: unknown), for the run's models."""
    from gtog.llm._usage import price_source

    out: dict[str, str | None] = {}
    for project in run.projects.values():
        c = project.config
        for m in [*c.completion_models.values(), *c.embedding_models.values()]:
            out.setdefault(f"{m.model_provider}/{m.model}", price_source(m))
    return out


def _details(run: EvalRun, est: Estimate, extra: dict[str, Any]) -> Estimate:
    done = {r.key for r in run.done}
    est.details = {
        "questions": len({q.qid for q, *_ in run.pairs}),
        "pairs": len(run.pairs),
        "pairs_done": sum(1 for q, m, e in run.pairs if answer_key(q.qid, m, e) in done),
        "prices": price_sources(run),
        **extra,
    }
    unpriced = sorted(m for m, src in est.details["prices"].items() if src is None)
    if unpriced:
        est.notes.append(
            f"no price known for {', '.join(unpriced)}: USD is unknown (give the model "
            "`cost_per_1k: {input: ..., output: ...}` in settings.yaml)"
        )
    return est


async def estimate_bounds(run: EvalRun) -> Estimate:
    """The bounds estimate of `run` (no model call; reads the index tables it needs)."""
    bounds = await load_bounds(run)
    est = build_estimate(run, BoundsBasis(run, bounds), "bounds")
    rules = {m: b.rule for (_, m), b in bounds.items() if b is not None}
    return _details(run, est, {"bounds": rules})


def estimate_pilot(run: EvalRun, qids: list[str]) -> Estimate:
    """The pilot estimate of `run`, after its pilot questions `qids` ran."""
    est = build_estimate(run, PilotBasis(run, qids), "pilot")
    return _details(run, est, {"pilot_questions": qids})


def write_estimate(output_dir: Path, est: Estimate) -> Path:
    """Write `OUTPUT/estimate.json`."""
    path = output_dir / ESTIMATE_NAME
    write_json_atomic(path, est.as_json())
    return path
