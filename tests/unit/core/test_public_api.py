"""What a user imports from gtog is a short, deliberate list.

Every module whose dotted path has no `_`-prefixed part is public and lists its names in
`__all__`; everything else lives in private `_name.py` modules. A new public name is a
change to `PUBLIC` below (and to the API reference), never an accident.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import gtog

PUBLIC: dict[str, list[str]] = {
    "gtog": [
        "__version__",
    ],
    "gtog.api": [
        "EvalOptions",
        "EvalRun",
        "compute_aggregates",
        "prepare_evaluation",
        "qa_evaluation",
        "run_evaluation",
        "tog_search",
        "write_results",
    ],
    "gtog.cli": [
        "app",
        "main",
    ],
    "gtog.compat": [],
    "gtog.eval": [
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
    ],
    "gtog.eval.build": [],
    "gtog.eval.estimate": [],
    "gtog.eval.generate": [],
    "gtog.eval.report": [],
    "gtog.eval.results": [],
    "gtog.eval.run": [],
    "gtog.eval.terminal": [],
    "gtog.eval.view": [],
    "gtog.eval.scoring": [
        "ALL_METRICS",
        "Judgement",
        "LLMJudge",
        "PairScorer",
        "PromptSet",
        "SCORERS",
        "Scorer",
        "ScorerBase",
        "Verdict",
        "judge",
        "judge_trials",
        "load_prompts",
        "register_scorer",
        "score_answer",
    ],
    "gtog.indexing": [],
    "gtog.llm": [],
    "gtog.local": [
        "LocalExtraMissingError",
        "LocalServerInfo",
        "local_model_overrides",
        "running_local_server",
    ],
    "gtog.qa": [
        "ConfigError",
        "InputError",
        "JudgeModels",
        "SEMANTICS",
        "Semantics",
        "average_precision",
        "compare_sparql_results",
        "compute_aggregates",
        "eval_record_to_response",
        "load_judge_models",
        "recall_at_k",
        "run_evaluation",
        "run_evaluation_async",
    ],
    "gtog.qa.aio": [
        "compute_aggregates",
        "run_evaluation",
    ],
    "gtog.search": [
        "Builder",
        "METHODS",
        "Method",
        "SearchEngine",
        "SearchFailed",
        "SearchOutcome",
        "build_engine",
        "load_plugin_methods",
        "method_entry",
        "retrieved_sources",
        "run_search",
    ],
    "gtog.tog": [
        "ToGSearch",
        "ToGSettings",
        "get_tog_search_engine",
        "load_tog_settings",
        "tog_search",
    ],
}
"""Public module -> its `__all__`."""

LIMIT = 120


def _public_modules() -> list[str]:
    names = ["gtog"]
    for info in pkgutil.walk_packages(gtog.__path__, "gtog."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def test_the_public_modules_and_names_are_the_listed_ones() -> None:
    found = {}
    for name in _public_modules():
        module = importlib.import_module(name)
        exported = getattr(module, "__all__", None)
        assert exported is not None, f"{name} is public (no _ in its path) but has no __all__"
        found[name] = sorted(exported)
    assert found == {name: sorted(names) for name, names in PUBLIC.items()}


def test_the_public_api_stays_small() -> None:
    assert sum(len(names) for names in PUBLIC.values()) < LIMIT


def test_every_public_name_resolves_and_has_a_docstring() -> None:
    for module_name, names in PUBLIC.items():
        module = importlib.import_module(module_name)
        for name in names:
            value = getattr(module, name)  # lazy exports resolve on first use
            if inspect.isfunction(value) or inspect.isclass(value):
                assert (value.__doc__ or "").strip(), f"{module_name}.{name} has no docstring"
