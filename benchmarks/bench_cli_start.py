"""Command start-up: what a user waits for before a command answers, whole process.

Runs pairs side by side, alternating so machine noise hits both alike, and prints the median of
each and their ratio (issue 15's targets in brackets):

* ``trntui --version`` vs ``python -c "import polars"`` (<= 1x: loads neither Polars nor Textual);
* ``trntui estimate SAMPLE --json`` vs ``python -c "import polars"`` (<= 1.5x);
* for that row, the modules the estimate loads imported on their own, with no project read and
  nothing computed: the part of the estimate's start that is loading its code.

Run: ``python benchmarks/bench_cli_start.py [PAIRS]`` (default 7 pairs) from the repository root.

Every command runs as on a user's machine: with Python's bytecode cache (``USER_ENV`` drops a
``PYTHONDONTWRITEBYTECODE`` set in this shell; a development machine may set it, an installed
package never runs that way), after one warm-up run that also writes the cache.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs" / "llama2-70b-lora"


def trntui_command() -> list[str]:
    script = Path(sys.executable).with_name("trntui")
    return [str(script)] if script.exists() else [shutil.which("trntui") or "trntui"]


USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {
    "NO_COLOR": "1"
}
"""The environment a user's command runs in (see the module docstring)."""


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=USER_ENV)
    return time.perf_counter() - start


LAUNCHER = """
import json, os, subprocess, sys, time
start = time.perf_counter()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
seconds = time.perf_counter() - start
print(json.dumps([seconds, os.waitstatus_to_exitcode(status), usage.ru_utime, usage.ru_stime,
                  usage.ru_maxrss]))
"""
"""Starts a command and reports its wall seconds, exit code and ``os.wait4`` usage. A child's
peak memory (``ru_maxrss``) starts at its parent's resident size when it was spawned (Linux
keeps the high-water mark across fork and exec): started by this small process, a child's
peak is its own, not the benchmark's (which holds Polars and the tables it read)."""


def child_usage(command: list[str], env: dict[str, str] = USER_ENV) -> tuple[float, Any]:
    """Wall seconds and the resource usage (``os.wait4``'s: ``ru_utime``, ``ru_stime``,
    ``ru_maxrss``) of one child process, started by ``LAUNCHER``; a failing child stops the
    benchmark."""
    report = subprocess.run(
        [sys.executable, "-c", LAUNCHER, *command], env=env, capture_output=True, text=True
    )
    if report.returncode != 0:
        raise SystemExit(f"the launcher of {command[:3]} failed: {report.stderr}")
    seconds, code, user, system, peak = json.loads(report.stdout)
    if code != 0:
        raise SystemExit(f"{command[:3]} failed with status {code}: {report.stderr}")
    return seconds, SimpleNamespace(ru_utime=user, ru_stime=system, ru_maxrss=peak)


def pairs(command: list[str], yardstick: list[str], count: int) -> tuple[float, float]:
    timed(command), timed(yardstick)  # warm the page and bytecode caches for both
    ours, theirs = [], []
    for _ in range(count):
        ours.append(timed(command))
        theirs.append(timed(yardstick))
    return statistics.median(ours), statistics.median(theirs)


ESTIMATE_MODULES = """
import contextlib, io, sys
from trntui.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    main(["estimate", sys.argv[1], "--json"])
print(" ".join(sorted(name for name in sys.modules if name.split(".")[0] == "trntui")))
"""
"""Prints the trntui modules ``trntui estimate PROJECT --json`` loads."""


def estimate_imports(project: Path) -> list[str]:
    """A command that imports what ``trntui estimate`` loads (Polars with it) and stops: no
    project read, nothing computed. How much of the estimate's start is loading its code."""
    found = subprocess.run(
        [sys.executable, "-c", ESTIMATE_MODULES, str(project)],
        check=True,
        capture_output=True,
        text=True,
        env=USER_ENV,
    ).stdout.split()
    return [sys.executable, "-c", f"import {', '.join(found)}"]


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    trntui = trntui_command()
    polars = [sys.executable, "-c", "import polars"]
    rows = [
        ("trntui --version", [*trntui, "--version"], 1.0),
        ("trntui estimate SAMPLE --json", [*trntui, "estimate", str(SAMPLE), "--json"], 1.5),
        ("  its modules, imported only", estimate_imports(SAMPLE), None),
    ]
    print(f"{count} pairs each, median seconds; yardstick: python -c 'import polars'")
    for label, command, target in rows:
        ours, theirs = pairs(command, polars, count)
        ratio = ours / theirs
        verdict = (
            "" if target is None else f" ({'meets' if ratio <= target else 'misses'} <= {target})"
        )
        print(f"{label:32} {ours:6.3f} s vs {theirs:6.3f} s  ratio {ratio:4.2f}{verdict}")


if __name__ == "__main__":
    main()
