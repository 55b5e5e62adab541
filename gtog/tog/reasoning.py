"""ToG reasoning: is the evidence so far sufficient, and the final answer from it."""

from __future__ import annotations

import re

from gtog.tog.run import QueryRun, parse_json

__all__ = ["answer", "is_sufficient", "parse_sufficient"]

NO_EVIDENCE = "(No entity of the knowledge graph matched the question, so no paths were explored.)"
"""The evidence text when linking found no topic entity."""


def parse_sufficient(text: str) -> bool | None:
    """`{"sufficient": bool}` (or a reply starting Yes/No) -> bool; None if unclear."""
    value = parse_json(text)
    if isinstance(value, dict):
        flag = value.get("sufficient", value.get("answerable"))
        if isinstance(flag, bool):
            return flag
        if isinstance(flag, str) and flag.strip().lower() in ("yes", "true", "no", "false"):
            return flag.strip().lower() in ("yes", "true")
    match = re.match(r"\W*(yes|no)\b", text.strip(), re.I)
    return match.group(1).lower() == "yes" if match else None


async def is_sufficient(run: QueryRun, depth: int, evidence: str) -> bool:
    """One reasoning call; an unclear reply counts as "not sufficient" and as a fallback."""
    reply = await run.call("reasoning", evidence=evidence, depth=depth)
    verdict = parse_sufficient(reply.text)
    if verdict is None:
        run.fallback(depth, "reasoning", "", "unusable reply: treated as not sufficient")
        return False
    return verdict


async def answer(run: QueryRun, evidence: str) -> str:
    """The final answer from `evidence` (exactly the text passed here)."""
    reply = await run.call("answer", evidence=evidence, response_type=run.settings.response_type)
    return reply.text.strip()
