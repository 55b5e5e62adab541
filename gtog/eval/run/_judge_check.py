"""How well do the configured LLM judges agree with people? (`gtog judge-check`)

Cases are human-labelled answers, `{metric, question, ground_truth, answer, context,
label}` (only the fields the metric's prompt uses are required; `id` optional), as a JSON
list or `{"cases": [...]}`. Each case is judged as `gtog eval` would judge it (same model,
or the majority of the same judge panel, prompts, temperature and `judge.trials`); per
metric the report gives n, accuracy, Cohen's kappa with a 95% interval (analytic standard
error) and the confusion matrix. A judge that fails or ties is counted as unscored, not as
a verdict.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gtog._errors import InputError
from gtog.eval.results._statistics import cohen_kappa, wilson_interval
from gtog.eval.run._config import EvalConfig, load_eval_config
from gtog.eval.run._judging import judge_prompts, load_judge_model, load_judge_panel
from gtog.eval.scoring._base import Judgement
from gtog.eval.scoring._judges import ALL_METRICS, FIELDS, PromptSet, judge_panel, judge_trials
from gtog.llm._models import ChatModel, run_sync

__all__ = [
    "JudgeCase",
    "agreement",
    "judge_cases",
    "load_cases",
    "load_judge",
    "load_judges",
    "run_judge_check",
]

_CASE_FIELD = {"predicted": "answer"}
"""Prompt placeholder -> case field where the names differ."""


@dataclass(frozen=True)
class JudgeCase:
    """One human-labelled answer for one judge metric."""

    id: str
    metric: str
    label: int
    values: dict[str, str]
    """The metric prompt's placeholders, filled from the case."""


def _case(path: Path, i: int, raw: Any) -> JudgeCase:
    where = f"{path}: cases[{i}]"
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected an object")
    metric = raw.get("metric")
    if metric not in ALL_METRICS:  # the 0/1 judges (labels are 0 or 1)
        raise InputError(f"{where}.metric: {metric!r} is not one of {', '.join(ALL_METRICS)}")
    label = raw.get("label")
    if isinstance(label, bool) or label not in (0, 1):
        raise InputError(f"{where}.label: must be 0 or 1, got {label!r}")
    values = {}
    for placeholder in FIELDS[metric]:
        name = _CASE_FIELD.get(placeholder, placeholder)
        value = raw.get(name)
        if not isinstance(value, str):
            raise InputError(f"{where}.{name}: a string is required for {metric}")
        values[placeholder] = value
    return JudgeCase(str(raw.get("id", i)), metric, int(label), values)


def load_cases(path: Path) -> list[JudgeCase]:
    """Read and validate labelled cases; InputError names the file and the field."""
    if not path.is_file():
        raise InputError(f"{path}: cases file not found")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: line {exc.lineno}: malformed JSON: {exc.msg}") from None
    cases = data.get("cases") if isinstance(data, dict) else data
    if not isinstance(cases, list) or not cases:
        raise InputError(f"{path}: expected a non-empty list of cases (or {{'cases': [...]}})")
    return [_case(path, i, raw) for i, raw in enumerate(cases)]


async def judge_cases(
    cases: Sequence[JudgeCase],
    model: ChatModel,
    prompts: PromptSet,
    *,
    trials: int = 1,
    temperature: float = 0.0,
    max_tokens: int = 300,
    json_mode: bool = True,
    concurrency: int = 4,
    on_case: Callable[[JudgeCase, Judgement], None] | None = None,
    panel: dict[str, ChatModel] | None = None,
) -> list[Judgement]:
    """Judge every case (at most `concurrency` at once); verdicts in case order. With a
    `panel` (judge.models), each verdict is its models' strict majority (`model` unused)."""
    limit = asyncio.Semaphore(concurrency)
    sampling: dict[str, Any] = {
        "trials": trials,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "json_mode": json_mode,
    }

    async def one(case: JudgeCase) -> Judgement:
        async with limit:
            if panel:
                verdict = await judge_panel(case.metric, panel, prompts, case.values, **sampling)
            else:
                verdict = await judge_trials(case.metric, model, prompts, case.values, **sampling)
        if on_case is not None:
            on_case(case, verdict)
        return verdict

    return list(await asyncio.gather(*(one(c) for c in cases)))


def agreement(cases: Sequence[JudgeCase], verdicts: Sequence[Judgement]) -> dict[str, Any]:
    """Per metric: n, scored, unscored, accuracy (Wilson interval), kappa, confusion matrix.

    Accuracy and kappa cover the scored cases; `kappa_ci95` is kappa ± 1.96 SE with
    Cohen's large-sample standard error (`kappa_ci95_method: analytic_se`).
    """
    out: dict[str, Any] = {}
    for metric in dict.fromkeys(c.metric for c in cases):
        pairs = [(c, v) for c, v in zip(cases, verdicts, strict=True) if c.metric == metric]
        scored = [(c.label, int(v.score)) for c, v in pairs if v.score is not None]
        labels, ratings = [p[0] for p in scored], [p[1] for p in scored]
        kappa = cohen_kappa(labels, ratings)
        agree = sum(1 for a, b in scored if a == b)
        acc_ci = wilson_interval(agree, len(scored))
        votes = [v.votes for _, v in pairs if v.votes]
        out[metric] = {
            "n": len(pairs),
            "scored": len(scored),
            "unscored": len(pairs) - len(scored),
            "accuracy": kappa.accuracy,
            "accuracy_ci95": acc_ci.as_list(),
            "kappa": kappa.kappa,
            "kappa_ci95": kappa.ci95.as_list(),
            "kappa_ci95_method": kappa.ci95.method,
            "kappa_reason": kappa.ci95.reason,
            "confusion": {
                f"label_{a}_judge_{b}": sum(1 for p in scored if p == (a, b))
                for a in (1, 0)
                for b in (1, 0)
            },
            "always_majority_label_accuracy": (
                max(sum(labels), len(labels) - sum(labels)) / len(labels) if labels else None
            ),
            "unanimous": (
                sum(1 for v in votes if None not in v and len(set(v)) == 1) / len(votes)
                if votes
                else None
            ),
        }
    return out


def load_judges(
    root: Path,
    config_path: Path | None = None,
    index_key: str | None = None,
    model_overrides: Callable[[Path], dict[str, Any]] | None = None,
) -> tuple[EvalConfig, ChatModel, PromptSet, dict[str, ChatModel] | None]:
    """The eval config's judge (of `index_key`'s project, default the first), prompts and
    judge panel (None without `judge.models`; then the judge is the panel's first model)."""
    from gtog._project import load_graphrag_config

    root = root.resolve()
    config_path = (config_path or root / "eval_config.yaml").resolve()
    config = load_eval_config(config_path)
    key = index_key or next(iter(config.indexes))
    if key not in config.indexes:
        raise InputError(f"{config_path}: indexes: no index key {key!r}")
    folder = Path(config.indexes[key])
    folder = folder if folder.is_absolute() else root / folder
    graphrag_config = load_graphrag_config(
        folder, model_overrides(folder) if model_overrides else None
    )
    panel = load_judge_panel(config, graphrag_config, folder / "settings.yaml")
    if panel:
        model = next(iter(panel.values()))
    else:
        model = load_judge_model(config, graphrag_config, folder / "settings.yaml")
    return config, model, judge_prompts(root, config, config_path), panel


def load_judge(
    root: Path,
    config_path: Path | None = None,
    index_key: str | None = None,
    model_overrides: Callable[[Path], dict[str, Any]] | None = None,
) -> tuple[EvalConfig, ChatModel, PromptSet]:
    """The eval config's judge (of `index_key`'s project, default the first) and prompts."""
    config, model, prompts, _ = load_judges(root, config_path, index_key, model_overrides)
    return config, model, prompts


def run_judge_check(
    cases_path: Path,
    root: Path,
    config_path: Path | None = None,
    *,
    index_key: str | None = None,
    model_overrides: Callable[[Path], dict[str, Any]] | None = None,
    on_case: Callable[[JudgeCase, Judgement], None] | None = None,
) -> dict[str, Any]:
    """Load cases and the configured judge, judge every case, and report agreement."""
    cases = load_cases(cases_path)
    config, model, prompts, panel = load_judges(root, config_path, index_key, model_overrides)
    jc = config.judge
    verdicts = run_sync(
        judge_cases(
            cases,
            model,
            prompts,
            trials=jc.trials,
            temperature=jc.temperature,
            max_tokens=jc.max_tokens,
            json_mode=jc.structured_output,
            concurrency=config.concurrency,
            on_case=on_case,
            panel=panel,
        )
    )
    models = list(panel.values()) if panel else [model]
    return {
        "cases": str(cases_path),
        "judge_model": ", ".join(f"{m.name}@T{jc.temperature:g}" for m in models)
        + (f"x{jc.trials}" if jc.trials > 1 else ""),
        "judge_prompts": prompts.fingerprint,
        "by_metric": agreement(cases, verdicts),
        "rows": [
            {
                "id": c.id,
                "metric": c.metric,
                "label": c.label,
                "score": v.score,
                "votes": v.votes,
                **({"panel": {n: j.score for n, j in v.panel.items()}} if v.panel else {}),
                "error": v.error,
                "reason": v.reason,
            }
            for c, v in zip(cases, verdicts, strict=True)
        ],
    }
