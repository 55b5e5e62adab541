"""`gtog eval generate`: questions, reference answers, evidence and assertions from indexes.

For each index and class, sources are picked (`plan`, `sources`), each asked for up to
`per_source` questions (`drafts`); a question whose evidence is found in the source's
text units is a candidate, and a second call checks it (answerable from its evidence, not
from the question alone). Candidates that pass are embedded and near-duplicates dropped
(`selection`); then `n` per class are sampled over the indexes. Enough sources are asked
for `oversample` times the quota. Every answered call is kept (`calls.CallCache`), so a
second run repeats none.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gtog._errors import FatalRunError, InputError, describe_exception
from gtog._hashing import stable_hash
from gtog.eval.generate._calls import CallCache, ask_cached, embed_cached
from gtog.eval.generate._drafts import (
    Candidate,
    Check,
    Drafts,
    GenerationPrompts,
    candidates_from,
    check_prompt,
    draft_prompt,
    load_generation_prompts,
)
from gtog.eval.generate._plan import GenerateOptions, IndexPlan, index_projects, plan_index
from gtog.eval.generate._selection import near_duplicates, quotas, sample
from gtog.eval.generate._sources import CLASSES, Source
from gtog.llm._errors import fatal_reason
from gtog.llm._usage import UsageTally, metering

__all__ = [
    "ClassStats",
    "GenerateOptions",
    "GenerateResult",
    "GenerationRun",
    "generate",
    "prepare_generation",
]

CHECK_MAX_TOKENS = 300
CACHE_FOLDER = ".gtog-generate"
"""Beside the output, the kept calls (a hidden folder: a dataset search passes it over)."""

logger = logging.getLogger(__name__.replace("._", "."))  # eval.log names the module as before


@dataclass
class ClassStats:
    """What happened to one class's questions on one index."""

    quota: int = 0
    sources: int = 0
    failed_calls: int = 0
    written: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    failed_check: dict[str, int] = field(default_factory=dict)
    duplicates: int = 0
    passed: int = 0
    kept: int = 0
    example_error: str | None = None

    def count(self, reason: str, into: str = "dropped") -> None:
        """Count one candidate under `reason` in `dropped` or `failed_check`."""
        target = getattr(self, into)
        target[reason] = target.get(reason, 0) + 1


@dataclass
class GenerationRun:
    """A prepared generation: prompts, plans per index, quotas and the call cache."""

    options: GenerateOptions
    prompts: GenerationPrompts
    plans: list[IndexPlan]
    quotas: dict[str, dict[str, int]]
    """class -> index key -> questions wanted."""
    cache: CallCache

    @property
    def draft_calls(self) -> int:
        """Generation calls to make (one per source)."""
        return sum(len(s) for p in self.plans for s in p.sources.values())

    @property
    def secrets(self) -> list[str]:
        """API keys of every index's models (masked in logs)."""
        return [s for p in self.plans for s in p.secrets]


@dataclass
class GenerateResult:
    """The questions written, and per (index, class) what happened to the candidates."""

    items: list[dict[str, Any]]
    stats: dict[tuple[str, str], ClassStats]
    shortfall: dict[str, int]
    """class -> questions fewer than `n` (too few candidates passed)."""
    usage: UsageTally
    cache_hits: int = 0


async def prepare_generation(options: GenerateOptions) -> GenerationRun:
    """Validate the options, load each index's models and pick its sources; InputError
    (one line, naming the file or option) on bad input, before any model call."""
    unknown = [c for c in options.classes if c not in CLASSES]
    if unknown or not options.classes:
        what = unknown[0] if unknown else "(none)"
        raise InputError(f"--classes: {what}: choose from {', '.join(CLASSES)}")
    if options.n < 1 or options.per_source < 1 or options.oversample < 1:
        raise InputError("--n and --per-source must be at least 1, --oversample at least 1.0")
    if not 0 < options.dedup <= 1:
        raise InputError("--dedup: a cosine similarity in (0, 1]")
    prompts = load_generation_prompts(options.prompts_dir)
    projects = index_projects(options)
    keys = list(projects)
    wanted = {kind: quotas(options.n, keys) for kind in options.classes}
    plans = [
        await plan_index(options, k, root, {kind: wanted[kind][k] for kind in options.classes})
        for k, root in projects.items()
    ]
    cache_path = options.output.parent / CACHE_FOLDER / f"{options.output.name}.calls.jsonl"
    cache = await asyncio.to_thread(CallCache, cache_path)
    return GenerationRun(options, prompts, plans, wanted, cache)


def item_of(c: Candidate) -> dict[str, Any]:
    """A candidate as an item of gtog's dataset format (`type` for `group_by`)."""
    item: dict[str, Any] = {
        "id": f"{c.index_key}-{c.kind}-{stable_hash([c.index_key, c.kind, c.question], 10)}",
        "index_key": c.index_key,
        "type": c.kind,
        "question": c.question,
        "answer": c.answer,
        "context": [e.text for e in c.evidence],
        "evidence_text_units": list(dict.fromkeys(e.unit_id for e in c.evidence)),
        "assertions": c.assertions,
        "source": c.source,
    }
    if c.linked_kind is not None:
        item["linked_kind"] = c.linked_kind
    return item


Hook = Callable[[int], None]


async def generate(
    run: GenerationRun, on_done: Hook | None = None, on_more: Hook | None = None
) -> GenerateResult:
    """Draft, check, de-duplicate and sample; `on_done(1)` after each model call,
    `on_more(k)` when k check calls are added."""
    o = run.options
    done, more = on_done or (lambda _: None), on_more or (lambda _: None)
    slots = asyncio.Semaphore(o.concurrency)
    stats = {
        (p.key, kind): ClassStats(quota=run.quotas[kind][p.key], sources=len(p.sources[kind]))
        for p in run.plans
        for kind in o.classes
    }
    passed: dict[tuple[str, str], list[tuple[int, int, Candidate]]] = {k: [] for k in stats}

    async def check(plan: IndexPlan, at: tuple[int, int], c: Candidate) -> None:
        st = stats[(plan.key, c.kind)]
        async with slots:
            verdict, error = await ask_cached(
                plan.model,
                check_prompt(run.prompts, c),
                Check,
                run.cache,
                temperature=o.temperature,
                max_tokens=CHECK_MAX_TOKENS,
                category="generate_check",
            )
        done(1)
        why = None
        if verdict is None:
            why = "check reply unusable"
            st.example_error = st.example_error or error
        elif verdict.answerable != 1:
            why = "not answerable from its evidence"
        elif verdict.guessable == 1:
            why = "answerable from the question alone"
        if why is not None:
            st.count(why, "failed_check")
            logger.info(
                "%s %s: %r failed the check: %s (%s)",
                plan.key,
                c.source,
                c.question,
                why,
                error or (verdict.reason if verdict else ""),
            )
            return
        c.check = verdict
        passed[(plan.key, c.kind)].append((*at, c))

    async def draft(plan: IndexPlan, n: int, source: Source) -> None:
        st = stats[(plan.key, source.kind)]
        async with slots:
            drafts, error = await ask_cached(
                plan.model,
                draft_prompt(run.prompts, source, o.per_source),
                Drafts,
                run.cache,
                temperature=o.temperature,
                max_tokens=o.max_tokens,
                category=f"generate_{source.kind}",
            )
        done(1)
        if drafts is None:
            st.failed_calls += 1
            st.example_error = st.example_error or error
            logger.warning("%s %s: generation reply unusable: %s", plan.key, source.ref, error)
            return
        cands, dropped = candidates_from(source, drafts, o.per_source)
        st.written += min(len(drafts.questions), o.per_source)
        for why, question in dropped:
            st.count(why)
            logger.info("%s %s: dropped %r: %s", plan.key, source.ref, question, why)
        more(len(cands))
        await asyncio.gather(*(check(plan, (n, i), c) for i, c in enumerate(cands)))

    with metering() as meter:
        await asyncio.gather(
            *(
                draft(p, n, s)
                for p in run.plans
                for kind in o.classes
                for n, s in enumerate(p.sources[kind])
            )
        )
        pools: dict[str, dict[str, list[Candidate]]] = {kind: {} for kind in o.classes}
        for plan in run.plans:
            cands = [
                c
                for kind in o.classes
                for *_, c in sorted(passed[(plan.key, kind)], key=lambda t: t[:2])
            ]
            try:
                vectors = await embed_cached(plan.embedder, [c.question for c in cands], run.cache)
            except Exception as exc:  # no de-duplication, no questions: stop, keep the calls
                if fatal_reason(exc) is not None:
                    raise
                raise FatalRunError(
                    f"index {plan.key!r}: embedding the questions to drop near-duplicates "
                    f"failed ({describe_exception(exc)}); the answered calls are kept: run "
                    "again to go on"
                ) from exc
            twins = near_duplicates(vectors, o.dedup)
            for kind in o.classes:
                pools[kind][plan.key] = []
            for c, twin in zip(cands, twins, strict=True):
                st = stats[(plan.key, c.kind)]
                if twin is None:
                    pools[c.kind][plan.key].append(c)
                    st.passed += 1
                else:
                    st.duplicates += 1
                    twin_text = cands[twin].question
                    logger.info("%s: %r near-duplicates %r", plan.key, c.question, twin_text)
    items: list[dict[str, Any]] = []
    shortfall: dict[str, int] = {}
    for kind in o.classes:
        picked, _ = sample(pools[kind], o.n, f"{o.seed}:{kind}")
        for key, chosen in picked.items():
            stats[(key, kind)].kept = len(chosen)
            items += [item_of(c) for c in chosen]
        shortfall[kind] = o.n - sum(len(c) for c in picked.values())
    for (key, kind), st in stats.items():
        logger.info("%s %s: %s", key, kind, st)
    return GenerateResult(items, stats, shortfall, meter.tally, run.cache.hits)
