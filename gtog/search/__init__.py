"""Search methods shared by `gtog query` and `gtog eval`: the registry, engines and metering.

engine = await build_engine("tog", project, {"response_type": "Single Paragraph"})
outcome = await run_search(engine, "Who gave Maren Holt the compass?")
outcome.result.response, outcome.usage.total_calls
"""

from gtog.search.engines import (
    METHODS,
    AnsweringBasicSearch,
    MeteredCompletion,
    OffLoopSearch,
    SearchEngine,
    SearchFailed,
    SearchOutcome,
    build_engine,
    context_threads,
    retrieved_sources,
    run_search,
)

__all__ = [
    "METHODS",
    "AnsweringBasicSearch",
    "MeteredCompletion",
    "OffLoopSearch",
    "SearchEngine",
    "SearchFailed",
    "SearchOutcome",
    "build_engine",
    "context_threads",
    "retrieved_sources",
    "run_search",
]
