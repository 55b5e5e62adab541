"""A context built in the context process comes back with its tables pickled one by one and
unpickled when first read: every way of reading them gives the tables, and a table nobody
reads is never unpickled."""

from __future__ import annotations

import copy
import pickle

import pandas as pd
from graphrag.query.context_builder.builders import ContextBuilderResult
from graphrag.query.structured_search.base import SearchResult

from gtog.search import retrieved_sources
from gtog.search._context_worker import LazyTables, frame, packed, read_frame, unpacked

SOURCES = pd.DataFrame({"id": ["7", "3"], "text": ["the keeper", "the lamp"]})
ENTITIES = pd.DataFrame({"id": ["1"], "title": ["KEEPER"], "rank": [4]})


def _sent() -> LazyTables:
    """A context through the wire, as the parent reads it."""
    import io

    context = ContextBuilderResult(
        context_chunks="ctx", context_records={"sources": SOURCES, "entities": ENTITIES}
    )
    received = unpacked(read_frame(io.BytesIO(frame(packed(context)))))
    assert received.context_chunks == "ctx"
    tables = received.context_records
    assert isinstance(tables, LazyTables)
    return tables


def _still_pickled(tables: LazyTables) -> set[str]:
    return {k for k in tables if isinstance(dict.__getitem__(tables, k), bytes)}


def test_a_table_is_unpickled_when_read_and_only_then() -> None:
    tables = _sent()
    assert _still_pickled(tables) == {"sources", "entities"}
    assert list(tables) == ["sources", "entities"] and len(tables) == 2 and "sources" in tables
    result = SearchResult(
        response="r",
        context_data=tables,
        context_text="ctx",
        completion_time=0.0,
        llm_calls=0,
        prompt_tokens=0,
        output_tokens=0,
    )
    assert retrieved_sources(result) == [
        {"id": "7", "text": "the keeper"},
        {"id": "3", "text": "the lamp"},
    ]
    assert _still_pickled(tables) == {"entities"}  # the run read only the sources
    assert tables["entities"].equals(ENTITIES)
    assert not _still_pickled(tables)


def test_every_way_of_reading_gives_the_tables() -> None:
    readings = {
        "get": lambda t: {k: t.get(k) for k in t},
        "items": lambda t: dict(t.items()),
        "values": lambda t: dict(zip(t, t.values(), strict=True)),
        "dict()": dict,
        "unpacking": lambda t: {**t},
        "copy": lambda t: t.copy(),
        "deepcopy": copy.deepcopy,
        "pickle": lambda t: pickle.loads(pickle.dumps(t)),
    }
    for how, read in readings.items():
        tables = read(_sent())
        assert type(tables) is dict, how
        assert tables["sources"].equals(SOURCES), how
        assert tables["entities"].equals(ENTITIES), how
    tables = _sent()
    assert tables.get("claims") is None and tables.get("claims", 1) == 1
    assert tables.pop("entities").equals(ENTITIES) and list(tables) == ["sources"]
    assert "the keeper" in repr(tables)
