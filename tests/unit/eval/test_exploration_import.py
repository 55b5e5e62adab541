"""Recording a search's exploration tree imports ToG's code only for a context that has one."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
import pandas as pd
from gtog.eval.results._records import MethodRecord
from gtog.eval.run._searching import _record_exploration

record = MethodRecord(qid="q", index_key="k", question="?", reference="r", method="local")
_record_exploration(record, {"sources": pd.DataFrame({"id": ["1"], "text": ["t"]})})
print(record.exploration, record.paths, "gtog.tog._trace" in sys.modules)
_record_exploration(record, {"tree": pd.DataFrame({"depth": [], "entity": []})})
print("gtog.tog._trace" in sys.modules)
"""


def test_a_context_without_a_tree_records_none_and_imports_no_tog_code() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[0] == "None None False"  # (a local context: ToG's module not imported, on the loop)
    assert out[1] == "True"  # (a context with a tree: read by ToG's code)
