"""LLM-as-judge metrics: correctness, faithfulness, relevance, completeness.

Each judge renders its prompt, asks the model for `{"score": 0|1, "reason": ...}`, parses
the reply robustly (code fences, JSON repair, a `"score": n` pattern) and asks once more
if the reply still cannot be read. A judge that fails records an error, never a score.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import json_repair
from pydantic import BaseModel

from gtog.errors import InputError
from gtog.eval.config import ALL_METRICS
from gtog.llm import ChatModel, UsageTally, model_cost_usd

__all__ = [
    "FIELDS",
    "JudgeParseError",
    "Judgement",
    "PromptSet",
    "judge",
    "judge_trials",
    "load_prompts",
    "parse_verdict",
    "render",
]

FIELDS: dict[str, tuple[str, ...]] = {
    "correctness": ("question", "ground_truth", "predicted"),
    "faithfulness": ("context", "answer"),
    "relevance": ("question", "context"),
    "completeness": ("question", "answer"),
}
"""The placeholders each judge prompt takes."""


class Judgement(BaseModel):
    """One judge's verdict on one answer (score or error, never both)."""

    score: int | float | None = None
    """0/1 from an LLM judge; a fraction in [0, 1] from a lexical metric."""
    reason: str | None = None
    error: str | None = None
    llm_calls: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    """USD of the judge's calls (LiteLLM's price map); None when the model has no price."""
    votes: list[int | None] | None = None
    """Each trial's score when the judge was asked more than once (None: that trial failed)."""


class JudgeParseError(ValueError):
    """A judge reply without a usable 0/1 score."""


@dataclass(frozen=True)
class PromptSet:
    """The judge prompt templates of a run, and a hash that identifies them."""

    templates: dict[str, str]

    @property
    def fingerprint(self) -> str:
        """Hash of every template (a changed prompt is a different judge)."""
        h = hashlib.sha256()
        for name in sorted(self.templates):
            h.update(name.encode() + b"\0" + self.templates[name].encode() + b"\0")
        return h.hexdigest()[:16]


def load_prompts(prompts_dir: Path | None = None) -> PromptSet:
    """Built-in prompts, each replaced by `<prompts_dir>/<metric>.txt` where present."""
    templates: dict[str, str] = {}
    builtin = resources.files("gtog.eval") / "prompts"
    for metric in ALL_METRICS:
        custom = prompts_dir / f"{metric}.txt" if prompts_dir else None
        if custom is not None and custom.is_file():
            text = custom.read_text(encoding="utf-8")
            missing = [f for f in FIELDS[metric] if "{" + f + "}" not in text]
            if missing:
                raise InputError(f"{custom}: prompt lacks placeholder {{{missing[0]}}}")
        else:
            text = (builtin / f"{metric}.txt").read_text(encoding="utf-8")
        templates[metric] = text
    return PromptSet(templates)


def render(template: str, **values: str) -> str:
    """Fill `{name}` placeholders only (the JSON braces in the prompt stay as they are)."""
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), template)


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def _score_of(value: Any) -> int:
    if isinstance(value, bool):
        raise JudgeParseError(f"score must be 0 or 1, got {value!r}")
    if isinstance(value, int | float) and value in (0, 1):
        return int(value)
    if isinstance(value, str) and value.strip() in ("0", "1"):
        return int(value.strip())
    raise JudgeParseError(f"score must be 0 or 1, got {value!r}")


def parse_verdict(text: str) -> tuple[int, str | None]:
    """`(score, reason)` from a judge reply; JudgeParseError if there is no 0/1 score."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        start, end = candidate.find("{"), candidate.rfind("}")
        if start == -1:
            continue
        snippet = candidate[start : end + 1] if end > start else candidate[start:]
        try:
            data = json.loads(snippet)
        except json.JSONDecodeError:
            data = json_repair.loads(snippet)
        if isinstance(data, dict) and "score" in data:
            reason = data.get("reason")
            return _score_of(data["score"]), str(reason) if reason is not None else None
    m = re.search(r'"?score"?\s*[:=]\s*"?([01])\b', text, re.I)
    if m:
        return int(m.group(1)), None
    raise JudgeParseError(f"no score in judge reply: {text[:120]!r}")


async def judge(
    metric: str,
    model: ChatModel,
    prompts: PromptSet,
    values: dict[str, str],
    *,
    temperature: float = 0.0,
    max_tokens: int = 300,
    json_mode: bool = True,
    attempts: int = 2,
    tally: UsageTally | None = None,
) -> Judgement:
    """Run one judge; a reply that cannot be parsed is asked again once, then an error."""
    prompt = render(prompts.templates[metric], **values)
    verdict = Judgement()
    last_error = "no attempt"
    for _ in range(max(1, attempts)):
        try:
            reply = await model.chat(
                prompt, temperature=temperature, max_tokens=max_tokens, json_mode=json_mode
            )
        except Exception as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            verdict.error = f"{type(exc).__name__}: {first}"[:500]
            return verdict
        verdict.llm_calls += 1
        verdict.prompt_tokens += reply.prompt_tokens
        verdict.output_tokens += reply.output_tokens
        if tally is not None:
            tally.add(metric, reply)
        try:
            verdict.score, verdict.reason = parse_verdict(reply.text)
            return verdict
        except JudgeParseError as exc:
            last_error = str(exc)
    verdict.error = f"unparseable judge reply: {last_error}"[:500]
    return verdict


async def judge_trials(
    metric: str,
    model: ChatModel,
    prompts: PromptSet,
    values: dict[str, str],
    *,
    trials: int = 1,
    **kwargs: Any,
) -> Judgement:
    """`judge` asked `trials` times: the majority score, unscored ("tie: ...") on a tie.

    Calls, tokens and cost add up over the trials; `votes` keeps each trial's score.
    """
    verdicts = await asyncio.gather(
        *(judge(metric, model, prompts, values, **kwargs) for _ in range(max(1, trials)))
    )
    for v in verdicts:
        v.cost_usd = model_cost_usd(model.config, v.prompt_tokens, v.output_tokens)
    if len(verdicts) == 1:
        return verdicts[0]
    costs = [v.cost_usd for v in verdicts]
    out = Judgement(
        llm_calls=sum(v.llm_calls for v in verdicts),
        prompt_tokens=sum(v.prompt_tokens for v in verdicts),
        output_tokens=sum(v.output_tokens for v in verdicts),
        cost_usd=None if None in costs else sum(c for c in costs if c is not None),
        votes=[v.score for v in verdicts],  # type: ignore[misc]
    )
    scored = [v for v in verdicts if v.score is not None]
    if not scored:
        out.error = f"all {len(verdicts)} trials failed: {verdicts[0].error}"[:500]
        return out
    ones = sum(1 for v in scored if v.score == 1)
    zeros = len(scored) - ones
    if ones == zeros:
        out.error = f"tie: {ones} of {len(scored)} scored trials said 1, {zeros} said 0"
        return out
    out.score = 1 if ones > zeros else 0
    out.reason = next(v.reason for v in scored if v.score == out.score)
    return out
