"""Every private attribute gtog reaches into, of graphrag, graphrag_llm and asyncio, in one place.

graphrag has no public way to do these; each function names what it needs, so a graphrag
release that moves one fails `tests/unit/core/test_internals.py` with the name, not a run
with an AttributeError deep in a search. No other gtog module touches a private name of
graphrag's (a test checks that too). `PRIVATE_NAMES` lists them.

- `model_config_of`: the `ModelConfig` a graphrag_llm model was made from
  (`LiteLLMCompletion._model_config`, `LiteLLMEmbedding._model_config`); gtog's own model
  stand-ins carry theirs as the public `model_config`.
- `wrap_global_map_batches`: `GlobalSearch._map_response_single_batch`, wrapped so each map
  batch's calls are metered as the map stage (graphrag runs them as tasks of their own).
- `seed_drift_primer`: the `secrets` module graphrag's DRIFT primer draws its template
  report from, replaced so the draw is made by the question (reproducible runs).
- `factory_models`: the models graphrag's query engine factories make (its
  `graphrag.query.factory` module's `create_completion` and `create_embedding`, which it
  imports from graphrag_llm), given by gtog instead inside the block.
- `set_drift_models`: DRIFT's primer and local-search models, which `DRIFTSearch` builds
  itself from the one model it is given (metered as stages of their own).
- `vector_row_data`: a graphrag vector store's `_extract_data` (LanceDB's), a row's data fields.
- `swapped_default_executor`: asyncio's `loop._default_executor` (no public getter), put back
  after a run that set its own.
- `native_event_loop`: a loop whose tasks and futures are asyncio's C ones (`_asyncio.Task`,
  `_asyncio.Future`). Importing graphrag_llm applies nest_asyncio2, which makes every task and
  future in the process the pure-Python kind (`asyncio.tasks._PyTask`) on Python < 3.14, and
  an evaluation creates tens of them a question; and patches loops' classes with its own
  scheduler (kept off this loop by its `_nest_patched` marker: `BaseEventLoop`'s `_run_once`,
  `_check_running`).
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Executor
from contextlib import contextmanager
from typing import Any

__all__ = [
    "PRIVATE_NAMES",
    "check_internals",
    "factory_models",
    "is_native_loop",
    "model_config_of",
    "native_event_loop",
    "seed_drift_primer",
    "set_drift_models",
    "swapped_default_executor",
    "vector_row_data",
    "wrap_global_map_batches",
]

PRIVATE_NAMES = (
    "_model_config",
    "_nest_patched",
    "_run_once",
    "_check_running",
    "_map_response_single_batch",
    "_extract_data",
    "_default_executor",
)
"""The private attribute names used here and nowhere else in gtog."""


def model_config_of(model: Any) -> Any | None:
    """The `ModelConfig` `model` was made from, or None (a model that is neither graphrag_llm's
    nor one of gtog's stand-ins)."""
    own = getattr(model, "model_config", None)
    if own is not None:
        return own
    return getattr(model, "_model_config", None)


def wrap_global_map_batches(
    engine: Any, wrap: Callable[[Callable[..., Awaitable[Any]]], Callable[..., Awaitable[Any]]]
) -> None:
    """Replace `engine`'s (a graphrag `GlobalSearch`) map-batch coroutine by `wrap(it)`."""
    engine._map_response_single_batch = wrap(engine._map_response_single_batch)


def seed_drift_primer(choice: Any) -> None:
    """Make graphrag's DRIFT primer draw with `choice` (an object with `secrets`' `choice`),
    once per process (an instance of the same type already there is kept)."""
    from graphrag.query.structured_search.drift_search import primer

    if not isinstance(getattr(primer, "secrets", None), type(choice)):
        primer.secrets = choice  # type: ignore[attr-defined]


_FACTORY_MODELS = ("create_completion", "create_embedding")
"""The names `graphrag.query.factory` makes its engines' models with (graphrag_llm's)."""

_factory_models: contextvars.ContextVar[tuple[Callable[..., Any], ...] | None] = (
    contextvars.ContextVar("gtog_factory_models", default=None)
)
_routing = threading.Lock()


@contextmanager
def factory_models(
    completion: Callable[[Any], Any], embedding: Callable[[Any], Any]
) -> Iterator[None]:
    """Inside the block (its thread or task), graphrag's query engine factories
    (`get_local_search_engine` and the others) take their models from `completion(settings)`
    and `embedding(settings)` instead of making them with graphrag_llm's factories.

    gtog gives every engine gated models (`gtog.search._builders._gated`) and a run shares
    them per model entry; the models graphrag made first were thrown away, after graphrag_llm's
    factories had hashed their settings (8-12 ms of Python an engine, per index).
    The factory module's two names are replaced once by routers that call graphrag_llm's
    own functions outside a block, so a bare `build_engine` is as before.
    """
    from graphrag.query import factory

    with _routing:
        for position, name in enumerate(_FACTORY_MODELS):
            original = getattr(factory, name)
            if not getattr(original, "gtog_routed", False):
                setattr(factory, name, _routed(original, position))
    token = _factory_models.set((completion, embedding))
    try:
        yield
    finally:
        _factory_models.reset(token)


def _routed(original: Callable[..., Any], position: int) -> Callable[..., Any]:
    def create(settings: Any, *args: Any, **kwargs: Any) -> Any:
        given = _factory_models.get()
        if given is None or args or kwargs:
            return original(settings, *args, **kwargs)
        return given[position](settings)

    create.gtog_routed = True  # type: ignore[attr-defined]
    return create


def set_drift_models(engine: Any, primer: Any, action: Any) -> None:
    """Give a graphrag `DRIFTSearch` its primer's and its local actions' models."""
    engine.primer.chat_model = primer
    engine.local_search.model = action


def vector_row_data(store: Any, row: dict[str, Any], select: Any) -> dict[str, Any]:
    """A stored row's data fields, as graphrag's vector store (`LanceDBVectorStore`) reads them."""
    return store._extract_data(row, select)


@contextmanager
def swapped_default_executor(loop: asyncio.AbstractEventLoop, pool: Executor) -> Iterator[None]:
    """`pool` as `loop`'s default executor while the block runs; the previous one after."""
    previous = getattr(loop, "_default_executor", None)
    loop.set_default_executor(pool)
    try:
        yield
    finally:
        loop._default_executor = previous  # type: ignore[attr-defined]


try:
    import _asyncio as _c_asyncio  # asyncio's C tasks and futures
except ImportError:  # pragma: no cover - a Python built without the C accelerator
    _c_asyncio = None


class _NativeLoop(asyncio.SelectorEventLoop):
    """`native_event_loop`'s kind of loop: its futures are asyncio's C ones, and it runs
    asyncio's own `_run_once`. nest_asyncio2 patches the class of every loop it sees (the
    running one too, when graphrag_llm is first imported mid-run) with a re-entrant
    pure-Python scheduler; marked as patched, this one is left alone, and its methods are
    `BaseEventLoop`'s, which nest_asyncio2 never touches. (A loop run inside it raises
    "This event loop is already running" rather than hanging on a C task re-entered.)"""

    _nest_patched = True
    run_forever = asyncio.BaseEventLoop.run_forever
    run_until_complete = asyncio.BaseEventLoop.run_until_complete
    _run_once = asyncio.BaseEventLoop._run_once  # type: ignore[attr-defined]
    _check_running = asyncio.BaseEventLoop._check_running  # type: ignore[attr-defined]

    def create_future(self) -> asyncio.Future[Any]:
        if _c_asyncio is None:  # pragma: no cover
            return super().create_future()
        return _c_asyncio.Future(loop=self)


def native_event_loop() -> asyncio.AbstractEventLoop:
    """A new event loop making asyncio's C tasks and futures (where the C module exists),
    whatever nest_asyncio2 made of `asyncio.Task` and `asyncio.Future`."""
    loop = _NativeLoop()
    if _c_asyncio is not None:
        task = _c_asyncio.Task
        loop.set_task_factory(lambda loop, coro, **kwargs: task(coro, loop=loop, **kwargs))
    return loop


def is_native_loop(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether `loop` came from `native_event_loop` (nest_asyncio2 cannot re-enter its C
    tasks: a loop run inside it would never finish)."""
    return isinstance(loop, _NativeLoop)


def check_internals() -> list[str]:
    """What the installed graphrag, graphrag_llm and asyncio no longer have of what this
    module uses (empty when all is there)."""
    import inspect

    from graphrag.query.structured_search.drift_search import primer
    from graphrag.query.structured_search.drift_search.search import DRIFTSearch
    from graphrag.query.structured_search.global_search.search import GlobalSearch
    from graphrag_llm.completion.lite_llm_completion import LiteLLMCompletion
    from graphrag_llm.embedding.lite_llm_embedding import LiteLLMEmbedding
    from graphrag_vectors.lancedb import LanceDBVectorStore

    missing = []
    for cls in (LiteLLMCompletion, LiteLLMEmbedding):
        if "self._model_config" not in inspect.getsource(cls.__init__):
            missing.append(f"{cls.__module__}.{cls.__name__}._model_config")
    if not inspect.iscoroutinefunction(getattr(GlobalSearch, "_map_response_single_batch", None)):
        missing.append(f"{GlobalSearch.__module__}.GlobalSearch._map_response_single_batch")
    if not callable(getattr(getattr(primer, "secrets", None), "choice", None)):
        missing.append(f"{primer.__name__}.secrets (with a choice function)")
    init = inspect.getsource(DRIFTSearch.__init__)
    if "self.primer" not in init or "self.local_search" not in init:
        missing.append(f"{DRIFTSearch.__module__}.DRIFTSearch.primer / .local_search")
    else:
        primer_init = inspect.getsource(primer.DRIFTPrimer.__init__)
        if "self.chat_model" not in primer_init:
            missing.append(f"{primer.__name__}.DRIFTPrimer.chat_model")
    from graphrag.query import factory

    for name in _FACTORY_MODELS:
        if not callable(getattr(factory, name, None)):
            missing.append(f"{factory.__name__}.{name}")
    if f"= {_FACTORY_MODELS[0]}(" not in inspect.getsource(factory.get_local_search_engine):
        missing.append(f"{factory.__name__}.get_local_search_engine's {_FACTORY_MODELS[0]}")
    if not callable(getattr(LanceDBVectorStore, "_extract_data", None)):
        missing.append(f"{LanceDBVectorStore.__module__}.LanceDBVectorStore._extract_data")
    loop = asyncio.new_event_loop()
    try:
        if not hasattr(loop, "_default_executor"):
            missing.append("asyncio's loop._default_executor")
    finally:
        loop.close()
    for name in ("_run_once", "_check_running"):
        if not callable(getattr(asyncio.BaseEventLoop, name, None)):
            missing.append(f"asyncio.BaseEventLoop.{name}")
    native = native_event_loop()
    try:

        async def probe() -> tuple[type, type]:
            return type(asyncio.current_task()), type(native.create_future())

        kinds = native.run_until_complete(probe())
        if _c_asyncio is not None and kinds != (_c_asyncio.Task, _c_asyncio.Future):
            missing.append("a native loop's C tasks and futures (_asyncio.Task, .Future)")
    finally:
        native.close()
    return missing
