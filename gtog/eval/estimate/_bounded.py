"""The bounds basis: what each pair can cost at most (and at least), with no model call.

A search's bounds are its method's (`gtog.search._bounds`, a registry entry); a metric's
are its scorer's (`Scorer.bound`, on the longest answer and context the method can
give): an LLM judge's `trials` calls at least and `2 x trials` at most per model asked
(a structured reply is asked once more when unreadable; each panel model at its own
price), each prompt its template with the question, the reference, the answer and the
context as the metric reads them, each reply at most `judge.max_tokens`; `assertions`
the same per assertion; `answer_similarity` two embedding requests; a metric that calls
no model nothing, and one that gives no bound is unknown (never guessed low). A head-to-head
comparison is `2 x trials` calls at least (both orders), `4 x trials` at most, each prompt
the template with the question, the criterion and both answers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gtog.eval.estimate._figures import Figures, Range, priced
from gtog.search._bounds import MESSAGE_OVERHEAD

if TYPE_CHECKING:
    from gtog.eval._dataset import QAItem
    from gtog.eval.run._state import EvalRun
    from gtog.eval.scoring._base import CallBound
    from gtog.search._bounds import SearchBound

__all__ = ["BoundsBasis", "load_bounds"]


async def load_bounds(run: EvalRun) -> dict[tuple[str, str], SearchBound | None]:
    """Each (index, method)'s search bound (None: the method has none; an answers file's
    method costs nothing to search). Reads the index tables it needs, then lets them go."""
    out: dict[tuple[str, str], SearchBound | None] = {}
    for key in dict.fromkeys(q.index_key for q, *_ in run.pairs):
        project = run.projects[key]
        for method in run.methods:
            plan = run.run_methods[method]
            if plan.base is None or plan.http is not None:
                out[(key, method)] = None
                continue
            bound = plan.entry.bound
            out[(key, method)] = await bound(project, plan.options) if bound else None
        project.release()
    return out


def _priced(part: CallBound, i: int) -> Figures:
    """Side `i` (0: least, 1: most) of a scorer's calls on one model, priced."""
    calls, prompt, output = part.calls[i], part.prompt[i], part.output[i]
    if part.embedding:
        return priced(None, 0, 0, 0, part.model, calls, prompt)
    return priced(part.model, calls, prompt, output)


class BoundsBasis:
    """Upper and lower bounds for every pair not done or cached."""

    def __init__(self, run: EvalRun, bounds: dict[tuple[str, str], SearchBound | None]) -> None:
        self.run = run
        self.bounds = bounds

    def _tokens(self, item: QAItem, text: str | None) -> int:
        return self.run.judges[item.index_key].count_tokens(text or "")

    def search(self, item: QAItem, method: str) -> Range | None:
        """The method's bound for this question; an answers file's line costs nothing."""
        if method in self.run.answers:
            return Range()
        sb = self.bounds.get((item.index_key, method))
        if sb is None:
            return None
        q = sb.tokens(item.question) if sb.tokens else self._tokens(item, item.question)
        calls, prompt, output = sb.chat(q)
        embeds, embed_tokens = sb.embedding(q)
        low, high = (
            priced(
                sb.chat_model,
                calls[i],
                prompt[i],
                output[i],
                sb.embedding_model,
                embeds[i],
                embed_tokens[i],
            )
            for i in (0, 1)
        )
        return Range(high, low, high)

    def _answer(self, item: QAItem, method: str) -> tuple[int, int] | None:
        """(answer, context) tokens at most for `method`'s answer to `item`."""
        book = self.run.answers.get(method)
        if book is not None:
            line = book.get(item)
            if line is None:
                return (0, 0)
            return self._tokens(item, line.answer), self._tokens(item, line.context)
        sb = self.bounds.get((item.index_key, method))
        return None if sb is None else (sb.answer, sb.context)

    def judge(self, item: QAItem, method: str, metric: str) -> Range | None:
        """The metric's own bound (`Scorer.bound`, every model it asks at its own price) on
        the longest answer and context the method can give; None: unknown."""
        most = self._answer(item, method)
        scorer = next((s for s in self.run.scorers[item.index_key] if s.name == metric), None)
        if most is None or scorer is None:
            return None
        bound = getattr(scorer, "bound", None)
        parts = bound(item, *most) if bound is not None else None
        if parts is None:
            return None
        low, high = (sum((_priced(p, i) for p in parts), Figures()) for i in (0, 1))
        return Range(high, low, high)

    def compare(self, item: QAItem, criterion: str, a: str, b: str) -> Range | None:
        """`2 x trials` to `4 x trials` calls of the pairwise prompt on both longest answers."""
        spec = self.run.spec.pairwise
        most_a, most_b = self._answer(item, a), self._answer(item, b)
        if spec is None or most_a is None or most_b is None:
            return None
        from gtog.eval.run._judging import pairwise_prompt

        run = self.run
        template = pairwise_prompt(run.options.root.resolve(), run.config, run.config_path)
        fixed = self._tokens(item, template) + self._tokens(item, item.question)
        fixed += self._tokens(item, criterion) + MESSAGE_OVERHEAD
        fixed += self._tokens(item, spec.criteria.get(criterion, criterion))
        model = run.judges[item.index_key].config
        t = spec.trials
        low = priced(model, 2 * t, 2 * t * (fixed + 2), 2 * t)
        high = priced(
            model,
            4 * t,
            4 * t * (fixed + most_a[0] + most_b[0]),
            4 * t * run.config.judge.max_tokens,
        )
        return Range(high, low, high)
