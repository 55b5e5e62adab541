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

from gtog.eval.dataset import QAItem, load_dataset
from gtog.eval.report import write_report
from gtog.eval.results import (
    Efficiency,
    EvalLog,
    EvalSpec,
    JudgeSpec,
    MethodRecord,
    read_log,
    result_views,
    spec_changes,
    summarize,
)
from gtog.eval.run import (
    EvalConfig,
    EvalOptions,
    EvalRun,
    load_eval_config,
    prepare,
    run_evaluation,
    run_evaluation_async,
    write_results,
)
from gtog.eval.scoring import (
    SCORERS,
    Judgement,
    Scorer,
    ScorerBase,
    Verdict,
    judge,
    judge_trials,
    load_prompts,
    register_scorer,
)

__all__ = [
    "SCORERS",
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
    "Scorer",
    "ScorerBase",
    "Verdict",
    "judge",
    "judge_trials",
    "load_dataset",
    "load_eval_config",
    "load_prompts",
    "prepare",
    "read_log",
    "register_scorer",
    "result_views",
    "run_evaluation",
    "run_evaluation_async",
    "spec_changes",
    "summarize",
    "write_report",
    "write_results",
]
