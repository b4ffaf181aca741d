"""Reading a 10^6-trial records folder: ``load_trials`` against pyarrow, DuckDB and polars.

Each reader runs in a fresh child process (so its peak RSS is its own) on the same
compacted records folder, and does two things: load a table, then a typical analysis
query on it (per model x probe: trials, mean weight on the factor of interest,
malformed replies). The figures are wall time (imports included) and peak RSS.

Readers:

- ``load_trials`` with its default columns (every column, raw text included) and with
  a narrow ``columns=`` selection;
- ``pyarrow`` alone: ``pq.read_table(columns=...)``, the query with ``Table.group_by``,
  and the same table ``.to_pandas()``;
- DuckDB: ``read_parquet`` + SQL, the result as pandas (``.df()``) or Arrow;
- polars: ``pl.scan_parquet(...).select(...)``, lazily, ``.collect()`` and ``.to_pandas()``.

The records folder: a simulated sweep run through ``facetlab run`` is only ~6 s at
10k trials but ~15 min at 10^6, so ``--build`` makes the 10^6 folder from a real 10k
sweep (``simulated/wadd``, FACET instances, ``p1,p2,p3,c2``, 100 repeats): each of its
records is copied ``--copies`` times (default 100) with a new repeat number, trial id
and key (``sha256`` of the old key and the copy), timestamps moved on by the copy's
number x the sweep's length, and written through facetlab's own writer
(:class:`facetlab.records.shards.ShardWriter`, 2,000 records per group) and compacted
with :func:`facetlab.records.compaction.compact` (as a finished sharded sweep is).

DuckDB and polars are not facetlab dependencies: ``pip install duckdb polars`` to measure
them (a reader whose package is missing is listed as such).

    python benchmarks/bench_columnar.py --build /tmp/columnar [--copies 100]
    python benchmarks/bench_columnar.py /tmp/columnar/sweep-1m
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from measure import load_average, peak_rss_mib, run_in_child

ROOT = Path(__file__).resolve().parents[1]
CLI = "import sys; from facetlab.cli import main; sys.argv[0] = 'facetlab'; main()"

BUILT_NOTE = "how-built.txt"
"""Written into a folder made by ``--build``: how it was made (printed with the figures)."""

NARROW = ["model", "probe", "instance_id", "factor_of_interest", "foi_weight", "parse_status"]
"""The columns a typical analysis reads (the narrow selection)."""

QUERY_SQL = """
    SELECT model, probe, count(*) AS n, avg(foi_weight) AS mean_weight,
           sum(CASE WHEN parse_status = 'malformed' THEN 1 ELSE 0 END) AS malformed
    FROM read_parquet({files})
    GROUP BY model, probe ORDER BY model, probe
"""


# --------------------------------------------------------------------------- build


def build(base: Path, copies: int) -> Path:
    """A records folder of ``copies`` x 10k trials (see the module); returns the sweep folder."""
    small = base / "sweep-10k"
    if not any(small.glob("records/trials-*.parquet")):
        subprocess.run(
            [sys.executable, "-c", CLI, "run", "-p", "p1,p2,p3,c2", "-m", "simulated/wadd",
             "-k", "100", "-o", str(small), "-q"],
            check=True,
        )  # fmt: skip
    from facetlab.records.compaction import compact
    from facetlab.records.shards import ShardWriter
    from facetlab.records.store import read_sweep_records

    records = read_sweep_records(small / "records")
    repeats = 1 + max(r.repeat for r in records)
    stamps = [datetime.fromisoformat(r.started_at.replace("Z", "+00:00")) for r in records]
    span = max(stamps) - min(stamps) + timedelta(seconds=1)
    target = base / f"sweep-{len(records) * copies // 1000}k"
    out = target / "records"
    if any(out.glob("trials-*.parquet")):
        return target
    out.mkdir(parents=True, exist_ok=True)
    writer = ShardWriter(out)
    start = time.perf_counter()
    try:
        for copy in range(copies):
            group = []
            shift = span * copy

            def moved(stamp: str, shift: timedelta = shift) -> str:
                when = datetime.fromisoformat(stamp.replace("Z", "+00:00")) + shift
                return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"

            for record in records:
                old = str(getattr(record, "key", None) or record.trial_id)
                key = hashlib.sha256(f"{old}:{copy}".encode()).hexdigest()
                repeat = record.repeat + copy * repeats
                update = {
                    "trial_id": f"{record.probe}.{record.instance_id}.r{repeat}.{key[:12]}",
                    "repeat": repeat,
                    "started_at": moved(record.started_at),
                    "finished_at": moved(record.finished_at),
                    "key": key,
                }
                group.append(record.model_copy(update=update))
                if len(group) == 2_000:
                    writer.append(group)
                    group = []
            writer.append(group)
    finally:
        writer.close()
    written = time.perf_counter() - start
    start = time.perf_counter()
    done = compact(target)
    note = (
        f"built by benchmarks/bench_columnar.py --build: {done.records:,} records, the "
        f"{len(records):,} of {small} (facetlab run -m simulated/wadd -p p1,p2,p3,c2 -k 100) "
        f"copied {copies} times with new trial ids, repeats, keys and timestamps, written "
        f"with ShardWriter ({written:.0f} s) and compacted with compact() "
        f"({time.perf_counter() - start:.0f} s) [load {load_average()}]"
    )
    (target / BUILT_NOTE).write_text(note + "\n")
    return target


# --------------------------------------------------------------------------- readers


def _parts(sweep: str) -> list[str]:
    from facetlab.records.store import part_files

    return [str(p) for p in part_files(Path(sweep) / "records")]


def _pandas_query(frame: Any) -> Any:
    grouped = frame.assign(malformed=frame["parse_status"] == "malformed").groupby(
        ["model", "probe"], sort=True
    )
    return grouped.agg(
        n=("probe", "size"), mean_weight=("foi_weight", "mean"), malformed=("malformed", "sum")
    ).reset_index()


def reader_load_trials_all(sweep: str) -> tuple[int, Any]:
    from facetlab.records import load_trials

    frame = load_trials(records=sweep)
    return len(frame), _pandas_query(frame)


def reader_load_trials_narrow(sweep: str) -> tuple[int, Any]:
    from facetlab.records import load_trials

    frame = load_trials(records=sweep, columns=NARROW)
    return len(frame), _pandas_query(frame)


def reader_pyarrow(sweep: str) -> tuple[int, Any]:
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(_parts(sweep), columns=NARROW)
    malformed = pc.equal(table["parse_status"], "malformed").cast("int64")
    result = (
        table.append_column("malformed", malformed)
        .group_by(["model", "probe"])
        .aggregate([("probe", "count"), ("foi_weight", "mean"), ("malformed", "sum")])
    )
    frame = result.to_pandas().rename(
        columns={"probe_count": "n", "foi_weight_mean": "mean_weight", "malformed_sum": "malformed"}
    )
    return table.num_rows, frame.sort_values(["model", "probe"])


def reader_pyarrow_pandas(sweep: str) -> tuple[int, Any]:
    import pyarrow.parquet as pq

    frame = pq.read_table(_parts(sweep), columns=NARROW).to_pandas()
    return len(frame), _pandas_query(frame)


def reader_pyarrow_pandas_wide(sweep: str) -> tuple[int, Any]:
    """Every column load_trials reads by default (raw text too, not the full record)."""
    import pyarrow.parquet as pq

    from facetlab.records.table import PART_COLUMNS

    columns = [c for c in PART_COLUMNS if c != "record"]
    frame = pq.read_table(_parts(sweep), columns=columns).to_pandas()
    return len(frame), _pandas_query(frame)


def reader_duckdb_sql(sweep: str) -> tuple[int, Any]:
    """The query in SQL over the files (DuckDB reads only the columns it needs)."""
    import duckdb

    files = _parts(sweep)
    con = duckdb.connect()
    n = con.execute("SELECT count(*) FROM read_parquet($f)", {"f": files}).fetchone()
    result = con.execute(QUERY_SQL.format(files="$f"), {"f": files}).df()
    return int(n[0]) if n else 0, result


def reader_duckdb_pandas(sweep: str) -> tuple[int, Any]:
    import duckdb

    con = duckdb.connect()
    cols = ", ".join(NARROW)
    frame = con.execute(f"SELECT {cols} FROM read_parquet($f)", {"f": _parts(sweep)}).df()
    return len(frame), _pandas_query(frame)


def reader_duckdb_arrow(sweep: str) -> tuple[int, Any]:
    import duckdb

    con = duckdb.connect()
    cols = ", ".join(NARROW)
    table = con.execute(f"SELECT {cols} FROM read_parquet($f)", {"f": _parts(sweep)})
    table = table.to_arrow_table()
    return table.num_rows, _pandas_query(table.to_pandas())


def reader_polars_lazy(sweep: str) -> tuple[int, Any]:
    """The query in polars, lazily over the files (only the columns it needs are read)."""
    import polars as pl

    scan = pl.scan_parquet(_parts(sweep))
    n = scan.select(pl.len()).collect().item()
    result = (
        scan.group_by("model", "probe")
        .agg(
            pl.len().alias("n"),
            pl.col("foi_weight").mean().alias("mean_weight"),
            (pl.col("parse_status") == "malformed").sum().alias("malformed"),
        )
        .sort("model", "probe")
        .collect()
    )
    return int(n), result.to_pandas()


def reader_polars_pandas(sweep: str) -> tuple[int, Any]:
    import polars as pl

    frame = pl.scan_parquet(_parts(sweep)).select(NARROW).collect().to_pandas()
    return len(frame), _pandas_query(frame)


READERS: dict[str, str] = {
    "load_trials_all": "load_trials(records=...) (default: every column, raw text too)",
    "load_trials_narrow": f"load_trials(records=..., columns=[{len(NARROW)} columns])",
    "pyarrow": "pyarrow: read_table(6 columns) + Table.group_by",
    "pyarrow_pandas": "pyarrow: read_table(6 columns).to_pandas() + pandas groupby",
    "pyarrow_pandas_wide": "pyarrow: read_table(every column but record).to_pandas()",
    "duckdb_sql": "DuckDB: SQL over read_parquet (the query only)",
    "duckdb_pandas": "DuckDB: SELECT 6 columns .df() + pandas groupby",
    "duckdb_arrow": "DuckDB: SELECT 6 columns .arrow().to_pandas() + pandas groupby",
    "polars_lazy": "polars: scan_parquet + lazy group_by (the query only)",
    "polars_pandas": "polars: scan_parquet.select(6 columns).collect().to_pandas()",
}


def _rounded(value: Any) -> float | None:
    number = float(value) if value is not None else float("nan")
    return None if number != number else round(number, 6)  # NaN (P1: no weight) as None


def child(name: str, sweep: str) -> dict[str, Any]:
    start = time.perf_counter()
    rows, result = globals()[f"reader_{name}"](sweep)
    wall = time.perf_counter() - start
    result = result.reset_index(drop=True)
    summary = [
        [str(r["model"]), str(r["probe"]), int(r["n"]), _rounded(r["mean_weight"]),
         int(r["malformed"])]
        for _, r in result.iterrows()
    ]  # fmt: skip
    return {"wall_s": wall, "rows": rows, "peak_mib": peak_rss_mib(), "query": summary}


def _run_child(name: str, sweep: str) -> dict[str, Any]:
    return run_in_child("bench_columnar", f"child({name!r}, {sweep!r})", name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sweep", nargs="?", type=Path, help="a sweep folder with records/")
    parser.add_argument("--build", type=Path, help="build the 10^6 folder in this folder")
    parser.add_argument("--copies", type=int, default=100)
    parser.add_argument("--readers", default=",".join(READERS))
    args = parser.parse_args()
    sweep = build(args.build, args.copies) if args.build else args.sweep
    if sweep is None:
        parser.error("give a sweep folder or --build DIR")
    size = sum(p.stat().st_size for p in (sweep / "records").glob("trials-*.parquet"))
    print(f"records: {sweep} ({size / 2**20:.0f} MiB of Parquet)", flush=True)
    if (sweep / BUILT_NOTE).is_file():
        print((sweep / BUILT_NOTE).read_text().strip(), flush=True)
    print("| reader | rows | wall (imports included) | peak RSS | load 1/5/15 min |")
    print("|---|---|---|---|---|")
    answers: dict[str, Any] = {}
    for name in args.readers.split(","):
        package = name.split("_")[0]
        if package in ("duckdb", "polars") and importlib.util.find_spec(package) is None:
            print(f"| {READERS[name]} | not installed (pip install {package}) | | | |")
            continue
        got = _run_child(name, str(sweep))
        answers[name] = got["query"]
        print(
            f"| {READERS[name]} | {got['rows']:,} | {got['wall_s']:.1f} s | "
            f"{got['peak_mib']:.0f} MiB | {load_average()} |",
            flush=True,
        )
    first = next(iter(answers.values()))
    same = all(a == first for a in answers.values())
    print(f"the query's answer is the same for every reader: {'yes' if same else 'NO'}")
    if not same:
        for name, answer in answers.items():
            print(name, answer)


if __name__ == "__main__":
    main()
