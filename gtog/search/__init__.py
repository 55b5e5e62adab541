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

from gtog._lazy import lazy_exports

if TYPE_CHECKING:
    pass
    pass
    from gtog.search._methods import (
        METHODS,
        Builder,
        Method,
        build_engine,
        load_plugin_methods,
        method_entry,
    )

    pass
    from gtog.search._outcome import (
        SearchEngine,
        SearchFailed,
        SearchOutcome,
        retrieved_sources,
        run_search,
    )

_EXPORTS = {
    "METHODS": "gtog.search._methods",
    "Builder": "gtog.search._methods",
    "Method": "gtog.search._methods",
    "build_engine": "gtog.search._methods",
    "load_plugin_methods": "gtog.search._methods",
    "method_entry": "gtog.search._methods",
    "SearchEngine": "gtog.search._outcome",
    "SearchFailed": "gtog.search._outcome",
    "SearchOutcome": "gtog.search._outcome",
    "retrieved_sources": "gtog.search._outcome",
    "run_search": "gtog.search._outcome",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "METHODS",
    "Builder",
    "Method",
    "SearchEngine",
    "SearchFailed",
    "SearchOutcome",
    "build_engine",
    "load_plugin_methods",
    "method_entry",
    "retrieved_sources",
    "run_search",
]
