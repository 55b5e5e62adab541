"""Every key `eval_config.yaml` accepts is documented in docs/reference/eval-config.md (the
keys of an HTTP method and of an answers file on the page it links to)."""

from __future__ import annotations

import re
import typing
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel

from gtog.eval.run._config import EvalConfig

DOCS = Path(__file__).resolve().parents[3] / "docs"
REFERENCE = DOCS / "reference" / "eval-config.md"
DETAILS = {"answers": DOCS / "other-systems.md", "http_methods": DOCS / "other-systems.md"}
"""Keys whose own keys a page of their own documents."""


def config_keys(model: type[BaseModel] = EvalConfig, prefix: str = "") -> Iterator[str]:
    """Every key of `model`, nested ones as `parent.key`."""
    for name, field in model.model_fields.items():
        yield prefix + name
        for kind in (field.annotation, *typing.get_args(field.annotation)):
            for inner in (kind, *typing.get_args(kind)):
                if isinstance(inner, type) and issubclass(inner, BaseModel):
                    yield from config_keys(inner, f"{prefix}{name}.")


def documented(key: str) -> bool:
    """`key` is in the reference's table (`key`, `parent.key`) or its YAML (`key:`)."""
    top, _, leaf = key.partition(".")
    page = DETAILS.get(top, REFERENCE) if leaf else REFERENCE
    text = page.read_text(encoding="utf-8")
    name = leaf or top
    return bool(
        f"`{key}`" in text
        or (not leaf and f"`{top}." in text)  # `abstention.patterns` names `abstention`
        or re.search(rf"`{re.escape(top)}\.[^`]*\b{re.escape(name)}\b", text)
        or re.search(rf"`\.?{re.escape(name)}`", text)  # `.pairs` after `pairwise.criteria`
        or re.search(rf"^\s*{re.escape(name)}:", text, re.M)  # the YAML block
    )


def test_every_config_key_is_documented() -> None:
    keys = list(dict.fromkeys(config_keys()))
    assert {"judge.trials", "pairwise.aa_check", "http_methods.url", "truncated_answers"} <= set(
        keys
    )
    missing = [key for key in keys if not documented(key)]
    assert not missing, f"not in docs/reference/eval-config.md: {missing}"


def test_an_undocumented_key_is_found() -> None:
    assert not documented("judge.no_such_key")
    assert not documented("no_such_key")
