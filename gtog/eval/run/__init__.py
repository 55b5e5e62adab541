"""Running an evaluation: prepare, the loop, engines, error budget, checkpoint, shards, merge.

`prepare()` validates the config, dataset, methods, index projects and judges, builds the
run's spec and opens (locks) the output folder before any model is called; the loop
(`run_evaluation_async`) searches every (question, method) with the cached engines, scores
each answer with the run's scorers and appends the record to the checkpoint at once; the
guard stops the run when no later item can succeed; `write_results` writes every view.
Shards split one run across machines and `merge_runs` joins them.


Internal: not part of gtog's public API (see `gtog.eval`, `gtog.api`)."""

__all__: list[str] = []
