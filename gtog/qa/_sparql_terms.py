"""RDF terms of SPARQL JSON results as comparable keys, and results as row tables.

Terms keep their RDF type: IRIs, literals (with datatype or language tag), blank
nodes (equal to each other, since their labels are local to a result), and numbers,
which compare by value within an absolute 1e-8 (values are clustered transitively, so
chains of close values collapse together).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

__all__ = ["ABS_TOL", "NUMERIC_TYPES", "Row", "Table", "sparql_tables"]

XSD = "http://www.w3.org/2001/XMLSchema#"
NUMERIC_TYPES = frozenset(
    XSD + t
    for t in (
        "integer",
        "int",
        "long",
        "short",
        "byte",
        "decimal",
        "double",
        "float",
        "nonNegativeInteger",
        "positiveInteger",
        "nonPositiveInteger",
        "negativeInteger",
        "unsignedLong",
        "unsignedInt",
        "unsignedShort",
        "unsignedByte",
    )
)
ABS_TOL = 1e-8

Row = tuple[Hashable, ...]
Table = list[Row]


def _raw_term(term: Any) -> Hashable:
    """A hashable key for one binding, numbers left as ("num", float) for clustering."""
    if term is None:
        return None
    if type(term) is not dict and not isinstance(term, Mapping):
        return ("lit", str(term), "")
    kind = term.get("type")
    value = term.get("value")
    if kind == "uri":
        return ("uri", str(value))
    if kind == "bnode":
        return ("bnode",)
    if kind in ("literal", "typed-literal"):
        lang = term.get("xml:lang") or term.get("lang")
        if lang:
            return ("lit", str(value), "@" + str(lang).lower())
        datatype = term.get("datatype") or ""
        if datatype in NUMERIC_TYPES:
            try:
                number = float(str(value).strip())
            except ValueError:
                return ("lit", str(value), datatype)
            return ("num", number)
        if datatype == XSD + "boolean":
            return ("bool", str(value).strip().lower() in ("true", "1"))
        if datatype == XSD + "string":
            datatype = ""
        return ("lit", str(value), datatype)
    if kind == "triple":
        return ("triple", json.dumps(value, sort_keys=True))
    return ("other", str(kind), json.dumps(value, sort_keys=True, default=str))


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=0.0, abs_tol=ABS_TOL)


def _canonical_numbers(values: set[float]) -> dict[float, float]:
    """Map each number to the smallest member of its cluster of close values."""
    canon: dict[float, float] = {}
    finite = sorted(v for v in values if not math.isnan(v))
    start = prev = None
    for v in finite:
        if prev is None or not _close(prev, v):
            start = v
        canon[v] = start  # type: ignore[assignment]
        prev = v
    return canon


def sparql_tables(
    reference: Mapping[str, Any],
    actual: Mapping[str, Any],
    reference_columns: Sequence[str],
) -> tuple[Table, Table, list[str]]:
    """Reference rows over `reference_columns`, actual rows over all its columns, and
    the actual column names; numbers are replaced by a shared canonical value."""
    ref_bindings = reference.get("results", {}).get("bindings", []) or []
    act_bindings = actual.get("results", {}).get("bindings", []) or []
    act_columns = list(actual.get("head", {}).get("vars", []) or [])
    for binding in act_bindings:
        for name in binding:
            if name not in act_columns:
                act_columns.append(name)
    ref_raw = [tuple(_raw_term(b.get(c)) for c in reference_columns) for b in ref_bindings]
    act_raw = [tuple(_raw_term(b.get(c)) for c in act_columns) for b in act_bindings]
    numbers = {
        cell[1]
        for row in itertools.chain(ref_raw, act_raw)
        for cell in row
        if isinstance(cell, tuple) and cell[0] == "num"
    }
    if not numbers:
        return ref_raw, act_raw, act_columns
    canon = _canonical_numbers(numbers)

    def fix(row: Row) -> Row:
        return tuple(
            ("num", canon.get(c[1], "nan"))
            if isinstance(c, tuple) and len(c) == 2 and c[0] == "num"
            else c
            for c in row
        )

    return [fix(r) for r in ref_raw], [fix(r) for r in act_raw], act_columns
