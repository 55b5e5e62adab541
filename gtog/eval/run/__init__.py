"""Running an evaluation: prepare, the loop, engines, error budget, checkpoint, shards, merge.

`prepare()` validates the config, dataset, methods, index projects and judges, builds the
run's spec and opens (locks) the output folder before any model is called; the loop
(`run_evaluation_async`) searches every (question, method) with the cached engines, scores
each answer with the run's scorers and appends the record to the checkpoint at once; the
guard stops the run when no later item can succeed; `write_results` writes every view.
Shards split one run across machines and `merge_runs` joins them.
"""

from typing import TYPE_CHECKING

from gtog.lazy import lazy_exports

if TYPE_CHECKING:
    from gtog.eval.run.config import EvalConfig, load_eval_config
    from gtog.eval.run.loop import ProgressHook, run_evaluation, run_evaluation_async
    from gtog.eval.run.outputs import write_outputs, write_results
    from gtog.eval.run.preparation import prepare
    from gtog.eval.run.state import EvalOptions, EvalRun

_EXPORTS = {
    "EvalConfig": "gtog.eval.run.config",
    "load_eval_config": "gtog.eval.run.config",
    "ProgressHook": "gtog.eval.run.loop",
    "run_evaluation": "gtog.eval.run.loop",
    "run_evaluation_async": "gtog.eval.run.loop",
    "write_outputs": "gtog.eval.run.outputs",
    "write_results": "gtog.eval.run.outputs",
    "prepare": "gtog.eval.run.preparation",
    "EvalOptions": "gtog.eval.run.state",
    "EvalRun": "gtog.eval.run.state",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "EvalConfig",
    "EvalOptions",
    "EvalRun",
    "ProgressHook",
    "load_eval_config",
    "prepare",
    "run_evaluation",
    "run_evaluation_async",
    "write_outputs",
    "write_results",
]
