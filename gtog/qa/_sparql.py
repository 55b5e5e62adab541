"""Compare SPARQL JSON results up to a renaming and reordering of columns.

The reference's required columns must map one-to-one onto columns of the actual
result so that the projected rows are equal: as sequences (`ordered`), as multisets,
or as sets (`ignore_duplicates`). graphrag-eval finds that mapping by trying every
permutation of every column subset; here candidates are first pruned by a value
signature per column (its value sequence, multiset or set, depending on the row
semantics), then by the signatures of column pairs, and only the few surviving
assignments are verified. Actual columns with identical values are interchangeable
and tried once. In the ordered case the signature is exact, so the match is found
in O(rows * columns) time; in the unordered cases the work is polynomial whenever
the pruned candidate graph leaves no ambiguity, which only adversarial data avoids.

Terms keep their RDF type: IRIs, literals (with datatype or language tag), blank
nodes (equal to each other, since their labels are local to a result), and numbers,
which compare by value within an absolute 1e-8 ("up to 8 decimal points", with no
relative tolerance, so large values must agree to 1e-8 too; values are clustered
transitively, so chains of close values collapse together).

Only the reference step's `required_columns` are compared; absent or empty, no column
is required and the results match when both have rows or both have none.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import time
from collections import Counter, defaultdict
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal

from gtog.qa._semantics import GE6, SEED, Semantics, check_semantics
from gtog.qa._sparql_terms import Row, Table, sparql_tables

__all__ = [
    "BudgetExceeded",
    "RowSemantics",
    "compare_sparql_results",
    "match_columns",
    "match_columns_bruteforce",
    "match_sparql_columns",
    "sparql_tables",
]


RowSemantics = Literal["ordered", "ordered_set", "multiset", "set"]
SMALL = 6  # up to this many column choices they are tried one by one


class BudgetExceeded(RuntimeError):
    """The brute-force matcher ran out of its time budget."""


def row_semantics(ordered: bool, ignore_duplicates: bool) -> RowSemantics:
    """The row comparison implied by a reference step's flags."""
    if ordered:
        return "ordered_set" if ignore_duplicates else "ordered"
    return "set" if ignore_duplicates else "multiset"


# -- row comparison -----------------------------------------------------------------------


def _project(table: Table, columns: Sequence[int]) -> list[Row]:
    return [tuple(row[c] for c in columns) for row in table]


def _dedupe(rows: list[Row]) -> list[Row]:
    return list(dict.fromkeys(rows))


def _rows_equal(ref_rows: list[Row], act_rows: list[Row], semantics: RowSemantics) -> bool:
    if semantics == "ordered":
        return ref_rows == act_rows
    if semantics == "ordered_set":
        return _dedupe(ref_rows) == _dedupe(act_rows)
    if semantics == "multiset":
        return Counter(ref_rows) == Counter(act_rows)
    return set(ref_rows) == set(act_rows)


def _signature(values: list[Hashable], semantics: RowSemantics) -> Hashable:
    """A value that must be equal for a reference and an actual column to match."""
    if semantics == "ordered":
        return tuple(values)
    if semantics == "multiset":
        return frozenset(Counter(values).items())
    return frozenset(values)


# -- matching -------------------------------------------------------------------------------


def match_columns(
    reference: Table, actual: Table, semantics: RowSemantics, try_all_up_to: int = SMALL
) -> list[int] | None:
    """Actual column index for each reference column so that the rows match, or None.

    With at most `try_all_up_to` ways to choose the columns, each is tried in turn."""
    n_ref = len(reference[0]) if reference else 0
    n_act = len(actual[0]) if actual else 0
    if n_ref == 0:
        return []
    if n_ref > n_act or not reference or not actual:
        return None
    if semantics in ("ordered", "multiset") and len(reference) != len(actual):
        return None
    if math.perm(n_act, n_ref) <= try_all_up_to:  # few choices: trying them is cheapest
        for columns in itertools.permutations(range(n_act), n_ref):
            if _rows_equal(reference, _project(actual, columns), semantics):
                return list(columns)
        return None
    ref_cols = [[row[c] for row in reference] for c in range(n_ref)]
    act_cols = [[row[c] for row in actual] for c in range(n_act)]
    by_signature: dict[Hashable, list[int]] = defaultdict(list)
    for a, col in enumerate(act_cols):
        by_signature[_signature(col, semantics)].append(a)
    candidates = [list(by_signature.get(_signature(col, semantics), [])) for col in ref_cols]
    if any(not c for c in candidates):
        return None
    # Actual columns with equal values are interchangeable: try one of each group.
    twin_of: dict[int, int] = {}
    first_by_values: dict[tuple[Hashable, ...], int] = {}
    for a, col in enumerate(act_cols):
        twin_of[a] = first_by_values.setdefault(tuple(col), a)

    pair_cache: dict[tuple[int, int], Hashable] = {}

    def act_pair(a: int, b: int) -> Hashable:
        if (a, b) not in pair_cache:
            pairs = list(zip(act_cols[a], act_cols[b], strict=True))
            pair_cache[(a, b)] = _signature(pairs, semantics)
        return pair_cache[(a, b)]

    ref_pair = {
        (r, s): _signature(list(zip(ref_cols[r], ref_cols[s], strict=True)), semantics)
        for r in range(n_ref)
        for s in range(n_ref)
        if r < s
    }
    if any(len(c) > 1 for c in candidates) and semantics != "ordered":
        _prune_pairs(candidates, ref_pair, act_pair)
        if any(not c for c in candidates):
            return None
    order = sorted(range(n_ref), key=lambda r: len(candidates[r]))
    chosen: dict[int, int] = {}
    used: set[int] = set()

    def consistent(r: int, a: int) -> bool:
        if semantics == "ordered":
            return True
        for s, b in chosen.items():
            key, pair = ((r, s), act_pair(a, b)) if r < s else ((s, r), act_pair(b, a))
            if ref_pair[key] != pair:
                return False
        return True

    def search(depth: int) -> bool:
        if depth == n_ref:
            columns = [chosen[r] for r in range(n_ref)]
            return _rows_equal(reference, _project(actual, columns), semantics)
        r = order[depth]
        tried: set[int] = set()
        for a in candidates[r]:
            if a in used or twin_of[a] in tried:
                continue
            tried.add(twin_of[a])
            if not consistent(r, a):
                continue
            chosen[r] = a
            used.add(a)
            if search(depth + 1):
                return True
            del chosen[r]
            used.discard(a)
        return False

    return [chosen[r] for r in range(n_ref)] if search(0) else None


def _prune_pairs(
    candidates: list[list[int]],
    ref_pair: dict[tuple[int, int], Hashable],
    act_pair: Any,
) -> None:
    """Drop candidates that no candidate of another column supports (arc consistency)."""
    n_ref = len(candidates)
    changed = True
    while changed:
        changed = False
        for r in range(n_ref):
            for s in range(n_ref):
                if r == s:
                    continue
                key = (r, s) if r < s else (s, r)
                keep = []
                for a in candidates[r]:
                    supported = any(
                        b != a and ref_pair[key] == (act_pair(a, b) if r < s else act_pair(b, a))
                        for b in candidates[s]
                    )
                    if supported:
                        keep.append(a)
                if len(keep) != len(candidates[r]):
                    candidates[r][:] = keep
                    changed = True


def match_columns_bruteforce(
    reference: Table,
    actual: Table,
    semantics: RowSemantics,
    budget_sec: float | None = None,
) -> list[int] | None:
    """graphrag-eval's method: every ordered choice of actual columns; for benchmarks.

    Raises `BudgetExceeded` once `budget_sec` has passed.
    """
    n_ref = len(reference[0]) if reference else 0
    n_act = len(actual[0]) if actual else 0
    if n_ref > n_act:
        return None
    deadline = None if budget_sec is None else time.perf_counter() + budget_sec
    for columns in itertools.permutations(range(n_act), n_ref):
        if deadline is not None and time.perf_counter() > deadline:
            raise BudgetExceeded(f"brute force exceeded {budget_sec} s")
        if _rows_equal(reference, _project(actual, columns), semantics):
            return list(columns)
    return None


# -- results -------------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _parse(text: str) -> Any:
    return json.loads(text)


def as_json(value: Any) -> Any:
    """`value` parsed if it is JSON text. A group's outputs are compared pairwise, so
    each text is parsed once (cached); callers only read the value, which is shared."""
    return _parse(value) if isinstance(value, str) else value


_load = as_json


def match_sparql_columns(
    reference: Mapping[str, Any] | str,
    actual: Mapping[str, Any] | str,
    required_columns: Sequence[str] | None = None,
    ordered: bool = False,
    ignore_duplicates: bool = True,
) -> dict[str, str] | None:
    """Required column -> actual column mapping under which the results match, or None.

    `required_columns=None` requires every reference column (a convenience of this
    function; a step's absent `required_columns` is passed as `[]`). No required
    columns: `{}` when both results have rows or both have none. Raises `ValueError`
    (incl. `json.JSONDecodeError`) when either is malformed.
    """
    ref, act = _load(reference), _load(actual)
    if not isinstance(ref, Mapping) or not isinstance(act, Mapping):
        raise ValueError("a SPARQL result must be a JSON object")
    if "boolean" in ref:
        return {} if "boolean" in act and bool(ref["boolean"]) == bool(act["boolean"]) else None
    if required_columns is None:
        columns = list(ref.get("head", {}).get("vars", []) or [])
    else:
        columns = list(required_columns)
    semantics = row_semantics(ordered, ignore_duplicates)
    if columns and semantics in ("ordered", "multiset"):  # row counts must agree
        ref_n = len(ref.get("results", {}).get("bindings", []) or [])
        act_n = len(act.get("results", {}).get("bindings", []) or [])
        if ref_n and act_n and ref_n != act_n:
            return None
    ref_rows, act_rows, act_columns = sparql_tables(ref, act, columns)
    if not ref_rows or not act_rows:
        if not ref_rows and not act_rows and len(act_columns) >= len(columns):
            return dict(zip(columns, act_columns, strict=False))
        return None
    if not columns:
        return {}
    mapping = match_columns(ref_rows, act_rows, semantics)
    if mapping is None:
        return None
    return {c: act_columns[a] for c, a in zip(columns, mapping, strict=True)}


def compare_sparql_results(
    reference: Mapping[str, Any] | str,
    actual: Mapping[str, Any] | str,
    required_columns: Sequence[str] | None = None,
    ordered: bool = False,
    ignore_duplicates: bool = True,
    *,
    semantics: Semantics = SEED,
) -> float:
    """1.0 when the actual result matches the reference's required columns, else 0.0.

    Positional order as graphrag-eval's `compare_sparql_results(reference, actual,
    required_vars, results_are_ordered, ignore_duplicates)`; results may be JSON text.
    `semantics="graphrag-eval-6"`: graphrag-eval 6.6.1's text comparison
    (`gtog.qa._ge6_sparql`) of parsed results, where a text `actual` is a DESCRIBE
    result (0.0), as there.
    """
    if check_semantics(semantics) == GE6:
        from gtog.qa._ge6_sparql import compare_sparql_results_ge6

        return compare_sparql_results_ge6(
            reference,  # type: ignore[arg-type]
            actual,
            required_columns,  # type: ignore[arg-type]
            ordered,
            ignore_duplicates,
        )
    mapping = match_sparql_columns(reference, actual, required_columns, ordered, ignore_duplicates)
    return 0.0 if mapping is None else 1.0
