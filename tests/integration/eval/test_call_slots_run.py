"""A run's concurrency is its calls in flight: never more out at once, and kept out (issue 45).

The run keeps a quarter more questions going than its concurrency, so that one question's
work between its calls leaves no slot empty; the endpoint still sees at most `-j` requests
at once, ToG's parallel calls included.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.eval.helpers import load_results, make_eval_root
from tests.support.projects import gtog
from tests.support.scripted_server import ScriptedServer
from tests.unit.core.test_call_slots import peak

pytestmark = pytest.mark.integration


def test_the_endpoint_sees_at_most_the_runs_concurrency(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    llm_server.delay, llm_server.embedding_delay = 0.1, 0.05
    root = make_eval_root(tmp_path, example_indexes, methods=("basic", "tog"))
    result = gtog("eval", "--root", str(root), "-q", "--no-cache", "-j", "3", "--limit", "3")
    assert result.returncode == 0, result.stderr
    assert peak(llm_server) == 3
    detailed, _ = load_results(root)
    pairs = [e for q in detailed["results"] for e in q["methods"].values()]
    assert len(pairs) == 12 and not [e for e in pairs if e.get("error")]
    efficiency = [e["efficiency"] for e in pairs]
    # a pair's wait for a slot, of its own or for its calls, is its queue wait, not latency
    assert all(e["queue_wait"] >= 0 and e["latency"] > 0 for e in efficiency)
    assert any(e["queue_wait"] > 0 for e in efficiency)
