"""What a run knows of a question before answering it, beyond the dataset: how many of
the index's entities it names (a feature of the routing analysis's learned rule)."""

from __future__ import annotations

import asyncio
import logging

from gtog.eval._dataset import QAItem
from gtog.eval.run._state import EvalRun

__all__ = ["linked_entities", "read_names"]

logger = logging.getLogger(__name__.replace("._", "."))


async def _read_names(run: EvalRun, key: str) -> frozenset[str] | None:
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
    return names


async def read_names(run: EvalRun, key: str) -> None:
    """Read index `key`'s entity titles into `run.entity_names` unless they are there: in
    the thread that opens the index, beside its tables (`Engines`), so its questions find
    them read."""
    if key not in run.entity_names:
        run.entity_names[key] = await _read_names(run, key)


async def _names(run: EvalRun, key: str) -> frozenset[str] | None:
    """The index's entity titles, read once: the questions that ask while the table is
    being read wait for that one read (they each read it before: 20 reads of the same
    table at concurrency 20)."""
    if key in run.entity_names:
        return run.entity_names[key]
    reading = run.entity_reads.get(key)
    if reading is None or reading.get_loop() is not asyncio.get_running_loop():
        reading = run.entity_reads[key] = asyncio.ensure_future(_read_names(run, key))
    names = await asyncio.shield(reading)  # (a waiter cancelled leaves the read to the others)
    run.entity_names[key] = names
    return names


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
