"""Errors that gtog reports to the user as one line (and exit code 2 on the CLI)."""

from __future__ import annotations

__all__ = ["InputError"]


class InputError(Exception):
    """Bad user input: a missing or malformed file, an unknown name, a wrong field.

    The message is one line and names the file and, where there is one, the field.
    """
