"""The report's templates are compiled once per user, not in every process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.projects import subprocess_env

LOAD_ALL = (
    "from gtog.eval.report._html import ENVIRONMENT as E\n"
    "names = E.list_templates(extensions=['html'])\n"
    "if {forbid}:\n"
    "    def refuse(*a, **k):\n"
    "        raise SystemExit('compiled again')\n"
    "    E.compile = refuse\n"
    "for n in names:\n"
    "    E.get_template(n)\n"
    "print(len(names), E.bytecode_cache is not None)\n"
)


def _load_all(cache_dir: Path, *, forbid_compiling: bool) -> str:
    env = {**subprocess_env(), "GTOG_CACHE_DIR": str(cache_dir)}
    done = subprocess.run(
        [sys.executable, "-c", LOAD_ALL.format(forbid=forbid_compiling)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_a_second_process_loads_the_templates_without_compiling(tmp_path: Path) -> None:
    first = _load_all(tmp_path, forbid_compiling=False)
    count = int(first.split()[0])
    assert count > 10 and first.endswith("True")
    (folder,) = (tmp_path / "templates").iterdir()  # (named by Jinja2 and the compiler)
    assert len(list(folder.glob("*.cache"))) == count
    assert _load_all(tmp_path, forbid_compiling=True) == first


def test_without_a_cache_folder_the_templates_are_compiled(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")  # (GTOG_CACHE_DIR a file: no folder can be made in it)
    assert _load_all(blocked, forbid_compiling=False).endswith("False")
