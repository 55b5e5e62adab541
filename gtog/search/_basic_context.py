"""Basic search's context (graphrag's `BasicSearchContext`), without a pandas table per question.

graphrag's builder finds the retrieved text units by scanning every unit of the index, puts
them in a pandas DataFrame, walks it with `iterrows` and writes it with `to_csv`: 0.8-1.0 ms
of CPU a question on the example index, nearly all of a basic context. `TextUnitContext`
builds the same context (the same `id|text` text, character for character, and an equal
table) from the units looked up by id and Python's csv writer, the writer `to_csv` uses,
with the same settings: 0.2 ms. Where graphrag's builder gives an empty table (no question,
nothing retrieved, the first unit over the token budget) or meets a unit without an id or
text, graphrag's builder builds.

`quick_context` builds on the event loop when that waits on nothing: the vectors in memory,
the question's embedding fetched, every retrieved unit's tokens counted by an earlier
question (`RememberedCounts`); else it gives None and the context is built where it was
(a worker thread), which counts them.
"""

from __future__ import annotations

import csv
import io
import logging
import os
from typing import Any

import pandas as pd
from graphrag.query.context_builder.builders import ContextBuilderResult
from graphrag.query.structured_search.basic_search.basic_context import BasicSearchContext

from gtog.search._offloop import RememberedCounts
from gtog.search._vectors import MemoryVectors

__all__ = ["TextUnitContext"]

logger = logging.getLogger("graphrag.query.structured_search.basic_search.basic_context")
"""graphrag's builder's logger: its "Reached token limit" warning, logged as it logs it."""


class TextUnitContext(BasicSearchContext):
    """graphrag's basic search context builder, its context built without pandas."""

    def __init__(self, upstream: BasicSearchContext) -> None:
        # (no super().__init__: the upstream builder's models, store, units and tokenizer)
        self.__dict__.update(upstream.__dict__)
        self._positions: dict[str, list[int]] = {}
        for i, unit in enumerate(self.text_units or []):
            self._positions.setdefault(unit.id, []).append(i)

    def build_context(
        self, query: str, conversation_history: Any = None, **kwargs: Any
    ) -> ContextBuilderResult:
        """graphrag's `build_context`: its arguments, its result."""
        built = self._build(query, None, **kwargs)
        if built is None:  # (an empty table, or a unit without an id or text)
            return super().build_context(query, conversation_history, **kwargs)
        return built

    def quick_context(
        self, query: str, response: Any, params: dict[str, Any]
    ) -> ContextBuilderResult | None:
        """The context of `query`, whose embedding `response` is fetched, when building it
        waits on nothing (see the module); else None."""
        if not (
            query
            and isinstance(self.text_unit_embeddings, MemoryVectors)
            and isinstance(self.tokenizer, RememberedCounts)
        ):
            return None
        return self._build(query, response, **params)

    def _build(
        self,
        query: str,
        response: Any,
        k: int = 10,
        max_context_tokens: int = 12_000,
        context_name: str = "Sources",
        column_delimiter: str = "|",
        text_id_col: str = "id",
        text_col: str = "text",
        **_ignored: Any,  # (graphrag's builder takes and ignores any other argument)
    ) -> ContextBuilderResult | None:
        """The context, with graphrag's arguments and defaults; None where graphrag's
        builder is to build it (or, with `response` given: the quick build, where a unit's
        tokens were never counted)."""
        if query == "":
            return None
        embed = (
            (lambda _: response.first_embedding)
            if response is not None
            else (lambda t: self.text_embedder.embedding(input=[t]).first_embedding)
        )
        related = self.text_unit_embeddings.similarity_search_by_text(
            text=query, text_embedder=embed, k=k, include_vectors=False
        )
        found = {r.document.id for r in related}
        units = self.text_units or []
        chosen = sorted(p for i in found for p in self._positions.get(i, ()))
        count = self.tokenizer.counted if response is not None else self.tokenizer.num_tokens
        tokens = count(text_id_col + column_delimiter + text_col + "\n")
        ids: list[str] = []
        texts: list[str] = []
        for p in chosen:
            unit = units[p]
            if not isinstance(unit.short_id, str) or not isinstance(unit.text, str):
                return None
            n = count(unit.short_id + column_delimiter + unit.text + "\n")
            if tokens is None or n is None:
                return None
            if tokens + n > max_context_tokens:
                if ids:  # (else graphrag's builder builds, and warns)
                    logger.warning(
                        "Reached token limit: %s. Reverting to previous context state",
                        tokens + n,
                    )
                break
            tokens += n
            ids.append(unit.short_id)
            texts.append(unit.text)
        if not ids:
            return None
        text = io.StringIO()
        writer = csv.writer(  # (pandas' `to_csv(index=False, escapechar="\\", sep=...)`)
            text,
            lineterminator=os.linesep,
            delimiter=column_delimiter,
            quoting=csv.QUOTE_MINIMAL,
            doublequote=True,
            escapechar="\\",
            quotechar='"',
        )
        writer.writerow([text_id_col, text_col])
        writer.writerows(zip(ids, texts, strict=True))
        table = pd.DataFrame({text_id_col: ids, text_col: texts})
        return ContextBuilderResult(
            context_chunks=text.getvalue(), context_records={context_name.lower(): table}
        )
