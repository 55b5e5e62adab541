"""Search methods shared by `gtog query` and `gtog eval`: the registry, engines and metering.

engine = await build_engine("tog", project, {"response_type": "Single Paragraph"})
outcome = await run_search(engine, "Who gave Maren Holt the compass?")
outcome.result.response, outcome.usage.total_calls
"""

from gtog.search import engines
from gtog.search.engines import *  # noqa: F403  (the curated names of engines.__all__)

__all__ = list(engines.__all__)
