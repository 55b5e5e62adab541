"""A method from another package: registered through the `gtog.methods` entry point group.

It answers every question with the entity titles the question names (no model call), so
tests can see it run through `gtog eval` and `gtog query` like a built-in method.
"""

from __future__ import annotations

from typing import Any

from graphrag.query.structured_search.base import SearchResult


class EchoEngine:
    """Answers with the index's entity titles that occur in the question."""

    def __init__(self, titles: list[str]) -> None:
        self.titles = titles

    async def search(self, query: str) -> SearchResult:
        """graphrag's `search(query) -> SearchResult`."""
        found = [t for t in self.titles if t.lower() in query.lower()]
        return SearchResult(
            response="; ".join(found) or "nothing I know",
            context_data={},
            context_text="entities: " + ", ".join(found),
            completion_time=0.0,
            llm_calls=0,
            prompt_tokens=0,
            output_tokens=0,
        )


async def build_echo(project: Any, options: dict[str, Any]) -> EchoEngine:
    """The builder gtog calls: `(project, options) -> engine`."""
    entities = await project.require("entities")
    return EchoEngine([str(t) for t in entities["title"]])
