"""A small search service on 127.0.0.1 for HTTP-method tests (real HTTP, aiohttp.web).

One endpoint per method, as a FastAPI backend on GraphRAG would have them:

- `POST /api/collections/{index_key}/search/{name}`: `{query, stream}` in, JSON out:
  `{response, context_data, stats: {llm_calls, prompt_tokens}}`; `agent` answers with the
  dataset's reference (right), `plain` with "I do not know"; with `"stream": true`, the
  same answer as server-sent events, in chunks.
- `.../search/flaky`: 503 twice per question, then answers like `agent`.
- `.../search/slow`: never answers.
- `.../search/broken`: a JSON reply without `response`.
- `.../search/echo`: HTTP 500 whose text echoes the credentials it was sent (as a careless
  service does: `invalid credentials: Bearer <token>, X-API-Key <key>`).
- `.../search/latin1`: the answer in ISO-8859-1, saying so in its `charset`.
- `.../search/huge?bytes=N[&chunked=1]`: an answer N bytes long (without Content-Length
  when chunked).
- `.../search/limited?after=S[&date=1]`: 429 with `Retry-After: S` (seconds, or as an HTTP
  date) once per question, then the answer.
- `.../search/agent/stream`: a streaming agent, as the user's backend: server-sent events
  `status` (`step: routing|routed|searching|generating`, `method`), `content` (`delta`),
  `done` (`method_used`, `sources`, `router_reasoning`). It routes by keyword (`route_of`:
  a question starting "Who" to `local`, any other to `basic`; `routes` renames them) and
  answers with the
  reference, but for the question ids in `wrong` ("I do not know"). A question holding
  `[error]` gets an `error` event (`message`), one holding `[cut]` a stream that stops
  before `done`. The plain `agent` reply names the same route (`method_used`).

Every request there needs `Authorization: Bearer <token>` (else 401).

- `POST /redirect/{code}?to=URL`: answers `code` (301, 302, 303, 307, 308) with
  `Location: URL`, whoever asks.
- `POST /query`: LightRAG's endpoint (lightrag/api/routers/query_routes.py): `{query, mode,
  include_references, include_chunk_content}` in, `{response, references: [{reference_id,
  file_path, content}]}` out; needs `X-API-Key: <token>` (else 401), reads the workspace
  from `LIGHTRAG-WORKSPACE` (one per index key), and answers a question it has no context
  for with LightRAG's own "Sorry, I'm not able to provide an answer to that
  question.[no-context]" and no references.

`requests` logs what came in (path, body, whether the credentials matched, the workspace
header, when it came), other headers kept out of it.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.support.world import EXAMPLE_QA


@dataclass
class ServiceRequest:
    """One request the service received."""

    path: str
    body: Any
    authorized: bool
    workspace: str | None = None
    at: float = field(default_factory=time.monotonic)


@dataclass
class SearchService:
    """The service, run in its own thread and event loop."""

    token: str
    requests: list[ServiceRequest] = field(default_factory=list)
    port: int = 0
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _runner: web.AppRunner | None = None
    _failures: dict[str, int] = field(default_factory=dict)
    wrong: frozenset[str] = frozenset()
    """Question ids the streaming agent answers wrongly."""
    routes: tuple[str, str] = ("local", "basic")
    """The agent's two routes: for a question starting "Who", and for any other."""

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def route_of(self, question: str) -> str:
        """The agent's keyword router: the first route (`local`) for a "Who" question,
        else the second (`basic`)."""
        return self.routes[0 if question.strip().lower().startswith("who") else 1]

    async def _agent_stream(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        authorized = request.headers.get("Authorization") == f"Bearer {self.token}"
        self.requests.append(ServiceRequest(request.path, body, authorized))
        if not authorized:
            return web.json_response({"detail": "bad token"}, status=401)
        question, qid = str(body.get("query", "")), str(body.get("question_id", ""))
        route = self.route_of(question)
        answer = "I do not know" if qid in self.wrong else self._answer(question)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)

        async def send(event: str, data: dict[str, Any]) -> None:
            await response.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())

        await send("status", {"step": "routing"})
        await send("status", {"step": "routed", "method": route})
        if "[error]" in question:
            await send("error", {"message": f"{route} search failed: index not loaded"})
            await response.write_eof()
            return response
        await send("status", {"step": "searching", "method": route})
        await send("status", {"step": "generating", "method": route})
        words = answer.split(" ")
        for i, word in enumerate(words):
            await send("content", {"delta": word + (" " if i < len(words) - 1 else "")})
        if "[cut]" not in question:
            done = {
                "method_used": route,
                "sources": [{"id": "1", "text": f"source of {request.match_info['index_key']}"}],
                "router_reasoning": f"keyword rule chose {route}",
            }
            await send("done", done)
        await response.write_eof()
        return response

    def _answer(self, question: str) -> str:
        refs = {q["question"]: q["answer"] for q in json.loads(EXAMPLE_QA.read_text())}
        return refs.get(question, "I do not know")

    async def _search(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        name = request.match_info["name"]
        authorized = request.headers.get("Authorization") == f"Bearer {self.token}"
        self.requests.append(ServiceRequest(request.path, body, authorized))
        if not authorized:
            return web.json_response({"detail": "bad token"}, status=401)
        question = str(body.get("query", ""))
        if name == "slow":
            await asyncio.sleep(3600)
        if name == "flaky":
            seen = self._failures.get(question, 0)
            if seen < 2:
                self._failures[question] = seen + 1
                return web.json_response({"detail": "busy"}, status=503)
        if name == "broken":
            return web.json_response({"result": "an answer under another key"})
        if name == "echo":
            said = request.headers.get("Authorization", "")
            key = request.headers.get("X-API-Key", "")
            return web.Response(status=500, text=f"invalid credentials: {said}, X-API-Key {key}")
        if name == "latin1":
            reply = json.dumps({"response": "Café Noël"}, ensure_ascii=False)
            return web.Response(
                body=reply.encode("iso-8859-1"),
                headers={"Content-Type": "application/json; charset=ISO-8859-1"},
            )
        if name == "huge":
            size = int(request.query["bytes"])
            data = json.dumps({"response": "x" * max(0, size - 16)}).encode()
            if "chunked" not in request.query:
                return web.Response(body=data, content_type="application/json")
            response = web.StreamResponse(headers={"Content-Type": "application/json"})
            response.enable_chunked_encoding()
            await response.prepare(request)
            for i in range(0, len(data), 65536):
                await response.write(data[i : i + 65536])
            await response.write_eof()
            return response
        if name == "limited":
            seen = self._failures.get(question, 0)
            if seen < 1:
                self._failures[question] = seen + 1
                after = request.query["after"]
                if "date" in request.query:
                    after = email.utils.formatdate(time.time() + float(after), usegmt=True)
                return web.json_response(
                    {"detail": "slow down"}, status=429, headers={"Retry-After": after}
                )
        answer = "I do not know" if name == "plain" else self._answer(question)
        context = {"entities": f"context of {request.match_info['index_key']}: {answer}"}
        stats = {"llm_calls": 3, "prompt_tokens": 120}
        if body.get("stream"):
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            words = answer.split(" ")
            for i, word in enumerate(words):
                chunk = {"response": word + (" " if i < len(words) - 1 else "")}
                await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
            final = {"context_data": context, "stats": stats}
            await response.write(f"data: {json.dumps(final)}\n\ndata: [DONE]\n\n".encode())
            await response.write_eof()
            return response
        reply = {"response": answer, "context_data": context, "stats": stats}
        return web.json_response({**reply, "method_used": self.route_of(question)})

    async def _redirect(self, request: web.Request) -> web.Response:
        self.requests.append(ServiceRequest(request.path, await request.text(), False))
        code = int(request.match_info["code"])
        return web.Response(status=code, headers={"Location": request.query["to"]})

    async def _lightrag(self, request: web.Request) -> web.Response:
        body = await request.json()
        authorized = request.headers.get("X-API-Key") == self.token
        workspace = request.headers.get("LIGHTRAG-WORKSPACE")
        self.requests.append(ServiceRequest(request.path, body, authorized, workspace))
        if not authorized:
            return web.json_response({"detail": "Invalid API Key"}, status=403)
        qa = json.loads(EXAMPLE_QA.read_text())
        item = next(
            (q for q in qa if q["question"] == body.get("query") and q["imdb_key"] == workspace),
            None,
        )
        if item is None:
            fail = "Sorry, I'm not able to provide an answer to that question.[no-context]"
            return web.json_response({"response": fail, "references": []})
        references = [
            {
                "reference_id": "1",
                "file_path": f"{workspace}.txt",
                "content": [f"chunk of {workspace}: {item['answer']}", "another chunk"],
            }
        ]
        if not body.get("include_chunk_content"):
            references = [{k: v for k, v in r.items() if k != "content"} for r in references]
        if body.get("include_references") is False:
            references = []
        return web.json_response({"response": item["answer"], "references": references})

    def start(self) -> SearchService:
        ready = threading.Event()

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            app = web.Application()
            app.router.add_post("/api/collections/{index_key}/search/{name}", self._search)
            app.router.add_post("/redirect/{code}", self._redirect)
            app.router.add_post("/query", self._lightrag)
            app.router.add_post(
                "/api/collections/{index_key}/search/agent/stream", self._agent_stream
            )
            self._runner = web.AppRunner(app, access_log=None, handler_cancellation=True)
            loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, "127.0.0.1", 0, shutdown_timeout=0.5)
            loop.run_until_complete(site.start())
            self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            ready.set()
            loop.run_forever()

        self._thread = threading.Thread(target=serve, daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is None or self._runner is None:
            return
        future = asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop)
        future.result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)
