"""Call bounds per search method: the most (and least) one question can cost, no model call.

A method's `bound(project, options)` (an entry of the method registry) gives its
`SearchBound` on one index: per stage, calls and tokens per call, each a (low, high) pair,
from the method's own limits and context budgets, the prompts it sends and the index's
largest rows; the question's own tokens are added per question (`SearchBound.cost`).
High is an upper bound (a search never spends more); low is what it must spend.

- local, basic: one answer call (prompt: template + `max_context_tokens` + question), one
  query embedding.
- global: one map call per batch of community reports (the batches are at most
  min(reports, 2 x report tokens / max_context_tokens + 1): each batch but the last is more
  than half full) and one reduce call (template + `data_max_tokens`); with dynamic
  selection, one rating call per community and repeat.
- drift: the query expansion, `primer_folds` primer calls over the top
  `drift_k_followups` reports, at most `n_depth x drift_k_followups` local actions (one
  embedding each) and the reduce.
- tog: the variant's call bound (`2·N·D + D + 1`, `N·D + D + 1` for edge pruning, `2·D +
  1` text-guided, `D + 1` with `prune_strategy` semantic or bm25), every call at most its
  largest prompt over `N x max_candidates` candidate rows and `N x D` evidence hops (plus
  the text units shown); two embeddings (`3 + 2·N·D` with semantic pruning).

Output tokens per call are the call's cap (`max_completion_tokens` / `max_tokens`, ToG's
`pruning_max_tokens`), else the model's own maximum from LiteLLM's table.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphrag_llm.config import ModelConfig

    from gtog._project import Project

__all__ = [
    "MESSAGE_OVERHEAD",
    "BoundFn",
    "SearchBound",
    "Span",
    "Stage",
    "bound_basic",
    "bound_drift",
    "bound_global",
    "bound_local",
    "bound_tog",
    "max_output",
]

MESSAGE_OVERHEAD = 8
"""Tokens a chat message adds beyond its text (role and framing), counted per message."""

FALLBACK_OUTPUT = 16_384
"""Output tokens per call when neither the call nor LiteLLM's table caps them."""

Span = tuple[int, int]
"""(low, high)."""


@dataclass(frozen=True)
class Stage:
    """One kind of call of a search: how many, and tokens per call (question excluded)."""

    name: str
    calls: Span
    prompt: Span
    output: Span


@dataclass(frozen=True)
class SearchBound:
    """What one question can cost a method on one index (see the module docstring)."""

    stages: tuple[Stage, ...]
    chat_model: ModelConfig
    embedding_model: ModelConfig | None = None
    embeddings: Span = (0, 0)
    embedding_extra: int = 0
    """Tokens an embedding request may hold beyond the question (a HyDE text, mentions)."""
    context: int = 0
    """The most context tokens an answer is made from (what faithfulness judges read)."""
    answer: int = 0
    """The most tokens an answer can have."""
    rule: str = ""
    tokens: Callable[[str], int] | None = None
    """Tokens of a text by the model's tokenizer (for the question's share)."""

    def chat(self, question: int) -> tuple[Span, Span, Span]:
        """(calls, prompt tokens, output tokens), each (low, high), for a question of
        `question` tokens."""
        calls = (sum(s.calls[0] for s in self.stages), sum(s.calls[1] for s in self.stages))
        prompt = tuple(
            sum(s.calls[i] * (s.prompt[i] + question) for s in self.stages) for i in (0, 1)
        )
        output = tuple(sum(s.calls[i] * s.output[i] for s in self.stages) for i in (0, 1))
        return calls, prompt, output  # type: ignore[return-value]

    def embedding(self, question: int) -> tuple[Span, Span]:
        """(calls, input tokens), each (low, high)."""
        low, high = self.embeddings
        return (low, high), (low * question, high * (question + self.embedding_extra))


BoundFn = Callable[["Project", dict[str, Any]], Awaitable[SearchBound]]


class Counter:
    """Tokens by the model's tokenizer (the one graphrag budgets contexts with)."""

    def __init__(self, project: Project, model_id: str) -> None:
        from gtog.llm._models import chat_model_from_config

        self.model = chat_model_from_config(project.config, model_id)

    def __call__(self, text: str | None) -> int:
        return self.model.count_tokens(text or "")

    def largest(self, texts: Iterable[Any], top: int = 20) -> int:
        """Tokens of the largest text (the `top` largest by UTF-8 size are counted)."""
        sized = sorted((str(t or "") for t in texts), key=lambda t: len(t.encode()), reverse=True)
        return max((self(t) for t in sized[:top]), default=0)


def max_output(config: ModelConfig, explicit: int | None = None) -> int:
    """Output tokens one call may produce: `explicit`, the model's call args, LiteLLM's
    maximum for the model, else `FALLBACK_OUTPUT`."""
    if explicit:
        return int(explicit)
    args = config.call_args or {}
    for key in ("max_completion_tokens", "max_tokens"):
        if args.get(key):
            return int(args[key])
    try:
        import litellm

        info = litellm.model_cost.get(config.model) or litellm.model_cost.get(
            f"{config.model_provider}/{config.model}"
        )
        value = (info or {}).get("max_output_tokens") or (info or {}).get("max_tokens")
        if value:
            return int(value)
    except Exception:  # LiteLLM's table is a convenience: without it, the fallback
        pass
    return FALLBACK_OUTPUT


def _template(project: Project, path: str | None, key: str, default: str) -> str:
    text = project.prompt(path, key)
    return default if text is None else text


def _messages(n: int) -> int:
    return n * MESSAGE_OVERHEAD


async def _one_answer(project: Project, options: dict[str, Any], block: str) -> SearchBound:
    """local and basic: one embedding, one answer call from a context of the block's budget."""
    from gtog.search._configured import configured

    config = configured(project, options, block)
    search = getattr(config, block)
    if block == "local_search":
        from graphrag.prompts.query.local_search_system_prompt import (
            LOCAL_SEARCH_SYSTEM_PROMPT as DEFAULT,
        )
    else:
        from graphrag.prompts.query.basic_search_system_prompt import (
            BASIC_SEARCH_SYSTEM_PROMPT as DEFAULT,
        )
    count = Counter(project, search.completion_model_id)
    template = count(_template(project, search.prompt, f"{block}.prompt", DEFAULT))
    chat = config.get_completion_model_config(search.completion_model_id)
    out = max_output(chat)
    budget = int(search.max_context_tokens)
    fixed = template + _messages(2) + count(str(options.get("response_type", "")))
    return SearchBound(
        stages=(Stage("response", (1, 1), (fixed, fixed + budget), (1, out)),),
        chat_model=chat,
        embedding_model=config.get_embedding_model_config(search.embedding_model_id),
        embeddings=(1, 1),
        context=budget,
        answer=out,
        rule="1 call",
        tokens=count,
    )


async def bound_local(project: Project, options: dict[str, Any]) -> SearchBound:
    """graphrag local search (see the module docstring)."""
    return await _one_answer(project, options, "local_search")


async def bound_basic(project: Project, options: dict[str, Any]) -> SearchBound:
    """graphrag basic search (see the module docstring)."""
    return await _one_answer(project, options, "basic_search")


async def _reports(project: Project, level: int) -> list[tuple[str, str]]:
    """(title, full content) of the community reports at `level` (graphrag's selection)."""
    from graphrag.query.indexer_adapters import read_indexer_reports

    communities = await project.require("communities")
    reports = read_indexer_reports(await project.require("community_reports"), communities, level)
    return [(r.title or "", r.full_content or r.summary or "") for r in reports]


async def bound_global(project: Project, options: dict[str, Any]) -> SearchBound:
    """graphrag global search (see the module docstring)."""
    from graphrag.prompts.query.global_search_map_system_prompt import MAP_SYSTEM_PROMPT
    from graphrag.prompts.query.global_search_reduce_system_prompt import REDUCE_SYSTEM_PROMPT

    from gtog.search._configured import configured

    config = configured(project, options, "global_search")
    gs = config.global_search
    count = Counter(project, gs.completion_model_id)
    reports = await _reports(project, int(options.get("community_level", 2)))
    sizes = [count(t) + count(c) + 12 for t, c in reports]  # id | title | content | rank
    total, budget = sum(sizes), int(gs.max_context_tokens)
    batches = min(len(sizes), int(2 * total / budget) + 1) if sizes else 1
    chat = config.get_completion_model_config(gs.completion_model_id)
    out = max_output(chat)
    map_t = count(_template(project, gs.map_prompt, "global_search.map_prompt", MAP_SYSTEM_PROMPT))
    red_t = count(
        _template(project, gs.reduce_prompt, "global_search.reduce_prompt", REDUCE_SYSTEM_PROMPT)
    )
    per_batch = min(budget, total + 50)  # a batch holds at most the budget, or every report
    map_fixed, red_fixed = map_t + _messages(2), red_t + _messages(2)
    stages = [
        Stage("map", (1, batches), (map_fixed, map_fixed + per_batch), (1, out)),
        Stage("reduce", (0, 1), (red_fixed, red_fixed + int(gs.data_max_tokens)), (1, out)),
    ]
    rule = f"{batches} map batches + 1 reduce"
    if options.get("dynamic_community_selection"):
        communities = await project.require("communities")
        rates = len(communities) * int(gs.dynamic_search_num_repeats)
        biggest = max(sizes, default=0)
        stages.append(Stage("selection", (0, rates), (50, 2_000 + biggest), (1, out)))
        rule += f" + {rates} community ratings"
    return SearchBound(
        stages=tuple(stages),
        chat_model=chat,
        context=min(total, batches * budget),
        answer=out,
        rule=rule,
        tokens=count,
    )


async def bound_drift(project: Project, options: dict[str, Any]) -> SearchBound:
    """graphrag DRIFT search (see the module docstring)."""
    from graphrag.prompts.query.drift_search_system_prompt import (
        DRIFT_LOCAL_SYSTEM_PROMPT,
        DRIFT_PRIMER_PROMPT,
        DRIFT_REDUCE_PROMPT,
    )

    from gtog.search._configured import configured

    config = configured(project, options, "drift_search")
    ds = config.drift_search
    count = Counter(project, ds.completion_model_id)
    reports = await _reports(project, int(options.get("community_level", 2)))
    sizes = sorted((count(c) for _, c in reports), reverse=True)
    k = int(ds.drift_k_followups)
    top = sum(sizes[:k])
    folds = max(1, int(ds.primer_folds or 1))
    depth = int(ds.n_depth)
    chat = config.get_completion_model_config(ds.completion_model_id)
    out = max_output(chat)
    action_out = max_output(chat, ds.local_search_llm_max_gen_completion_tokens)
    reduce_out = max_output(chat, ds.reduce_max_completion_tokens)
    local_t = count(_template(project, ds.prompt, "drift_search.prompt", DRIFT_LOCAL_SYSTEM_PROMPT))
    reduce_t = count(
        _template(project, ds.reduce_prompt, "drift_search.reduce_prompt", DRIFT_REDUCE_PROMPT)
    )
    primer_t = count(DRIFT_PRIMER_PROMPT)
    actions = depth * k
    answers = (1 + actions) * max(action_out, out)
    local_fixed, reduce_fixed = local_t + _messages(2), reduce_t + _messages(2)
    action_prompt = local_fixed + int(ds.local_search_max_data_tokens) + out  # + its query
    stages = (
        Stage("expansion", (1, 1), (80, 80 + max(sizes, default=0)), (1, out)),
        Stage("primer", (folds, folds), (primer_t, primer_t + top), (1, out)),
        Stage("action", (0, actions), (local_fixed, action_prompt), (1, action_out)),
        Stage("reduce", (1, 1), (reduce_fixed, reduce_fixed + answers), (1, reduce_out)),
    )
    return SearchBound(
        stages=stages,
        chat_model=chat,
        embedding_model=config.get_embedding_model_config(ds.embedding_model_id),
        embeddings=(1, 1 + actions),
        embedding_extra=max(out, action_out),
        context=top + actions * int(ds.local_search_max_data_tokens),
        answer=reduce_out,
        rule=f"1 expansion + {folds} primer folds + {depth} x {k} actions + 1 reduce",
        tokens=count,
    )


async def bound_tog(project: Project, options: dict[str, Any]) -> SearchBound:
    """Think-on-Graph (see the module docstring)."""
    import pandas as pd

    from gtog.tog._settings import load_tog_settings
    from gtog.tog._templates import load_prompts

    overrides = dict(options.get("tog_search") or {})
    if options.get("response_type"):
        overrides.setdefault("response_type", options["response_type"])
    s = load_tog_settings(project.root, overrides or None)
    c = project.config
    model_id = s.completion_model_id or c.local_search.completion_model_id
    count = Counter(project, model_id)
    prompts = load_prompts(s, project.root)
    template = max(count(t) for t in prompts.__dict__.values()) + count(s.response_type)
    entities = await project.require("entities")
    relationships = await project.require("relationships")
    titles = count.largest(entities["title"]) if "title" in entities else 0
    row = count.largest(relationships.get("description", [])) + 2 * titles + 12
    described = entities.get("description", pd.Series([""] * len(entities)))
    pairs = zip(entities["title"], described, strict=True)
    entity_row = count.largest(f"{t} {d}" for t, d in pairs) + 8
    units = 0
    if s.text_guided:
        units = s.text_unit_max_tokens
    elif s.use_text_units:
        text_units = await project.table("text_units", optional=True)
        if text_units is not None and "text" in text_units:
            units = s.max_text_units * (count.largest(text_units["text"]) + 8)
    n, d = s.width, s.depth
    variable = n * s.max_candidates * max(row, entity_row) + n * d * row + units
    chat = c.get_completion_model_config(model_id)
    out = max_output(chat, s.pruning_max_tokens)
    answer = max_output(chat, s.answer_max_tokens)
    calls = s.max_llm_calls
    fixed = template + _messages(1)
    stages = (
        Stage("explore", (0, calls - 1), (fixed, fixed + variable), (1, out)),
        Stage("answer", (1, 1), (fixed, fixed + variable), (1, answer)),
    )
    return SearchBound(
        stages=stages,
        chat_model=chat,
        embedding_model=c.get_embedding_model_config(
            s.embedding_model_id or c.local_search.embedding_model_id
        ),
        embeddings=(0, 2 + s.max_embedding_calls),  # (semantic pruning embeds candidates)
        embedding_extra=out,
        context=n * d * row + units,
        answer=answer,
        rule=f"{s.call_bound_rule} = {calls} calls",
        tokens=count,
    )
