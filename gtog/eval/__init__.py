"""`gtog eval`: every search method on every question, judged, costed, resumable.

Data flows one way: dataset -> runner -> search engine -> judges -> record -> checkpoint
(the eval log) -> statistics -> detailed/summary JSON, qa/ files, report.html and CSV.

    run = prepare(EvalOptions(root=Path("my_eval")))
    run_evaluation(EvalOptions(root=Path("my_eval")))      # or, blocking, all of it
    log = read_log(Path("my_eval/eval/results"))           # any output, read back typed
"""

from gtog.eval.config import EvalConfig, load_eval_config
from gtog.eval.dataset import QAItem, load_dataset
from gtog.eval.judges import Judgement, Verdict, judge, judge_trials, load_prompts
from gtog.eval.log import EvalLog, EvalSpec, JudgeSpec, read_log, spec_changes
from gtog.eval.publish import write_report
from gtog.eval.records import Efficiency, MethodRecord
from gtog.eval.results import result_views, summarize
from gtog.eval.runner import (
    EvalOptions,
    EvalRun,
    prepare,
    run_evaluation,
    run_evaluation_async,
    write_results,
)

__all__ = [
    "Efficiency",
    "EvalConfig",
    "EvalLog",
    "EvalOptions",
    "EvalRun",
    "EvalSpec",
    "JudgeSpec",
    "Judgement",
    "MethodRecord",
    "QAItem",
    "Verdict",
    "judge",
    "judge_trials",
    "load_dataset",
    "load_eval_config",
    "load_prompts",
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
