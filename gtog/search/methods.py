"""The method registry: each entry builds an engine and says what its answers depend on.

A `Method` has an async `build(project, options) -> engine` (graphrag's `search(query) ->
SearchResult`), the name of its settings block (`tog_search`, `local_search`, ...) and a
`settings(project, options)` function giving its effective settings on one index (models,
call args, prompt hashes), which `gtog eval` puts in the run's spec so that a changed
setting is seen on resume. A plain builder is a method too (its settings: none known).

Add a method by adding one entry to `METHODS`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gtog.errors import InputError
from gtog.hashing import stable_hash
from gtog.search.builders import build_basic, build_local, build_tog
from gtog.search.outcome import SearchEngine

if TYPE_CHECKING:
    from gtog.project import Project

__all__ = [
    "DEFAULT_RESPONSE_TYPE",
    "METHODS",
    "Builder",
    "Method",
    "build_engine",
    "method_entry",
    "model_spec",
]

DEFAULT_RESPONSE_TYPE = "Single Paragraph"

Builder = Callable[["Project", dict[str, Any]], Awaitable[SearchEngine]]
Settings = Callable[["Project", dict[str, Any]], dict[str, Any]]
Validate = Callable[[dict[str, Any], str], None]


def _no_settings(project: Project, options: dict[str, Any]) -> dict[str, Any]:
    return {}


def _no_check(overrides: dict[str, Any], source: str) -> None:
    return None


@dataclass(frozen=True)
class Method:
    """A search method: how to build it, and what its answers depend on."""

    build: Builder
    settings: Settings = _no_settings
    """(project, engine options) -> the effective settings on that index (for the spec)."""
    block: str | None = None
    """The settings block its overrides come from (`tog_search`), if any."""
    validate: Validate = _no_check
    """Checks the overrides of `block` (raises InputError naming `source`)."""


def model_spec(project: Project, model_id: str, completion: bool) -> dict[str, Any]:
    """A model as it affects answers: id, provider/model and call args (not its address)."""
    c = project.config
    cfg = (
        c.get_completion_model_config(model_id)
        if completion
        else c.get_embedding_model_config(model_id)
    )
    # not api_base: the same model behind another address (e.g. --local's port, chosen
    # afresh each run) gives the same answers
    return {
        "id": model_id,
        "model": f"{cfg.model_provider}/{cfg.model}",
        "call_args": cfg.call_args,
    }


def _graphrag_settings(block: str) -> Settings:
    """Effective settings of a graphrag search configured by `settings.yaml`'s `block`."""

    def settings(project: Project, options: dict[str, Any]) -> dict[str, Any]:
        search = getattr(project.config, block)
        prompt = project.prompt(search.prompt)
        return {
            block: search.model_dump(mode="json", exclude={"prompt"}),
            "prompt": stable_hash(prompt) if prompt is not None else "graphrag default",
            "response_type": options.get("response_type", DEFAULT_RESPONSE_TYPE),
            "completion": model_spec(project, search.completion_model_id, True),
            "embedding": model_spec(project, search.embedding_model_id, False),
        }

    return settings


def _tog_settings(project: Project, options: dict[str, Any]) -> dict[str, Any]:
    from gtog.tog.settings import load_tog_settings
    from gtog.tog.templates import load_prompts

    c = project.config
    tog = load_tog_settings(project.root, options.get("tog_search") or None)
    prompts = load_prompts(tog, project.root)
    return {
        "tog_search": tog.model_dump(exclude={"prompts"}),
        "prompts": stable_hash(prompts.__dict__),
        "completion": model_spec(
            project, tog.completion_model_id or c.local_search.completion_model_id, True
        ),
        "embedding": model_spec(
            project, tog.embedding_model_id or c.local_search.embedding_model_id, False
        ),
    }


def _tog_check(overrides: dict[str, Any], source: str) -> None:
    from gtog.tog.settings import validate_tog_overrides

    validate_tog_overrides(overrides, source)


METHODS: dict[str, Method | Builder] = {
    "local": Method(build_local, _graphrag_settings("local_search")),
    "basic": Method(build_basic, _graphrag_settings("basic_search")),
    "tog": Method(build_tog, _tog_settings, block="tog_search", validate=_tog_check),
}
"""Method name -> `Method` (or a plain async builder). One entry adds a method."""


def method_entry(method: str) -> Method:
    """The registry entry of `method` as a `Method`; InputError if there is none."""
    if method not in METHODS:
        raise InputError(f"unknown method {method!r} (choose from {', '.join(METHODS)})")
    entry = METHODS[method]
    return entry if isinstance(entry, Method) else Method(entry)


async def build_engine(method: str, project: Project, options: dict[str, Any]) -> SearchEngine:
    """Build `method`'s engine for one project."""
    return await method_entry(method).build(project, options)
