"""What a run prints when every call is refused with a 401 that echoes the key.

Starts the scripted server (tests/support) with one rule: every chat request gets a 401
whose message quotes the request's key, as providers do. Runs `gtog eval` through the CLI
on copies of the bundled example indexes pointed at it, and prints: the exit code, the
lines printed, the requests the server saw before the run stopped, and whether the key
appears in the terminal output, `eval.log`, the checkpoint or the results.

    python benchmarks/failsafe_401.py
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.projects import retarget  # noqa: E402
from tests.support.scripted_server import Fail, Rule, ScriptedServer  # noqa: E402

KEY = "sk-bench-SECRET-0123456789abcdefXYZ"


def main() -> None:
    refuse = Rule(
        "401", lambda r: True, lambda r: Fail(401, "Incorrect API key provided: {api_key}.")
    )
    with (
        ScriptedServer([refuse], embedding_dims=384) as server,
        tempfile.TemporaryDirectory() as tmp,
    ):
        root = Path(tmp)
        for key in ("lighthouse", "orchard"):
            dst = root / key
            shutil.copytree(REPO / "eval" / "indexes" / key, dst)
            retarget(dst, server.base_url)
            text = (dst / "settings.yaml").read_text().replace("gtog-local-no-key", "${BENCH_KEY}")
            (dst / "settings.yaml").write_text(text)
        shutil.copy(REPO / "eval" / "qa_eval.json", root / "qa.json")
        (root / "eval_config.yaml").write_text(
            "dataset: {path: qa.json}\nindexes: {lighthouse: lighthouse, orchard: orchard}\n"
            "methods: [tog, local, basic]\nmetrics: [correctness]\nconcurrency: 4\n"
        )
        env = {**os.environ, "BENCH_KEY": KEY, "NO_PROXY": "127.0.0.1,localhost"}
        result = subprocess.run(
            [sys.executable, "-m", "gtog", "eval", "--root", str(root)],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        output = result.stdout + result.stderr
        out = root / "eval" / "results"
        written = [p for p in out.rglob("*") if p.is_file()]
        leaked = [str(p.relative_to(root)) for p in written if KEY in p.read_text(errors="replace")]
        report = {
            "exit_code": result.returncode,
            "lines_printed": len(output.strip().splitlines()),
            "requests_seen": len(server.log),
            "key_in_terminal": KEY in output or KEY[:12] in output,
            "files_with_key": leaked,
            "files_written": sorted(str(p.relative_to(out)) for p in written),
        }
        print(output)
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
