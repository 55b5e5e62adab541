"""gtog.qa's side of the differential test against graphrag-eval 6.6.1.

Shared by `benchmarks/qa_differential.py` (which runs graphrag-eval itself in a
throwaway venv) and the parity test (which replays committed cases with graphrag-eval
6.6.1's recorded outcomes). A case is `(category, data)`; an outcome is `{"ok": value}`
or `{"raised": "Type: message"}`. `same` compares outcomes strictly: types matter (1,
1.0 and True differ), NaN equals NaN, dict key order does not matter.
"""

from __future__ import annotations

import copy
import datetime as dt
import math
from collections.abc import Callable
from typing import Any

from gtog.qa import (
    average_precision,
    compare_sparql_results,
    compute_aggregates,
    recall_at_k,
    run_evaluation,
)
from gtog.qa._steps import compare_step_outputs, match_steps, steps_score

CATEGORIES = ("steps", "compare", "sparql", "retrieval", "records", "aggregates")
MODES = ("graphrag-eval-6", "seed")


def outcome(call: Callable[[], Any]) -> dict[str, Any]:
    try:
        return {"ok": call()}
    except Exception as exc:
        return {"raised": f"{type(exc).__name__}: {exc}"}


def _steps(case: dict[str, Any], semantics: str) -> Any:
    groups, actual = case["reference_steps"], case["actual_steps"]
    matches = match_steps(groups, actual, semantics)  # type: ignore[arg-type]
    if semantics == "graphrag-eval-6":
        score = steps_score(groups, matches, semantics)  # type: ignore[arg-type]
        for m in matches:
            groups[m.group][m.reference_index]["matches"] = actual[m.actual_index]["id"]
    else:
        for m in matches:
            groups[m.group][m.reference_index]["matches"] = actual[m.actual_index].get("id")
        score = steps_score(groups, matches)
    return {"steps_score": score, "reference_steps": groups}


def _retrieval(case: dict[str, Any], semantics: str) -> Any:
    relevant, retrieved = case["relevant"], case["retrieved"]
    k = {} if case.get("k") is None else {"k": case["k"]}
    return {
        "recall_at_k": outcome(
            lambda: recall_at_k(relevant, retrieved, semantics=semantics, **k)  # type: ignore[arg-type]
        ),
        "average_precision": outcome(
            lambda: average_precision(relevant, retrieved, semantics=semantics)  # type: ignore[arg-type]
        ),
    }


def _records(case: dict[str, Any], semantics: str) -> Any:
    return run_evaluation(
        case["reference"],
        case["responses"],
        semantics=semantics,  # type: ignore[arg-type]
        progress=False,
    )


RUNNERS: dict[str, Callable[[dict[str, Any], str], Any]] = {
    "steps": _steps,
    "compare": lambda c, s: compare_step_outputs(c["reference"], c["actual"], s),  # type: ignore[arg-type]
    "sparql": lambda c, s: compare_sparql_results(*c["args"], semantics=s),  # type: ignore[arg-type]
    "retrieval": _retrieval,
    "records": _records,
    "aggregates": lambda c, s: compute_aggregates(c["samples"], semantics=s),  # type: ignore[arg-type]
}


def run_gtog(category: str, case: Any, semantics: str) -> dict[str, Any]:
    """gtog's outcome of one case (on a copy: inputs stay as given)."""
    return outcome(lambda: RUNNERS[category](copy.deepcopy(case), semantics))


def same(a: Any, b: Any) -> bool:
    """Strict equality: same types, NaN == NaN, dicts by key set."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def parity(category: str, case: Any, expected: dict[str, Any], got: dict[str, Any]) -> str:
    """ "identical", "differing", or for a case graphrag-eval raises on: "raised" when
    gtog raises too (or, for records, gives exactly the raising questions an error
    record and the others graphrag-eval's records) and "raised-differing" otherwise."""
    if "ok" in expected:
        return "identical" if "ok" in got and same(expected["ok"], got["ok"]) else "differing"
    if category != "records":
        return "raised" if "raised" in got else "raised-differing"
    raising = expected.get("raising")
    if "ok" not in got or not isinstance(raising, list):
        return "raised" if "raised" in got else "raised-differing"
    errors = [r["question_id"] for r in got["ok"] if str(r.get("error", "")).startswith(GE6_FAILED)]
    return "raised" if errors == raising else "raised-differing"


GE6_FAILED = "graphrag-eval 6.6.1 cannot evaluate it"


# -- a JSON encoding that keeps what JSON loses ----------------------------------------


def encode(value: Any) -> Any:
    """JSON-able form of `value` keeping tuples, sets, non-text keys, NaN/inf and dates."""
    if isinstance(value, float) and not math.isfinite(value):
        return {"$float": repr(value)}
    if isinstance(value, dt.datetime):
        return {"$datetime": value.isoformat()}
    if isinstance(value, dt.date):
        return {"$date": value.isoformat()}
    if isinstance(value, tuple):
        return {"$tuple": [encode(v) for v in value]}
    if isinstance(value, set | frozenset):
        return {"$set": [encode(v) for v in sorted(value, key=repr)]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) and not k.startswith("$") for k in value):
            return {k: encode(v) for k, v in value.items()}
        return {"$items": [[encode(k), encode(v)] for k, v in value.items()]}
    return value


def decode(value: Any) -> Any:
    """Inverse of `encode`."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "$float" in value:
        return float(value["$float"])
    if "$datetime" in value:
        return dt.datetime.fromisoformat(value["$datetime"])
    if "$date" in value:
        return dt.date.fromisoformat(value["$date"])
    if "$tuple" in value:
        return tuple(decode(v) for v in value["$tuple"])
    if "$set" in value:
        return {_key(decode(v)) for v in value["$set"]}
    if "$items" in value:
        return {_key(decode(k)): decode(v) for k, v in value["$items"]}
    return {k: decode(v) for k, v in value.items()}


def _key(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value
