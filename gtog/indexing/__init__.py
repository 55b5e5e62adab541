"""Index a graphrag project: graphrag's pipeline with a fast model check before it and a
count of the model replies cut at max_tokens during it (`index_project`).

    from gtog.indexing import index_project

    outcome = index_project(root)  # InputError (one line) when a model cannot answer
    outcome.warnings  # "extraction: 7 of 8 replies were cut at max_tokens ...; fix: ..."
"""

from gtog.indexing.build import IndexOutcome, cut_warning, index_project, load_index_config
from gtog.indexing.probe import check_models

__all__ = ["IndexOutcome", "check_models", "cut_warning", "index_project", "load_index_config"]
