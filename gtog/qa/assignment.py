"""Maximum-weight assignment (Hungarian algorithm), pure and dependency-free."""

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
    size = max(n, m)
    # Tie-break weight: strictly smaller than any meaningful score difference.
    eps = 1e-9 / (size + 1)
    cost = [
        [
            -(scores[i][j] + eps * (j + 1))
            if i < n and j < len(scores[i]) and scores[i][j] > 0
            else 0.0
            for j in range(size)
        ]
        for i in range(size)
    ]
    assigned = _hungarian(cost)
    result: list[int | None] = []
    for i in range(n):
        j = assigned[i]
        ok = j < len(scores[i]) and scores[i][j] > 0
        result.append(j if ok else None)
    return result


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
