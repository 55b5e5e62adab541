"""Runs cases through graphrag-eval 6.6.1 itself; started by qa_differential.py with the
Python of a throwaway venv that has graphrag-eval installed (never gtog's).

    <venv>/bin/python ge6_worker.py run IN.pickle OUT.pickle
    <venv>/bin/python ge6_worker.py time IN.pickle OUT.pickle
    <venv>/bin/python ge6_worker.py record TESTS_DIR OUT.pickle

`run`: IN holds [(category, case), ...]; OUT gets one outcome per case: {"ok": value}
or {"raised": "Type: message"} (records: plus "raising" = the questions that raise
when evaluated alone). `time`: IN holds {"batches": [...], "repeat": n}; OUT gets the
per-call seconds of run_evaluation on each batch. `record`: runs graphrag-eval's own
test suite (a checkout's `tests/`) with its public functions wrapped, and writes every
call made (arguments, outcome) as cases.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import pickle
import sys
import time
from importlib.metadata import version
from typing import Any

import graphrag_eval
from graphrag_eval import compute_aggregates, run_evaluation
from graphrag_eval.steps import evaluation as steps_module
from graphrag_eval.steps import retrieval_context_ids, sparql


def _outcome(call: Any) -> dict[str, Any]:
    try:
        return {"ok": call()}
    except Exception as exc:  # graphrag-eval raised: counted apart
        return {"raised": f"{type(exc).__name__}: {exc}"}


def _steps(case: dict[str, Any]) -> Any:
    groups, actual = case["reference_steps"], case["actual_steps"]
    matches = steps_module.match_groups(groups, actual)
    score = steps_module.calculate_steps_score(groups, actual, matches)
    return {"steps_score": score, "reference_steps": groups}


def _retrieval(case: dict[str, Any]) -> Any:
    relevant, retrieved = case["relevant"], case["retrieved"]
    out: dict[str, Any] = {}
    k = () if case.get("k") is None else (case["k"],)
    out["recall_at_k"] = _outcome(
        lambda: retrieval_context_ids.recall_at_k(relevant, retrieved, *k)
    )
    out["average_precision"] = _outcome(
        lambda: retrieval_context_ids.average_precision(relevant, retrieved)
    )
    return out


def _records(case: dict[str, Any]) -> Any:
    return asyncio.run(run_evaluation(case["reference"], case["responses"]))


def _raising_questions(case: dict[str, Any]) -> list[Any]:
    """Ids of the questions that raise when evaluated alone."""
    raising = []
    for template in case["reference"]:
        for question in template["questions"]:
            alone = {
                "reference": [{**template, "questions": [question]}],
                "responses": case["responses"],
            }
            alone = copy.deepcopy(alone)
            if "raised" in _outcome(lambda a=alone: _records(a)):  # type: ignore[misc]
                raising.append(question["id"])
    return raising


RUNNERS = {
    "steps": _steps,
    "sparql": lambda c: sparql.compare_sparql_results(*c["args"]),
    "compare": lambda c: steps_module.compare_steps(c["reference"], c["actual"]),
    "retrieval": _retrieval,
    "records": _records,
    "aggregates": lambda c: compute_aggregates(c["samples"]),
}


def run(cases: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    outcomes = []
    for category, case in cases:
        run_one, inputs = RUNNERS[category], copy.deepcopy(case)
        outcome = _outcome(lambda r=run_one, c=inputs: r(c))  # type: ignore[misc]
        if category == "records" and "raised" in outcome:
            try:
                outcome["raising"] = _raising_questions(case)
            except Exception as exc:  # a template-level failure
                outcome["raising"] = f"{type(exc).__name__}: {exc}"
        outcomes.append(outcome)
    return outcomes


def timings(batches: list[Any], repeat: int) -> dict[str, list[float]]:
    """Per batch, the best of `repeat` calls of `asyncio.run(run_evaluation(...))`: wall
    seconds and CPU seconds of this process."""
    wall, cpu = [], []
    for batch in batches:
        best_wall = best_cpu = float("inf")
        for _ in range(repeat):
            inputs = copy.deepcopy(batch)  # graphrag-eval writes into its inputs
            start, start_cpu = time.perf_counter(), time.process_time()
            asyncio.run(run_evaluation(inputs["reference"], inputs["responses"]))
            best_cpu = min(best_cpu, time.process_time() - start_cpu)
            best_wall = min(best_wall, time.perf_counter() - start)
        wall.append(best_wall)
        cpu.append(best_cpu)
    return {"wall": wall, "cpu": cpu}


def record(tests_dir: str) -> list[tuple[str, Any]]:
    """The public calls graphrag-eval's own tests make, as cases (category, case);
    their outcomes are computed afresh by `run`, like any other case."""
    import pytest
    from graphrag_eval import aggregation, evaluation

    cases: list[tuple[str, Any]] = []

    def keep(category: str, make: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with contextlib.suppress(Exception):  # a call shape not replayed
                cases.append((category, make(*copy.deepcopy(args), **copy.deepcopy(kwargs))))
            return wrapper.original(*args, **kwargs)  # type: ignore[attr-defined]

        return wrapper

    def patch(module: Any, name: str, category: str, make: Any) -> None:
        wrapper = keep(category, make)
        wrapper.original = getattr(module, name)  # type: ignore[attr-defined]
        setattr(module, name, wrapper)

    def steps_case(groups: Any, actual: Any, matches: Any = None) -> dict[str, Any]:
        for group in groups:  # as before match_groups annotated them
            for step in group:
                step.pop("matches", None)
        return {"reference_steps": groups, "actual_steps": actual}

    def retrieval_case(relevant: Any, retrieved: Any, k: Any = None) -> dict[str, Any]:
        return {"relevant": relevant, "retrieved": retrieved, "k": k}

    patch(sparql, "compare_sparql_results", "sparql", lambda *a: {"args": list(a)})
    patch(retrieval_context_ids, "recall_at_k", "retrieval", retrieval_case)
    patch(retrieval_context_ids, "average_precision", "retrieval", retrieval_case)
    patch(steps_module, "compare_steps", "compare", lambda r, a: {"reference": r, "actual": a})
    patch(steps_module, "calculate_steps_score", "steps", steps_case)
    patch(aggregation, "compute_aggregates", "aggregates", lambda s, *_: {"samples": s})
    original_run = evaluation.run_evaluation

    async def run_wrapper(qa_dataset: Any, responses: Any, *rest: Any) -> Any:
        if not rest or rest[0] is None:
            case = copy.deepcopy({"reference": qa_dataset, "responses": responses})
            cases.append(("records", case))
        return await original_run(qa_dataset, responses, *rest)

    evaluation.run_evaluation = run_wrapper
    graphrag_eval.run_evaluation = run_wrapper
    graphrag_eval.compute_aggregates = aggregation.compute_aggregates
    options = ["-q", "-p", "no:cacheprovider", "--continue-on-collection-errors", "-W", "ignore"]
    pytest.main([*options, tests_dir])
    return cases


def main() -> None:
    logging.disable(logging.CRITICAL)  # graphrag-eval logs every output it cannot parse
    mode, source, target = sys.argv[1:4]
    if mode == "record":
        result: Any = {"version": version("graphrag-eval"), "cases": record(source)}
    else:
        with open(source, "rb") as f:
            data = pickle.load(f)
        if mode == "run":
            result = {"version": version("graphrag-eval"), "outcomes": run(data)}
        else:
            result = {"version": version("graphrag-eval"), "seconds": timings(**data)}
    with open(target, "wb") as f:
        pickle.dump(result, f)


if __name__ == "__main__":
    main()
