"""Scoring: every metric is a `Scorer` in the `SCORERS` registry.

A scorer reads a question, an answer and the context the method answered from, and gives a
`Judgement` (a score, or an error: unscored). The four LLM judges (`judges`) and the
LLM-free `token_recall` and `evidence_recall` (`lexical`) and the reference metrics `exact_match`,
`f1`, `rouge_l` and `answer_similarity` (`reference`) and `assertions` (the share of a
question's assertions an answer supports, `assertions`) are registered here; a run builds
the configured scorers per index from a `ScoringSetup` and runs them (`score_answer`).
Head-to-head judging fits as a `PairScorer`. Add a metric with `register_scorer`.
"""

from gtog.eval.scoring.assertions import AssertionsScorer, load_assertion_prompt
from gtog.eval.scoring.base import (
    SCORERS,
    AssertionVerdict,
    Judgement,
    PairScorer,
    Scorer,
    ScorerBase,
    ScoringSetup,
    is_binary_metric,
    is_metered,
    register_scorer,
    uses_llm,
)
from gtog.eval.scoring.judges import (
    ALL_METRICS,
    FIELDS,
    LLMJudge,
    PromptSet,
    Verdict,
    judge,
    judge_panel,
    judge_trials,
    load_prompts,
)
from gtog.eval.scoring.lexical import EvidenceRecall, TokenRecall, evidence_recall, token_recall
from gtog.eval.scoring.reference import (
    AnswerSimilarity,
    ExactMatch,
    RougeL,
    TokenF1,
    exact_match,
    rouge_l,
    token_f1,
)
from gtog.eval.scoring.score import build_scorers, score_answer

__all__ = [
    "ALL_METRICS",
    "FIELDS",
    "SCORERS",
    "AnswerSimilarity",
    "AssertionVerdict",
    "AssertionsScorer",
    "EvidenceRecall",
    "ExactMatch",
    "Judgement",
    "LLMJudge",
    "PairScorer",
    "PromptSet",
    "RougeL",
    "Scorer",
    "ScorerBase",
    "ScoringSetup",
    "TokenF1",
    "TokenRecall",
    "Verdict",
    "build_scorers",
    "evidence_recall",
    "exact_match",
    "is_binary_metric",
    "is_metered",
    "judge",
    "judge_panel",
    "judge_trials",
    "load_assertion_prompt",
    "load_prompts",
    "register_scorer",
    "rouge_l",
    "score_answer",
    "token_f1",
    "token_recall",
    "uses_llm",
]
