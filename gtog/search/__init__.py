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

from typing import TYPE_CHECKING

from gtog.lazy import lazy_exports

if TYPE_CHECKING:
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

_EXPORTS = {
    "AnsweringBasicSearch": "gtog.search.builders",
    "build_basic": "gtog.search.builders",
    "build_local": "gtog.search.builders",
    "build_tog": "gtog.search.builders",
    "MeteredCompletion": "gtog.search.metering",
    "DEFAULT_RESPONSE_TYPE": "gtog.search.methods",
    "METHODS": "gtog.search.methods",
    "Builder": "gtog.search.methods",
    "Method": "gtog.search.methods",
    "build_engine": "gtog.search.methods",
    "load_plugin_methods": "gtog.search.methods",
    "method_entry": "gtog.search.methods",
    "model_spec": "gtog.search.methods",
    "OffLoopSearch": "gtog.search.offloop",
    "PrebuiltContext": "gtog.search.offloop",
    "QueryEmbedder": "gtog.search.offloop",
    "QuestionAttributes": "gtog.search.offloop",
    "context_threads": "gtog.search.offloop",
    "SearchEngine": "gtog.search.outcome",
    "SearchFailed": "gtog.search.outcome",
    "SearchOutcome": "gtog.search.outcome",
    "retrieved_sources": "gtog.search.outcome",
    "run_search": "gtog.search.outcome",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

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
