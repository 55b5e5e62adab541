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

from gtog._errors import InputError
from gtog._hashing import stable_hash

if TYPE_CHECKING:
    from gtog._project import Project
    from gtog.search._bounds import BoundFn, SearchBound
    from gtog.search._outcome import SearchEngine

__all__ = [
    "DEFAULT_RESPONSE_TYPE",
    "ENTRY_POINTS",
    "METHODS",
    "Builder",
    "Method",
    "build_engine",
    "load_plugin_methods",
    "method_entry",
    "model_spec",
]

DEFAULT_RESPONSE_TYPE = "Single Paragraph"
"""The answer format every engine is asked for unless `response_type` says otherwise."""

Builder = Callable[["Project", dict[str, Any]], Awaitable["SearchEngine"]]
"""A method's builder: `async (project, options) -> engine` (anything with `search`)."""


def _builder(name: str) -> Builder:
    """`gtog.search._builders.<name>`, imported when a run builds its first engine (graphrag's
    engines take seconds to import; a run refused for a bad config never needs them)."""

    async def build(project: Project, options: dict[str, Any]) -> SearchEngine:
        from gtog.search import _builders as builders

        return await getattr(builders, name)(project, options)

    build.__name__ = build.__qualname__ = name
    return build


def _bound(name: str) -> BoundFn:
    """`gtog.search._bounds.<name>`, imported when an estimate asks for it."""

    async def bound(project: Project, options: dict[str, Any]) -> SearchBound:
        from gtog.search import _bounds as bounds

        return await getattr(bounds, name)(project, options)

    bound.__name__ = bound.__qualname__ = name
    return bound


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
    extras: frozenset[str] = frozenset()
    """Engine options (not settings.yaml fields) that `block` also takes."""
    typed_block: bool = False
    """A configured response type is also a setting of `block` (ToG's)."""
    bound: BoundFn | None = None
    """(project, engine options) -> what one question can cost on that index, no model
    call (`gtog.search._bounds`); None: unknown (`gtog eval --estimate --pilot` measures)."""

    def options(self, overrides: dict[str, Any], response_type: str | None) -> dict[str, Any]:
        """Engine options from `block` overrides: its extras apart, the rest as the block."""
        options: dict[str, Any] = {k: v for k, v in overrides.items() if k in self.extras}
        options["response_type"] = response_type or DEFAULT_RESPONSE_TYPE
        if self.block is not None:
            block = {k: v for k, v in overrides.items() if k not in self.extras}
            if self.typed_block and response_type is not None:
                block = {"response_type": response_type, **block}
            options[self.block] = block
        return options


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


_PROMPTS = {
    "local_search": ("prompt",),
    "basic_search": ("prompt",),
    "global_search": ("map_prompt", "reduce_prompt", "knowledge_prompt"),
    "drift_search": ("prompt", "reduce_prompt"),
}


def _graphrag_settings(block: str, extras: frozenset[str] = frozenset()) -> Settings:
    """Effective settings of a graphrag search configured by `settings.yaml`'s `block`."""

    def settings(project: Project, options: dict[str, Any]) -> dict[str, Any]:
        from gtog.search._configured import configured

        search = getattr(configured(project, options, block), block)
        prompts = {
            name: project.prompt(getattr(search, name), f"{block}.{name}")
            for name in _PROMPTS[block]
        }
        out = {
            block: search.model_dump(mode="json", exclude=set(_PROMPTS[block])),
            "response_type": options.get("response_type", DEFAULT_RESPONSE_TYPE),
            "completion": model_spec(project, search.completion_model_id, True),
        }
        for name, text in prompts.items():
            out[name] = stable_hash(text) if text is not None else "graphrag default"
        if getattr(search, "embedding_model_id", None):
            out["embedding"] = model_spec(project, search.embedding_model_id, False)
        out.update({k: options[k] for k in sorted(extras) if k in options})
        return out

    return settings


def _graphrag_check(block: str, extras: frozenset[str] = frozenset()) -> Validate:
    """Overrides of `block` must name fields of graphrag's config block (or `extras`)."""

    def check(overrides: dict[str, Any], source: str) -> None:
        from graphrag.config.models.graph_rag_config import GraphRagConfig

        model = GraphRagConfig.model_fields[block].annotation
        known = set(getattr(model, "model_fields", {})) | set(extras)
        for key in overrides:
            if key not in known:
                raise InputError(
                    f"{source}: {block}.{key}: unknown key (choose from {', '.join(sorted(known))})"
                )

    return check


def _graphrag(
    build: Builder, block: str, extras: frozenset[str] = frozenset(), bound: str | None = None
) -> Method:
    return Method(
        build,
        _graphrag_settings(block, extras),
        block=block,
        validate=_graphrag_check(block, extras),
        extras=extras,
        bound=_bound(bound) if bound else None,
    )


_LEVEL = frozenset({"community_level"})


def _tog_settings(project: Project, options: dict[str, Any]) -> dict[str, Any]:
    from gtog.tog._settings import load_tog_settings, spec_settings
    from gtog.tog._templates import load_prompts

    c = project.config
    tog = load_tog_settings(project.root, options.get("tog_search") or None)
    prompts = load_prompts(tog, project.root)
    return {
        **spec_settings(tog, prompts.__dict__),
        "completion": model_spec(
            project, tog.completion_model_id or c.local_search.completion_model_id, True
        ),
        "embedding": model_spec(
            project, tog.embedding_model_id or c.local_search.embedding_model_id, False
        ),
    }


def _tog_check(overrides: dict[str, Any], source: str) -> None:
    from gtog.tog._settings import validate_tog_overrides

    validate_tog_overrides(overrides, source)


METHODS: dict[str, Method | Builder] = {
    "local": _graphrag(_builder("build_local"), "local_search", _LEVEL, "bound_local"),
    "basic": _graphrag(_builder("build_basic"), "basic_search", bound="bound_basic"),
    "global": _graphrag(
        _builder("build_global"),
        "global_search",
        _LEVEL | {"dynamic_community_selection"},
        "bound_global",
    ),
    "drift": _graphrag(_builder("build_drift"), "drift_search", _LEVEL, "bound_drift"),
    "tog": Method(
        _builder("build_tog"),
        _tog_settings,
        block="tog_search",
        validate=_tog_check,
        typed_block=True,
        bound=_bound("bound_tog"),
    ),
}
"""Method name -> `Method` (or a plain async builder). One entry adds a method."""


ENTRY_POINTS = "gtog.methods"
"""Entry point group of methods from other packages: `name = package.module:builder`."""

_plugins_loaded = False


def load_plugin_methods() -> dict[str, Method | Builder]:
    """Add the methods other installed packages declare (entry point group `gtog.methods`).

    An entry is a builder like gtog's own, `async (project, options) -> engine`, or a
    `Method`. A name gtog already has is not replaced. Loaded once per process.
    """
    global _plugins_loaded
    if not _plugins_loaded:
        _plugins_loaded = True
        from importlib.metadata import entry_points

        for ep in entry_points(group=ENTRY_POINTS):
            if ep.name in METHODS:
                continue
            try:
                METHODS[ep.name] = ep.load()
            except Exception as exc:  # a broken plug-in names itself, not a traceback
                raise InputError(
                    f"entry point {ep.name} = {ep.value} ({ENTRY_POINTS}): cannot load: {exc}"
                ) from None
    return METHODS


def method_entry(method: str) -> Method:
    """The registry entry of `method` as a `Method`; InputError if there is none."""
    load_plugin_methods()
    if method not in METHODS:
        raise InputError(f"unknown method {method!r} (choose from {', '.join(METHODS)})")
    entry = METHODS[method]
    return entry if isinstance(entry, Method) else Method(entry)


async def build_engine(method: str, project: Project, options: dict[str, Any]) -> SearchEngine:
    """Build `method`'s engine for one project."""
    return await method_entry(method).build(project, options)
