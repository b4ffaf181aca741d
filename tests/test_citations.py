"""``python -m tools.citations`` (the bibliography check) against a fake arXiv API on 127.0.0.1 (no real network)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse
from xml.sax.saxutils import escape

import pytest
from typer.testing import CliRunner

from tools.citations import (
    ArxivRecord,
    CitationError,
    app,
    check_entry,
    load_bib,
    normalize_title,
    parse_bib,
    verify_bib,
)

ROOT = Path(__file__).resolve().parents[1]
BIB = ROOT / "paper" / "references.bib"

# What the fake arXiv serves: title-case titles and full author lists (longer than the bib's).
FAKE_ARXIV: dict[str, tuple[str, list[str]]] = {
    "2308.11462": (
        "LegalBench: A Collaboratively Built Benchmark for Measuring Legal Reasoning in Large\n"
        "  Language Models",
        [
            "Neel Guha",
            "Julian Nyarko",
            "Daniel E. Ho",
            "Christopher Ré",
            "Adam Chilton",
            "Aditya K",
        ],
    ),
    "2505.12864": (
        "LEXam: Benchmarking Legal Reasoning on 340 Law Exams",
        ["Yu Fan", "Joel Niklaus", "Alex Stern", "Pierre Pernot-Leplay", "Someone Else"],
    ),
    "2307.13702": (
        "Measuring Faithfulness in Chain-of-Thought Reasoning",
        ["Tamera Lanham", "Anna Chen", "Ansh Radhakrishnan", "Benoit Steiner", "Carson Denison"],
    ),
    "2511.07979": (
        "Benchmarking Multi-Step Legal Reasoning and Analyzing Chain-of-Thought Effects in Large "
        "Language Models",
        ["Feng Yu", "Co Author"],
    ),
    "2510.08710": (
        "Thinking Longer, Not Always Smarter: Evaluating LLM Capabilities in Hierarchical Legal "
        "Reasoning",
        ["Hong Zhang", "Co Author"],
    ),
}


def _feed(ids: list[str], papers: dict[str, tuple[str, list[str]]]) -> str:
    entries = []
    for i in ids:
        if i in papers:
            title, authors = papers[i]
            names = "".join(f"<author><name>{escape(a)}</name></author>" for a in authors)
            entries.append(
                f"<entry><id>http://arxiv.org/abs/{i}v2</id><title>{escape(title)}</title>{names}</entry>"
            )
        else:  # what arXiv does for an unknown id
            entries.append(
                "<entry><id>http://arxiv.org/api/errors#incorrect_id_format</id><title>Error</title></entry>"
            )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<feed xmlns="http://www.w3.org/2005/Atom">' + "".join(entries) + "</feed>"
    )


class _FakeArxiv:
    def __init__(self, papers: dict[str, tuple[str, list[str]]]) -> None:
        self.papers = papers
        self.requests: list[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake.requests.append(self.path)
                query = parse_qs(urlparse(self.path).query)
                ids = query.get("id_list", [""])[0].split(",")
                body = _feed([i for i in ids if i], fake.papers).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/atom+xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/api/query"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_arxiv() -> Iterator[_FakeArxiv]:
    fake = _FakeArxiv(dict(FAKE_ARXIV))
    yield fake
    fake.close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


runner = CliRunner()


def test_references_bib_has_the_papers_bibliography() -> None:
    entries = load_bib(BIB)
    assert len(entries) == 10
    assert sorted(e.arxiv_id for e in entries if e.arxiv_id) == sorted(FAKE_ARXIV)
    payne = next(e for e in entries if e.key == "payne1993adaptive")
    assert payne.arxiv_id is None and payne.fields["year"] == "1993"


def test_cli_passes_against_matching_fake(fake_arxiv: _FakeArxiv) -> None:
    result = runner.invoke(app, ["--bib", str(BIB), "--api-url", fake_arxiv.url])
    assert result.exit_code == 0, result.output
    assert result.output.count("PASS") == 5
    assert "5 passed, 0 failed, 5 skipped" in result.output
    assert len(fake_arxiv.requests) == 1  # one batched request


def test_cli_fails_on_wrong_title_and_author(fake_arxiv: _FakeArxiv) -> None:
    fake_arxiv.papers["2307.13702"] = ("Measuring Something Else", FAKE_ARXIV["2307.13702"][1])
    fake_arxiv.papers["2505.12864"] = (
        FAKE_ARXIV["2505.12864"][0],
        ["Yu Fan", "Jingwei Ni", "Jakob Merane", "Joel Niklaus"],
    )
    result = runner.invoke(app, ["--bib", str(BIB), "--api-url", fake_arxiv.url])
    assert result.exit_code == 1
    lines = {
        line.split()[1]: line
        for line in result.output.splitlines()
        if line.startswith(("PASS", "FAIL"))
    }
    assert (
        lines["lanham2023measuring"].startswith("FAIL")
        and "title differs" in lines["lanham2023measuring"]
    )
    assert lines["fan2025lexam"].startswith("FAIL") and "author 2 differs" in lines["fan2025lexam"]
    assert lines["guha2023legalbench"].startswith("PASS")


def test_cli_fails_on_unknown_id(fake_arxiv: _FakeArxiv) -> None:
    del fake_arxiv.papers["2510.08710"]
    result = runner.invoke(app, ["--bib", str(BIB), "--api-url", fake_arxiv.url])
    assert result.exit_code == 1
    assert "arXiv has no paper 2510.08710" in result.output


def test_cli_unreachable_network_is_a_clear_error() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/api/query"
    result = runner.invoke(app, ["--bib", str(BIB), "--api-url", url, "--timeout", "2"])
    assert result.exit_code == 2
    assert "cannot reach the arXiv API" in result.output


def test_cli_missing_bib(tmp_path: Path) -> None:
    result = runner.invoke(app, ["--bib", str(tmp_path / "nope.bib")])
    assert result.exit_code == 2
    assert "cannot read bibliography" in result.output


def test_parse_bib_errors_and_forms() -> None:
    with pytest.raises(CitationError, match="no BibTeX entries"):
        parse_bib("nothing here")
    with pytest.raises(CitationError, match="unbalanced braces"):
        parse_bib("@article{k, title = {open")
    (entry,) = parse_bib('@misc{k, title = "Quoted", year = 2020, note = {arXiv:2101.00001v3}}')
    assert entry.title == "Quoted" and entry.fields["year"] == "2020"
    assert entry.arxiv_id == "2101.00001"


def test_check_entry_exact_author_count_without_others() -> None:
    (entry,) = parse_bib(
        "@article{k, title={T}, author={Doe, J. and Roe, R.}, eprint={2101.00001}}"
    )
    record = ArxivRecord("2101.00001", "T", ("John Doe", "Rita Roe", "Extra Person"))
    check = check_entry(entry, record)
    assert check.status == "FAIL" and "2 authors in bib, 3 on arXiv" in check.detail
    ok = check_entry(entry, ArxivRecord("2101.00001", "t.", ("John Doe", "Rita Roe")))
    assert ok.status == "PASS"


def test_normalize_title_ignores_latex_and_case() -> None:
    assert normalize_title("Towards {NLP} Systems: How?") == normalize_title(
        "towards nlp systems how"
    )


def test_verify_bib_with_stub_client() -> None:
    import httpx

    def handler(request: httpx.Request) -> httpx.Response:
        ids = request.url.params["id_list"].split(",")
        return httpx.Response(200, text=_feed(ids, FAKE_ARXIV))

    client = httpx.Client(transport=httpx.MockTransport(handler))
    checks = verify_bib(load_bib(BIB), api_url="http://arxiv.invalid/api/query", client=client)
    assert [c.status for c in checks].count("PASS") == 5
