"""Question generation from graphrag indexes (`gtog eval generate`).

Local questions from one text unit, global questions from community reports, linked
questions from two text units that share an entity; each with a reference answer, its
evidence (text unit ids and sentences) and 3-6 assertions, checked by a second call,
de-duplicated by embedding similarity and sampled to n per class. The output is gtog's
dataset format (`type` for `dataset.group_by`).
"""

from gtog.eval.generate.drafts import load_generation_prompts
from gtog.eval.generate.run import (
    ClassStats,
    GenerateOptions,
    GenerateResult,
    GenerationRun,
    generate,
    prepare_generation,
)
from gtog.eval.generate.sources import CLASSES

__all__ = [
    "CLASSES",
    "ClassStats",
    "GenerateOptions",
    "GenerateResult",
    "GenerationRun",
    "generate",
    "load_generation_prompts",
    "prepare_generation",
]
