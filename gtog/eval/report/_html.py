"""The report page: one self-contained HTML file from `PageData`, rendered by Jinja2.

The templates (gtog/eval/report/templates/, package data) are rendered with autoescaping on,
so every string from the data (questions, answers, reasons, contexts, entity names) is
escaped text, and with `StrictUndefined`, so a field missing from the page data fails the
render instead of leaving a blank. Charts are server-side SVG built in Python
(gtog.eval.report._bars, gtog.eval.report._scatter; their text escaped by markupsafe) and
passed in as Markup; the win-rate matrices are HTML tables coloured by class; a few lines
of inline JavaScript only filter the question list. A
Content-Security-Policy allows nothing but this page's own style and script (by hash): no
request leaves the page, and markup inside an answer could not run even if it were not
escaped, which it is.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path

import jinja2
from jinja2 import Environment, FileSystemBytecodeCache, PackageLoader, StrictUndefined
from jinja2.ext import Extension
from jinja2.lexer import (
    TOKEN_BLOCK_BEGIN,
    TOKEN_DATA,
    TOKEN_VARIABLE_END,
    Token,
    TokenStream,
)
from markupsafe import Markup

from gtog._files import user_cache_dir
from gtog.eval.report._bars import error_bars, heat_map, score_bars, stage_bars
from gtog.eval.report._groups import NONE
from gtog.eval.report._models import SIGNIFICANCE, CostPoint
from gtog.eval.report._pagedata import PageData
from gtog.eval.report._pairs import SHADES
from gtog.eval.report._scatter import cost_scatter, spread_chart
from gtog.eval.report._svg import method_colors

__all__ = ["ENVIRONMENT", "render_page"]


def _asset(name: str) -> str:
    return (resources.files("gtog.eval.report") / "assets" / name).read_text(encoding="utf-8")


_CSS = _asset("report.css")
_JS = _asset("report.js")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def _csp() -> str:
    return (
        f"default-src 'none'; style-src '{_sha256(_CSS)}'; script-src '{_sha256(_JS)}'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )


class _Compact(Extension):
    """Drop the templates' layout whitespace so the page is as small as hand-joined markup.

    In the templates' own text (never in values: answers and contexts keep every space), a
    line break and the indentation after it vanish next to a tag (after `>`, before `<`),
    after a `{% %}` block and before one; anywhere else (text wrapped across lines, next to
    a `{{ }}`) they become one space. Works on the token stream, so template errors keep
    their line numbers.
    """

    _AT_TAG = re.compile(r"(?<=>)\n\s*|\n\s*(?=<)")
    _LEADING = re.compile(r"^\n\s*")
    _TRAILING = re.compile(r"\n\s*$")
    _WRAPPED = re.compile(r"\n\s*")

    def filter_stream(self, stream: TokenStream) -> Iterator[Token]:
        tokens = list(stream)
        for i, token in enumerate(tokens):
            if token.type == TOKEN_DATA:
                text = self._AT_TAG.sub("", token.value)
                if i == 0 or tokens[i - 1].type != TOKEN_VARIABLE_END:
                    text = self._LEADING.sub("", text)
                if i + 1 == len(tokens) or tokens[i + 1].type == TOKEN_BLOCK_BEGIN:
                    text = self._TRAILING.sub("", text)
                token = Token(token.lineno, token.type, self._WRAPPED.sub(" ", text))
            yield token


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _compiled_templates() -> FileSystemBytecodeCache | None:
    """Where the templates' compiled code is kept for the next process (compiling them all
    takes about 0.25 s of CPU, loading them 5 ms): a folder of the user's cache named by
    what compiles them, Jinja2's version and this module's source (the environment's
    settings, `_Compact`), so that a change to either compiles afresh. Jinja2 checks each
    template's source and Python's version itself, and writes by renaming a whole file into
    place. None (compile in every process) when the folder cannot be made or no home folder
    can be found (this runs when the module is imported: it must not fail it)."""
    try:
        compiler = jinja2.__version__.encode() + Path(__file__).read_bytes()
        folder = user_cache_dir() / "templates" / hashlib.sha256(compiler).hexdigest()[:16]
        folder.mkdir(parents=True, exist_ok=True)
    except (OSError, RuntimeError):  # (RuntimeError: `Path.home()` without a home)
        return None
    return FileSystemBytecodeCache(str(folder))


ENVIRONMENT = Environment(
    loader=PackageLoader("gtog.eval.report", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    extensions=[_Compact],
    bytecode_cache=_compiled_templates(),
)
"""The templates' environment: autoescaping on, `StrictUndefined`, layout whitespace dropped,
compiled code kept between processes."""
ENVIRONMENT.filters["num"] = _num
ENVIRONMENT.filters["score"] = lambda value: (
    f"{value:g}" if float(value).is_integer() else f"{value:.2f}"
)
"""A score as the tables show it: 0 or 1 for a judge's verdict, two decimals for a fraction."""
ENVIRONMENT.filters["thousands"] = lambda value: f"{value:,}"
ENVIRONMENT.globals["SIGNIFICANCE"] = f"{SIGNIFICANCE:g}"
ENVIRONMENT.globals["SHADES"] = SHADES
ENVIRONMENT.globals["NONE"] = NONE
ENVIRONMENT.globals["q_href"] = lambda qid: f"#q-{qid}"
"""Where a question id links to: its entry on the same page (the viewer links to its page)."""


_COST_PANELS: tuple[tuple[Callable[[CostPoint], float | None], str, str], ...] = (
    (lambda p: p.tokens, "mean tokens per answer (in + out)", "No token counts."),
    (lambda p: p.latency, "mean seconds per answer", "No latencies."),
    (
        lambda p: p.cost_usd,
        "mean USD per answer",
        "USD unknown: no price is known for these models.",
    ),
)
"""The quality-vs-cost panels: x value, axis label, and what the page says without one."""


def _charts(data: PageData) -> dict[str, object]:
    """Every chart of the page (None where there is nothing to draw)."""
    h = data.header
    colors = method_colors(h.methods)
    metric = data.primary
    if data.same_questions and metric in data.common:
        over = f" over the {data.common[metric]} questions every method answered"
    else:
        over = " over its own scored answers"
    return {
        "scores": score_bars(
            data.scores,
            h.methods,
            h.metrics,
            data.common if data.same_questions else None,
            data.scales,
        ),
        "heat": heat_map(data.heat, h.methods, metric, data.same_questions),
        "cost": [
            (cost_scatter(data.costs, x_of, label, metric, colors, over), note)
            for x_of, label, note in _COST_PANELS
        ],
        "latency": spread_chart(data.latency, "seconds per answer", colors),
        "llm_calls": spread_chart(data.llm_calls, "LLM calls per answer", colors),
        "stages": stage_bars(data.stage_calls, h.methods),
        "errors": error_bars(data.errors, colors),
    }


def render_page(data: PageData) -> str:
    """The whole page as one HTML string (UTF-8, no external references)."""
    page = ENVIRONMENT.get_template("report.html").render(
        data=data,
        h=data.header,
        charts=_charts(data),
        css=Markup(_CSS),
        js=Markup(_JS),
        csp=_csp(),
    )
    return page + "\n"
