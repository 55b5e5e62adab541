"""A GraphRAG project folder: its config and its index tables, loaded once."""

from __future__ import annotations

import copy
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
    from gtog.compat._settings import Translation

__all__ = [
    "SETTINGS_FILES",
    "Project",
    "SettingsRead",
    "load_graphrag_config",
    "load_project",
    "log_translation",
    "read_settings",
    "settings_file",
    "translated_settings",
]

SETTINGS_FILES = ("settings.yaml", "settings.yml", "settings.json")
"""A graphrag project's settings file names, in the order they are looked for."""


def settings_file(root: Path) -> Path | None:
    """The settings file of the project at `root`, if it has one."""
    return next((root / n for n in SETTINGS_FILES if (root / n).is_file()), None)


_NOTED: set[Path] = set()
"""Settings files whose graphrag 2.x translation was already announced (once a process)."""


@dataclass(frozen=True)
class SettingsRead:
    """A settings file as gtog reads it: graphrag 3.3's data, translated from 2.x or not."""

    path: Path
    data: dict[str, Any]
    translation: Translation | None
    """What was translated (None: the file is graphrag 3.x's, read as it is)."""


def read_settings(settings: Path, *, substitute: bool = False) -> SettingsRead:
    """A settings file parsed and, when it is graphrag 2.x's, translated to 3.3's shape.

    `substitute`: fill `${VAR}` from the environment and the `.env` beside the file first
    (as graphrag does when it loads a file); without it the references stay as text (what
    `gtog settings migrate` writes). Raises `InputError` naming the file (and for a key
    that cannot be translated, its line).
    """
    from gtog.compat._paths import portable_paths
    from gtog.compat._settings import is_graphrag2, parse_settings_text, translate

    try:
        text = settings.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{settings}: cannot read ({exc})") from None
    if substitute:
        text = _substituted(settings, text)
    try:
        data = parse_settings_text(text, settings.suffix) or {}
    except Exception as exc:  # JSON and YAML errors alike
        raise InputError(f"{settings}: {describe_exception(exc, with_type=False)}") from None
    if not isinstance(data, dict):
        raise InputError(f"{settings}: expected a mapping at the top level")
    if not is_graphrag2(data):
        return SettingsRead(settings, portable_paths(data), None)
    try:
        translation = translate(data, settings, text)
    except InputError:
        raise
    except (TypeError, ValueError) as exc:
        raise InputError(f"{settings}: cannot translate graphrag 2.x settings ({exc})") from None
    return SettingsRead(settings, translation.data, translation)


def _substituted(settings: Path, text: str) -> str:
    """`${VAR}` filled as graphrag 2.x and 3.x do: `.env` beside the file loaded, then
    `string.Template.substitute` over the environment."""
    from string import Template

    from dotenv import load_dotenv

    env = settings.parent / ".env"
    if env.is_file():
        load_dotenv(env)
    try:
        return Template(text).substitute(os.environ)
    except KeyError as exc:
        raise InputError(f"{settings}: environment variable {exc} is not set") from None
    except ValueError as exc:
        raise InputError(f"{settings}: {exc}") from None


def _announce(read: SettingsRead) -> None:
    """Say once per process and file that a graphrag 2.x file was translated, and how."""
    if read.translation is None or read.path in _NOTED:
        return
    _NOTED.add(read.path)
    import logging

    from rich.console import Console
    from rich.markup import escape

    note = read.translation.note(read.path)
    logging.getLogger("gtog.settings").info("%s", note)
    Console(stderr=True).print(
        f"[cyan]note:[/cyan] {escape(note)}", highlight=False, soft_wrap=True
    )


def translated_settings(root: Path) -> SettingsRead | None:
    """The graphrag 3.3 translation of `root`'s settings file if it is graphrag 2.x's
    (`${VAR}` kept as text), else None."""
    settings = settings_file(root)
    if settings is None:
        return None
    read = read_settings(settings)
    return read if read.translation is not None else None


def log_translation(root: Path, logger: Any) -> None:
    """Log what a graphrag 2.x settings file was read as: the note, then the 3.3 settings
    (`${VAR}` kept: exactly what `gtog settings migrate --check` prints). Nothing for a 3.x
    file."""
    from gtog.compat._settings import render_settings

    read = translated_settings(root)
    if read is not None and read.translation is not None:
        logger.info("%s", read.translation.note(read.path))
        text = render_settings(read.data)
        logger.info("%s as read (graphrag 3.3 settings):\n%s", read.path, text)


def _config_problem(exc: Exception) -> str:
    """One line for a settings file graphrag refuses: the first invalid key and why."""
    from pydantic import ValidationError

    if isinstance(exc, ValidationError) and exc.errors():
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        return f"{key}: {first['msg']}" if key else str(first["msg"])
    return describe_exception(exc, with_type=False)


def load_graphrag_config(root: Path, overrides: dict[str, Any] | None = None) -> GraphRagConfig:
    """graphrag's `load_config`, without its side effect of changing the working directory.

    A graphrag 2.x file is translated to 3.3's settings in memory (`gtog.compat._settings`;
    announced once per file), so the config is the one its migrated twin loads.
    """
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag_common.config import load_config

    from gtog.llm._errors import with_transient_retries

    settings = settings_file(root)
    if settings is None:
        raise InputError(f"{root}: no settings.yaml (is this a graphrag project folder?)")
    settings = settings.resolve()
    try:
        read = read_settings(settings, substitute=True)
    except InputError as exc:  # an unset ${VAR}: named like an empty one (field, model)
        raise InputError(_missing_key(settings, exc) or str(exc)) from None
    _announce(read)
    cwd = Path.cwd()
    try:
        config = load_config(
            GraphRagConfig,
            config_path=settings,
            overrides=copy.deepcopy(overrides) if overrides else None,
            parse_env_vars=False,  # done by read_settings, as graphrag does it
            config_parser=lambda _text: copy.deepcopy(read.data),
        )
        return with_transient_retries(config)
    except Exception as exc:  # graphrag raises several types; all mean a bad settings file
        line = _missing_key(settings, exc) or f"{settings}: {_config_problem(exc)}"
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
    unset = re.search(r"(?:Environment variable not found: |environment variable )'(\w+)'", text)
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
    else:  # blob or Cosmos DB: looked at in place, nothing created there
        from gtog.compat._remote import check_remote_index

        check_remote_index(config, root)
    return Project(root=root.resolve(), config=config)
