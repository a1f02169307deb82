"""trntui's tests. Every file a test reads lives inside this repository: ``tests/data`` and the
sample project ``sample_runs/llama2-70b-lora`` (tests work on copies of it, see ``conftest``)."""

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
MLPERF_DATA = DATA / "mlperf"
"""Real MLPerf Training result logs (Apache-2.0, see ``data/mlperf/LICENSE.md``)."""
SAMPLE = REPO / "sample_runs" / "llama2-70b-lora"
"""The sample project. Tests never open it in place (that would take its lock): they copy it."""
HANG_GUARD_S = 60.0
"""How long a test waits for something that must happen before calling it a hang. Only a stuck
test waits this long: a wait for a condition returns as soon as it holds, however slow or loaded
the machine is."""
SIZE = (80, 24)
"""Terminal size of every UI test and snapshot (80x24, as the README says)."""


def copy_sample(target: Path, *leave_out: str) -> Path:
    """Copy the sample project to ``target`` without its lock file (and ``leave_out``)."""
    shutil.copytree(SAMPLE, target, ignore=shutil.ignore_patterns(".trntui.lock", *leave_out))
    return target
