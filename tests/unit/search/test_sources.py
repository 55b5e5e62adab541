"""`retrieved_sources`: the text units a search's context used, as `{id, text}`."""

from __future__ import annotations

import pandas as pd
from graphrag.query.structured_search.base import SearchResult

from gtog.search import retrieved_sources


def _result(context_data: object) -> SearchResult:
    return SearchResult(
        response="r",
        context_data=context_data,  # type: ignore[arg-type]
        context_text="",
        completion_time=0.0,
        llm_calls=0,
        prompt_tokens=0,
        output_tokens=0,
    )


def test_each_source_row_is_its_id_and_text_as_strings_in_order() -> None:
    sources = pd.DataFrame({"id": [7, 3], "text": ["the keeper", "the lamp"], "extra": [1, 2]})
    assert retrieved_sources(_result({"entities": pd.DataFrame(), "sources": sources})) == [
        {"id": "7", "text": "the keeper"},
        {"id": "3", "text": "the lamp"},
    ]


def test_without_an_id_column_the_first_column_names_the_source() -> None:
    units = pd.DataFrame({"short_id": ["a", "b"], "text": ["one", "two"]})
    assert retrieved_sources(_result({"text_units": units})) == [
        {"id": "a", "text": "one"},
        {"id": "b", "text": "two"},
    ]


def test_no_source_table_is_none_and_an_empty_one_is_no_source() -> None:
    assert retrieved_sources(_result({"entities": pd.DataFrame({"id": [1]})})) is None
    assert retrieved_sources(_result("text")) is None
    empty = pd.DataFrame({"id": [], "text": []})
    assert retrieved_sources(_result({"sources": empty})) == []


def test_a_missing_id_or_text_is_empty_not_nan() -> None:
    sources = pd.DataFrame({"id": ["7", None, 9.0], "text": [None, float("nan"), "the lamp"]})
    assert retrieved_sources(_result({"sources": sources})) == [
        {"id": "7", "text": ""},
        {"id": "", "text": ""},
        {"id": "9.0", "text": "the lamp"},
    ]
