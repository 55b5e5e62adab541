"""The terminal view of a run-to-run diff (`gtog eval diff`): rich tables, outside text escaped."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from gtog.eval.results._diff import ALPHA

__all__ = ["diff_table"]

_ANSWER_CHARS = 160


def _fmt(value: float | None, digits: int = 2, sign: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def _cut(text: str | None) -> str:
    text = " ".join((text or "(no answer)").split())
    return text if len(text) <= _ANSWER_CHARS else text[: _ANSWER_CHARS - 1] + "…"


def _scores(diff: dict[str, Any]) -> Table:
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False, collapse_padding=True)
    for col, justify in (
        ("method", "left"),
        ("metric", "left"),
        ("n", "right"),
        ("A", "right"),
        ("B", "right"),
        ("change", "right"),
        ("p Holm", "right"),
        ("->wrong", "right"),
        ("->right", "right"),
    ):
        table.add_column(col, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for method, metrics in diff["methods"].items():
        for metric, e in metrics.items():
            mark = " *" if e["regression"] else ""
            table.add_row(
                escape(method),
                escape(metric),
                str(e["n"]),
                _fmt(e["a"]),
                _fmt(e["b"]),
                _fmt(e["delta"], sign=True),
                _fmt(e["p_holm"], 3) + mark,
                str(len(e["to_wrong"])),
                str(len(e["to_right"])),
            )
    return table


def _costs(diff: dict[str, Any]) -> Table:
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False, collapse_padding=True)
    table.add_column("method", style="bold", no_wrap=True)
    for col in ("n", "sec A -> B", "calls A -> B", "tokens A -> B", "$/answer A -> B"):
        table.add_column(col, justify="right", no_wrap=True)
    for method, eff in diff["efficiency"].items():

        def pair(name: str, digits: int, eff: dict[str, Any] = eff) -> str:
            e = eff[name]
            return f"{_fmt(e['a'], digits)} -> {_fmt(e['b'], digits)}"

        n, timed = eff["llm_calls"]["n"], eff["latency"]["n"]
        table.add_row(
            escape(method),
            str(n),
            pair("latency", 1) + (f" (n {timed})" if timed != n else ""),
            pair("llm_calls", 1),
            pair("tokens", 0),
            pair("cost_usd", 5),
        )
    return table


def _flips(diff: dict[str, Any], metric: str) -> Table | None:
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False, show_lines=True)
    table.add_column("method / question", no_wrap=True)
    table.add_column("answer in A", ratio=1)
    table.add_column("answer in B", ratio=1)
    rows = 0
    for method, metrics in diff["methods"].items():
        entry = metrics.get(metric)
        if entry is None:
            continue
        answers = diff["answers"].get(method, {})
        for direction, qids in (("->wrong", entry["to_wrong"]), ("->right", entry["to_right"])):
            for qid in qids:
                a = answers.get(qid, {})
                table.add_row(
                    escape(f"{method} {qid} {direction}"),
                    escape(_cut(a.get("a"))),
                    escape(_cut(a.get("b"))),
                )
                rows += 1
    return table if rows else None


def diff_table(diff: dict[str, Any], label_a: str, label_b: str) -> RenderableType:
    """Scores with paired tests, flipped questions side by side, cost and latency change."""
    q = diff["questions"]
    parts: list[RenderableType] = [
        Text(f"A = {label_a}\nB = {label_b}", style="dim"),
        Text("gtog eval diff: scores (B - A)", style="bold"),
        _scores(diff),
        Text(
            f"Over the {q['common']} questions both runs have ({q['a']} in A, {q['b']} in "
            f"B, {q['changed']} with another question or reference text left out), each "
            f"entry over those both scored (n; failed searches: {q.get('a_search_errors', 0)} "
            f"in A, {q.get('b_search_errors', 0)} in B, left out); paired "
            f"test: exact McNemar for 0/1 scores, sign-flip permutation otherwise; * a "
            f"significant drop (Holm p < {ALPHA:g}); ->wrong / ->right: questions that flipped "
            "(a fraction counts as right from 0.5).",
            style="dim",
        ),
    ]
    metrics = diff.get("metrics") or []
    for metric in ["correctness"] if "correctness" in metrics else metrics[:1]:
        flips = _flips(diff, metric)
        if flips is not None:
            parts += [Text(f"flipped on {metric}", style="bold"), flips]
    parts += [Text("cost per answer (both runs answered)", style="bold"), _costs(diff)]
    replays = [
        f"{method}: {count} in {side.upper()}"
        for method, eff in diff["efficiency"].items()
        for side, count in (eff["latency"].get("replayed") or {}).items()
        if count
    ]
    if replays:
        parts.append(
            Text(
                "sec leaves out the answers replayed from the model-call cache (their speed is "
                f"the cache's, not the method's): {', '.join(replays)}.",
                style="dim",
            )
        )
    for side, names in (("A", diff["only_in_a"]), ("B", diff["only_in_b"])):
        if names:
            parts.append(Text(f"only in {side}: {', '.join(names)}", style="yellow"))
    return Group(*parts)
