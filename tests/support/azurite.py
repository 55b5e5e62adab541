"""Azurite (npm `azurite`, the Azure Blob Storage emulator) and @vercel/cosmosdb-server (a
Cosmos DB server) for the tests of indexes kept in Azure storage.

`.ci/run` installs it into `.ci-npm/` (ignored by git); `start_azurite()` installs it there
when it is missing and npm is present, starts `azurite-blob` on a free port with its data in
memory, and waits (a few seconds at most) until it answers. A test that needs it and cannot
start it fails in CI (`CI=true`); elsewhere it is skipped only when npm itself is absent.

    with start_azurite() as blob:
        blob.connection_string  # for azure-storage-blob and graphrag's `type: blob`
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NPM_PREFIX = REPO / ".ci-npm"
"""Where `.ci/run` (and the tests, when it is missing) install the npm packages."""
PACKAGES = ("azurite@3", "@vercel/cosmosdb-server@0")

ACCOUNT = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
"""Azurite's well-known development account and key (public, in Microsoft's docs)."""


@dataclass(frozen=True)
class Azurite:
    """A running Azurite blob service."""

    port: int

    @property
    def connection_string(self) -> str:
        """A connection string for it (azure-storage-blob, graphrag's `type: blob`)."""
        return (
            f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};"
            f"BlobEndpoint=http://127.0.0.1:{self.port}/{ACCOUNT};"
        )


def _unavailable(why: str) -> None:
    """Fail in CI; elsewhere skip (only when npm is absent) or fail."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes") or shutil.which("npm"):
        pytest.fail(f"Azurite is needed and cannot start: {why}")
    pytest.skip(f"Azurite cannot start ({why}) and npm is absent to install it")


def npm_bin(name: str) -> Path | None:
    """The installed npm command `name` (installing the packages when npm is present)."""
    found = NPM_PREFIX / "node_modules" / ".bin" / name
    if found.exists():
        return found
    npm = shutil.which("npm")
    if npm is None:
        return None
    subprocess.run(
        [npm, "install", "--prefix", str(NPM_PREFIX), "--no-audit", "--no-fund", *PACKAGES],
        capture_output=True,
        timeout=300,
        check=False,
    )
    return found if found.exists() else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


@contextmanager
def _serving(name: str, args: list[str], timeout: float) -> Iterator[int]:
    """Start the npm command `name` with `args` (`{port}` filled with a free port), wait
    until that port answers, yield the port; the process group is stopped after the block."""
    command = npm_bin(name)
    if command is None or shutil.which("node") is None:
        _unavailable(f"{name} is not installed")
    assert command is not None
    port = _free_port()
    process = subprocess.Popen(
        [str(command), *(a.format(port=port) for a in args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + timeout
        while not _answers(port):
            if process.poll() is not None or time.monotonic() > deadline:
                err = process.stderr.read().decode(errors="replace") if process.stderr else ""
                _unavailable(f"{name} did not answer on port {port} ({err.strip()[:200]})")
            time.sleep(0.05)
        yield port
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@contextmanager
def start_azurite(timeout: float = 20.0) -> Iterator[Azurite]:
    """Start `azurite-blob` on a free port (data in memory); stopped after the block."""
    args = ["--blobHost", "127.0.0.1", "--blobPort", "{port}", "--inMemoryPersistence",
            "--silent", "--skipApiVersionCheck", "--loose"]  # fmt: skip
    with _serving("azurite-blob", args, timeout) as port:
        yield Azurite(port)


def upload_folder(connection_string: str, container: str, folder: Path, base_dir: str) -> int:
    """Upload every file of `folder` (not its subfolders) to `container/base_dir/` (the
    container made if needed): the number of blobs written."""
    from azure.storage.blob import BlobServiceClient

    service = BlobServiceClient.from_connection_string(connection_string)
    client = service.get_container_client(container)
    if not client.exists():
        client.create_container()
    count = 0
    for path in sorted(folder.iterdir()):
        if path.is_file():
            client.upload_blob(f"{base_dir}/{path.name}", path.read_bytes(), overwrite=True)
            count += 1
    return count


def blob_listing(connection_string: str) -> dict[str, list[tuple[str, int, str]]]:
    """Every container's blobs as (name, size, etag): what a test compares before/after."""
    from azure.storage.blob import BlobServiceClient

    service = BlobServiceClient.from_connection_string(connection_string)
    return {
        c.name: sorted(
            (b.name, b.size, b.etag) for b in service.get_container_client(c.name).list_blobs()
        )
        for c in service.list_containers()
    }


COSMOS_KEY = (
    "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
)
"""The Cosmos DB emulator's well-known key (public); @vercel/cosmosdb-server takes any."""


@dataclass(frozen=True)
class CosmosServer:
    """A running @vercel/cosmosdb-server (HTTPS with its own certificate, on localhost:
    the azure-cosmos SDK does not verify a localhost emulator's certificate)."""

    port: int

    @property
    def connection_string(self) -> str:
        """A connection string for azure-cosmos and graphrag's `type: cosmosdb`."""
        return f"AccountEndpoint=https://localhost:{self.port}/;AccountKey={COSMOS_KEY};"


@contextmanager
def start_cosmosdb(timeout: float = 20.0) -> Iterator[CosmosServer]:
    """Start `cosmosdb-server` on a free port (empty, in memory); stopped after the block."""
    with _serving("cosmosdb-server", ["-p", "{port}"], timeout) as port:
        yield CosmosServer(port)
