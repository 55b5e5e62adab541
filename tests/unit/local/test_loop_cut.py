"""The local server ends a reply that repeats itself (issue 32: extraction replies looped
to max_tokens). Pure functions of token ids; no model needed."""

from __future__ import annotations

import numpy as np

from gtog.local._backend import LoopCut, repeated_tail

RECORDS = list(range(100, 190))  # one pass over the records: 90 distinct tokens


def test_a_verbatim_repeat_of_k_tokens_is_a_loop_and_shorter_ones_are_not() -> None:
    assert not repeated_tail(RECORDS, 64)
    looping = RECORDS + RECORDS[:63]
    assert not repeated_tail(looping, 64)  # 63 tokens repeated: a shared description
    assert repeated_tail([*looping, RECORDS[63]], 64)
    assert repeated_tail([7] * 65, 64)  # a one-token loop
    assert not repeated_tail([7] * 64, 64)
    assert not repeated_tail(RECORDS + RECORDS, 0)


def test_the_processor_keeps_the_reply_up_to_the_copy_and_then_allows_only_the_end() -> None:
    prompt = [1, 2, 3]
    cut = LoopCut(k=8, eos=0)
    scores = np.zeros(200, dtype=np.float32)
    replies = [*RECORDS[:20], *RECORDS[:20]]
    for step in range(len(replies) + 1):
        out = cut(np.array(prompt + replies[:step]), scores.copy())
        if step < 28:  # the copy is 8 tokens long at step 28
            assert cut.kept is None and np.isfinite(out).all(), step
    assert cut.kept == RECORDS[:20]
    assert np.isneginf(np.delete(out, 0)).all() and out[0] == 0.0


def test_the_line_the_copy_began_in_is_kept_whole() -> None:
    newline = 5  # token 5 is "\n": the records are 1 2 3 4 5, 1 2 6 7 5, ...
    reply = [1, 2, 3, 4, 5, 1, 2, 6, 7, 5, 8, 9, 3, 4, 5, 1, 2, 6, 7, 5]
    cut = LoopCut(k=4, eos=0, piece=lambda t: "\n" if t == newline else "x")
    for step in range(len(reply) + 1):
        cut(np.array([99, *reply[:step]]), np.zeros(10))
        if cut.kept is not None:
            break
    # "3 4 5 1" repeats at step 16: the copy began after "8 9"; its line ends at the 5
    assert step == 16 and cut.kept == [1, 2, 3, 4, 5, 1, 2, 6, 7, 5, 8, 9, 3, 4, 5]
