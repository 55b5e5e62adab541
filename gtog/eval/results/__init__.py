"""Results: the typed eval log and everything computed from its records.

`records` (one `MethodRecord` per question and method), `spec` (what a run is) and `log`
(the `EvalLog`, the checkpoint format, `read_log` for any output) are the data; `views`
builds the detailed and summary JSON and the graphrag-eval `qa/` files; `statistics`
holds the intervals and paired tests; `flat` the CSV; `table` the terminal table. All
are pure functions of records; files are written by the run and the report.
"""

from gtog.eval.results.errors import error_kinds
from gtog.eval.results.log import EvalLog, read_checkpoint, read_log
from gtog.eval.results.records import Efficiency, MethodRecord
from gtog.eval.results.spec import (
    CHECKPOINT_NAME,
    DETAILED_NAME,
    SUMMARY_NAME,
    DatasetSpec,
    EvalSpec,
    JudgeSpec,
    ShardSpec,
    spec_changes,
    stable_hash,
)
from gtog.eval.results.summary import summarize
from gtog.eval.results.views import QA_DIR, result_views

__all__ = [
    "CHECKPOINT_NAME",
    "DETAILED_NAME",
    "QA_DIR",
    "SUMMARY_NAME",
    "DatasetSpec",
    "Efficiency",
    "EvalLog",
    "EvalSpec",
    "JudgeSpec",
    "MethodRecord",
    "ShardSpec",
    "error_kinds",
    "read_checkpoint",
    "read_log",
    "result_views",
    "spec_changes",
    "stable_hash",
    "summarize",
]
