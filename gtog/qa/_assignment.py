"""Maximum-weight assignment: every assignment tried for a few rows and columns, the
Hungarian algorithm beyond; pure and dependency-free."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["best_assignment"]


def best_assignment(scores: Sequence[Sequence[float]]) -> list[int | None]:
    """For each row, the column it is assigned to (or None) maximising the total score.

    Each column is used at most once and only positive scores count as assignments.
    Among equally good assignments, later columns are preferred (ties go to the most
    recent actual step, as in graphrag-eval). Runs in O(n^2 m) for n rows, m columns.
    """
    n = len(scores)
    m = max((len(row) for row in scores), default=0)
    if n == 0 or m == 0:
        return [None] * n
    if n == 1:  # one reference step: its best column, the latest among equals
        row = scores[0]
        best = max(range(len(row)), key=lambda j: (row[j], j))
        return [best if row[best] > 0 else None]
    # Only columns with some positive score can be assigned (in their original order,
    # so the tie-break below still prefers later ones).
    columns = [j for j in range(m) if any(j < len(row) and row[j] > 0 for row in scores)]
    if not columns:
        return [None] * n
    if len(columns) > n * n:  # a best assignment uses only each row's n best columns
        columns = _top_columns(scores, columns, n)
    size = max(n, len(columns))
    # Tie-break weight: strictly smaller than any meaningful score difference.
    eps = 1e-9 / (size + 1)
    if n <= 4 and len(columns) <= 8:  # small (the usual case): search every assignment
        return _search(scores, columns, eps)
    cost = [
        [
            -(scores[i][columns[c]] + eps * (c + 1))
            if i < n and c < len(columns) and _positive(scores[i], columns[c])
            else 0.0
            for c in range(size)
        ]
        for i in range(size)
    ]
    assigned = _hungarian(cost)
    result: list[int | None] = []
    for i in range(n):
        c = assigned[i]
        ok = c < len(columns) and _positive(scores[i], columns[c])
        result.append(columns[c] if ok else None)
    return result


def _top_columns(scores: Sequence[Sequence[float]], columns: list[int], n: int) -> list[int]:
    """The columns among some row's `n` best (score, then the later column), in order.

    Some best assignment uses no other: a row assigned elsewhere has one of its `n` best
    columns free (the other rows hold at most n - 1), and moving there loses nothing.
    """
    keep: set[int] = set()
    for row in scores:
        ranked = sorted((j for j in columns if _positive(row, j)), key=lambda j: (row[j], j))
        keep.update(ranked[-n:])
    return sorted(keep)


def _positive(row: Sequence[float], j: int) -> bool:
    return j < len(row) and row[j] > 0


def _search(scores: Sequence[Sequence[float]], columns: list[int], eps: float) -> list[int | None]:
    """The best assignment by trying them all (same objective as the Hungarian
    algorithm's: scores plus `eps` per position of each chosen column; among equal
    values the first found). Fast for a few rows and columns."""
    n = len(scores)
    options = [
        [(j, row[j] + eps * (c + 1)) for c, j in enumerate(columns) if _positive(row, j)]
        for row in scores
    ]
    best: list[int | None] = [None] * n
    best_value = 0.0
    chosen: list[int | None] = [None] * n

    def walk(i: int, used: frozenset[int], value: float) -> None:
        nonlocal best, best_value
        if i == n:
            if value > best_value:
                best, best_value = list(chosen), value
            return
        chosen[i] = None
        walk(i + 1, used, value)
        for j, score in options[i]:
            if j not in used:
                chosen[i] = j
                walk(i + 1, used | {j}, value + score)
        chosen[i] = None

    walk(0, frozenset(), 0.0)
    return best


def _hungarian(cost: list[list[float]]) -> list[int]:
    """Minimum-cost perfect matching of a square matrix; column of each row."""
    size = len(cost)
    inf = float("inf")
    u = [0.0] * (size + 1)
    v = [0.0] * (size + 1)
    p = [0] * (size + 1)
    way = [0] * (size + 1)
    for i in range(1, size + 1):
        p[0] = i
        j0 = 0
        minv = [inf] * (size + 1)
        used = [False] * (size + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = p[j0], inf, 0
            for j in range(1, size + 1):
                if not used[j]:
                    cur = cost[i0 - 1][j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j], way[j] = cur, j0
                    if minv[j] < delta:
                        delta, j1 = minv[j], j
            for j in range(size + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
    column_of = [0] * size
    for j in range(1, size + 1):
        if p[j]:
            column_of[p[j] - 1] = j - 1
    return column_of
