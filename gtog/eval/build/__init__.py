"""Build what is missing (`gtog eval prepare`, `gtog eval --build-indexes`).

For each index key whose project has no complete index: create the project (from
`indexes_template`, or `gtog init`'s defaults), copy the key's documents into it, estimate
the indexing calls and price, and index it with graphrag's own pipeline and cache, keys in
parallel, each in its own process (`worker`); a key that fails is reported and the others
go on. See `plan`, `estimate`, `projects`, `indexing` (the one function that indexes one
project) and `runner`.


Internal: not part of gtog's public API (see `gtog.eval`, `gtog.api`)."""

__all__: list[str] = []
