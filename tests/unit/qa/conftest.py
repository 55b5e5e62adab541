"""Seed fixtures of graphrag-eval's README."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "qa"


@pytest.fixture
def seed_reference() -> list[dict[str, Any]]:
    """The README's reference Q&A data (2 templates, 4 questions)."""
    return yaml.safe_load((FIXTURES / "seed_reference.yaml").read_text())


@pytest.fixture
def seed_responses() -> list[dict[str, Any]]:
    """Responses: the README's result example, its error shape, a renamed-columns
    SPARQL answer, and the README's response example (an id not in the reference)."""
    return json.loads((FIXTURES / "responses.json").read_text())


@pytest.fixture(autouse=True)
def _no_openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
