"""A fork server for the tests' `gtog` commands: real processes without the import wait.

Every `gtog eval` a test runs is a separate process, as a user's is (its own argv, env,
working folder, stdout and stderr, exit code, signals). Starting one costs ~7 s of CPU
importing graphrag, LiteLLM, pandas, scipy, OpenAI's and Azure's clients and what gtog's
run, statistics and report use, and the suite starts about three hundred. The zygote
imports those once (`_PRELOAD`), then forks a child per command: the child sets the
command's argv, environment and folder, runs `gtog.cli.main`, and exits with its code.
What a child still imports shows in `sys.modules` after a run; each second left there is
paid again by every command (12 small `gtog eval` and `eval report` commands took 42.6 s
forked from a zygote that preloaded only the CLI and graphrag's query engines, 13.8 s with
this list, on 2 cores).

What a fork cannot copy is kept out: the zygote starts no thread (LanceDB's background
loop thread starts at its import, so LanceDB is imported by each child), and a command
whose environment changes what is read at import time (`PYTHON*` such as PYTHONPATH,
`LITELLM_*`, `HF_*`) runs as a plain subprocess instead. `start_gtog` gives a test the
child to poll, SIGKILL (a fork dies like any process) or interrupt (the child has Python's
own SIGINT handler, as a new process has, even when pytest runs in the background).
`GTOG_TEST_NO_ZYGOTE=1` turns the zygote off.

Protocol (a Unix socket): the client sends one JSON line `{args, env, cwd, stdout,
stderr}` (two file paths), the zygote answers `{"pid": n}` at once and `{"status": s}` (the
exit code, or minus the signal number) when the child ends.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["IMPORT_TIME_ENV", "run_gtog"]

REPO = Path(__file__).resolve().parents[2]
IMPORT_TIME_ENV = ("PYTHON", "LITELLM_", "HF_")
"""Environment variables read at import time: a command that changes one runs apart."""

_PRELOAD = (
    "gtog.cli",
    "gtog.cli._eval",
    "gtog.cli._query",
    "gtog.cli._qa",
    "gtog.eval.run",
    "gtog.eval.report",
    "gtog.search._builders",
    "gtog.tog._search",
    "gtog.qa",
    "graphrag.query.factory",
    "graphrag.api",  # indexing's pipeline and workflows (`gtog index`)
    "graphrag.cli.main",
    "graphrag_llm.completion",
    "graphrag_llm.embedding",
    "litellm",
    # what every `gtog eval` imports on its way (a child that imports them pays ~1.5 s of
    # CPU each time): the run, its scorers, statistics and report, and their libraries
    "gtog.eval.run._preparation",
    "gtog.eval.run._loop",
    "gtog.eval.run._outputs",
    "gtog.eval.run._spending",
    "gtog.eval.report._publish",
    "gtog.eval.results._summary",
    "gtog.eval.scoring._judges",
    "gtog.eval.scoring._reference",
    "gtog.search._preflight",
    "gtog.search._http",
    "gtog.compat._index",
    "scipy.stats",
    "openai.resources",
    "litellm.llms.openai.openai",
    "azure.identity",
    "azure.storage.blob",
    "jsonschema",
    "lance_namespace_urllib3_client",  # LanceDB's, without its thread (lancedb starts one)
    "pyarrow.dataset",
)


# -- the server --------------------------------------------------------------------------


def _child(request: dict, conns: list[socket.socket], imported: dict[str, str]) -> None:
    """In the forked child: become the command, run it, exit with its code."""
    for c in conns:
        c.close()
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL if sig != signal.SIGINT else signal.default_int_handler)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(os.open(request["stdout"], os.O_WRONLY | os.O_TRUNC), 1)
    os.dup2(os.open(request["stderr"], os.O_WRONLY | os.O_TRUNC), 2)
    os.environ.clear()
    os.environ.update({**imported, **request["env"]})  # what imports set (LiteLLM's
    # TIKTOKEN_CACHE_DIR), as a fresh process importing them would have it
    os.chdir(request["cwd"])
    sys.argv = ["gtog", *request["args"]]
    code = 0
    try:
        from gtog.cli import main

        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, int | type(None)):
            print(exc.code, file=sys.stderr)
    except KeyboardInterrupt:
        code = 130
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
    os._exit(code)


def serve(path: str) -> None:
    """Import the heavy modules, then fork one child per request on the socket `path`."""
    import importlib

    before = dict(os.environ)
    for name in _PRELOAD:
        importlib.import_module(name)
    imported = {k: v for k, v in os.environ.items() if before.get(k) != v}
    assert threading.active_count() == 1, [t.name for t in threading.enumerate()]
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    print("ready", flush=True)
    waiting: dict[int, socket.socket] = {}
    while os.getppid() == parent:  # the test session is gone: so is the zygote
        ready, _, _ = select.select([listener], [], [], 0.02)
        if ready:
            conn, _ = listener.accept()
            request = json.loads(conn.makefile("r").readline())
            pid = os.fork()
            if pid == 0:
                _child(request, [listener, conn, *waiting.values()], imported)
            conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
            waiting[pid] = conn
        while waiting:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            conn = waiting.pop(pid, None)
            if conn is not None:
                code = os.waitstatus_to_exitcode(status)
                with contextlib.suppress(OSError):
                    conn.sendall(json.dumps({"status": code}).encode() + b"\n")
                conn.close()


# -- the client --------------------------------------------------------------------------


class _Zygote:
    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="gtog-zygote-"))
        self.path = str(self.folder / "socket")
        self.env = _base_env()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", f"from tests.support.zygote import serve; serve({self.path!r})"],
            cwd=REPO,
            env=self.env,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError("the gtog test zygote did not start")
        atexit.register(self.stop)

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        self.proc.wait()

    def suits(self, env: dict[str, str]) -> bool:
        keys = {k for k in (*env, *self.env) if k.startswith(IMPORT_TIME_ENV)}
        return all(env.get(k) == self.env.get(k) for k in keys)

    def start(self, args: list[str], env: dict[str, str]) -> Forked:
        """Fork `gtog args`; the child runs while the caller goes on."""
        out = self.folder / f"{time.monotonic_ns()}-{threading.get_ident()}"
        paths = {"stdout": f"{out}.out", "stderr": f"{out}.err"}
        for p in paths.values():
            Path(p).touch()
        request = {"args": args, "env": env, "cwd": os.getcwd(), **paths}
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(self.path)
        conn.sendall(json.dumps(request).encode() + b"\n")
        replies = conn.makefile("r")
        pid = json.loads(replies.readline())["pid"]
        return Forked(args, pid, conn, replies, paths)

    def run(
        self, args: list[str], env: dict[str, str], timeout: float
    ) -> subprocess.CompletedProcess[str]:
        return self.start(args, env).wait(timeout)


class Forked:
    """A `gtog` command forked by the zygote: like a `Popen` (pid, poll, kill, wait)."""

    def __init__(
        self,
        args: list[str],
        pid: int,
        conn: socket.socket,
        replies: Any,
        paths: dict[str, str],
    ) -> None:
        self.args = args
        self.pid = pid
        self._conn = conn
        self._replies = replies
        self._paths = paths
        self.returncode: int | None = None

    def poll(self) -> int | None:
        """The exit status if the child has ended (the zygote said so), else None."""
        if self.returncode is None and select.select([self._conn], [], [], 0)[0]:
            self._read_status()
        return self.returncode

    def kill(self) -> None:
        """SIGKILL the child (it is ours to kill: the zygote only reaps it)."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    def _read_status(self) -> None:
        line = self._replies.readline()
        self.returncode = json.loads(line)["status"] if line else -signal.SIGKILL

    def wait(self, timeout: float) -> subprocess.CompletedProcess[str]:
        """Wait for the child; its exit status, stdout and stderr."""
        if self.returncode is None:
            self._conn.settimeout(timeout)
            try:
                self._read_status()
            except TimeoutError:
                self.kill()
                raise subprocess.TimeoutExpired(["gtog", *self.args], timeout) from None
        self._conn.close()
        stdout = Path(self._paths["stdout"]).read_text(errors="replace")
        stderr = Path(self._paths["stderr"]).read_text(errors="replace")
        for p in self._paths.values():
            Path(p).unlink(missing_ok=True)
        return subprocess.CompletedProcess(
            [sys.executable, "-m", "gtog", *self.args], self.returncode, stdout, stderr
        )


def _base_env() -> dict[str, str]:
    from tests.support.projects import subprocess_env

    return subprocess_env()


_zygote: _Zygote | None = None
_lock = threading.Lock()


def _the_zygote(env: dict[str, str]) -> _Zygote | None:
    global _zygote
    if os.environ.get("GTOG_TEST_NO_ZYGOTE") == "1" or sys.platform != "linux":
        return None
    with _lock:
        if _zygote is None:
            _zygote = _Zygote()
    return _zygote if _zygote.suits(env) else None


def run_gtog(
    args: list[str], env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str] | None:
    """Run `gtog args` as a forked child of the zygote; None when it cannot (run it apart)."""
    zygote = _the_zygote(env)
    return None if zygote is None else zygote.run(args, env, timeout)


def start_gtog(args: list[str], env: dict[str, str]) -> Forked | None:
    """Start `gtog args` as a forked child of the zygote (to poll or kill); None when it
    cannot (start it apart)."""
    zygote = _the_zygote(env)
    return None if zygote is None else zygote.start(args, env)
