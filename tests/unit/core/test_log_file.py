"""The run's log file: written by a thread of its own, masked, tracebacks kept."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from gtog._logs import capture_logs
from gtog._redact import Redactor

SECRET = "sk-test-0123456789abcdef"


def _writing_handlers() -> list[logging.Handler]:
    """Handlers on the root logger that write a stream in the thread that logs."""
    return [h for h in logging.getLogger().handlers if isinstance(h, logging.StreamHandler)]


def test_the_thread_that_logs_never_writes_the_file(tmp_path: Path) -> None:
    path = tmp_path / "eval.log"
    with capture_logs(path, Redactor([SECRET])):
        assert _writing_handlers() == []  # (a FileHandler here would write on the event loop)
        logging.getLogger("gtog.eval.run.engines").info("index %s: built", "a")
    assert "INFO gtog.eval.run.engines: index a: built" in path.read_text()


def test_litellm_s_line_per_call_is_left_out_its_warnings_kept(tmp_path: Path) -> None:
    path = tmp_path / "eval.log"
    with capture_logs(path, Redactor([SECRET])):
        logging.getLogger("LiteLLM").info("\nLiteLLM completion() model= %s", "m")
        logging.getLogger("LiteLLM").warning("Failed to fetch remote model cost map")
    text = path.read_text()
    assert "completion() model=" not in text
    assert "WARNING LiteLLM: Failed to fetch remote model cost map" in text


def test_lines_from_many_threads_are_all_written_masked_with_their_tracebacks(
    tmp_path: Path,
) -> None:
    path = tmp_path / "eval.log"

    def fail(i: int) -> None:
        try:
            raise RuntimeError(f"provider echoed {SECRET} in reply {i}")
        except RuntimeError:
            logging.getLogger("gtog.llm").exception("call %d failed", i)

    with capture_logs(path, Redactor([SECRET])):
        threads = [threading.Thread(target=fail, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        logging.getLogger("gtog").info("broken %d format %d", 1)  # logged as is, no error
    text = path.read_text()
    assert SECRET not in text
    assert all(f"call {i} failed" in text for i in range(8))
    assert text.count("Traceback (most recent call last)") == 8
    assert "broken %d format %d" in text
