"""Which indexes a generation reads, and per index its models and the sources it asks.

`index_projects` resolves `--index` keys through eval_config.yaml's `indexes` (or the
project folders under the root); `plan_index` loads one project (with the run's overrides),
its chat and embedding models, and picks each class's sources from its tables, enough for
`oversample` times the quota at `per_source` questions each.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gtog._errors import InputError
from gtog.eval.generate._sources import (
    CLASSES,
    Source,
    global_sources,
    linked_sources,
    local_sources,
    units_of,
)
from gtog.llm._models import ChatModel, EmbeddingModel

__all__ = ["GenerateOptions", "IndexPlan", "index_projects", "plan_index"]


@dataclass
class GenerateOptions:
    """What to generate, from which indexes, and how."""

    root: Path
    output: Path
    index_keys: list[str] | None = None
    """Keys under the config's `indexes` (or project folders under `root`); None: all."""
    n: int = 60
    """Questions per class, over all the indexes (spread evenly)."""
    classes: tuple[str, ...] = CLASSES
    per_source: int = 3
    oversample: float = 2.0
    dedup: float = 0.9
    """Cosine similarity of two questions' embeddings at or above which the later one is a
    near-duplicate."""
    seed: int = 0
    prompts_dir: Path | None = None
    model_id: str | None = None
    """A completion model id of each index's settings; None: its local_search model."""
    concurrency: int = 4
    temperature: float | None = 0.0
    max_tokens: int = 2000
    config_path: Path | None = None
    model_overrides: Callable[[Path], dict[str, Any]] | None = None
    """graphrag config overrides per project root (`--local`)."""


@dataclass
class IndexPlan:
    """One index: its models and the sources asked per class."""

    key: str
    root: Path
    model: ChatModel
    embedder: EmbeddingModel
    sources: dict[str, list[Source]]
    secrets: list[str]


def index_projects(options: GenerateOptions) -> dict[str, Path]:
    """index key -> project folder, from the eval config's `indexes` or folders under root."""
    from gtog.eval.run._config import load_eval_config

    root = options.root
    config_path = options.config_path or root / "eval_config.yaml"
    if options.config_path is not None or config_path.is_file():
        config = load_eval_config(config_path)
        known = {k: root / p for k, p in config.indexes.items()}  # (an absolute p stays p)
    else:
        known = {p.name: p for p in sorted(root.iterdir()) if p.is_dir()} if root.is_dir() else {}
    keys = options.index_keys or list(known)
    if not keys:
        raise InputError(f"{root}: no indexes (no eval_config.yaml, no project folders)")
    missing = [k for k in keys if k not in known]
    if missing:
        where = config_path if config_path.is_file() else root
        raise InputError(f"{where}: --index {missing[0]}: no such index key ({', '.join(known)})")
    return {k: known[k] for k in keys}


async def plan_index(
    options: GenerateOptions, key: str, root: Path, want: dict[str, int]
) -> IndexPlan:
    """Index `key` at `root`: its project (with the run's overrides), its models (checked
    against its settings) and, per class, the sources for `want[class]` questions."""
    from gtog._project import load_project
    from gtog.llm._models import chat_model_from_config, embedding_model_from_config

    overrides = options.model_overrides(root) if options.model_overrides else None
    project = await asyncio.to_thread(load_project, root, overrides)
    config = project.config
    model_id = options.model_id or config.local_search.completion_model_id
    if model_id not in config.completion_models:
        raise InputError(
            f"{project.settings_path}: --model {model_id!r} is not under completion_models"
        )
    embedding_id = config.local_search.embedding_model_id
    if embedding_id not in config.embedding_models:
        raise InputError(
            f"{project.settings_path}: local_search.embedding_model_id {embedding_id!r} is not "
            "under embedding_models (generate embeds questions to drop near-duplicates)"
        )
    units = units_of(await project.require("text_units"))
    if not units:
        raise InputError(f"{root}: the index has no text units")
    count = {kind: math.ceil(want[kind] * options.oversample / options.per_source) for kind in want}
    sources: dict[str, list[Source]] = {}
    if "local" in want:
        sources["local"] = local_sources(key, units, count["local"], options.seed)
    if "global" in want:
        reports = await project.require("community_reports")
        communities = await project.table("communities", optional=True)
        sources["global"] = global_sources(key, reports, communities, units, count["global"])
    if "linked" in want:
        entities = await project.require("entities")
        sources["linked"] = linked_sources(key, entities, units, count["linked"], options.seed)
    project.release()
    secrets = [
        m.api_key
        for models in (config.completion_models, config.embedding_models)
        for m in models.values()
        if m.api_key
    ]
    return IndexPlan(
        key=key,
        root=project.root,
        model=chat_model_from_config(config, model_id),
        embedder=embedding_model_from_config(config, embedding_id),
        sources=sources,
        secrets=secrets,
    )
