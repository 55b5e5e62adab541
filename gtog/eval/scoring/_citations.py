"""The `citations` metric (no LLM): graphrag's citations resolved against its context records.

graphrag's search prompts ask the model to cite the records of its context:
`[Data: Entities (1, 5, +more); Relationships (3)]`, `[Data: Sources (2, 7)]`,
`[Data: Reports (1)]` (local, basic, global, DRIFT), with or without `Data:`, several groups
in one bracket (separated by `;` or `,`), `+more` for ids left out. Each cited id is looked
up in the context tables the method placed in its prompt (`-----Entities-----` and so on,
first column `id`, graphrag's short `human_readable_id`; basic search's one table has no
heading and is its `Sources`). Two scores per answer, both in [0, 1]:

- `citation_validity`: distinct cited records (table, id) found in the context over distinct
  cited records; unscored ("no citations") for an answer that cites nothing. The records
  not found are the judgement's `flagged` list (`Entities 99`) and the record's `citations`.
- `citation_coverage`: the share of the answer's sentences that carry a citation (a
  citation standing alone after a sentence belongs to it); 0 for an answer citing nothing.

A method whose context has no such tables (ToG, an answers file or HTTP method without
context records) does not cite by design: both scores are unscored with that reason.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gtog.eval.scoring._base import METRIC_GROUPS, Judgement, ScorerBase, register_scorer

if TYPE_CHECKING:
    from gtog.eval._dataset import QAItem

__all__ = [
    "COVERAGE",
    "GROUP",
    "METRICS",
    "VALIDITY",
    "Citation",
    "CitationCheck",
    "check_citations",
    "cited",
    "context_records",
    "record_texts",
    "sentences",
]

GROUP = "citations"
VALIDITY = "citation_validity"
COVERAGE = "citation_coverage"
METRICS = (VALIDITY, COVERAGE)
"""The scores the `citations` metric gives (`metrics: [citations]` asks for both)."""
METRIC_GROUPS[GROUP] = METRICS

TABLES = {
    "entities": "Entities",
    "entity": "Entities",
    "relationships": "Relationships",
    "relationship": "Relationships",
    "reports": "Reports",
    "report": "Reports",
    "sources": "Sources",
    "source": "Sources",
    "claims": "Claims",
    "claim": "Claims",
    "covariates": "Claims",
}
"""graphrag's record kinds as answers and context headings name them -> one name each."""

_NAMES = "|".join(sorted(TABLES, key=len, reverse=True))
_GROUP_RE = re.compile(rf"\b({_NAMES})\s*\(([^()\[\]]*)\)", re.I)
_BRACKET_RE = re.compile(
    rf"\[\s*(?:Data\s*:\s*)?(?:{_NAMES})\s*\([^\[\]]*?\)(?:\s*[;,]?\s*(?:{_NAMES})\s*\([^\[\]]*?\))*\s*[;,]?\s*\]",
    re.I,
)
_HEADING_RE = re.compile(r"^-{3,}\s*([A-Za-z_ ]+?)\s*-{3,}\s*$", re.M)
_PATHS_RE = re.compile(r"^-{3,}\s*Paths\s*-{3,}\s*$", re.M | re.I)
_ID_RE = re.compile(r"^[\w.:-]{1,64}$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_LETTER = re.compile(r"[^\W\d_]")
_NOT_PROSE = re.compile(r"--\[[^\]]*\]-->|\s->\s.*\s->\s|^[^.!?]{1,40}:$")
"""A stated path line (`A --[r]--> B`, `A -> r -> B`) or a label (`Evidence:`): no sentence."""


@dataclass(frozen=True)
class Citation:
    """One id cited in an answer: its table, the id and where it is in the answer."""

    table: str
    id: str
    start: int
    end: int

    @property
    def label(self) -> str:
        """`Entities 5`: how the record is named in lists and the report."""
        return f"{self.table} {self.id}"


def cited(answer: str) -> list[Citation]:
    """Every id cited in `answer`, in order (`+more` and empty ids left out)."""
    out: list[Citation] = []
    for bracket in _BRACKET_RE.finditer(answer):
        for group in _GROUP_RE.finditer(bracket.group(0)):
            table = TABLES[group.group(1).lower()]
            base = bracket.start() + group.start(2)
            for piece in re.finditer(r"[^,;]+", group.group(2)):
                token = piece.group(0).strip()
                if not token or token.lower().lstrip("+ ") == "more":
                    continue
                lead = len(piece.group(0)) - len(piece.group(0).lstrip())
                start = base + piece.start() + lead
                out.append(Citation(table, token, start, start + len(token)))
    return out


def _row_ids(block: str) -> set[str]:
    """The first column of a `|`-separated table (its header line first)."""
    lines = block.strip("\n").split("\n")
    if not lines or "|" not in lines[0]:
        return set()
    ids = set()
    # graphrag joins local tables' fields with `|` (no quoting) and writes basic search's
    # with pandas (quoted, multi-line fields): both readings, ids only where they look like ids
    for line in lines[1:]:
        first = line.split("|", 1)[0].strip()
        if "|" in line and _ID_RE.match(first):
            ids.add(first)
    try:
        rows = list(csv.reader(lines[1:], delimiter="|", quotechar='"', escapechar="\\"))
    except csv.Error:
        rows = []
    ids |= {r[0].strip() for r in rows if len(r) > 1 and _ID_RE.match(r[0].strip())}
    return ids


def _rows(block: str) -> dict[str, str]:
    """id -> the row's text, of a `|`-separated table (first column the id)."""
    lines = block.strip("\n").split("\n")
    if not lines or "|" not in lines[0]:
        return {}
    out: dict[str, str] = {}
    for line in lines[1:]:
        first, _, rest = line.partition("|")
        if rest and _ID_RE.match(first.strip()):
            out.setdefault(first.strip(), rest.strip())
    return out


def _sections(context: str) -> list[tuple[str, str]]:
    """(table, block) of each context table: headed ones, and basic search's unheaded."""
    out = []
    heads = list(_HEADING_RE.finditer(context))
    lead = context[: heads[0].start()] if heads else context
    first = lead.lstrip("\n").split("\n", 1)[0]
    if first.split("|", 1)[0].strip().lower() == "id" and "|" in first:
        out.append(("Sources", lead.lstrip("\n")))
    for i, head in enumerate(heads):
        table = TABLES.get(head.group(1).strip().lower())
        end = heads[i + 1].start() if i + 1 < len(heads) else len(context)
        if table is not None:
            out.append((table, context[head.end() : end]))
    return out


def record_texts(context: str) -> dict[tuple[str, str], str]:
    """(table, id) -> the record's row text (its fields after the id), as in the context."""
    out: dict[tuple[str, str], str] = {}
    for table, block in _sections(context):
        for rid, text in _rows(block).items():
            out.setdefault((table, rid), text)
    return out


def context_records(context: str) -> dict[str, set[str]]:
    """Table -> the ids of its records in a graphrag context text (empty: no tables).

    Headed tables (`-----Entities-----`, `-----Reports-----`, ...; global search's batches
    repeat `Reports`) and basic search's unheaded one (`Sources`) are read."""
    out: dict[str, set[str]] = {}
    for table, block in _sections(context):
        out.setdefault(table, set()).update(_row_ids(block))
    return {t: ids for t, ids in out.items() if ids}


def sentences(answer: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of `answer`: split after `.`/`!`/`?` and at line
    ends, headings (`#`), labels (`Evidence:`), stated path lines and pieces without a
    letter left out; a piece that is only citations joins the sentence before it."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for sep in [*_SENTENCE_END.finditer(answer), None]:
        end = sep.start() if sep is not None else len(answer)
        piece = answer[pos:end]
        text = piece.strip()
        if text and not text.startswith("#") and not _NOT_PROSE.search(text):
            bare = _BRACKET_RE.sub("", text)
            if not _LETTER.search(bare.strip(" .!?*-")):
                if spans and _BRACKET_RE.search(text):
                    spans[-1] = (spans[-1][0], end)
            else:
                spans.append((pos, end))
        if sep is not None:
            pos = sep.end()
    return spans


@dataclass
class CitationCheck:
    """What one answer cites and what of it the context holds."""

    citations: list[Citation]
    records: dict[str, set[str]]
    sentence_spans: list[tuple[int, int]] = field(default_factory=list)

    @property
    def distinct(self) -> list[tuple[str, str]]:
        """The cited records (table, id), each once, in order."""
        return list(dict.fromkeys((c.table, c.id) for c in self.citations))

    @property
    def invalid(self) -> list[str]:
        """The cited records not in the context (`Entities 99`), each once."""
        return [f"{t} {i}" for t, i in self.distinct if i not in self.records.get(t, ())]

    @property
    def validity(self) -> float | None:
        """Found over cited (distinct records); None when nothing is cited."""
        distinct = self.distinct
        if not distinct:
            return None
        return 1 - len(self.invalid) / len(distinct)

    @property
    def cited_sentences(self) -> int:
        """Sentences with at least one citation."""
        return sum(
            1 for s, e in self.sentence_spans if any(s <= c.start < e for c in self.citations)
        )

    @property
    def coverage(self) -> float | None:
        """Cited sentences over sentences (None: the answer has no sentence)."""
        if not self.sentence_spans:
            return None
        return self.cited_sentences / len(self.sentence_spans)


def check_citations(answer: str, context: str) -> CitationCheck:
    """The citations of `answer` resolved against the records of `context`."""
    return CitationCheck(cited(answer), context_records(context), sentences(answer))


TOG_DOES_NOT_CITE = "ToG answers from its paths and does not cite records by design"
NO_RECORDS = (
    "no context table with record ids to resolve citations in (answers files and HTTP "
    "methods without context tables do not cite by design; DRIFT's context is not kept as "
    "tables)"
)


class _CitationScorer(ScorerBase):
    needs = frozenset({"answer", "context"})
    binary = False
    flags = "invalid citations"

    def _check(self, answer: str, context: str | None) -> CitationCheck | Judgement:
        if context is None:
            return Judgement.unscored(
                "no saved context to resolve citations in (output.save_intermediate was off)"
            )
        if _PATHS_RE.search(context):  # gtog's ToG: its evidence has tables, it cites none
            return Judgement.unscored(TOG_DOES_NOT_CITE)
        check = check_citations(answer, context)
        if not check.records:
            return Judgement.unscored(NO_RECORDS)
        return check


@register_scorer
class CitationValidity(_CitationScorer):
    """The share of the records an answer cites that its method placed in its context."""

    name = VALIDITY

    async def score(self, item: QAItem, answer: str, context: str | None) -> Judgement:
        check = self._check(answer, context)
        if isinstance(check, Judgement):
            return check
        validity = check.validity
        if validity is None:
            return Judgement(error="no citations", flagged=[])
        invalid = check.invalid
        found = len(check.distinct) - len(invalid)
        reason = f"{found} of {len(check.distinct)} cited records in the context"
        if invalid:
            reason += "; not in it: " + ", ".join(invalid)
        return Judgement(score=validity, reason=reason[:500], flagged=invalid)


@register_scorer
class CitationCoverage(_CitationScorer):
    """The share of an answer's sentences that carry a citation."""

    name = COVERAGE
    flags = None

    async def score(self, item: QAItem, answer: str, context: str | None) -> Judgement:
        check = self._check(answer, context)
        if isinstance(check, Judgement):
            return check
        coverage = check.coverage
        if coverage is None:
            return Judgement.unscored("the answer has no sentence")
        n = len(check.sentence_spans)
        return Judgement(score=coverage, reason=f"{check.cited_sentences} of {n} sentences cite")
