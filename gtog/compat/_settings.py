"""graphrag 2.x settings files (`models:`), read as graphrag 3.3 settings in memory.

graphrag 2.x (up to v2.7) configured its models in one `models:` block (`type: chat |
embedding | openai_chat | azure_openai_embedding | ...`), named them in each workflow and
search block (`model_id`, `chat_model_id`, `embedding_model_id`), kept its vector stores in
`vector_store.<id>` entries whose tables were `<container_name>-<embedding>`, and called its
storage blocks `output`, `input.storage`, `chunks`. graphrag 3.3 reads none of that.
`translate` rewrites the parsed file into 3.3's shape; nothing is written (`gtog settings
migrate` writes the same translation to a new file for users who want to move).

Every key falls in one of four kinds, each reported:
- **translated**: moved or renamed to its 3.3 place (listed in the note);
- **ignored by graphrag 2.x**: not a 2.x setting at all (a typo such as `index_schma:`);
  2.x dropped it silently, so it changes nothing: named in the note;
- **not carried over**: a 2.x setting with no 3.3 counterpart that changes no answer
  (`model_supports_json`, `encoding_model`, `proxy`, `embed_graph`, ...): named in the note;
- **refused**: a 2.x setting that changes results and that 3.3 cannot express (`strategy:`
  overrides, `outputs:` multi-index, mock `responses`, ...): an `InputError` naming the file,
  the line and the key.

graphrag 2.x's query-time defaults that 3.3 would not send are made explicit: 2.x sent
`temperature: 0` with every search call (its `LanguageModelConfig` default), so a chat
model's `call_args` carry it unless the file set another value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gtog._errors import InputError
from gtog.compat._paths import portable_path
from gtog.compat._vocabulary import (
    CALL_ARGS,
    CHAT,
    EMBEDDING,
    EMBEDDING_ID,
    LEGACY_EMBEDDINGS,
    MODEL_ID,
    MODEL_KEYS,
    REASONING,
    SAME_FIELDS,
    SCHEMA_KEYS,
    STORAGE_KEYS,
    STRATEGY,
    VECTOR_KEYS,
)

__all__ = [
    "Translation",
    "is_graphrag2",
    "key_lines",
    "parse_settings_text",
    "render_settings",
    "translate",
]


@dataclass
class Translation:
    """A graphrag 2.x settings file in graphrag 3.3's shape, and what was done to it."""

    data: dict[str, Any]
    """The 3.3 settings (top-level keys in the file's order; unknown blocks kept)."""
    translated: list[str] = field(default_factory=list)
    """`old -> new` for every key moved or renamed."""
    ignored: list[str] = field(default_factory=list)
    """Keys graphrag 2.x itself ignored (not 2.x settings)."""
    dropped: list[str] = field(default_factory=list)
    """2.x settings without a 3.3 counterpart that change no answer (`key (why)`)."""

    def note(self, source: Path | str) -> str:
        """One line: the file was read as graphrag 3.3 settings, and what that took."""
        parts = [f"{len(self.translated)} keys translated ({_short(self.translated)})"]
        if self.dropped:
            parts.append(f"not carried over: {'; '.join(self.dropped)}")
        if self.ignored:
            parts.append(f"ignored by graphrag 2.x itself: {', '.join(self.ignored)}")
        return (
            f"{source}: graphrag 2.x settings read as graphrag 3.3's in memory (the file is "
            f"unchanged; `gtog settings migrate` writes the 3.3 file): {'; '.join(parts)}"
        )


def _short(items: list[str], most: int = 6) -> str:
    shown = ", ".join(items[:most])
    return shown + (f", ... ({len(items) - most} more)" if len(items) > most else "")


def is_graphrag2(data: Any) -> bool:
    """Is this parsed settings file graphrag 2.x's (a `models:` block, no 3.3 model blocks)?"""
    return (
        isinstance(data, dict)
        and isinstance(data.get("models"), dict)
        and "completion_models" not in data
        and "embedding_models" not in data
    )


def parse_settings_text(text: str, suffix: str) -> Any:
    """A settings file's text parsed as graphrag parses it (YAML, or JSON for `.json`)."""
    import json

    import yaml

    if suffix.lower() == ".json":
        return json.loads(text)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # (libyaml: ~10x faster)
    return yaml.load(text, loader)


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """The 1-based line of every mapping key in a YAML (or JSON) text, by its key path."""
    import yaml

    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return {}
    lines: dict[tuple[str, ...], int] = {}

    def walk(node: Any, path: tuple[str, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                here = (*path, str(key.value))
                lines.setdefault(here, key.start_mark.line + 1)
                walk(value, here)

    walk(root, ())
    return lines


class _Translator:
    def __init__(self, source: str, lines: dict[tuple[str, ...], int]) -> None:
        self.source = source
        self.lines = lines
        self.result = Translation({})

    # -- reporting ---------------------------------------------------------------------
    def refuse(self, path: tuple[str, ...], why: str) -> InputError:
        line = self.lines.get(path)
        where = f"{self.source}, line {line}" if line else self.source
        key = ".".join(path)
        return InputError(f"{where}: {key}: {why} (a graphrag 2.x setting gtog cannot translate)")

    def moved(self, old: str, new: str) -> None:
        self.result.translated.append(f"{old} -> {new}" if old != new else old)

    def ignored(self, path: tuple[str, ...]) -> None:
        self.result.ignored.append(".".join(path))

    def dropped(self, path: tuple[str, ...], why: str) -> None:
        self.result.dropped.append(f"{'.'.join(path)} ({why})")

    def unknown(self, path: tuple[str, ...], block: dict[str, Any], known: set[str]) -> None:
        for key in block:
            if key not in known:
                self.ignored((*path, str(key)))

    # -- top level ---------------------------------------------------------------------
    def run(self, data: dict[str, Any]) -> Translation:
        out = self.result.data
        store_id = (data.get("embed_text") or {}).get("vector_store_id")
        for key, value in data.items():
            if key == "models":
                self._models(value, out)
            elif key == "root_dir":
                self.dropped(("root_dir",), "3.3 uses the project folder")
            elif key == "input":
                self._input(value, out)
            elif key == "chunks":
                self._chunks(value, out)
            elif key == "output":
                out["output_storage"] = self._storage(("output",), value)
                self.moved("output", "output_storage")
            elif key == "update_index_output":
                out["update_output_storage"] = self._storage(("update_index_output",), value)
                self.moved("update_index_output", "update_output_storage")
            elif key == "outputs":
                if value:
                    raise self.refuse(("outputs",), "several output stores (multi-index query)")
                self.dropped(("outputs",), "empty")
            elif key == "cache":
                out["cache"] = self._cache(value)
            elif key == "reporting":
                out["reporting"] = self._reporting(value)
            elif key == "vector_store":
                out["vector_store"] = self._vector_store(value, store_id)
            elif key == "workflows":
                if value:
                    raise self.refuse(("workflows",), "2.x workflow names")
                out["workflows"] = value
            elif key == "embed_text":
                out["embed_text"] = self._embed_text(value)
            elif key in ("embed_graph", "umap"):
                self.dropped((key,), "3.3 has no node2vec/UMAP layout; it changes no answer")
            elif key in SAME_FIELDS:
                out[key] = self._block(key, value)
            else:  # not a graphrag setting (gtog's own blocks, tog_search, ...): kept
                out[key] = value
        return self.result

    # -- models ------------------------------------------------------------------------
    def _models(self, models: dict[str, Any], out: dict[str, Any]) -> None:
        completion: dict[str, Any] = {}
        embedding: dict[str, Any] = {}
        concurrency: list[int] = []
        async_modes: list[str] = []
        for model_id, entry in models.items():
            path = ("models", str(model_id))
            if not isinstance(entry, dict):
                raise self.refuse(path, "expected a mapping")
            kind = str(entry.get("type", ""))
            if kind not in CHAT and kind not in EMBEDDING:
                choices = ", ".join([*CHAT, *EMBEDDING])
                raise self.refuse((*path, "type"), f"model type {kind!r} (one of {choices})")
            chat = kind in CHAT
            target = completion if chat else embedding
            section = "completion_models" if chat else "embedding_models"
            target[str(model_id)] = self._model(path, entry, chat, (CHAT | EMBEDDING)[kind])
            self.moved(".".join(path), f"{section}.{model_id}")
            if "concurrent_requests" in entry:
                concurrency.append(int(entry["concurrent_requests"]))
            if "async_mode" in entry:
                async_modes.append(str(entry["async_mode"]))
        if completion:
            out["completion_models"] = completion
        if embedding:
            out["embedding_models"] = embedding
        if concurrency:
            out["concurrent_requests"] = max(concurrency)
            self.moved("models.*.concurrent_requests", "concurrent_requests (the largest)")
        if async_modes:
            out["async_mode"] = async_modes[0]
            self.moved("models.*.async_mode", "async_mode")

    def _model(
        self, path: tuple[str, ...], entry: dict[str, Any], chat: bool, typed: str | None
    ) -> dict[str, Any]:
        self.unknown(path, entry, MODEL_KEYS)
        provider = typed or entry.get("model_provider")
        if not provider:
            raise self.refuse((*path, "model_provider"), f"required with type {entry['type']}")
        if typed and entry.get("model_provider") not in (None, typed):
            self.dropped((*path, "model_provider"), f"type {entry['type']} means {typed}")
        if "model" not in entry:
            raise self.refuse((*path, "model"), "missing")
        model: dict[str, Any] = {"model_provider": provider, "model": entry["model"]}
        deployment = entry.get("deployment_name")
        if deployment:
            if provider == "azure":
                model["azure_deployment_name"] = deployment
            elif typed is None:  # 2.x's LiteLLM models called `provider/deployment_name`
                model["model"] = deployment
                self.moved(".".join((*path, "deployment_name")), ".".join((*path, "model")))
            else:
                self.dropped((*path, "deployment_name"), "unused by 2.x for OpenAI")
        for key in ("api_base", "api_version", "api_key"):
            if entry.get(key) is not None:
                model[key] = entry[key]
        auth = entry.get("auth_type")
        if auth is not None:
            model["auth_method"] = auth
        if entry.get("audience"):
            model["azure_cognitive_services_audience"] = entry["audience"]
        call_args = self._call_args(path, entry, chat)
        if entry.get("organization"):
            call_args["organization"] = entry["organization"]
        if entry.get("request_timeout") is not None:
            call_args["timeout"] = entry["request_timeout"]
        if call_args:
            model["call_args"] = call_args
        retry = self._retry(path, entry)
        if retry:
            model["retry"] = retry
        limit = self._rate_limit(path, entry)
        if limit:
            model["rate_limit"] = limit
        for key, why in (
            ("model_supports_json", "3.3 asks for JSON where LiteLLM says the model can"),
            ("encoding_model", "3.3 counts tokens with the model's own tokenizer"),
            ("proxy", "3.3 has no proxy setting: set HTTPS_PROXY"),
        ):
            if entry.get(key) not in (None, ""):
                self.dropped((*path, key), why)
        if entry.get("responses"):
            raise self.refuse((*path, "responses"), "canned responses of 2.x's mock models")
        return model

    def _call_args(self, path: tuple[str, ...], entry: dict[str, Any], chat: bool) -> dict:
        stated = {k: entry[k] for k in CALL_ARGS if entry.get(k) is not None}
        if not chat:
            for key in stated:
                self.ignored((*path, key))  # 2.x's embeddings sent none of them
            return {}
        if str(entry.get("model", "")).lower() in REASONING:
            args = {k: stated[k] for k in ("max_completion_tokens", "reasoning_effort", "n")}
            args = {k: v for k, v in args.items() if k in stated}
        else:
            args = {k: v for k, v in stated.items() if k not in ("max_completion_tokens",)}
            args.pop("reasoning_effort", None)
            args.setdefault("temperature", 0)  # what graphrag 2.x sent by default
        return args

    def _retry(self, path: tuple[str, ...], entry: dict[str, Any]) -> dict[str, Any]:
        strategy = entry.get("retry_strategy")
        if strategy is None and "max_retries" not in entry and "max_retry_wait" not in entry:
            return {}
        retry: dict[str, Any] = {"type": "exponential_backoff"}
        if strategy not in (None, "exponential_backoff"):
            self.dropped((*path, "retry_strategy"), f"{strategy}: 3.3 backs off exponentially")
        tries = entry.get("max_retries")
        if tries is not None:
            if int(tries) > 1:
                retry["max_retries"] = int(tries)
            else:
                self.dropped((*path, "max_retries"), "3.3 needs more than 1: its default")
        wait = entry.get("max_retry_wait")
        if wait is not None:
            if float(wait) > 1:
                retry["max_delay"] = wait
            else:
                self.dropped((*path, "max_retry_wait"), "3.3 needs more than 1 s: its default")
        return retry

    def _rate_limit(self, path: tuple[str, ...], entry: dict[str, Any]) -> dict[str, Any]:
        per_period = {}
        for key, new in (
            ("tokens_per_minute", "tokens_per_period"),
            ("requests_per_minute", "requests_per_period"),
        ):
            value = entry.get(key)
            if value == "auto":
                self.dropped((*path, key), "auto: 3.3 sets no limit")
            elif value is not None and int(value) > 0:
                per_period[new] = int(value)
        if entry.get("rate_limit_strategy", "static") is None:
            return {}
        if not per_period:
            return {}
        return {"type": "sliding_window", "period_in_seconds": 60, **per_period}

    # -- storage -----------------------------------------------------------------------
    def _storage(self, path: tuple[str, ...], block: Any) -> dict[str, Any]:
        if not isinstance(block, dict):
            raise self.refuse(path, "expected a mapping")
        self.unknown(path, block, STORAGE_KEYS)
        kind = str(block.get("type", "file"))
        out: dict[str, Any] = {"type": kind}
        if kind == "cosmosdb":  # 2.x: base_dir named the database
            if block.get("base_dir"):
                out["database_name"] = block["base_dir"]
        elif block.get("base_dir") is not None:
            out["base_dir"] = portable_path(str(block["base_dir"]))
        for old, new in (
            ("connection_string", "connection_string"),
            ("container_name", "container_name"),
            ("storage_account_blob_url", "account_url"),
            ("cosmosdb_account_url", "account_url"),
        ):
            if block.get(old):
                out[new] = block[old]
        return out

    def _input(self, block: dict[str, Any], out: dict[str, Any]) -> None:
        path = ("input",)
        known = {
            "storage",
            "file_type",
            "encoding",
            "file_pattern",
            "file_filter",
            "text_column",
            "title_column",
            "metadata",
        }
        self.unknown(path, block, known)
        result: dict[str, Any] = {}
        if "file_type" in block:
            result["type"] = block["file_type"]
        for key in ("encoding", "file_pattern", "text_column", "title_column"):
            if block.get(key) not in (None, ""):
                result[key] = block[key]
        for key in ("file_filter", "metadata"):
            if block.get(key):
                raise self.refuse((*path, key), "3.3 has no such input setting")
        out["input"] = result
        self.moved("input.file_type", "input.type")
        if "storage" in block:
            out["input_storage"] = self._storage((*path, "storage"), block["storage"])
            self.moved("input.storage", "input_storage")

    def _chunks(self, block: dict[str, Any], out: dict[str, Any]) -> None:
        path = ("chunks",)
        known = {
            "size",
            "overlap",
            "group_by_columns",
            "strategy",
            "encoding_model",
            "prepend_metadata",
            "chunk_size_includes_metadata",
        }
        self.unknown(path, block, known)
        result: dict[str, Any] = {}
        if "strategy" in block:
            result["type"] = block["strategy"]
        for key in ("size", "overlap", "encoding_model"):
            if key in block:
                result[key] = block[key]
        groups = block.get("group_by_columns")
        if groups not in (None, ["id"], []):
            raise self.refuse((*path, "group_by_columns"), "3.3 chunks each document apart")
        if groups is not None:
            self.dropped((*path, "group_by_columns"), "[id]: 3.3 chunks each document apart")
        for key in ("prepend_metadata", "chunk_size_includes_metadata"):
            if block.get(key):
                raise self.refuse((*path, key), "3.3 prepends named metadata columns instead")
        out["chunking"] = result
        self.moved("chunks", "chunking")

    def _cache(self, block: dict[str, Any]) -> dict[str, Any]:
        path = ("cache",)
        self.unknown(path, block, STORAGE_KEYS)
        kind = str(block.get("type", "file"))
        if kind in ("memory", "none"):
            self.moved("cache.type", "cache.type")
            return {"type": kind}
        storage = self._storage(path, {k: v for k, v in block.items() if k in STORAGE_KEYS})
        self.moved("cache", "cache.storage (cache.type: json)")
        return {"type": "json", "storage": storage}

    def _reporting(self, block: dict[str, Any]) -> dict[str, Any]:
        path = ("reporting",)
        known = {"type", "base_dir", "connection_string", "container_name"}
        self.unknown(path, block, known | {"storage_account_blob_url"})
        out = {k: block[k] for k in known if block.get(k) is not None}
        if "base_dir" in out:
            out["base_dir"] = portable_path(str(out["base_dir"]))
        if block.get("storage_account_blob_url"):
            out["account_url"] = block["storage_account_blob_url"]
            self.moved("reporting.storage_account_blob_url", "reporting.account_url")
        return out

    # -- vector store ------------------------------------------------------------------
    def _vector_store(self, block: Any, store_id: str | None) -> dict[str, Any]:
        path: tuple[str, ...] = ("vector_store",)
        if not isinstance(block, dict):
            raise self.refuse(path, "expected a mapping")
        flat = any(k in block and not isinstance(block[k], dict) for k in ("type", "db_uri"))
        entries = {"": block} if flat else {str(k): v for k, v in block.items()}
        chosen = store_id or "default_vector_store"
        if chosen not in entries:
            if len(entries) != 1:
                raise self.refuse(path, f"no entry {chosen!r} (embed_text.vector_store_id)")
            chosen = next(iter(entries))
        for other in entries:
            if other != chosen:
                self.dropped((*path, other), "not the store 2.x's embeddings used")
        entry = entries[chosen]
        here = (*path, chosen) if chosen else path
        if not isinstance(entry, dict):
            raise self.refuse(here, "expected a mapping")
        self.unknown(here, entry, VECTOR_KEYS)
        kind = str(entry.get("type", "lancedb"))
        out: dict[str, Any] = {"type": kind}
        if kind == "lancedb":
            out["db_uri"] = portable_path(str(entry.get("db_uri") or "output/lancedb"))
        for key in ("url", "api_key", "audience", "database_name"):
            if entry.get(key):
                out[key] = entry[key]
        container = str(entry.get("container_name") or "default")
        out["container_name"] = container  # read by gtog.compat (the old table prefix)
        if "overwrite" in entry:
            self.dropped((*here, "overwrite"), "an indexing switch")
        schema = self._schemas(here, entry.get("embeddings_schema") or {}, container)
        out["index_schema"] = schema
        self.moved(".".join(here), "vector_store")
        self.moved(f"{'.'.join(here)}.container_name", "vector_store.index_schema.*.index_name")
        return out

    def _schemas(self, path: tuple[str, ...], block: dict[str, Any], container: str) -> dict:
        schemas: dict[str, dict[str, Any]] = {}
        for name, new in LEGACY_EMBEDDINGS.items():
            schemas[new] = {"index_name": f"{container}-{name.replace('.', '-')}"}
        for name, fields in block.items():
            here = (*path, "embeddings_schema", str(name))
            new = LEGACY_EMBEDDINGS.get(str(name), str(name).replace(".", "_"))
            if new not in schemas:
                raise self.refuse(here, "not an embedding graphrag 3.3 writes")
            if not isinstance(fields, dict):
                raise self.refuse(here, "expected a mapping")
            self.unknown(here, fields, SCHEMA_KEYS)
            for key in ("index_name", "id_field", "vector_field", "vector_size"):
                if fields.get(key) is not None:
                    schemas[new][key] = fields[key]
            for key in ("text_field", "attributes_field"):
                if fields.get(key) is not None:
                    self.dropped((*here, key), "3.3 stores no text or attributes column")
        return schemas

    # -- workflow and search blocks ----------------------------------------------------
    def _embed_text(self, block: dict[str, Any]) -> dict[str, Any]:
        path = ("embed_text",)
        self.unknown(
            path,
            block,
            {"model_id", "vector_store_id", "batch_size", "batch_max_tokens", "names", "strategy"},
        )
        out: dict[str, Any] = {}
        if "model_id" in block:
            out["embedding_model_id"] = block["model_id"]
            self.moved("embed_text.model_id", "embed_text.embedding_model_id")
        for key in ("batch_size", "batch_max_tokens"):
            if key in block:
                out[key] = block[key]
        if block.get("names"):
            out["names"] = [
                LEGACY_EMBEDDINGS.get(n, str(n).replace(".", "_")) for n in block["names"]
            ]
        if block.get("strategy"):
            raise self.refuse((*path, "strategy"), "2.x's embedding strategy override")
        return out

    def _block(self, name: str, block: Any) -> Any:
        path = (name,)
        if not isinstance(block, dict):
            return block
        id_key = MODEL_ID.get(name)
        known = set(SAME_FIELDS[name]) | ({id_key} if id_key else set())
        if name in EMBEDDING_ID:
            known.add("embedding_model_id")
        if name in STRATEGY:
            known.add("strategy")
        self.unknown(path, block, known)
        out: dict[str, Any] = {}
        for key, value in block.items():
            if key == id_key:
                out["completion_model_id"] = value
                self.moved(f"{name}.{key}", f"{name}.completion_model_id")
            elif key == "embedding_model_id" or key in SAME_FIELDS[name]:
                out[key] = value
            elif key == "strategy" and value:
                raise self.refuse((*path, "strategy"), "2.x's strategy override")
        return out


def translate(data: dict[str, Any], source: Path | str, text: str | None = None) -> Translation:
    """The graphrag 3.3 settings of a parsed graphrag 2.x file (`text`: the file, for the
    line of an error); raises `InputError` for a key 3.3 cannot express."""
    lines = key_lines(text) if text is not None else {}
    return _Translator(str(source), lines).run(data)


def render_settings(data: dict[str, Any]) -> str:
    """Translated settings as YAML (keys in order; `${VAR}` references kept as text)."""
    import yaml

    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)
