"""Near-duplicates out, then n per class: pure functions of the candidates and a seed."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

import numpy as np

__all__ = ["near_duplicates", "quotas", "sample"]

T = TypeVar("T")


def near_duplicates(vectors: Sequence[Sequence[float]], threshold: float) -> list[int | None]:
    """For each vector in order, the index of an earlier kept vector it is a near-duplicate
    of (cosine similarity >= `threshold`), else None (kept)."""
    if not len(vectors):
        return []
    m = np.asarray(vectors, dtype=float)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    m = m / np.where(norms == 0, 1.0, norms)
    sims = m @ m.T
    kept: list[int] = []
    out: list[int | None] = []
    for i in range(len(m)):
        twin = next((k for k in kept if sims[i, k] >= threshold), None)
        out.append(twin)
        if twin is None:
            kept.append(i)
    return out


def quotas(n: int, keys: Sequence[str]) -> dict[str, int]:
    """`n` questions spread over `keys` as evenly as possible (the first keys get the rest)."""
    base, rest = divmod(n, len(keys)) if keys else (0, 0)
    return {k: base + (1 if i < rest else 0) for i, k in enumerate(keys)}


def sample(
    pools: dict[str, list[T]], n: int, seed: str
) -> tuple[dict[str, list[T]], dict[str, int]]:
    """`n` items from the per-key `pools`, each key's quota first (`quotas`); a key short
    of its quota leaves its place to the keys with items to spare, in key order. Returns the
    items per key (in pool order) and the shortfall per key against its quota."""
    want = quotas(n, list(pools))
    chosen: dict[str, list[int]] = {}
    for key, pool in pools.items():
        order = list(range(len(pool)))
        random.Random(f"{seed}:{key}").shuffle(order)
        chosen[key] = order[: want[key]]
    missing = n - sum(len(c) for c in chosen.values())
    for key, pool in pools.items():
        if missing <= 0:
            break
        order = list(range(len(pool)))
        random.Random(f"{seed}:{key}").shuffle(order)
        spare = [i for i in order if i not in chosen[key]][:missing]
        chosen[key] += spare
        missing -= len(spare)
    picked = {k: [pools[k][i] for i in sorted(c)] for k, c in chosen.items()}
    short = {k: max(0, want[k] - len(pools[k])) for k in pools}
    return picked, short
