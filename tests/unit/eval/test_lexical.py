import pytest

from gtog.eval.run._config import EvalConfig
from gtog.eval.scoring._lexical import (
    content_tokens,
    evidence_recall,
    normalize_tokens,
    token_recall,
)


def test_normalisation_drops_case_punctuation_and_function_words() -> None:
    assert normalize_tokens("The Grey Heron, a cargo-ship!") == ["grey", "heron", "cargo", "ship"]


@pytest.mark.parametrize(
    ("reference", "answer", "expected"),
    [
        ("Maren Holt", "The lighthouse is kept by Maren Holt.", 1.0),
        ("Maren Holt", "maren holt", 1.0),
        ("Maren Holt", "Tobias Holt", 0.5),
        ("Ashby, at the Saturday market", "In Ashby.", 1 / 3),
        ("Maren Holt", "I do not know.", 0.0),
        ("the", "anything", None),
    ],
)
def test_token_recall(reference: str, answer: str, expected: float | None) -> None:
    got = token_recall(reference, answer)
    assert got == (pytest.approx(expected) if expected is not None else None)


def test_config_accepts_lexical_metrics() -> None:
    cfg = EvalConfig.model_validate(
        {
            "dataset": {"path": "x"},
            "indexes": {"a": "a"},
            "metrics": ["correctness", "token_recall"],
        }
    )
    assert cfg.metrics == ["correctness", "token_recall"]


# evidence_recall: hand-computed cases (content words are listed in each comment)
@pytest.mark.parametrize(
    ("evidence", "context", "expected"),
    [
        # {maren, holt, kept, lighthouse}; the context has maren, lighthouse -> 2/4
        ("[1] Maren Holt kept the lighthouse.", "The lighthouse keeper is Maren.", 0.5),
        # curly quotes, full-width letters (NFKC) and case: {maren, lamp} -> 2/2
        ("“ＭＡＲＥＮ’s lamp”", "maren's LAMP", 1.0),
        # markers [2], [3, 4], [5-6] are not words: {bram, osk} -> 2/2 (else 2/6)
        ("Bram Osk [2] [3, 4] [5–6]", "bram osk", 1.0),
        # function words dropped: she, it, to, him -> {gave}
        ("She gave it to him", "gave", 1.0),
        # ß case-folds to ss, e + combining accent composes to é: {straße, café} -> 2/2
        ("Straße cafe\u0301", "STRASSE Café", 1.0),
        # distinct words count once: {holt, maren} -> 1/2
        ("Holt Holt Maren", "Holt Holt Holt", 0.5),
        # whole words, not substrings: {kelport} -> 0/1, a real zero (context present)
        ("Kelport", "Kelporter harbour", 0.0),
        # numbers are content words; the marker [3] is not: {3, miles} -> 1/2
        ("three miles [3]", "3 miles", 0.5),
        # non-Latin scripts: {москва, город} -> 1/2
        ("Москва — город", "Я люблю МОСКВА", 0.5),
        # nothing to compare -> unscored, never 0
        ("[3] and the", "anything at all", None),
        ("Maren Holt", "", None),
        ("Maren Holt", "  \n ", None),
    ],
)
def test_evidence_recall(evidence: str, context: str, expected: float | None) -> None:
    got = evidence_recall(evidence, context)
    assert got == (pytest.approx(expected) if expected is not None else None)


def test_content_tokens() -> None:
    assert content_tokens(" “Edda’s mother,” Rosa Lorne [3], planted it — in 1901.") == [
        "edda",
        "mother",
        "rosa",
        "lorne",
        "planted",
        "1901",
    ]


def test_config_accepts_evidence_recall() -> None:
    cfg = EvalConfig.model_validate(
        {"dataset": {"path": "x"}, "indexes": {"a": "a"}, "metrics": ["evidence_recall"]}
    )
    assert cfg.metrics == ["evidence_recall"]


# one tokenizer for both metrics: quotes, apostrophes, dashes, full-width and non-Latin text
@pytest.mark.parametrize(
    ("reference", "answer", "expected"),
    [
        ("the brass compass", "Ilse gave Maren a “brass compass”.", 1.0),
        ("Maren's compass", "Maren’s compass", 1.0),
        ("well-known keeper", "a well–known keeper", 1.0),
        ("ＭＡＲＥＮ", "maren", 1.0),
        ("東京 タワー", "タワー", 0.5),
        ("Holt [3]", "Holt", 1.0),
    ],
)
def test_token_recall_reads_text_as_evidence_recall_does(
    reference: str, answer: str, expected: float
) -> None:
    assert token_recall(reference, answer) == pytest.approx(expected)
    assert evidence_recall(reference, answer) == pytest.approx(expected)
