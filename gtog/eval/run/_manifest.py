"""What the model-call cache holds, pair by pair: for the estimate to subtract.

The cache is keyed by request, and a request is known only once the replies before it are
(ToG's next prompt holds the last reply). But a pair's calls are a function of its
settings, its question and the replies, and a replay gives the same replies: when every
call of a pair is in the cache, so is the pair. So when a pair lands, its figures are
noted beside the cache (`<cache>/pairs/`), keyed by what made them: the search by its
settings hash, question and method; each judge metric by its prompt, model and sampling,
the question and the answer. `gtog eval --estimate` counts a pair noted there as cached.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gtog._hashing import stable_hash
from gtog.llm._cache import CallStore

if TYPE_CHECKING:
    from gtog.eval.results._records import MethodRecord
    from gtog.eval.run._state import EvalRun

__all__ = ["judge_key", "noted", "remember", "search_figures", "search_key"]


def _store(run: EvalRun) -> CallStore | None:
    return CallStore(run.cache_dir / "pairs") if run.cache_dir is not None else None


def search_key(searched_with: str | None, qid: str, method: str) -> str:
    """The note of a search: its settings hash, question and method."""
    return stable_hash({"search": searched_with, "qid": qid, "method": method}, 64)


def judge_key(run: EvalRun, index_key: str, metric: str, qid: str, answer: str) -> str:
    """The note of one judge metric's verdict on one answer."""
    judge = run.spec.judge
    return stable_hash(
        {
            "metric": metric,
            "prompt": run.prompts.templates.get(metric),
            "model": judge.models.get(index_key),
            "sampling": [judge.temperature, judge.max_tokens, judge.structured_output],
            "trials": judge.trials,
            "qid": qid,
            "answer": answer,
        },
        64,
    )


def search_figures(record: MethodRecord) -> dict[str, Any] | None:
    """A search's calls, tokens and USD as the estimate counts them (embeddings in)."""
    e = record.efficiency
    if e is None or e.llm_calls is None:
        return None
    return {
        "llm_calls": (e.llm_calls or 0) + (e.embedding_calls or 0),
        "prompt_tokens": (e.prompt_tokens or 0) + (e.embedding_tokens or 0),
        "output_tokens": e.output_tokens or 0,
        "usd": e.cost_usd,
    }


def remember(run: EvalRun, record: MethodRecord) -> None:
    """Note a landed record's search and verdicts beside the cache (blocking; best effort)."""
    store = _store(run)
    if store is None or record.error is not None or record.response is None or record.epoch > 1:
        return
    try:
        figures = search_figures(record)
        if figures is not None:
            key = search_key(record.searched_with, record.qid, record.method)
            store.put(key, {**figures, "answer": record.response})
        for metric, j in record.judgements.items():
            if j.llm_calls and j.error is None:
                key = judge_key(run, record.index_key, metric, record.qid, record.response)
                store.put(key, _judge_figures(j))
    except OSError:  # a note is a convenience for estimates: never the run's failure
        pass


def _judge_figures(j: Any) -> dict[str, Any]:
    return {
        "llm_calls": j.llm_calls,
        "prompt_tokens": j.prompt_tokens,
        "output_tokens": j.output_tokens,
        "usd": j.cost_usd,
    }


def noted(run: EvalRun, key: str) -> dict[str, Any] | None:
    """The figures noted under `key`, if the cache holds them."""
    store = _store(run)
    value = store.get(key) if store is not None else None
    return value if isinstance(value, dict) else None
