"""Start, wait for and stop the local model server (a child process)."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from gtog.local._server import DEFAULT_CTX
from gtog.local._weights import (
    CHAT_MODEL_NAME,
    EMBEDDING_MODEL_NAME,
    assemble_chat_weights,
    require_local_extra,
)

__all__ = [
    "LOCAL_API_KEY",
    "LocalModelServer",
    "LocalServerError",
    "LocalServerInfo",
    "running_local_server",
]

LOCAL_API_KEY = "gtog-local-no-key"
"""The local server checks no key, but LiteLLM wants one; this is what we send."""
STARTUP_TIMEOUT_S = 180.0


class LocalServerError(RuntimeError):
    """The local server failed to start or died."""


@dataclass(frozen=True)
class LocalServerInfo:
    """Where the running local server is and the model names it serves."""

    base_url: str
    chat_model: str = CHAT_MODEL_NAME
    embedding_model: str = EMBEDDING_MODEL_NAME
    api_key: str = LOCAL_API_KEY


class LocalModelServer:
    """The local OpenAI-compatible server as a child process.

        with LocalModelServer() as info:
            ...  # info.base_url is e.g. http://127.0.0.1:40123/v1

    `start()` checks the `gtog[local]` extra (clear one-line error if missing), joins the
    chat weights into the cache on first use, starts `python -m gtog.local`
    on 127.0.0.1 (port 0 = a free port, chosen by the child), and waits until `/health`
    answers. `stop()` sends SIGTERM, then SIGKILL after `stop_timeout` seconds; it is
    also called on exceptions and Ctrl-C inside the `with` block.

    The child's stderr (one line per request: tokens and seconds) goes to `log_path`,
    else to $GTOG_LOCAL_SERVER_LOG, else to a temporary file that is deleted on a clean
    stop and kept (and quoted in the error) when the start fails.
    """

    def __init__(
        self,
        port: int = 0,
        host: str = "127.0.0.1",
        n_ctx: int = DEFAULT_CTX,
        threads: int | None = None,
        startup_timeout: float = STARTUP_TIMEOUT_S,
        stop_timeout: float = 10.0,
        log_path: Path | None = None,
    ) -> None:
        self.port, self.host, self.n_ctx, self.threads = port, host, n_ctx, threads
        self.startup_timeout, self.stop_timeout = startup_timeout, stop_timeout
        self.log_path = log_path
        self.process: subprocess.Popen[str] | None = None
        self.info: LocalServerInfo | None = None
        self._log_file = None
        self._temp_log = False

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> LocalServerInfo:
        """Start the server and block until it is ready (or raise `LocalServerError`)."""
        require_local_extra()
        assemble_chat_weights()  # join + verify in the parent, so errors surface here
        if self.log_path is None and os.environ.get("GTOG_LOCAL_SERVER_LOG"):
            self.log_path = Path(os.environ["GTOG_LOCAL_SERVER_LOG"])
        if self.log_path is None:
            fd, name = tempfile.mkstemp(prefix="gtog-local-server-", suffix=".log")
            os.close(fd)
            self.log_path = Path(name)
            self._temp_log = True
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log_file = self.log_path.open("w")
        cmd = [
            sys.executable,
            "-m",
            "gtog.local",
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--n-ctx",
            str(self.n_ctx),
            "--exit-with-parent",
        ]
        if self.threads:
            cmd += ["--threads", str(self.threads)]
        env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1")
        self.process = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=self._log_file,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        try:
            base_url = self._wait_ready()
        except BaseException:
            self._temp_log = False  # keep the log of a failed start
            self.stop()
            raise
        self.info = LocalServerInfo(base_url=base_url)
        atexit.register(self.stop)
        return self.info

    def _wait_ready(self) -> str:
        assert self.process is not None and self.process.stdout is not None
        lines: list[str] = []
        reader = threading.Thread(
            target=lambda: lines.append(self.process.stdout.readline()),
            daemon=True,  # type: ignore[union-attr]
        )
        reader.start()
        reader.join(self.startup_timeout)
        line = lines[0].strip() if lines else ""
        if not line.startswith("READY "):
            code = self.process.poll()
            why = (
                f"exited with code {code}"
                if code is not None
                else f"not ready after {self.startup_timeout:.0f}s"
            )
            raise LocalServerError(f"local model server {why}: {self._log_tail()}")
        base_url = line.split(" ", 1)[1]
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never a proxy
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with opener.open(base_url.removesuffix("/v1") + "/health", timeout=5) as r:
                    if json.load(r).get("status") == "ok":
                        return base_url
            except (urllib.error.URLError, OSError, ValueError):
                time.sleep(0.2)
        raise LocalServerError(f"local model server at {base_url} does not answer /health")

    def _log_tail(self, lines: int = 5) -> str:
        if self.log_path is None or not self.log_path.exists():
            return "(no log)"
        text = self.log_path.read_text(errors="replace").strip().splitlines()
        return " | ".join(text[-lines:]) or f"(empty log {self.log_path})"

    def stop(self) -> None:
        """Stop the child (SIGTERM, then SIGKILL) and close its pipes. Idempotent."""
        proc, self.process = self.process, None
        atexit.unregister(self.stop)
        if proc is not None:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(self.stop_timeout)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)
            if proc.stdout is not None:
                proc.stdout.close()
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        if self._temp_log and self.log_path is not None:
            self.log_path.unlink(missing_ok=True)
            self._temp_log = False

    @property
    def running(self) -> bool:
        """True while the child process is alive."""
        return self.process is not None and self.process.poll() is None

    def __enter__(self) -> LocalServerInfo:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def running_local_server(**kwargs: object) -> Iterator[LocalServerInfo]:
    """Run the local server for the duration of a `with` block.

    While it runs, `GTOG_LOCAL_BASE_URL` and `GTOG_LOCAL_API_KEY` are set in
    `os.environ` (so settings.yaml files and child processes can refer to them) and
    127.0.0.1 is added to `NO_PROXY`; all are restored afterwards.
    """
    server = LocalModelServer(**kwargs)  # type: ignore[arg-type]
    info = server.start()
    names = ("GTOG_LOCAL_BASE_URL", "GTOG_LOCAL_API_KEY", "NO_PROXY", "no_proxy")
    saved = {k: os.environ.get(k) for k in names}
    os.environ["GTOG_LOCAL_BASE_URL"] = info.base_url
    os.environ["GTOG_LOCAL_API_KEY"] = info.api_key
    for key in ("NO_PROXY", "no_proxy"):  # model clients must reach 127.0.0.1 directly
        hosts = [h for h in (os.environ.get(key) or "").split(",") if h]
        os.environ[key] = ",".join(
            [*hosts, *(h for h in ("127.0.0.1", "localhost") if h not in hosts)]
        )
    try:
        yield info
    finally:
        server.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
