"""Index a graphrag project: graphrag's pipeline with a fast model check before it and a
count of the model replies cut at max_tokens during it (`index_project`).

    from gtog.indexing import index_project

    outcome = index_project(root)  # InputError (one line) when a model cannot answer
    outcome.warnings  # "extraction: 7 of 8 replies were cut at max_tokens ...; fix: ..."


Internal: not part of gtog's public API (see `gtog.eval`, `gtog.api`)."""

__all__: list[str] = []
