"""graphrag-eval 6.6.1's `compute_aggregates` (`semantics="graphrag-eval-6"`).

* A sample is an error sample when it has an `error` key. Every sample, error or not,
  enters the statistics and the step counts.
* Metrics: any `int`/`float` value (booleans count as 1/0, as there); the token and
  time metrics always get statistics (zeros when no sample has them), so their macro
  means include templates without them. Statistics are Python's `sum`, `statistics.mean`
  and `median`, `min`, `max`: integers stay integers. `sum` is Python 3.12's
  (compensated) float sum on every Python version.
* Step counts per step name: `total`, `once_per_sample`, `errors` (status `error`) and
  `empty_results` (a JSON text output whose `results.bindings` is empty); step metrics
  (retrieval steps' `retrieval_*` values) sit inside each template's `steps` mapping
  and at the top of `micro` and `macro`. No `*_cost` statistics.
* Custom metrics: the `outputs` names of a config's `custom_evaluations`.

Raises `ValueError` (naming the sample where it can) where graphrag-eval 6.6.1 raises:
a sample without `template_id`, a step without `name` or `status`, a successful step
without `output`, non-numeric step metric values.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["METRICS_GE6", "compute_aggregates_ge6", "python312_sum", "stats_for_series"]

METRICS_GE6 = (
    "answer_recall",
    "answer_precision",
    "answer_relevance",
    "answer_f1",
    "steps_score",
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "elapsed_sec",
)
STEP_METRICS_GE6 = {
    "retrieval": (
        "retrieval_answer_precision",
        "retrieval_answer_recall",
        "retrieval_answer_f1",
        "retrieval_context_recall",
        "retrieval_context_precision",
        "retrieval_context_f1",
    )
}
RETAINED = frozenset(("input_tokens", "output_tokens", "total_tokens", "elapsed_sec"))
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_CANNOT = "graphrag-eval 6.6.1 cannot aggregate it"


def _fits(value: int) -> bool:
    return _LONG_MIN <= value <= _LONG_MAX


def python312_sum(values: Iterable[Any]) -> Any:
    """`sum(values)` as CPython 3.12 computes it: integers exactly while they fit a C
    long, then floats with Neumaier's compensation (3.11's plain `sum` can differ in
    the last bit)."""
    if sys.version_info[:2] == (3, 12):
        return sum(values)
    items = iter(values)
    exact = 0
    for item in items:
        if type(item) in (int, bool) and _fits(item) and _fits(exact + item):
            exact += item
            continue
        result = exact + item
        break
    else:
        return exact
    if type(result) is float:
        total, compensation = result, 0.0
        for item in items:
            if type(item) is float:
                step = total + item
                if abs(total) >= abs(item):
                    compensation += (total - step) + item
                else:
                    compensation += (item - step) + total
                total = step
                continue
            if isinstance(item, int) and _fits(item):
                total += float(item)
                continue
            if compensation and math.isfinite(compensation):
                total += compensation
            result = total + item
            break
        else:
            if compensation and math.isfinite(compensation):
                total += compensation
            return total
    for item in items:
        result = result + item
    return result


def stats_for_series(values: Sequence[Any]) -> dict[str, Any]:
    """sum, mean, median, min and max; all 0 for an empty series."""
    return {
        "sum": python312_sum(values),
        "mean": statistics.mean(values) if values else 0,
        "median": statistics.median(values) if values else 0,
        "min": min(values) if values else 0,
        "max": max(values) if values else 0,
    }


class _Template:
    """What one template's samples add up to."""

    def __init__(self) -> None:
        self.errors = 0
        self.successes = 0
        self.series: defaultdict[str, list[Any]] = defaultdict(list)
        self.counts: dict[str, defaultdict[Any, int]] = {}
        self.step_series: defaultdict[str, list[Any]] = defaultdict(list)

    def count(self, kind: str, name: Any) -> None:
        self.counts.setdefault(kind, defaultdict(int))[name] += 1

    def add(self, sample: Mapping[str, Any], metrics: Sequence[str]) -> None:
        if "error" in sample:
            self.errors += 1
        else:
            self.successes += 1
        for metric in metrics:
            value = sample.get(metric)
            if isinstance(value, float | int):
                self.series[metric].append(value)
        steps = sample.get("actual_steps", [])
        seen = set()
        for step in steps:
            name = step["name"]
            self.count("total", name)
            if step["status"] == "error":
                self.count("errors", name)
            if name not in seen:
                seen.add(name)
                self.count("once_per_sample", name)
            if step["status"] != "error" and _is_empty_result(step["output"]):
                self.count("empty_results", name)
        for step in sample.get("actual_steps", []):
            for metric in STEP_METRICS_GE6.get(step["name"], ()):
                value = step.get(metric)
                if value is not None:
                    self.step_series[metric].append(value)


def _is_empty_result(output: Any) -> bool:
    try:
        result = json.loads(output)
        return bool(
            isinstance(result, dict)
            and "results" in result
            and "bindings" in result["results"]
            and not result["results"]["bindings"]
        )
    except (json.JSONDecodeError, TypeError):
        return False


def _template_summary(template: _Template, metrics: Sequence[str]) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "number_of_error_samples": template.errors,
        "number_of_success_samples": template.successes,
    }
    for metric in metrics:
        series = template.series.get(metric, [])
        if series or metric in RETAINED:
            summary[metric] = stats_for_series(series)
    if template.counts:
        steps: dict[str, Any] = {k: dict(v) for k, v in template.counts.items()}
        for metric, values in template.step_series.items():
            steps[metric] = stats_for_series(values)
        summary["steps"] = steps
    return summary


def _micro(templates: Sequence[_Template], metrics: Sequence[str]) -> dict[str, Any]:
    micro: dict[str, Any] = {
        "number_of_error_samples": sum(t.errors for t in templates),
        "number_of_success_samples": sum(t.successes for t in templates),
    }
    for metric in metrics:
        series = [value for t in templates for value in t.series.get(metric, [])]
        if series or metric in RETAINED:
            micro[metric] = stats_for_series(series)
    step_series: defaultdict[str, list[Any]] = defaultdict(list)
    for t in templates:
        for metric, values in t.step_series.items():
            step_series[metric].extend(values)
    for metric, values in step_series.items():
        micro[metric] = stats_for_series(values)
    counts: defaultdict[str, defaultdict[Any, int]] = defaultdict(lambda: defaultdict(int))
    for t in templates:
        for kind, by_name in t.counts.items():
            for name, n in by_name.items():
                counts[kind][name] += n
    if counts:
        micro["steps"] = {k: dict(v) for k, v in counts.items()}
    return micro


def _macro(per_template: Mapping[Any, Mapping[str, Any]], metrics: Sequence[str]) -> dict:
    macro: defaultdict[str, dict[str, Any]] = defaultdict(dict)
    for metric in metrics:
        means = [s[metric]["mean"] for s in per_template.values() if s.get(metric) is not None]
        if means or metric in RETAINED:
            macro[metric]["mean"] = statistics.mean(means or [0])
    step_means: defaultdict[str, list[Any]] = defaultdict(list)
    for summary in per_template.values():
        for metric, stats in summary.get("steps", {}).items():
            if "mean" in stats:  # step statistics (or a step named "mean" in a count)
                step_means[metric].append(stats["mean"])
    for metric, values in step_means.items():
        macro[metric]["mean"] = statistics.mean(values)
    return dict(macro)


def compute_aggregates_ge6(
    samples: Iterable[Mapping[str, Any]], custom_metrics: Sequence[str] = ()
) -> dict[str, Any]:
    """`per_template`, `micro` and `macro` as graphrag-eval 6.6.1 computes them."""
    metrics = (*METRICS_GE6, *custom_metrics)
    templates: dict[Any, _Template] = {}
    for i, sample in enumerate(samples):
        try:
            template_id = sample["template_id"]
            if template_id not in templates:
                templates[template_id] = _Template()
            templates[template_id].add(sample, metrics)
        except Exception as exc:
            raise ValueError(f"sample [{i}]: {_CANNOT}: {type(exc).__name__}: {exc}") from exc
    try:
        per_template = {tid: _template_summary(t, metrics) for tid, t in templates.items()}
        return {
            "per_template": per_template,
            "micro": _micro(list(templates.values()), metrics),
            "macro": _macro(per_template, metrics),
        }
    except Exception as exc:  # e.g. a step metric that is text
        raise ValueError(f"{_CANNOT}: {type(exc).__name__}: {exc}") from exc
