"""Check a BibTeX bibliography against the arXiv API (titles and authors).

Repository tooling (not part of the facetlab package): from the checkout,
``python -m tools.citations [--bib paper/references.bib] [--api-url URL] [--timeout S]``.

Every entry with an arXiv id (``eprint`` with ``archivePrefix = {arXiv}``, or
``arXiv:NNNN.NNNNN`` in ``journal`` / ``note``) is looked up in one request to
the arXiv export API (Atom XML). The bib title must equal arXiv's title after
normalization (case, accents, LaTeX braces and punctuation ignored), and the bib
authors must be arXiv's first authors in order (family name and first initial);
a list ending in ``and others`` may be shorter than arXiv's. Entries without an
arXiv id are reported as ``SKIP``.

>>> entries = parse_bib("@article{k, title={{LEXam}: Legal}, author={Fan, Y. and others}, eprint={2505.12864}}")
>>> entries[0].arxiv_id, entries[0].authors, entries[0].et_al
('2505.12864', (('Y.', 'Fan'),), True)
>>> normalize_title("{LegalBench}: A Collaboratively-Built  Benchmark")
'legalbench a collaboratively built benchmark'
"""

from __future__ import annotations

import re
import unicodedata
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

if TYPE_CHECKING:
    import httpx

__all__ = [
    "ARXIV_API_URL",
    "ArxivRecord",
    "BibEntry",
    "CitationCheck",
    "CitationError",
    "check_entry",
    "fetch_arxiv",
    "load_bib",
    "normalize_name",
    "normalize_title",
    "parse_bib",
    "verify_bib",
]

ARXIV_API_URL = "http://export.arxiv.org/api/query"
"""The arXiv export API endpoint (Atom feed)."""

_ATOM = "{http://www.w3.org/2005/Atom}"
_ARXIV_ID = re.compile(r"(\d{4}\.\d{4,5})(?:v\d+)?")


class CitationError(Exception):
    """The bibliography cannot be read, or the arXiv API cannot be reached or parsed."""


# --------------------------------------------------------------------------- BibTeX


@dataclass(frozen=True)
class BibEntry:
    """One BibTeX entry: its type, key and fields (lower-case names, raw values)."""

    entry_type: str
    key: str
    fields: dict[str, str] = field(default_factory=dict)

    @property
    def title(self) -> str:
        return self.fields.get("title", "")

    @property
    def authors(self) -> tuple[tuple[str, str], ...]:
        """``(given, family)`` pairs, without a trailing ``others``."""
        names = [
            a.strip() for a in re.split(r"\s+and\s+", self.fields.get("author", "")) if a.strip()
        ]
        return tuple(_split_name(n) for n in names if n.lower() != "others")

    @property
    def et_al(self) -> bool:
        """Whether the author list ends in ``and others`` (the paper printed "et al.")."""
        names = re.split(r"\s+and\s+", self.fields.get("author", "").strip())
        return bool(names) and names[-1].strip().lower() == "others"

    @property
    def arxiv_id(self) -> str | None:
        """The arXiv id (without version), or ``None`` when the entry has none."""
        prefix = self.fields.get("archiveprefix", "").lower()
        eprint = self.fields.get("eprint", "")
        if eprint and prefix in ("", "arxiv"):
            match = _ARXIV_ID.search(eprint)
            if match:
                return match.group(1)
        for name in ("journal", "note", "url"):
            match = re.search(
                r"arxiv[:.org/abs]*\s*(\d{4}\.\d{4,5})", self.fields.get(name, ""), re.I
            )
            if match:
                return match.group(1)
        return None


def _split_name(name: str) -> tuple[str, str]:
    if "," in name:
        family, given = (p.strip() for p in name.split(",", 1))
    else:
        parts = name.split()
        family, given = parts[-1], " ".join(parts[:-1])
    return given, family


def _read_value(text: str, pos: int, where: str) -> tuple[str, int]:
    """Read a ``{...}``, ``"..."`` or bare value starting at ``pos``; return it and the end."""
    if text[pos] == "{":
        depth, start = 0, pos
        for i in range(pos, len(text)):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    return text[start + 1 : i], i + 1
        raise CitationError(f"{where}: unbalanced braces in a field value")
    if text[pos] == '"':
        end = text.find('"', pos + 1)
        if end < 0:
            raise CitationError(f"{where}: unterminated quoted field value")
        return text[pos + 1 : end], end + 1
    match = re.match(r"[^,}\s]+", text[pos:])
    if match is None:
        raise CitationError(f"{where}: expected a field value at offset {pos}")
    return match.group(0), pos + match.end()


def parse_bib(text: str, *, source: str = "<bib>") -> list[BibEntry]:
    """Parse BibTeX text (entries only; ``@comment``, ``@string`` and ``%`` lines are skipped)."""
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("%"))
    entries: list[BibEntry] = []
    for head in re.finditer(r"@(\w+)\s*\{\s*([^,\s]+)\s*,", text):
        entry_type = head.group(1).lower()
        if entry_type in ("comment", "string", "preamble"):
            continue
        key = head.group(2)
        where = f"{source}: entry {key!r}"
        pos, fields = head.end(), {}
        while True:
            match = re.compile(r"\s*(?:(\w[\w-]*)\s*=\s*|\})").match(text, pos)
            if match is None:
                raise CitationError(f"{where}: expected 'name = value' or '}}' at offset {pos}")
            if match.group(1) is None:
                break
            value, pos = _read_value(text, match.end(), where)
            fields[match.group(1).lower()] = " ".join(value.split())
            comma = re.compile(r"\s*,").match(text, pos)
            if comma:
                pos = comma.end()
        entries.append(BibEntry(entry_type, key, fields))
    if not entries:
        raise CitationError(f"{source}: no BibTeX entries found")
    return entries


def load_bib(path: Path | str) -> list[BibEntry]:
    """Read and parse a ``.bib`` file; :class:`CitationError` if missing or malformed."""
    bib = Path(path)
    try:
        text = bib.read_text(encoding="utf-8")
    except OSError as exc:
        raise CitationError(f"{bib}: cannot read bibliography ({exc.strerror or exc})") from exc
    return parse_bib(text, source=str(bib))


# --------------------------------------------------------------------------- normalization

_LATEX_ACCENT = re.compile(r"\\[`'^\"~=.uvHcdbtk]\s*\{?\s*([A-Za-z])\s*\}?")


def _plain(text: str) -> str:
    text = _LATEX_ACCENT.sub(r"\1", text)
    text = re.sub(r"\\[A-Za-z]+\s*", " ", text)  # other LaTeX commands
    text = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in text if not unicodedata.combining(ch))


def normalize_title(title: str) -> str:
    """Lower case, no accents, braces or punctuation, single spaces."""
    words = re.sub(r"[^a-z0-9]+", " ", _plain(title).lower())
    return " ".join(words.split())


def normalize_name(given: str, family: str) -> tuple[str, str]:
    """``(first initial, family name)`` in plain lower case, for comparing author lists.

    >>> normalize_name("Christopher", "R{\\\\'e}") == normalize_name("C.", "Ré")
    True
    """
    fam = re.sub(r"[^a-z]+", "", _plain(family).lower())
    giv = re.sub(r"[^a-z]+", "", _plain(given).lower())
    return giv[:1], fam


# --------------------------------------------------------------------------- arXiv


@dataclass(frozen=True)
class ArxivRecord:
    """Title and authors of one arXiv paper as the API returns them."""

    arxiv_id: str
    title: str
    authors: tuple[str, ...]


def _parse_feed(xml_text: str) -> dict[str, ArxivRecord]:
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise CitationError(f"arXiv API returned malformed XML: {exc}") from exc
    out: dict[str, ArxivRecord] = {}
    for entry in root.findall(f"{_ATOM}entry"):
        id_text = entry.findtext(f"{_ATOM}id", default="")
        title = " ".join(entry.findtext(f"{_ATOM}title", default="").split())
        match = _ARXIV_ID.search(id_text)
        if match is None or title.lower() == "error":
            continue  # arXiv reports an unknown id as an entry titled "Error"
        authors = tuple(
            " ".join((a.findtext(f"{_ATOM}name", default="")).split())
            for a in entry.findall(f"{_ATOM}author")
        )
        out[match.group(1)] = ArxivRecord(match.group(1), title, authors)
    return out


def fetch_arxiv(
    ids: Sequence[str],
    *,
    api_url: str = ARXIV_API_URL,
    timeout: float = 30.0,
    client: httpx.Client | None = None,
) -> dict[str, ArxivRecord]:
    """Look up ``ids`` in one API request; ids arXiv does not know are absent from the result.

    Raises :class:`CitationError` when the API cannot be reached or answers with an error.
    """
    if not ids:
        return {}
    import httpx  # here, not at the top: every facetlab command imports this module

    params = {"id_list": ",".join(ids), "max_results": str(len(ids))}
    own = client is None
    http = client or httpx.Client(timeout=timeout, follow_redirects=True)
    try:
        response = http.get(api_url, params=params)
    except httpx.HTTPError as exc:
        raise CitationError(
            f"cannot reach the arXiv API at {api_url} ({type(exc).__name__}: {exc}). "
            "verify-citations needs network access (or --api-url pointing at a reachable mirror)."
        ) from exc
    finally:
        if own:
            http.close()
    if response.status_code != 200:
        raise CitationError(f"arXiv API at {api_url} answered HTTP {response.status_code}")
    return _parse_feed(response.text)


# --------------------------------------------------------------------------- checking

CheckStatus = Literal["PASS", "FAIL", "SKIP"]


@dataclass(frozen=True)
class CitationCheck:
    """Outcome of checking one bib entry."""

    key: str
    arxiv_id: str | None
    status: CheckStatus
    detail: str


def check_entry(entry: BibEntry, record: ArxivRecord | None) -> CitationCheck:
    """Compare one entry with its arXiv record (title, then authors in order)."""
    arxiv_id = entry.arxiv_id
    if arxiv_id is None:
        return CitationCheck(entry.key, None, "SKIP", "no arXiv id")
    if record is None:
        return CitationCheck(entry.key, arxiv_id, "FAIL", f"arXiv has no paper {arxiv_id}")
    problems: list[str] = []
    if normalize_title(entry.title) != normalize_title(record.title):
        problems.append(f"title differs: bib {entry.title!r} vs arXiv {record.title!r}")
    bib_names = [normalize_name(g, f) for g, f in entry.authors]
    arxiv_names = [normalize_name(*_split_name(n)) for n in record.authors]
    if not entry.et_al and len(bib_names) != len(arxiv_names):
        problems.append(f"{len(bib_names)} authors in bib, {len(arxiv_names)} on arXiv")
    for i, (mine, theirs) in enumerate(zip(bib_names, arxiv_names, strict=False)):
        if mine[1] != theirs[1] or (mine[0] and theirs[0] and mine[0] != theirs[0]):
            problems.append(
                f"author {i + 1} differs: bib {' '.join(entry.authors[i][::-1])!r} "
                f"vs arXiv {record.authors[i]!r}"
            )
    if len(bib_names) > len(arxiv_names):
        problems.append(f"bib names {len(bib_names)} authors, arXiv only {len(arxiv_names)}")
    if problems:
        return CitationCheck(entry.key, arxiv_id, "FAIL", "; ".join(problems))
    return CitationCheck(entry.key, arxiv_id, "PASS", f"title and {len(bib_names)} author(s) match")


def verify_bib(
    entries: Iterable[BibEntry],
    *,
    api_url: str = ARXIV_API_URL,
    timeout: float = 30.0,
    client: httpx.Client | None = None,
) -> list[CitationCheck]:
    """Check every entry; one API request for all arXiv ids (see :func:`fetch_arxiv`)."""
    items = list(entries)
    ids = sorted({e.arxiv_id for e in items if e.arxiv_id})
    records = fetch_arxiv(ids, api_url=api_url, timeout=timeout, client=client)
    return [check_entry(e, records.get(e.arxiv_id or "")) for e in items]


# --------------------------------------------------------------------------- command line

DEFAULT_BIB = Path("paper") / "references.bib"


def verify_citations(
    bib: Annotated[
        Path, typer.Option("--bib", help="BibTeX file to check (default: paper/references.bib).")
    ] = DEFAULT_BIB,
    api_url: Annotated[
        str, typer.Option("--api-url", help="arXiv API endpoint (a local fake in tests).")
    ] = ARXIV_API_URL,
    timeout: Annotated[float, typer.Option("--timeout", help="HTTP timeout in seconds.")] = 30.0,
) -> None:
    """Check every arXiv entry's title and authors against the arXiv API (needs network).

    Prints PASS / FAIL / SKIP per entry. Exit status: 0 all arXiv entries match,
    1 some entry differs, 2 the bibliography or the API could not be read.
    """
    try:
        entries = load_bib(bib)
        checks = verify_bib(entries, api_url=api_url, timeout=timeout)
    except CitationError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    for check in checks:
        ident = f"arXiv:{check.arxiv_id}" if check.arxiv_id else "-"
        typer.echo(f"{check.status:<4}  {check.key:<28} {ident:<17} {check.detail}")
    failed = sum(1 for c in checks if c.status == "FAIL")
    passed = sum(1 for c in checks if c.status == "PASS")
    skipped = sum(1 for c in checks if c.status == "SKIP")
    typer.echo(f"{passed} passed, {failed} failed, {skipped} skipped (no arXiv id)")
    if failed:
        raise typer.Exit(1)


app = typer.Typer(add_completion=False)
app.command()(verify_citations)

if __name__ == "__main__":
    app()
