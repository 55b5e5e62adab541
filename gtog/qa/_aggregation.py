"""`compute_aggregates`: per-template, micro and macro statistics of evaluation results.

Statistics (`sum`, `mean`, `median`, `min`, `max`) are taken over the successful
samples that have the metric; a missing or null value is skipped, never counted as 0,
and a metric no sample has is left out. Retrieval metrics come from the `retrieval`
steps: every evaluated step is one observation.

`semantics="graphrag-eval-6"` computes graphrag-eval 6.6.1's aggregates instead
(`gtog.qa._ge6_aggregation`).
"""

from __future__ import annotations

import json
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gtog.qa._semantics import GE6, SEED, Semantics, check_semantics

__all__ = ["METRICS", "STEP_METRICS", "compute_aggregates", "step_counts", "summary_stats"]

METRICS = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "elapsed_sec",
    "answer_recall",
    "answer_precision",
    "answer_f1",
    "answer_relevance",
    "answer_relevance_cost",
    "steps_score",
)
STEP_METRICS = tuple(
    f"retrieval_{kind}_{metric}{suffix}"
    for kind in ("answer", "context")
    for metric in ("recall", "precision", "f1")
    for suffix in ("", "_cost")
)


def summary_stats(values: Sequence[float]) -> dict[str, float]:
    """sum, mean, median, min and max of a non-empty series."""
    return {
        "sum": sum(values),
        "mean": statistics.fmean(values),
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
    }


def _is_error(sample: Mapping[str, Any]) -> bool:
    status = sample.get("status")
    return status == "error" or ("error" in sample and status != "success")


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _series(samples: Iterable[Mapping[str, Any]]) -> dict[str, list[float]]:
    series: dict[str, list[float]] = defaultdict(list)
    for sample in samples:
        for metric in METRICS:
            if _number(sample.get(metric)):
                series[metric].append(sample[metric])
        for step in sample.get("actual_steps") or []:
            if isinstance(step, Mapping) and step.get("name") == "retrieval":
                for metric in STEP_METRICS:
                    if _number(step.get(metric)):
                        series[metric].append(step[metric])
    return series


def _is_empty_result(output: Any) -> bool:
    """A SPARQL-shaped result with no bindings (graphrag-eval's rule: an empty list or
    any other output is not an "empty result")."""
    try:
        data = json.loads(output) if isinstance(output, str) else output
    except (json.JSONDecodeError, TypeError):
        return False
    if isinstance(data, Mapping):
        results = data.get("results")
        return isinstance(results, Mapping) and results.get("bindings") == []
    return False


def step_counts(samples: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Per step name: executions (`total`), samples using it (`once_per_sample`),
    successful executions with empty results (`empty_results`) and `errors`."""
    total: Counter[str] = Counter()
    once: Counter[str] = Counter()
    empty: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    for sample in samples:
        steps = [s for s in sample.get("actual_steps") or [] if isinstance(s, Mapping)]
        for step in steps:
            name = str(step.get("name"))
            total[name] += 1
            if step.get("status") == "error":
                errors[name] += 1
            elif _is_empty_result(step.get("output")):
                empty[name] += 1
        once.update({str(s.get("name")) for s in steps})
    return {
        "total": dict(total),
        "once_per_sample": dict(once),
        "empty_results": dict(empty),
        "errors": dict(errors),
    }


def _group_stats(samples: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    ok = [s for s in samples if not _is_error(s)]
    stats: dict[str, Any] = {
        "number_of_error_samples": len(samples) - len(ok),
        "number_of_success_samples": len(ok),
    }
    series = _series(ok)
    for metric in (*METRICS, *STEP_METRICS):
        if series.get(metric):
            stats[metric] = summary_stats(series[metric])
    return stats


def _config_data(config_file_path: str | Path) -> Any:
    from gtog.qa._io import InputError, load_data
    from gtog.qa._models import ConfigError

    try:
        return load_data(config_file_path)
    except InputError as exc:
        raise ConfigError(str(exc)) from exc


def _check_config(config_file_path: str | Path | None) -> None:
    """graphrag-eval 6.x reads custom metric names from its config; the seed's rules
    have none, so a config that declares them is refused rather than left out silently."""
    if config_file_path is None:
        return
    from gtog.qa._models import ConfigError

    data = _config_data(config_file_path)
    if isinstance(data, Mapping) and data.get("custom_evaluations"):
        raise ConfigError(f"{config_file_path}: custom_evaluations: not supported by gtog.qa")


def _custom_metrics(config_file_path: str | Path | None) -> list[str]:
    """The `outputs` names of a graphrag-eval 6.x config's `custom_evaluations`."""
    if not config_file_path:
        return []
    from gtog.qa._models import ConfigError

    data = _config_data(config_file_path)
    evaluations = data.get("custom_evaluations") if isinstance(data, Mapping) else None
    if not evaluations:
        return []
    names: list[str] = []
    for i, evaluation in enumerate(evaluations if isinstance(evaluations, list) else [None]):
        outputs = evaluation.get("outputs") if isinstance(evaluation, Mapping) else None
        if not isinstance(outputs, Mapping):
            field = f"custom_evaluations[{i}].outputs"
            raise ConfigError(f"{config_file_path}: {field}: must be a mapping")
        names.extend(outputs)
    return names


def compute_aggregates(
    samples: Sequence[Mapping[str, Any]],
    config_file_path: str | Path | None = None,
    *,
    semantics: Semantics = SEED,
) -> dict[str, Any]:
    """`per_template`, `micro` and `macro` aggregates of `run_evaluation`'s output.

    `config_file_path` is graphrag-eval 6.x's argument: under its rules the outputs of
    the config's `custom_evaluations` are aggregated too; under the seed's rules such a
    config is refused (`ConfigError`). Pass the `semantics` given to `run_evaluation`.
    """
    semantics = check_semantics(semantics)
    if semantics == GE6:
        from gtog.qa._ge6_aggregation import compute_aggregates_ge6

        return compute_aggregates_ge6(samples, _custom_metrics(config_file_path))
    _check_config(config_file_path)
    by_template: dict[Any, list[Mapping[str, Any]]] = defaultdict(list)
    for sample in samples:
        by_template[sample.get("template_id")].append(sample)
    per_template: dict[Any, dict[str, Any]] = {}
    for template_id, group in by_template.items():
        stats = _group_stats(group)
        stats["steps"] = step_counts(s for s in group if not _is_error(s))
        per_template[template_id] = stats
    micro = _group_stats(samples)
    macro: dict[str, dict[str, float]] = {}
    for metric in (*METRICS, *STEP_METRICS):
        means = [t[metric]["mean"] for t in per_template.values() if metric in t]
        if means:
            macro[metric] = {"mean": statistics.fmean(means)}
    return {"per_template": per_template, "micro": micro, "macro": macro}
