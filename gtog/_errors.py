"""Errors gtog reports to the user, and the one helper that describes an exception in a line."""

from __future__ import annotations

__all__ = ["FatalRunError", "InputError", "describe_exception"]


class InputError(ValueError):
    """Bad user input: a missing or malformed file, an unknown name, a wrong field.

    The message is one line and names the file and, where there is one, the field.
    The CLI prints it and exits with code 2.
    """


class FatalRunError(Exception):
    """A failure that no later item can escape (bad key, unknown model, error budget spent).

    The run stops at once; the checkpoint stays valid so `--resume` continues after the fix.
    The CLI prints the one-line message and exits with code 1.
    """


def describe_exception(exc: BaseException, limit: int = 500, *, with_type: bool = True) -> str:
    """`Type: first line of the message` (or the line alone), at most `limit` characters."""
    text = str(exc).strip()
    first = text.splitlines()[0].strip() if text else ""
    if not first:
        return type(exc).__name__[:limit]
    return (f"{type(exc).__name__}: {first}" if with_type else first)[:limit]
