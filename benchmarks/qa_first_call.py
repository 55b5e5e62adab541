"""The first `gtog.qa.run_evaluation` call of a process on a SPARQL-only evaluation.

Each measurement runs in a fresh process (imports included). Goal: under 1 s; the LLM
stack (LiteLLM, graphrag_llm) is imported only when an LLM metric needs a model.

    python benchmarks/qa_first_call.py            # 5 fresh processes, median
    python benchmarks/qa_first_call.py --check    # one run, prints what was loaded
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time

OUTPUT = json.dumps(
    {"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "literal", "value": "1"}}]}}
)
STEP = {"name": "sparql_query", "args": {"query": "SELECT ?x {}"}, "output": OUTPUT}


def once() -> None:
    """One first call, timed; prints the figures and what was imported."""
    t0 = time.perf_counter()
    from gtog.qa import run_evaluation

    question = {"id": "q1", "question_text": "How many?", "reference_steps": [[STEP]]}
    reference = [{"template_id": "t1", "questions": [question]}]
    responses = {"q1": {"question_id": "q1", "actual_steps": [{**STEP, "status": "success"}]}}
    t1 = time.perf_counter()
    out = run_evaluation(reference, responses, progress=False)
    t2 = time.perf_counter()
    print(f"import {t1 - t0:.3f} s, first call {t2 - t1:.3f} s, total {t2 - t0:.3f} s")
    print(f"litellm loaded: {'litellm' in sys.modules}")
    print(f"steps_score {out[0].get('steps_score')}")


def main() -> None:
    """Median of five fresh processes."""
    if "--check" in sys.argv:
        once()
        return
    totals = []
    for _ in range(5):
        run = subprocess.run(
            [sys.executable, __file__, "--check"], capture_output=True, text=True, check=True
        )
        print(run.stdout.strip().splitlines()[0])
        totals.append(float(run.stdout.split("total ")[1].split(" s")[0]))
    print(f"median total {statistics.median(totals):.3f} s over {len(totals)} processes")


if __name__ == "__main__":
    main()
