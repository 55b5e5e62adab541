"""graphrag-eval 6.6.1's SPARQL result comparison (`semantics="graphrag-eval-6"`).

Every term becomes text: an IRI, a blank node (its label) or a plain literal is its
`value`; an integer datatype is `int(value)`, a decimal/double/float `float(value)`
truncated to 5 decimals, `xsd:boolean` the value's lower-case text in ("true", "1"); a
value that does not convert stays as given; a missing binding is `None`. A row is the
concatenation of `str()` of its cells (no separator). The required columns match when
some ordered choice of distinct actual columns gives equal rows: as lists (`ordered`),
as sets (`ignore_duplicates`) or as multisets.

The answer equals graphrag-eval's, which tries every ordered choice of columns; here a
choice of columns (as a set) is first checked on the lengths of its rows, which do not
depend on the column order, and orders are tried only for the choices that pass, each
cell appended only while the rows built so far are still prefixes of reference rows.
Raises where graphrag-eval raises (KeyError, TypeError, AttributeError, OverflowError
on malformed results).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from gtog.qa._sparql_terms import NUMERIC_TYPES

__all__ = ["compare_sparql_results_ge6", "term_text"]

_XSD = "http://www.w3.org/2001/XMLSchema#"
_DECIMAL_TYPES = frozenset(_XSD + t for t in ("decimal", "double", "float"))
# graphrag-eval 6.6.1 reads these as floats; every other numeric XSD type as an integer,
# except nonPositiveInteger and negativeInteger, which it leaves as text.
_INTEGER_TYPES = (
    NUMERIC_TYPES - _DECIMAL_TYPES - {_XSD + "nonPositiveInteger", _XSD + "negativeInteger"}
)
_BOOLEAN = _XSD + "boolean"


def _term_value(term: Any) -> Any:
    """A binding's value as graphrag-eval 6.6.1 compares it (before `str()`)."""
    if not isinstance(term, dict):
        return term
    value = term.get("value")
    if term.get("type") not in ("literal", "typed-literal"):
        return value
    datatype = term.get("datatype")
    if not datatype:
        return value
    if datatype in _INTEGER_TYPES:
        try:
            return int(value)
        except (ValueError, TypeError):
            return value
    if datatype in _DECIMAL_TYPES:
        try:
            number = float(value)
        except (ValueError, TypeError):
            return value
        try:
            return math.trunc(number * 100000.0) / 100000.0
        except ValueError:  # nan: the float itself (inf raises OverflowError, as there)
            return number
    if datatype == _BOOLEAN:
        return value.lower() in ("true", "1")
    return value


def term_text(term: Any) -> str:
    """The text a binding contributes to its row."""
    return str(_term_value(term))


def _columns(names: Sequence[Any], bindings: Sequence[Any]) -> dict[Any, list[str]]:
    """Each column's cell texts, one per binding (`None` where a binding lacks it)."""
    return {
        name: [str(_term_value(b[name])) if name in b else "None" for b in bindings]
        for name in names
    }


def _rows_match(reference: list[str], actual: list[str], ordered: bool, no_dupes: bool) -> bool:
    if ordered:
        return reference == actual
    if no_dupes:
        return set(reference) == set(actual)
    return Counter(reference) == Counter(actual)


def _lengths_match(reference: list[int], actual: list[int], ordered: bool, no_dupes: bool) -> bool:
    """The rows' lengths agree as the rows must (a necessary condition)."""
    return _rows_match(reference, actual, ordered, no_dupes)  # type: ignore[arg-type]


def _some_order_matches(
    reference_rows: list[str],
    columns: list[list[str]],
    ordered: bool,
    no_dupes: bool,
    prefixes: set[str] | None,
) -> bool:
    """Whether some order of `columns` concatenates to rows matching the reference.

    Rows are grown one column at a time and kept only while each is a prefix of its
    reference row (`ordered`) or of some reference row (`prefixes`, unordered)."""
    n_rows = len(columns[0])

    def fits(rows: list[str]) -> bool:
        if prefixes is None:
            return all(t.startswith(r) for t, r in zip(reference_rows, rows, strict=True))
        return all(r in prefixes for r in rows)

    def extend(rows: list[str], left: list[int]) -> bool:
        if not left:
            return _rows_match(reference_rows, rows, ordered, no_dupes)
        for position, c in enumerate(left):
            column = columns[c]
            grown = [rows[i] + column[i] for i in range(n_rows)]
            if fits(grown) and extend(grown, left[:position] + left[position + 1 :]):
                return True
        return False

    return extend([""] * n_rows, list(range(len(columns))))


def _compare_values(
    required: Sequence[Any],
    reference: dict[Any, list[str]],
    actual_names: Sequence[Any],
    actual: dict[Any, list[str]],
    ordered: bool,
    no_dupes: bool,
) -> bool:
    n_rows = len(reference[required[0]])
    reference_rows = ["".join(reference[name][i] for name in required) for i in range(n_rows)]
    reference_lengths = [len(row) for row in reference_rows]
    act_columns = [actual[name] for name in actual_names]
    act_lengths = [[len(cell) for cell in column] for column in act_columns]
    n_act_rows = len(act_columns[0])
    if (ordered or not no_dupes) and n_act_rows != n_rows:
        return False
    prefixes: set[str] | None = None
    for chosen in itertools.combinations(range(len(act_columns)), len(required)):
        lengths = [sum(act_lengths[c][i] for c in chosen) for i in range(n_act_rows)]
        if not _lengths_match(reference_lengths, lengths, ordered, no_dupes):
            continue
        if prefixes is None and not ordered:
            prefixes = {row[:i] for row in reference_rows for i in range(len(row) + 1)}
        chosen_columns = [act_columns[c] for c in chosen]
        if _some_order_matches(reference_rows, chosen_columns, ordered, no_dupes, prefixes):
            return True
    return False


def compare_sparql_results_ge6(
    reference: Mapping[str, Any],
    actual: Mapping[str, Any] | str,
    required_columns: Sequence[Any],
    ordered: Any = False,
    ignore_duplicates: Any = True,
) -> float:
    """1.0 if the results match as graphrag-eval 6.6.1 decides, else 0.0 (parsed results)."""
    if isinstance(actual, str):  # a DESCRIBE/CONSTRUCT result
        return 0.0
    if "boolean" in reference:
        return float("boolean" in actual and reference["boolean"] == actual["boolean"])
    reference_bindings = reference["results"]["bindings"]
    actual_bindings = actual.get("results", {}).get("bindings", [])
    actual_names = actual["head"].get("vars", [])
    if not actual_bindings and not reference_bindings:
        return float(len(actual_names) >= len(required_columns))
    if not actual_bindings or not reference_bindings:
        return 0.0
    if len(required_columns) > len(actual_names):
        return 0.0
    if len(required_columns) == 0:
        return 1.0
    reference_columns = _columns(required_columns, reference_bindings)
    actual_columns = _columns(actual_names, actual_bindings)
    return float(
        _compare_values(
            required_columns,
            reference_columns,
            actual_names,
            actual_columns,
            bool(ordered),
            bool(ignore_duplicates),
        )
    )
