"""Benchmark: extracting instance prices from a ~250 MB offer CSV, Polars streaming vs pandas.

Writes a synthetic EC2 offer file with the real header (five metadata rows, then the header,
then rows in the real mix: on-demand, reserved, dedicated, Windows, SQL, capacity reservations,
capacity blocks, EBS), then runs, each in its own fresh subprocess so peak memory is measured
separately (``resource.getrusage(RUSAGE_SELF).ru_maxrss``):

- trntui: ``trntui.pricing.extract.instance_price_rows`` (lazy scan, filter pushed down,
  streaming engine);
- pandas: ``pandas.read_csv(skiprows=5, dtype=str)`` and the same filter.

Prints both timings, the speed ratio and the peak-memory ratio. Targets: >= 5x faster and
<= 0.5x peak memory. pandas is a benchmark-only dependency (``pip install pandas``).

    python benchmarks/bench_price_extract.py [--size-mb 250] [--repeat 3] [--keep FILE]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.test_pricing_support import EC2_HEADER

_FAMILIES = ("m7i", "c7i", "r7i", "p5", "trn2", "g6", "x2idn")
_SIZES = ("large", "xlarge", "2xlarge", "8xlarge", "24xlarge", "48xlarge")
_TYPES = [f"{family}.{size}" for family in _FAMILIES for size in _SIZES]
# (TermType, Tenancy, OS, CapacityStatus, Pre Installed S/W, MarketOption, Unit, lease, option)
_VARIANTS = [
    ("OnDemand", "Shared", "Linux", "Used", "NA", "OnDemand", "Hrs", "", ""),
    ("OnDemand", "Dedicated", "Linux", "Used", "NA", "OnDemand", "Hrs", "", ""),
    ("OnDemand", "Shared", "Windows", "Used", "NA", "OnDemand", "Hrs", "", ""),
    ("OnDemand", "Shared", "Linux", "Used", "SQL Std", "OnDemand", "Hrs", "", ""),
    ("OnDemand", "Shared", "Linux", "UnusedCapacityReservation", "NA", "OnDemand", "Hrs", "", ""),
    ("OnDemand", "Shared", "Linux", "AllocatedCapacityReservation", "NA", "OnDemand", "Hrs", "",
     ""),
    ("OnDemand", "Shared", "Linux", "Used", "NA", "CapacityBlock", "Hrs", "", ""),
    ("Reserved", "Shared", "Linux", "Used", "NA", "OnDemand", "Hrs", "1yr", "No Upfront"),
    ("Reserved", "Shared", "Linux", "Used", "NA", "OnDemand", "Quantity", "3yr", "All Upfront"),
    ("Reserved", "Shared", "RHEL", "Used", "NA", "OnDemand", "Hrs", "1yr", "Partial Upfront"),
]  # fmt: skip


def _row(index: int) -> list[str]:
    instance_type = _TYPES[index % len(_TYPES)]
    term, tenancy, os_name, capacity, software, market, unit, lease, option = _VARIANTS[
        (index // len(_TYPES)) % len(_VARIANTS)
    ]
    sku = f"SKU{index:012d}"
    price = f"{(index % 9973) / 100 + 0.01:.10f}"
    values = dict.fromkeys(EC2_HEADER, "")
    values.update(
        {
            "SKU": sku,
            "OfferTermCode": "JRTCKXETXF" if term == "OnDemand" else "4NA7Y494T4",
            "RateCode": f"{sku}.JRTCKXETXF.6YS6EN2CT7",
            "TermType": term,
            "PriceDescription": f"${price} per {os_name} {instance_type} Instance Hour",
            "EffectiveDate": "2026-11-01T00:00:00Z",
            "StartingRange": "0",
            "EndingRange": "Inf",
            "Unit": unit,
            "PricePerUnit": price,
            "Currency": "USD",
            "LeaseContractLength": lease,
            "PurchaseOption": option,
            "OfferingClass": "standard" if lease else "",
            "Product Family": "Compute Instance",
            "serviceCode": "AmazonEC2",
            "Location": "US East (N. Virginia)",
            "Location Type": "AWS Region",
            "Instance Type": instance_type,
            "Current Generation": "Yes",
            "Instance Family": "General purpose",
            "vCPU": "192",
            "Physical Processor": "Intel Xeon Scalable (Sapphire Rapids)",
            "Clock Speed": "3.2 GHz",
            "Memory": "768 GiB",
            "Storage": "EBS only",
            "Network Performance": "50 Gigabit",
            "Processor Architecture": "64-bit",
            "Tenancy": tenancy,
            "EBS Optimized": "Yes",
            "Operating System": os_name,
            "License Model": "No License required",
            "usageType": f"BoxUsage:{instance_type}",
            "operation": "RunInstances",
            "CapacityStatus": capacity,
            "ClassicNetworkingSupport": "false",
            "Dedicated EBS Throughput": "40000 Mbps",
            "ECU": "NA",
            "Enhanced Networking Supported": "Yes",
            "GPU": "8" if instance_type.startswith("p5") else "",
            "Instance": instance_type.split(".")[0],
            "instanceSKU": f"I{sku}",
            "Intel AVX2 Available": "Yes",
            "Intel AVX Available": "Yes",
            "Intel Turbo Available": "Yes",
            "MarketOption": market,
            "Normalization Size Factor": "384",
            "Physical Cores": "96",
            "Pre Installed S/W": software,
            "Processor Features": "Intel AVX, Intel AVX2, Intel AVX512, Intel Turbo",
            "Region Code": "us-east-1",
            "serviceName": "Amazon Elastic Compute Cloud",
            "VPCNetworkingSupport": "true",
        }
    )
    return [values[name] for name in EC2_HEADER]


def write_offer_file(path: Path, size_mb: int) -> int:
    """Write the file; return the number of price rows."""
    target = size_mb * 1024 * 1024
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(["FormatVersion", "v1.0"])
        writer.writerow(["Disclaimer", "This pricing list is for informational purposes only."])
        writer.writerow(["Publication Date", "2026-11-20T18:02:11Z"])
        writer.writerow(["Version", "20261120180211"])
        writer.writerow(["OfferCode", "AmazonEC2"])
        writer.writerow(EC2_HEADER)
        rows = 0
        while handle.tell() < target:
            block = io.StringIO()
            block_writer = csv.writer(block, quoting=csv.QUOTE_ALL, lineterminator="\n")
            block_writer.writerows(_row(rows + i) for i in range(5000))
            handle.write(block.getvalue())
            rows += 5000
    return rows


def run_polars(path: Path) -> int:
    from trntui.pricing.extract import instance_price_rows

    return instance_price_rows(path).height


_KEPT_COLUMNS = [
    "SKU", "OfferTermCode", "RateCode", "TermType", "EffectiveDate", "Unit", "PricePerUnit",
    "LeaseContractLength", "PurchaseOption", "OfferingClass", "Instance Type",
]  # fmt: skip


def run_pandas(path: Path) -> int:
    """The baseline as stated: ``read_csv(skiprows=5)`` with its defaults ("NA" reads as NaN)."""
    import pandas as pd

    frame = pd.read_csv(path, skiprows=5)
    software = frame["Pre Installed S/W"]
    selected = frame[
        frame["TermType"].isin(["OnDemand", "Reserved"])
        & (frame["Tenancy"] == "Shared")
        & (frame["Operating System"] == "Linux")
        & (frame["CapacityStatus"] == "Used")
        & (software.isna() | (software == "NA"))
        & (frame["MarketOption"] == "OnDemand")
        & (frame["Currency"] == "USD")
        & frame["Instance Type"].notna()
    ][_KEPT_COLUMNS]
    return len(selected)


def run_pandas_text(path: Path) -> int:
    """A tuned pandas for reference: every column as text, no NA guessing (like trntui)."""
    import pandas as pd

    frame = pd.read_csv(path, skiprows=5, dtype=str, keep_default_na=False)
    software = frame["Pre Installed S/W"]
    selected = frame[
        frame["TermType"].isin(["OnDemand", "Reserved"])
        & (frame["Tenancy"] == "Shared")
        & (frame["Operating System"] == "Linux")
        & (frame["CapacityStatus"] == "Used")
        & ((software == "") | (software == "NA"))
        & (frame["MarketOption"] == "OnDemand")
        & (frame["Currency"] == "USD")
        & (frame["Instance Type"] != "")
    ][_KEPT_COLUMNS]
    return len(selected)


_ENGINES = {"polars": run_polars, "pandas": run_pandas, "pandas-text": run_pandas_text}


def child(engine: str, path: Path) -> None:
    """Run one extraction; libraries are imported before the clock starts, for both engines."""
    if engine == "polars":
        import trntui.pricing.extract  # noqa: F401
    else:
        import pandas  # noqa: F401
    started = time.perf_counter()
    rows = _ENGINES[engine](path)
    seconds = time.perf_counter() - started
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(json.dumps({"engine": engine, "seconds": seconds, "peak_kib": peak_kib, "rows": rows}))


def run_child(engine: str, path: Path) -> dict[str, float]:
    output = subprocess.run(
        [sys.executable, __file__, "--child", engine, str(path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(output.strip().splitlines()[-1])


def measure_all(path: Path, repeat: int) -> dict[str, dict[str, float]]:
    """Run the engines in turn, ``repeat`` rounds, so a change in machine load hits all alike.

    Keeps each engine's best time (the least disturbed run), its median, and its largest peak.
    """
    runs: dict[str, list[dict[str, float]]] = {engine: [] for engine in _ENGINES}
    for _ in range(repeat):
        for engine in _ENGINES:
            runs[engine].append(run_child(engine, path))
    return {
        engine: {
            "seconds": min(run["seconds"] for run in engine_runs),
            "median_s": statistics.median(run["seconds"] for run in engine_runs),
            "peak_mib": max(run["peak_kib"] for run in engine_runs) / 1024,
            "rows": engine_runs[0]["rows"],
        }
        for engine, engine_runs in runs.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=250)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="write (or reuse) the offer file here")
    parser.add_argument("--child", nargs=2, metavar=("ENGINE", "FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return 0

    with tempfile.TemporaryDirectory(prefix="trntui-bench-") as folder:
        path = args.keep or Path(folder) / "index.csv"
        if not path.exists():
            started = time.perf_counter()
            rows = write_offer_file(path, args.size_mb)
            print(f"wrote {path} ({os.path.getsize(path) / 1024**2:.0f} MB, {rows:,} rows) "
                  f"in {time.perf_counter() - started:.1f} s")  # fmt: skip
        results = measure_all(path, args.repeat)

    polars_result = results["polars"]
    if len({result["rows"] for result in results.values()}) != 1:
        print("MISMATCH in kept rows: " + ", ".join(f"{k}={v['rows']}" for k, v in results.items()))
        return 1
    print(f"rows kept by each: {polars_result['rows']:,}")
    labels = {
        "polars": "trntui (polars, blocks)",
        "pandas": "pandas read_csv(skiprows=5)",
        "pandas-text": "pandas, dtype=str (tuned)",
    }
    for engine, result in results.items():
        print(
            f"{labels[engine]:<29} best {result['seconds']:6.2f} s  median "
            f"{result['median_s']:6.2f} s  peak {result['peak_mib']:6.0f} MiB"
        )
    ok = True
    for engine in ("pandas", "pandas-text"):
        speed = results[engine]["seconds"] / polars_result["seconds"]
        memory = polars_result["peak_mib"] / results[engine]["peak_mib"]
        print(
            f"vs {labels[engine]}: {speed:.1f}x faster (best times), {memory:.2f}x the peak memory"
        )
        if engine == "pandas":
            ok = speed >= 5 and memory <= 0.5
    print(
        "targets (vs the stated baseline): >= 5x faster, <= 0.5x memory:", "met" if ok else "MISSED"
    )
    return 0 if ok else 3


if __name__ == "__main__":
    raise SystemExit(main())
