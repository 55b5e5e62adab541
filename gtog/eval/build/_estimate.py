"""What indexing will cost, before it is paid: calls, tokens and USD per key.

The chunks are graphrag's own: the documents cut by the project's chunker and tokenizer.
Extraction is then counted exactly as graphrag makes its calls: one per chunk, plus per
gleaning one "continue" call and (but after the last) one "more?" call, each sending the
conversation so far (at most; the loop stops when the model says no more). Summaries and
community reports depend on what the model extracts, which is not known before; they are
estimated from the stated assumptions (`ENTITIES_PER_CHUNK`, ...), so they are marked `~`.
Prices come from the same table as the run's (`gtog.llm._usage.model_cost_usd`, LiteLLM's
price map); a model without a price leaves the USD unknown, never 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "ENTITIES_PER_CHUNK",
    "EXTRACTION_OUTPUT",
    "GLEANING_OUTPUT",
    "RELATIONSHIPS_PER_CHUNK",
    "REPORT_CONTEXT",
    "SUMMARIZED_SHARE",
    "Estimate",
    "Shape",
    "estimate",
    "total",
]

ENTITIES_PER_CHUNK = 10
RELATIONSHIPS_PER_CHUNK = 10
"""Assumed records per chunk (graphrag's extraction typically finds 5-20 of each)."""
SUMMARIZED_SHARE = 0.3
"""Assumed share of entities and relationships described in more than one chunk: graphrag
summarises only those (one call each)."""
ENTITIES_PER_REPORT = 4
"""Assumed entities per community: reports = ceil(entities / 4) (all levels together)."""
EXTRACTION_OUTPUT = 600
GLEANING_OUTPUT = 200
"""Assumed output tokens of an extraction call, and of each gleaning."""
MESSAGE_TOKENS = 60
"""A continue or loop-check message (graphrag's CONTINUE_PROMPT / LOOP_PROMPT), rounded up."""
DESCRIPTION_TOKENS = 60
"""Assumed tokens of one entity or relationship description."""
REPORT_CONTEXT = 2000
"""Assumed tokens of a community's context (capped by community_reports.max_input_length)."""
REPORT_OUTPUT = 1000
"""Assumed tokens of a report (capped by community_reports.max_length)."""


@dataclass(frozen=True)
class Shape:
    """What the project's settings say about its indexing calls."""

    gleanings: int
    extract_prompt: int
    """Tokens of the extraction prompt template."""
    summarize_prompt: int
    report_prompt: int
    summary_max_length: int
    report_max_length: int
    report_max_input: int


@dataclass(frozen=True)
class Estimate:
    """One key's indexing: calls, tokens and USD (None: a model has no known price)."""

    key: str
    documents: int
    tokens: int
    chunks: int
    extraction_calls: int
    summary_calls: int
    report_calls: int
    prompt_tokens: int
    output_tokens: int
    embedding_tokens: int
    usd: float | None

    @property
    def calls(self) -> int:
        """Chat calls, all stages."""
        return self.extraction_calls + self.summary_calls + self.report_calls


def _extraction(chunk: int, shape: Shape) -> tuple[int, int, int]:
    """(calls, prompt tokens, output tokens) of one chunk's extraction, at most."""
    prompt = shape.extract_prompt + chunk
    calls, sent, out = 1, prompt, EXTRACTION_OUTPUT
    history = prompt + EXTRACTION_OUTPUT
    for g in range(shape.gleanings):
        history += MESSAGE_TOKENS
        calls, sent, out = calls + 1, sent + history, out + GLEANING_OUTPUT
        history += GLEANING_OUTPUT
        if g < shape.gleanings - 1:  # graphrag asks "more?" after every gleaning but the last
            history += MESSAGE_TOKENS
            calls, sent, out = calls + 1, sent + history, out + 1
            history += 1
    return calls, sent, out


def estimate(
    key: str,
    documents: int,
    chunks: Sequence[int],
    shape: Shape,
    price: tuple[float | None, float | None, float | None] = (None, None, None),
) -> Estimate:
    """The estimate for chunks of `chunks` tokens each; `price` = USD per prompt token, per
    output token (chat) and per embedded token (None: unknown)."""
    calls = sent = out = 0
    for c in chunks:
        k, p, o = _extraction(c, shape)
        calls, sent, out = calls + k, sent + p, out + o
    entities = ENTITIES_PER_CHUNK * len(chunks)
    records = entities + RELATIONSHIPS_PER_CHUNK * len(chunks)
    summaries = math.ceil(SUMMARIZED_SHARE * records)
    summary_out = min(shape.summary_max_length, 150)
    sent += summaries * (shape.summarize_prompt + 2 * DESCRIPTION_TOKENS)
    out += summaries * summary_out
    reports = math.ceil(entities / ENTITIES_PER_REPORT) if chunks else 0
    report_out = min(shape.report_max_length, REPORT_OUTPUT)
    sent += reports * (shape.report_prompt + min(shape.report_max_input, REPORT_CONTEXT))
    out += reports * report_out
    embedded = sum(chunks) + entities * DESCRIPTION_TOKENS + reports * report_out
    chat_in, chat_out, embed = price
    usd = None
    if chat_in is not None and chat_out is not None and embed is not None:
        usd = sent * chat_in + out * chat_out + embedded * embed
    return Estimate(
        key=key,
        documents=documents,
        tokens=sum(chunks),
        chunks=len(chunks),
        extraction_calls=calls,
        summary_calls=summaries,
        report_calls=reports,
        prompt_tokens=sent,
        output_tokens=out,
        embedding_tokens=embedded,
        usd=usd,
    )


def total(estimates: Sequence[Estimate]) -> Estimate:
    """All keys together (USD unknown when any key's is)."""
    costs = [e.usd for e in estimates]
    return Estimate(
        key="total",
        documents=sum(e.documents for e in estimates),
        tokens=sum(e.tokens for e in estimates),
        chunks=sum(e.chunks for e in estimates),
        extraction_calls=sum(e.extraction_calls for e in estimates),
        summary_calls=sum(e.summary_calls for e in estimates),
        report_calls=sum(e.report_calls for e in estimates),
        prompt_tokens=sum(e.prompt_tokens for e in estimates),
        output_tokens=sum(e.output_tokens for e in estimates),
        embedding_tokens=sum(e.embedding_tokens for e in estimates),
        usd=None if None in costs else math.fsum(c for c in costs if c is not None),
    )
