"""Keep API keys out of everything gtog writes or prints.

A `Redactor` knows the secrets of a run (every configured model's key, the values of the
environment variables they came from, an HTTP method's secret headers) and removes them,
and the truncated forms providers echo back (`sk-abc...wxyz`, `sk-abc*****wxyz`), from any
text. `RedactingFilter` applies it to every log record that passes a handler. Every
command builds its redactor the same way: `Redactor([*environment_secrets(os.environ),
*what_it_configured])`, and prints errors and writes logs through it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping

__all__ = ["MASK", "SECRET_SUFFIXES", "RedactingFilter", "Redactor", "environment_secrets"]

MASK = "[REDACTED]"
_MIN_SECRET = 8
"""Shorter values are not treated as secrets (they would mask ordinary words)."""
SECRET_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "API_KEY", "_PASSWORD")
"""Environment variables whose names end so hold secrets, whoever reads them."""


def environment_secrets(environ: Mapping[str, str]) -> list[str]:
    """The values of the environment variables named like secrets (`SECRET_SUFFIXES`)."""
    return [v for k, v in environ.items() if k.upper().endswith(SECRET_SUFFIXES) and v]


class Redactor:
    """Masks a fixed set of secrets, whole or truncated, in text."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self.secrets = sorted(
            {s.strip() for s in secrets if s and len(s.strip()) >= _MIN_SECRET},
            key=len,
            reverse=True,
        )
        parts = [re.escape(s) for s in self.secrets]
        for s in self.secrets:
            head, tail = re.escape(s[: max(4, len(s) // 4)]), re.escape(s[-4:])
            # a prefix or suffix around a run of masking characters: sk-abc****wxyz, sk-abc...
            parts.append(rf"{head}[\w-]*(?:\*{{2,}}|\.{{3}}|…)[\w-]*")
            parts.append(rf"[\w-]*(?:\*{{2,}}|\.{{3}}|…){tail}")
        self._pattern = re.compile("|".join(parts)) if parts else None

    def __call__(self, text: str) -> str:
        """`text` with every secret masked."""
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(MASK, text)

    def optional(self, text: str | None) -> str | None:
        """`__call__` that passes None through."""
        return None if text is None else self(text)


class RedactingFilter(logging.Filter):
    """A handler filter that formats each record and masks secrets in the result."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the record's message (and traceback) with secrets masked."""
        try:
            message = record.getMessage()
        except Exception:  # a broken format string is still logged, as is
            message = str(record.msg)
        if record.exc_info:
            formatter = logging.Formatter()
            message = f"{message}\n{formatter.formatException(record.exc_info)}"
            record.exc_info = None
            record.exc_text = None
        if record.stack_info:
            message = f"{message}\n{record.stack_info}"
            record.stack_info = None
        record.msg = self.redactor(message)
        record.args = None
        return True
