"""The methods of a run: registry methods, named variants of them, answers files and
HTTP methods.

A name under `methods` is a registry method (`tog`, `local`, ...), a variant (`variants:
{tog_narrow: {method: tog, tog_search: {width: 1}}}`), an answers file (`answers:
{mine: mine.jsonl}`) or an HTTP method (`http_methods: {my_agent: {url: ...}}`). Each
resolves to a `RunMethod`: the engine options of its registry method, the file its answers
are read from, or the endpoint it asks.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gtog._errors import InputError
from gtog.eval.run._answers import AnswersSource
from gtog.eval.run._config import EvalConfig, check_name
from gtog.search._endpoints import HttpEndpoint
from gtog.search._methods import METHODS, Method, load_plugin_methods, method_entry

__all__ = ["AnswersSource", "RunMethod", "resolve_methods"]


_VARIANT_KEYS = frozenset({"method", "response_type"})


@dataclass(frozen=True)
class RunMethod:
    """One method of a run, as its tables name it."""

    name: str
    base: str | None
    """The registry method it searches with (None: answers read from `answers`)."""
    options: dict[str, Any] = field(default_factory=dict)
    """What the registry method's builder gets (response type, settings overrides)."""
    answers: AnswersSource | None = None
    http: HttpEndpoint | None = None
    """The endpoint an HTTP method asks (None: not an HTTP method)."""

    @property
    def reads_index(self) -> bool:
        """Whether its answers come from the index (not from a file or a service)."""
        return self.base is not None

    @property
    def entry(self) -> Method:
        """The registry entry it searches with."""
        assert self.base is not None
        return method_entry(self.base)


def _choices(config: EvalConfig) -> str:
    return ", ".join([*METHODS, *config.variants, *config.answers, *config.http_methods])


def _answers(name: str, config: EvalConfig, config_path: Path, root: Path) -> AnswersSource:
    how = config.answers[name]
    path = Path(how.path)
    path = path if path.is_absolute() else root / path
    if not path.is_file():
        raise InputError(f"{config_path}: answers.{name}: {path} not found")
    return AnswersSource(path, how)


def _overrides(config: EvalConfig, entry: Method, extra: dict[str, Any]) -> dict[str, Any]:
    base = dict(getattr(config, entry.block, None) or {}) if entry.block else {}
    return {**base, **extra}


def _variant(name: str, raw: Any, config: EvalConfig, config_path: Path) -> RunMethod:
    where = f"{config_path}: variants.{name}"
    if not isinstance(raw, dict) or "method" not in raw:
        raise InputError(f"{where}.method: missing (the method this variant configures)")
    base = raw["method"]
    if base not in METHODS:
        raise InputError(
            f"{where}.method: unknown method {base!r} (choose from {', '.join(METHODS)})"
        )
    entry = method_entry(base)
    for key in raw:
        if key not in _VARIANT_KEYS and key != entry.block:
            allowed = ", ".join(sorted({*_VARIANT_KEYS, *([entry.block] if entry.block else [])}))
            raise InputError(f"{where}.{key}: unknown key for a {base} variant (use {allowed})")
    mine = raw.get(entry.block) or {} if entry.block else {}
    if not isinstance(mine, dict):
        raise InputError(f"{where}.{entry.block}: must be a mapping of settings")
    entry.validate(mine, where)
    response_type = raw.get("response_type", config.response_type_for(base))
    options = entry.options(_overrides(config, entry, mine), response_type)
    return RunMethod(name, base, options)


def resolve_methods(
    names: list[str], config: EvalConfig, config_path: Path, root: Path, source: str
) -> dict[str, RunMethod]:
    """Each of `names` resolved and checked; InputError names the file and key at fault."""
    load_plugin_methods()
    blocks = {"variants": config.variants, "answers": config.answers}
    blocks["http_methods"] = config.http_methods
    seen: dict[str, str] = {}
    for block, entries in blocks.items():
        for name in entries:
            if name in METHODS:
                raise InputError(
                    f"{config_path}: {block}.{name}: {name!r} is a built-in method; name it "
                    "otherwise"
                )
            if name in seen:
                raise InputError(
                    f"{config_path}: {block}.{name}: {name!r} is also in {seen[name]}; "
                    "one name, one method"
                )
            seen[name] = block
    out: dict[str, RunMethod] = {}
    for name in names:
        try:
            check_name(name)
        except ValueError as exc:
            raise InputError(f"{source}: {exc}") from None
        if name in config.answers:
            out[name] = RunMethod(name, None, answers=_answers(name, config, config_path, root))
        elif name in config.http_methods:
            endpoint = config.http_methods[name]
            endpoint.expanded_headers(os.environ, f"{config_path}: http_methods.{name}")
            out[name] = RunMethod(name, None, http=endpoint)
        elif name in config.variants:
            out[name] = _variant(name, config.variants[name], config, config_path)
        elif name in METHODS:
            entry = method_entry(name)
            if entry.block and getattr(config, entry.block, None):
                entry.validate(getattr(config, entry.block), str(config_path))
            options = entry.options(_overrides(config, entry, {}), config.response_type_for(name))
            out[name] = RunMethod(name, name, options)
        else:
            raise InputError(f"{source}: unknown method {name!r} (choose from {_choices(config)})")
    return out
