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

from gtog.lazy import lazy_exports

if TYPE_CHECKING:
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

_EXPORTS = {
    "QAItem": "gtog.eval.dataset",
    "load_dataset": "gtog.eval.dataset",
    "write_report": "gtog.eval.report",
    "Efficiency": "gtog.eval.results",
    "EvalLog": "gtog.eval.results",
    "EvalSpec": "gtog.eval.results",
    "JudgeSpec": "gtog.eval.results",
    "MethodRecord": "gtog.eval.results",
    "read_log": "gtog.eval.results",
    "result_views": "gtog.eval.results",
    "spec_changes": "gtog.eval.results",
    "summarize": "gtog.eval.results",
    "EvalConfig": "gtog.eval.run",
    "EvalOptions": "gtog.eval.run",
    "EvalRun": "gtog.eval.run",
    "load_eval_config": "gtog.eval.run",
    "prepare": "gtog.eval.run",
    "run_evaluation": "gtog.eval.run",
    "run_evaluation_async": "gtog.eval.run",
    "write_results": "gtog.eval.run",
    "SCORERS": "gtog.eval.scoring",
    "Judgement": "gtog.eval.scoring",
    "Scorer": "gtog.eval.scoring",
    "ScorerBase": "gtog.eval.scoring",
    "Verdict": "gtog.eval.scoring",
    "judge": "gtog.eval.scoring",
    "judge_trials": "gtog.eval.scoring",
    "load_prompts": "gtog.eval.scoring",
    "register_scorer": "gtog.eval.scoring",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

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
