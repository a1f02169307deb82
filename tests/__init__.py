"""trntui's tests. Every file a test reads lives inside this folder (``tests/data``)."""

from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
MLPERF_DATA = DATA / "mlperf"
"""Real MLPerf Training result logs (Apache-2.0, see ``data/mlperf/LICENSE.md``)."""
