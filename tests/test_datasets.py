"""facetlab.datasets: pinned, hash-verified access to the FACET v3 data (no real network)."""

from __future__ import annotations

import functools
import hashlib
import http.server
import os
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from facetlab import datasets
from facetlab.cli import app
from facetlab.datasets import folder, obtain, sources
from facetlab.errors import DataError, HashMismatchError

N_FILES = 448


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Each test gets its own empty data dir, no mirror and a fresh in-process memo."""
    monkeypatch.setenv("FACETLAB_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("FACETLAB_DATA_MIRROR", raising=False)
    monkeypatch.setattr(obtain, "_VERIFIED", set())


def _link_mirror(facet_data: Path, dest: Path) -> Path:
    """A mirror made of symlinks to the real one (cheap); tests replace single files."""
    for name in datasets.registry():
        link = dest / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(facet_data / name)
    return dest


def test_registry_lists_the_448_pinned_files(facet_data: Path) -> None:
    reg = datasets.registry()
    assert len(reg) == N_FILES and reg == datasets.REGISTRY
    shipped = {}
    for line in (facet_data / "SHA256SUMS").read_text().splitlines():
        sha, name = line.split()
        shipped[name] = sha
    assert dict(reg) == shipped
    assert sum(name.startswith("instances/") for name in reg) == 41
    assert datasets.COMMIT in datasets.BASE_URL and datasets.REPOSITORY in datasets.BASE_URL


@pytest.mark.slow
def test_fetch_from_mirror_verifies_all_files(facet_data: Path, tmp_path: Path) -> None:
    report = datasets.fetch(mirror=facet_data)
    assert (report.verified, report.copied, report.downloaded, report.present) == (
        N_FILES,
        N_FILES,
        0,
        0,
    )
    assert report.root == tmp_path / "data"
    assert str(report).startswith("448 files verified")
    again = datasets.fetch(mirror=facet_data)
    assert (again.verified, again.copied, again.present) == (N_FILES, 0, N_FILES)
    assert datasets.verify().ok


@pytest.mark.slow
def test_fetch_reports_progress(facet_data: Path) -> None:
    seen: list[tuple[int, int]] = []
    datasets.fetch(mirror=facet_data, progress=lambda done, total, name: seen.append((done, total)))
    assert seen[-1] == (N_FILES, N_FILES) and len(seen) == N_FILES


@pytest.mark.slow
def test_altered_mirror_file_names_file_and_both_hashes(facet_data: Path, tmp_path: Path) -> None:
    mirror = _link_mirror(facet_data, tmp_path / "mirror")
    name = "results/weighted-probe/c2/" + next(
        n.rsplit("/", 1)[1]
        for n in sorted(datasets.registry())
        if n.startswith("results/weighted-probe/c2/")
    )
    content = bytearray((facet_data / name).read_bytes())
    content[10] ^= 0x01  # one byte changed
    (mirror / name).unlink()
    (mirror / name).write_bytes(bytes(content))
    with pytest.raises(HashMismatchError) as info:
        datasets.fetch(mirror=mirror)
    err = info.value
    assert err.name == name and err.expected == datasets.registry()[name]
    assert err.actual == hashlib.sha256(bytes(content)).hexdigest()
    assert name in str(err) and err.expected in str(err) and err.actual in str(err)
    assert not folder.verify(tmp_path / "data").ok  # nothing unverified is kept


@pytest.mark.slow
def test_missing_mirror_file_is_named(facet_data: Path, tmp_path: Path) -> None:
    mirror = _link_mirror(facet_data, tmp_path / "mirror")
    name = "instances/facet-neg-cf-002.json"
    (mirror / name).unlink()
    with pytest.raises(DataError, match=f"{name}: missing from mirror"):
        datasets.fetch(mirror=mirror)


@pytest.mark.slow
def test_several_bad_files_are_all_listed(facet_data: Path, tmp_path: Path) -> None:
    mirror = _link_mirror(facet_data, tmp_path / "mirror")
    names = ["instances/facet-neg-0001.json", "instances/facet-neg-0002.json"]
    for name in names:
        (mirror / name).unlink()
    with pytest.raises(DataError) as info:
        datasets.fetch(mirror=mirror)
    assert "2 of 448 FACET v3 files failed" in str(info.value)
    assert all(name in str(info.value) for name in names)


@pytest.mark.slow
def test_mirror_from_environment_and_cli(facet_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACETLAB_DATA_MIRROR", str(facet_data))
    result = CliRunner().invoke(app, ["data", "fetch", "--quiet"])
    assert result.exit_code == 0, result.output
    assert "448 files verified" in result.output
    assert (datasets.cache_dir() / "instances" / "facet-neg-0002.json").is_file()
    # the data every loader reads is the mirror itself (the source rule), in place
    path = CliRunner().invoke(app, ["data", "path"])
    assert path.exit_code == 0 and Path(path.output.strip()) == facet_data


@pytest.mark.slow
def test_cli_mirror_option(facet_data: Path) -> None:
    result = CliRunner().invoke(app, ["data", "fetch", "--quiet", "--mirror", str(facet_data)])
    assert result.exit_code == 0, result.output
    assert "448 files verified (0 downloaded, 448 copied" in result.output


@pytest.mark.slow
def test_cli_fetch_fails_on_altered_mirror(
    facet_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mirror = _link_mirror(facet_data, tmp_path / "mirror")
    name = "instances/perturbations/facet-neg-0003-c2.json"
    data = (facet_data / name).read_bytes()
    (mirror / name).unlink()
    (mirror / name).write_bytes(data[:-1] + b" ")
    monkeypatch.setenv("FACETLAB_DATA_MIRROR", str(mirror))
    result = CliRunner().invoke(app, ["data", "fetch", "--quiet"])
    assert result.exit_code == 1
    assert name in result.output and datasets.registry()[name] in result.output


@pytest.mark.slow
def test_altered_cached_file_is_replaced(facet_data: Path, tmp_path: Path) -> None:
    datasets.fetch(mirror=facet_data)
    cached = tmp_path / "data" / "instances" / "facet-neg-0004.json"
    cached.write_text("{}")
    report = datasets.fetch(mirror=facet_data)
    assert (report.copied, report.present) == (1, N_FILES - 1)
    assert datasets.verify().ok


@pytest.mark.slow
def test_each_process_hashes_the_data_dir_once_and_repairs_it(
    facet_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    datasets.fetch(mirror=facet_data)  # the data dir, filled from the mirror once
    root = datasets.data_dir()  # no mirror set: facetlab's data dir is read
    assert root == tmp_path / "data"

    calls: list[object] = []
    real_fetch = obtain.fetch

    def counting_fetch(**kwargs: object) -> datasets.FetchReport:
        calls.append(kwargs)
        return real_fetch(mirror=facet_data, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(obtain, "fetch", counting_fetch)
    monkeypatch.setattr(obtain, "_VERIFIED", set())  # as in a new process
    assert datasets.data_dir() == root and calls == []  # hashed, all well
    assert datasets.data_dir() == root and calls == []  # memoised in-process

    # An edit that keeps the size and the modification time: the next "process" hashes
    # every file, sees it and repairs it.
    victim = root / "instances" / "facet-neg-0005.json"
    before = victim.stat()
    content = bytearray(victim.read_bytes())
    content[40] = ord("X") if content[40] != ord("X") else ord("Y")
    victim.write_bytes(bytes(content))
    os.utime(victim, ns=(before.st_atime_ns, before.st_mtime_ns))
    monkeypatch.setattr(obtain, "_VERIFIED", set())
    assert datasets.data_dir() == root and len(calls) == 1
    assert datasets.verify().ok


def test_the_source_rule_argument_then_mirror_then_data_dir(
    facet_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert datasets.data_source() == datasets.DataSource(tmp_path / "data", "FACETLAB_DATA_DIR")
    monkeypatch.setenv("FACETLAB_DATA_MIRROR", str(facet_data))
    assert datasets.data_source() == datasets.DataSource(facet_data, "FACETLAB_DATA_MIRROR")
    given = datasets.data_source(tmp_path / "copy")
    assert (given.root, given.origin, given.owned) == (tmp_path / "copy", "data_dir", False)
    monkeypatch.delenv("FACETLAB_DATA_DIR")
    assert datasets.data_source("x").origin == "data_dir"
    monkeypatch.delenv("FACETLAB_DATA_MIRROR")
    assert datasets.data_source().origin == "the user cache" and datasets.data_source().owned


@pytest.mark.slow
def test_an_edited_mirror_is_read_and_refused_never_the_cached_copy(
    facet_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from facetlab.records import load_trials

    datasets.fetch(mirror=facet_data)  # a verified cached copy exists
    mirror = _link_mirror(facet_data, tmp_path / "mirror")
    name = "results/weighted-probe/c2/" + next(
        n.rsplit("/", 1)[1]
        for n in datasets.registry()
        if n.startswith("results/weighted-probe/c2/")
    )
    (mirror / name).unlink()
    (mirror / name).write_text((facet_data / name).read_text().replace("F", "G", 1))
    copy = mirror / "results" / "weighted-probe" / "copy.json"
    copy.write_bytes((facet_data / name).read_bytes())
    monkeypatch.setenv("FACETLAB_DATA_MIRROR", str(mirror))
    with pytest.raises(DataError) as refused:
        load_trials(sources=["c2"])
    message = str(refused.value)
    assert f"{mirror} (FACETLAB_DATA_MIRROR, read in place): not the pinned" in message
    assert f"altered: {name}" in message
    assert f"results/weighted-probe/copy.json (a copy of {name})" in message
    result = CliRunner().invoke(app, ["data", "verify"])
    assert result.exit_code == 1
    assert f"FACET data: {mirror} (FACETLAB_DATA_MIRROR, read in place)" in result.output
    assert f"altered: {name}" in result.output and "(a copy of" in result.output
    assert "unset FACETLAB_DATA_MIRROR" in result.output
    # the mirror is only read, never repaired; the cached copy is not touched
    assert folder.sha256(mirror / name) != datasets.registry()[name]
    assert folder.verify(tmp_path / "data").ok


def test_no_network_error_explains_the_mirror(monkeypatch: pytest.MonkeyPatch) -> None:
    def offline(self: object, url: str, output_file: str, pooch: object) -> None:
        raise sources.NetworkError(
            f"could not download {url}: offline. {sources.no_network_hint()}"
        )

    monkeypatch.setattr(sources.HttpSource, "__call__", offline)
    monkeypatch.setattr(sources, "check_resolvable", lambda url, timeout: None)
    with pytest.raises(DataError, match="FACETLAB_DATA_MIRROR") as info:
        datasets.data_dir()
    assert "facetlab data fetch" in str(info.value)


def test_unreachable_server_gives_mirror_hint(monkeypatch: pytest.MonkeyPatch) -> None:

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setattr(obtain, "BASE_URL", f"http://127.0.0.1:{port}/")
    result = CliRunner().invoke(app, ["data", "fetch", "--quiet"])
    assert result.exit_code == 1
    assert "ConnectionError" in result.output and "FACETLAB_DATA_MIRROR" in result.output


def test_dns_that_never_answers_fails_within_the_probe_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stalled = threading.Event()

    def hanging_getaddrinfo(*args: object, **kwargs: object) -> object:
        stalled.wait(5)  # a dead resolver; released at the end of the test
        raise OSError("resolver gave up")

    monkeypatch.setattr(sources.socket, "getaddrinfo", hanging_getaddrinfo)
    monkeypatch.setattr(obtain, "_PROBE_TIMEOUT_S", 0.2)
    monkeypatch.setattr(sources.urllib.request, "getproxies", dict)
    with pytest.raises(DataError, match="DNS not answering") as info:
        datasets.fetch()
    # the resolver still hangs: fetch gave up at the probe's timeout, not with the resolver
    assert not stalled.is_set()
    stalled.set()
    assert "FACETLAB_DATA_MIRROR" in str(info.value)


@pytest.mark.slow  # real-clock waits (timeouts, pacing, retry-after)
def test_server_that_never_answers_fails_within_the_probe_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with socket.socket() as listener:  # accepts connections, never replies
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        monkeypatch.setattr(obtain, "_PROBE_TIMEOUT_S", 0.3)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/"
        started = time.perf_counter()
        with pytest.raises(DataError, match="ReadTimeout") as info:
            datasets.fetch(base_url=url)
        assert time.perf_counter() - started < 3
    assert "FACETLAB_DATA_MIRROR" in str(info.value)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A local HTTP server on 127.0.0.1 serving files from a folder."""
    root = tmp_path / "served"
    root.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


SUBSET = (
    "instances/facet-neg-cf-002.json",
    "instances/perturbations/facet-neg-0002-c2.json",
    "results/weighted-probe/c2/",  # first C2 file, resolved below
)


def _subset(facet_data: Path, served_root: Path) -> dict[str, str]:
    reg = datasets.registry()
    names = [n for n in SUBSET if not n.endswith("/")]
    names.append(next(n for n in sorted(reg) if n.startswith(SUBSET[2])))
    for name in names:
        (served_root / name).parent.mkdir(parents=True, exist_ok=True)
        (served_root / name).write_bytes((facet_data / name).read_bytes())
    return {n: reg[n] for n in names}


def _use_registry(monkeypatch: pytest.MonkeyPatch, subset: dict[str, str]) -> None:
    """A smaller registry, everywhere it is read."""
    for module in (obtain, folder, sources):
        monkeypatch.setattr(module, "registry", lambda: subset)


def test_download_from_local_server(
    facet_data: Path, served: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    served_root, url = served
    subset = _subset(facet_data, served_root)
    _use_registry(monkeypatch, subset)
    monkeypatch.setattr(obtain, "BASE_URL", url)
    report = datasets.fetch()
    assert (report.verified, report.downloaded, report.copied) == (3, 3, 0)
    assert report.source == f"network {url}"
    assert datasets.verify().ok
    assert datasets.data_dir() == report.root  # stamped: no second download needed


def test_download_with_altered_content_is_rejected(
    facet_data: Path, served: tuple[Path, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    served_root, url = served
    subset = _subset(facet_data, served_root)
    name = "instances/facet-neg-cf-002.json"
    (served_root / name).write_bytes((served_root / name).read_bytes().replace(b"F", b"G", 1))
    _use_registry(monkeypatch, subset)
    with pytest.raises(HashMismatchError) as info:
        datasets.fetch(base_url=url)
    assert info.value.name == name and info.value.path == url + name
    assert not (tmp_path / "data" / name).exists()  # the bad download is not kept


def test_download_http_error_names_url(
    facet_data: Path, served: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    served_root, url = served
    subset = _subset(facet_data, served_root)
    (served_root / "instances/facet-neg-cf-002.json").unlink()
    _use_registry(monkeypatch, subset)
    with pytest.raises(DataError, match=r"facet-neg-cf-002.json failed: HTTP 404"):
        datasets.fetch(base_url=url)


@pytest.mark.slow
def test_info_shows_attribution_and_state(facet_data: Path) -> None:
    before = datasets.info()
    assert before.state.startswith("not fetched") and before.files_present == 0
    assert before.license == "CC BY 4.0" and before.doi == "10.5281/zenodo.19557436"
    assert "Jambula" in before.citation and before.doi in before.citation
    datasets.fetch(mirror=facet_data)
    after = datasets.info()
    assert after.state == "verified" and after.files_present == N_FILES
    result = CliRunner().invoke(app, ["data", "info"])
    assert result.exit_code == 0
    for text in ("CC BY 4.0", "10.5281/zenodo.19557436", datasets.COMMIT, "Cite as:", "verified"):
        assert text in result.output
    as_json = CliRunner().invoke(app, ["data", "info", "--json"])
    assert '"license": "CC BY 4.0"' in as_json.output


def test_path_without_fetch_does_not_download(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["data", "path", "--no-fetch"])
    assert result.exit_code == 0 and result.output.strip() == str(tmp_path / "data")
    assert not (tmp_path / "data").exists()


def test_mirror_that_is_not_a_folder(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not a folder"):
        datasets.fetch(mirror=tmp_path / "nope")


# --------------------------------------------------------------------------- pooch


@pytest.mark.slow
def test_pooch_does_the_fetching(facet_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pooch

    fetched: list[str] = []
    real = pooch.Pooch.fetch

    def counting(self: pooch.Pooch, fname: str, *args: object, **kwargs: object) -> str:
        fetched.append(fname)
        return real(self, fname, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pooch.Pooch, "fetch", counting)
    report = datasets.fetch(mirror=facet_data)
    assert sorted(fetched) == sorted(datasets.registry()) and report.copied == N_FILES
    fetched.clear()
    datasets.fetch(mirror=facet_data)
    assert fetched == []  # verified files are kept without asking pooch


# --------------------------------------------------------------------------- a wrong mirror


def test_mirror_pointing_at_the_wrong_folder_is_one_line(facet_data: Path) -> None:
    result = CliRunner().invoke(
        app, ["data", "fetch", "--quiet", "--mirror", str(facet_data / "instances")]
    )
    assert result.exit_code == 1
    assert result.output.count("\n") == 1  # not one line per file
    assert "no instances/ here (expected the FACET v3 data root" in result.output
    assert f"did you mean {facet_data}?" in result.output


def test_mirror_one_level_too_high_suggests_the_data_root(tmp_path: Path) -> None:
    (tmp_path / "above" / "facet-data" / "instances").mkdir(parents=True)
    with pytest.raises(DataError, match="no instances/ here") as info:
        datasets.fetch(mirror=tmp_path / "above")
    assert str(info.value).endswith(f"did you mean {tmp_path / 'above' / 'facet-data'}?")


# --------------------------------------------------------------------------- integrity


@pytest.mark.slow
def test_unregistered_file_is_reported_and_never_used(
    facet_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from facetlab.instances import load_instances
    from facetlab.records import load_trials

    datasets.fetch(mirror=facet_data)
    root = tmp_path / "data"
    extra = root / "instances" / "facet-neg-9999.json"
    extra.write_bytes((root / "instances" / "facet-neg-0002.json").read_bytes())

    info = CliRunner().invoke(app, ["data", "info"])
    assert info.exit_code == 0
    assert "not in the registry: instances/facet-neg-9999.json" in info.output
    assert "1 file(s) not in the registry, never used" in info.output
    assert datasets.info().unregistered == ("instances/facet-neg-9999.json",)

    message = re.escape("1 file(s) not in the FACET v3 registry: instances/facet-neg-9999.json")
    monkeypatch.setattr(obtain, "_VERIFIED", set())  # as in a new process
    with pytest.raises(DataError, match=message):
        datasets.data_dir()
    with pytest.raises(DataError, match=message):
        load_instances()
    with pytest.raises(DataError, match=message):
        load_trials(sources=["c2"])
    run = CliRunner().invoke(
        app, ["run", "--dry-run", "--model", "simulated/wadd", "--probes", "p1"]
    )
    assert run.exit_code == 2 and "instances/facet-neg-9999.json" in run.output

    extra.unlink()  # moved out: the folder is usable again
    assert "facet-neg-0002" in load_instances()


@pytest.mark.slow
def test_fetch_reports_unregistered_files(facet_data: Path, tmp_path: Path) -> None:
    datasets.fetch(mirror=facet_data)
    (tmp_path / "data" / "results" / "notes.txt").write_text("mine")
    result = CliRunner().invoke(app, ["data", "fetch", "--quiet", "--mirror", str(facet_data)])
    assert result.exit_code == 1
    assert "448 files verified" in result.output and "results/notes.txt" in result.output


@pytest.mark.slow
def test_verify_catches_an_edit_that_keeps_size_and_mtime(
    facet_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    datasets.fetch(mirror=facet_data)
    name = "instances/facet-neg-0003.json"
    path = tmp_path / "data" / name
    before = path.stat()
    content = bytearray(path.read_bytes())
    content[50] = ord("X") if content[50] != ord("X") else ord("Y")
    path.write_bytes(bytes(content))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    # `data info` hashes what it reports on: the edit is named, the folder not "verified"
    shown = datasets.info()
    assert shown.altered == (name,) and shown.state.startswith("altered: 1 file(s)")
    info_out = CliRunner().invoke(app, ["data", "info"])
    assert name in info_out.output and "state:     verified" not in info_out.output

    result = CliRunner().invoke(app, ["data", "verify"])
    assert result.exit_code == 1
    assert f"altered: {name}" in result.output
    assert "447 of 448 files match the registry" in result.output
    assert "facetlab data fetch" in result.output
    # the next process hashes every file before using it, and repairs this one
    monkeypatch.setattr(obtain, "fetch", functools.partial(obtain.fetch, mirror=facet_data))
    monkeypatch.setattr(obtain, "_VERIFIED", set())
    datasets.data_dir()
    assert folder.sha256(path) == datasets.registry()[name]
    ok = CliRunner().invoke(app, ["data", "verify"])
    assert ok.exit_code == 0 and "448 of 448 files match the registry" in ok.output


def test_verify_on_an_empty_folder_lists_missing_files() -> None:
    report = datasets.verify()
    assert not report.ok and len(report.missing) == N_FILES and report.altered == ()


@pytest.mark.slow
def test_partial_files_of_an_interrupted_fetch_are_cleaned(
    facet_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    datasets.fetch(mirror=facet_data)
    root = tmp_path / "data"
    old = [root / "results" / "tmpk2_x9zq1", root / "instances" / ".facet-neg-0001.json.ab12.part"]
    young = root / "instances" / "tmpyoung123"
    for path in [*old, young]:
        path.write_bytes(b"half a fil")
    for path in old:
        os.utime(path, (time.time() - 3600, time.time() - 3600))
    # Partial files are never mistaken for unregistered data.
    assert datasets.unregistered(root) == ()
    report = datasets.fetch(mirror=facet_data)
    assert sorted(report.cleaned) == sorted(p.relative_to(root).as_posix() for p in old)
    assert not any(p.exists() for p in old)
    assert young.exists()  # may belong to a fetch still running in another process
    for path in old:  # data_dir() hashes the folder, and removes them as well
        path.write_bytes(b"half a fil")
        os.utime(path, (time.time() - 3600, time.time() - 3600))
    monkeypatch.setattr(obtain, "_VERIFIED", set())
    assert datasets.data_dir() == root and not any(p.exists() for p in old)


def test_interrupted_download_leaves_nothing_behind(
    facet_data: Path, served: tuple[Path, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    served_root, url = served
    subset = _subset(facet_data, served_root)
    _use_registry(monkeypatch, subset)

    def interrupted(self: object, url: str, output_file: str, pooch: object) -> None:
        Path(output_file).write_bytes(b"half")
        raise KeyboardInterrupt

    monkeypatch.setattr(sources.HttpSource, "__call__", interrupted)
    with pytest.raises(KeyboardInterrupt):
        datasets.fetch(base_url=url)
    left = [p for p in (tmp_path / "data").rglob("*") if p.is_file()]
    assert left == []


# --------------------------------------------------------------------------- command line


def test_version_and_help_read_well() -> None:
    from importlib.metadata import version

    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output == f"facetlab {version('facetlab')}\n"
    run_help = CliRunner().invoke(app, ["run", "--help"], terminal_width=200)
    assert run_help.exit_code == 0
    assert "<bool>" not in run_help.output
    assert (
        "--dry-run " in run_help.output and "--template <facet-v3|facetlab-v1>" in run_help.output
    )
    data_help = CliRunner().invoke(app, ["data", "--help"])
    assert "verify" in data_help.output


# --------------------------------------------------------------------------- setup.sh

ROOT = Path(__file__).resolve().parents[1]


def _setup_copy(tmp_path: Path) -> Path:
    """setup.sh and the registry in a clone of their own (no ../shared/facet-data beside it)."""
    repo = tmp_path / "clone" / "repo"
    (repo / "scripts").mkdir(parents=True)
    (repo / "facetlab" / "data").mkdir(parents=True)
    (repo / "scripts" / "setup.sh").write_text((ROOT / "scripts" / "setup.sh").read_text())
    registry_file = ROOT / "facetlab" / "data" / "registry.txt"
    (repo / "facetlab" / "data" / "registry.txt").write_text(registry_file.read_text())
    return repo


def _run_setup(repo: Path, tmp_path: Path, **env: str) -> tuple[int, str, float]:
    import subprocess

    base = {k: v for k, v in os.environ.items() if not k.startswith("FACETLAB_")}
    base.update(HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "home" / ".cache"))
    started = time.perf_counter()
    done = subprocess.run(
        ["bash", str(repo / "scripts" / "setup.sh")],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr, time.perf_counter() - started


def test_setup_without_data_or_network_fails_fast_before_installing(tmp_path: Path) -> None:
    repo = _setup_copy(tmp_path)
    with socket.socket() as sock:  # a proxy that refuses: no network, deterministically
        sock.bind(("127.0.0.1", 0))
        proxy = f"http://127.0.0.1:{sock.getsockname()[1]}"
    code, output, seconds = _run_setup(repo, tmp_path, https_proxy=proxy, HTTPS_PROXY=proxy)
    assert code == 1 and seconds < 30
    assert "the pinned download is not reachable" in output
    assert "FACETLAB_DATA_MIRROR=/path/to/facet-data bash scripts/setup.sh" in output
    assert not (repo / ".venv").exists()  # checked before the pip install


def test_setup_with_a_wrong_mirror_names_it(tmp_path: Path, facet_data: Path) -> None:
    repo = _setup_copy(tmp_path)
    code, output, seconds = _run_setup(repo, tmp_path, FACETLAB_DATA_MIRROR=str(facet_data.parent))
    assert code == 1 and seconds < 30
    assert f"FACETLAB_DATA_MIRROR={facet_data.parent}: no instances/ here" in output
    assert not (repo / ".venv").exists()
