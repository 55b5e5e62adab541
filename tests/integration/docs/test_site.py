"""The documentation site builds with `mkdocs build --strict`, offline, and holds what it
promises: every command's help, every public name, and the README's links and commands.

`--strict` fails the build on a broken link or anchor, a page missing from the nav, or a
docstring mkdocstrings cannot read. The build runs with proxies that refuse every
connection, so a plugin that fetched anything would fail it.
"""

from __future__ import annotations

import html
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.projects import subprocess_env

REPO = Path(__file__).resolve().parents[3]
README = REPO / "README.md"
API_PACKAGES = (
    "gtog",
    "gtog.api",
    "gtog.eval",
    "gtog.eval.scoring",
    "gtog.search",
    "gtog.tog",
    "gtog.qa",
    "gtog.qa.aio",
)
"""The packages docs/reference/api/ documents (mkdocstrings reads their `__all__`)."""
NO_NETWORK = "http://127.0.0.1:9"
"""A proxy no connection gets through."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = subprocess_env()
    env.update(
        NO_MKDOCS_2_WARNING="1",
        HTTP_PROXY=NO_NETWORK,
        HTTPS_PROXY=NO_NETWORK,
        http_proxy=NO_NETWORK,
        https_proxy=NO_NETWORK,
        NO_PROXY="",
        no_proxy="",
    )
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    warnings = [line for line in built.stderr.splitlines() if "WARNING" in line]
    assert built.returncode == 0, "\n".join(warnings) or built.stderr[-3000:]
    assert not warnings
    return out


def _text(page: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))


def test_the_cli_reference_has_every_command_with_its_options(site: Path) -> None:
    from gtog.cli import cli

    page = _text(site / "reference" / "cli" / "index.html")
    for name in cli.list_commands(None):  # type: ignore[arg-type]
        assert f"gtog {name}" in page, name
    for sub in ("eval diff", "eval merge", "eval report", "local-model serve"):
        assert f"gtog {sub}" in page, sub
    for option in ("--root", "--shard", "--fail-under", "--rescore", "--fail-on-regression"):
        assert option in page, option  # options too, not only the commands' names


def test_the_api_reference_has_every_public_name(site: Path) -> None:
    pages = (site / "reference" / "api").rglob("*.html")
    anchors = {a for p in pages for a in re.findall(r'id="(gtog[\w.]*)"', p.read_text("utf-8"))}
    for package in API_PACKAGES:
        names = importlib.import_module(package).__all__
        missing = [n for n in names if f"{package}.{n}" not in anchors]
        assert not missing, f"{package}: {missing} not documented (a docstring?)"


def test_the_site_loads_nothing_from_the_internet(site: Path) -> None:
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "fonts.googleapis.com" not in text, page
        assert not re.search(r'<(script|link)[^>]+(src|href)="https?://', text), page


def _first_bash_block(page: Path) -> str:
    found = re.search(r"```bash\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
    assert found is not None, page
    return found.group(1)


def test_the_readme_is_one_screen_with_the_two_commands_and_working_links() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 200
    two = _first_bash_block(README)
    assert two.startswith("# 1. install") and "# 2. run the tests" in two
    assert "gtog eval --root . --local --limit 3\n" in two and two.rstrip().endswith("pytest -q")
    for page in ("index.md", "getting-started.md"):  # the site shows the same two commands
        assert _first_bash_block(REPO / "docs" / page) == two, page
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if not re.match(r"https?://", link)]
    assert len(local) >= 15
    for link in local:
        assert (REPO / link).exists(), f"README.md links to {link}, which is not there"
