"""`gtog eval view` as a user starts it, and a real Chromium page driven by Playwright.

`serve_view(*folders)` starts the CLI (forked from the tests' zygote, as every gtog command
of the tests) on a free port and waits until it answers; `chromium_page()` opens Debian's
chromium (/usr/bin/chromium, found by tests/support/browser.py) through Playwright with the
flags this closed network needs, and collects what the page logs to its console.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from tests.support.browser import FLAGS, find_chromium
from tests.support.projects import start_gtog

__all__ = ["chromium_page", "free_port", "serve_view"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve_view(*folders: Path, timeout: float = 60) -> Iterator[str]:
    """The base URL of `gtog eval view FOLDERS` (stopped when the block ends)."""
    port = free_port()
    proc = start_gtog("eval", "view", *map(str, folders), "--port", str(port))
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(base + "/", timeout=5).status_code == 200:
                    break
            if proc.poll() is not None:
                raise RuntimeError(f"gtog eval view ended with {proc.returncode}")
            if time.monotonic() > deadline:
                raise TimeoutError("gtog eval view did not answer")
            time.sleep(0.1)
        yield base
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


@contextlib.contextmanager
def chromium_page(width: int = 1280, height: int = 900) -> Iterator[tuple[Any, list[str]]]:
    """A Playwright page in headless Chromium, and the list its console messages go to."""
    from playwright.sync_api import sync_playwright

    executable = find_chromium()
    assert executable is not None, "chromium is not installed (apt-get install chromium)"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=list(FLAGS))
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            console: list[str] = []
            page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
            page.on("pageerror", lambda e: console.append(f"error: {e}"))
            yield page, console
        finally:
            browser.close()
