"""Abstentions: answers that decline to answer, detected by a small rule set, and counted.

An answer abstains when, after trimming, it is a placeholder (`PLACEHOLDERS`: empty,
`n/a`, `none`, `unknown`, `no answer`, `-`, `?`, `tbd`, ... alone, in brackets or not), when
it is one of the no-answer texts other systems send as they are (`KNOWN_DECLINES`:
graphrag's global search "I am sorry but I am unable to answer this question given the
provided data.", LightRAG's "Sorry, I'm not able to provide an answer to that
question.[no-context]", any answer carrying LightRAG's `[no-context]` tag), or when its
**claim** declines.

The claim is the answer's first sentence after leading markdown headings, rules and an
`Answer:` label are skipped, markdown emphasis and bracketed tags (`[no-context]`,
`[Data: Reports (1)]`) are dropped, a sentence that only apologises ("Sorry.") is passed
over, and quoted speech is blanked out (a character's "I don't know where the money is" is
the story, not the answer's claim). A decline pattern (`DECLINES`) must then stand at the
start of the claim, after at most a preamble ("Sorry,", "I'm sorry, but", "Unfortunately,",
"Based on the provided data,"): "I do not know", "I cannot / am not able to answer", "I
don't have enough information", "the data / context / text ... does not say (mention,
contain, ...)", "it doesn't say", "there is no information / mention ...", "not enough
information", "the question cannot be answered". So "Because the police were unable to find
the body, ..." and "There was no evidence against him, so ..." answer: their decline-like
words are not the claim. A run adds its own patterns (regular expressions, searched
anywhere in the claim) with `abstention.patterns` in eval_config.yaml, and can drop the
built-in ones with `abstention.builtin: false`. tests/fixtures/abstentions.yaml is the
labelled set the rules are measured on.

Per method the summary gives the abstention rate (over the answers the method gave: failed
searches are not answers) with its Wilson interval, and each metric's mean over the
answers that did not abstain (`answered`) beside the plain mean: a method that says "I do
not know" is not the same as one that is wrong. Pure functions of records.
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Any

from gtog.eval.results._inference import mean_stats
from gtog.eval.results._records import MethodRecord

__all__ = [
    "DECLINES",
    "KNOWN_DECLINES",
    "PLACEHOLDERS",
    "AbstentionRules",
    "abstention_summary",
    "claim",
    "first_sentence",
]

PLACEHOLDERS = frozenset(
    {
        "",
        "n/a",
        "na",
        "none",
        "null",
        "nil",
        "nan",
        "unknown",
        "no answer",
        "no response",
        "not available",
        "not applicable",
        "-",
        "--",
        "?",
        "...",
        "tbd",
        "todo",
    }
)
"""Whole answers (lower case, brackets and end punctuation trimmed) that are no answer."""

KNOWN_DECLINES = frozenset(
    {
        # graphrag's global search when every map answer scored 0 (NO_DATA_ANSWER)
        "i am sorry but i am unable to answer this question given the provided data",
        # LightRAG's PROMPTS["fail_response"] (its `[no-context]` tag is dropped first)
        "sorry, i'm not able to provide an answer to that question",
    }
)
"""Other systems' canned no-answer texts (lower case, end punctuation trimmed)."""

_NO_CONTEXT_TAG = "[no-context]"
"""LightRAG marks its canned reply (no context retrieved) with this tag."""

_SOURCE = (
    r"(?:(?:provided|given|available|above|retrieved|supplied|relevant|input|source) )?"
    r"(?:data|data tables?|tables?|context|contexts|information|evidence|knowledge graph|"
    r"knowledge base|graph|text|texts|documents?|sources?|reports?|passages?|records?|"
    r"transcripts?|story|stories|excerpts?|chunks?|snippets?|materials?|entities)"
    r"(?: (?:provided|given|available|above|retrieved|supplied|here|at hand))?"
)
_NOT = r"(?:does not|do not|did not|doesn't|don't|didn't|does n't|do n't)"
_I_CANNOT = (
    r"i(?: cannot| can't| can ?not| could not| couldn't| am unable to|'m unable to"
    r"| was unable to| am not able to|'m not able to| was not able to| wasn't able to"
    r"| am not in a position to|'m not in a position to)"
)
_INFO = r"(?:information|info|data|details?|context|knowledge|evidence|mention|record|answer)"
_ENOUGH = r"(?:enough |sufficient |any |the |specific |relevant |adequate |that )*"

DECLINES = (
    r"i (?:do not|don't|dont|did not|didn't) know\b",
    r"i have no (?:idea|clue|information|data|details|knowledge|record|answer)\b",
    rf"i (?:do not|don't|dont|did not|didn't) (?:have|possess|see|find|know of) {_ENOUGH}"
    rf"{_INFO}s?\b",
    rf"{_I_CANNOT} (?:answer|determine|tell|say|provide|identify|confirm|know|give|offer"
    r"|be sure|find|locate|see|access|help)\b",
    r"(?:unable|not able) to (?:answer|determine|say|tell|confirm|(?:find|identify|provide|"
    rf"locate|give) {_ENOUGH}(?:an? )?(?:{_INFO}|answers?)s?)\b",
    rf"(?:the |these |this |that |my |our )?{_SOURCE},? {_NOT} "
    r"(?:say|mention|contain|provide|include|specify|state|tell|give|indicate|answer|offer"
    r"|reveal|identify|explain|describe|have|show|name|cover|address|discuss|list|refer to"
    r"|make clear)\b(?! much\b| a lot\b)",
    rf"(?:it )?{_NOT} (?:say|mention|specify|state|tell)\b(?! much\b| a lot\b)",
    # not "evidence" alone: "There was no evidence against him" is the story
    rf"there(?: is| was| are| were|'s) (?:no|not enough|insufficient|no relevant|no specific)"
    rf" (?!evidence\b){_INFO}s?\b",
    rf"there(?: is| was| are| were|'s) no (?:\w+ )?evidence (?:in|within|from) the {_SOURCE}",
    rf"there(?: is| was| are| were|'s) nothing (?:in|within) the {_SOURCE}",
    rf"nothing in the {_SOURCE} (?:says|mentions|states|indicates|tells|specifies|answers)\b",
    rf"no (?:relevant |specific |such )?{_INFO}s? (?:is |was |are |were |has been )?"
    rf"(?:available|found|given|provided|present|mentioned|included)\b(?! to\b| by\b)",
    rf"no (?:relevant |specific |such )?{_INFO}s? (?:in|within|from) the {_SOURCE}",
    r"(?:not enough|insufficient|no sufficient) (?:information|data|context|details)\b",
    rf"(?:the |this |that )?{_SOURCE},? (?:is|are|was|were) (?:insufficient|not sufficient"
    r"|silent|inconclusive)\b",
    r"(?:this|that|the|such|the requested|the specific) (?:information|answer|detail|fact)s?"
    r" (?:is|are|was|were) not (?:available|provided|given|mentioned|found|included|present"
    r"|specified|stated|known|in|contained)\b",
    r"(?:the )?(?:question|answer) (?:cannot|can't|can not|could not) be (?:answered|determined"
    r"|found|given)\b",
    r"(?:it|this|that|which) (?:cannot|can't|can not|could not|is not possible to) be "
    r"(?:answered|determined|said|known)\b",
    r"(?:(?:it|this|that) is )?(?:not possible|impossible) to (?:answer|determine|say|tell)\b",
    r"(?:cannot|can't|can not|could not) (?:be )?(?:answer|determine)(?:ed)?\b",
)
"""The built-in decline patterns; each must match at the start of the claim (after the
preamble `_PREAMBLE`)."""

_PREAMBLE = re.compile(
    r"^(?:(?:(?:i am|i'm|we are|we're) (?:so |very |truly )?(?:sorry|afraid)|sorry"
    r"|unfortunately|regrettably|apologies|i apologi[sz]e|my apologies|however|but|so"
    r"|alas|honestly|to be honest|after (?:reviewing|checking|searching) [\w ]{0,40}"
    rf"|(?:based on|according to|given|from|in|looking at|upon reviewing) (?:the )?{_SOURCE}"
    r"(?: (?:provided|given|available|above|here))?)"
    r"[,:;]?\s+(?:but |however,? |that )?)+",
    re.I,
)
"""What may precede a decline in its own claim."""

_APOLOGY = re.compile(
    r"^(?:(?:i am|i'm|we are|we're) (?:so |very |truly )?sorry|sorry|apologies|i apologi[sz]e"
    r"|my apologies|unfortunately|alas)\W*$",
    re.I,
)
"""A first sentence that only apologises: the claim is the next one."""

_SENTENCE_END = re.compile(r"[.!?…](?=\s|$)|\n")
_TRIM = " \t\r\n.!?:;,\"'()[]<>{}*_`…"
_HEADING = re.compile(
    r"^\s*(?:#{1,6}\s.*|#{1,6}|[-*_=]{3,}|(?:\*\*|__)[^*_]{1,40}:(?:\*\*|__)"
    r"|(?:\*\*|__)[^*_]{1,40}(?:\*\*|__):|(?:\*\*|__)(?:answer|response|summary)(?:\*\*|__))\s*$",
    re.I,
)
_LABEL = re.compile(
    r"^(?:\*\*|__)?(?:final )?(?:answer|response|reply|a)(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*", re.I
)
_TAG = re.compile(r"\[(?:no-context|data:[^\]]*|[^\]]{0,40}\d[^\]]{0,40})\]", re.I)
_QUOTED = re.compile(r"\"[^\"\n]*\"")


def _plain(text: str) -> str:
    return text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"').strip()


def first_sentence(text: str) -> str:
    """The text up to its first sentence end (`.`, `!`, `?`, `…` before a space, or a line
    break), with curly apostrophes made straight."""
    text = _plain(text)
    m = _SENTENCE_END.search(text)
    return text[: m.start()] if m else text


def claim(text: str) -> str:
    """What the answer claims first: its first sentence after leading headings, rules and an
    `Answer:` label, without markdown emphasis, bracketed tags and quoted speech; a first
    sentence that only apologises is passed over."""
    lines = _plain(text).splitlines()
    while lines and (not lines[0].strip() or _HEADING.match(lines[0])):
        lines.pop(0)
    body = _LABEL.sub("", "\n".join(lines).strip(), count=1)
    body = _TAG.sub("", body).replace("**", "").replace("__", "")
    if body.startswith('"') and body.endswith('"') and body.count('"') == 2:
        body = body[1:-1]  # an answer wrapped in quotes as a whole is not quoted speech
    body = _QUOTED.sub('"…"', body)
    head = first_sentence(body)
    if _APOLOGY.match(head):
        rest = body[len(head) :].lstrip(" .!\u2026")
        head = first_sentence(rest) or head
    return head.strip().lstrip(">-*• ").strip()


@dataclass(frozen=True)
class AbstentionRules:
    """The patterns a run counts an answer as an abstention by."""

    patterns: tuple[str, ...] = ()
    """The run's own regular expressions (`abstention.patterns`), searched in the claim."""
    builtin: bool = True
    """Use `PLACEHOLDERS`, `KNOWN_DECLINES` and `DECLINES` too."""

    def __post_init__(self) -> None:
        builtin = re.compile("|".join(f"(?:{p})" for p in DECLINES), re.I)
        object.__setattr__(self, "_builtin", builtin)
        object.__setattr__(self, "_own", [re.compile(p, re.I) for p in self.patterns])

    def abstains(self, answer: str | None) -> bool:
        """Whether `answer` declines to answer (see the module docstring)."""
        text = answer or ""
        head = claim(text)
        if self.builtin:
            whole = " ".join(_plain(text).strip(_TRIM).lower().split())
            if whole in PLACEHOLDERS or _NO_CONTEXT_TAG in text.lower():
                return True
            if " ".join(_TAG.sub("", whole).split()).strip(_TRIM) in KNOWN_DECLINES:
                return True
            if " ".join(head.lower().split()).strip(_TRIM) in PLACEHOLDERS or _APOLOGY.match(head):
                return True
            rest = _PREAMBLE.sub("", head, count=1)
            if self._builtin.match(rest):  # type: ignore[attr-defined]
                return True
        return any(r.search(head) for r in self._own)  # type: ignore[attr-defined]


def _mean(values: list[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def abstention_summary(
    records: Iterable[MethodRecord],
    metrics: list[str],
    rules: AbstentionRules,
    labels: dict[tuple[str, str], Hashable] | None = None,
) -> dict[str, Any]:
    """`abstentions` (count), `abstention_rate` and its `abstention_ci95` (Wilson), over the
    answers given (failed searches left out); per metric the mean over the answers that
    did not abstain (`answered`), their count (`answered_n`) and interval
    (`answered_ci95`). The intervals are the summary's (`inference.mean_stats`: clustered
    by `labels` from MIN_CLUSTERS clusters on)."""
    answers = [r for r in records if r.error is None and r.response is not None]
    declined = [r for r in answers if rules.abstains(r.response)]
    kept = [r for r in answers if not rules.abstains(r.response)]

    def clusters(rs: list[MethodRecord]) -> list[Hashable] | None:
        return None if labels is None else [labels[(r.index_key, r.qid)] for r in rs]

    flags = [1.0 if rules.abstains(r.response) else 0.0 for r in answers]
    rate = mean_stats(flags, clusters(answers), binary=True)
    answered: dict[str, float | None] = {}
    counts: dict[str, int] = {}
    intervals: dict[str, list[float] | None] = {}
    for metric in metrics:
        scored = [
            r for r in kept if metric in r.judgements and r.judgements[metric].score is not None
        ]
        values = [float(r.judgements[metric].score) for r in scored]  # type: ignore[arg-type]
        answered[metric] = _mean(values)
        counts[metric] = len(values)
        intervals[metric] = mean_stats(values, clusters(scored))["ci95"]
    return {
        "abstentions": len(declined),
        "abstention_rate": len(declined) / len(answers) if answers else None,
        "abstention_ci95": rate["ci95"],
        "answered": answered,
        "answered_n": counts,
        "answered_ci95": intervals,
    }
