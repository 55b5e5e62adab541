"""Results: the typed eval log and everything computed from its records.

`records` (one `MethodRecord` per question and method), `spec` (what a run is) and `log`
(the `EvalLog`, the checkpoint format, `read_log` for any output) are the data; `views`
builds the detailed and summary JSON and the graphrag-eval `qa/` files; `statistics`
holds the intervals and paired tests; `flat` the CSV; `table` the terminal table. All
are pure functions of records; files are written by the run and the report.
"""

from typing import TYPE_CHECKING

from gtog.lazy import lazy_exports

if TYPE_CHECKING:
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

_EXPORTS = {
    "error_kinds": "gtog.eval.results.errors",
    "EvalLog": "gtog.eval.results.log",
    "read_checkpoint": "gtog.eval.results.log",
    "read_log": "gtog.eval.results.log",
    "Efficiency": "gtog.eval.results.records",
    "MethodRecord": "gtog.eval.results.records",
    "CHECKPOINT_NAME": "gtog.eval.results.spec",
    "DETAILED_NAME": "gtog.eval.results.spec",
    "SUMMARY_NAME": "gtog.eval.results.spec",
    "DatasetSpec": "gtog.eval.results.spec",
    "EvalSpec": "gtog.eval.results.spec",
    "JudgeSpec": "gtog.eval.results.spec",
    "ShardSpec": "gtog.eval.results.spec",
    "spec_changes": "gtog.eval.results.spec",
    "stable_hash": "gtog.eval.results.spec",
    "summarize": "gtog.eval.results.summary",
    "QA_DIR": "gtog.eval.results.views",
    "result_views": "gtog.eval.results.views",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

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
