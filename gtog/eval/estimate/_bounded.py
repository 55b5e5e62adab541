"""The bounds basis: what each pair can cost at most (and at least), with no model call.

A search's bounds are its method's (`gtog.search._bounds`, a registry entry); a judge's
are `trials` calls at least and `2 x trials` at most (a structured reply is asked once
more when unreadable), each prompt its template with the question, the reference, the
answer (at most the method's answer cap) and the context (at most the method's context
budget) as the metric reads them, each reply at most `judge.max_tokens`; a head-to-head
comparison is `2 x trials` calls at least (both orders), `4 x trials` at most, each prompt
the template with the question, the criterion and both answers. A metric of several
prompts states its fewest and most calls (`call_bounds`; `faithfulness_claims`: a split
and up to three checks, each asked twice at most).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gtog.eval.estimate._figures import Range, priced
from gtog.eval.scoring._base import SCORERS
from gtog.eval.scoring._judges import EXTRA_PROMPTS, FIELDS
from gtog.search._bounds import MESSAGE_OVERHEAD

if TYPE_CHECKING:
    from gtog.eval._dataset import QAItem
    from gtog.eval.run._state import EvalRun
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
        """`trials` to `2 x trials` calls of the metric's prompt on the longest answer."""
        most = self._answer(item, method)
        if most is None:
            return None
        answer, context = most
        run = self.run
        jc = run.config.judge
        calls = getattr(SCORERS.get(metric), "call_bounds", None)
        if calls is not None:  # a metric of several prompts (`faithfulness_claims`, ...)
            return self._calls(item, metric, calls(jc), answer + context)
        fields = FIELDS.get(metric, ())
        fixed = self._tokens(item, run.prompts.templates.get(metric)) + MESSAGE_OVERHEAD
        fixed += self._tokens(item, item.question) if "question" in fields else 0
        fixed += self._tokens(item, item.reference) if "ground_truth" in fields else 0
        reads_answer = "answer" in fields or "predicted" in fields
        variable = (answer if reads_answer else 0) + (context if "context" in fields else 0)
        model = run.judges[item.index_key].config
        t = jc.trials
        low = priced(model, t, t * (fixed + (1 if reads_answer else 0)), t)
        high = priced(model, 2 * t, 2 * t * (fixed + variable), 2 * t * jc.max_tokens)
        return Range(high, low, high)

    def _calls(
        self, item: QAItem, metric: str, calls: tuple[int, int, int], variable: int
    ) -> Range:
        """`calls` (fewest, most, reply tokens each) of a metric's prompts: each call at
        least its shortest prompt and one reply token, at most its longest prompt with the
        question, answer and context and a whole reply (what an earlier call listed, fed
        to a later one, is at most a reply)."""
        low_calls, high_calls, reply = calls
        templates = [
            self._tokens(item, self.run.prompts.templates.get(n))
            for n in EXTRA_PROMPTS.get(metric, {metric: ()})
        ]
        fixed = min(templates) + MESSAGE_OVERHEAD
        most = max(templates) + MESSAGE_OVERHEAD + self._tokens(item, item.question)
        most += variable + reply
        model = self.run.judges[item.index_key].config
        low = priced(model, low_calls, low_calls * fixed, low_calls)
        high = priced(model, high_calls, high_calls * most, high_calls * reply)
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
        fixed += self._tokens(item, spec.criteria.get(criterion, criterion)) + MESSAGE_OVERHEAD
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
