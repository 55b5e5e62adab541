"""Index tables written by graphrag 1.x and 2.x, read as graphrag 3.3's query code reads them.

What changed, as graphrag's own migration notebooks (index_migration_to_v2, _to_v3) record
it, and what of it query needs:

- 1.x names its tables `create_final_<table>.parquet`; 2.x and 3.x `<table>.parquet`.
- 1.x keeps `degree` in `create_final_nodes` (2.x moved it to `entities`, with `frequency`).
- 1.x communities and reports have `parent` but no `children` (2.x added them: a report's
  children are its community's children in the communities table).
- 1.x reports say `rank_explanation` where 2.x says `rating_explanation`.
- 1.x and 2.x text units list `document_ids`; 3.x has one `document_id` (the first).

A 0.x index (entities with `name`, communities without `community`) also lacks the
embeddings 1.x and later store apart; it is not adapted: graphrag's `index_migration_to_v1`
notebook re-embeds it.

The fixes run on the frames read, in memory; nothing is written back.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas only where a table is read (a finished run reads none)
    import pandas as pd

__all__ = [
    "QUERY_COLUMNS",
    "TABLES",
    "V1_PREFIX",
    "Fix",
    "RawReader",
    "TableLayout",
    "detect_tables",
]

TABLES = (
    "entities",
    "relationships",
    "communities",
    "community_reports",
    "text_units",
    "covariates",
)
"""The output tables gtog's searches read."""

V1_PREFIX = "create_final_"
"""graphrag 1.x's table names: `create_final_entities`, ..."""

QUERY_COLUMNS: dict[str, frozenset[str]] = {
    "entities": frozenset({"id", "human_readable_id", "title", "type", "description"}),
    "relationships": frozenset(
        {"id", "human_readable_id", "source", "target", "description", "text_unit_ids"}
    ),
    "communities": frozenset(
        {"id", "community", "level", "parent", "children", "title", "entity_ids"}
        | {"period", "size"}
    ),
    "community_reports": frozenset(
        {"id", "community", "level", "children", "title", "summary", "full_content"}
        | {"rank", "findings", "size"}
    ),
    "text_units": frozenset({"id", "text", "n_tokens", "document_id"}),
    "covariates": frozenset({"id", "subject_id", "type"}),
}
"""The columns graphrag 3.3's query code requires of each table (its typed readers and
`indexer_adapters`); any other column is optional there."""

RawReader = Callable[[str], Awaitable["pd.DataFrame"]]
"""Reads a stored table (by its stored name) as it is on disk."""


@dataclass(frozen=True)
class Fix:
    """One in-memory change to one table, and how it is named in the one-line note."""

    table: str
    note: str
    apply: Callable[[pd.DataFrame, RawReader], Awaitable[pd.DataFrame]]


@dataclass
class TableLayout:
    """Where an index's tables are, what their columns are and what they need."""

    stored: dict[str, str] = field(default_factory=dict)
    """table -> its stored name (only the tables that exist)."""
    columns: dict[str, frozenset[str]] = field(default_factory=dict)
    """table -> the columns it will have once fixed."""
    fixes: list[Fix] = field(default_factory=list)
    era: str = "3.x"
    blocked: str | None = None
    """Why no table can be read as 3.3 reads it (a 0.x index), if so."""

    @property
    def notes(self) -> list[str]:
        """What is read otherwise than it is stored, one phrase each."""
        renamed = any(t != s for t, s in self.stored.items())
        return [f"tables {V1_PREFIX}* -> *"] * renamed + [fix.note for fix in self.fixes]

    def missing(self, table: str) -> str | None:
        """What `table` lacks for query (None: it is there and complete)."""
        if table not in self.stored:
            return f"no {table} table"
        lacking = sorted(QUERY_COLUMNS.get(table, frozenset()) - self.columns[table])
        if lacking:
            return f"{self.stored[table]} has no {', '.join(lacking)} column"
        return None

    async def adapt(self, table: str, df: pd.DataFrame, read: RawReader) -> pd.DataFrame:
        """`df` (the stored `table`) with this layout's fixes applied."""
        for fix in self.fixes:
            if fix.table == table:
                df = await fix.apply(df, read)
        return df


# -- the fixes ---------------------------------------------------------------------------


def _first(ids: Any) -> str | None:
    if ids is None or isinstance(ids, float):  # a missing list reads as NaN
        return None
    items = list(ids)
    return str(items[0]) if items else None


async def _document_id(df: pd.DataFrame, read: RawReader) -> pd.DataFrame:
    import pandas as pd

    df = df.copy()
    first = [_first(ids) for ids in df["document_ids"]]
    df["document_id"] = pd.Series(first, index=df.index, dtype=object)  # None stays None
    return df.drop(columns=["document_ids"])


def _degree_from_nodes(nodes_table: str) -> Callable[..., Awaitable[pd.DataFrame]]:
    async def fix(df: pd.DataFrame, read: RawReader) -> pd.DataFrame:
        nodes = await read(nodes_table)
        # one node row per community level: any row gives the entity's degree
        degree = nodes.loc[:, ["id", "degree"]].groupby("id", sort=False).first()
        out = df.merge(degree, left_on="id", right_index=True, how="left")
        out["degree"] = out["degree"].fillna(0).astype(int)
        return out

    return fix


async def _frequency(df: pd.DataFrame, read: RawReader) -> pd.DataFrame:
    df = df.copy()
    df["frequency"] = df["text_unit_ids"].map(lambda ids: 0 if ids is None else len(ids))
    return df


def _children(communities: str | None) -> Callable[..., Awaitable[pd.DataFrame]]:
    """Each community's children: the communities whose `parent` it is, as the stored
    `communities` table says (None: the table being fixed is that table).

    A report's children come from the communities table, as graphrag's v2 migration takes
    them: a child community without a report of its own is still a child.
    """

    async def fix(df: pd.DataFrame, read: RawReader) -> pd.DataFrame:
        source = df if communities is None else await read(communities)
        pairs = source.loc[:, ["community", "parent"]].drop_duplicates()
        children = pairs.groupby("parent")["community"].apply(lambda c: sorted(int(x) for x in c))
        df = df.copy()
        df["children"] = df["community"].map(lambda c: children.get(c, []))
        return df

    return fix


def _rename(old: str, new: str) -> Callable[..., Awaitable[pd.DataFrame]]:
    async def fix(df: pd.DataFrame, read: RawReader) -> pd.DataFrame:
        return df.rename(columns={old: new})

    return fix


# -- detection ---------------------------------------------------------------------------


def _v0_sign(layout: TableLayout) -> str | None:
    columns, stored = layout.columns, layout.stored
    if "name" in columns.get("entities", frozenset()) and "title" not in columns["entities"]:
        return f"{stored['entities']} has `name`, not `title`"
    communities = columns.get("communities")
    if communities is not None and "community" not in communities:
        return f"{stored['communities']} has no `community` column"
    return None


def detect_tables(stored_columns: dict[str, frozenset[str]]) -> TableLayout:
    """The layout of an index from its stored tables' names and columns.

    `stored_columns` maps every stored table name (`entities`, `create_final_nodes`, ...)
    to its columns.
    """
    v1 = "entities" not in stored_columns and f"{V1_PREFIX}entities" in stored_columns
    prefix = V1_PREFIX if v1 else ""
    layout = TableLayout(era="1.x" if v1 else "3.x")
    for table in TABLES:
        name = prefix + table
        if name in stored_columns:
            layout.stored[table] = name
            layout.columns[table] = stored_columns[name]
    sign = _v0_sign(layout)
    if sign is not None:
        layout.era = "0.x"
        layout.blocked = f"a graphrag 0.x index ({sign})"
        return layout
    cols = layout.columns

    def add(table: str, note: str, apply: Callable[..., Awaitable[pd.DataFrame]], new: set[str]):
        layout.fixes.append(Fix(table, note, apply))
        cols[table] = cols[table] | new

    entities = cols.get("entities", frozenset())
    nodes = f"{V1_PREFIX}nodes"
    if (
        "entities" in cols
        and "degree" not in entities
        and "degree" in stored_columns.get(nodes, frozenset())
    ):
        add("entities", f"entities.degree from {nodes}", _degree_from_nodes(nodes), {"degree"})
    if "entities" in cols and "frequency" not in entities and "text_unit_ids" in entities:
        add("entities", "entities.frequency from text_unit_ids", _frequency, {"frequency"})
    communities = cols.get("communities", frozenset())
    family = "communities" in cols and {"community", "parent"} <= communities
    if family and "children" not in communities:
        add("communities", "communities.children from parent", _children(None), {"children"})
    reports = cols.get("community_reports", frozenset())
    if "community_reports" in cols and "children" not in reports and "community" in reports:
        source = layout.stored["communities"] if family else None
        if source is not None or "parent" in reports:  # else: none to take them from
            note = f"community_reports.children from {source or 'parent'}"
            add("community_reports", note, _children(source), {"children"})
    reports = cols.get("community_reports", frozenset())
    if "rank_explanation" in reports and "rating_explanation" not in reports:
        add(
            "community_reports",
            "community_reports.rank_explanation -> rating_explanation",
            _rename("rank_explanation", "rating_explanation"),
            {"rating_explanation"},
        )
        cols["community_reports"] -= {"rank_explanation"}
    units = cols.get("text_units", frozenset())
    if "document_ids" in units and "document_id" not in units:
        add("text_units", "text_units.document_ids -> document_id", _document_id, {"document_id"})
        cols["text_units"] -= {"document_ids"}
    if layout.fixes and layout.era == "3.x":
        layout.era = "2.x"
    return layout
