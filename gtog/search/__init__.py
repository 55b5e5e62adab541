"""Search methods shared by `gtog query` and `gtog eval`: the registry, engines and metering.

`methods` is the registry (`METHODS`: a method's builder and what its answers depend on);
`builders` builds graphrag's engines and ToG from a loaded project; `metering` counts each
call's real usage; `offloop` keeps context building off the event loop; `outcome` runs one
search and turns every failure into `SearchFailed`; `vectors` searches small LanceDB tables
in memory.

    engine = await build_engine("tog", project, {"response_type": "Single Paragraph"})
    outcome = await run_search(engine, "Who gave Maren Holt the compass?")
    outcome.result.response, outcome.usage.total_calls
"""

from gtog.search.builders import AnsweringBasicSearch, build_basic, build_local, build_tog
from gtog.search.metering import MeteredCompletion
from gtog.search.methods import (
    DEFAULT_RESPONSE_TYPE,
    METHODS,
    Builder,
    Method,
    build_engine,
    load_plugin_methods,
    method_entry,
    model_spec,
)
from gtog.search.offloop import (
    OffLoopSearch,
    PrebuiltContext,
    QueryEmbedder,
    QuestionAttributes,
    context_threads,
)
from gtog.search.outcome import (
    SearchEngine,
    SearchFailed,
    SearchOutcome,
    retrieved_sources,
    run_search,
)

__all__ = [
    "DEFAULT_RESPONSE_TYPE",
    "METHODS",
    "AnsweringBasicSearch",
    "Builder",
    "MeteredCompletion",
    "Method",
    "OffLoopSearch",
    "PrebuiltContext",
    "QueryEmbedder",
    "QuestionAttributes",
    "SearchEngine",
    "SearchFailed",
    "SearchOutcome",
    "build_basic",
    "build_engine",
    "build_local",
    "build_tog",
    "context_threads",
    "load_plugin_methods",
    "method_entry",
    "model_spec",
    "retrieved_sources",
    "run_search",
]
