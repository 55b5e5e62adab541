"""`RememberedCounts`: a context builder's token counts, each text counted once."""

from __future__ import annotations

from typing import Any

from graphrag_llm.tokenizer import Tokenizer

from gtog.search._offloop import RememberedCounts


class Words(Tokenizer):
    """A tokenizer of words, counting the texts it encodes."""

    def __init__(self, **kwargs: Any) -> None:
        self.encoded: list[str] = []

    def encode(self, text: str) -> list[int]:
        self.encoded.append(text)
        return [len(w) for w in text.split()]

    def decode(self, tokens: list[int]) -> str:
        return " ".join("x" * n for n in tokens)


def test_a_text_is_counted_once_and_its_count_is_the_tokenizer_s() -> None:
    words = Words()
    counts = RememberedCounts(words)
    rows = ["7|keeper|lamp|trims the wick\n", "8|keeper|boat|rows out\n"]
    for _ in range(10):  # (as graphrag re-counts each row for every entity it adds)
        assert [counts.num_tokens(r) for r in rows] == [3, 2]
    assert words.encoded == rows
    assert counts.encode("a b") == [1, 1] and counts.decode([2]) == "xx"
    assert counts.num_prompt_tokens("one two") == Words().num_prompt_tokens("one two")


def test_past_its_limit_it_starts_again_and_still_counts_right() -> None:
    words = Words()
    counts = RememberedCounts(words, limit=2)
    texts = ["a", "b c", "d e f", "a"]
    assert [counts.num_tokens(t) for t in texts] == [1, 2, 3, 1]
    assert words.encoded == texts  # "a" was dropped with the first two, so counted again


def test_a_text_is_encoded_once_and_each_caller_gets_its_own_list() -> None:
    words = Words()
    counts = RememberedCounts(words)
    text = "1|the keeper trims the wick\n"
    for _ in range(5):  # (as basic search's builder encodes each text unit it retrieves)
        assert counts.encode(text) == [5, 6, 5, 3, 4]
    assert words.encoded == [text]
    mine = counts.encode(text)
    mine.append(99)
    assert counts.encode(text) == [5, 6, 5, 3, 4]


def test_past_a_tenth_of_its_limit_it_encodes_anew() -> None:
    words = Words()
    counts = RememberedCounts(words, limit=20)  # tokens of 2 texts are kept
    texts = ["a", "b c", "d e f", "a"]
    assert [counts.encode(t) for t in texts] == [[1], [1, 1], [1, 1, 1], [1]]
    assert words.encoded == texts
