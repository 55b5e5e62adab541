"""Question-answering evaluation with graphrag-eval's inputs and outputs.

from gtog.qa import run_evaluation, compute_aggregates

results = run_evaluation(reference_qas, chat_responses)  # blocks; also in Jupyter
aggregates = compute_aggregates(results)

Async code (graphrag-eval 6.x's shape): `from gtog.qa.aio import run_evaluation` and
`await run_evaluation(...)`. graphrag-eval 6.6.1's exact outputs: `semantics="graphrag-eval-6"`
on every function.
"""

from __future__ import annotations

import gtog  # noqa: F401  (offline LiteLLM price map before graphrag_llm is imported)
from gtog.qa._aggregation import compute_aggregates
from gtog.qa._bridge import eval_record_to_response
from gtog.qa._evaluation import run_evaluation, run_evaluation_async
from gtog.qa._io import InputError
from gtog.qa._models import ConfigError, JudgeModels, load_judge_models
from gtog.qa._retrieval import average_precision, recall_at_k
from gtog.qa._semantics import SEMANTICS, Semantics
from gtog.qa._sparql import compare_sparql_results

__all__ = [
    "SEMANTICS",
    "ConfigError",
    "InputError",
    "JudgeModels",
    "Semantics",
    "average_precision",
    "compare_sparql_results",
    "compute_aggregates",
    "eval_record_to_response",
    "load_judge_models",
    "recall_at_k",
    "run_evaluation",
    "run_evaluation_async",
]
