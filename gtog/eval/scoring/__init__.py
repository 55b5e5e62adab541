"""Scoring: every metric is a `Scorer` in the `SCORERS` registry.

A scorer reads a question, an answer and the context the method answered from, and gives a
`Judgement` (a score, or an error: unscored). The four LLM judges (`judges`) and the
LLM-free `token_recall` and `evidence_recall` (`lexical`) and the reference metrics `exact_match`,
`f1`, `rouge_l` and `answer_similarity` (`reference`) and `assertions` (the share of a
question's assertions an answer supports, `assertions`) are registered here; a run builds
the configured scorers per index from a `ScoringSetup` and runs them (`score_answer`).
Head-to-head judging fits as a `PairScorer`. Add a metric with `register_scorer`.
"""

# Imported for their registrations: each adds its metrics to SCORERS.
import gtog.eval.scoring._assertions
import gtog.eval.scoring._citations
import gtog.eval.scoring._claims
import gtog.eval.scoring._lexical
import gtog.eval.scoring._paths
import gtog.eval.scoring._reference
import gtog.eval.scoring._support  # noqa: F401
from gtog.eval.scoring._base import (
    SCORERS,
    Judgement,
    PairScorer,
    Scorer,
    ScorerBase,
    register_scorer,
)
from gtog.eval.scoring._judges import (
    ALL_METRICS,
    LLMJudge,
    PromptSet,
    Verdict,
    judge,
    judge_trials,
    load_prompts,
)
from gtog.eval.scoring._score import score_answer

__all__ = [
    "ALL_METRICS",
    "SCORERS",
    "Judgement",
    "LLMJudge",
    "PairScorer",
    "PromptSet",
    "Scorer",
    "ScorerBase",
    "Verdict",
    "judge",
    "judge_trials",
    "load_prompts",
    "register_scorer",
    "score_answer",
]
