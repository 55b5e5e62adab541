"""Indexes kept in Azure storage: Blob Storage (Azurite, the real Blob service emulator)
and Cosmos DB (@vercel/cosmosdb-server: what it lets us test).

The example index's tables and stats.json are uploaded to a container; the project's
settings say `output_storage: {type: blob, connection_string, container_name, base_dir}`
(its vectors stay in a LanceDB folder on disk, as such projects have them). gtog reads the
tables like a folder, in memory: `eval --estimate`, `eval`, `eval prepare`'s plan and
`query` work, and the storage is byte for byte what it was (nothing written, no container
made for a wrong name).
"""

from __future__ import annotations

import json
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.integration.eval.helpers import load_results, make_eval_root
from tests.support.azurite import (
    COSMOS_KEY,
    Azurite,
    CosmosServer,
    blob_listing,
    start_azurite,
    start_cosmosdb,
    upload_folder,
)
from tests.support.projects import gtog
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.integration

CONTAINER, BASE_DIR = "graphrag", "movies/lighthouse/output"
QUESTION = "Who keeps the lighthouse on Varn Island?"


@pytest.fixture(scope="module")
def azurite() -> Iterator[Azurite]:
    with start_azurite() as blob:
        yield blob


def _blob_project(source: Path, dest: Path, blob: Azurite, container: str = CONTAINER) -> Path:
    """A copy of `source` whose tables are only in the blob container (vectors on disk)."""
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("logs", "cache"))
    output = dest / "output"
    for table in [*output.glob("*.parquet"), *output.glob("*.json")]:
        table.unlink()
    data = yaml.safe_load((dest / "settings.yaml").read_text())
    data["output_storage"] = {
        "type": "blob",
        "connection_string": blob.connection_string,
        "container_name": container,
        "base_dir": BASE_DIR,
    }
    data["vector_store"]["db_uri"] = str(output / "lancedb")
    (dest / "settings.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return dest


def test_a_blob_stored_index_is_read_in_place_for_estimate_eval_prepare_and_query(
    azurite: Azurite,
    llm_server: ScriptedServer,
    example_indexes: dict[str, Path],
    tmp_path: Path,
) -> None:
    source = example_indexes["lighthouse"]
    uploaded = upload_folder(azurite.connection_string, CONTAINER, source / "output", BASE_DIR)
    assert uploaded >= 6  # the five final tables, documents, stats.json, ...
    project = _blob_project(source, tmp_path / "lighthouse", azurite)
    assert not list((project / "output").glob("*.parquet"))
    stored = blob_listing(azurite.connection_string)
    root = make_eval_root(
        tmp_path,
        {"lighthouse": project},
        methods=("local", "basic", "global"),
        extra="metrics: [correctness]\n",
    )
    flags = ("--root", str(root), "-k", "lighthouse", "--limit", "1", "-q")

    estimate = gtog("eval", *flags, "--estimate")
    assert estimate.returncode == 0, estimate.stderr
    bounds = json.loads((root / "results" / "estimate.json").read_text())
    assert bounds["total"]["usd"] > 0 and llm_server.log == []

    run = gtog("eval", *flags, "--force")
    assert run.returncode == 0, run.stderr
    detailed, _ = load_results(root)
    for method in ("local", "basic", "global"):
        record = detailed["results"][0]["methods"][method]
        assert record.get("error") is None, (method, record.get("error"))
        assert record["scores"]["correctness"] == 1, (method, record["response"])

    plan = gtog("eval", "prepare", "--root", str(root), "-k", "lighthouse")
    assert plan.returncode == 0, plan.stderr
    assert "nothing to build: all 1 indexes are complete" in plan.stdout + plan.stderr

    query = gtog("query", "--root", str(project), "--method", "local", QUESTION)
    assert query.returncode == 0 and "Maren Holt" in query.stdout, query.stderr

    assert blob_listing(azurite.connection_string) == stored  # nothing written there


def test_a_missing_container_is_one_line_and_is_not_created(
    azurite: Azurite,
    llm_server: ScriptedServer,
    example_indexes: dict[str, Path],
    tmp_path: Path,
) -> None:
    project = _blob_project(
        example_indexes["lighthouse"], tmp_path / "lighthouse", azurite, container="nothere"
    )
    before = blob_listing(azurite.connection_string)
    result = gtog("query", "--root", str(project), "--method", "local", "Who?")
    assert result.returncode == 2, result.stderr
    [line] = (result.stdout + result.stderr).strip().splitlines()
    assert "output_storage: blob container nothere/movies/lighthouse/output not found" in line
    assert "AccountKey" not in line
    root = make_eval_root(tmp_path, {"lighthouse": project})
    plan = gtog("eval", "prepare", "--root", str(root), "-k", "lighthouse")
    assert plan.returncode == 2 and "nothere" in plan.stderr, plan.stdout + plan.stderr
    assert "nothere" not in blob_listing(azurite.connection_string)
    assert blob_listing(azurite.connection_string) == before
    assert llm_server.log == []


def _databases(server: CosmosServer) -> list[str]:
    from azure.cosmos import CosmosClient

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (urllib3 on the emulator's own certificate)
        client = CosmosClient.from_connection_string(server.connection_string)
        return sorted(d["id"] for d in client.list_databases())


def test_a_cosmos_db_output_is_looked_at_without_creating_anything(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    """What @vercel/cosmosdb-server lets us test: a missing database or container is one
    line and is not created; an index there that cannot be listed is one line too (this
    server refuses graphrag 3.3's partition-key queries, so reading tables from Cosmos DB
    is not tested here: see docs/providers.md)."""
    with start_cosmosdb() as server:
        project = _cosmos_project(example_indexes["lighthouse"], tmp_path / "c", server)
        missing = gtog("query", "--root", str(project), "--method", "local", QUESTION)
        assert missing.returncode == 2, missing.stderr
        [line] = (missing.stdout + missing.stderr).strip().splitlines()
        assert "output_storage: Cosmos DB graphrag/lighthouse not found" in line, line
        assert COSMOS_KEY not in line
        assert _databases(server) == []  # nothing created

        from azure.cosmos import CosmosClient, PartitionKey

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            client = CosmosClient.from_connection_string(server.connection_string)
            database = client.create_database("graphrag")
            database.create_container("lighthouse", PartitionKey(path="/namespace"))
        unread = gtog("query", "--root", str(project), "--method", "local", QUESTION)
        text = (unread.stdout + unread.stderr).strip()
        if unread.returncode == 0:  # a server that answers graphrag's queries: an answer
            assert text, unread.stderr
        else:
            assert len(text.splitlines()) == 1 and "Cosmos DB graphrag/lighthouse" in text, text
            assert "Traceback" not in text
    assert llm_server.log == []


def _cosmos_project(source: Path, dest: Path, server: CosmosServer) -> Path:
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("logs", "cache"))
    data = yaml.safe_load((dest / "settings.yaml").read_text())
    data["output_storage"] = {
        "type": "cosmosdb",
        "connection_string": server.connection_string,
        "database_name": "graphrag",
        "container_name": "lighthouse",
    }
    data["table_provider"] = {"type": "cosmosdb", "container_name": "lighthouse"}
    data["vector_store"]["db_uri"] = str(dest / "output" / "lancedb")
    (dest / "settings.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return dest
