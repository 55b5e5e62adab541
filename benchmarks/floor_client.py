"""A reference client for `throughput.py`: local search's calls per pair, no search work.

    python benchmarks/floor_client.py {aiohttp|graphrag_llm} BASE_URL CONCURRENCY PAIRS

Each pair is one embeddings call and two chat calls, in turn; `CONCURRENCY` pairs run at
once. It warms up with one pair, prints `ready`, and starts when a line arrives on stdin;
at the end it prints `cpu SECONDS`, its CPU time over the pairs.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
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


async def _graphrag_llm_calls(base: str) -> tuple[Call, Call, Callable[[], Awaitable[None]]]:
    from graphrag_llm.completion import create_completion
    from graphrag_llm.config import ModelConfig
    from graphrag_llm.embedding import create_embedding

    common: dict[str, Any] = {"model_provider": "openai", "api_base": base, "api_key": "floor"}
    completion = create_completion(ModelConfig(model="m", **common))
    embedding = create_embedding(ModelConfig(model="e", **common))

    async def embed(text: str) -> None:
        await embedding.embedding_async(input=[text])

    async def chat(text: str) -> None:
        await completion.completion_async(messages=[{"role": "user", "content": text}])

    async def close() -> None:
        return None

    return embed, chat, close


async def main(kind: str, base: str, concurrency: int, pairs: int) -> None:
    """Warm up, wait for the go line, run the pairs."""
    make = _aiohttp_calls if kind == "aiohttp" else _graphrag_llm_calls
    embed, chat, close = await make(base)
    limit = asyncio.Semaphore(concurrency)

    async def pair(i: int) -> None:
        async with limit:
            await embed(f"floor question {i}")
            await chat(f"floor question {i}")
            await chat(f"floor judge {i}")

    await pair(-1)  # connections and lazy imports, before the clock starts
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    cpu = time.process_time()
    await asyncio.gather(*(pair(i) for i in range(pairs)))
    print(f"cpu {time.process_time() - cpu:.4f}", flush=True)
    await close()


if __name__ == "__main__":
    kind, base, concurrency, pairs = sys.argv[1:5]
    asyncio.run(main(kind, base, int(concurrency), int(pairs)))
