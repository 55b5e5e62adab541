"""What each candidate question is written from: a text unit (local), a community report
with its text units (global), or two text units that share an entity (linked).

Pure functions of an index's tables and a seed: the same index, classes and seed give the
same sources in the same order, so a second run asks the same prompts (and reuses their
replies, see `gtog.eval.generate._calls`).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import pandas as pd

__all__ = ["CLASSES", "Source", "Unit", "global_sources", "linked_sources", "local_sources"]

CLASSES = ("local", "global", "linked")
"""Question classes: one text unit; what spans the document (community reports); two text
units joined by an entity (a bridge or a comparison)."""


@dataclass(frozen=True)
class Unit:
    """One text unit of an index."""

    id: str
    text: str
    label: str
    """A short name for prompts and logs (graphrag's human-readable id)."""


@dataclass(frozen=True)
class Source:
    """The material of one generation prompt."""

    kind: str
    index_key: str
    ref: str
    """What it is, stable across runs: `unit <id>`, `community <n>`, `<entity>: <id> + <id>`."""
    units: tuple[Unit, ...]
    title: str | None = None
    """global: the report's title; linked: the shared entity."""
    report: str | None = None
    """global: the community report's text."""
    entity: str | None = None
    """linked: the shared entity's description."""


def _ids(value: Any) -> list[str]:
    if value is None or isinstance(value, str | bytes):
        return [] if value is None else [str(value)]
    try:
        return [str(v) for v in value]
    except TypeError:
        return []


def units_of(text_units: pd.DataFrame) -> dict[str, Unit]:
    """id -> `Unit` of a text_units table (empty texts left out)."""
    out: dict[str, Unit] = {}
    for row in text_units.itertuples(index=False):
        text = str(getattr(row, "text", "") or "")
        if text.strip():
            number = getattr(row, "human_readable_id", None)
            label = str(row.id) if pd.isna(number) else str(number)
            out[str(row.id)] = Unit(str(row.id), text, label)
    return out


def _shuffled(items: Iterable[Any], seed: str) -> list[Any]:
    items = list(items)
    random.Random(seed).shuffle(items)
    return items


def local_sources(key: str, units: dict[str, Unit], count: int, seed: int) -> list[Source]:
    """Up to `count` text units, in a seeded random order."""
    order = _shuffled(sorted(units), f"{seed}:{key}:local")[:count]
    return [Source("local", key, f"unit {units[u].label}", (units[u],)) for u in order]


def global_sources(
    key: str,
    reports: pd.DataFrame,
    communities: pd.DataFrame | None,
    units: dict[str, Unit],
    count: int,
) -> list[Source]:
    """Up to `count` community reports, the widest first (lowest level, most text units),
    each with the text units of its community."""
    unit_ids: dict[int, list[str]] = {}
    if communities is not None and "text_unit_ids" in communities.columns:
        for row in communities.itertuples(index=False):
            unit_ids[int(row.community)] = [u for u in _ids(row.text_unit_ids) if u in units]
    rows = []
    for row in reports.itertuples(index=False):
        text = str(getattr(row, "full_content", "") or getattr(row, "summary", "") or "")
        if not text.strip():
            continue
        community = int(row.community)
        members = unit_ids.get(community, [])
        rows.append((int(getattr(row, "level", 0) or 0), -len(members), community, row, members))
    rows.sort(key=lambda r: r[:3])
    out = []
    for _, _, community, row, members in rows[:count]:
        out.append(
            Source(
                "global",
                key,
                f"community {community}",
                tuple(units[u] for u in members),
                title=str(getattr(row, "title", "") or f"Community {community}"),
                report=str(getattr(row, "full_content", "") or row.summary),
            )
        )
    return out


def linked_sources(
    key: str, entities: pd.DataFrame, units: dict[str, Unit], count: int, seed: int
) -> list[Source]:
    """Up to `count` (entity, unit, unit) triples: two text units that mention one entity,
    in a seeded random order; every pair of units once before any pair again (through
    another entity it shares)."""
    triples = []
    for row in entities.itertuples(index=False):
        ids = sorted({u for u in _ids(row.text_unit_ids) if u in units})
        description = str(getattr(row, "description", "") or "")
        triples += [(str(row.title), description, a, b) for a, b in combinations(ids, 2)]
    seen: dict[tuple[str, str], int] = {}
    ranked = []
    for n, (title, description, a, b) in enumerate(
        _shuffled(sorted(triples), f"{seed}:{key}:linked")
    ):
        seen[(a, b)] = seen.get((a, b), 0) + 1
        ranked.append((seen[(a, b)], n, title, description, a, b))
    out = []
    for _, _, title, description, a, b in sorted(ranked)[:count]:
        ref = f"{title}: {units[a].label} + {units[b].label}"
        out.append(
            Source("linked", key, ref, (units[a], units[b]), title=title, entity=description)
        )
    return out
