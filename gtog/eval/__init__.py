"""`gtog eval`: every search method on every question, judged, costed, resumable.

Data flows one way, through four packages: `run` (prepare, the loop, engines, checkpoint)
-> the `gtog.search` engine -> `scoring` (the `Scorer` registry: LLM judges, lexical
metrics) -> `results` (records, the typed log, statistics, JSON views, CSV, table) ->
`report` (report.html). A lower package never imports a higher one (`dataset` and
`scoring` are at the bottom, `run` at the top).

    run = prepare(EvalOptions(root=Path("my_eval")))
    run_evaluation(EvalOptions(root=Path("my_eval")))      # or, blocking, all of it
    log = read_log(Path("my_eval/eval/results"))           # any output, read back typed
"""

from typing import TYPE_CHECKING

from gtog._lazy import lazy_exports

if TYPE_CHECKING:
    from gtog.eval._dataset import QAItem, load_dataset
    from gtog.eval.report._publish import write_report
    from gtog.eval.results._log import EvalLog, read_log
    from gtog.eval.results._records import Efficiency, MethodRecord
    from gtog.eval.results._spec import EvalSpec, JudgeSpec, spec_changes
    from gtog.eval.results._summary import summarize
    from gtog.eval.results._views import result_views
    from gtog.eval.run._config import EvalConfig, load_eval_config
    from gtog.eval.run._loop import run_evaluation, run_evaluation_async
    from gtog.eval.run._outputs import write_results
    from gtog.eval.run._preparation import prepare
    from gtog.eval.run._state import EvalOptions, EvalRun

    pass
    pass

_EXPORTS = {
    "QAItem": "gtog.eval._dataset",
    "load_dataset": "gtog.eval._dataset",
    "write_report": "gtog.eval.report._publish",
    "Efficiency": "gtog.eval.results._records",
    "EvalLog": "gtog.eval.results._log",
    "EvalSpec": "gtog.eval.results._spec",
    "JudgeSpec": "gtog.eval.results._spec",
    "MethodRecord": "gtog.eval.results._records",
    "read_log": "gtog.eval.results._log",
    "result_views": "gtog.eval.results._views",
    "spec_changes": "gtog.eval.results._spec",
    "summarize": "gtog.eval.results._summary",
    "EvalConfig": "gtog.eval.run._config",
    "EvalOptions": "gtog.eval.run._state",
    "EvalRun": "gtog.eval.run._state",
    "load_eval_config": "gtog.eval.run._config",
    "prepare": "gtog.eval.run._preparation",
    "run_evaluation": "gtog.eval.run._loop",
    "run_evaluation_async": "gtog.eval.run._loop",
    "write_results": "gtog.eval.run._outputs",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "Efficiency",
    "EvalConfig",
    "EvalLog",
    "EvalOptions",
    "EvalRun",
    "EvalSpec",
    "JudgeSpec",
    "MethodRecord",
    "QAItem",
    "load_dataset",
    "load_eval_config",
    "prepare",
    "read_log",
    "result_views",
    "run_evaluation",
    "run_evaluation_async",
    "spec_changes",
    "summarize",
    "write_report",
    "write_results",
]
