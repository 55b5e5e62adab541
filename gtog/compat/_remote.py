"""Index outputs outside the file system (Azure Blob Storage, Cosmos DB), looked at in place.

graphrag's own storage classes read them (`output_storage: {type: blob, connection_string,
container_name, base_dir}`; graphrag 2.x's `output:` is translated to that in memory), and
gtog reads their tables and `stats.json` into memory. Those classes create a missing blob
container (or Cosmos database and container) when they connect; `check_remote_output` looks
first, with the Azure SDK, so that a wrong name is one line naming it and nothing is ever
created or written in the user's storage.
"""

from __future__ import annotations

import asyncio
import json
import re
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gtog._errors import InputError, describe_exception

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig

__all__ = [
    "REMOTE_TYPES",
    "check_remote_index",
    "check_remote_output",
    "remote_label",
    "remote_stats",
    "remote_tables",
]

REMOTE_TYPES = ("blob", "cosmosdb")
"""graphrag's output storage types that are not folders (graphrag_storage's StorageType)."""


def _kind(storage: Any) -> str:
    return str(getattr(getattr(storage, "type", "file"), "value", getattr(storage, "type", "")))


def remote_label(storage: Any) -> str:
    """Where a remote output is, safe to print (never the connection string or its key)."""
    kind = _kind(storage)
    if kind == "blob":
        base = f"/{storage.base_dir}" if storage.base_dir else ""
        return f"blob container {storage.container_name}{base}"
    if kind == "cosmosdb":
        return f"Cosmos DB {storage.database_name}/{storage.container_name}"
    return kind


def _blob_service(storage: Any) -> Any:
    from azure.storage.blob import BlobServiceClient

    if storage.connection_string:
        return BlobServiceClient.from_connection_string(
            storage.connection_string, retry_total=1, connection_timeout=5
        )
    if not storage.account_url:
        raise InputError("output_storage: a blob output needs connection_string or account_url")
    from azure.identity import DefaultAzureCredential

    return BlobServiceClient(
        account_url=storage.account_url,
        credential=DefaultAzureCredential(),
        retry_total=1,
        connection_timeout=5,
    )


def _cosmos_client(storage: Any) -> Any:
    from azure.cosmos import CosmosClient

    if storage.connection_string:
        return CosmosClient.from_connection_string(storage.connection_string)
    from azure.identity import DefaultAzureCredential

    return CosmosClient(url=storage.account_url, credential=DefaultAzureCredential())


def _quiet_emulator(where: str) -> None:
    """The azure-cosmos SDK does not verify a local emulator's certificate (its own rule,
    for localhost): urllib3's warning on each such request, some made by the SDK's own
    endpoint-refresh thread at any time, is then noise on the terminal. Other hosts keep it."""
    from urllib.parse import urlsplit

    match = re.search(r"AccountEndpoint=([^;]+)", where, flags=re.IGNORECASE)
    host = urlsplit(match.group(1) if match else where).hostname or ""
    if host in ("localhost", "127.0.0.1", "::1"):
        from urllib3.exceptions import InsecureRequestWarning

        warnings.filterwarnings("ignore", category=InsecureRequestWarning)


def check_remote_output(config: GraphRagConfig, root: Path) -> None:
    """InputError (one line naming the settings key and the place) when the project's
    remote output is not there or cannot be reached; nothing is created or written."""
    storage = config.output_storage
    kind = _kind(storage)
    if kind not in REMOTE_TYPES:
        return
    where = remote_label(storage)
    if kind != "blob":  # (outside the block below, which would undo it on leaving)
        _quiet_emulator(storage.connection_string or storage.account_url or "")
    try:
        with warnings.catch_warnings():  # (urllib3's on a local emulator's TLS: not ours)
            warnings.simplefilter("ignore")
            _check(storage, kind, where, root)
    except InputError:
        raise
    except Exception as exc:  # the SDKs raise many types: all mean "cannot look there"
        raise InputError(
            f"{root}: output_storage: cannot read {where} ({describe_exception(exc)})"
        ) from None


def _check(storage: Any, kind: str, where: str, root: Path) -> None:
    if kind == "blob":
        if not storage.container_name:
            raise InputError(f"{root}: output_storage: a blob output needs container_name")
        service = _blob_service(storage)
        if not service.get_container_client(storage.container_name).exists():
            raise InputError(
                f"{root}: output_storage: {where} not found at {service.url} (gtog reads "
                "indexes where they are and creates nothing; check container_name and "
                "the account)"
            )
    else:
        from azure.cosmos.exceptions import CosmosResourceNotFoundError

        # closed here, inside the caller's warnings block: its endpoint-refresh thread's
        # requests otherwise go on after it (urllib3's warning on an emulator's TLS, at times)
        with _cosmos_client(storage) as client:
            database = client.get_database_client(storage.database_name)
            try:
                database.get_container_client(storage.container_name).read()
            except CosmosResourceNotFoundError:
                raise InputError(
                    f"{root}: output_storage: {where} not found (gtog reads indexes where "
                    "they are and creates nothing; check database_name and container_name)"
                ) from None


def check_remote_index(config: GraphRagConfig, root: Path) -> None:
    """`check_remote_output`, then InputError when the output holds no entities table
    (graphrag 1.x's name too) or its tables cannot be listed."""
    from gtog.compat._tables import V1_PREFIX

    check_remote_output(config, root)
    if not {"entities", f"{V1_PREFIX}entities"} & set(remote_tables(config, root)):
        raise InputError(
            f"{root}: no index found (no entities table in "
            f"{remote_label(config.output_storage)}; check base_dir)"
        )


def _run(coro: Any) -> Any:
    """Run `coro` to its end, with or without a running event loop in this thread."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def remote_tables(config: GraphRagConfig, root: Path) -> list[str]:
    """The table names stored in the project's remote output (read with graphrag's own
    table provider; the output was checked with `check_remote_output`); InputError when
    they cannot be listed."""
    from gtog.compat._index import table_provider

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return sorted(table_provider(config).list())
    except Exception as exc:  # graphrag's providers raise the SDKs' many types
        where = remote_label(config.output_storage)
        raise InputError(
            f"{root}: output_storage: cannot list the tables in {where} ({describe_exception(exc)})"
        ) from None


def remote_stats(config: GraphRagConfig) -> dict[str, Any] | None:
    """graphrag's `stats.json` in the project's remote output, None when it has none."""
    from graphrag_storage import create_storage

    storage = create_storage(config.output_storage)
    text = _run(storage.get("stats.json"))
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
