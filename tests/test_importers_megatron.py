"""Megatron-LM importer against generated logs whose truth is the generator's parameters."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import loggen
from trntui.core.errors import InputFileError
from trntui.core.timeline import TIMELINE_SCHEMA, ImportedRun, Kind, TimeSource
from trntui.importers import _base as importer_base
from trntui.importers import detect_format, import_file
from trntui.importers._base import read_source
from trntui.importers.megatron import iterations as megatron_iterations
from trntui.importers.megatron import run as megatron_run

SPEC = loggen.MegatronSpec()
_THROUGHPUT_FIELD = r" \| throughput per GPU \(TFLOP/s/GPU\): [0-9.]+"


@pytest.fixture(scope="module")
def stamped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, loggen.Truth]:
    path = tmp_path_factory.mktemp("megatron") / "stamped.log"
    return path, loggen.write_megatron(path, SPEC)


@pytest.fixture(scope="module")
def unstamped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, loggen.Truth]:
    path = tmp_path_factory.mktemp("megatron") / "plain.log"
    return path, loggen.write_megatron(path, replace(SPEC, timestamps=False))


def expected_logged_iterations() -> list[int]:
    """Iterations printed: every log interval to the crash, then again from the checkpoint."""
    assert SPEC.crash_at is not None
    last_save = SPEC.crash_at - SPEC.crash_at % SPEC.save_interval
    first = list(range(SPEC.log_interval, SPEC.crash_at + 1, SPEC.log_interval))
    second = list(range(last_save + SPEC.log_interval, SPEC.train_iters + 1, SPEC.log_interval))
    return first + second


def test_detected_and_schema(stamped: tuple[Path, loggen.Truth]) -> None:
    path, _ = stamped
    assert detect_format(path) == "megatron"
    assert import_file(path).timeline.schema == TIMELINE_SCHEMA


@pytest.mark.parametrize("which", ["stamped", "unstamped"])
def test_steps_and_facts_match_the_generator(which: str, request: pytest.FixtureRequest) -> None:
    path, truth = request.getfixturevalue(which)
    run = import_file(path)
    steps = run.timeline.filter(pl.col("kind") == Kind.STEP)
    assert steps["step"].to_list() == expected_logged_iterations()
    assert steps["samples"].to_list() == [float(i * SPEC.global_batch) for i in steps["step"]]
    assert (steps["tokens"] == steps["samples"] * SPEC.seq_length).all()
    meta = run.metadata
    assert meta.planned_steps == truth.planned_steps
    assert meta.samples_per_step == SPEC.global_batch
    assert meta.tokens_per_step == SPEC.global_batch * SPEC.seq_length
    assert meta.quality_higher_is_better is False
    evals = run.timeline.filter(pl.col("kind") == Kind.EVAL)
    for step, metric in evals.select("step", "metric").iter_rows():
        assert metric == pytest.approx(loggen.validation_loss(step), rel=1e-6)
    saves = run.timeline.filter(pl.col("kind") == Kind.CHECKPOINT_STOP)
    assert saves["duration_s"].to_list() == [SPEC.save_s] * saves.height
    loads = run.timeline.filter(pl.col("kind") == Kind.CHECKPOINT_LOAD)["step"].to_list()
    assert loads == [SPEC.crash_at - SPEC.crash_at % SPEC.save_interval]
    stops = run.timeline.filter(pl.col("kind") == Kind.RUN_STOP)["status"].to_list()
    assert stops == ["success"]


def test_wall_clock_times_are_the_simulated_ones(stamped: tuple[Path, loggen.Truth]) -> None:
    path, truth = stamped
    run = import_file(path)
    assert run.metadata.time_source is TimeSource.WALL_CLOCK
    assert run.metadata.launch_time == loggen.LAUNCH
    starts = run.timeline.filter(pl.col("kind") == Kind.RUN_START)["t_s"].to_list()
    assert starts[0] == pytest.approx(truth.init_s)
    assert run.timeline["t_s"].max() == pytest.approx(truth.end_s, abs=1.0)


def test_without_timestamps_the_clock_is_rebuilt(unstamped: tuple[Path, loggen.Truth]) -> None:
    path, truth = unstamped
    run = import_file(path)
    assert run.metadata.time_source is TimeSource.REBUILT
    assert any("rebuilt" in note for note in run.metadata.notes)
    steps = run.timeline.filter(pl.col("kind") == Kind.STEP)
    assert steps["t_s"].null_count() == 0
    # The rebuilt clock counts init, step times and saves, but not the restart's downtime,
    # the setup between init and training, or evaluation time.
    unseen = SPEC.restart_downtime_s + 2 * SPEC.setup_s + truth.eval_s
    assert run.timeline["t_s"].max() == pytest.approx(truth.end_s - unseen, abs=1.0)


def _lines(path: Path) -> list[str]:
    return path.read_text().split("\n")


def test_truncated_iteration_line_is_named(stamped: tuple[Path, loggen.Truth], tmp_path: Path):
    path, _ = stamped
    lines = _lines(path)
    last = max(i for i, line in enumerate(lines) if "elapsed time per iteration" in line)
    cut = tmp_path / "cut.log"
    cut.write_text("\n".join([*lines[:last], lines[last][:70]]))
    with pytest.raises(InputFileError) as caught:
        import_file(cut)
    assert caught.value.line == last + 1
    assert "iteration" in (caught.value.expected or "")


def test_mixed_encoding_line_is_named(stamped: tuple[Path, loggen.Truth], tmp_path: Path) -> None:
    path, _ = stamped
    lines = _lines(path)
    mixed = tmp_path / "mixed.log"
    data = "\n".join(lines[:40]).encode() + "\nr\u00e9sum\u00e9 ok\n".encode("latin-1")
    mixed.write_bytes(data + "\n".join(lines[40:]).encode())
    with pytest.raises(InputFileError) as caught:
        import_file(mixed, format="megatron")
    assert caught.value.line == 41


@pytest.mark.parametrize(
    ("content", "problem"),
    [(b"", "empty"), (b"\n\n  \n", "empty"), (b"\x89PNG\r\n\x1a\n\x00\x00garbage", "binary")],
)
def test_empty_and_binary_files(tmp_path: Path, content: bytes, problem: str) -> None:
    path = tmp_path / "bad.log"
    path.write_bytes(content)
    with pytest.raises(InputFileError) as caught:
        import_file(path, format="megatron")
    assert problem in str(caught.value)


def test_other_format_forced_as_megatron(tmp_path: Path) -> None:
    path = tmp_path / "nxd.log"
    loggen.write_nxd(path)
    with pytest.raises(InputFileError) as caught:
        import_file(path, format="megatron")
    assert "Megatron" in str(caught.value)


def test_layout_change_mid_log_is_read_by_name(tmp_path: Path) -> None:
    path = tmp_path / "changed.log"
    loggen.write_megatron(path, replace(SPEC, crash_at=None, stall_at=None))
    lines = _lines(path)
    changed = [
        re.sub(_THROUGHPUT_FIELD, "", line) if i > 100 else line for i, line in enumerate(lines)
    ]
    assert sum("throughput per GPU" in line for line in changed) < sum(
        "throughput per GPU" in line for line in lines
    )
    path.write_text("\n".join(changed))
    steps = import_file(path).timeline.filter(pl.col("kind") == Kind.STEP)
    assert steps["step_time_s"].null_count() == 0
    assert steps["loss"].null_count() == 0
    assert steps.height == SPEC.train_iters // SPEC.log_interval


@st.composite
def damaged_logs(draw: st.DrawFn) -> bytes:
    spec = replace(
        SPEC,
        train_iters=draw(st.integers(10, 200)),
        log_interval=draw(st.sampled_from([1, 5, 10])),
        crash_at=None,
        timestamps=draw(st.booleans()),
        save_interval=50,
        eval_interval=40,
        stall_at=None,
    )
    lines = loggen.megatron_lines(spec)
    for _ in range(draw(st.integers(0, 3))):
        index = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["cut", "insert", "drop", "number", "field", "spacing"]))
        line = lines[index]
        if action == "cut":
            lines[index] = line[: draw(st.integers(0, len(line)))]
        elif action == "insert":
            lines.insert(index, draw(st.one_of(st.text(max_size=60), st.sampled_from(ODD_LINES))))
        elif action == "drop":
            del lines[index]
        elif action == "number":
            lines[index] = line.replace("1", draw(st.sampled_from(["x", "-", "1e999"])))
        elif action == "field":
            # A field dropped, or two swapped, on one line (a layout change mid-log).
            fields = line.split(" | ")
            if len(fields) > 3:
                i, j = draw(st.lists(st.integers(1, len(fields) - 1), min_size=2, max_size=2))
                fields[i], fields[j] = fields[j], fields[i]
                if draw(st.booleans()):
                    del fields[i]
            lines[index] = " | ".join(fields)
        else:
            lines[index] = line.replace(draw(st.sampled_from([": ", " | "])), draw(
                st.sampled_from([":\t", "|", " |  ", ":  "])
            ), 1)  # fmt: skip
    ending = draw(st.sampled_from(["\n", "\r\n"]))
    return ending.join(lines).encode("utf-8", "surrogatepass") + draw(st.binary(max_size=8))


ODD_LINES = (
    "",
    "| a | b |",
    "WARNING | iteration | thing",
    " validation loss at iteration 5 on validation set | lm loss value: 3.7E+00 | lm loss PPL: 4 |",
    "iteration 5/ 10 | consumed samples: 3",
    "successfully saved checkpoint from iteration 100 to /ckpt",
    "progress 10%\rprogress 20%",
)


def _general_parser_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(megatron_run, "fast_split", lambda *args: None)


def _both_parsers(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    """The import (or its error message) with the fast path, then with the general parser."""
    results = []
    for fast in (True, False):
        with monkeypatch.context() as patch:
            if not fast:
                _general_parser_only(patch)
            try:
                run = import_file(path, format="megatron")
            except InputFileError as error:
                results.append(str(error))
            else:
                results.append(run)
    return results[0], results[1]


@pytest.mark.parametrize(
    "changes",
    [{}, {"timestamps": False}, {"fraction_digits": False}, {"crash_at": None, "log_interval": 1}],
)
def test_fast_path_reads_what_the_general_parser_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, changes: dict
) -> None:
    path = tmp_path / "run.log"
    loggen.write_megatron(path, replace(SPEC, **changes))
    _assert_fast_path_agrees(path, monkeypatch)


def _validation_field_in_last_iteration(lines: list[str]) -> list[str]:
    last = max(i for i, line in enumerate(lines) if "elapsed time per iteration" in line)
    lines[last] = lines[last].replace(" | loss scale:", " | validation loss: 4.0 | loss scale:")
    return lines


@pytest.mark.parametrize(
    "edit",
    [
        # A log cut down to its iteration lines: the first line has more fields than are read.
        lambda lines: [line for line in lines if "elapsed time per iteration" in line],
        _validation_field_in_last_iteration,
        lambda lines: [line + "\r" for line in lines],
    ],
    ids=["iteration-lines-only", "validation-field-in-an-iteration-line", "crlf"],
)
def test_fast_path_on_edited_logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit) -> None:
    path = tmp_path / "edited.log"
    path.write_text("\n".join(edit(loggen.megatron_lines(SPEC))) + "\n")
    steps = _assert_fast_path_agrees(path, monkeypatch).timeline.filter(pl.col("kind") == Kind.STEP)
    assert steps["step"].to_list() == expected_logged_iterations()


def _assert_fast_path_agrees(path: Path, monkeypatch: pytest.MonkeyPatch) -> ImportedRun:
    """Import ``path`` by the fast path (which it must take) and by the general parser."""
    calls = []
    real = megatron_run.fast_split
    monkeypatch.setattr(megatron_run, "fast_split", lambda *a: calls.append(real(*a)) or calls[-1])
    fast = import_file(path)
    monkeypatch.undo()
    assert calls and calls[0] is not None, "the usual log must take the fast path"
    _general_parser_only(monkeypatch)
    general = import_file(path)
    assert fast.metadata == general.metadata
    assert fast.timeline.equals(general.timeline)
    return fast


def test_the_fast_path_holds_only_the_other_lines_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The usual log's lines are never all read into a column: the iteration lines are read
    split on ``|``, only the other lines' text is kept (a 100 MB log's worth of memory)."""
    path = tmp_path / "run.log"
    loggen.write_megatron(path, SPEC)

    def every_line(*args: object, **kwargs: object) -> pl.DataFrame:
        raise AssertionError("the fast path read every line's text")

    with monkeypatch.context() as patch:
        patch.setattr(megatron_run, "read_lines", every_line)
        patch.setattr(importer_base, "read_lines", every_line)
        fast = import_file(path, format="megatron")
    _general_parser_only(monkeypatch)
    general = import_file(path, format="megatron")
    assert fast.metadata == general.metadata
    assert fast.timeline.equals(general.timeline)


def _other_lines_edited(lines: list[str]) -> list[str]:
    """Other lines the ``|`` split cannot tell apart from its fields alone: trailing and empty
    fields, empty and blank lines, a line like the one before it, one with many fields."""
    first = next(i for i, line in enumerate(lines) if "elapsed time per iteration" in line)
    odd = ["", "  seq_length ..... 4096|", "note | x ||", "|", "", "   ", "|".join("abcdefghijkl")]
    return [
        *lines[:3],
        "",
        *lines[3:first],
        *odd,
        *lines[first : first + 5],
        *odd,
        *lines[first + 5 :],
    ]


@pytest.mark.parametrize(
    "edit",
    [
        lambda lines: lines,
        _other_lines_edited,
        lambda lines: [line + "\r" for line in _other_lines_edited(lines)],
    ],
    ids=["usual", "odd-other-lines", "odd-other-lines-crlf"],
)
def test_the_fast_path_finds_the_other_lines_in_the_bytes_it_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit
) -> None:
    """The other lines are found from their ``|`` fields without a second scan of the file
    (``read_numbered_lines``), and are the lines the general parser reads."""
    path = tmp_path / "run.log"
    path.write_text("\n".join(edit(loggen.megatron_lines(SPEC))) + "\n")

    def second_scan(*args: object, **kwargs: object) -> pl.DataFrame:
        raise AssertionError("the fast path scanned the file's lines again")

    with monkeypatch.context() as patch:
        patch.setattr(megatron_iterations, "read_numbered_lines", second_scan)
        _assert_fast_path_agrees(path, patch)


@pytest.mark.parametrize(
    "tail",
    [b"caf\xc3\xa9 ..... 1\n", b"nul \x00 byte\n"],
    ids=["not-ascii", "nul"],
)
def test_other_lines_left_to_the_line_scan(
    tmp_path: Path, tail: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Text that is not ASCII (to be checked as UTF-8) or holds a NUL (refused by the line
    reader) is not looked for in the bytes: the line scan reads those files as before."""
    path = tmp_path / "run.log"
    loggen.write_megatron(path, SPEC)
    path.write_bytes(path.read_bytes() + tail)
    source = read_source(path)

    def never(*_: object) -> None:
        raise AssertionError("looked for in the bytes")

    monkeypatch.setattr(megatron_iterations, "_other_lines", never)
    if b"\x00" in tail:
        with pytest.raises(InputFileError, match="NUL"):
            megatron_iterations.fast_split(source, source.name)
    else:
        fast = megatron_iterations.fast_split(source, source.name)
        assert fast is not None
        assert fast[1]["text"][-1] == tail.decode().rstrip("\n")


def test_other_lines_are_the_rows_of_the_line_reader(tmp_path: Path) -> None:
    path = tmp_path / "run.log"
    lines = _other_lines_edited(loggen.megatron_lines(SPEC))
    for ending, last in (("\n", "\n"), ("\r\n", "\r\n"), ("\n", "")):
        path.write_text(ending.join(lines) + last)
        source = read_source(path)
        every = importer_base.read_lines(source)
        split = pl.scan_csv(
            source.data,
            has_header=False,
            separator="|",
            quote_char=None,
            schema={f"column_{i + 1}": pl.String for i in range(3)},
            truncate_ragged_lines=True,
            missing_columns="insert",
            comment_prefix=None,
            row_index_name="line",
            row_index_offset=1,
        )
        other = (
            split.filter(
                ~pl.col("column_3")
                .str.starts_with(" elapsed time per iteration (ms):")
                .fill_null(False)
            )
            .select(pl.col("line").cast(pl.Int64), "column_1", "column_3")
            .collect()
        )
        found = megatron_iterations._other_lines(source.data, other, 2)
        assert found is not None
        assert found.equals(every.filter(pl.col("line").is_in(other["line"].implode())))
        assert found.height == sum("elapsed time per iteration" not in line for line in lines)


def test_numbered_lines_are_the_rows_of_the_line_reader(tmp_path: Path) -> None:
    path = tmp_path / "run.log"
    loggen.write_megatron(path, SPEC)
    # The same log with a byte the Polars line split cannot use: split in Python instead.
    odd = tmp_path / "odd.log"
    odd.write_bytes(path.read_bytes().replace(b"training ...", b"training \x1f..."))
    for log in (path, odd):
        source = read_source(log)
        lines = importer_base.read_lines(source)
        numbers = pl.Series([1, 7, 8, lines.height], dtype=pl.Int64)
        some = importer_base.read_numbered_lines(source, numbers, lines.height)
        assert some is not None
        assert some.equals(lines.filter(pl.col("line").is_in(numbers.implode())))
        # Another line count than the file's: the caller's split disagrees with the lines.
        assert importer_base.read_numbered_lines(source, numbers, lines.height - 1) is None
        assert importer_base.read_numbered_lines(source, numbers, lines.height + 1) is None
    assert b"\x1f" in odd.read_bytes()


def test_layout_change_falls_back_to_the_general_parser(tmp_path: Path) -> None:
    path = tmp_path / "changed.log"
    loggen.write_megatron(path, replace(SPEC, crash_at=None, stall_at=None))
    lines = _lines(path)
    index = next(i for i, line in enumerate(lines) if i > 100 and "throughput per GPU" in line)
    lines[index] = re.sub(r" \| throughput per GPU \(TFLOP/s/GPU\): [0-9.]+", "", lines[index])
    assert "throughput per GPU" not in lines[index]
    path.write_text("\n".join(lines))
    source = read_source(path)
    assert megatron_run.fast_split(source, str(path)) is None


@settings(max_examples=100)
@given(data=damaged_logs())
def test_damaged_logs_read_the_same_by_both_parsers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes
) -> None:
    path = tmp_path / "fuzz.log"
    path.write_bytes(data)
    fast, general = _both_parsers(path, monkeypatch)
    if isinstance(general, str) or isinstance(fast, str):
        assert fast == general
    else:
        assert fast.metadata == general.metadata
        assert fast.timeline.equals(general.timeline)


@settings(max_examples=80)
@given(data=damaged_logs())
def test_damaged_logs_import_or_raise_input_file_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzz.log"
    path.write_bytes(data)
    try:
        run = import_file(path, format="megatron")
    except InputFileError as error:
        assert str(path) in str(error)
    else:
        assert run.timeline.schema == TIMELINE_SCHEMA
        times = run.timeline["t_s"].drop_nulls()
        assert all(math.isfinite(t) for t in times)


def test_timestamps_without_fraction(tmp_path: Path) -> None:
    path = tmp_path / "seconds.log"
    truth = loggen.write_megatron(path, replace(SPEC, fraction_digits=False))
    run = import_file(path)
    assert run.metadata.time_source is TimeSource.WALL_CLOCK
    steps = run.timeline.filter(pl.col("kind") == Kind.STEP)
    assert steps["t_s"].null_count() == 0
    assert steps["t_s"].max() == pytest.approx(truth.end_s - SPEC.eval_s - SPEC.save_s, abs=1.0)


def test_early_exit_is_not_a_success(tmp_path: Path) -> None:
    lines = loggen.megatron_lines(replace(SPEC, crash_at=None))
    last = max(i for i, line in enumerate(lines) if "iteration" in line and "/" in line)
    cut = [line for i, line in enumerate(lines) if i < last - 30 or "training is done" in line]
    path = tmp_path / "early.log"
    path.write_text("\n".join(cut) + "\n")
    stops = import_file(path).timeline.filter(pl.col("kind") == Kind.RUN_STOP)
    assert stops.height == 1
    assert stops["status"][0] != "success"


def test_world_size_and_protocol_from_the_arguments(tmp_path: Path) -> None:
    spec = loggen.MegatronSpec(global_batch=512, seq_length=4096, crash_at=None, stall_at=None)
    path = tmp_path / "megatron.log"
    loggen.write_megatron(path, spec)
    meta = import_file(path).metadata
    assert meta.system is not None and meta.system.accelerators == 8
    assert meta.system.nodes is None  # Megatron states no node count
    assert meta.protocol["global_batch_size"] == "512"
    assert meta.protocol["sequence_length"] == "4096"
    lines = path.read_text().splitlines()

    def size_with(launch: str):
        path.write_text("\n".join([launch, *lines]) + "\n")
        size = import_file(path).metadata.system
        return size.nodes, size.accelerators_per_node, size.accelerators

    # A launcher that agrees with the world size splits it into nodes.
    assert size_with("+ srun -l --ntasks=8 --ntasks-per-node=4 python pretrain_gpt.py") == (
        2,
        4,
        8,
    )
    # One that disagrees is another job's: the framework's world size stands alone.
    assert size_with("+ srun --ntasks=16 --ntasks-per-node=8 python pretrain_gpt.py") == (
        None,
        None,
        8,
    )
    # The program's own arguments are not the launcher's (-n 3 is train.py's).
    assert size_with("+ srun --ntasks-per-node=4 --mpi=pmix python train.py -n 3")[:2] == (2, 4)
    # torchrun's per-node count and the world size give the nodes.
    assert size_with("+ torchrun --nnodes $NNODES --nproc_per_node 4 pretrain_gpt.py") == (
        2,
        4,
        8,
    )


@pytest.mark.parametrize(
    "other_orders",
    [
        [3.0, 6.5, 0.5, 8.0],
        [],
        [2.5],
        [0.5, 0.75],
        [9.0, 10.0],
        [2.0, 3.0],
        [3.0 + index / 10_000 for index in range(6_000)],
    ],
    ids=["between", "none", "one", "before", "after", "on-a-step-row", "not-few"],
)
def test_events_in_line_order(other_orders: list[float]) -> None:
    """The few other events put between the step rows give the rows a sort by ``order``
    gives (an other row with a step row's order is sorted with them), in one chunk; more
    than a few are sorted with them (a slice each would cost more)."""
    steps = pl.DataFrame(
        {"order": [1.0, 2.0, 4.0, 5.0, 7.0], "kind": ["step"] * 5, "step": [1, 2, 3, 4, 5]}
    )
    others = pl.DataFrame(
        {"order": other_orders, "kind": ["eval"] * len(other_orders)},
        schema={"order": pl.Float64, "kind": pl.String},
    ).with_columns(pl.lit(None, pl.Float64).alias("metric"))
    merged = megatron_run._in_order(steps, others)
    assert merged["order"].to_list() == sorted([1.0, 2.0, 4.0, 5.0, 7.0, *other_orders])
    assert merged.columns == ["order", "kind", "step", "metric"]
    assert sorted(merged["kind"]) == ["eval"] * len(other_orders) + ["step"] * 5
    if 2.0 not in other_orders:
        kinds = dict(zip(merged["order"], merged["kind"], strict=True))
        assert all(kinds[order] == "eval" for order in other_orders)
    assert merged.n_chunks() == 1
