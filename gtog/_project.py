"""A GraphRAG project folder: its config and its index tables, loaded once."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gtog._errors import InputError, describe_exception

if TYPE_CHECKING:
    import pandas as pd
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag_vectors import VectorStore

    from gtog.compat._index import IndexCompat

__all__ = ["SETTINGS_FILES", "Project", "load_graphrag_config", "load_project", "settings_file"]

SETTINGS_FILES = ("settings.yaml", "settings.yml", "settings.json")
"""A graphrag project's settings file names, in the order they are looked for."""


def settings_file(root: Path) -> Path | None:
    """The settings file of the project at `root`, if it has one."""
    return next((root / n for n in SETTINGS_FILES if (root / n).is_file()), None)


def _graphrag2_settings(settings: Path) -> str | None:
    """A one-line fix when `settings` is a graphrag 2.x file (`models:`), else None."""
    import json

    import yaml

    try:
        text = settings.read_text(encoding="utf-8")
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # (libyaml: ~10x faster)
        data = json.loads(text) if settings.suffix == ".json" else yaml.load(text, loader)
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError):
        return None  # graphrag's own loader reports an unreadable file
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        return None
    if "completion_models" in data or "embedding_models" in data:
        return None
    entries = {str(k): v for k, v in data["models"].items()}

    def is_embedding(entry: Any) -> bool:
        return isinstance(entry, dict) and "embedding" in str(entry.get("type", "")).lower()

    chat = [k for k, v in entries.items() if not is_embedding(v)]
    embedding = [k for k, v in entries.items() if is_embedding(v)]
    moves = "; ".join(
        f"move {', '.join(names)} under {section}"
        for names, section in ((chat, "completion_models:"), (embedding, "embedding_models:"))
        if names
    )
    return (
        f"{settings}: this project uses graphrag 2.x settings (`models:`), but gtog runs graphrag "
        f"3.3, which reads `completion_models:` and `embedding_models:`: {moves}; in each entry "
        "replace `type: openai_chat`/`openai_embedding` with `model_provider: openai` (or "
        "azure) and `auth_type` with `auth_method`; rename `model_id`/`chat_model_id` in "
        "extract_graph, local_search, basic_search, ... to `completion_model_id` (`graphrag "
        "init` in an empty folder writes a 3.3 settings.yaml to compare with)"
    )


def load_graphrag_config(root: Path, overrides: dict[str, Any] | None = None) -> GraphRagConfig:
    """graphrag's `load_config`, without its side effect of changing the working directory."""
    from graphrag.config.load_config import load_config

    settings = settings_file(root)
    if settings is None:
        raise InputError(f"{root}: no settings.yaml (is this a graphrag project folder?)")
    old = _graphrag2_settings(settings)
    if old is not None:
        raise InputError(old)
    from gtog.llm._errors import with_transient_retries

    cwd = Path.cwd()
    try:
        return with_transient_retries(load_config(root_dir=root, cli_overrides=overrides))
    except Exception as exc:  # graphrag raises several types; all mean a bad settings file
        line = _missing_key(settings, exc)
        if line is None:
            line = f"{settings}: {describe_exception(exc, with_type=False)}"
        raise InputError(line) from None
    finally:
        os.chdir(cwd)


def _missing_key(settings: Path, exc: Exception) -> str | None:
    """One line for a model whose key comes from an environment variable that is unset
    (graphrag: "Environment variable not found") or empty (pydantic: "api_key must be
    set"): the variable, the field and the model, the same either way; else None."""
    import re

    import yaml

    text = str(exc)
    unset = re.search(r"Environment variable not found: '([^']+)'", text)
    if unset is None and "api_key must be set" not in text:
        return None
    try:
        raw = yaml.safe_load(settings.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return None
    found = []  # (field, model, variable)
    for section in ("completion_models", "embedding_models"):
        for name, entry in (raw.get(section) or {}).items():
            if not isinstance(entry, dict):
                continue
            ref = re.fullmatch(r"\$\{(\w+)\}", str(entry.get("api_key") or "").strip())
            if ref is None or os.environ.get(ref.group(1)):
                continue
            if unset is not None and ref.group(1) != unset.group(1):
                continue
            model = f"{entry.get('model_provider', '?')}/{entry.get('model', '?')}"
            found.append((f"{section}.{name}.api_key", model, ref.group(1)))
    if not found:
        return None
    where, model, var = found[0]
    state = "is not set" if os.environ.get(var) is None else "is empty"
    also = f" (also {', '.join(f'{w} ({m})' for w, m, _ in found[1:])})" if found[1:] else ""
    return (
        f"{settings}: {where}: ${{{var}}} {state} (model {model}){also}; set {var} in the "
        "environment or in the project's .env"
    )


@dataclass
class Project:
    """One indexed graphrag project.

    Tables and vector stores are read through `compat` (an index written by graphrag 1.x or
    2.x is read as 3.x in memory; nothing is written) and kept until `release()`.
    """

    root: Path
    config: GraphRagConfig
    _tables: dict[str, pd.DataFrame | None] = field(default_factory=dict, repr=False)
    _compat: IndexCompat | None = field(default=None, repr=False)

    @property
    def settings_path(self) -> Path:
        """The project's settings file."""
        return settings_file(self.root) or self.root / SETTINGS_FILES[0]

    @property
    def compat(self) -> IndexCompat:
        """The index's layout (inspected once, from headers only)."""
        if self._compat is None:
            from gtog.compat._index import inspect_index

            try:
                self._compat = inspect_index(self.config, self.root)
            except Exception as exc:
                raise InputError(
                    f"{self.root}: cannot inspect the index ({describe_exception(exc)})"
                ) from None
        return self._compat

    async def table(self, name: str, *, optional: bool = False) -> pd.DataFrame | None:
        """An output table (`entities`, `relationships`, ...), read once and kept."""
        if name not in self._tables:
            compat = self.compat
            stored = compat.stored(name)
            if stored is None and optional:
                self._tables[name] = None
                return None
            if stored is None or compat.tables.blocked is not None:
                cause, fix = (compat.problems((name,)) or [(f"no {name} table", "")])[0]
                raise InputError(f"{self.root}: {cause}; {fix}")
            try:
                self._tables[name] = await self._read(name, stored)
            except Exception as exc:
                raise InputError(
                    f"{self.root}: cannot read index table {stored!r} ({exc})"
                ) from None
        return self._tables[name]

    async def _read(self, name: str, stored: str) -> pd.DataFrame:
        from graphrag.data_model import dfs

        from gtog.compat._index import table_provider

        provider = table_provider(self.config)
        df = await provider.read_dataframe(stored)
        df = await self.compat.adapt(name, df, provider.read_dataframe)
        return getattr(dfs, f"{name}_typed")(df)

    async def require(self, name: str) -> pd.DataFrame:
        """An output table that must exist."""
        df = await self.table(name)
        assert df is not None
        return df

    def vector_store(self, embedding_name: str) -> VectorStore:
        """A connected vector store for one of graphrag's embeddings (InputError when the
        index has no table for it: connecting would create one)."""
        from graphrag_vectors import create_vector_store

        found = self.compat.vectors.get(embedding_name)
        if found is not None and found.missing is not None:
            raise InputError(f"{self.root}: {found.missing}")
        configured = self.config.vector_store.index_schema[embedding_name]
        schema = self.compat.vector_schema(embedding_name, configured)
        store = create_vector_store(self.config.vector_store, schema)
        store.connect()
        return store

    def release(self) -> None:
        """Forget the tables read so far (they are read again if asked for)."""
        self._tables.clear()

    def resolve(self, path: str | None) -> Path | None:
        """A path from settings.yaml, relative to the project root."""
        if not path:
            return None
        p = Path(path)
        return p if p.is_absolute() else self.root / p

    def prompt(self, path: str | None, key: str = "prompt") -> str | None:
        """The text of the prompt file settings.yaml names at `key` (None: not set, so
        graphrag's default); a file that is not there is an error, never the default."""
        resolved = self.resolve(path)
        if resolved is None:
            return None
        if not resolved.is_file():
            raise InputError(f"{self.settings_path}: {key}: prompt file {resolved} not found")
        return resolved.read_text(encoding="utf-8")


def load_project(root: Path, overrides: dict[str, Any] | None = None) -> Project:
    """Load a project's config and check it has an index (`entities` in its output;
    graphrag 1.x's `create_final_entities` too)."""
    from gtog.compat._index import output_folder
    from gtog.compat._tables import V1_PREFIX

    if not root.is_dir():
        raise InputError(f"{root}: index folder not found")
    config = load_graphrag_config(root, overrides)
    base = output_folder(config, root)
    if base is not None:
        names = ("entities.parquet", f"{V1_PREFIX}entities.parquet")
        if not any((base / name).is_file() for name in names):
            raise InputError(
                f"{root}: no index found ({base / 'entities.parquet'} is missing; "
                "run `gtog index --root` first)"
            )
    return Project(root=root.resolve(), config=config)
