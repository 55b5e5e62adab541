"""The terminal view of a summary (rich): a scores table and a cost table, 80 columns wide.

Scores are same-question means with their 95% interval printed as an interval (intervals
are often asymmetric: `1.00` with `[0.72, 1.00]`), stacked under the mean so no number is
ever cut; the table turns (metrics as rows) when the methods are the narrower side. A run
that did not complete says so above the tables, with how many pairs it has.
"""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from gtog.eval.results._noise import clusters_line, omnibus_lines, power_line
from gtog.eval.results._repeat_tables import panel_parts, repeat_parts
from gtog.eval.results._verdict import ALPHA, common_counts, plural, scale_of, verdict
from gtog.eval.results._why import why_table
from gtog.eval.terminal._calibration import calibration_parts
from gtog.eval.terminal._routing import routing_line

__all__ = [
    "ALPHA",
    "assertion_line",
    "print_summary",
    "status_line",
    "summary_table",
    "unknown_costs",
]


_SHORT = {
    "correctness": "correct",
    "faithfulness": "faithful",
    "relevance": "relevant",
    "completeness": "complete",
    "token_recall": "tok recall",
    "evidence_recall": "evid recall",
    "exact_match": "exact",
    "answer_similarity": "similarity",
}

_CELL_WIDTH = 12
"""Widest stacked score cell: `[0.28, 0.72]`."""


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _usd(value: float | None) -> str:
    if value is None:
        return "-"
    return f"${value:.2g}" if 0 < value < 0.01 else f"${value:.2f}"


def _best(summary: dict[str, Any], metric: str) -> str | None:
    means = {
        m: g["same_questions"].get(metric)
        for m, g in summary["by_method"].items()
        if g["same_questions"].get(metric) is not None
    }
    return max(means, key=lambda m: means[m]) if means else None


def _differs(summary: dict[str, Any], metric: str, best: str | None, method: str) -> bool:
    if best is None or method == best:
        return False
    for c in summary.get("comparisons", []):
        if c["metric"] == metric and {c["a"], c["b"]} == {best, method}:
            return c["p_holm"] is not None and c["p_holm"] < ALPHA
    return False


def _score(group: dict[str, Any], metric: str, mark: bool) -> str:
    """`0.93*` over `[0.68, 0.99]` (the interval as it is, never as ± a half-width)."""
    mean = group.get(metric)
    ci = (group.get("ci95") or {}).get(metric)
    text = _fmt(mean) + ("*" if mark else "")
    if mean is not None and ci is not None:
        text += f"\n[{ci[0]:.2f}, {ci[1]:.2f}]"
    return text


def _n_cell(counts: dict[str, int]) -> str:
    """The table's n: the questions its means cover (`4-6` when metrics differ)."""
    values = sorted(set(counts.values())) or [0]
    return str(values[0]) if len(values) == 1 else f"{values[0]}-{values[-1]}"


def _question_note(summary: dict[str, Any], metrics: list[str]) -> str:
    """Which questions the means (and the n column) cover, from the same counts."""
    counts = common_counts(summary, metrics)
    if len(set(counts.values())) <= 1:
        k = next(iter(counts.values()), 0)
        where = f"the {plural(k, 'question')}"
    else:
        where = "the questions (" + ", ".join(f"{_SHORT.get(m, m)} {k}" for m, k in counts.items())
        where += ")"
    note = f"Mean over {where} every method answered and the judge scored (n)"
    answers = {m: int(g.get("n", 0)) for m, g in summary["by_method"].items()}
    if any(a != k for a in answers.values() for k in counts.values()):
        note += " (answers per method: " + ", ".join(f"{m} {a}" for m, a in answers.items())
        note += "; the others are left out so that every method is compared on the same ones)"
    return note


def _named(summary: dict[str, Any], metric: str) -> str:
    """The metric's column name, with a graded metric's scale (`correctness_graded (0-10)`)."""
    scale = scale_of(summary, metric)
    name = _SHORT.get(metric, metric)
    return name if scale is None else f"{name} ({scale[0]:g}-{scale[1]:g})"


def _scores(summary: dict[str, Any], metrics: list[str], width: int) -> Table:
    methods = list(summary["by_method"])
    best = {m: _best(summary, m) for m in metrics}
    cell = {
        (method, m): _score(
            summary["by_method"][method]["same_questions"], m, _differs(summary, m, best[m], method)
        )
        for method in methods
        for m in metrics
    }
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False, collapse_padding=True)
    name_width = max([6, *(len(m) for m in methods), *(len(_named(summary, m)) for m in metrics)])
    wide = name_width + 6 + (len(metrics) + 1) * (_CELL_WIDTH + 1)
    if wide <= width or len(methods) >= len(metrics):
        table.add_column("method", style="bold", no_wrap=True)
        table.add_column("n", justify="right", no_wrap=True)
        for m in metrics:
            table.add_column(escape(_named(summary, m)), justify="right", no_wrap=True)
        n = _n_cell(common_counts(summary, metrics))
        for method in methods:
            table.add_row(escape(method), n, *(escape(cell[(method, m)]) for m in metrics))
        return table
    table.add_column("metric", style="bold", no_wrap=True)
    for method in methods:
        table.add_column(escape(method), justify="right", no_wrap=True)
    table.add_row("n", *(_n_cell(common_counts(summary, metrics)) for _ in methods))
    for m in metrics:
        table.add_row(escape(_named(summary, m)), *(escape(cell[(x, m)]) for x in methods))
    return table


def _mean_tokens(eff: dict[str, Any]) -> float | None:
    """Mean tokens (prompt + output) per successful search (None: some search did not say)."""
    prompt, output = eff.get("avg_prompt_tokens"), eff.get("avg_output_tokens")
    return None if prompt is None or output is None else prompt + output


def _costs(summary: dict[str, Any]) -> Table:
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False, collapse_padding=True)
    table.add_column("method", style="bold", no_wrap=True)
    for col in ("errors", "sec p50", "sec p95", "calls mean", "tokens mean", "$/answer"):
        table.add_column(col, justify="right", no_wrap=True)
    for method, group in summary["by_method"].items():
        eff = summary["efficiency"].get(method, {})
        costs = summary.get("cost", {})
        cost = costs.get("by_method", costs).get(method, {})  # (older summaries: no by_method)
        judge_errors = sum(group["judge_errors"].values())
        per_search, per_judge = cost.get("search_usd_per_answer"), cost.get("judge_usd_per_answer")
        per_answer = None if per_search is None or per_judge is None else per_search + per_judge
        table.add_row(
            escape(method),
            f"{group['search_errors']}+{judge_errors}",
            _fmt(eff.get("p50_latency")),
            _fmt(eff.get("p95_latency")),
            _fmt(eff.get("avg_llm_calls"), 1),
            _fmt(_mean_tokens(eff), 0),
            _usd(per_answer),
        )
    return table


_FIGURES = {
    "latency": "latency",
    "llm_calls": "LLM calls",
    "prompt_tokens": "prompt tokens",
    "output_tokens": "output tokens",
    "cost_usd": "cost",
}


def unknown_costs(summary: dict[str, Any]) -> list[str]:
    """One line per method whose searches did not all state their cost (an answers file's
    lines, an HTTP method's replies): `mine: stated by 1 of 3 searches: LLM calls, ...`.

    (A model without a price alone is the table's own footnote.)
    """
    out = []
    for method, eff in (summary.get("efficiency") or {}).items():
        stated, searches = eff.get("stated") or {}, eff.get("searches") or 0
        short = {f: stated[f] for f in _FIGURES if f in stated and stated[f] < searches}
        if not short or set(short) == {"cost_usd"}:
            continue
        by_count: dict[int, list[str]] = {}
        for f, k in short.items():
            by_count.setdefault(k, []).append(_FIGURES[f])
        parts = "; ".join(
            f"{', '.join(labels)} stated by {k} of {searches} searches"
            for k, labels in sorted(by_count.items())
        )
        out.append(f"{method}: {parts}: unknown (-), not 0")
    return out


def _pairwise(summary: dict[str, Any]) -> Table:
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False, collapse_padding=True)
    for col, justify in (
        ("criterion", "left"),
        ("a vs b", "left"),
        ("W-L-T", "right"),
        ("win rate a", "right"),
        ("p Holm", "right"),
        ("agree", "right"),
    ):
        table.add_column(col, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for e in summary.get("pairwise") or []:
        rate, ci = e.get("win_rate_a"), e.get("ci95")
        cell = _fmt(rate) + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if rate is not None and ci else "")
        p = e.get("p_holm")
        mark = "*" if p is not None and p < ALPHA else ""
        table.add_row(
            escape(e["criterion"]),
            escape(f"{e['a']} vs {e['b']}"),
            f"{e['wins_a']}-{e['wins_b']}-{e['ties']}",
            cell,
            _fmt(p, 3) + mark,
            _fmt(e.get("position_consistency")),
        )
    return table


def _aa_notes(summary: dict[str, Any]) -> list[str]:
    out = []
    for e in summary.get("pairwise_aa") or []:
        if e.get("passes") is not False:
            continue
        fails = e.get("fails") or ["win_rate"]  # a summary of an older gtog: the sign test
        why = []
        if "win_rate" in fails:
            why.append(f"win rate {e['win_rate_a']:.2f} (p {e['p_value']:.3f})")
        if "position_consistency" in fails:
            why.append(
                f"position consistency {e['position_consistency']:.2f}: the verdict followed "
                "the slot"
            )
        out.append(
            f"A/A check failed: {e['a']} against itself on {e['criterion']}: {'; '.join(why)}"
        )
    return out


def _noise(summary: dict[str, Any]) -> list[Text]:
    """Clusters (yellow when there are too few to allow for), omnibus tests, power."""
    out = []
    line = clusters_line(summary)
    if line is not None:
        st = summary.get("statistics") or {}
        too_few = not st.get("clustered") and (st.get("clusters") or 0) >= 2
        out.append(Text(line, style="yellow" if too_few else "dim"))
    out += [Text(line, style="dim") for line in omnibus_lines(summary, _SHORT)]
    power = power_line(summary, _SHORT)
    if power is not None:
        out.append(Text(power, style="dim"))
    return out


def status_line(summary: dict[str, Any]) -> str | None:
    """`partial: 40 of 60 pairs (interrupted)` for a run that did not complete, else None."""
    run = (summary.get("metadata") or {}).get("run") or {}
    status = run.get("status")
    if not status or status == "complete":
        return None
    done, total = run.get("pairs_done"), run.get("pairs_total")
    count = f"{done} of {total} pairs" if total else f"{done} pairs"
    return f"partial: {count} ({status})"


def assertion_line(summary: dict[str, Any]) -> str | None:
    """`assertions supported: tog 41/50, local 38/50 (missed: see report.html)`, or None."""
    block = summary.get("assertions") or {}
    parts = [
        f"{method} {s.get('passed', 0)}/{s.get('passed', 0) + s.get('missed', 0)}"
        + (f" ({s['unscored']} unscored)" if s.get("unscored") else "")
        for method, s in block.items()
        if isinstance(s, dict) and s.get("answers")
    ]
    if not parts:
        return None
    return f"assertions supported: {', '.join(parts)} (which ones each missed: report.html)"


def summary_table(summary: dict[str, Any], metrics: list[str], width: int = 80) -> Group:
    """The scores table (same-question means, intervals, `*` marks), then the cost table."""
    parts: list[RenderableType] = []
    status = status_line(summary)
    if status is not None:
        parts.append(Text(status, style="bold yellow"))
    for note in (summary.get("metadata") or {}).get("notes") or []:
        parts.append(Text(note, style="yellow"))
    if metrics:  # (a run of head-to-head judging alone scores no answer)
        parts.append(Text("gtog eval: scores", style="bold"))
        parts.append(_scores(summary, metrics, width))
        parts.append(
            Text(
                f"{_question_note(summary, metrics)}; [95% interval]; * differs from the best "
                f"method (paired test, Holm p < {ALPHA:g}).",
                style="dim",
            )
        )
    parts += [*repeat_parts(summary), *panel_parts(summary)]
    claims = assertion_line(summary)
    if claims is not None:
        parts.append(Text(claims, style="dim"))
    parts += _noise(summary)
    parts.append(Text("cost per answer (successful searches)", style="bold"))
    parts.append(_costs(summary))
    parts.append(
        Text(
            "errors = failed searches + failed judge calls; sec = median and 95th percentile; "
            "calls, tokens (in + out): mean per answer, as in report.html; $/answer = search + "
            "judging (- when a model has no price or a search did not state its cost).",
            style="dim",
        )
    )
    parts += [Text(line, style="yellow") for line in unknown_costs(summary)]
    if summary.get("pairwise"):
        parts.append(Text("head to head (pairwise judge)", style="bold"))
        parts.append(_pairwise(summary))
        parts.append(
            Text(
                "W-L-T = a's wins, losses, ties; win rate counts a tie as half; * sign test, "
                f"Holm p < {ALPHA:g}; agree = share of questions where both orders agreed.",
                style="dim",
            )
        )
    parts += [Text(note, style="bold yellow") for note in _aa_notes(summary)]
    why = why_table(summary)
    if why is not None:
        parts.append(why)
    routed = routing_line(summary)
    if routed is not None:
        parts.append(Text(routed))
    parts += calibration_parts(summary)
    found = verdict(summary, metrics)
    if found is not None:
        parts.append(Text(found, style="bold"))
    return Group(*parts)


def print_summary(
    summary: dict[str, Any], metrics: list[str], console: Console | None = None
) -> None:
    """Print the summary tables."""
    console = console or Console()
    if not console.is_terminal:
        console = Console(width=100, file=console.file)
    console.print(summary_table(summary, metrics, width=console.width))
