"""A reference client for `throughput.py`: local search's calls per pair, no search work.

    python benchmarks/floor_client.py {aiohttp|graphrag_llm} BASE_URL CONCURRENCY PAIRS
    python benchmarks/floor_client.py replay BASE_URL CONCURRENCY PAIRS REQUESTS_JSON

Each pair is one embeddings call and two chat calls, in turn; `CONCURRENCY` pairs run at
once. It warms up with one pair, prints `ready`, and starts when a line arrives on stdin;
at the end it prints `cpu SECONDS`, its CPU time over the pairs.

`aiohttp` and `graphrag_llm` send short requests of their own ("floor question 7").
`replay` sends, through graphrag_llm, the requests a method's run sent (REQUESTS_JSON:
`[{"kind": "embeddings" | "chat", "judge": bool, "body": {...}}]` in the order they
arrived): pair i makes the i-th embedding, answer and judge request, with their messages
and arguments as sent (the judge's `response_format` in `extra_body`, as gtog sends it).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

Call = Callable[[str], Awaitable[Any]]


async def _aiohttp_calls(base: str) -> tuple[Call, Call, Callable[[], Awaitable[None]]]:
    import aiohttp

    session = aiohttp.ClientSession()

    async def post(path: str, body: dict[str, Any]) -> None:
        async with session.post(base + path, json=body) as reply:
            reply.raise_for_status()
            await reply.json()

    async def embed(text: str) -> None:
        await post("/embeddings", {"model": "e", "input": [text]})

    async def chat(text: str) -> None:
        messages = [{"role": "user", "content": text}]
        await post("/chat/completions", {"model": "m", "messages": messages})

    return embed, chat, session.close


def _graphrag_llm_models(base: str) -> tuple[Any, Any]:
    """graphrag_llm's completion and embedding models for the server at `base`."""
    from graphrag_llm.completion import create_completion
    from graphrag_llm.config import ModelConfig
    from graphrag_llm.embedding import create_embedding

    common: dict[str, Any] = {"model_provider": "openai", "api_base": base, "api_key": "floor"}
    completion = create_completion(ModelConfig(model="m", **common))
    return completion, create_embedding(ModelConfig(model="e", **common))


async def _graphrag_llm_calls(base: str) -> tuple[Call, Call, Callable[[], Awaitable[None]]]:
    completion, embedding = _graphrag_llm_models(base)

    async def embed(text: str) -> None:
        await embedding.embedding_async(input=[text])

    async def chat(text: str) -> None:
        await completion.completion_async(messages=[{"role": "user", "content": text}])

    async def close() -> None:
        return None

    return embed, chat, close


Pair = Callable[[int], Awaitable[None]]


async def _replayed_pairs(base: str, requests: str) -> Pair:
    """Pair i: the i-th embedding, answer and judge request of a run, through graphrag_llm."""
    import json

    completion, embedding = _graphrag_llm_models(base)
    sent = json.loads(Path(requests).read_text(encoding="utf-8"))
    embeds = [r["body"] for r in sent if r["kind"] == "embeddings"]
    answers = [r["body"] for r in sent if r["kind"] == "chat" and not r["judge"]]
    judges = [r["body"] for r in sent if r["kind"] == "chat" and r["judge"]]

    async def chat(body: dict[str, Any]) -> None:
        args = {k: v for k, v in body.items() if k not in ("messages", "model")}
        if "response_format" in args:
            args["extra_body"] = {"response_format": args.pop("response_format")}
        await completion.completion_async(messages=body["messages"], **args)

    async def pair(i: int) -> None:
        text = embeds[i % len(embeds)]["input"]
        await embedding.embedding_async(input=text if isinstance(text, list) else [text])
        await chat(answers[i % len(answers)])
        await chat(judges[i % len(judges)])

    return pair


async def _own_pairs(kind: str, base: str) -> tuple[Pair, Callable[[], Awaitable[None]]]:
    make = _aiohttp_calls if kind == "aiohttp" else _graphrag_llm_calls
    embed, chat, close = await make(base)

    async def pair(i: int) -> None:
        await embed(f"floor question {i}")
        await chat(f"floor question {i}")
        await chat(f"floor judge {i}")

    return pair, close


async def _nothing() -> None:
    return None


async def main(kind: str, base: str, concurrency: int, pairs: int, *rest: str) -> None:
    """Warm up, wait for the go line, run the pairs."""
    if kind == "replay":
        calls, close = await _replayed_pairs(base, rest[0]), _nothing
    else:
        calls, close = await _own_pairs(kind, base)
    limit = asyncio.Semaphore(concurrency)

    async def pair(i: int) -> None:
        async with limit:
            await calls(i)

    await pair(pairs - 1 if kind == "replay" else -1)  # connections, lazy imports: before
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    cpu = time.process_time()
    await asyncio.gather(*(pair(i) for i in range(pairs)))
    print(f"cpu {time.process_time() - cpu:.4f}", flush=True)
    await close()


if __name__ == "__main__":
    kind, base, concurrency, pairs = sys.argv[1:5]
    asyncio.run(main(kind, base, int(concurrency), int(pairs), *sys.argv[5:]))
