"""MLPerf importer against the real MLCommons result logs in tests/data/mlperf."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import MLPERF_DATA
from trntui.core.errors import InputFileError
from trntui.core.timeline import TIMELINE_SCHEMA, Kind
from trntui.importers import detect_format, import_file

DATA = MLPERF_DATA
LOGS = sorted(DATA.rglob("result_*.txt"))
assert LOGS, f"no MLPerf result logs under {DATA}"  # never a silently empty parametrization
DELL = DATA / "v3.0/Dell/results/XE9680x8H100-SXM-80GB/resnet"
TINY = DATA / "v4.0/tinycorp/results/tinybox_green/resnet/result_0.txt"


def raw_events(path: Path) -> list[dict]:
    """An independent reading of the file: every MLLOG JSON record, in file order."""
    events = []
    for line in path.read_text().splitlines():
        match = re.search(r":::MLLOG (\{.*\})\s*$", line)
        if match:
            events.append(json.loads(match.group(1)))
    return events


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_real_logs_import_with_run_times_from_the_file(path: Path) -> None:
    run = import_file(path)
    assert detect_format(path) == "mlperf"
    assert run.timeline.schema == TIMELINE_SCHEMA
    events = raw_events(path)
    first_ms = min(e["time_ms"] for e in events)
    start_ms = next(e["time_ms"] for e in events if e["key"] == "run_start")
    starts = run.timeline.filter(pl.col("kind") == Kind.RUN_START)
    assert starts["t_s"].to_list() == [pytest.approx((start_ms - first_ms) / 1000.0)]
    stops = [e for e in events if e["key"] == "run_stop"]
    got = run.timeline.filter(pl.col("kind") == Kind.RUN_STOP)
    if stops:
        assert got["t_s"][0] == pytest.approx((stops[0]["time_ms"] - first_ms) / 1000.0)
        assert got["status"][0] == stops[0]["metadata"]["status"]
    else:
        assert got.is_empty()
    evals = [e["value"] for e in events if e["key"] == "eval_accuracy"]
    assert run.timeline.filter(pl.col("kind") == Kind.EVAL)["metric"].to_list() == evals
    assert run.metadata.sha256 and len(run.metadata.sha256) == 64


def test_aborted_and_unfinished_runs_keep_their_state() -> None:
    aborted = import_file(DELL / "result_1.txt").timeline
    assert aborted.filter(pl.col("kind") == Kind.RUN_STOP)["status"].to_list() == ["aborted"]
    unfinished = import_file(TINY)
    assert unfinished.timeline.filter(pl.col("kind") == Kind.RUN_STOP).is_empty()
    assert any("no run_stop" in note for note in unfinished.metadata.notes)


def test_duplicate_ranks_and_out_of_order_lines_give_the_same_timeline(tmp_path: Path) -> None:
    source = DELL / "result_0.txt"
    lines = [line for line in source.read_text().splitlines() if ":::MLLOG" in line]
    rng = random.Random(3)
    mixed = []
    for line in lines:
        mixed.extend([f"0: {line}", f"1: {line}"])
    # Swap neighbouring lines here and there: ranks flush their output out of order.
    for i in range(0, len(mixed) - 3, 7):
        j = i + rng.randint(1, 2)
        mixed[i], mixed[j] = mixed[j], mixed[i]
    noisy = tmp_path / "ranks.txt"
    noisy.write_text("\n".join(mixed) + "\n")
    plain = import_file(source).timeline
    merged = import_file(noisy)
    assert merged.timeline.height == plain.height
    assert (
        merged.timeline.select("t_s", "kind")
        .sort("t_s", "kind")
        .equals(plain.select("t_s", "kind").sort("t_s", "kind"))
    )
    assert any("duplicate" in note for note in merged.metadata.notes)


def test_truncated_record_names_its_line(tmp_path: Path) -> None:
    text = (DELL / "result_2.txt").read_text()
    lines = text.splitlines()
    cut_at = max(i for i, line in enumerate(lines) if ":::MLLOG" in line)
    truncated = tmp_path / "cut.txt"
    truncated.write_text("\n".join([*lines[:cut_at], lines[cut_at][:60]]))
    with pytest.raises(InputFileError) as caught:
        import_file(truncated)
    assert caught.value.line == cut_at + 1
    assert "cut.txt" in str(caught.value)


def test_a_megatron_log_forced_as_mlperf_is_refused(tmp_path: Path) -> None:
    from tests import loggen

    path = tmp_path / "megatron.log"
    loggen.write_megatron(path)
    with pytest.raises(InputFileError) as caught:
        import_file(path, format="mlperf")
    assert caught.value.expected


_record = st.fixed_dictionaries(
    {
        "key": st.sampled_from(
            ["run_start", "run_stop", "eval_accuracy", "epoch_stop", "tracked_stats", "x"]
        ),
        "time_ms": st.one_of(st.integers(0, 2**53), st.floats(allow_nan=True), st.text()),
        "value": st.one_of(
            st.none(), st.floats(), st.text(), st.dictionaries(st.text(), st.floats())
        ),
        "metadata": st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {"status": st.text(), "epoch_num": st.one_of(st.integers(), st.floats())}
            ),
        ),
    }
)
_line = st.one_of(
    _record.map(lambda r: ":::MLLOG " + json.dumps(r)),
    _record.map(lambda r: "3: :::MLLOG " + json.dumps(r)[: len(json.dumps(r)) // 2]),
    st.text(max_size=80),
)


@settings(max_examples=150)
@given(lines=st.lists(_line, max_size=12), garbage=st.binary(max_size=40))
def test_any_input_imports_or_raises_input_file_error(
    tmp_path: Path, lines: list[str], garbage: bytes
) -> None:
    path = tmp_path / "fuzz.txt"
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass") + garbage)
    try:
        run = import_file(path, format="mlperf")
    except InputFileError as error:
        assert str(path) in str(error)
    else:
        assert run.timeline.schema == TIMELINE_SCHEMA


def test_an_mllog_record_far_longer_than_any_real_one_is_refused_naming_its_line(
    tmp_path: Path,
) -> None:
    """Issue 30, item 15: a log of 18 lines of 15 MB peaked at 1.9 GB while its records were
    decoded. A record is refused by its length before any is decoded."""
    from trntui.importers.mlperf.run import MAX_RECORD_BYTES

    start = ':::MLLOG {"key": "init_start", "time_ms": 1700000000000, "value": null}\n'
    huge = (
        ':::MLLOG {"key": "submission_org", "time_ms": 1700000000001, "value": "'
        + "x" * MAX_RECORD_BYTES
        + '"}\n'
    )
    log = tmp_path / "result_0.txt"
    log.write_text(start + huge + start)
    with pytest.raises(InputFileError, match="an MLLOG record of 65,6") as raised:
        import_file(log)
    assert raised.value.line == 2


def test_an_epoch_number_beyond_any_counter_is_not_a_crash(tmp_path: Path) -> None:
    """Found by the fuzzing test above: an epoch_num of 2**63 - 512 overflowed the timeline's
    integer column (a Polars InvalidOperationError, not an InputFileError)."""
    log = tmp_path / "result_0.txt"
    log.write_text(
        ':::MLLOG {"key": "eval_accuracy", "time_ms": 0, "value": null, '
        '"metadata": {"status": "", "epoch_num": 9223372036854775296}}\n'
    )
    (epoch,) = import_file(log).timeline["epoch"].to_list()
    assert epoch is None  # no counter runs that far: not known, never wrapped around
