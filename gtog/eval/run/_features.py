"""What a run knows of a question before answering it, beyond the dataset: how many of
the index's entities it names (a feature of the routing analysis's learned rule)."""

from __future__ import annotations

import asyncio
import logging

from gtog.eval._dataset import QAItem
from gtog.eval.run._state import EvalRun

__all__ = ["linked_entities", "read_names"]

logger = logging.getLogger(__name__.replace("._", "."))


async def read_names(run: EvalRun, key: str) -> None:
    """Read index `key`'s entity titles into `run.entity_names` (once; in the thread that
    opens the index, beside its tables: see `Engines`)."""
    if key in run.entity_names:
        return
    from gtog.tog._graph import normalise_name

    names: frozenset[str] | None = None
    project = run.projects.get(key)
    try:
        if project is not None:
            table = await project.table("entities", optional=True)
            if table is not None and "title" in table:
                titles = (normalise_name(str(t)) for t in table["title"].dropna())
                names = frozenset(t for t in titles if t)
    except Exception:  # a feature, never a failure: the question is left uncounted
        logger.debug("no entity titles for %s", key, exc_info=True)
    run.entity_names[key] = names


async def _names(run: EvalRun, key: str) -> frozenset[str] | None:
    """The titles, read off the event loop if no engine opening read them: one read per
    index, however many of its questions ask at once."""
    if key not in run.entity_names:
        reading = run.entity_reads.get(key)
        if reading is None:
            loop = asyncio.get_running_loop()
            reading = loop.run_in_executor(None, asyncio.run, read_names(run, key))
            run.entity_reads[key] = reading
        await reading
    return run.entity_names[key]


async def linked_entities(run: EvalRun, item: QAItem) -> int | None:
    """How many of the index's entities the question names: titles (normalised as ToG's
    title scan does) that occur in it as whole words; None when the index's entities
    cannot be read."""
    from gtog.tog._graph import normalise_name

    names = await _names(run, item.index_key)
    if names is None:
        return None
    text = f" {normalise_name(item.question)} "
    return sum(1 for name in names if f" {name} " in text)
