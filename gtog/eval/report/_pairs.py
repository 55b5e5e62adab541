"""What the page shows of head-to-head judging, as typed data (built by gtog.eval.report._versus).

A win rate is always the row method's against the column method: a summary entry (a, b)
gives the cell (a, b) as stored and the cell (b, a) mirrored (1 - rate, the interval
flipped, wins and losses swapped). A tie counts as half a win; a comparison the judge could
not decide is unscored, never a tie or a loss.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gtog.eval.results._pairwise import POSITION_CONSISTENCY, SIGNIFICANCE

__all__ = [
    "POSITION_BIAS",
    "SHADES",
    "AACheck",
    "Call",
    "HeadToHead",
    "Matrix",
    "PairUsage",
    "QuestionPair",
    "Verdict",
    "WinRate",
]

SHADES = 9
"""Colour steps of the diverging win-rate scale (`wr0` = lost every comparison, `wr4` = even,
`wr8` = won every one; classes in assets/report.css)."""

POSITION_BIAS = POSITION_CONSISTENCY
"""An A/A check whose orders agreed on fewer than this share of questions flags position bias
(the summary's own rule, `gtog.eval.results._pairwise.aa_failures`)."""


@dataclass(frozen=True)
class WinRate:
    """Method `a`'s record against method `b` on one criterion, over the scored questions."""

    criterion: str
    a: str
    b: str
    n: int
    """Questions whose comparison was scored."""
    wins: int
    losses: int
    ties: int
    unscored: int
    rate: float | None
    """(wins + ties / 2) / n; None when nothing was scored."""
    ci95: tuple[float, float] | None
    ci95_method: str | None
    ci95_reason: str | None
    """Why there is no interval, when there is none."""
    p_value: float | None
    """Two-sided sign test on the decisive questions."""
    p_holm: float | None
    """Holm-adjusted over every (pair, criterion) of the run."""
    position_consistency: float | None
    """Share of scored questions on which both orders gave the same verdict."""
    mirrored: bool = False
    """Read from the summary's (b, a) entry."""

    @property
    def significant(self) -> bool:
        """Holm-adjusted p (plain p when no adjustment is given) below SIGNIFICANCE."""
        p = self.p_holm if self.p_holm is not None else self.p_value
        return self.n > 0 and p is not None and p < SIGNIFICANCE

    @property
    def shade(self) -> int | None:
        """0..SHADES-1 on the diverging scale (None: unscored)."""
        if self.rate is None:
            return None
        return min(SHADES - 1, max(0, round(self.rate * (SHADES - 1))))

    @property
    def record(self) -> str:
        """`wins-losses-ties`, as the terminal table prints it."""
        return f"{self.wins}-{self.losses}-{self.ties}"

    def mirror(self) -> WinRate:
        """The same comparison from `b`'s side."""
        return replace(
            self,
            a=self.b,
            b=self.a,
            wins=self.losses,
            losses=self.wins,
            rate=None if self.rate is None else 1.0 - self.rate,
            ci95=None if self.ci95 is None else (1.0 - self.ci95[1], 1.0 - self.ci95[0]),
            mirrored=not self.mirrored,
        )


@dataclass(frozen=True)
class AACheck:
    """A method's answers against themselves: a judge without bias gives 0.5, consistently."""

    result: WinRate
    passes: bool | None
    """Neither the win rate nor the position consistency failed (None: nothing scored)."""
    fails: tuple[str, ...] | None = None
    """What failed (`win_rate`, `position_consistency`); None in a summary of an older gtog,
    whose `passes` was the sign test alone."""

    @property
    def slot_bias(self) -> bool:
        """The win rate differs from 0.5 significantly (the sign test failed)."""
        if self.fails is None:
            return self.passes is False
        return "win_rate" in self.fails

    @property
    def position_bias(self) -> bool:
        """The two orders disagreed on most questions: the judge follows the position."""
        if self.fails is not None:
            return "position_consistency" in self.fails
        pc = self.result.position_consistency
        return pc is not None and pc < POSITION_BIAS

    @property
    def flagged(self) -> bool:
        """Slot or position bias."""
        return self.slot_bias or self.position_bias


@dataclass(frozen=True)
class Matrix:
    """Win rates between the compared methods on one criterion: rows against columns."""

    criterion: str
    description: str | None
    methods: list[str]
    cells: dict[tuple[str, str], WinRate]

    def cell(self, row: str, column: str) -> WinRate | None:
        """The row's win rate against the column, None when the pair was not compared."""
        return self.cells.get((row, column))


@dataclass(frozen=True)
class PairUsage:
    """Calls, tokens and USD of a judge (USD None: some call had no known price)."""

    llm_calls: int
    prompt_tokens: int
    output_tokens: int
    usd: float | None
    comparisons: int | None = None


@dataclass(frozen=True)
class HeadToHead:
    """The page's head-to-head section (the summary's `pairwise*` keys)."""

    matrices: list[Matrix]
    comparisons: list[WinRate]
    """The summary's entries as stored (a against b)."""
    checks: list[AACheck]
    usage: PairUsage | None
    """The pairwise judge's."""
    answer_judges: PairUsage | None
    """The per-answer judges' (all methods), for comparison."""
    trials: int | None
    """Calls per order and comparison."""
    criteria: dict[str, str | None] = field(default_factory=dict)
    """criterion -> its description (None when the spec does not give one)."""

    @property
    def flagged(self) -> list[AACheck]:
        """The A/A checks the judge failed (slot or position bias)."""
        return [c for c in self.checks if c.flagged]


@dataclass(frozen=True)
class Call:
    """One call of the pairwise judge on one question."""

    order: str
    """`ab` (a shown as answer 1) or `ba` (b shown as answer 1)."""
    first: str
    """The method shown as answer 1."""
    said: str
    """What the judge answered, in words: `answer 1 (local)`, `tie`, `no usable reply`."""
    winner: str | None
    """The method it preferred, `tie`, or None (no usable reply)."""
    reason: str | None
    error: str | None


@dataclass(frozen=True)
class Verdict:
    """The judgement of one pair on one question and criterion."""

    criterion: str
    winner: str | None
    """The winning method, `tie`, or None (unscored)."""
    error: str | None
    orders_agree: bool | None
    calls: list[Call]
    stale: str | None = None
    """Why it is left out of the win rates (judged by another pairwise judge)."""

    @property
    def text(self) -> str:
        """`local wins`, `tie` or `unscored`."""
        if self.winner is None:
            return "unscored"
        return "tie" if self.winner == "tie" else f"{self.winner} wins"


@dataclass(frozen=True)
class QuestionPair:
    """Every criterion's verdict on one compared pair of one question."""

    a: str
    b: str
    verdicts: list[Verdict]

    @property
    def aa(self) -> bool:
        """An A/A check (a method's answer against itself)."""
        return self.a == self.b
