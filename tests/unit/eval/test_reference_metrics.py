"""exact_match, f1 and rouge_l on fixed pairs, against hand-computed values and rouge-score's
own scorer; answer_similarity's cosine."""

from __future__ import annotations

import asyncio

import pytest
from rouge_score import rouge_scorer

from gtog.eval._dataset import QAItem
from gtog.eval.scoring import SCORERS
from gtog.eval.scoring._base import ScoringSetup, is_binary_metric, is_metered, uses_llm
from gtog.eval.scoring._reference import (
    cosine_similarity,
    exact_match,
    rouge_l,
    squad_normalize,
    token_f1,
)


def test_squad_normalisation() -> None:
    assert squad_normalize("The Grey  Heron, a cargo-ship!") == "grey heron cargoship"
    assert squad_normalize("  An apple. ") == "apple"
    assert squad_normalize("Theatre of the Absurd") == "theatre of absurd"


@pytest.mark.parametrize(
    ("reference", "answer", "expected"),
    [
        ("Maren Holt", "maren holt.", 1),
        ("The Grey Heron", "grey heron", 1),
        ("Maren Holt", "Maren Holt keeps it.", 0),
        ("Ashby", "In Ashby", 0),
    ],
)
def test_exact_match(reference: str, answer: str, expected: int) -> None:
    assert exact_match(reference, answer) == expected


@pytest.mark.parametrize(
    ("reference", "answer", "expected"),
    [
        # 2 common of 6 answer tokens (lighthouse is kept by maren holt), 2 of 2 reference
        ("Maren Holt", "The lighthouse is kept by Maren Holt.", 2 * (2 / 6) * 1 / (2 / 6 + 1)),
        ("Maren Holt", "Tobias Holt", 0.5),  # P = R = 1/2
        ("Ashby, at the Saturday market", "In Ashby.", 2 * (1 / 2) * (1 / 4) / (1 / 2 + 1 / 4)),
        ("Maren Holt", "I do not know.", 0.0),
        ("holt holt maren", "holt maren maren", 2 / 3),  # tokens counted with multiplicity
        ("the", "anything", None),
    ],
)
def test_token_f1(reference: str, answer: str, expected: float | None) -> None:
    got = token_f1(reference, answer)
    assert got == (pytest.approx(expected) if expected is not None else None)


PAIRS = [
    ("Maren Holt", "The lighthouse is kept by Maren Holt."),
    ("Admiral Pell Dunmore, Ilse Dunmore's grandfather", "Pell Dunmore, the grandfather of Ilse"),
    ("The Moon Regulator clock", "Jory Quill stole the clock called the Moon Regulator."),
    ("Ashby, at the Saturday market", "I do not know."),
]


def test_rouge_l_by_hand() -> None:
    # LCS("maren holt", "the lighthouse is kept by maren holt") = 2: P 2/7, R 2/2
    assert rouge_l(*PAIRS[0]) == pytest.approx(2 * (2 / 7) / (2 / 7 + 1))
    # the moon regulator clock / jory quill stole the clock called the moon regulator:
    # LCS "the moon regulator" = 3 of 4 and 9 tokens
    assert rouge_l(*PAIRS[2]) == pytest.approx(2 * (3 / 9) * (3 / 4) / (3 / 9 + 3 / 4))
    assert rouge_l(*PAIRS[3]) == 0.0
    assert rouge_l("", "anything") is None


ASCII_CASES = [
    ("Maren Holt keeps the light.", "Maren Holt [3] keeps the light [1, 2]."),
    ("The 3 keepers [3] of Varn", "Keepers of Varn: 3 [3][4]"),
    ("state-of-the-art O'Neil_report 1990s", "State of the art: O'Neil report, 1990s!"),
    ("[12] alone", "[12]"),
]


@pytest.mark.parametrize(("reference", "answer"), PAIRS + ASCII_CASES)
def test_rouge_l_equals_rouge_scores_own_scorer(reference: str, answer: str) -> None:
    own = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    assert rouge_l(reference, answer) == pytest.approx(
        own.score(reference, answer)["rougeL"].fmeasure
    )


def test_rouge_l_reads_non_latin_words() -> None:
    # rouge-score's own tokenizer keeps only a-z and 0-9: these would score 0 there
    assert rouge_l("Ødegaard vann", "Ødegaard vann") == 1.0
    assert rouge_l("東京", "東京") == 1.0


def test_cosine_similarity() -> None:
    assert cosine_similarity([1.0, 0.0], [1.0, 0.0]) == pytest.approx(1.0)
    assert cosine_similarity([1.0, 1.0], [1.0, 0.0]) == pytest.approx(2**-0.5)
    assert cosine_similarity([1.0, 0.0], [-1.0, 0.0]) == 0.0  # clipped
    assert cosine_similarity([0.0, 0.0], [1.0, 0.0]) is None


def test_registered_as_scorers() -> None:
    assert {"exact_match", "f1", "rouge_l", "answer_similarity"} <= set(SCORERS)
    assert is_binary_metric("exact_match") and not is_binary_metric("f1")
    assert not any(uses_llm(m) for m in ("exact_match", "f1", "rouge_l", "answer_similarity"))
    assert is_metered("answer_similarity") and not is_metered("rouge_l")
    assert is_metered("correctness")


def test_scorers_give_unscored_not_zero() -> None:
    item = QAItem(qid="q", index_key="k", question="?", reference="the")
    setup = ScoringSetup()

    async def run() -> dict[str, object]:
        return {
            m: await SCORERS[m](setup).score(item, "the", None)
            for m in ("exact_match", "f1", "answer_similarity")
        }

    got = asyncio.run(run())
    assert all(j.score is None and j.error for j in got.values())  # type: ignore[attr-defined]
    assert "no embedding model" in got["answer_similarity"].error  # type: ignore[attr-defined]
