"""graphrag-eval 6.x's async call shape: `results = await run_evaluation(...)`.

Code written for graphrag-eval 6.x changes one import and keeps its calls:

    from gtog.qa.aio import run_evaluation, compute_aggregates  # was: graphrag_eval

    results = await run_evaluation(qa_dataset, responses_dict, config_file_path)
    aggregates = compute_aggregates(results, config_file_path)

`run_evaluation` here is a coroutine function (`gtog.qa.run_evaluation_async`), so
`asyncio.run(...)`, `asyncio.gather(...)` and `create_task(...)` work as before. Add
`semantics="graphrag-eval-6"` to both calls to get graphrag-eval 6.x's numbers.
"""

from __future__ import annotations

from gtog.qa._aggregation import compute_aggregates
from gtog.qa._evaluation import run_evaluation_async as run_evaluation

__all__ = ["compute_aggregates", "run_evaluation"]
