"""MLPerf scoring against the officially published times (PUBLISHED.csv, read here)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from tests import MLPERF_DATA
from trntui.core.errors import InputFileError
from trntui.core.mlperf_score import (
    MlperfRunTime,
    benchmark_of,
    max_dropped_runs,
    olympic_score,
    read_scaling_factor,
    required_runs,
    run_minutes,
)
from trntui.importers import import_file

DATA = MLPERF_DATA
PUBLISHED = DATA / "PUBLISHED.csv"


def published_sets() -> list[tuple[str, int, float | None]]:
    table = pl.read_csv(PUBLISHED)
    return [
        (row["set"], row["runs"], row["published_minutes"]) for row in table.iter_rows(named=True)
    ]


def score_folder(folder: Path):
    runs = [
        MlperfRunTime(str(path), run_minutes(import_file(path).timeline))
        for path in sorted(folder.glob("result_*.txt"))
    ]
    return runs, olympic_score(runs, read_scaling_factor(folder))


@pytest.mark.parametrize(("name", "runs", "published"), published_sets())
def test_score_equals_published(name: str, runs: int, published: float | None) -> None:
    results, score = score_folder(DATA / name)
    assert len(results) == runs
    if published is None:
        assert all(r.minutes is None for r in results)
        assert score.minutes is None
    else:
        assert round(score.minutes, 3) == round(published, 3)


def test_unfinished_run_is_not_a_completed_run() -> None:
    tiny = DATA / "v4.0/tinycorp/results/tinybox_green/resnet/result_0.txt"
    assert run_minutes(import_file(tiny).timeline) is None


def test_olympic_rules() -> None:
    runs = [MlperfRunTime(str(i), m) for i, m in enumerate([10.0, 12.0, 11.0, 30.0, 9.0])]
    assert olympic_score(runs).minutes == pytest.approx((10 + 11 + 12) / 3)
    one_failed = [*runs[:4], MlperfRunTime("f", None)]
    # The failure is the slowest: only the fastest success is dropped.
    assert olympic_score(one_failed).minutes == pytest.approx((11 + 12 + 30) / 3)
    two_failed = [*runs[:3], MlperfRunTime("f", None), MlperfRunTime("g", None)]
    assert olympic_score(two_failed).minutes is None
    assert olympic_score(runs, scaling_factor=2.0).minutes == pytest.approx(22.0)
    assert olympic_score([]).minutes is None


def test_benchmark_and_runs_dropped() -> None:
    """The summarizer names the benchmark by its folder; the log's own name comes first here."""
    assert benchmark_of({"submission_benchmark": "unet3d"}, "x/resnet/result_0.txt") == "unet3d"
    assert benchmark_of({}, "results/sys/unet3d/result_0.txt") == "unet3d"
    assert benchmark_of({}, "results/sys/mask/result_0.txt") == "maskrcnn"
    assert [max_dropped_runs(b) for b in ("unet3d", "resnet", None)] == [4, 1, 1]
    runs = [MlperfRunTime(str(m), float(m)) for m in range(1, 11)]
    assert olympic_score(runs, max_dropped=4).minutes == pytest.approx((5 + 6) / 2)


def test_scaling_file(tmp_path: Path) -> None:
    assert read_scaling_factor(tmp_path) == 1.0
    (tmp_path / "scaling.json").write_text(json.dumps({"scaling_factor": 1.25}))
    assert read_scaling_factor(tmp_path) == 1.25
    (tmp_path / "scaling.json").write_text("{oops")
    with pytest.raises(InputFileError):
        read_scaling_factor(tmp_path)
    (tmp_path / "scaling.json").write_text(json.dumps({"scaling_factor": -1}))
    with pytest.raises(InputFileError) as caught:
        read_scaling_factor(tmp_path)
    assert caught.value.key == "scaling_factor"


def test_a_set_with_fewer_runs_than_a_submission_holds_says_so() -> None:
    """MLCommons' score tool averages a short set but warns it is not a submission; so do we."""
    assert (required_runs("llama2_70b_lora"), required_runs("gpt3"), required_runs("x")) == (
        10,
        3,
        None,
    )
    # The current benchmarks: a complete 405B set is 3 runs (MLCommons' RCPs hold 6 = 2 x 3).
    assert [required_runs(b) for b in ("llama31_405b", "llama31_8b", "flux1")] == [3, 10, 10]
    three = [MlperfRunTime(f"r{n}", minutes) for n, minutes in enumerate((30.0, 28.0, 29.0))]
    short = olympic_score(three, required=10)
    assert short.minutes == pytest.approx(29.0) and not short.complete
    assert "from 3 of the 10 runs" in short.text() and "29.000" in short.text()
    full = olympic_score(three, required=3)
    assert full.complete and full.text().startswith("29.000 min")
    assert "from 3" not in full.text()
    unknown = olympic_score(three)
    assert not unknown.complete and "not known" in unknown.text()


def test_a_missing_score_says_why() -> None:
    ok = [MlperfRunTime("a", 10.0), MlperfRunTime("b", 11.0)]
    failed = [MlperfRunTime("c", None), MlperfRunTime("d", None)]
    too_many = olympic_score([*ok, *failed], required=4)
    assert too_many.minutes is None and "2 of 4 runs failed" in too_many.text()
    alone = olympic_score(ok[:1], required=5)
    assert alone.minutes is None
    assert "1 successful run leaves nothing to average" in alone.text()


@pytest.mark.parametrize("factor", ["NaN", "Infinity", "-Infinity", "1e308", "1e999", "0"])
def test_a_scaling_factor_that_is_not_a_plausible_number_is_refused(
    tmp_path: Path, factor: str
) -> None:
    """Issue 30, item 14: Python's JSON reader takes NaN and Infinity, and 1e308 is finite,
    so each made the score "nan min" and `runs --json` print a bare NaN."""
    (tmp_path / "scaling.json").write_text(f'{{"scaling_factor": {factor}}}')
    with pytest.raises(InputFileError, match="scaling_factor"):
        read_scaling_factor(tmp_path)


def test_json_output_is_always_json() -> None:
    """A value that is not finite is written as null (not known), never as a bare NaN."""
    from trntui.commands import json_pieces

    document = {"score": float("nan"), "runs": [{"min": float("inf"), "n": 3}], "ok": [1.5]}
    text = "".join(json_pieces(document))
    assert json.loads(text) == {"score": None, "runs": [{"min": None, "n": 3}], "ok": [1.5]}
    assert "NaN" not in text and "Infinity" not in text
