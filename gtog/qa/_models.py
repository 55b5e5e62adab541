"""The judge models used by the answer and retrieval metrics.

`load_judge_models(config)` accepts:

* a graphrag project directory or its `settings.yaml`/`.yml`/`.json` (a file with
  `completion_models`): the models `default_completion_model` and
  `default_embedding_model` unless other ids are given;
* a small YAML/JSON file with `completion_model` and/or `embedding_model` mappings in
  graphrag_llm's `ModelConfig` shape (`model_provider`, `model`, `api_base`,
  `api_key`, ...); `${VAR}` is replaced from the environment;
* graphrag-eval 6.x's config file (`llm: {generation: {provider, model, ...},
  embedding: {...}}`, `answer_correctness: {enabled}`, `answer_relevance: {enabled}`):
  answer correctness runs when `llm` is given, answer relevance when it has an
  `embedding`, unless disabled. Its custom prompts and `custom_evaluations` are
  refused (a `ConfigError`), not ignored; `temperature`/`max_tokens` are not used
  (the judges run at temperature 0);
* nothing: with `OPENAI_API_KEY` set, `openai/gpt-4o-mini` and
  `openai/text-embedding-3-small` (graphrag-eval's defaults); otherwise no models,
  and the LLM metrics report an error instead of a value.
"""

from __future__ import annotations

import os
import string
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import yaml

from gtog._errors import InputError
from gtog.llm._models import (
    ChatModel,
    EmbeddingModel,
    chat_model_from_config,
    embedding_model_from_config,
)

__all__ = ["ConfigError", "JudgeModels", "load_judge_models", "models_from_model_configs"]

DEFAULT_CHAT_ID = "default_completion_model"
DEFAULT_EMBEDDING_ID = "default_embedding_model"
SETTINGS_NAMES = ("settings.yaml", "settings.yml", "settings.json")


class ConfigError(InputError):
    """A judge-model configuration that cannot be used (message names file and field)."""


@dataclass(frozen=True)
class JudgeModels:
    """The chat and embedding models of the LLM metrics; either may be missing."""

    chat: ChatModel | None = None
    embedding: EmbeddingModel | None = None
    answer_correctness: bool = True
    answer_relevance: bool = True


def models_from_model_configs(
    completion: dict[str, Any] | None, embedding: dict[str, Any] | None
) -> JudgeModels:
    """Judge models from `ModelConfig`-shaped mappings."""
    from graphrag_llm.completion import create_completion
    from graphrag_llm.config import ModelConfig
    from graphrag_llm.embedding import create_embedding

    chat = emb = None
    if completion:
        cfg = ModelConfig(**completion)
        chat = ChatModel(create_completion(cfg), cfg, "completion_model")
    if embedding:
        cfg = ModelConfig(**embedding)
        emb = EmbeddingModel(create_embedding(cfg), cfg, "embedding_model")
    return JudgeModels(chat, emb)


class _Deferred:
    """Judge models built on first use (the LLM stack is imported only if a metric asks)."""

    def __init__(self, build: Callable[[], JudgeModels]) -> None:
        self._build = build
        self._models: JudgeModels | None = None

    def get(self) -> JudgeModels:
        if self._models is None:
            self._models = self._build()
        return self._models


class _DeferredModel:
    """Stands for one of a `_Deferred`'s models until an attribute of it is used."""

    def __init__(self, deferred: _Deferred, which: str) -> None:
        self._deferred, self._which = deferred, which

    def __getattr__(self, name: str) -> Any:
        return getattr(getattr(self._deferred.get(), self._which), name)


def _load_graphrag_settings(path: Path, chat_id: str, embedding_id: str) -> JudgeModels:
    from graphrag.config.load_config import load_config

    from gtog._project import load_graphrag_config

    cwd = Path.cwd()
    try:  # a project folder's graphrag 2.x settings are translated (gtog.compat._settings)
        config = load_graphrag_config(path) if path.is_dir() else load_config(path)
    except Exception as exc:
        raise ConfigError(f"{path}: cannot load graphrag settings: {exc}") from exc
    finally:
        os.chdir(cwd)
    try:
        chat = chat_model_from_config(config, chat_id)
    except Exception as exc:
        raise ConfigError(f"{path}: completion_models.{chat_id}: {exc}") from exc
    try:
        emb = embedding_model_from_config(config, embedding_id)
    except Exception:
        emb = None
    return JudgeModels(chat, emb)


GE6_KEYS = ("llm", "answer_correctness", "answer_relevance", "custom_evaluations")


def _ge6_model(path: Path, field: str, value: Any) -> dict[str, Any]:
    from graphrag_llm.config import ModelConfig

    if not isinstance(value, dict) or not value.get("provider") or not value.get("model"):
        raise ConfigError(f"{path}: {field}: needs 'provider' and 'model'")
    extra = {k: v for k, v in value.items() if k in ModelConfig.model_fields}
    return {**extra, "model_provider": value["provider"], "model": value["model"]}


def _ge6_toggle(path: Path, data: dict[str, Any], field: str) -> bool:
    section = data.get(field)
    if section is None:
        return True
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: {field}: must be a mapping")
    if "prompt" in section:
        raise ConfigError(f"{path}: {field}.prompt: custom prompts are not supported by gtog.qa")
    enabled = section.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ConfigError(f"{path}: {field}.enabled: must be true or false")
    return enabled


def _load_ge6_config(path: Path, data: dict[str, Any]) -> JudgeModels:
    """Judge models from graphrag-eval 6.x's config format (see the module doc)."""
    if data.get("custom_evaluations"):
        raise ConfigError(f"{path}: custom_evaluations: not supported by gtog.qa")
    llm = data.get("llm")
    completion = embedding = None
    if llm is not None:
        if not isinstance(llm, dict):
            raise ConfigError(f"{path}: llm: must be a mapping")
        completion = _ge6_model(path, "llm.generation", llm.get("generation"))
        if llm.get("embedding") is not None:
            embedding = _ge6_model(path, "llm.embedding", llm.get("embedding"))
    correctness = _ge6_toggle(path, data, "answer_correctness")
    relevance = _ge6_toggle(path, data, "answer_relevance")
    try:
        models = models_from_model_configs(completion, embedding)
    except Exception as exc:
        raise ConfigError(f"{path}: llm: invalid model config: {exc}") from exc
    return JudgeModels(
        models.chat,
        models.embedding,
        answer_correctness=correctness and models.chat is not None,
        answer_relevance=relevance and models.embedding is not None,
    )


def load_judge_models(
    config: str | Path | None = None,
    *,
    chat_model_id: str = DEFAULT_CHAT_ID,
    embedding_model_id: str = DEFAULT_EMBEDDING_ID,
) -> JudgeModels:
    """Judge models from a config path (see the module doc), or graphrag-eval's defaults."""
    if config is None:
        key = os.environ.get("OPENAI_API_KEY")
        if not key:
            return JudgeModels()
        base = {"model_provider": "openai", "api_key": key}
        defaults = _Deferred(
            lambda: models_from_model_configs(
                {**base, "model": "gpt-4o-mini"}, {**base, "model": "text-embedding-3-small"}
            )
        )
        return JudgeModels(
            chat=cast(ChatModel, _DeferredModel(defaults, "chat")),
            embedding=cast(EmbeddingModel, _DeferredModel(defaults, "embedding")),
        )
    path = Path(config)
    if path.is_dir():
        if not any((path / n).exists() for n in SETTINGS_NAMES):
            raise ConfigError(f"{path}: no settings.yaml in this directory")
        return _load_graphrag_settings(path, chat_model_id, embedding_model_id)
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found")
    try:
        raw = string.Template(path.read_text(encoding="utf-8")).safe_substitute(os.environ)
        data = yaml.safe_load(raw)
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot parse: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: top level must be a mapping")
    if "completion_models" in data:
        return _load_graphrag_settings(path, chat_model_id, embedding_model_id)
    if any(key in data for key in GE6_KEYS):
        return _load_ge6_config(path, data)
    completion, embedding = data.get("completion_model"), data.get("embedding_model")
    if completion is None and embedding is None:
        raise ConfigError(f"{path}: needs 'completion_model' and/or 'embedding_model'")
    for field, value in (("completion_model", completion), ("embedding_model", embedding)):
        if value is not None and not isinstance(value, dict):
            raise ConfigError(f"{path}: {field} must be a mapping")
    try:
        return models_from_model_configs(completion, embedding)
    except Exception as exc:
        raise ConfigError(f"{path}: invalid model config: {exc}") from exc
