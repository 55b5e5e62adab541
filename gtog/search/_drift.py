"""DRIFT, one question at a time: a fresh search state per question, its stages metered
apart, and a query expansion that repeats (`FreshDrift`)."""

from __future__ import annotations

import contextvars
import secrets
from typing import Any

from graphrag.query.structured_search.base import SearchResult

from gtog._hashing import stable_hash
from gtog._internals import model_config_of, seed_drift_primer, set_drift_models
from gtog.search._metering import MeteredCompletion, PrefetchingCompletion
from gtog.search._offloop import OffLoopSearch, QueryEmbedder

__all__ = ["FreshDrift"]

_drift_query: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "gtog_drift_query", default=None
)


class _ChoiceByQuestion:
    """`secrets` as graphrag's DRIFT primer sees it, with a `choice` made by the question.

    The primer writes its hypothetical answer in the shape of a community report it picks
    with `secrets.choice`: a new request each time the same question is asked, which no
    cache can replay and no rerun repeats. Here the pick is a stable hash of the question
    (still a different report for different questions), so a DRIFT search repeats.
    """

    def choice(self, seq: Any) -> Any:
        """The report for the current question (random outside a `FreshDrift` search)."""
        query = _drift_query.get()
        if query is None or not len(seq):
            return secrets.choice(seq)
        return seq[int(stable_hash(query, 16), 16) % len(seq)]

    def __getattr__(self, name: str) -> Any:
        return getattr(secrets, name)


class FreshDrift:
    """DRIFT with a new search state per question.

    graphrag's `DRIFTSearch` keeps its query state on the engine (a second question would
    continue the first one's actions), so each search runs a new `DRIFTSearch` over the
    one shared context builder, with its stages metered apart, and its query expansion's
    template report chosen by the question (`_ChoiceByQuestion`).
    """

    def __init__(self, engine: Any, model_id: str) -> None:
        inner, config = engine.model, model_config_of(engine.model)
        builder = engine.context_builder
        embedder = QueryEmbedder(builder.text_embedder)
        builder.text_embedder = embedder
        builder.model = PrefetchingCompletion(inner, config, model_id, "primer", embedder)
        self._builder = builder
        self._tokenizer = engine.tokenizer
        self._models = {
            stage: MeteredCompletion(inner, config, model_id, stage)
            for stage in ("primer", "action", "reduce")
        }
        seed_drift_primer(_ChoiceByQuestion())

    async def search(self, query: str) -> SearchResult:
        """One DRIFT search from a fresh state."""
        from graphrag.query.structured_search.drift_search.search import DRIFTSearch

        engine = DRIFTSearch(
            model=self._models["reduce"],  # type: ignore[arg-type]
            context_builder=self._builder,
            tokenizer=self._tokenizer,
        )
        set_drift_models(engine, self._models["primer"], self._models["action"])
        engine.local_search = OffLoopSearch(engine.local_search)  # type: ignore[assignment]
        token = _drift_query.set(query)
        try:
            return await engine.search(query)
        finally:
            _drift_query.reset(token)
