"""gtog's Python entry points, for notebooks and applications.

- `tog_search`: Think-on-Graph search over a graphrag index (like `graphrag.api.local_search`).
- `run_evaluation` / `prepare_evaluation`: the `gtog eval` run, from Python.
- `qa_evaluation` / `compute_aggregates`: graphrag-eval compatible evaluation of any QA system.
"""

from __future__ import annotations

from gtog.eval.run._loop import run_evaluation
from gtog.eval.run._outputs import write_results
from gtog.eval.run._preparation import prepare as prepare_evaluation
from gtog.eval.run._state import EvalOptions, EvalRun
from gtog.qa._aggregation import compute_aggregates
from gtog.qa._evaluation import run_evaluation as qa_evaluation
from gtog.tog._api import tog_search

__all__ = [
    "EvalOptions",
    "EvalRun",
    "compute_aggregates",
    "prepare_evaluation",
    "qa_evaluation",
    "run_evaluation",
    "tog_search",
    "write_results",
]
