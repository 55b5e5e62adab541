"""Seeded random cases for the gtog.qa / graphrag-eval 6.6.1 differential test.

`make_case(category, seed)` builds one small case: inputs drawn from small pools so that
equal texts, IRIs equal to literals, reordered columns, concatenation collisions,
duplicate rows, failed or odd steps, booleans among metrics and the like occur often;
now and then an input graphrag-eval raises on (those are counted apart).
"""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
import json
import random
from typing import Any

from gtog.qa._aggregation import METRICS

XSD = "http://www.w3.org/2001/XMLSchema#"
SPARQL_JSON = "application/sparql-results+json"
VALUES = ["a", "b", "ab", "c", "bc", "1", "01", "1.0", "1.000001", "2", "true", "", "None"]
VALUES += ["urn:x:1", "http://x/a", "nan", " 5", "1e-9"]
DATATYPES = ["integer", "int", "decimal", "double", "float", "boolean", "string", "dateTime"]
COLUMNS = ["s", "o", "name", "x", "y"]
DOC_IDS = ["d1", "d2", "d3", "d4", "d5", "d6"]


def _term(rng: random.Random, value: Any = None) -> Any:
    value = rng.choice(VALUES) if value is None else value
    if rng.random() < 0.01:  # rare: huge, infinite or non-text values
        value = rng.choice(("1e400", "-inf", "inf", 5, 2.5, True, None))
    r = rng.random()
    if r < 0.3:
        return {"type": "uri", "value": value}
    if r < 0.6:
        return {"type": "literal", "value": value}
    if r < 0.85:
        kind = rng.choice(("literal", "literal", "typed-literal"))
        return {"type": kind, "value": value, "datatype": XSD + rng.choice(DATATYPES)}
    if r < 0.92:
        return {"type": "literal", "value": value, "xml:lang": rng.choice(("en", "EN", "no"))}
    if r < 0.98:
        return {"type": "bnode", "value": rng.choice(("b0", "b1", value))}
    return rng.choice((value, {"type": "literal"}, {"value": value}))


def _result(rng: random.Random, columns: list[str], rows: int) -> dict[str, Any]:
    bindings = []
    for _ in range(rows):
        binding = {c: _term(rng) for c in columns if rng.random() > 0.05}
        bindings.append(binding)
    names = list(columns)
    if names and rng.random() < 0.02:
        names.append(rng.choice(names))  # a repeated column name
    return {"head": {"vars": names}, "results": {"bindings": bindings}}


def _variant(rng: random.Random, result: dict[str, Any]) -> Any:
    """A result derived from `result`: columns renamed/permuted/added, rows shuffled,
    duplicated or dropped, a term's kind or text changed."""
    if "boolean" in result:
        return {"head": {}, "boolean": rng.choice((True, False, result["boolean"]))}
    out = copy.deepcopy(result)
    names = list(out["head"]["vars"])
    if rng.random() < 0.5:  # rename
        renamed = {n: rng.choice(COLUMNS) + str(rng.randrange(3)) for n in names}
        out["head"]["vars"] = [renamed[n] for n in names]
        out["results"]["bindings"] = [
            {renamed[k]: v for k, v in b.items()} for b in out["results"]["bindings"]
        ]
        names = out["head"]["vars"]
    if rng.random() < 0.5:
        rng.shuffle(out["head"]["vars"])
    if rng.random() < 0.3:  # an extra column
        extra = rng.choice(COLUMNS) + "_x"
        out["head"]["vars"].append(extra)
        for b in out["results"]["bindings"]:
            b[extra] = _term(rng)
    bindings = out["results"]["bindings"]
    if rng.random() < 0.5:
        rng.shuffle(bindings)
    if bindings and rng.random() < 0.25:
        bindings.append(copy.deepcopy(rng.choice(bindings)))
    if bindings and rng.random() < 0.15:
        bindings.pop(rng.randrange(len(bindings)))
    if bindings and rng.random() < 0.3:  # change one term's kind or text
        b = rng.choice(bindings)
        if b:
            key = rng.choice(list(b))
            term = b[key]
            b[key] = _term(rng, term.get("value") if isinstance(term, dict) else None)
    return out


def _sparql_pair(rng: random.Random) -> tuple[dict[str, Any], Any]:
    if rng.random() < 0.05:
        ref: dict[str, Any] = {"head": {}, "boolean": rng.choice((True, False))}
    else:
        width = rng.choice((1, 1, 2, 2, 2, 3, 3, 4, 5))
        columns = rng.sample([*COLUMNS, "p", "q"], width)
        ref = _result(rng, columns, rng.choice((0, 1, 1, 2, 2, 3, 4)))
    r = rng.random()
    if r < 0.6:
        actual: Any = _variant(rng, ref)
    elif r < 0.95:
        columns = rng.sample([*COLUMNS, "p", "q"], rng.randint(1, 6))
        actual = _result(rng, columns, rng.choice((0, 1, 2, 3)))
    else:
        actual = rng.choice(("<urn:a> <urn:b> <urn:c> .", {"results": {"bindings": []}}))
    return ref, actual


def sparql_case(rng: random.Random) -> dict[str, Any]:
    ref, actual = _sparql_pair(rng)
    names = list(ref.get("head", {}).get("vars", []))
    r = rng.random()
    if r < 0.6 and names:
        required = rng.sample(names, rng.randint(1, len(names)))
    elif r < 0.75:
        required = []
    elif r < 0.95:
        required = list(names)
    else:
        required = [rng.choice(COLUMNS) + "_missing"]
    args: list[Any] = [ref, actual, required]
    if rng.random() < 0.7:
        args.append(rng.random() < 0.3)
        if rng.random() < 0.7:
            args.append(rng.random() < 0.7)
    return {"args": args}


def retrieval_case(rng: random.Random) -> dict[str, Any]:
    relevant = [rng.choice(DOC_IDS) for _ in range(rng.randint(0, 5))]
    retrieved = [rng.choice(DOC_IDS) for _ in range(rng.randint(0, 7))]
    k: Any = rng.choice((None, 0, 1, 2, 3, 5, 7))
    if rng.random() < 0.03:
        k = rng.choice((-1, True, 2.0))
    if rng.random() < 0.03:
        relevant = set(relevant)  # type: ignore[assignment]
    return {"relevant": relevant, "retrieved": retrieved, "k": k}


# -- steps ------------------------------------------------------------------------------


def _retrieval_output(rng: random.Random) -> str:
    docs = [{"id": rng.choice(DOC_IDS), "text": "t"} for _ in range(rng.randint(0, 4))]
    return json.dumps(docs, indent=rng.choice((None, 2)))


def _time(rng: random.Random) -> Any:
    return rng.choice(
        (
            None,
            "now",
            "15m-ago",
            "2h-ago",
            "1d-ahead",
            "120s-ago",
            "2024-05-01T10:00:00Z",
            "2024-05-01T12:00:00+02:00",
            "2024-05-01T09:59:30",
            "not a time",
        )
    )


def _anchor(rng: random.Random) -> Any:
    return rng.choice(
        (
            dt.datetime(2024, 5, 1, 10, 0, 0, tzinfo=dt.UTC),
            dt.datetime(2024, 5, 1, 12, 0, 30),
            dt.datetime(2024, 5, 1, 10, 15, 20, tzinfo=dt.UTC),
            dt.datetime(2024, 5, 1, 9, 59, 45, tzinfo=dt.UTC),
            dt.datetime(2024, 5, 1, 11, 0, 0, tzinfo=dt.timezone(dt.timedelta(hours=1))),
            "2024-05-01T10:00:00Z",
        )
    )


def _reference_step(rng: random.Random) -> dict[str, Any]:
    kind = rng.choice(
        ("sparql", "sparql", "retrieval", "iri", "series", "points", "json", "text", "text")
    )
    if kind == "sparql":
        ref, _ = _sparql_pair(rng)
        step: dict[str, Any] = {
            "name": "sparql_query",
            "args": {"query": "SELECT"},
            "output": json.dumps(ref),
        }
        if rng.random() < 0.9:
            step["output_media_type"] = SPARQL_JSON
        if rng.random() < 0.95:
            names = list(ref.get("head", {}).get("vars", []))
            step["required_columns"] = rng.sample(names, rng.randint(0, len(names)))
        for flag in ("ordered", "ignore_duplicates"):
            if rng.random() < 0.3:
                step[flag] = rng.random() < 0.5
        return step
    if kind == "retrieval":
        step = {"name": "retrieval", "args": {"query": "q", "k": rng.randint(1, 4)}}
        if rng.random() < 0.9:
            step["output"] = _retrieval_output(rng)
        return step
    if kind == "iri":
        return {"name": "iri_discovery", "output": rng.choice(("urn:x:1", "http://x/a"))}
    if kind == "series":
        args: dict[str, Any] = {}
        if rng.random() < 0.7:
            args["mrid"] = rng.choice(("m1", ["m2", "m1"], ["m1"], ""))
        if rng.random() < 0.5:
            args["limit"] = rng.choice((10, 100))
        return {"name": "retrieve_time_series", "args": args}
    if kind == "points":
        args = {"external_id": rng.choice(("e1", ["e2", "e1"]))}
        for key, pool in (
            ("granularity", ("1h", "1hour", "60m", "1d", None)),
            ("aggregates", (["avg"], ["max", "avg"], "avg", None)),
            ("limit", (10, None)),
        ):
            if rng.random() < 0.6:
                args[key] = rng.choice(pool)
        for key in ("start", "end"):
            if rng.random() < 0.7:
                args[key] = _time(rng)
        return {"name": "retrieve_data_points", "args": args}
    if kind == "json":
        return {
            "name": rng.choice(("calc", "lookup")),
            "output": rng.choice(('{"a": 1, "b": [1, 2]}', "[1, 2]", "7", '{"a": 1.0}')),
            "output_media_type": "application/json",
        }
    step = {"name": rng.choice(("calc", "search", "lookup")), "args": {}}
    if rng.random() < 0.9:
        step["output"] = rng.choice(("7", "Oslo", "", "urn:x:1", "[]"))
    return step


def _actual_like(rng: random.Random, reference: dict[str, Any]) -> dict[str, Any]:
    """An actual step resembling `reference` (same name, a similar or equal output)."""
    step: dict[str, Any] = {"name": reference["name"], "args": copy.deepcopy(reference.get("args"))}
    name, output = reference["name"], reference.get("output")
    if name == "iri_discovery":
        step["name"] = rng.choice(("autocomplete_search", "sparql_query", "search"))
        iri = output if rng.random() < 0.7 else "urn:x:2"
        term = {"type": rng.choice(("uri", "uri", "literal")), "value": iri}
        result = {"head": {"vars": ["iri"]}, "results": {"bindings": [{"iri": term}]}}
        step["output"] = json.dumps(result) if rng.random() < 0.95 else "not json"
    elif name == "sparql_query" and output is not None:
        r = rng.random()
        if r < 0.3:
            step["output"] = output
        elif r < 0.85:
            step["output"] = json.dumps(_variant(rng, json.loads(output)))
        else:
            step["output"] = rng.choice(("Error: timeout", '"a literal"', "[]"))
    elif name == "retrieval":
        step["output"] = output if output and rng.random() < 0.4 else _retrieval_output(rng)
        if rng.random() < 0.05:
            step["args"] = {"query": "q"}
    elif name in ("retrieve_time_series", "retrieve_data_points"):
        step["args"] = {**(step["args"] or {})}
        if rng.random() < 0.4:
            key = rng.choice(("mrid", "limit", "granularity", "start", "end", "aggregates"))
            step["args"][key] = rng.choice(("m1", 10, "1hour", _time(rng), ["avg"], None))
        step["output"] = "{}"
        if name == "retrieve_data_points" and rng.random() < 0.95:
            step["execution_timestamp"] = _anchor(rng)
    else:
        step["output"] = output if rng.random() < 0.6 else rng.choice(("7", "Oslo", "7.0"))
        if reference.get("output_media_type") == "application/json" and rng.random() < 0.5:
            with contextlib.suppress(json.JSONDecodeError):
                step["output"] = json.dumps(json.loads(output or "null"), indent=2)
    return step


def _finish(rng: random.Random, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for i, step in enumerate(steps):
        r = rng.random()
        step["status"] = "success" if r < 0.85 else ("error" if r < 0.95 else "timeout")
        if rng.random() < 0.005:
            del step["status"]
        if rng.random() < 0.995:
            step["id"] = f"call_{i}"
        if step.get("status") == "error":
            step.setdefault("error", "failed")
            if rng.random() < 0.5:
                step.pop("output", None)
    return steps


def steps_case(rng: random.Random) -> dict[str, Any]:
    groups = [
        [_reference_step(rng) for _ in range(rng.choice((1, 1, 2, 2, 3)))]
        for _ in range(rng.choice((1, 1, 2, 2, 3)))
    ]
    if rng.random() < 0.02:
        groups.append([])
    actual = []
    for group in groups:
        for reference in group:
            for _ in range(rng.choice((0, 1, 1, 1, 2))):
                actual.append(_actual_like(rng, reference))
    for _ in range(rng.choice((0, 0, 1, 2))):
        actual.insert(rng.randrange(len(actual) + 1), _actual_like(rng, _reference_step(rng)))
    if rng.random() < 0.3 and len(actual) > 1:
        i, j = rng.randrange(len(actual)), rng.randrange(len(actual))
        actual[i], actual[j] = actual[j], actual[i]
    return {"reference_steps": groups, "actual_steps": _finish(rng, actual)}


def compare_case(rng: random.Random) -> dict[str, Any]:
    reference = _reference_step(rng)
    actual = _actual_like(rng, reference if rng.random() < 0.85 else _reference_step(rng))
    return {"reference": reference, "actual": _finish(rng, [actual])[0]}


# -- records and aggregates -----------------------------------------------------------


def _usage(rng: random.Random) -> dict[str, Any]:
    usage: dict[str, Any] = {}
    for key in ("input_tokens", "output_tokens", "total_tokens", "elapsed_sec"):
        if rng.random() < 0.7:
            usage[key] = rng.choice((rng.randint(0, 500), round(rng.uniform(0, 9), 3), None, 0))
    return usage


def records_case(rng: random.Random) -> dict[str, Any]:
    reference, responses = [], {}
    n = 0
    for t in range(rng.choice((1, 1, 2))):
        questions = []
        for _ in range(rng.choice((1, 2, 3))):
            n += 1
            qid: Any = f"q{n}" if rng.random() < 0.95 else n
            question: dict[str, Any] = {"id": qid, "question_text": f"Question {n}?"}
            if rng.random() < 0.5:
                question["reference_answer"] = "Oslo"
            case = steps_case(rng)
            if rng.random() < 0.75:
                question["reference_steps"] = case["reference_steps"]
            if questions and rng.random() < 0.03:  # shares the previous question's objects
                shared = questions[-1]
                question["reference_steps"] = shared.get("reference_steps", [[]])
                case["actual_steps"] = responses.get(shared["id"], {}).get("actual_steps", [])
            if questions and rng.random() < 0.02:
                qid = question["id"] = questions[-1]["id"]  # a repeated id
            questions.append(question)
            if rng.random() < 0.01:
                continue  # no response: graphrag-eval raises
            response: dict[str, Any] = {"question_id": qid if rng.random() < 0.97 else "other"}
            response.update(_usage(rng))
            if rng.random() < 0.6:
                response["actual_answer"] = rng.choice(("Oslo", "", "I don't know"))
            if rng.random() < 0.8:
                response["actual_steps"] = case["actual_steps"]
            if rng.random() < 0.12:
                response["error"] = "Error: timeout"
                if rng.random() < 0.7:
                    response["status"] = "error"
            elif rng.random() < 0.03:
                response["status"] = "error"
            responses[qid] = response
        reference.append({"template_id": f"t{t}", "questions": questions})
    return {"reference": reference, "responses": responses}


def _metric_value(rng: random.Random) -> Any:
    return rng.choice(
        (
            rng.random(),
            round(rng.random(), 2),
            rng.randint(0, 3),
            1.0,
            0.0,
            True,
            False,
            None,
            "0.5",
            0.1,
            0.2,
            0.3,
            1e16,
            rng.choice((float("nan"), float("inf"), 2**64, -(2**63), 1e308)),
        )
    )


def _sample_step(rng: random.Random) -> dict[str, Any]:
    name = rng.choice(("retrieval", "retrieval", "sparql_query", "autocomplete_search", "calc"))
    if rng.random() < 0.01:
        name = "mean"  # graphrag-eval's macro then averages the counts of that name
    status = rng.choice(("success", "success", "success", "error", "timeout"))
    step: dict[str, Any] = {"name": name, "status": status}
    output = rng.choice(
        (
            '{"head": {"vars": []}, "results": {"bindings": []}}',
            '{"results": {"bindings": [{"x": {"type": "uri", "value": "urn:a"}}]}}',
            '{"results": {"bindings": 0}}',
            '{"results": "bindings"}',
            "[]",
            "not json",
            '"text"',
            None,
            {"results": {"bindings": []}},
        )
    )
    if status != "error" or rng.random() < 0.5:
        step["output"] = output
    if name == "retrieval":
        for prefix in ("retrieval_answer", "retrieval_context"):
            for metric in ("recall", "precision", "f1"):
                if rng.random() < 0.5:
                    value = _metric_value(rng)
                    step[f"{prefix}_{metric}"] = value if value != "0.5" else 0.5
            if rng.random() < 0.2:
                step[f"{prefix}_recall_cost"] = 0.001
    if rng.random() < 0.01:
        del step[rng.choice(("name", "status"))]
    return step


def aggregates_case(rng: random.Random) -> dict[str, Any]:
    samples = []
    for i in range(rng.randint(0, 8)):
        sample: dict[str, Any] = {
            "template_id": rng.choice(("t1", "t2", "t3", 7)),
            "question_id": f"q{i}",
        }
        for metric in METRICS:  # gtog's (graphrag-eval's and answer_relevance_cost)
            if rng.random() < 0.5:
                sample[metric] = _metric_value(rng)
        if rng.random() < 0.25:
            sample["error"] = "Error: failed"
            sample["status"] = "error"
        else:
            sample["status"] = rng.choice(("success", "success", "error"))
        if rng.random() < 0.8:
            sample["actual_steps"] = [_sample_step(rng) for _ in range(rng.randint(0, 4))]
        samples.append(sample)
    return {"samples": samples}


GENERATORS = {
    "steps": steps_case,
    "compare": compare_case,
    "sparql": sparql_case,
    "retrieval": retrieval_case,
    "records": records_case,
    "aggregates": aggregates_case,
}


def make_case(category: str, seed: int) -> dict[str, Any]:
    """Case number `seed` of `category` (the same on every run)."""
    return GENERATORS[category](random.Random(f"{category}:{seed}"))
