"""Indexes written by older graphrag versions, read in memory as graphrag 3.3 reads them.

`inspect_index` looks at an index's table schemas and vector tables (never loading or
writing them) and returns an `IndexCompat`: which graphrag wrote it, what is read otherwise
than stored (`notes`, one line with `note`), and what a search method would miss
(`problems`). `gtog.project.Project` reads every table and vector store through it.
"""

from gtog.compat.index import IndexCompat, inspect_index, output_folder, table_provider
from gtog.compat.tables import QUERY_COLUMNS, TABLES, V1_PREFIX, TableLayout, detect_tables
from gtog.compat.vectors import (
    LEGACY_NAMES,
    LEGACY_SUFFIXES,
    VectorTable,
    find_vector_tables,
    old_prefix,
)

__all__ = [
    "LEGACY_NAMES",
    "LEGACY_SUFFIXES",
    "QUERY_COLUMNS",
    "TABLES",
    "V1_PREFIX",
    "IndexCompat",
    "TableLayout",
    "VectorTable",
    "detect_tables",
    "find_vector_tables",
    "inspect_index",
    "old_prefix",
    "output_folder",
    "table_provider",
]
