"""The deliberate differences of gtog.qa's default rules from graphrag-eval 6.6.1, each
with a small witness case that shows it.

`run_witnesses` runs every witness through graphrag-eval 6.6.1 (the throwaway venv)
and through gtog in both modes; `readme_table` renders docs/qa-eval.md's table from that,
so each row's example is measured, and a row whose difference has gone (or whose
`graphrag-eval-6` value differs from 6.6.1's) is flagged.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.support.qa_parity import run_gtog, same

SPARQL_JSON = "application/sparql-results+json"
XSD = "http://www.w3.org/2001/XMLSchema#"


def _result(columns: list[str], rows: list[list[Any]]) -> dict[str, Any]:
    bindings = [dict(zip(columns, row, strict=True)) for row in rows]
    return {"head": {"vars": columns}, "results": {"bindings": bindings}}


def _lit(value: str, datatype: str | None = None) -> dict[str, str]:
    term = {"type": "literal", "value": value}
    return {**term, "datatype": XSD + datatype} if datatype else term


def _step(name: str, output: Any, sid: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "id": sid, "status": "success", "output": output, **extra}


def _docs(*ids: str) -> str:
    return json.dumps([{"id": i, "text": i} for i in ids])


def _sparql_ref(result: dict[str, Any], columns: list[str], **flags: Any) -> dict[str, Any]:
    return {
        "name": "sparql_query",
        "output": json.dumps(result),
        "output_media_type": SPARQL_JSON,
        "required_columns": columns,
        **flags,
    }


def _one(template: str, reference: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    """A records case of one question `q`."""
    question = {"id": "q", "question_text": "Which?", **reference}
    return {
        "reference": [{"template_id": template, "questions": [question]}],
        "responses": {"q": {"question_id": "q", **response}},
    }


def _score(outcome: dict[str, Any]) -> str:
    if "raised" in outcome:
        return "raises " + outcome["raised"].split(":")[0]
    value = outcome["ok"]
    if isinstance(value, dict) and "steps_score" in value:
        value = value["steps_score"]
    if isinstance(value, list):  # records
        value = value[0].get("steps_score", value[0].get("status"))
    return _num(value)


def _num(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return json.dumps(value)


def _record_keys(*keys: str) -> Callable[[dict[str, Any]], str]:
    def show(outcome: dict[str, Any]) -> str:
        if "raised" in outcome:
            return "raises " + outcome["raised"].split(":")[0]
        record = outcome["ok"][0]
        return ", ".join(f"`{k}`: {_num(record[k])}" if k in record else f"no `{k}`" for k in keys)

    return show


def _aggregate(*path: str) -> Callable[[dict[str, Any]], str]:
    def show(outcome: dict[str, Any]) -> str:
        value: Any = outcome["ok"]
        for key in path:
            if not isinstance(value, dict) or key not in value:
                return "absent"
            value = value[key]
        return _num(value)

    return show


@dataclass
class Witness:
    """One difference: gtog's default, graphrag-eval 6.6.1's behaviour, the reason, and a
    case (category, data) whose outcome `show` renders."""

    default: str
    ge6: str
    why: str
    category: str
    case: dict[str, Any]
    show: Callable[[dict[str, Any]], str] = field(default=_score)


GREEDY = [
    [
        {"name": "retrieval", "output": _docs("d1", "d2")},
        {"name": "calc", "output": "7"},
    ]
]
GREEDY_ACTUAL = [
    _step("retrieval", _docs("d1", "d2"), "full", args={"k": 2}),
    _step("retrieval", _docs("d1"), "half", args={"k": 2}),
    _step("calc", "7", "c"),
]
AGG_SAMPLES = [
    {"template_id": "a", "status": "success", "input_tokens": 100, "steps_score": True},
    {"template_id": "b", "status": "success", "steps_score": 0.5, "answer_relevance_cost": 0.01},
    {"template_id": "b", "status": "error", "steps_score": 1.0},
]

WITNESSES = [
    Witness(
        "steps of a group matched by the best assignment",
        "first hit, latest step first",
        "a greedy first hit can leave a better match unused",
        "steps",
        {"reference_steps": GREEDY, "actual_steps": GREEDY_ACTUAL},
    ),
    Witness(
        "`steps_score`: the mean over the groups of the best matching of all groups "
        "together; a partly matched group does not end it",
        "the mean over all groups, matched group by group greedily; matching stops at "
        "the first group not fully matched",
        "the best matching under the same rules is never below the greedy one",
        "steps",
        {
            "reference_steps": [
                [{"name": "find", "output": "x"}],
                [{"name": "calc", "output": "7"}, {"name": "calc", "output": "8"}],
            ],
            "actual_steps": [_step("find", "x", "f"), _step("calc", "7", "c")],
        },
    ),
    Witness(
        "only steps of the same name match",
        "a step of any name with an equal output matches",
        "the seed: the executed step's name is compared",
        "steps",
        {
            "reference_steps": [[{"name": "lookup", "output": "Oslo"}]],
            "actual_steps": [_step("search", "Oslo", "s")],
        },
    ),
    Witness(
        "`iri_discovery`, `retrieve_time_series`, `retrieve_data_points`: outputs compared",
        "IRI found in an `autocomplete_search`/`sparql_query` output; time-series args",
        "not in the seed",
        "compare",
        {
            "reference": {"name": "iri_discovery", "output": "urn:s1"},
            "actual": _step("sparql_query", "... <urn:s1> ...", "s"),
        },
    ),
    Witness(
        "the SPARQL comparison for any step with the SPARQL media type",
        "only for `sparql_query` steps; others compare as text",
        "the seed: the media type decides",
        "compare",
        {
            "reference": {
                **_sparql_ref(_result(["a"], [[_lit("1")]]), ["a"]),
                "name": "query",
            },
            "actual": _step("query", json.dumps(_result(["b"], [[_lit("1")]])), "q"),
        },
    ),
    Witness(
        "recall@k: relevant in the top k / `min(k, relevant)`",
        "the first k relevant ids (list order) found in the top k / their number",
        "the seed: divide by the first k relevant items",
        "retrieval",
        {"relevant": ["d1", "d2"], "retrieved": ["d2"], "k": 1},
        lambda o: _num(o["ok"]["recall_at_k"]["ok"]),
    ),
    Witness(
        "average precision: a repeated document counts once",
        "counted again (AP can exceed 1)",
        "AP stays in [0, 1]",
        "retrieval",
        {"relevant": ["d1"], "retrieved": ["d1", "d1"], "k": None},
        lambda o: _num(o["ok"]["average_precision"]["ok"]),
    ),
    Witness(
        "RDF terms keep their kind: an IRI is not a literal of the same text",
        "values compared as text",
        '`"http://a"` the literal is not the IRI',
        "sparql",
        {
            "args": [
                _result(["x"], [[{"type": "uri", "value": "http://a"}]]),
                _result(["x"], [[_lit("http://a")]]),
                ["x"],
            ]
        },
    ),
    Witness(
        "row cells compared one by one",
        'a row is its cells\' texts concatenated: ("ab", "c") equals ("a", "bc")',
        "cells are values, not text fragments",
        "sparql",
        {
            "args": [
                _result(["x", "y"], [[_lit("ab"), _lit("c")]]),
                _result(["x", "y"], [[_lit("a"), _lit("bc")]]),
                ["x", "y"],
            ]
        },
    ),
    Witness(
        "blank nodes equal each other",
        "compared by label",
        "labels are local to one result",
        "sparql",
        {
            "args": [
                _result(["x"], [[{"type": "bnode", "value": "b0"}]]),
                _result(["x"], [[{"type": "bnode", "value": "n7"}]]),
                ["x"],
            ]
        },
    ),
    Witness(
        "numbers equal within an absolute 1e-8, any numeric datatype",
        "floats truncated to 5 decimals, integers exact, compared as text",
        "the seed says 1e-8",
        "sparql",
        {
            "args": [
                _result(["x"], [[_lit("1", "integer")]]),
                _result(["x"], [[_lit("1.0", "decimal")]]),
                ["x"],
            ]
        },
    ),
    Witness(
        "`ordered` with `ignore_duplicates` (default true) drops duplicate rows first",
        "ordered rows compared with their duplicates",
        'the seed: duplicates are ignored "for the comparison"',
        "sparql",
        {
            "args": [
                _result(["x"], [[_lit("a")], [_lit("b")]]),
                _result(["x"], [[_lit("a")], [_lit("a")], [_lit("b")]]),
                ["x"],
                True,
            ]
        },
    ),
    Witness(
        "a step without `status` is a successful one; a malformed item is that question's error",
        "`status` required: raises and stops the whole run",
        "one bad item must not lose the others",
        "records",
        _one(
            "t",
            {"reference_steps": [[{"name": "calc", "output": "7"}]]},
            {"actual_steps": [{"name": "calc", "output": "7", "id": "c"}]},
        ),
    ),
    Witness(
        "an error response (an `error` key or `status: error`) is not scored",
        "scored like the others; only an `error` key makes it an error",
        "a failed answer is not a score",
        "records",
        _one(
            "t",
            {"reference_steps": [[{"name": "calc", "output": "7"}]]},
            {"error": "timeout", "actual_steps": [_step("calc", "7", "c")]},
        ),
        _record_keys("status", "steps_score"),
    ),
    Witness(
        "`total_tokens` derived from input + output; no `actual_steps` key when none",
        "usage copied as given; `actual_steps: []` when none",
        "the record says what the response said, plus its total",
        "records",
        _one("t", {}, {"input_tokens": 10, "output_tokens": 5}),
        _record_keys("total_tokens", "actual_steps"),
    ),
    Witness(
        "LLM metrics without a judge model: `*_error` keys (`OPENAI_API_KEY` selects one)",
        "no LLM keys without a config; the environment is not read",
        "a metric not computed is reported, never silently absent",
        "records",
        _one("t", {"reference_answer": "Oslo"}, {"actual_answer": "Oslo"}),
        _record_keys("answer_eval_error", "answer_correctness_error"),
    ),
    Witness(
        "booleans are not numbers in the statistics",
        "`true` counts as 1",
        "a flag is not a score",
        "aggregates",
        {"samples": AGG_SAMPLES},
        _aggregate("per_template", "a", "steps_score", "sum"),
    ),
    Witness(
        "statistics over successful samples only; a metric no sample has is absent",
        "error samples included; token/time statistics always present (0 when empty)",
        "a failure is never a number",
        "aggregates",
        {"samples": AGG_SAMPLES},
        _aggregate("per_template", "b", "input_tokens", "sum"),
    ),
    Witness(
        "macro means over the templates that have the metric",
        "templates without it count with 0 (token/time metrics)",
        "an absent value is not a 0",
        "aggregates",
        {"samples": AGG_SAMPLES},
        _aggregate("macro", "input_tokens", "mean"),
    ),
    Witness(
        "costs (`*_cost`) aggregated",
        "not aggregated",
        "cost is half of the question",
        "aggregates",
        {"samples": AGG_SAMPLES},
        _aggregate("micro", "answer_relevance_cost", "sum"),
    ),
]

STATIC_ROWS = [
    (
        "LLM metrics: gtog's judge prompts through graphrag_llm, one retry on a bad reply",
        "RAGAS through LiteLLM",
        "no second HTTP client (not compared: it needs a model)",
    ),
    (
        "SPARQL columns matched by pruning value signatures (see below)",
        "every permutation of every column subset",
        "10-column results take seconds there (same answers)",
    ),
]


def run_witnesses(exe: Any, worker: Callable[[Any, str, Any], Any]) -> list[dict[str, Any]]:
    """Each witness's rendered outcome in graphrag-eval 6.6.1 and in gtog's two modes."""
    outcomes = worker(exe, "run", [(w.category, w.case) for w in WITNESSES])["outcomes"]
    rows = []
    for w, expected in zip(WITNESSES, outcomes, strict=True):
        default = run_gtog(w.category, w.case, "seed")
        ge6 = run_gtog(w.category, w.case, "graphrag-eval-6")
        exact = ("ok" in expected and "ok" in ge6 and same(expected["ok"], ge6["ok"])) or (
            "raised" in expected and ("raised" in ge6 or w.category == "records")
        )
        rows.append(
            {
                "default": w.default,
                "graphrag-eval": w.ge6,
                "why": w.why,
                "example": {
                    "default": w.show(default),
                    "graphrag-eval 6.6.1": w.show(expected),
                    "graphrag-eval-6 mode": w.show(ge6),
                },
                "graphrag-eval-6 mode equals 6.6.1": exact,
                "default differs": w.show(default) != w.show(expected),
            }
        )
    return rows


def readme_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| default rules (gtog) | graphrag-eval 6.6.1 = `graphrag-eval-6` | why "
        "| example: default / 6.6.1 |",
        "|---|---|---|---|",
    ]
    for row in rows:
        example = row["example"]
        flag = "" if row["default differs"] else " (no difference!)"
        if not row["graphrag-eval-6 mode equals 6.6.1"]:
            flag += " (graphrag-eval-6 mode differs from 6.6.1!)"
        lines.append(
            f"| {row['default']} | {row['graphrag-eval']} | {row['why']} "
            f"| {example['default']} / {example['graphrag-eval 6.6.1']}{flag} |"
        )
    for default, ge6, why in STATIC_ROWS:
        lines.append(f"| {default} | {ge6} | {why} | |")
    return "\n".join(lines)
