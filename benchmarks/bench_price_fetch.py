"""``trntui price fetch`` of a 250 MB offer file from a loopback server, against a bare download.

Writes the synthetic EC2 offer file of ``bench_price_extract.py`` (the real header and row mix),
serves it gzip-compressed from 127.0.0.1 with its region index, as the AWS Price List serves a
region's file, then runs pairs side by side (alternating, so machine noise hits both alike),
each a fresh process:

* ``trntui price fetch --region us-east-1 --json`` with a cold cache (``TRNTUI_CACHE_DIR`` a new
  empty folder each time): start-up, the region index, the download (gunzipped, checked,
  written to the cache), the extraction of every instance type's quotes, the JSON printed;
* a bare download of the same bytes: ``httpx.stream`` with ``Accept-Encoding: gzip``, each
  decoded chunk written to a file.

The order alternates between rounds: a command that runs right after trntui's download (263 MB
written and flushed to disk) can be slowed by the disk still settling it, which measured the
bare download at 0.6-0.85 s instead of 0.38 s when it always came second. Each round's cache
and download are removed after it, so no round starts with another's files on disk.

Prints the median seconds and CPU seconds and the largest peak memory (``ru_maxrss`` of each
child) of each, and trntui's ratio to the bare download (target: at most 3x).
``--quiet-start 0.9`` starts each round only once the machine's CPUs were at least 90% idle
over 0.4 s (waiting up to 90 s; the rounds that started without it are counted): on a shared
machine, others' work then falls between rounds rather than inside them. ``--floor`` also runs
``FLOOR``: trntui's imports and own download with no parse, what the fetch cannot go below.
``--yardsticks polars duckdb pandas`` also runs the simple ways of getting the same rows
(``YARDSTICKS``: each downloads the same bare way, then parses), for the target "faster than
each, at no more than half the leanest one's peak memory". DuckDB and pandas are never
trntui's dependencies: install them in an environment of their own and name its Python with
``--yardstick-python``.

    python benchmarks/bench_price_fetch.py [--size-mb 250] [--pairs 5] [--types TYPE ...]
        [--floor] [--yardsticks polars duckdb pandas] [--yardstick-python PYTHON]
        [--quiet-start FRACTION]
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import http.server
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_cli_start import USER_ENV, child_usage, trntui_command
from benchmarks.bench_price_extract import write_offer_file
from tests.test_pricing_support import PUBLICATION_DATE, version_path

REGION = "us-east-1"
TARGET = 3.0
INDEX_PATH = "/offers/v1.0/aws/AmazonEC2/current/region_index.json"
CSV_PATH = version_path("AmazonEC2", REGION).removesuffix(".json") + ".csv"

BARE_DOWNLOAD = """
import sys
import httpx
with httpx.stream("GET", sys.argv[1], headers={"Accept-Encoding": "gzip"}) as response:
    response.raise_for_status()
    with open(sys.argv[2], "wb") as handle:
        for chunk in response.iter_bytes():
            handle.write(chunk)
"""

FLOOR = """
import polars as pl
import trntui.cli  # noqa: F401  (as the command starts)
import trntui.commands.price.fetch  # noqa: F401  (what the fetch imports)
from trntui.pricing.cache import offer_csv_path
from trntui.pricing.client import PriceListClient
from trntui.pricing.settings import PricingSettings
settings = PricingSettings.from_env().started()
with PriceListClient(settings) as client:
    url = client.offer_csv_url("AmazonEC2", "us-east-1")
    target = offer_csv_path(settings.cache_path, "AmazonEC2", "us-east-1")
    client.download(url, target, max_bytes=settings.max_offer_bytes, validate=lambda path: None)
two_rows = b'"OnDemand","p5.48xlarge"\\n"Reserved","p4d.24xlarge"\\n'
schema = {"TermType": pl.String, "Instance Type": pl.String}
rows = pl.scan_csv(two_rows, has_header=False, schema=schema)
print(rows.filter(pl.col("TermType") == "OnDemand").collect(engine="streaming").height)
"""
"""What a fetch cannot do without, in trntui's environment: its imports, the region index and
trntui's own download of the offer (gunzipped, written to the cache, synced), and one Polars
streaming CSV query of two rows (the engine's and the CSV reader's start). What the fetch adds
to it is the parse of the file in blocks, the quotes and the JSON."""

_WHERE = (
    ("TermType", ("OnDemand", "Reserved")),
    ("Tenancy", ("Shared",)),
    ("Operating System", ("Linux",)),
    ("CapacityStatus", ("Used",)),
    ("Pre Installed S/W", ("NA", "")),
    ("MarketOption", ("OnDemand",)),
    ("Currency", ("USD",)),
)
"""The rows an instance quote reads (``pricing.extract.instances``), written as plain column
conditions for the yardsticks; ``Instance Type`` is added for the types asked for."""

_KEPT = (
    "SKU", "OfferTermCode", "RateCode", "TermType", "EffectiveDate", "Unit", "PricePerUnit",
    "LeaseContractLength", "PurchaseOption", "OfferingClass", "Instance Type",
)  # fmt: skip

YARDSTICKS = {
    "polars": """
import polars as pl
conditions = [pl.col(c).is_in(list(v)) for c, v in WHERE]
if TYPES:
    conditions.append(pl.col("Instance Type").is_in(TYPES))
else:
    conditions.append(pl.col("Instance Type") != "")
rows = (
    pl.scan_csv(PATH, skip_rows=5, infer_schema=False)
    .filter(pl.all_horizontal(conditions))
    .select(KEPT)
    .collect(engine="streaming")
)
print(rows.height)
""",
    "duckdb": """
import duckdb
quoted = lambda c: '"' + c + '"'
where = [f"{quoted(c)} IN ({', '.join('?' * len(v))})" for c, v in WHERE]
values = [x for _, v in WHERE for x in v]
if TYPES:
    where.append(f'"Instance Type" IN ({", ".join("?" * len(TYPES))})')
    values += TYPES
else:
    where.append(quoted("Instance Type") + " <> ''")
query = (
    f"SELECT {', '.join(map(quoted, KEPT))} FROM read_csv(?, skip=5, header=true, "
    f"all_varchar=true) WHERE {' AND '.join(where)}"
)
print(len(duckdb.connect().execute(query, [PATH, *values]).fetchall()))
""",
    "pandas": """
import pandas as pd
frame = pd.read_csv(PATH, skiprows=5, dtype=str, keep_default_na=False)
selected = frame
for column, values in WHERE:
    selected = selected[selected[column].isin(values)]
if TYPES:
    selected = selected[selected["Instance Type"].isin(TYPES)]
else:
    selected = selected[selected["Instance Type"] != ""]
print(len(selected[list(KEPT)]))
""",
}
"""The simple ways to get the same quote rows, each in a process of its own that first
downloads the file as ``BARE_DOWNLOAD`` does (so each row is download plus parse, like trntui's
fetch), run by the yardstick Python (``--yardstick-python``: DuckDB and pandas are never
trntui's dependencies; install them in an environment of their own):

* ``polars``: the plain Polars way, ``scan_csv`` with the filter and the columns pushed down,
  the streaming engine, after the download;
* ``duckdb``: DuckDB's ``read_csv`` with the same filter in SQL;
* ``pandas``: ``read_csv`` of every column as text and the same filter."""


def yardstick(name: str, url: str, path: Path, types: list[str]) -> list[str]:
    """The argument list of a ``python -c`` program: the bare download, then ``name``'s parse."""
    program = (
        BARE_DOWNLOAD
        + f"PATH, TYPES = sys.argv[2], {types!r}\n"
        + f"WHERE, KEPT = {_WHERE!r}, {list(_KEPT)!r}\n"
        + YARDSTICKS[name]
    )
    return ["-c", program, url, str(path)]


def _site(csv_gzip: bytes) -> dict[str, tuple[bytes, str, bool]]:
    """URL path -> (body, content type, gzip-encoded)."""
    index = {
        "formatVersion": "v1.0",
        "publicationDate": PUBLICATION_DATE,
        "regions": {
            REGION: {"regionCode": REGION, "currentVersionUrl": version_path("AmazonEC2", REGION)}
        },
    }
    return {
        INDEX_PATH: (json.dumps(index).encode(), "application/json", False),
        CSV_PATH: (csv_gzip, "text/csv", True),
    }


@contextlib.contextmanager
def serving(site: dict[str, tuple[bytes, str, bool]]) -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            return

        def do_GET(self) -> None:
            found = site.get(self.path.split("?", 1)[0])
            if found is None:
                self.send_error(404)
                return
            body, content_type, gzipped = found
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("ETag", f'"{len(body)}"')
            if gzipped:
                self.send_header("Content-Encoding", "gzip")
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Seconds, peak memory (MiB) and CPU seconds of one child process."""
    seconds, usage = child_usage(command, env)
    return seconds, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def _idle_fraction(over: float = 0.4) -> float:
    """How idle the machine's CPUs were over the next ``over`` seconds (``/proc/stat``)."""

    def read() -> tuple[int, int]:
        with open("/proc/stat") as stat:
            values = [int(value) for value in stat.readline().split()[1:]]
        return values[3] + values[4], sum(values)  # idle and I/O wait, all

    idle, total = read()
    time.sleep(over)
    idle_after, total_after = read()
    return (idle_after - idle) / max(1, total_after - total)


def wait_quiet(fraction: float, limit: float = 90.0) -> bool:
    """Wait until the CPUs were at least ``fraction`` idle; False if ``limit`` s passed first."""
    deadline = time.monotonic() + limit
    while _idle_fraction() < fraction:
        if time.monotonic() > deadline:
            return False
    return True


def prepare(target: Path, size_mb: int) -> None:
    """Write the offer file gzip-compressed to ``target``; print its rows and size (MB)."""
    plain = target.with_suffix("")
    rows = write_offer_file(plain, size_mb)
    with plain.open("rb") as source, gzip.open(target, "wb", compresslevel=6) as packed:
        shutil.copyfileobj(source, packed, 1 << 20)
    print(rows, round(plain.stat().st_size / 1e6))
    plain.unlink()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=250)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument(
        "--yardsticks",
        nargs="*",
        default=[],
        choices=sorted(YARDSTICKS),
        help="also time these ways of getting the same rows (see YARDSTICKS)",
    )
    parser.add_argument(
        "--yardstick-python",
        default=sys.executable,
        help="the Python that runs the yardsticks (one with polars, duckdb, pandas, httpx)",
    )
    parser.add_argument(
        "--types",
        nargs="*",
        default=None,
        metavar="TYPE",
        help="fetch only these instance types, as the app does for its targets (default: "
        "every type of the region); e.g. --types trn2.48xlarge p5.48xlarge",
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also time what the fetch cannot do without (FLOOR)",
    )
    parser.add_argument(
        "--quiet-start",
        type=float,
        default=0.0,
        metavar="FRACTION",
        help="start each round once the CPUs were at least this idle (e.g. 0.9; see above)",
    )
    parser.add_argument("--prepare", nargs=2, metavar=("FILE", "MB"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.prepare:
        prepare(Path(args.prepare[0]), int(args.prepare[1]))
        return 0
    trntui = trntui_command()
    with tempfile.TemporaryDirectory(prefix="trntui-bench-") as name:
        folder = Path(name)
        offer = folder / "offer.csv.gz"
        # Made by a child: a process's peak memory counts its parent's at the time it was
        # started, so this process never holds the file.
        made = subprocess.run(
            [sys.executable, __file__, "--prepare", str(offer), str(args.size_mb)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        compressed = offer.read_bytes()
        print(f"offer file: {made[1]} MB, {made[0]} rows, {len(compressed) / 1e6:.0f} MB gzip")
        with serving(_site(compressed)) as base_url:
            # As a user's command runs (bytecode cache on); the warm-up round writes it.
            env = USER_ENV | {"TRNTUI_PRICING_URL": base_url}
            download = folder / "download.csv"
            bare = [sys.executable, "-c", BARE_DOWNLOAD, base_url + CSV_PATH, str(download)]
            rounds: dict[str, list[tuple[float, float, float]]] = {"trntui": [], "bare": []}
            not_quiet = 0
            commands = {"bare": bare}
            if args.floor:
                rounds["floor"] = []
            for name in args.yardsticks:
                rounds[name] = []
                commands[name] = [
                    args.yardstick_python,
                    *yardstick(name, base_url + CSV_PATH, download, args.types or []),
                ]
            for index in range(-1, args.pairs):  # round -1 warms the caches, not counted
                if args.quiet_start and not wait_quiet(args.quiet_start) and index >= 0:
                    not_quiet += 1
                cache = folder / f"cache{index}"
                fetch = [*trntui, "price", "fetch", "--region", REGION, "--json"]
                for wanted in args.types or ():
                    fetch += ["--instance-type", wanted]
                runs = [("trntui", fetch, env | {"TRNTUI_CACHE_DIR": str(cache)})]
                if args.floor:
                    floor_env = env | {"TRNTUI_CACHE_DIR": str(cache) + "-floor"}
                    runs.append(("floor", [sys.executable, "-c", FLOOR], floor_env))
                runs += [(label, command, env) for label, command in commands.items()]
                if index % 2:  # every other round the other way round (see the docstring)
                    runs.reverse()
                results = {}
                for label, command, its_env in runs:
                    results[label] = timed(command, its_env)
                    download.unlink(missing_ok=True)
                    shutil.rmtree(cache, ignore_errors=True)
                    shutil.rmtree(str(cache) + "-floor", ignore_errors=True)
                if index >= 0:
                    for label, result in results.items():
                        rounds[label].append(result)
    medians = {label: statistics.median(s for s, _, _ in runs) for label, runs in rounds.items()}
    cpus = {label: statistics.median(c for _, _, c in runs) for label, runs in rounds.items()}
    peaks = {label: max(m for _, m, _ in runs) for label, runs in rounds.items()}
    scope = " ".join(args.types) if args.types else "every instance type of the region"
    print(
        f"{args.pairs} pairs, median seconds and CPU seconds, largest peak memory; trntui "
        f"fetches {scope}"
    )
    if args.quiet_start:
        print(f"rounds started without {args.quiet_start:.0%} idle CPUs: {not_quiet}")
    for label in rounds:
        print(
            f"  {label:7} {medians[label]:6.3f} s  CPU {cpus[label]:6.3f} s  "
            f"{peaks[label]:6.0f} MiB"
        )
    ratio = medians["trntui"] / medians["bare"]
    verdict = "meets" if ratio <= TARGET else "misses"
    print(
        f"trntui / bare download: {ratio:.2f}x ({verdict} <= {TARGET:g}x; CPU "
        f"{cpus['trntui'] / cpus['bare']:.2f}x)"
    )
    if args.floor:
        print(
            f"trntui / floor: time {medians['trntui'] / medians['floor']:.2f}x, peak memory "
            f"{peaks['trntui'] / peaks['floor']:.2f}x ({peaks['trntui'] - peaks['floor']:.0f} "
            "MiB above it)"
        )
    if args.yardsticks:
        fastest = min(medians[name] for name in args.yardsticks)
        leanest = min(peaks[name] for name in args.yardsticks)
        for name in args.yardsticks:
            print(
                f"trntui / {name}: time {medians['trntui'] / medians[name]:.2f}x (CPU "
                f"{cpus['trntui'] / cpus[name]:.2f}x), peak memory "
                f"{peaks['trntui'] / peaks[name]:.2f}x"
            )
        print(
            f"faster than every yardstick: {'yes' if medians['trntui'] < fastest else 'no'}; "
            f"peak memory {peaks['trntui'] / leanest:.2f}x the leanest's (target <= 0.5x)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
