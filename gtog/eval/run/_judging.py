"""The judges of a run, loaded once: the judge model per index, the prompts, the scorers."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from gtog._errors import InputError
from gtog.eval.run._config import EvalConfig
from gtog.eval.scoring._assertions import METRIC as ASSERTIONS
from gtog.eval.scoring._assertions import load_assertion_prompt
from gtog.eval.scoring._base import ScoringSetup
from gtog.eval.scoring._judges import ALL_METRICS, PromptSet, load_prompts
from gtog.eval.scoring._pairwise import load_pairwise_prompt
from gtog.llm._models import (
    ChatModel,
    EmbeddingModel,
    chat_model_from_config,
    embedding_model_from_config,
)

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig

__all__ = [
    "BUILTIN_PROMPT_SETS",
    "EMBEDDING_METRICS",
    "assertion_prompt",
    "builtin_prompts_dir",
    "judge_prompts",
    "load_judge_embedder",
    "load_judge_model",
    "load_judge_panel",
    "pairwise_prompt",
    "scoring_setup",
]

EMBEDDING_METRICS = frozenset({"answer_similarity"})
"""Metrics that embed texts with the index's embedding model."""


def load_judge_model(config: EvalConfig, graphrag: GraphRagConfig, settings: Path) -> ChatModel:
    """The judge model of one index: `judge.model`, else its local search completion model."""
    judge_id = config.judge.model or graphrag.local_search.completion_model_id
    if judge_id not in graphrag.completion_models:
        raise InputError(
            f"{settings}: judge.model {judge_id!r} is not a model id under completion_models"
        )
    return chat_model_from_config(graphrag, judge_id)


def _litellm_model(name: str, base: ChatModel, settings: Path) -> ChatModel:
    """A LiteLLM name (`provider/model`) as a graphrag_llm model: with the settings of the
    index's local search model `base` (api_base, key, retries, rate limit) for its provider,
    else with the provider's key from the environment, as LiteLLM names it."""
    import os

    from gtog.llm._errors import transient
    from gtog.llm._models import gated_completion

    provider, _, model = name.partition("/")
    if base.config.model_provider == provider:
        config = base.config.model_copy(update={"model": model})
    else:
        import litellm
        from graphrag_llm.config import ModelConfig
        from litellm.utils import get_api_key

        key = get_api_key(provider, None) or os.environ.get(f"{provider.upper()}_API_KEY")
        if not key:
            missing = litellm.validate_environment(model=name).get("missing_keys") or [
                f"{provider.upper()}_API_KEY"
            ]
            raise InputError(
                f"{settings}: judge.models: {name!r} is not a model id under completion_models, "
                f"and as a LiteLLM name it needs {missing[0]} in the environment"
            )
        config = ModelConfig(model_provider=provider, model=model, api_key=key)
    config = transient(config)
    return ChatModel(gated_completion(config), config, name)


def load_judge_panel(
    config: EvalConfig, graphrag: GraphRagConfig, settings: Path
) -> dict[str, ChatModel] | None:
    """The judge panel of one index (`judge.models`, by the ids given), or None without one.

    An id under the project's completion_models is that model; another `provider/model`
    is a LiteLLM name, built through graphrag_llm too (see `_litellm_model`). Two names
    that are one model (the same model at the same endpoint with the same arguments,
    `gtog.llm._cache.model_identity`) are refused: they would be one judge counted twice.
    """
    if config.judge.models is None:
        return None
    base: ChatModel | None = None
    panel: dict[str, ChatModel] = {}
    for name in config.judge.models:
        if name in graphrag.completion_models:
            panel[name] = chat_model_from_config(graphrag, name)
            continue
        if "/" not in name.strip("/"):
            raise InputError(
                f"{settings}: judge.models: {name!r} is neither a model id under "
                "completion_models nor a LiteLLM name (provider/model)"
            )
        if base is None:
            base = chat_model_from_config(graphrag, graphrag.local_search.completion_model_id)
        panel[name] = _litellm_model(name, base, settings)
    _one_judge_each(panel, settings)
    return panel


def _one_judge_each(panel: dict[str, ChatModel], settings: Path) -> None:
    """Refuse a panel two of whose names are one model (they share every cached reply)."""
    from gtog.llm._cache import model_identity

    seen: dict[str, str] = {}
    for name, model in panel.items():
        identity = repr(sorted(model_identity(model.config).items()))
        if identity in seen:
            raise InputError(
                f"{settings}: judge.models: {seen[identity]!r} and {name!r} are one model "
                "(the same model at the same endpoint with the same arguments): one judge, "
                "not two; give one another model, endpoint or call_args, or ask one judge "
                "again with judge.trials"
            )
        seen[identity] = name


def load_judge_embedder(
    config: EvalConfig, graphrag: GraphRagConfig, settings: Path
) -> EmbeddingModel | None:
    """The index's embedding model (`local_search.embedding_model_id`) when a metric of
    the run embeds texts, else None."""
    if not EMBEDDING_METRICS & set(config.metrics):
        return None
    model_id = graphrag.local_search.embedding_model_id
    if model_id not in graphrag.embedding_models:
        raise InputError(
            f"{settings}: local_search.embedding_model_id {model_id!r} is not a model id under "
            "embedding_models (answer_similarity needs it)"
        )
    return embedding_model_from_config(graphrag, model_id)


BUILTIN = "builtin:"
"""`judge.prompts_dir: builtin:<name>` names a prompt set shipped with gtog (works anywhere)."""

BUILTIN_PROMPT_SETS: dict[str, tuple[str, str]] = {
    "local": ("gtog.local", "judge_prompts"),
}
"""Built-in prompt set name -> (package, folder in it). `local`: worded for the 1.5B local
model (docs/local_model.md, The judge)."""


def builtin_prompts_dir(name: str) -> Path:
    """The folder of the built-in prompt set `name` (KeyError when there is none)."""
    from importlib import resources

    package, folder = BUILTIN_PROMPT_SETS[name]
    return Path(str(resources.files(package) / folder))


def _prompts_dir(root: Path, config: EvalConfig, config_path: Path) -> Path | None:
    value = config.judge.prompts_dir
    if not value:
        return None
    if value.startswith(BUILTIN):
        name = value.removeprefix(BUILTIN)
        if name not in BUILTIN_PROMPT_SETS:
            known = ", ".join(BUILTIN + n for n in BUILTIN_PROMPT_SETS)
            raise InputError(
                f"{config_path}: judge.prompts_dir {value}: no such built-in prompt set "
                f"(there is {known}; or give a folder)"
            )
        return builtin_prompts_dir(name)
    prompts_dir = Path(value)
    if not prompts_dir.is_absolute():
        prompts_dir = root / prompts_dir
    if not prompts_dir.is_dir():
        raise InputError(f"{config_path}: judge.prompts_dir {prompts_dir} is not a folder")
    return prompts_dir


def judge_prompts(root: Path, config: EvalConfig, config_path: Path) -> PromptSet:
    """The judge prompts: built in, each replaced by `judge.prompts_dir/<metric>.txt`. A
    0/1 judge given a scale (`judge.scales`) needs a prompt of its own asking for it."""
    folder = _prompts_dir(root, config, config_path)
    for metric, (low, high) in config.judge.scales.items():
        if metric in ALL_METRICS and (folder is None or not (folder / f"{metric}.txt").is_file()):
            raise InputError(
                f"{config_path}: judge.scales.{metric}: the built-in {metric} prompt asks "
                f"for 0 or 1; give a prompt asking for an integer from {low} to {high} in "
                f"judge.prompts_dir/{metric}.txt (or use {metric}_graded where built in)"
            )
    return load_prompts(folder, config.metrics)


def assertion_prompt(root: Path, config: EvalConfig, config_path: Path) -> str | None:
    """The `assertions` scorer's prompt (built in, or `judge.prompts_dir/assertions.txt`);
    None when the run does not score assertions."""
    if ASSERTIONS not in config.metrics:
        return None
    return load_assertion_prompt(_prompts_dir(root, config, config_path))


def pairwise_prompt(root: Path, config: EvalConfig, config_path: Path) -> str:
    """The pairwise prompt: built in, or `judge.prompts_dir/pairwise.txt`."""
    return load_pairwise_prompt(_prompts_dir(root, config, config_path))


def scoring_setup(
    config: EvalConfig,
    model: ChatModel | None,
    prompts: PromptSet,
    embedder: EmbeddingModel | None = None,
    panel: dict[str, ChatModel] | None = None,
    assertions: str | None = None,
    project: Any = None,
) -> ScoringSetup:
    """What the run's scorers use on one index (`panel`: a judge panel's models;
    `assertions`: the assertion prompt; `project`: the index, for the path metrics)."""
    jc = config.judge
    return ScoringSetup(
        model=model,
        prompts=prompts,
        temperature=jc.temperature,
        max_tokens=jc.max_tokens,
        structured_output=jc.structured_output,
        trials=jc.trials,
        timeout=config.timeouts.judge,
        embedder=embedder,
        panel=panel or {},
        assertion_prompt=assertions,
        pass_threshold=jc.assertion_threshold,
        scales=dict(jc.scales),
        project=project,
        citations_max_checked=config.citations.max_checked,
    )
