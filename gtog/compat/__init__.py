"""Indexes written by older graphrag versions, read in memory as graphrag 3.3 reads them.

`inspect_index` looks at an index's table schemas and vector tables (never loading or
writing them) and returns an `IndexCompat`: which graphrag wrote it, what is read otherwise
than stored (`notes`, one line with `note`), and what a search method would miss
(`problems`). `gtog._project.Project` reads every table and vector store through it.


Internal: not part of gtog's public API (see `gtog.eval`, `gtog.api`)."""

__all__: list[str] = []
