"""The flat table of a run: one row per (question, method) — per answer, with repeats — for
pandas or a spreadsheet."""

from __future__ import annotations

from typing import Any

import pandas as pd

from gtog.eval.scoring._base import SCORERS

__all__ = ["ASSERTION_COLUMNS", "CSV_NAME", "EFFICIENCY_COLUMNS", "flag_column", "flat_frame"]

CSV_NAME = "eval_results.csv"
EFFICIENCY_COLUMNS = ("latency", "llm_calls", "prompt_tokens", "output_tokens", "cost_usd")
ASSERTION_COLUMNS = ("assertions_missed", "missed_assertions")
"""Columns a run with the `assertions` metric adds after the metrics."""


def _row_error(entry: dict[str, Any]) -> str | None:
    parts = []
    if entry.get("error"):
        parts.append(str(entry["error"]))
    judge_errors = entry.get("judge_errors")
    if isinstance(judge_errors, dict):
        parts += [f"judge {m}: {e}" for m, e in judge_errors.items() if e]
    return "; ".join(parts) or None


def _missed(entry: dict[str, Any]) -> tuple[int | None, str | None]:
    """(how many, which) assertions the answer missed; (None, None) when none were judged."""
    verdicts = (entry.get("assertions") or {}).get("assertions")
    if not isinstance(verdicts, list) or not verdicts:
        return None, None
    lost = [str(v.get("assertion")) for v in verdicts if isinstance(v, dict)]
    lost = [a for a, v in zip(lost, verdicts, strict=True) if v.get("passed") is False]
    return len(lost), " | ".join(lost)


def flag_column(metric: str) -> str | None:
    """The CSV column listing what `metric` found wrong (`invalid_citations`), or None."""
    factory = SCORERS.get(metric)
    flags = getattr(factory, "flags", None)
    return flags.replace(" ", "_") if flags else None


def flat_frame(detailed: dict[str, Any], metrics: list[str] | None = None) -> pd.DataFrame:
    """`index_key, question_id, method` (and `epoch`, one row per answer, for a run with
    repeats), the `group_by` fields, one column per metric, with the `assertions` metric
    `assertions_missed` (a count) and `missed_assertions` (the assertions, joined by ` | `),
    for a metric that lists what it found wrong its list (`invalid_citations`,
    `unsupported_claims`, `invented_triples`, `unsupported_citations`, joined by ` | `),
    efficiency, `route` (the method a router chose; empty for other methods), `error`,
    `current`.

    A score the judge could not give, and the efficiency of a search that never ran, are
    missing values (empty in the CSV), never 0; so is a group field a question lacks.
    `error` holds the failed search's message and any judge errors (`judge <metric>: ...`).
    `current` is False for a row the summary leaves out (its entry is `stale`: an answer
    made with earlier settings, or scores of an earlier judge), so the mean of a metric over
    the current rows is the summary's `by_method` mean.
    """
    meta = detailed.get("metadata") or {}
    metrics = list(metrics or meta.get("metrics") or [])
    spec = meta.get("spec") if isinstance(meta.get("spec"), dict) else {}
    fields = [str(f) for f in spec.get("group_by") or []]
    fields = [f for f in fields if f not in ("index_key", "question_id", "method")]
    rows: list[dict[str, Any]] = []
    repeated = any(q.get("repeats") for q in detailed.get("results") or [])
    for q in detailed.get("results") or []:
        groups = q.get("groups") if isinstance(q.get("groups"), dict) else {}
        answers = [(1, q.get("methods") or {})]
        answers += [(int(e), ms) for e, ms in (q.get("repeats") or {}).items()]
        for epoch, methods in answers:
            for method, entry in methods.items():
                scores = entry.get("scores") or {}
                for m in scores:
                    if m not in metrics:
                        metrics.append(m)
                eff = entry.get("efficiency") or {}
                count, lost = _missed(entry)
                flagged = entry.get("flagged") if isinstance(entry.get("flagged"), dict) else {}
                rows.append(
                    {
                        "index_key": q.get("imdb_key", q.get("index_key")),
                        "question_id": q.get("question_id"),
                        "method": method,
                        **({"epoch": epoch} if repeated else {}),
                        **{f: groups.get(f) for f in fields},
                        **{m: scores.get(m) for m in scores},
                        "assertions_missed": count,
                        "missed_assertions": lost,
                        **{
                            col: " | ".join(map(str, flagged[m]))
                            for m in flagged
                            if (col := flag_column(m)) and isinstance(flagged[m], list)
                        },
                        **{c: eff.get(c) for c in EFFICIENCY_COLUMNS},
                        "route": entry.get("route"),
                        "error": _row_error(entry),
                        "current": not entry.get("stale"),
                    }
                )
    columns = [
        "index_key",
        "question_id",
        "method",
        *(["epoch"] if repeated else []),
        *fields,
        *metrics,
        *(ASSERTION_COLUMNS if "assertions" in metrics else ()),
        *dict.fromkeys(c for m in metrics if (c := flag_column(m))),
        *EFFICIENCY_COLUMNS,
        "route",
        "error",
        "current",
    ]
    frame = pd.DataFrame(rows, columns=columns)
    if "assertions" in metrics:
        frame["assertions_missed"] = frame["assertions_missed"].astype("Int64")
    for c in (*metrics, "latency", "cost_usd"):
        frame[c] = pd.to_numeric(frame[c], errors="coerce").astype("float64")
    for c in ("llm_calls", "prompt_tokens", "output_tokens"):
        frame[c] = pd.to_numeric(frame[c], errors="coerce").astype("Int64")
    frame["current"] = frame["current"].astype(bool)
    return frame
