"""Open a page in headless Chromium: the DOM after its scripts ran, its console, a screenshot.

Chromium (Debian's `chromium` package) runs offline with a fresh profile; with
`--enable-logging=stderr` every console message of the page (uncaught errors and
Content-Security-Policy violations included) is a `CONSOLE` line on stderr.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["FLAGS", "Layout", "PageLoad", "find_chromium", "layout_at", "load_page", "screenshot"]

_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
)
FLAGS = _FLAGS
"""Chromium's flags for this closed network (also what Playwright launches it with)."""
_CONSOLE = re.compile(r':CONSOLE(?:\(\d+\))?:?\d*\] "(.*)", source: (\S*)')


def find_chromium() -> str | None:
    """The Chromium executable, or None when it is not installed."""
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class PageLoad:
    """What Chromium saw: the serialized DOM and the page's console messages."""

    dom: str
    console: list[tuple[str, str]]
    """(message, source) for every console line."""


def _run(chromium: str, args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory(prefix="gtog-chromium-") as profile:
        return subprocess.run(
            [chromium, *_FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )


def load_page(chromium: str, url: str, timeout: float = 120) -> PageLoad:
    """Load `url`, let its scripts run, and return the DOM and console messages."""
    proc = _run(
        chromium,
        ["--enable-logging=stderr", "--v=0", "--virtual-time-budget=3000", "--dump-dom", url],
        timeout,
    )
    if proc.returncode != 0 or "<html" not in proc.stdout:
        raise RuntimeError(f"chromium failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    console = [(m.group(1), m.group(2)) for m in _CONSOLE.finditer(proc.stderr)]
    return PageLoad(proc.stdout, console)


def screenshot(
    chromium: str,
    page: Path,
    png: Path,
    size: tuple[int, int] = (1280, 2000),
    timeout: float = 120,
) -> Path:
    """A PNG of the top `size` of a local page."""
    png.parent.mkdir(parents=True, exist_ok=True)
    proc = _run(
        chromium,
        [
            f"--window-size={size[0]},{size[1]}",
            "--hide-scrollbars",
            f"--screenshot={png}",
            page.resolve().as_uri(),
        ],
        timeout,
    )
    if proc.returncode != 0 or not png.is_file():
        raise RuntimeError(
            f"chromium screenshot failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
        )
    return png


@dataclass
class Layout:
    """How a page lays out in a window `width` px wide, every `<details>` opened."""

    scroll_width: int
    """The page's full width (`documentElement.scrollWidth`): > `client_width` when the page
    scrolls sideways."""
    client_width: int
    """The window's width less its vertical scroll bar."""
    chart_scales: dict[str, float]
    """Per `<svg class="chart">` (by its label): drawn width / its own width (1 = full size;
    0.5 = its 12 px text drawn at 6 px)."""
    scrolling: dict[str, bool] = field(default_factory=dict)
    """Each box that scrolls sideways (a table by its first header, a chart by its label):
    whether the page marks it as one (its `scrolls` class: a line and a shadow say so)."""


_PROBE = """<!DOCTYPE html><html><body style="margin:0">
<iframe id="f" src="{src}" style="width:{width}px;height:900px;border:0"></iframe>
<pre id="layout">pending</pre>
<script>
document.getElementById("f").addEventListener("load", () => {{
  const d = document.getElementById("f").contentDocument;
  d.querySelectorAll("details").forEach((x) => {{ x.open = true; }});
  document.getElementById("f").contentWindow.dispatchEvent(new Event("resize"));
  const root = d.documentElement;
  const charts = {{}};
  d.querySelectorAll("svg.chart").forEach((s) => {{
    charts[s.getAttribute("aria-label")] =
      s.getBoundingClientRect().width / s.viewBox.baseVal.width;
  }});
  const scrolling = {{}};
  d.querySelectorAll("table, .chart-box, .scroll").forEach((b, i) => {{
    if (b.scrollWidth <= b.clientWidth + 1) {{ return; }}
    const named = b.querySelector("svg.chart");
    const head = b.querySelector("th");
    const name = named ? named.getAttribute("aria-label")
      : (head ? head.textContent.trim() : b.tagName.toLowerCase()) + " #" + i;
    scrolling[name] = b.classList.contains("scrolls");
  }});
  document.getElementById("layout").textContent = JSON.stringify(
    {{scroll: root.scrollWidth, client: root.clientWidth, charts: charts,
      scrolling: scrolling}});
}});
</script></body></html>
"""


def layout_at(chromium: str, page: Path, width: int, timeout: float = 120) -> Layout:
    """Lay `page` out in a `width` px window (an iframe of a probe page, which measures it)."""
    with tempfile.TemporaryDirectory(prefix="gtog-probe-") as folder:
        probe = Path(folder) / "probe.html"
        probe.write_text(_PROBE.format(src=page.resolve().as_uri(), width=width))
        proc = _run(
            chromium,
            [
                "--allow-file-access-from-files",
                "--virtual-time-budget=3000",
                "--dump-dom",
                probe.as_uri(),
            ],
            timeout,
        )
    found = re.search(r'<pre id="layout">(\{.*?\})</pre>', proc.stdout)
    if found is None:
        raise RuntimeError(f"the probe did not measure {page}:\n{proc.stderr[-3000:]}")
    data = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    return Layout(data["scroll"], data["client"], data["charts"], data["scrolling"])
