"""LLM-as-judge metrics: correctness, faithfulness, relevance, completeness.

Each judge renders its prompt and asks for `{"score": 0|1, "reason": ...}` through the
shared structured-reply helper (`gtog.llm._replies.ask_json`): a verdict counts only when the reply
states a score of exactly 0 or 1 (an echoed `"score": 0 or 1` is no verdict); an
unusable reply is asked once more, then recorded as that metric's error. A judge that
fails records an error ("unscored"), never a score.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, field_validator

from gtog._errors import InputError, describe_exception
from gtog._prompts import placeholders, render_prompt
from gtog.eval.scoring._base import (
    CallBound,
    Judgement,
    PromptSet,
    ScorerBase,
    register_scorer,
)
from gtog.llm._cache import draw
from gtog.llm._errors import fatal_reason
from gtog.llm._models import ChatModel
from gtog.llm._replies import ask_json, exact_choice, optional_text, parse_json_reply
from gtog.llm._usage import UsageMeter, metering
from gtog.search._bounds import MESSAGE_OVERHEAD

if TYPE_CHECKING:
    from gtog.eval._dataset import QAItem

__all__ = [
    "ALL_METRICS",
    "EXTRA_PROMPTS",
    "FIELDS",
    "GRADED",
    "GradedVerdict",
    "JudgeParseError",
    "Judgement",
    "LLMJudge",
    "PromptSet",
    "Verdict",
    "asked_bound",
    "graded_verdict",
    "judge",
    "judge_panel",
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

ALL_METRICS = tuple(FIELDS)
"""The LLM judges, in the order they are reported."""

GRADED: dict[str, tuple[int, int]] = {
    "correctness_graded": (0, 10),
    "completeness_graded": (0, 10),
}
"""The built-in graded judges and their default scales (`judge.scales` may set others):
each prompt has a rubric and asks for a rationale first, then an integer score."""
FIELDS.update({m: ("question", "ground_truth", "predicted") for m in GRADED})

EXTRA_PROMPTS: dict[str, dict[str, tuple[str, ...]]] = {}
"""metric -> {prompt name -> its placeholders}: the prompts of an LLM metric beyond the
four judges (`faithfulness_claims`, the graded judges, ...), loaded only for a run that
scores it (so the prompts' hash of other runs is unchanged), each replaceable by
`<prompts_dir>/<prompt name>.txt` like the judges'."""

_NEEDS = {"ground_truth": "reference", "predicted": "answer"}


class Verdict(BaseModel):
    """A judge reply: an explicit score of 0 or 1 and a reason."""

    score: Literal[0, 1]
    reason: str | None = None

    @field_validator("score", mode="before")
    @classmethod
    def _exact(cls, value: Any) -> Any:
        return exact_choice(value, (0, 1), "score")

    @field_validator("reason", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return optional_text(value)


class GradedVerdict(BaseModel):
    """A graded judge reply: a rationale and an integer score on the metric's scale
    (`graded_verdict(low, high)` sets the scale)."""

    rationale: str | None = None
    score: int
    low: ClassVar[int] = 0
    high: ClassVar[int] = 10

    @field_validator("score", mode="before")
    @classmethod
    def _exact(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("score must be an integer, not a boolean")
        if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
            value = int(value)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int):
            raise ValueError(f"score must be an integer from {cls.low} to {cls.high}")
        if not cls.low <= value <= cls.high:
            raise ValueError(f"score {value} is outside the scale {cls.low}-{cls.high}")
        return value

    @field_validator("rationale", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return optional_text(value)

    @property
    def reason(self) -> str | None:
        return self.rationale


@functools.cache
def graded_verdict(low: int, high: int) -> type[GradedVerdict]:
    """The reply schema of a judge graded from `low` to `high` (integers)."""
    return type(f"GradedVerdict_{low}_{high}", (GradedVerdict,), {"low": low, "high": high})


class JudgeParseError(ValueError):
    """A judge reply without an explicit 0/1 score."""


def load_prompts(prompts_dir: Path | None = None, metrics: Iterable[str] = ()) -> PromptSet:
    """Built-in prompts, each replaced by `<prompts_dir>/<metric>.txt` where present (and
    the `EXTRA_PROMPTS` of `metrics`)."""
    templates: dict[str, str] = {}
    builtin = resources.files("gtog.eval.scoring") / "prompts"
    wanted = {m: FIELDS[m] for m in ALL_METRICS}
    for m in metrics:
        wanted.update(EXTRA_PROMPTS.get(m, {}))
    for metric, fields in wanted.items():
        custom = prompts_dir / f"{metric}.txt" if prompts_dir else None
        if custom is not None and custom.is_file():
            text = custom.read_text(encoding="utf-8")
            missing = [f for f in fields if f not in placeholders(text)]
            if missing:
                raise InputError(f"{custom}: prompt lacks placeholder {{{missing[0]}}}")
        else:
            text = (builtin / f"{metric}.txt").read_text(encoding="utf-8")
        templates[metric] = text
    return PromptSet(templates)


def render(template: str, **values: str) -> str:
    """Fill `{name}` placeholders (gtog's one renderer; JSON braces stay as they are)."""
    return render_prompt(template, values)


def parse_verdict(text: str) -> tuple[int, str | None]:
    """`(score, reason)` from a judge reply; JudgeParseError if it states no 0/1 score."""
    verdict, why = parse_json_reply(text, Verdict)
    if verdict is None:
        raise JudgeParseError(why or "no score")
    return verdict.score, verdict.reason


def _usage(meter: UsageMeter) -> dict[str, Any]:
    """The judgement's usage fields from a meter of its calls."""
    tally = meter.tally
    return {
        "llm_calls": tally.total_calls,
        "prompt_tokens": tally.total_prompt_tokens,
        "output_tokens": tally.total_output_tokens,
        "cost_usd": tally.cost_usd,
        "cached_calls": tally.cached_calls,
        "usd_saved": tally.cached_usd,
    }


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
    timeout: float | None = None,
    scale: tuple[int, int] | None = None,
) -> Judgement:
    """Run one judge; an unusable reply is asked again once, then the metric is unscored.

    With a `scale` (a graded judge) the reply is a rationale and an integer score in it;
    a score outside the scale, or not an integer, is no verdict.

    A fatal provider error (401/403/404) is raised so the run can stop; any other failure,
    including `timeout` seconds passing, is this metric's error.
    """
    schema: type[BaseModel] = Verdict if scale is None else graded_verdict(*scale)
    if scale is not None:
        values = {"low": str(scale[0]), "high": str(scale[1]), **values}
    prompt = render_prompt(prompts.templates[metric], values)
    with metering() as meter:  # what every attempt spent, also when a later one times out
        try:
            reply = await asyncio.wait_for(
                ask_json(
                    model,
                    prompt,
                    schema,
                    temperature=temperature,
                    max_tokens=max_tokens,
                    structured=json_mode,
                    attempts=attempts,
                    category=metric,
                ),
                timeout,
            )
        except TimeoutError:
            return Judgement.unscored(f"timed out after {timeout:g} s", **_usage(meter))
        except Exception as exc:
            if fatal_reason(exc) is not None:
                raise
            return Judgement.unscored(describe_exception(exc), **_usage(meter))
    usage = _usage(meter)
    if reply.value is None:
        why = (reply.error or "").removeprefix("unusable reply: ")
        wanted = "0/1" if scale is None else f"integer {scale[0]}-{scale[1]}"
        return Judgement.unscored(
            f"unparseable judge reply (no explicit {wanted} score): {why}", **usage
        )
    value: Any = reply.value
    return Judgement(
        score=value.score,
        reason=value.reason,
        scale=None if scale is None else list(scale),
        **usage,
    )


def _total(verdicts: list[Judgement], **fields: Any) -> Judgement:
    """A judgement whose calls, tokens and cost add up those of `verdicts` (no score yet)."""
    costs = [v.cost_usd for v in verdicts]
    return Judgement(
        llm_calls=sum(v.llm_calls for v in verdicts),
        prompt_tokens=sum(v.prompt_tokens for v in verdicts),
        output_tokens=sum(v.output_tokens for v in verdicts),
        cost_usd=None if None in costs else sum(c for c in costs if c is not None),
        cached_calls=sum(v.cached_calls for v in verdicts),
        usd_saved=sum(v.usd_saved for v in verdicts),
        **fields,
    )


def _majority(out: Judgement, verdicts: list[Judgement], asked: str) -> Judgement:
    """`out` with the score more than half of `verdicts` gave (`asked`: what they are,
    "trials" or "judges"), or unscored: all failed, a tie, or no majority of those asked."""
    scored = [v for v in verdicts if v.score is not None]
    if not scored:
        out.error = f"all {len(verdicts)} {asked} failed: {verdicts[0].error}"[:500]
        return out
    ones = sum(1 for v in scored if v.score == 1)
    zeros = len(scored) - ones
    if ones == zeros:
        out.error = f"tie: {ones} of {len(scored)} scored {asked} said 1, {zeros} said 0"
        return out
    winner, votes = (1, ones) if ones > zeros else (0, zeros)
    if 2 * votes <= len(verdicts):  # a majority of those asked, not of those that answered
        failed = len(verdicts) - len(scored)
        out.error = (
            f"no majority: {votes} of {len(verdicts)} {asked} said {winner} "
            f"({failed} failed: {next(v.error for v in verdicts if v.error)})"
        )[:500]
        return out
    out.score = winner
    out.reason = next(v.reason for v in scored if v.score == out.score)
    return out


def _average(out: Judgement, verdicts: list[Judgement], asked: str) -> Judgement:
    """`out` with the mean score of `verdicts` (a graded judge's trials or models), or
    unscored when no more than half of those asked gave a score."""
    scored = [v for v in verdicts if v.score is not None]
    if 2 * len(scored) <= len(verdicts):
        failed = len(verdicts) - len(scored)
        why = next((v.error for v in verdicts if v.error), "no score")
        out.error = f"{failed} of {len(verdicts)} {asked} failed: {why}"[:500]
        return out
    out.score = sum(float(v.score) for v in scored) / len(scored)  # type: ignore[arg-type]
    out.reason = scored[0].reason
    out.scale = scored[0].scale
    return out


async def judge_trials(
    metric: str,
    model: ChatModel,
    prompts: PromptSet,
    values: dict[str, str],
    *,
    trials: int = 1,
    **kwargs: Any,
) -> Judgement:
    """`judge` asked `trials` times: the score a majority of the `trials` gave; unscored
    ("tie: ...", "no majority: ...") when no score has more than half of the trials. A
    graded judge (`scale`): the mean of the trials' scores, when more than half gave one.

    Calls, tokens and cost add up over the trials; `votes` keeps each trial's score.
    """

    async def trial(n: int) -> Judgement:
        with draw("trial", n):  # each trial a sample of its own (cache key)
            return await judge(metric, model, prompts, values, **kwargs)

    verdicts = await asyncio.gather(*(trial(n) for n in range(1, max(1, trials) + 1)))
    if len(verdicts) == 1:
        return verdicts[0]
    out = _total(verdicts, votes=[v.score for v in verdicts])
    if kwargs.get("scale") is not None:
        return _average(out, verdicts, "trials")
    return _majority(out, verdicts, "trials")


async def judge_panel(
    metric: str,
    panel: dict[str, ChatModel],
    prompts: PromptSet,
    values: dict[str, str],
    **kwargs: Any,
) -> Judgement:
    """`judge_trials` asked of every model of a panel: the score a strict majority of the
    models gave (no majority, counting the models that failed: unscored); `panel` keeps
    each model's judgement, and calls, tokens and cost add up over the models. A graded
    judge (`scale`): the mean of the models' scores, when more than half gave one."""
    names = list(panel)
    verdicts = list(
        await asyncio.gather(
            *(judge_trials(metric, panel[n], prompts, values, **kwargs) for n in names)
        )
    )
    out = _total(verdicts, panel=dict(zip(names, verdicts, strict=True)))
    if kwargs.get("scale") is not None:  # a graded judge: the models' mean
        return _average(out, verdicts, "judges")
    return _majority(out, verdicts, "judges")


def asked_bound(
    model: ChatModel, prompts: list[tuple[int, int]], trials: int, max_tokens: int
) -> CallBound:
    """The calls of `judge_trials` on `model` for each of `prompts` ((least, most) tokens
    of its text): `trials` each at least, twice that at most (an unusable reply is asked
    once more, `judge`), each reply at most `max_tokens`."""
    t = max(1, trials)
    n = len(prompts)
    return CallBound(
        model.config,
        (t * n, 2 * t * n),
        (
            t * sum(low + MESSAGE_OVERHEAD for low, _ in prompts),
            2 * t * sum(high + MESSAGE_OVERHEAD for _, high in prompts),
        ),
        (t * n, 2 * t * n * max_tokens),
    )


class LLMJudge(ScorerBase):
    """An LLM judge as a scorer: the run's judge model, prompts and trials, per index."""

    uses_llm = True
    binary = True

    async def score(self, item: QAItem, answer: str, context: str | None) -> Judgement:
        """The majority verdict of `setup.trials` judge calls (with a panel, the majority
        of its models' verdicts); unscored on any failure."""
        setup = self.setup
        if (setup.model is None and not setup.panel) or setup.prompts is None:
            return Judgement.unscored("no judge model configured")
        values = {
            "question": item.question,
            "ground_truth": item.judged_reference,  # every gold answer, as alternatives
            "predicted": answer,
            "answer": answer,
            "context": context,
        }
        if any(values[f] is None for f in FIELDS[self.name]):
            return Judgement.unscored(
                "no saved context to judge (output.save_intermediate was off)"
            )
        asked = {f: str(values[f]) for f in FIELDS[self.name]}
        scale = setup.scales.get(self.name) or GRADED.get(self.name)
        sampling: dict[str, Any] = {
            "scale": tuple(scale) if scale is not None else None,
            "trials": setup.trials,
            "temperature": setup.temperature,
            "max_tokens": setup.max_tokens,
            "json_mode": setup.structured_output,
            "timeout": setup.timeout,
        }
        if setup.panel:
            return await judge_panel(self.name, setup.panel, setup.prompts, asked, **sampling)
        return await judge_trials(self.name, setup.model, setup.prompts, asked, **sampling)

    def bound(self, item: QAItem, answer: int, context: int) -> list[CallBound] | None:
        """`asked_bound` of the metric's prompt on every model asked (each panel model at
        its own price): the template with the question and reference as they are, an
        answer of at most `answer` tokens and a context of at most `context`."""
        setup = self.setup
        if setup.prompts is None:
            return []
        fields = FIELDS[self.name]
        texts = {"question": item.question, "ground_truth": item.judged_reference}
        reads_answer = "answer" in fields or "predicted" in fields
        variable = (answer if reads_answer else 0) + (context if "context" in fields else 0)
        models = list(setup.panel.values()) or ([setup.model] if setup.model else [])
        out = []
        for model in models:
            fixed = model.count_tokens(setup.prompts.templates[self.name])
            fixed += sum(model.count_tokens(str(texts.get(f) or "")) for f in fields)
            low = fixed + (1 if reads_answer else 0)
            out.append(
                asked_bound(model, [(low, fixed + variable)], setup.trials, setup.max_tokens)
            )
        return out


for _metric, _fields in FIELDS.items():
    _graded = GRADED.get(_metric)
    register_scorer(
        type(
            "".join(p.title() for p in _metric.split("_")) + "Judge",
            (LLMJudge,),
            {
                "name": _metric,
                "needs": frozenset(_NEEDS.get(f, f) for f in _fields),
                "__doc__": f"The {_metric} LLM judge"
                + (f" (graded {_graded[0]}-{_graded[1]})." if _graded else "."),
                **({"binary": False, "scale": _graded} if _graded else {}),
            },
        )
    )
    if _graded:
        EXTRA_PROMPTS[_metric] = {_metric: _fields}
